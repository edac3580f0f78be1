"""The arbiter PIN's hash keyed by the device key (SPEC §13.4, issue 18 item 1): a journal copied
from a USB stick gives no way to search the 9 801 PINs without the key that never leaves the
Pi's card, while a replay, a verify and an export still need neither the PIN nor the key. On
every path that starts a journal with a key (a new match, a resume after a kill, new-match over
the socket, a stick's match, the menu's next match, `simulate --journal`) the header's hash is
the very one the live engine judges entries with, so the arbiter is never locked out."""

from __future__ import annotations

import base64
import contextlib
import io
import itertools
import json
import os
import re
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from arbiter_helpers import OPENING, chord, taps
from device_helpers import MOCK_TEXT
from gammonclock.cli.main import main
from gammonclock.config.loading import config_of_header, parse_config, parse_device_config
from gammonclock.core.arbiter import Undo
from gammonclock.core.engine import ButtonEdge
from gammonclock.core.match import ArbiterAction
from gammonclock.core.match_state import PanelStage, Phase
from gammonclock.core.pin import (
    KEYED_SCHEME,
    PinCheck,
    PinKeyMissing,
    _parts,
    _password,
    _scrypt,
    hash_pin,
    make_hash,
    pepper_of,
)
from gammonclock.core.rules import MatchRules
from gammonclock.device.build import build_device
from gammonclock.journal.key import SECRET_FILE
from gammonclock.journal.reader import read_journal
from gammonclock.journal.records import JOURNALS_DIR, SNAPSHOT_KIND
from gammonclock.journal.replay import replay, verify_and_replay
from gammonclock.journal.snapshot import engine_data
from gammonclock.pin import main as pin_main
from gammonclock.runtime.lifecycle import load_next_match
from gammonclock.runtime.stick_handler import StickHandler
from gammonclock.sides import Button
from keyed_pin_helpers import DEVICE_TEXT, MATCH_TEXT, OTHER_MATCH, PIN, header_hash, live_check
from lifecycle_helpers import on_loop
from play_helpers import play
from rig_helpers import DOWN, UP, S, journal_of, mock_config, presses

L, R, C = Button.LEFT, Button.RIGHT, Button.CUBE
LETTER = {"L": L, "R": R, "C": C}
def buttons_of(pin: str) -> tuple[Button, ...]:
    return tuple(LETTER[x] for x in pin)


def entry(start: float, pin: str) -> list[tuple[float, Button, bool]]:
    """The PIN's presses from `start`, then the cube held 2.5 s (the end of the entry)."""
    end = start + 0.5 * len(pin)
    return presses(start, buttons_of(pin)) + [(end, C, DOWN), (end + 2.5, C, UP)]


def chord_at(t: float) -> list[tuple[float, Button, bool]]:
    return [(t, C, DOWN), (t + 0.1, L, DOWN), (t + 0.2, R, DOWN),
            (t + 3.7, C, UP), (t + 3.7, L, UP), (t + 3.7, R, UP)]


def assert_live_is_header(session) -> PinCheck:
    """The engine's hash is the header's, keyed, and the engine can judge an entry with it."""
    check = live_check(session)
    path = Path(session.journal.path)
    assert check.hashed == header_hash(path)
    assert check.hashed.startswith(KEYED_SCHEME + "$14$8$1$")
    assert check.keyed and check.can_digest and check.pepper is not None
    assert check.matches(check.digest(buttons_of(PIN)))
    assert not check.matches(check.digest(buttons_of("LRCC")))
    return check


def key_of(state: Path) -> bytes:
    return bytes.fromhex((state / SECRET_FILE).read_text().strip())


def pin_text(pin: str = PIN) -> str:
    return MOCK_TEXT + f'\n[arbiter]\npin = "{pin}"\n'


# --- without the key, no search ------------------------------------------------------------------

@pytest.mark.slow        # 163 scrypts: ~15 s on a laptop core
def test_a_device_journal_gives_no_pin_without_the_key(request, tmp_path):
    rig = request.getfixturevalue("open_device")(mock_config(pin_text()))
    rig.play(OPENING_EDGES + chord_at(20) + entry(30, PIN))
    engine = rig.settle(60 * S)
    assert engine.match.panel is not None and engine.match.panel.stage is PanelStage.MENU
    path = journal_of(rig)
    hashed = header_hash(path)
    assert hashed.startswith("scrypt-k$")
    ends = [r.data["input"]["digest"] for r in read_journal(path).records
            if r.kind == "input" and r.data["input"].get("key") == "end"]
    assert len(ends) == 1
    log_n, r, p, salt, want = _parts(hashed)
    wanted = {want, base64.b64decode(ends[0])}
    # What a player with the journal (and no key) can try: every 4-letter PIN (the dots showed
    # its length), unkeyed as the scheme was, and keyed by a key of their own.
    other = pepper_of(os.urandom(32))
    for letters in ("".join(x) for x in itertools.product("LRC", repeat=4)):
        for pepper in (None, other):
            assert _scrypt(_password(letters, pepper), salt, log_n, r, p) not in wanted, letters
    # With the key the PIN is found: the test would find it if it were there.
    right = pepper_of(key_of(tmp_path / "state"))
    assert _scrypt(_password(PIN, right), salt, log_n, r, p) == want == base64.b64decode(ends[0])


OPENING_EDGES = [(1.0, L, DOWN), (1.1, L, UP)]            # right's clock runs


# --- the live hash is the header's on every path -------------------------------------------------

def test_a_new_match_and_a_resume_after_a_kill_judge_with_the_headers_hash(request, tmp_path,
                                                                          capsys):
    device_at, fake = request.getfixturevalue("open_device"), request.getfixturevalue("clock")
    first = device_at(mock_config(pin_text()))
    check = assert_live_is_header(first.device.session)
    first.play(OPENING_EDGES + chord_at(20) + entry(30, "LRCC"))     # a wrong PIN, then play
    first.settle(50 * S)
    first.at(55 * S)
    # A kill: the state folder as it is on the card now (every record is synced), no close.
    killed = tmp_path / "killed"
    shutil.copytree(tmp_path / "state", killed, ignore=shutil.ignore_patterns("*.sock"))
    path = journal_of(first)
    fake.ns += 600 * S
    second = device_at(mock_config(pin_text()), killed)
    assert second.device.notes[0].startswith("recovered")
    assert journal_of(second) == killed / JOURNALS_DIR / path.name
    resumed = assert_live_is_header(second.device.session)
    assert resumed.hashed == check.hashed
    t = second.engine.now / S
    second.play(chord_at(t + 5) + entry(t + 15, PIN))              # the right PIN: the menu
    engine = second.settle(round((t + 30) * S))
    assert engine.match.phase is Phase.ARBITER
    assert engine.match.panel is not None and engine.match.panel.stage is PanelStage.MENU
    assert engine.match.pin_failures == 0

    # Replay, verify and export of that journal on a machine without the key: the same match.
    journal = journal_of(second)
    second.at(round((t + 31) * S))
    replayed = replay(read_journal(journal)).engine
    assert replayed.rules.arbiter_pin is not None and replayed.rules.arbiter_pin.pepper is None
    assert replayed.advance(round((t + 30) * S))[0].match == engine.match
    checked = verify_and_replay(journal, key_of(killed))     # the hall's copy of the key
    assert checked.verdict.intact and checked.replayed is not None
    assert checked.replayed.engine.advance(round((t + 30) * S))[0].match == engine.match
    nokey = tmp_path / "no-key-here"
    nokey.mkdir()
    exported = {}
    for state in (nokey, killed):
        out = tmp_path / f"export-{state.name}.json"
        assert main(["export", str(journal), "--format", "json", "--out", str(out),
                     "--state-dir", str(state)]) == 0
        exported[state] = json.loads(out.read_text(encoding="utf-8"))
        exported[state].pop("seal")          # the verdicts differ (key or none), nothing else
        exported[state].pop("verdict")
    assert "seals not checked" in capsys.readouterr().err
    assert exported[nokey] == exported[killed]


def test_a_keyed_pin_hash_in_the_device_config_is_used_as_it_is(request, tmp_path):
    device_at = request.getfixturevalue("open_device")
    state = tmp_path / "state"
    state.mkdir()
    with contextlib.redirect_stdout(io.StringIO()) as printed:
        assert main_pin([PIN, "--key", str(prepare_key(state))]) == 0
    line = printed.getvalue().strip()
    hashed = line.split('"')[1]
    rig = device_at(mock_config(MOCK_TEXT + f"\n[arbiter]\n{line}\n"), state)
    check = assert_live_is_header(rig.device.session)
    assert check.hashed == hashed
    rig.play(OPENING_EDGES + chord_at(20) + entry(30, PIN))
    engine = rig.settle(60 * S)
    assert engine.match.panel is not None and engine.match.panel.stage is PanelStage.MENU


def prepare_key(state: Path) -> Path:
    path = state / SECRET_FILE
    path.write_text(os.urandom(32).hex() + "\n")
    path.chmod(0o600)
    return path


def test_new_match_over_the_socket_judges_with_the_headers_hash(tmp_path, capsys):
    device = build_device(parse_device_config(DEVICE_TEXT, str(tmp_path / "device.toml")),
                          tmp_path / "state")
    worker = threading.Thread(target=device.service.run, daemon=True)
    worker.start()
    try:
        (tmp_path / "match.toml").write_text(MATCH_TEXT, encoding="utf-8")
        assert main(["arbiter", "--state-dir", str(tmp_path / "state"), "new-match",
                     str(tmp_path / "match.toml")]) == 0
        assert "next match loaded" in capsys.readouterr().out
        deadline = time.monotonic() + 5
        while device.session is None and time.monotonic() < deadline:
            time.sleep(0.01)
        assert_live_is_header(device.session)
    finally:
        device.service.stop()
        worker.join(timeout=5)
        device.close()


def test_a_sticks_match_judges_with_the_headers_hash(tmp_path):
    device = build_device(parse_device_config(DEVICE_TEXT, str(tmp_path / "device.toml")),
                          tmp_path / "state")
    try:
        load_next_match(device.service, device.table, MATCH_TEXT, "match.toml")
        first = assert_live_is_header(device.session)
        stick = tmp_path / "stick"
        (stick / "gammonclock").mkdir(parents=True)
        (stick / "gammonclock" / "T12.toml").write_text(OTHER_MATCH, encoding="utf-8")
        answer = on_loop(device, lambda: StickHandler(device.service, device.table)(stick))
        assert answer["ok"] and "next match loaded: Анна-Carla, 5 points" in answer["said"]
        assert device.session.engine.rules.names.right == "Carla"
        # Hashed once per process and key: the same hash in the next journal's header.
        assert assert_live_is_header(device.session).hashed == first.hashed
        # The stick's copies hold the keyed hash, never the key's pepper.
        copied = b"".join(f.read_bytes() for f in stick.rglob("*") if f.is_file())
        assert_no_pepper(copied, live_check(device.session))
    finally:
        device.close()


def test_the_menus_next_match_judges_with_the_headers_hash(tmp_path):
    match_file = tmp_path / "match.toml"
    match_file.write_text(MATCH_TEXT, encoding="utf-8")
    text = DEVICE_TEXT.replace('id = "T12"\n', f'id = "T12"\nmatch_file = "{match_file}"\n')
    device = build_device(parse_device_config(text, str(tmp_path / "device.toml")),
                          tmp_path / "state")
    try:
        service = device.service
        service.grace_ns = service.timer_grace_ns = 0
        assert_live_is_header(device.session)
        first_journal = Path(device.session.journal.path)
        match_file.write_text(OTHER_MATCH, encoding="utf-8")
        start = device.session.engine.now

        def press(at: float, button: Button, length: float = 0.1) -> None:
            service.apply(ButtonEdge(start + round(at * S), button, True))
            service.apply(ButtonEdge(start + round((at + length) * S), button, False))

        press(1, L)
        for at, button in ((30.0, C), (30.1, L), (30.2, R)):
            service.apply(ButtonEdge(start + round(at * S), button, True))
        for button in Button:
            service.apply(ButtonEdge(start + round(33.7 * S), button, False))
        for i, button in enumerate(buttons_of(PIN)):
            press(40 + i, button)
        press(44, C, 2.5)                                      # the end: the menu
        for i, button in enumerate((L, L, C, C)):
            press(50 + i, button)                              # next match, yes
        service.step()
        assert device.session.engine.rules.names.right == "Carla"
        assert Path(device.session.journal.path) != first_journal
        assert_live_is_header(device.session)
    finally:
        device.close()


def test_simulate_journal_writes_the_keyed_hash_the_run_judged_by(tmp_path):
    config = tmp_path / "m.toml"
    config.write_text(f'[match]\nlength = 5\n[arbiter]\npin = "{PIN}"\n', encoding="utf-8")
    script = tmp_path / "s.script"
    script.write_text(OPENING + chord(20) + taps(30, tuple(b.value for b in buttons_of(PIN)))
                      + "33 hold cube\n40 end\n", encoding="utf-8")
    journal = tmp_path / "j.jsonl"
    state = tmp_path / "st"
    with contextlib.redirect_stdout(io.StringIO()):
        assert main(["simulate", "--config", str(config), "--script", str(script),
                     "--journal", str(journal), "--state-dir", str(state), "--json"]) == 0
    hashed = header_hash(journal)
    assert hashed.startswith("scrypt-k$")
    ends = [r.data["input"]["digest"] for r in read_journal(journal).records
            if r.kind == "input" and r.data["input"].get("key") == "end"]
    assert ends == [hashed.split("$")[-1]]      # the run's digest is the header hash's
    check = PinCheck.parse(hashed).with_key(pepper_of(key_of(state)))
    assert check.matches(check.digest(buttons_of(PIN)))
    match = replay(read_journal(journal)).engine.match
    assert match.panel is not None and match.panel.stage is PanelStage.MENU


def test_a_continuation_of_a_damaged_journal_judges_with_the_headers_hash(request, tmp_path):
    device_at, fake = request.getfixturevalue("open_device"), request.getfixturevalue("clock")
    first = device_at(mock_config(pin_text()))
    first.play(OPENING_EDGES + [(5.0, R, DOWN), (5.1, R, UP), (9.0, L, DOWN), (9.1, L, UP)])
    first.at(12 * S)
    killed = tmp_path / "killed"
    shutil.copytree(tmp_path / "state", killed, ignore=shutil.ignore_patterns("*.sock"))
    path = killed / JOURNALS_DIR / journal_of(first).name
    lines = path.read_bytes().splitlines(keepends=True)
    lines[2] = lines[2].replace(b'"t":', b'"t": 1,"x":', 1)      # a damaged record mid-journal
    path.write_bytes(b"".join(lines))
    fake.ns += 60 * S
    second = device_at(mock_config(pin_text()), killed)
    assert any("goes on in" in note for note in second.device.notes), second.device.notes
    assert journal_of(second).name.endswith(".continued.jsonl")
    assert_live_is_header(second.device.session)
    t = second.engine.now / S
    second.play(chord_at(t + 5) + entry(t + 15, PIN))
    engine = second.settle(round((t + 30) * S))
    assert engine.match.panel is not None and engine.match.panel.stage is PanelStage.MENU


def test_undo_past_a_resumed_snapshot_keeps_the_pepper(request, tmp_path):
    """A resume from a snapshot that left the early history out, then undos deep enough that
    the session rebuilds the whole history from the journal: the rebuilt engine still judges
    the PIN."""
    device_at, fake = request.getfixturevalue("open_device"), request.getfixturevalue("clock")
    first = device_at(mock_config(pin_text()))
    first.device.session.snapshot_every = 2
    taps_ = [(1.0 + 3 * i, (L, R)[i % 2]) for i in range(8)]
    first.play([edge for at, b in taps_ for edge in ((at, b, DOWN), (at + 0.1, b, UP))])
    first.at(30 * S)
    killed = tmp_path / "killed"
    shutil.copytree(tmp_path / "state", killed, ignore=shutil.ignore_patterns("*.sock"))
    fake.ns += 60 * S
    second = device_at(mock_config(pin_text()), killed)
    session = second.device.session
    assert session.history_floor is not None           # resumed from a cut snapshot
    t = second.engine.now
    for i in range(3):
        second.at(t + (i + 1) * S)
        second.device.service.apply(ArbiterAction(t + (i + 1) * S, Undo(), "socket"))
    assert second.device.session.history_floor is None    # the whole history rebuilt
    assert_live_is_header(second.device.session)
    start = second.engine.now / S
    second.play(chord_at(start + 5) + entry(start + 15, PIN))
    engine = second.settle(round((start + 30) * S))
    assert engine.match.panel is not None and engine.match.panel.stage is PanelStage.MENU


def test_a_match_started_while_the_key_cannot_be_read_is_unkeyed_in_header_and_engine(tmp_path):
    """A card that cannot give the key yet (the journal then waits in memory): the hash is
    unkeyed in the header and the engine alike, so the arbiter is not locked out."""
    from gammonclock.journal.records import JournalError
    from gammonclock.runtime.lifecycle import Table
    from gammonclock.runtime.session import system_stamps

    def no_key() -> bytes:
        raise JournalError("device.key: cannot create the device key: Read-only file system")
    device = parse_device_config(DEVICE_TEXT, "device.toml")
    table = Table(device, tmp_path / "state", no_key, system_stamps(), time.monotonic_ns)
    config = table.read_match(MATCH_TEXT, "match.toml")
    path, header, stamp, planned = table.plan(config)
    check = planned.rules.arbiter_pin
    assert check is not None and not check.keyed and check.can_digest
    assert f'pin_hash = "{check.hashed}"' in header["device"]
    opened = table.start(config, (path, header, stamp, planned))
    assert opened.session.engine.rules.arbiter_pin is check
    assert opened.session.journal_error is not None        # the records wait for the card


def test_an_unkeyed_pin_hash_in_the_device_config_is_used_and_warned_of(tmp_path, caplog):
    from gammonclock.runtime.lifecycle import Table
    from gammonclock.runtime.session import system_stamps

    hashed = make_hash(PIN)
    text = DEVICE_TEXT.replace(f'pin = "{PIN}"', f'pin_hash = "{hashed}"')
    key = os.urandom(32)
    table = Table(parse_device_config(text, "device.toml"), tmp_path / "state", lambda: key,
                  system_stamps(), time.monotonic_ns)
    with caplog.at_level("WARNING"):
        _, header, _, planned = table.plan(table.read_match(MATCH_TEXT, "match.toml"))
    assert planned.rules.arbiter_pin == PinCheck.parse(hashed)
    assert f'pin_hash = "{hashed}"' in header["device"]
    assert "not keyed by the device key" in caplog.text and "--key" in caplog.text


# --- the pepper is written nowhere ----------------------------------------------------------------

def forms(secret: bytes) -> list[bytes]:
    return [secret, secret.hex().encode(), secret.hex().upper().encode(),
            base64.b64encode(secret), base64.urlsafe_b64encode(secret),
            base64.b64encode(secret).rstrip(b"="), base64.b32encode(secret)]


def assert_no_pepper(data: bytes, check: PinCheck) -> None:
    assert check.pepper is not None
    for form in forms(check.pepper):
        assert form not in data
    assert repr(check.pepper).encode() not in data


def test_the_pepper_is_in_no_journal_snapshot_export_or_state(request, tmp_path):
    rig = request.getfixturevalue("open_device")(mock_config(pin_text()))
    session = rig.device.session
    session.snapshot_every = 3                      # snapshots among the records
    rig.play(OPENING_EDGES + chord_at(20) + entry(30, "RRRR") + chord_at(50) + entry(60, PIN))
    engine = rig.settle(80 * S)
    check = assert_live_is_header(rig.device.session)
    path = journal_of(rig)
    records = read_journal(path).records
    assert any(r.kind == SNAPSHOT_KIND for r in records)
    written = [path.read_bytes(), json.dumps(engine.state_json()).encode(),
               json.dumps(engine_data(engine)).encode(), repr(engine).encode(),
               repr(engine.rules).encode(), repr(check).encode(),
               json.dumps(rig.device.service.status()).encode()]
    for fmt in ("csv", "json", "html"):
        out = tmp_path / f"export.{fmt}"
        with contextlib.redirect_stdout(io.StringIO()), \
                contextlib.redirect_stderr(io.StringIO()):
            assert main(["export", str(path), "--format", fmt, "--out", str(out),
                         "--state-dir", str(tmp_path / "state")]) == 0
        written.append(out.read_bytes())
    for data in written:
        assert_no_pepper(data, check)
        assert key_of(tmp_path / "state").hex().encode() not in data


# --- the check itself -----------------------------------------------------------------------------

def test_a_keyed_check_without_its_pepper_judges_but_never_computes_a_digest():
    pepper = pepper_of(os.urandom(32))
    live = hash_pin("CRLC", pepper)
    assert live.keyed and live.hashed.startswith("scrypt-k$14$8$1$")
    right = live.digest(buttons_of("CRLC"))
    assert live.matches(right) and not live.matches(live.digest(buttons_of("CRLL")))
    parsed = PinCheck.parse(live.hashed)               # as a replay, an export, the hall read it
    assert parsed == live and parsed.pepper is None and not parsed.can_digest
    assert parsed.matches(right)
    with pytest.raises(PinKeyMissing, match="keyed by a device key"):
        parsed.digest(buttons_of("CRLC"))
    assert parsed.with_key(pepper).digest(buttons_of("CRLC")) == right
    wrong = parsed.with_key(pepper_of(os.urandom(32)))
    assert not wrong.matches(wrong.digest(buttons_of("CRLC")))
    # Unkeyed hashes (a hand-written pin_hash, this week's journals) still parse and judge.
    plain = PinCheck.parse(make_hash("CRLC"))
    assert not plain.keyed and plain.with_key(pepper) is plain
    assert plain.matches(plain.digest(buttons_of("CRLC")))
    assert pepper.hex() not in repr(live) and repr(pepper) not in repr(live)


def test_a_keyed_config_and_header_hold_the_same_hash():
    from gammonclock.config.loading import keyed_config
    from gammonclock.journal.files import journal_header

    pepper = pepper_of(os.urandom(32))
    device = parse_device_config(f'[arbiter]\npin = "{PIN}"\n', "device.toml")
    config = keyed_config(parse_config_on(device), pepper)
    header = journal_header(config.text, config.path, device_text=config.device_text,
                            pepper=pepper)
    check = config.rules.arbiter_pin
    assert check is not None and check.keyed and check.pepper == pepper
    assert f'pin_hash = "{check.hashed}"' in header["device"]
    assert config_of_header(header, "j").rules == config.rules
    assert config_of_header(header, "j", pepper).rules.arbiter_pin.pepper == pepper
    assert PIN not in json.dumps(header)


def parse_config_on(device):
    from gammonclock.config.loading import parse_match_config
    return parse_match_config("[match]\nlength = 5\n", "match.toml", device)


def test_an_engine_whose_keyed_hash_lacks_the_pepper_fails_the_entry_without_stopping():
    hashed = hash_pin(PIN, pepper_of(os.urandom(32))).hashed
    rules = MatchRules.defaults(arbiter_pin=PinCheck.parse(hashed))
    played = play(OPENING + chord(30) + taps(40, tuple(b.value for b in buttons_of(PIN)))
                  + "42 hold cube\n60 end\n", rules)
    assert played.match.panel is None and played.match.pin_failures == 1


# --- python -m gammonclock.pin ------------------------------------------------------------------

def main_pin(args: list[str]) -> int:
    return pin_main(args)


def test_the_pin_command_with_and_without_the_key(tmp_path):
    key_file = prepare_key(tmp_path)
    keyed = subprocess.run([sys.executable, "-m", "gammonclock.pin", "lrcl", "--key",
                            str(key_file)], capture_output=True, text=True, check=True)
    m = re.fullmatch(r'pin_hash = "(scrypt-k\$14\$8\$1\$[^"]+)"\n', keyed.stdout)
    assert m is not None, keyed.stdout
    assert keyed.stderr == ""
    check = PinCheck.parse(m[1]).with_key(pepper_of(bytes.fromhex(key_file.read_text())))
    assert check.matches(check.digest(buttons_of(PIN)))
    # The hash in a device config: the clock with that key opens the menu with the PIN.
    config = parse_config(f'[match]\nlength = 5\n[arbiter]\npin_hash = "{m[1]}"\n', "x.toml")
    assert config.rules.arbiter_pin == check

    plain = subprocess.run([sys.executable, "-m", "gammonclock.pin", "LRCL"],
                           capture_output=True, text=True, check=True)
    assert plain.stdout.startswith('pin_hash = "scrypt$14$8$1$')
    assert "NOT keyed" in plain.stderr and "--key" in plain.stderr

    missing = subprocess.run([sys.executable, "-m", "gammonclock.pin", "LRCL", "--key",
                              str(tmp_path / "nope.key")], capture_output=True, text=True)
    assert missing.returncode == 1 and "nope.key: cannot read the device key" in missing.stderr
    assert missing.stdout == ""
    (tmp_path / "bad.key").write_text("abc\n")
    bad = subprocess.run([sys.executable, "-m", "gammonclock.pin", "LRCL", "--key",
                          str(tmp_path / "bad.key")], capture_output=True, text=True)
    assert bad.returncode == 1 and "bad.key" in bad.stderr and bad.stdout == ""
    # the PIN from standard input: never on a command line other logins can read
    asked = subprocess.run([sys.executable, "-m", "gammonclock.pin", "--key", str(key_file)],
                           input="lrcl\n", capture_output=True, text=True, check=True)
    m = re.fullmatch(r'pin_hash = "(scrypt-k\$14\$8\$1\$[^"]+)"\n', asked.stdout)
    assert m is not None and asked.stderr == "", asked
    again = PinCheck.parse(m[1]).with_key(pepper_of(bytes.fromhex(key_file.read_text())))
    assert again.matches(again.digest(buttons_of(PIN)))
    for given in ("", "LRX\n"):
        nothing = subprocess.run([sys.executable, "-m", "gammonclock.pin", "-"], input=given,
                                 capture_output=True, text=True)
        assert nothing.returncode == 2 and "4-8 letters" in nothing.stderr, nothing
    usage = subprocess.run([sys.executable, "-m", "gammonclock.pin", "LRCL", "--key"],
                           capture_output=True, text=True)
    assert usage.returncode == 2 and "--key FILE" in usage.stderr

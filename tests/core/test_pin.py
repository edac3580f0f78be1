"""The PIN never leaves the arbiter (SPEC §13.4, issue 18): journals, exports and a stick's copy
hold its salted slow hash, never the PIN, and the PIN's taps without their buttons; a replay
judges the entry against the hash. The entry ends with a deliberate gesture (the cube held, or
the 8th press), so a wrong PIN fails at that gesture and never at the PIN's length; lockouts
escalate 5, 15, 60 minutes."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from arbiter_helpers import OPENING, chord, taps
from device_helpers import MOCK_TEXT
from gammonclock.cli.main import main
from gammonclock.config.loading import (
    ConfigError,
    config_of_header,
    parse_config,
    parse_device_config,
    parse_match_config,
)
from gammonclock.core.arbiter import Undo
from gammonclock.core.effects import ArbiterCommand, Refused, Shown
from gammonclock.core.engine import ButtonEdge, Engine, PinKey
from gammonclock.core.match import ArbiterAction
from gammonclock.core.match_state import PanelStage, Phase
from gammonclock.core.pin import PinCheck, hash_pin, make_hash, redact_pin
from gammonclock.core.reasons import Reason
from gammonclock.core.rules import MatchRules
from gammonclock.journal.files import journal_header
from gammonclock.journal.inputs import input_data, input_from
from gammonclock.journal.reader import read_header, read_journal
from gammonclock.journal.replay import replay
from gammonclock.runtime.usb_stick import export_to_stick
from gammonclock.sides import Button, Side
from play_helpers import Played, play
from property_helpers import property_settings
from rig_helpers import DOWN, UP, S, direct, journal_of, mock_config, presses

L, R, C = Button.LEFT, Button.RIGHT, Button.CUBE
LETTER = {"L": L, "R": R, "C": C}


def buttons_of(pin: str) -> tuple[Button, ...]:
    return tuple(LETTER[x] for x in pin)


def pin_in(text: str, pin: str) -> bool:
    """Whether `pin` stands in `text` as a word of its own (a hash's base64 may hold any run
    of letters inside it)."""
    return re.search(rf"(?<![A-Za-z0-9+/]){pin}(?![A-Za-z0-9+/=])", text) is not None


# --- on the device: the journal, its exports, a stick's copy ------------------------------------

def entry(start: float, buttons: tuple[Button, ...]) -> list[tuple[float, Button, bool]]:
    """The presses, then (fewer than 8) the cube held 2.5 s: the end of the entry."""
    out = presses(start, buttons)
    if len(buttons) < 8:
        end = start + 0.5 * len(buttons)
        out += [(end, C, DOWN), (end + 2.5, C, UP)]
    return out


def chord_at(t: float) -> list[tuple[float, Button, bool]]:
    return [(t, C, DOWN), (t + 0.1, L, DOWN), (t + 0.2, R, DOWN),
            (t + 3.7, C, UP), (t + 3.7, L, UP), (t + 3.7, R, UP)]


def wrong(pin: str) -> str:
    """The PIN with its last letter changed: as long as the PIN, and wrong."""
    return pin[:-1] + ("L" if pin[-1] != "L" else "R")


@pytest.mark.parametrize("pin", ["LRCLRRCL", "LRCL"])
def test_on_the_device_nothing_written_holds_the_pin_and_a_replay_judges_the_taps(
        request, tmp_path, pin):
    text = MOCK_TEXT + f'\n[arbiter]\npin = "{pin}"\n'
    rig = request.getfixturevalue("open_device")(mock_config(text))
    play_edges = ([(1.0, L, DOWN), (1.1, L, UP)]                  # right's clock runs
                  + chord_at(20) + entry(30, buttons_of(pin))     # the right PIN: the menu
                  + [(45, C, DOWN), (48, C, UP)]                  # a cube hold resumes
                  + chord_at(60) + entry(70, buttons_of(wrong(pin)))   # a wrong PIN
                  + chord_at(100))                                # nothing: a timeout
    rig.play(play_edges)
    end = 140 * S
    engine = rig.settle(end)
    assert engine.match == direct(rig.engine.rules, rig.edges, end).match
    match = engine.match
    assert (match.phase, match.pin_failures, match.chord_locked_until) == (Phase.RUNNING, 2, None)
    path = journal_of(rig)
    records = read_journal(path).records
    said = [e for r in records if r.kind in ("input", "tick") for e in r.data["effects"]]
    assert [e["reason"] for e in said if e.get("reason") in ("pin_wrong", "pin_timeout")] == [
        "pin_wrong", "pin_timeout"]
    assert {(e["text"], e["source"]) for e in said if e["kind"] == "arbiter_command"} == {
        ("resume", "panel")}                                    # the menu was open

    # The header holds the hash the engine judged by, never the PIN.
    header = read_header(path).data
    assert 'pin_hash = "scrypt-k$14$8$1$' in header["config"]      # keyed by the device key
    assert re.search(r"(?m)^\s*pin\s*=", header["config"]) is None
    assert config_of_header(header, "j").rules.arbiter_pin == rig.engine.rules.arbiter_pin
    # No record of the PIN's entry names a button: the edges there are the pad's, without it.
    pad_records = [r.data["input"] for r in records if r.kind == "input"
                   and r.data["input"]["type"] == "pin"]
    ends = [i for i in pad_records if i["key"] == "end"]
    assert len(ends) == 2 and all("button" not in i for i in pad_records)
    assert sum(i["key"] in ("dot", "press") for i in pad_records) == 2 * len(pin) + (
        2 if len(pin) < 8 else 0)
    # Every input record during an entry is the pad's: replayed step by step, the engine
    # before each record says whether the pad held the buttons.
    before: list[Engine] = [Engine.start(rig.engine.rules)]

    def step(s) -> None:
        previous = before[-1]
        if s.record.kind == "input" and previous._pad_takes():
            assert s.record.data["input"]["type"] == "pin", s.record.data
        before.append(s.engine)
    replay(read_journal(path), observe_steps=step)

    # A replay reaches the same match: the menu opened, two failed attempts.
    assert replay(read_journal(path)).engine.advance(end)[0].match == match
    state = tmp_path / "state"
    assert main(["verify", str(path), "--state-dir", str(state)]) == 0

    # The journal's bytes, its exports and a stick's copy: no PIN anywhere.
    written = {"journal": path.read_bytes()}
    for fmt in ("csv", "json", "html"):
        out = tmp_path / f"export.{fmt}"
        assert main(["export", str(path), "--format", fmt, "--out", str(out),
                     "--state-dir", str(state)]) == 0
        written[fmt] = out.read_bytes()
    stick = tmp_path / "stick"
    stick.mkdir()
    report = export_to_stick(stick, "table-1", [path], path, (state / "device.key")
                             .read_text().strip().encode())
    assert report.problem is None
    copied = [f for f in stick.rglob("*") if f.is_file()]
    assert {f.suffix for f in copied} >= {".jsonl", ".csv", ".html"}
    written.update({str(f): f.read_bytes() for f in copied})
    for name, data in written.items():
        text = data.decode("utf-8")
        assert not pin_in(text, pin), name
        assert not re.search(r'"button"\s*:\s*"(left|right|cube)"[^\n]*"type"\s*:\s*"pin"',
                             text), name


def test_a_match_file_on_a_device_config_with_a_pin_keeps_only_the_hash():
    device = parse_device_config('[arbiter]\npin = "CCLR"   # the arbiter\'s\n', "device.toml")
    config = parse_match_config("[match]\nlength = 5\n", "match.toml", device)
    header = journal_header(config.text, config.path, device_text=config.device_text)
    assert "CCLR" not in str(header) and "pin_hash" in header["device"]
    assert config_of_header(header, "j").rules == config.rules


# --- the gesture: a wrong PIN fails at the end, never at its length -----------------------------

PIN = "LRCLR"


def run(script: str, pin: str = PIN, **overrides: object) -> Played:
    return play(script, MatchRules.defaults(arbiter_pin=hash_pin(pin), **overrides))


def refusals(played: Played) -> list[tuple[float, Reason | None]]:
    return [(e.t / S, e.reason) for e in played.surviving(Refused)]


def typed(t: float, letters: str) -> str:
    return taps(t, tuple(LETTER[x].value for x in letters))


# (name, what is typed from 40 s, a cube hold after it or not, when the entry fails / None)
ENTRIES = [
    ("the PIN's length, wrong, then the cube held", "LRCLL", True, 45.0),
    ("the PIN's length, wrong, nothing after", "LRCLL", False, 63.7),
    ("shorter, then the cube held", "LRC", True, 44.0),
    ("longer (7), then the cube held", "LRCLRRL", True, 46.0),
    ("8 presses: the 8th ends it", "LRCLRRLL", False, 43.6),
    ("the right PIN and more: wrong", "LRCLRL", True, 45.5),
]


@pytest.mark.parametrize(("name", "letters", "hold", "fails_at"), ENTRIES,
                         ids=[row[0] for row in ENTRIES])
def test_a_wrong_pin_fails_at_the_end_of_the_entry_never_at_its_length(name, letters, hold,
                                                                      fails_at):
    script = OPENING + chord(30) + typed(40, letters)
    if hold:
        script += f"{40 + 0.5 * len(letters):.1f} hold cube\n"
    # Just after the PIN's length of presses, nothing has failed yet: still the PIN's stage.
    first = letters[:len(PIN)]
    early = run(OPENING + chord(30) + typed(40, first) + f"{40 + 0.5 * len(first):.1f} end\n")
    assert early.match.panel is not None and early.match.panel.stage is PanelStage.PIN
    assert refusals(early) == []
    played = run(script + "70 end\n")
    assert refusals(played) == [(fails_at, Reason.PIN_WRONG if fails_at < 63
                                 else Reason.PIN_TIMEOUT)]
    assert played.match.panel is None and played.match.pin_failures == 1


@pytest.mark.parametrize(("name", "pin", "script", "opens_at"), [
    ("5 letters, the cube held", "LRCLR", typed(40, "LRCLR") + "42.5 hold cube\n", 45.0),
    ("8 letters: at the 8th release", "LRCLRRCL", typed(40, "LRCLRRCL"), 43.6),
    ("7 letters, the cube held as the 8th press", "CCCCCCC", typed(40, "CCCCCCC")
     + "43.5 hold cube\n", 46.0),
    ("a long press of left is a letter", "LRCL", "40 hold left 3\n" + typed(44, "RCL")
     + "45.5 hold cube\n", 48.0),
])
def test_the_right_pin_opens_the_menu_at_the_end_of_the_entry(name, pin, script, opens_at):
    played = run(OPENING + chord(30) + script + "60 end\n", pin=pin)
    panel = played.match.panel
    assert panel is not None and panel.stage is PanelStage.MENU, refusals(played)
    assert panel.deadline == round((opens_at + 120) * S)
    assert refusals(played) == []


def test_each_press_is_a_dot_and_at_most_eight():
    played = run(OPENING + chord(30) + typed(40, "LLLLLRRRRR") + "46 end\n", pin="LRCLRRCL")
    dots = [e.text for e in played.surviving(Shown) if e.reason is Reason.PIN_DOT]
    assert dots == ["PIN " + "*" * n for n in range(1, 9)]


# --- lockouts ----------------------------------------------------------------------------------

MIN = 60


def failures(start: float, n: int = 3) -> tuple[str, float]:
    """`n` wrong PINs from `start`, 20 s apart; the script and the instant of the last failure."""
    script, last = "", start
    for i in range(n):
        t = start + 20 * i
        script += chord(t) + typed(t + 5, "CCCCC") + f"{t + 7.5:.1f} hold cube\n"
        last = t + 10
    return script, last


def right_pin(t: float) -> str:
    return chord(t) + typed(t + 5, PIN) + f"{t + 7.5:.1f} hold cube\n{t + 12:.1f} hold cube\n"


# Each row: the lockouts in a row (minutes), a right PIN between them resetting the escalation.
LOCKOUTS = [
    ("5, 15, 60, 60", [5, 15, 60, 60], None),
    ("5, 15, then a right PIN: 5 again", [5, 15, 5, 15], 2),
]


@pytest.mark.parametrize(("name", "minutes", "reset_before"), LOCKOUTS,
                         ids=[row[0] for row in LOCKOUTS])
def test_lockouts_escalate_and_a_right_pin_resets_them(name, minutes, reset_before):
    script, t = OPENING, 20.0
    for i, lock in enumerate(minutes):
        if i == reset_before:
            script += right_pin(t)
            t += 30
        more, last = failures(t)
        script += more
        locked_at = run(script + f"{last + 1} end\n").match
        assert locked_at.chord_locked_until == round((last + lock * MIN) * S), (i, lock)
        assert locked_at.pin_failures == 0
        # A chord inside the lockout is locked; just after it, it opens the PIN's entry.
        inside = run(script + chord(last + lock * MIN - 10) + f"{last + lock * MIN - 5} end\n")
        assert inside.match.panel is None
        after = run(script + chord(last + lock * MIN + 1) + f"{last + lock * MIN + 6} end\n")
        assert after.match.panel is not None and after.match.panel.stage is PanelStage.PIN
        t = last + lock * MIN + 30


def test_a_failed_attempt_says_the_lockout_in_its_refusal():
    first, last = failures(20)
    second, last = failures(last + 5 * MIN + 30)
    played = run(OPENING + first + second + f"{last + 1} end\n")
    texts = [e.describe() for e in played.surviving(Refused)]
    assert "locked for 5:00" in texts[2] and "locked for 15:00" in texts[5]


# --- the journal's input and the replay: the same match ------------------------------------------

# (gap ms, button, down?) — or, with button None, the socket's undo at that gap
PIN_EDGES = st.lists(st.tuples(st.integers(1, 3_000), st.sampled_from([*Button, None]),
                               st.booleans()), max_size=40)


@property_settings(150)
@given(PIN_EDGES, st.sampled_from(["LRCL", "CCCCCCCC", "RLR" + "C" * 3]))
def test_any_edges_in_the_pin_entry_replay_to_the_same_match_without_buttons(edges, pin):
    """Undos among them: their refolds of the history refold the pad's events alike."""
    rules = MatchRules.defaults(arbiter_pin=hash_pin(pin), hold_ns=S, chord_ns=S)
    live = Engine.start(rules)
    t = 0
    opening = [(0, L, True), (100, L, False), (500, C, True), (10, L, True), (10, R, True),
               (1_100, C, False), (0, L, False), (0, R, False)]
    right = [(300, b, p) for b in buttons_of(pin) for p in (True, False)] + [
        (300, C, True), (1_200, C, False)]
    recorded = []
    for gap, button, pressed in opening + edges + right + edges:
        t += gap * 1_000_000
        before = live
        live, _ = live.feed(ButtonEdge(t, button, pressed) if button is not None
                            else ArbiterAction(t, Undo(), "socket"))
        assert live.recorded is not None
        if before._pad_takes() and button is not None:
            assert isinstance(live.recorded, PinKey)
        data = input_data(live.recorded)
        assert "button" not in data or data["type"] == "edge"
        recorded.append(input_from(t, data))
    replayed = Engine.start(rules)
    for event in recorded:
        replayed, _ = replayed.feed(event)
    assert replayed.match == live.match
    assert (replayed.buttons, replayed.pad) == (live.buttons, live.pad)
    later = t + 200 * S
    assert replayed.advance(later)[0].match == live.advance(later)[0].match


def test_the_right_pin_after_random_presses_still_opens_the_menu():
    # One case of the property above, looked at: the menu after a right entry.
    rules = MatchRules.defaults(arbiter_pin=hash_pin("LRCL"), hold_ns=S, chord_ns=S)
    played = play(OPENING + "30 down cube\n30 down left\n30 down right\n31.5 up cube\n"
                  "31.5 up left\n31.5 up right\n" + typed(33, "LRCL") + "35 hold cube 1.2\n"
                  "40 end\n", rules)
    assert played.match.panel is not None and played.match.panel.stage is PanelStage.MENU
    assert [e for e in played.surviving(ArbiterCommand)] == []


# --- the config ----------------------------------------------------------------------------------

def test_a_pin_hash_is_a_pin_for_the_clock():
    text = f'[match]\nlength = 5\n[arbiter]\npin_hash = "{make_hash("CRLC")}"\n'
    config = parse_config(text, "x.toml")
    check = config.rules.arbiter_pin
    assert check is not None and check.legacy_pin is None
    assert check.matches(check.digest(buttons_of("CRLC")))
    assert not check.matches(check.digest(buttons_of("CRLL")))
    assert config.device.arbiter_pin == check
    assert redact_pin(text) == text                           # nothing to hide in it


def test_a_clear_pin_is_hashed_once_per_process_and_never_kept():
    a = parse_config('[match]\nlength = 5\n[arbiter]\npin = "LRCLR"\n', "a.toml")
    b = parse_config('[match]\nlength = 3\n[arbiter]\npin = "LRCLR"\n', "b.toml")
    assert a.rules.arbiter_pin is b.rules.arbiter_pin is hash_pin("LRCLR")
    assert "LRCLR" not in repr(a.rules) and "LRCLR" not in repr(a.device)


@pytest.mark.parametrize(("text", "key", "says"), [
    (f'[arbiter]\npin = "LRCL"\npin_hash = "{make_hash("LRCL")}"\n', "arbiter.pin_hash",
     "either pin or pin_hash"),
    ('[arbiter]\npin_hash = "LRCL"\n', "arbiter.pin_hash", "is not a PIN hash"),
    ('[arbiter]\npin_hash = "scrypt$14$8$1$AAAA$AAAA"\n', "arbiter.pin_hash",
     "salt must be 8..64 bytes"),
    (f'[arbiter]\npin_hash = "{make_hash("LRCL").replace("$14$", "$30$")}"\n',
     "arbiter.pin_hash", "its scrypt cost (log2 N, the 2nd field) is 30; 10..16 is allowed"),
    ('[arbiter]\npin_hash = 1234\n', "arbiter.pin_hash", "is not a PIN hash"),
    ('arbiter = { pin = "LRCL" }\n', "arbiter.pin", "line of its own"),
    ('[arbiter]\npin = """LRCL"""\n', "arbiter.pin", "line of its own"),
    ('arbiter.pin = "LRCL"\n', "arbiter.pin", "line of its own"),
    ('[arbiter]\npin = "LRCL"\n# the PIN is LRCL\n', "arbiter.pin", "elsewhere"),
])
def test_a_bad_pin_or_pin_hash_is_an_error_naming_the_key(text, key, says):
    for parse in (lambda: parse_config(text + "[match]\nlength = 5\n", "x.toml"),
                  lambda: parse_device_config(text, "device.toml")):
        with pytest.raises(ConfigError) as info:
            parse()
        assert any(p.startswith(f"{key}: ") and says in p for p in info.value.problems), \
            info.value.problems


def test_a_redacted_text_keeps_everything_else():
    text = ('[match]\nlength = 5   # five\n\n[arbiter]\nsocket_group = "arb"\n'
            "pin = 'CCRL'   # ask the director\nchord_s = 4\n")
    redacted = redact_pin(text)
    check = hash_pin("CCRL")
    assert redacted == text.replace("pin = 'CCRL'", f'pin_hash = "{check.hashed}"')
    assert parse_config(redacted, "r.toml").rules == parse_config(text, "t.toml").rules


def test_a_config_written_on_windows_is_redacted_all_the_same():
    text = '[match]\r\nlength = 5\r\n[arbiter]\r\npin = "LRRC"\r\n'
    redacted = redact_pin(text)
    assert not pin_in(redacted, "LRRC") and redacted.endswith('"\r\n')
    assert parse_config(redacted, "r.toml").rules == parse_config(text, "t.toml").rules


def test_pin_hash_parameters():
    check = PinCheck.parse(make_hash("LRCL", salt=b"0123456789abcdef"))
    assert check.hashed.startswith("scrypt$14$8$1$MDEyMzQ1Njc4OWFiY2RlZg==$")
    assert main_pin(["LRCL"]).startswith('pin_hash = "scrypt$14$8$1$')


def main_pin(args: list[str]) -> str:
    import contextlib
    import io

    from gammonclock.pin import main as pin_main
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert pin_main(args) == 0
    return out.getvalue()


def test_nothing_is_written_of_a_tap_in_a_journal_made_by_simulate(tmp_path: Path):
    config = tmp_path / "m.toml"
    config.write_text('[match]\nlength = 5\n[arbiter]\npin = "RRCCL"\n', encoding="utf-8")
    script = tmp_path / "s.script"
    script.write_text(OPENING + chord(20) + typed(30, "RRCCL") + "33 hold cube\n40 end\n",
                      encoding="utf-8")
    journal = tmp_path / "j.jsonl"
    assert main(["simulate", "--config", str(config), "--script", str(script), "--journal",
                 str(journal), "--state-dir", str(tmp_path / "st"), "--json"]) == 0
    text = journal.read_text(encoding="utf-8")
    assert not pin_in(text, "RRCCL")
    match = replay(read_journal(journal)).engine.match
    assert match.panel is not None and match.panel.stage is PanelStage.MENU
    assert match.reserve_at(Side.RIGHT) < 600 * S


def test_the_letters_of_an_entry_under_way_show_in_no_repr():
    """Review of issue 18: the buttons typed so far live in the engine's memory only; its repr
    (a debugger, a log line with %r) showed them, as it does not show the pepper."""
    played = run(OPENING + chord(30) + typed(40, "LRC") + "42 end\n")
    assert played.engine.keys is not None                 # mid-entry: the letters are held
    assert "PadKeys" not in repr(played.engine) and "letters=" not in repr(played.engine)

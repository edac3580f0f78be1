"""Faults at the journal and the state folder (issue 7, items 3, 4, 8, 9 and the read-only card
of 11): a bad device key is refused, never used; the match to resume is chosen by the journals'
own content, not by mtime; one clock per state folder; a sealed record this firmware cannot
understand is a clear error naming it (and `run` shows it and waits); a read-only or full card
at start does not stop the clock."""

from __future__ import annotations

import errno
import json
import os
import select
import signal
import subprocess
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, event, given
from hypothesis import strategies as st

from device_helpers import MOCK_TEXT, start_run, wait_until_running
from gammonclock import __version__
from gammonclock.cli.main import main
from gammonclock.config.loading import ConfigError, parse_config
from gammonclock.core.arbiter import Abandon
from gammonclock.core.match import ArbiterAction
from gammonclock.device.build import StartRefused, StateInUse, build_device, dummy_panels
from gammonclock.hardware.screens import config_error_view, render
from gammonclock.journal.files import journal_header, latest_journal
from gammonclock.journal.key import KeyRefused, load_or_create_key, read_key
from gammonclock.journal.reader import read_header, read_journal
from gammonclock.journal.records import JOURNALS_DIR, JournalError, RecordError, Stamp
from gammonclock.journal.replay import replay
from gammonclock.journal.verify import verify
from gammonclock.journal.writer import DeferredJournal, JournalWriter
from gammonclock.runtime.session import COPY_RETRY_NS
from gammonclock.sides import Button, Side
from journal_helpers import (
    CONFIG,
    DELETE,
    S,
    bodies_of,
    journaled_run,
    not_understood,
    press,
    sealed,
    session_at,
    set_in,
    unknown_input_journal,
)
from property_helpers import property_settings

STAMP = Stamp(1, "b", 2)


# --- helpers ---------------------------------------------------------------------------------

def journals(state: Path) -> list[Path]:
    return sorted((state / JOURNALS_DIR).glob("match-*.jsonl"))


CONFIG_A = parse_config(CONFIG, "a.toml")
CONFIG_B = parse_config(CONFIG.replace('right = "Boris"', 'right = "Carla"'), "b.toml")


# --- the device key --------------------------------------------------------------------------

@pytest.mark.parametrize("name, blob, fragment", [
    ("empty", b"", "is empty (0 bytes)"),
    ("one byte", b"ab\n", "holds 1 bytes; a device key has at least 32"),
    ("one character", b"a", "is not hex text"),
    ("not hex", b"zz" * 32 + b"\n", "is not hex text"),
    ("hex with spaces", b"ab " * 32 + b"\n", "is not hex text"),
    ("short", b"ab" * 31 + b"\n", "holds 31 bytes"),
    ("only a newline", b"\n", "holds 0 bytes"),
])
def test_a_bad_device_key_is_refused_with_what_to_do(tmp_path, name, blob, fragment):
    state = tmp_path / "state"
    state.mkdir()
    (state / "device.key").write_bytes(blob)
    for load in (read_key, load_or_create_key):
        with pytest.raises(KeyRefused) as caught:
            load(state)
        message = str(caught.value)
        assert str(state / "device.key") in message and fragment in message, message
        assert "Move it away to make a new one" in message
        assert "journals sealed with the old key will then not verify" in message
    assert (state / "device.key").read_bytes() == blob       # never replaced behind one's back


def test_a_new_key_is_64_hex_digits_a_newline_and_mode_0600(tmp_path):
    key = load_or_create_key(tmp_path / "state")
    text = (tmp_path / "state" / "device.key").read_text()
    assert len(key) == 32 and text == key.hex() + "\n"
    assert os.stat(tmp_path / "state" / "device.key").st_mode & 0o777 == 0o600
    assert os.listdir(tmp_path / "state") == ["device.key"]   # no temporary file left


def fail_writes_in(directory: Path, error: int) -> Callable[..., int]:
    """An os.write that fails with `error` for files inside `directory`."""
    real_write = os.write

    def write(fd: int, data: bytes) -> int:
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            target = ""
        if target.startswith(str(directory)):
            raise OSError(error, os.strerror(error))
        return real_write(fd, data)
    return write


def test_a_full_disk_on_first_start_leaves_no_key_and_says_so(tmp_path, monkeypatch):
    state = tmp_path / "state"
    monkeypatch.setattr(os, "write", fail_writes_in(state, errno.ENOSPC))
    with pytest.raises(JournalError, match=r"device\.key: cannot create the device key: "
                                           r"No space left on device"):
        load_or_create_key(state)
    assert os.listdir(state) == []                  # neither a 0-byte key nor a temporary file
    monkeypatch.undo()
    assert len(load_or_create_key(state)) == 32     # the disk came back: a whole key


def test_a_journal_resealed_with_the_empty_key_is_not_intact(tmp_path, capsys):
    path, _, _ = journaled_run(tmp_path)
    bodies = bodies_of(path)
    bodies[0]["data"]["config"] = bodies[0]["data"]["config"].replace("Boris", "Mallory")
    path.write_bytes(sealed(b"", bodies))
    (tmp_path / "state" / "device.key").write_bytes(b"")
    code = main(["verify", str(path), "--state-dir", str(tmp_path / "state")])
    out, err = capsys.readouterr()
    assert code == 2 and "intact" not in out
    assert "device.key: the device key is empty" in err
    with pytest.raises(KeyRefused):
        verify(path, b"")
    with pytest.raises(KeyRefused):
        JournalWriter.create(tmp_path / "new.jsonl", b"", {}, 0, STAMP)
    assert not (tmp_path / "new.jsonl").exists()


# --- resume by content, not by mtime ---------------------------------------------------------

def test_the_unfinished_match_is_resumed_though_an_older_journal_looks_newer(tmp_path):
    state = tmp_path / "state"
    other, _ = session_at(CONFIG_B, state)
    press(other, Button.LEFT, 1)
    other.feed(ArbiterAction(2 * S, Abandon()))       # over: the next boot starts a new match
    other.close()
    mine, _ = session_at(CONFIG_A, state)
    press(mine, Button.LEFT, 1)                     # right's clock runs
    mine.checkpoint(9 * S)
    mine.close()
    # A Pi without a real-time clock after a power cut: the other journal looks newer.
    future = time.time() + 86_400 * 365
    os.utime(other.journal.path, (future, future))  # type: ignore[union-attr]
    again, notes = session_at(CONFIG_A, state)
    assert notes[0] == f"recovered {mine.journal.path}"  # type: ignore[union-attr]
    assert again.engine.match.now == 9 * S and again.engine.match.phase.value == "paused"
    assert read_header(other.journal.path).data["match_no"] == 1   # type: ignore[union-attr]
    assert read_header(mine.journal.path).data["match_no"] == 2    # type: ignore[union-attr]
    assert len(journals(state)) == 2
    again.close()


def test_the_continued_journal_is_resumed_not_its_damaged_original(tmp_path):
    state = tmp_path / "state"
    first, _ = session_at(CONFIG_A, state)
    press(first, Button.LEFT, 1)
    press(first, Button.RIGHT, 15)
    first.close()
    original = first.journal.path                   # type: ignore[union-attr]
    lines = original.read_bytes().splitlines(keepends=True)
    lines[2] = lines[2].replace(b'"t":', b'"t" :', 1)   # damaged in the middle
    original.write_bytes(b"".join(lines))
    second, notes = session_at(CONFIG_A, state)
    continued = second.journal.path                  # type: ignore[union-attr]
    assert continued.name.endswith(".continued.jsonl") and f"the match goes on in {continued}" \
        in notes
    press(second, Button.LEFT, 30)
    second.close()
    future = time.time() + 86_400
    os.utime(original, (future, future))             # the original looks newest by mtime
    third, notes = session_at(CONFIG_A, state)
    assert notes[0] == f"recovered {continued}"
    assert third.journal.path == continued           # type: ignore[union-attr]
    assert latest_journal(state) == continued
    assert len(journals(state)) == 2
    third.close()


def test_journals_without_match_no_count_as_0_then_go_by_name(tmp_path):
    state = tmp_path / "state"
    key = load_or_create_key(state)
    old = []
    for name in ("match-20990101-000000.jsonl", "match-20980101-000000.jsonl"):
        writer = JournalWriter.create(state / JOURNALS_DIR / name, key,
                                      journal_header(CONFIG_B.text, "b.toml"), 0, STAMP)
        writer.close()
        old.append(writer.path)
    future = time.time() + 86_400
    os.utime(old[1], (future, future))               # the one named older is newer by mtime
    assert latest_journal(state) == old[0]
    resumed, notes = session_at(CONFIG_A, state)     # the newest is unfinished: resumed
    assert notes[0] == f"recovered {old[0]}"
    resumed.feed(ArbiterAction(S, Abandon()))
    resumed.close()
    session, notes = session_at(CONFIG_A, state)
    new = session.journal.path                       # type: ignore[union-attr]
    session.close()
    assert notes[0].startswith("new match") and new.name < old[1].name
    assert read_header(new).data["match_no"] == 1
    assert latest_journal(state) == new              # match 1 comes after the journals with none


# --- one clock per state folder --------------------------------------------------------------

def test_a_second_device_on_the_same_state_folder_is_refused_and_touches_nothing(tmp_path):
    state = tmp_path / "state"
    config = parse_config(MOCK_TEXT, "mock.toml")
    first = build_device(config, state, panels=dummy_panels())
    socket = (state / "arbiter.sock").stat()
    journal = journals(state)[0].read_bytes()
    with pytest.raises(StateInUse, match=rf"another gammonclock \(pid {os.getpid()}\) is using "
                                         rf"{state}; stop it first"):
        build_device(config, state, panels=dummy_panels())
    assert (state / "arbiter.sock").stat().st_ino == socket.st_ino
    assert journals(state)[0].read_bytes() == journal and len(journals(state)) == 1
    first.close()
    again = build_device(config, state, panels=dummy_panels())   # released: the next one runs
    assert again.notes[0].startswith("recovered")
    again.close()


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="needs Linux /proc")
def test_a_second_run_exits_1_naming_the_first(tmp_path, processes):
    first = start_run(tmp_path, processes)
    wait_until_running(first, what="the first run did not start")
    second = start_run(tmp_path, processes)
    _, err = second.communicate(timeout=15)
    assert second.returncode == 1
    assert f"another gammonclock (pid {first.pid}) is using {tmp_path / 'state'}" in err
    first.send_signal(signal.SIGTERM)
    _, err = first.communicate(timeout=10)
    assert first.returncode == 0, err
    records = read_journal(journals(tmp_path / "state")[0]).records
    assert [r.seq for r in records] == list(range(len(records)))
    assert verify(journals(tmp_path / "state")[0], read_key(tmp_path / "state")).intact


# --- records this firmware cannot understand -------------------------------------------------

# (case, record, field, value, what the error says)
NOT_UNDERSTOOD = [
    ("input type unknown", 3, "data.input.type", "chord",
     f"input type 'chord' is unknown to this firmware (version {__version__}); the journal may "
     f"come from a newer version"),
    ("kind unknown", 5, "kind", "snapshot", 'kind "snapshot" is unknown to this firmware'),
    ("newer format", 0, "data.format", 2, "journal format 2 is newer than this firmware's (1"),
    ("header without config", 0, "data.config", DELETE, "the header's config is null"),
    ("input without its input", 3, "data.input", DELETE, "the input is null"),
    ("missing field", 4, "boot", DELETE, "the field 'boot' is missing"),
    ("seq a bool", 4, "seq", True, "the record has no sequence number"),
    ("t as text", 4, "t", "5", "the field 't' is \"5\""),
    ("t huge", 5, "t", 10**30, "the field 't' is 1000000000000000000000000000000"),
    ("wall negative", 5, "wall", -1, "the field 'wall' is -1"),
    ("prev short", 5, "prev", "ab", "the field 'prev' is \"ab\"; it must be 64 hex digits"),
    ("tick without effects", 5, "data.effects", DELETE, "the effects are null"),
    ("pressed as text", 3, "data.input.pressed", "yes", "the edge input's 'pressed' is str"),
    ("unknown button", 3, "data.input.button", "middle", "button 'middle' is unknown"),
    ("edge without button", 3, "data.input.button", DELETE, "'button' is missing"),
    ("bad dice line", 1, "data.input.line", "ROLL 9", "ROLL 9"),
    ("time goes back", 7, "t", 1, "its instant (1 ns) is before the match's"),
]


@pytest.mark.parametrize("case, index, where, value, fragment", NOT_UNDERSTOOD,
                         ids=[c[0] for c in NOT_UNDERSTOOD])
def test_a_record_not_understood_is_a_clear_error_naming_it(
        tmp_path, capsys, case, index, where, value, fragment):
    path = not_understood(tmp_path, index, where, value)
    named = f"record {index} (line {index + 1}): " if where != "seq" else f"line {index + 1}: "
    with pytest.raises(RecordError) as caught:
        replay(read_journal(path))
    assert str(caught.value).startswith(f"{path}: {named}") and fragment in str(caught.value)
    state = str(tmp_path / "state")
    for command in (["replay", str(path)], ["verify", str(path), "--state-dir", state],
                    ["export", str(path), "--format", "json", "--out", str(tmp_path / "x.json"),
                     "--state-dir", state]):
        code = main(command)
        out, err = capsys.readouterr()
        assert code == 2, (command, out, err)
        assert named in err and fragment in err and "Traceback" not in err, (command, err)
        assert "intact" not in out


def test_seals_are_checked_before_the_schema(tmp_path, capsys):
    path = not_understood(tmp_path, 4, "boot", DELETE)
    lines = path.read_bytes().splitlines(keepends=True)
    record = json.loads(lines[9])
    record["mac"] = "0" * 64                        # a later record's seal is broken
    lines[9] = json.dumps(record, sort_keys=True, separators=(",", ":")).encode() + b"\n"
    path.write_bytes(b"".join(lines))
    assert main(["verify", str(path), "--state-dir", str(tmp_path / "state")]) == 1
    assert "TAMPERED: line 10: record 9 was altered" in capsys.readouterr().out


@pytest.mark.parametrize("index, where, value, fragment", [
    (1, "data.input.type", "chord", "record 1 (line 2): input type 'chord' is unknown"),
    (0, "data.format", 2, "record 0 (line 1): journal format 2 is newer"),
    (2, "data.input", DELETE, "record 2 (line 3): the input is null"),
])
def test_open_match_refuses_a_journal_it_cannot_understand(
        tmp_path, index, where, value, fragment):
    state = tmp_path / "state"
    path = unknown_input_journal(state, CONFIG_A, index, where, value)
    before = path.read_bytes()
    with pytest.raises(StartRefused) as caught:
        session_at(CONFIG_A, state)
    message = str(caught.value)
    assert f"{path}: {fragment}" in message
    assert f"move {path.name} out of {state / JOURNALS_DIR}" in message
    assert path.read_bytes() == before and journals(state) == [path]
    # Nor on another config: the newest journal's match comes first, whatever the config.
    with pytest.raises(StartRefused):
        session_at(CONFIG_B, state)


def test_the_device_shows_the_problem_on_both_panels_and_keeps_the_folder(tmp_path):
    state = tmp_path / "state"
    config = parse_config(MOCK_TEXT, "mock.toml")
    unknown_input_journal(state, config)
    panels = dummy_panels()
    with pytest.raises(StartRefused) as caught:
        build_device(config, state, panels=panels)
    expected = render(replace(config_error_view(caught.value.panel), title="JOURNAL ERROR"))
    for side in Side:
        shown = panels[side].device.image
        assert shown is not None and shown.tobytes() == expected.convert(shown.mode).tobytes()
    assert not (state / "arbiter.sock").exists()
    with pytest.raises(StateInUse):                 # still this clock's until it is stopped
        build_device(config, state, panels=dummy_panels())
    caught.value.release()


def test_a_bad_key_at_start_is_refused_not_replaced(tmp_path):
    state = tmp_path / "state"
    state.mkdir()
    (state / "device.key").write_bytes(b"")
    with pytest.raises(StartRefused, match="device.key: the device key is empty") as caught:
        session_at(CONFIG_A, state)
    assert "move device.key away" in caught.value.panel
    assert (state / "device.key").read_bytes() == b"" and journals(state) == []


def read_stderr_until(proc: subprocess.Popen[str], text: str) -> str:
    """Stderr of a running process up to a line holding `text` (at most 15 s)."""
    assert proc.stderr is not None
    seen, deadline = "", time.monotonic() + 15
    while text not in seen:
        assert time.monotonic() < deadline, seen
        ready, _, _ = select.select([proc.stderr], [], [], 0.2)
        if ready:       # the raw pipe: a buffered readline would hide what it read ahead
            chunk = os.read(proc.stderr.fileno(), 4096)
            assert chunk, f"exited {proc.wait()}: {seen}"
            seen += chunk.decode()
    return seen


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="needs Linux /proc")
def test_run_with_a_journal_it_cannot_understand_waits_until_stopped(tmp_path, processes):
    state = tmp_path / "state"
    path = unknown_input_journal(state, parse_config(MOCK_TEXT, "mock.toml"))
    before = path.read_bytes()
    proc = start_run(tmp_path, processes)
    err = read_stderr_until(proc, "waiting to be stopped")
    assert "record 1 (line 2): input type 'chord' is unknown" in err
    time.sleep(0.3)
    assert proc.poll() is None                      # no exit: systemd does not loop
    proc.send_signal(signal.SIGTERM)
    proc.communicate(timeout=10)
    assert proc.returncode == 1
    assert path.read_bytes() == before and journals(state) == [path]


# --- a read-only or full card at start -------------------------------------------------------

WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC


def make_unwritable(monkeypatch: pytest.MonkeyPatch, state: Path, how: str) -> None:
    """The state folder as a read-only card (os.open for writing and os.mkdir fail with EROFS)
    or a full one (os.write fails with ENOSPC). Tests run as root, where chmod stops nothing."""
    if how == "full":
        monkeypatch.setattr(os, "write", fail_writes_in(state, errno.ENOSPC))
        return
    real_open, real_mkdir = os.open, os.mkdir

    def refuse(path: Any) -> None:
        if str(os.path.abspath(path)).startswith(str(state)):
            raise OSError(errno.EROFS, os.strerror(errno.EROFS), str(path))

    def open_(path: Any, flags: int, mode: int = 0o777, *, dir_fd: int | None = None) -> int:
        if flags & WRITE_FLAGS:
            refuse(path)
        return real_open(path, flags, mode, dir_fd=dir_fd)

    def mkdir(path: Any, mode: int = 0o777, *, dir_fd: int | None = None) -> None:
        refuse(path)
        real_mkdir(path, mode, dir_fd=dir_fd)
    monkeypatch.setattr(os, "open", open_)
    monkeypatch.setattr(os, "mkdir", mkdir)


@pytest.mark.parametrize("how", ["read-only", "full"])
def test_an_unwritable_card_at_start_runs_the_clock_and_keeps_every_record(
        tmp_path, monkeypatch, how):
    state = tmp_path / "state"
    state.mkdir()
    make_unwritable(monkeypatch, state, how)
    session, notes = session_at(CONFIG_A, state)
    assert isinstance(session.journal, DeferredJournal)
    assert session.journal_error is not None and "cannot create the device key" in \
        session.journal_error                       # the panels' alert, from the start
    press(session, Button.LEFT, 1)                  # applied: right's clock runs
    assert session.engine.match.running_side is Side.RIGHT
    session.advance(12 * S)                         # checkpoints wait too
    press(session, Button.RIGHT, 15)
    assert session.engine.match.running_side is Side.LEFT
    waiting = len(session.backlog)
    assert waiting >= 5 and session.journal_error is not None and journals(state) == []
    monkeypatch.undo()                              # the card works again
    press(session, Button.LEFT, 20)
    session.close()
    assert session.journal_error is None and session.backlog == []
    read = read_journal(session.journal.path)
    assert [r.kind for r in read.records][:2] == ["header", "input"]
    assert [r.seq for r in read.records] == list(range(waiting + 3))
    assert [r.t for r in read.records] == sorted(r.t for r in read.records)
    assert replay(read).engine.state_json() == session.engine.state_json()
    assert verify(session.journal.path, read_key(state)).intact


def test_a_read_only_card_at_start_builds_the_device_without_lock_or_socket(
        tmp_path, monkeypatch, caplog):
    state = tmp_path / "state"
    state.mkdir()
    make_unwritable(monkeypatch, state, "read-only")
    import gammonclock.runtime.arbiter_socket

    def no_socket(*_: object, **__: object) -> None:
        raise OSError(errno.EROFS, os.strerror(errno.EROFS))
    monkeypatch.setattr(gammonclock.runtime.arbiter_socket, "ArbiterServer", no_socket)
    device = build_device(parse_config(MOCK_TEXT, "mock.toml"), state, panels=dummy_panels())
    assert device.session.journal_error is not None
    assert "no arbiter socket: Read-only file system" in device.notes
    assert "running without the state folder's lock" in caplog.text
    device.close()


# --- fuzz: any sealed record -----------------------------------------------------------------

JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.text(max_size=12)
    | st.sampled_from([0, -1, 1, 2**63, 2**64, 10**30, -(10**30), 10**4000 // 10**3990])
    | st.integers() | st.floats(allow_nan=False),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner,
                                                                max_size=3),
    max_leaves=6)
FIELDS = ["seq", "kind", "t", "mono", "boot", "wall", "data", "prev", "data.effects",
          "data.input", "data.input.type", "data.input.button", "data.input.pressed",
          "data.input.line", "data.input.command", "data.input.count", "data.format",
          "data.config", "data.match_no", "data.continues", "data.offset", "data.length"]
KINDS = st.sampled_from(["header", "input", "tick", "torn", "snapshot", ""])
INPUT_TYPES = st.sampled_from(["edge", "arbiter", "dice", "dice_dropped", "recover", "chord"])


@st.composite
def mutations(draw: st.DrawFn) -> list[tuple[int, str, Any]]:
    """A few changes to records of the journal: a field set to any JSON value, removed, or a
    kind or input type known or not. The config text only changes type (its own parser has a
    fuzz of its own)."""
    out = []
    for _ in range(draw(st.integers(1, 3))):
        index = draw(st.integers(0, 20))
        where = draw(st.sampled_from(FIELDS))
        value = draw(st.just(DELETE) | JSON_VALUES | KINDS | INPUT_TYPES)
        if where == "data.config" and isinstance(value, str):
            value = DELETE
        out.append((index, where, value))
    return out


@pytest.fixture(scope="module")
def fuzz_base(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[dict[str, Any]], bytes]:
    base = tmp_path_factory.mktemp("fuzz")
    path, _, _ = journaled_run(base, script="0 roll 3\n0.5 roll 5\n1 tap left\n+14 tap right\n"
                                            "+3 roll 6 6\n+2 arbiter warn left slow\n"
                                            "+9 hold left\n+4 tap cube\n+20 end\n")
    return path, bodies_of(path), load_or_create_key(base / "state")


@property_settings(150, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(changes=mutations())
def test_fuzz_any_sealed_record_gives_a_result_or_an_error_naming_it(fuzz_base, changes):
    source, originals, key = fuzz_base
    bodies = json.loads(json.dumps(originals))
    keep = set()
    for index, where, value in changes:
        body = bodies[index % len(bodies)]
        try:
            set_in(body, where, json.loads(json.dumps(value)) if value is not DELETE else value)
        except (KeyError, TypeError):
            continue                                 # a path the change removed or retyped
        if where == "prev":
            keep.add(index % len(bodies))
    path = source.with_name("fuzzed.jsonl")
    path.write_bytes(sealed(key, bodies, frozenset(keep)))
    for step in (lambda: replay(read_journal(path)), lambda: verify(path, key),
                 lambda: read_header(path)):
        try:
            step()
            event("a result")
        except RecordError as exc:
            event("RecordError")
            assert str(exc).startswith(f"{path}: "), exc
            assert " (line " in str(exc) or ": line " in str(exc), exc
        except ConfigError:
            pass                                     # a header config that is no config
        except JournalError as exc:
            assert str(exc).startswith(f"{path}: "), exc


# --- the continuation of a damaged journal: all of it, or none of it --------------------------

def damaged_in_the_middle(state: Path) -> Path:
    first, _ = session_at(CONFIG_A, state)
    for n in range(6):
        press(first, Button.LEFT if n % 2 == 0 else Button.RIGHT, 1 + 10 * n)
    first.close()
    original = first.journal.path                   # type: ignore[union-attr]
    lines = original.read_bytes().splitlines(keepends=True)
    lines[2] = lines[2].replace(b'"t":', b'"t" :', 1)
    original.write_bytes(b"".join(lines))
    return original


def test_a_continuation_cut_short_never_stands_as_the_journal(tmp_path, monkeypatch):
    """A copy killed half-way (a power cut, a start that timed out) is no journal: the next start
    copies the original again, whole."""
    state = tmp_path / "state"
    original = damaged_in_the_middle(state)
    appended = 0
    real_append = JournalWriter.append

    def dies_half_way(self, *args, **kwargs):
        nonlocal appended
        if self.path.name.endswith(".partial"):
            appended += 1
            if appended == 2:
                raise KeyboardInterrupt   # the process dies mid-copy: nothing cleans up
        return real_append(self, *args, **kwargs)

    monkeypatch.setattr(JournalWriter, "append", dies_half_way)
    with pytest.raises(KeyboardInterrupt):
        session_at(CONFIG_A, state)
    monkeypatch.undo()
    names = sorted(p.name for p in (state / JOURNALS_DIR).iterdir())
    assert [n for n in names if n.endswith(".continued.jsonl")] == []   # no half copy as one
    second, notes = session_at(CONFIG_A, state)
    continued = second.journal.path                  # type: ignore[union-attr]
    assert continued.name == original.stem + ".continued.jsonl"
    second.close()
    read = read_journal(continued)
    assert read.header.data["continues"]["records"] == len(read_journal(original).records)
    assert not list((state / JOURNALS_DIR).glob("*.partial"))


def test_a_continuation_that_cannot_be_written_is_retried_seconds_apart_not_at_every_press(
        tmp_path, monkeypatch):
    state = tmp_path / "state"
    damaged_in_the_middle(state)
    copies = 0
    real_create = JournalWriter.create

    def full_card(path, *args, **kwargs):
        nonlocal copies
        copies += 1
        raise JournalError(f"{path}: cannot create the journal: No space left on device")

    monkeypatch.setattr(JournalWriter, "create", full_card)
    session, _ = session_at(CONFIG_A, state)
    assert copies == 1 and session.journal_error is not None
    for n in range(20):                               # twenty presses in four seconds
        press(session, Button.LEFT if n % 2 == 0 else Button.RIGHT, 100 + n * 0.2)
    assert copies == 1                                # not a copy per press, on the loop
    later = session.journal.clock_ns() + COPY_RETRY_NS
    session.journal.clock_ns = lambda: later         # five seconds later (host time)
    press(session, Button.LEFT, 200)
    assert copies == 2
    monkeypatch.setattr(JournalWriter, "create", real_create)
    session.close()                                   # the stop tries once more: all kept
    assert session.backlog == []
    assert replay(read_journal(session.journal.path)).engine.state_json() == \
        session.engine.state_json()


def test_a_key_on_a_card_without_hard_links_is_made_by_rename(tmp_path, monkeypatch):
    def no_links(*_: object) -> None:
        raise OSError(errno.EPERM, os.strerror(errno.EPERM))

    monkeypatch.setattr(os, "link", no_links)
    key = load_or_create_key(tmp_path)
    assert len(key) == 32 and read_key(tmp_path) == key
    assert [p.name for p in tmp_path.iterdir()] == ["device.key"]   # no temporary left


def test_while_the_journal_is_not_written_both_panels_say_so_in_words_a_player_can_act_on(
        tmp_path, monkeypatch):
    from gammonclock.hardware.notices import JOURNAL_ALERT
    from gammonclock.hardware.screens import panel_view

    state = tmp_path / "state"
    state.mkdir()
    make_unwritable(monkeypatch, state, "full")
    device = build_device(parse_config(MOCK_TEXT, "mock.toml"), state, panels=dummy_panels())
    try:
        device.service.present_all([])
        engine = device.session.engine
        for side in Side:
            shown = device.panels[side].device.image.convert("1")
            expected = render(panel_view(engine.match, side, engine.now, JOURNAL_ALERT))
            assert shown.tobytes() == expected.convert("1").tobytes()   # not a cut file path
    finally:
        device.close()

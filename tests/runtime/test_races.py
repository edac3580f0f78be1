"""Races a starved CPU brings out (issue 20): the clock's loop, and the device's stop on another
thread. `benchmarks/bench_hall.py` (200 real clocks on a saturated 2-core machine) once saw a
loop die of `IndexError: pop from empty list` in `Session._write_backlog`, a stop fail with
`ValueError: time went backwards` in `ClockService.drain`, and the hall hold events that were not
in the table's journal. Each had one cause: a stop that gave up waiting for the loop (it was still
draining) and then stepped, journaled and closed the match beside it.

Here each interleaving is forced, not hoped for: the loop is held inside a journal append (a
hook on the writer) until the stopping thread has either done its work or is waiting for the
loop's turn (a spy on the service's lock), then let go."""

from __future__ import annotations

import logging
import os
import signal
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import pytest
from paho.mqtt.enums import MQTTErrorCode

from device_helpers import MOCK_TEXT
from gammonclock.cli import main as cli
from gammonclock.config.loading import parse_config, parse_device_config
from gammonclock.core.arbiter import Pause, Resume
from gammonclock.core.engine import ButtonEdge, Engine
from gammonclock.core.match import ArbiterAction
from gammonclock.device.build import Device, build_device
from gammonclock.journal.files import journal_header
from gammonclock.journal.key import load_or_create_key
from gammonclock.journal.reader import read_journal
from gammonclock.journal.records import JournalError
from gammonclock.journal.verify import verify
from gammonclock.journal.writer import JournalWriter
from gammonclock.link.client import HallLink
from gammonclock.link.outbox import JournalTail, journals_in_order
from gammonclock.runtime.service import ClockService
from gammonclock.runtime.session import Session, system_stamps
from gammonclock.sides import Button
from mqtt_helpers import free_port
from pin_helpers import FakeClock  # the tests' one monotonic clock (ns = 1000 s)

S = 1_000_000_000
MS = 1_000_000
WAIT_S = 10.0                 # a bound on every wait: a test that would hang fails instead
INJECTED = "the card refuses the write (once)"
CLOSER = "closer"             # the thread that stops the device, as `Clock.close` in the bench


class TurnSpy:
    """Stands for the service's lock: says when the stopping thread asks for the loop's turn
    (before it waits for it). Code that has no such lock never calls it."""

    def __init__(self, inner: Any, asked: threading.Event) -> None:
        self.inner, self.asked = inner, asked

    def acquire(self, blocking: bool = True, timeout: float = -1) -> bool:
        if threading.current_thread().name == CLOSER:
            self.asked.set()
        return bool(self.inner.acquire(blocking, timeout))

    def release(self) -> None:
        self.inner.release()

    def __enter__(self) -> bool:
        return self.acquire()

    def __exit__(self, *_: object) -> None:
        self.release()


@dataclass
class Rig:
    """A mock device whose loop runs on its own thread, on a fake clock."""

    device: Device
    clock: FakeClock
    loop: threading.Thread
    loop_errors: list[BaseException] = field(default_factory=list)
    # The stopping thread moved: it finished, or it waits for the loop's turn.
    closer_moved: threading.Event = field(default_factory=threading.Event)
    closer_errors: list[BaseException] = field(default_factory=list)

    @property
    def service(self) -> Any:
        return self.device.service

    @property
    def origin(self) -> int:
        return int(self.device.service.origin)

    def at(self, t: int) -> None:
        """The host clock to engine instant `t`."""
        self.clock.ns = self.origin + t

    def submit(self, event: Any) -> None:
        """An input stamped in engine time, handed over as a callback does."""
        assert self.service.submit(replace(event, t=self.origin + event.t))

    def applied(self, t: int) -> None:
        """Wait (bounded) until every input handed over is applied and journaled (or waits
        in the backlog) and the engine is at `t`."""
        session = self.device.session
        self.until(lambda: self.service.waiting() == 0 and session.engine.now >= t
                   and (session.journal.last_t >= t or session.failed_at == t),
                   "the loop did not apply the inputs")

    @staticmethod
    def until(condition: Callable[[], bool], what: str) -> None:
        done = threading.Event()
        for _ in range(int(WAIT_S / 0.01)):
            if condition():
                done.set()
                break
            done.wait(0.01)
        assert done.is_set(), what

    def close_on_another_thread(self) -> threading.Thread:
        """`Device.close` as the bench's `Clock.close` reaches it: on another thread, the loop
        perhaps still running."""
        def close() -> None:
            try:
                self.device.service.stop()      # the bench's join of the loop gave up here
                self.device.close()
            except BaseException as exc:   # noqa: BLE001 - the test reports it
                self.closer_errors.append(exc)
            finally:
                self.closer_moved.set()
        closer = threading.Thread(target=close, name=CLOSER, daemon=True)
        closer.start()
        return closer

    def finish(self, closer: threading.Thread) -> None:
        closer.join(WAIT_S)
        assert not closer.is_alive(), "the stop hangs"
        self.loop.join(WAIT_S)
        assert not self.loop.is_alive(), "the loop never ended"


@pytest.fixture
def rig(tmp_path: Path) -> Iterator[Rig]:
    clock = FakeClock()
    device = build_device(parse_config(MOCK_TEXT, "mock.toml"), tmp_path / "state",
                          clock_ns=clock)
    errors: list[BaseException] = []

    def run() -> None:
        try:
            device.service.run()
        except BaseException as exc:   # noqa: BLE001 - a loop that dies is what is tested
            errors.append(exc)
    loop = threading.Thread(target=run, name="loop", daemon=True)
    made = Rig(device, clock, loop, errors)
    device.service._turn = TurnSpy(device.service.__dict__.get("_turn", threading.RLock()),
                                   made.closer_moved)
    loop.start()
    yield made
    if loop.is_alive() or not made.closer_moved.is_set():
        device.service.stop()
        loop.join(WAIT_S)
        device.close()
    for panel in device.panels:
        panel.close()


def hook_appends(writer: JournalWriter, hook: Callable[[int, Callable[[], Any]], Any]) -> None:
    """Every append on the loop's thread goes through `hook(n, append)`: n counts them from 1,
    and `append()` does the real one."""
    real = writer.append
    count = iter(range(1, 1 << 30))

    def append(*args: Any) -> Any:
        if threading.current_thread().name != "loop":
            return real(*args)
        return hook(next(count), lambda: real(*args))
    writer.append = append  # type: ignore[method-assign]


def whole_journal(path: Path) -> None:
    """The journal verifies, and its seqs follow one another with no repeat."""
    read = read_journal(path)
    assert read.problems() == []
    seqs = [r.seq for r in read.records]
    assert seqs == list(range(len(seqs)))
    assert verify(path, None).intact


def edges_in(path: Path) -> list[tuple[str, bool]]:
    return [(r.data["input"]["button"], r.data["input"]["pressed"])
            for r in read_journal(path).records
            if r.kind == "input" and r.data["input"]["type"] == "edge"]


def quiet_stop(caplog: pytest.LogCaptureFixture, rig: Rig) -> None:
    """Nothing failed on either thread, and nothing was logged as a failure."""
    assert rig.loop_errors == []
    assert rig.closer_errors == []
    failures = [r for r in caplog.records if r.levelno >= logging.ERROR
                and INJECTED not in r.getMessage()]
    assert failures == [], [r.getMessage() for r in failures]


# --- (a) the loop died: IndexError in Session._write_backlog -------------------------------------

def test_a_stop_while_the_loop_writes_records_that_waited_never_kills_the_loop(rig, caplog):
    """A clock runs; the card failed at a checkpoint, so its record waits in the session's
    backlog. At the next checkpoint the loop (`advance` -> `_write`) writes it and, before it
    takes it off the backlog, the device stops on another thread. The stop must wait for the
    loop's turn: writing the same backlog beside it wrote the record twice and left the loop to
    pop an empty list (the bench's `IndexError: pop from empty list`)."""
    session = rig.device.session
    session.sync_checkpoints = 1        # each checkpoint synced alone (appended), as it was
    journal = session.journal
    assert isinstance(journal, JournalWriter)
    rig.at(2 * S)
    rig.submit(ButtonEdge(1 * S, Button.LEFT, True))             # game 1: right runs
    rig.submit(ButtonEdge(1 * S + 100 * MS, Button.LEFT, False))
    rig.applied(1 * S + 100 * MS)
    first_checkpoint = session.next_wakeup()
    assert first_checkpoint is not None
    written = threading.Event()

    def hook(n: int, append: Callable[[], Any]) -> Any:
        if n == 1:                      # the checkpoint: the card refuses it
            raise JournalError(INJECTED)
        if n == 2:                      # the record that waited: on disk, not yet off the list
            record = append()
            written.set()
            assert rig.closer_moved.wait(WAIT_S)
            return record
        return append()
    hook_appends(journal, hook)

    rig.at(first_checkpoint + S)
    rig.service.call_at(rig.clock(), lambda _engine: None)       # wakes the loop: it is due
    rig.applied(first_checkpoint)
    assert [kind for kind, *_ in session.backlog] == ["tick"]   # it waits for the card
    second_checkpoint = session.next_wakeup()
    assert second_checkpoint is not None and second_checkpoint > first_checkpoint
    rig.at(second_checkpoint + S)
    rig.service.call_at(rig.clock(), lambda _engine: None)
    assert written.wait(WAIT_S)
    rig.finish(rig.close_on_another_thread())

    quiet_stop(caplog, rig)
    whole_journal(journal.path)
    ticks = [r.t for r in read_journal(journal.path).records if r.kind == "tick"]
    assert ticks == [first_checkpoint, second_checkpoint, rig.clock() - rig.origin]  # each once
    assert session.backlog == []


# --- (b) the stop failed: ValueError "time went backwards" in ClockService.drain ---------------

def test_a_stop_while_the_loop_journals_a_resume_never_steps_the_match_back(rig, caplog):
    """A paused match (no checkpoints: nothing runs) is resumed long after its last record;
    the loop has moved the engine to the resume and waits on the card for its record when the
    device stops on another thread. A drain beside it saw the checkpoint due from the last
    record on disk (before the resume) and advanced the engine back to it."""
    session = rig.device.session
    journal = session.journal
    assert isinstance(journal, JournalWriter)
    rig.at(2 * S)
    rig.submit(ButtonEdge(1 * S, Button.LEFT, True))             # game 1: right runs
    rig.submit(ButtonEdge(1 * S + 100 * MS, Button.LEFT, False))
    rig.submit(ArbiterAction(1 * S + 500 * MS, Pause()))
    rig.applied(1 * S + 500 * MS)
    assert session.engine.match.running_side is None
    assert session.next_wakeup() is None        # paused: no checkpoint is due
    held = threading.Event()

    def hook(n: int, append: Callable[[], Any]) -> Any:
        if n == 1:                              # the resume: the engine is at it, the disk not
            held.set()
            assert rig.closer_moved.wait(WAIT_S)
        return append()
    hook_appends(journal, hook)

    rig.at(60 * S)
    rig.submit(ArbiterAction(59 * S, Resume()))
    assert held.wait(WAIT_S)
    rig.finish(rig.close_on_another_thread())

    quiet_stop(caplog, rig)
    whole_journal(journal.path)
    records = read_journal(journal.path).records
    instants = [r.t for r in records]
    assert instants == sorted(instants)                  # the journal's time never goes back
    assert records[-2].data["input"] == {"type": "arbiter", "command": "resume"}
    assert (records[-1].kind, records[-1].t) == ("tick", 60 * S)


# --- (c) the hall held events that were not in the journal -------------------------------------

def test_a_stop_while_the_loop_appends_leaves_one_journal_the_hall_reads_as_written(
        rig, tmp_path, caplog):
    """The loop has sealed a record (its seq and chain fixed) and not yet written it when the
    device stops on another thread. A stop beside it journaled its own record under the same seq
    before the loop's was written: the journal broke in the middle, the clock built again on the
    folder went on in a `.continued` copy, and what the hall had read from the original was
    in no journal the clock plays. The hall reads the journal file (`JournalTail`): whatever it
    reads must be the journal's own event records, in order."""
    session = rig.device.session
    journal = session.journal
    assert isinstance(journal, JournalWriter)
    rig.at(2 * S)
    rig.submit(ButtonEdge(1 * S, Button.LEFT, True))
    rig.applied(1 * S)
    real_write, real_close = journal._write, journal.close
    loop_holds, loop_wrote = threading.Event(), threading.Event()

    def write(line: bytes) -> None:
        """The loop's line waits until the stop has moved (written its own line, or asked for
        the loop's turn); the stop's line is written at once."""
        name = threading.current_thread().name
        if name == "loop" and not loop_wrote.is_set():
            loop_holds.set()
            assert rig.closer_moved.wait(WAIT_S)
            try:
                real_write(line)
            finally:
                loop_wrote.set()
            return
        real_write(line)
        if name == CLOSER:
            rig.closer_moved.set()

    def close() -> None:
        """The stop closes the journal once the loop's line is out (on a closed file it would
        fail, and show nothing)."""
        assert loop_wrote.wait(WAIT_S)
        real_close()
    journal._write = write  # type: ignore[method-assign]
    journal.close = close  # type: ignore[method-assign]

    rig.submit(ButtonEdge(1 * S + 100 * MS, Button.LEFT, False))   # game 1 starts
    assert loop_holds.wait(WAIT_S)
    rig.finish(rig.close_on_another_thread())

    state = tmp_path / "state"
    again = build_device(parse_config(MOCK_TEXT, "mock.toml"), state, clock_ns=rig.clock)
    try:
        assert again.session is not None and again.session.journal is not None
        assert again.session.journal.path == journal.path      # no `.continued` copy
    finally:
        again.close()
        for panel in again.panels:
            panel.close()
    assert journals_in_order(state) == [journal.path]
    events = JournalTail(journal.path, 0).read(1 << 20)
    assert [(e.journal, e.seq) for e in events] == [
        (journal.path.name, r.seq) for r in read_journal(journal.path).records
        if r.kind in ("input", "tick") and r.data.get("effects")]
    whole_journal(journal.path)
    quiet_stop(caplog, rig)


# --- a loop that meets a bug never dies silently ------------------------------------------------

@dataclass
class Panels:
    """A presenter that keeps what the panels were given."""

    messages: list[Any] = field(default_factory=list)
    presented: int = 0

    def present(self, engine: Any, t: int, effects: list[Any]) -> int | None:
        self.presented += 1
        return None

    def show_message(self, view: Any, t: int) -> None:
        self.messages.append(view)

    def close(self) -> None:
        pass


def test_an_unexpected_error_in_a_step_is_logged_shown_journaled_and_stops_the_loop(
        tmp_path, caplog):
    """A bug in a step (here: the second press raises) neither kills the loop's thread silently
    nor lets it go on with a match its journal may not hold: the loop logs it with its
    traceback, shows it on the panels, journals the match's instant, closes the journal and
    raises LoopFailed (`gammonclock run` exits non-zero: systemd starts it again, and the match
    resumes from its journal)."""
    config = parse_config(MOCK_TEXT, "mock.toml")
    path = tmp_path / "match.jsonl"
    writer = JournalWriter.create(path, load_or_create_key(tmp_path / "state"),
                                  journal_header(MOCK_TEXT, "mock.toml"), 0, system_stamps()())
    session = Session(Engine.start(config.rules, at=0), writer)
    clock = FakeClock()
    panels = Panels()
    service = ClockService(session, [panels], origin=clock.ns, clock_ns=clock)
    service.fault_view = lambda text: ("fault screen", text)
    feed = session.feed
    fed = iter(range(1, 100))

    def buggy_feed(event: Any) -> Any:
        if next(fed) == 2:
            raise KeyError("a bug in the engine")
        return feed(event)
    session.feed = buggy_feed  # type: ignore[method-assign]
    errors: list[BaseException] = []

    def run() -> None:
        try:
            service.run()
        except BaseException as exc:   # noqa: BLE001 - what the thread ends with
            errors.append(exc)
    loop = threading.Thread(target=run, name="loop", daemon=True)
    loop.start()
    clock.ns += 2 * S
    service.submit(ButtonEdge(clock.ns - S, Button.LEFT, True))
    service.submit(ButtonEdge(clock.ns - S + 100 * MS, Button.LEFT, False))
    loop.join(WAIT_S)
    assert not loop.is_alive()

    assert [type(e).__name__ for e in errors] == ["LoopFailed"]     # not the bare KeyError
    assert service.failure is errors[0]
    assert "KeyError" in str(errors[0]) and "resumes paused" in str(errors[0])
    logged = [r for r in caplog.records if r.levelno == logging.CRITICAL]
    assert len(logged) == 1 and logged[0].exc_info is not None
    assert logged[0].exc_info[0] is KeyError                  # the traceback of the bug
    assert panels.messages and panels.messages[-1][0] == "fault screen"
    assert "a bug in the engine" in panels.messages[-1][1]
    records = read_journal(path).records
    assert [r.kind for r in records[1:]] == ["input", "tick"]   # the press, then the instant
    assert records[-1].t == clock.ns - service.origin
    assert writer.fd == -1                                  # closed: the restart reopens it
    assert service.step() is None                           # and nothing steps the match again


def test_gammonclock_run_exits_non_zero_when_its_loop_fails(tmp_path, monkeypatch, caplog):
    """`gammonclock run` (systemd's `Restart=always`): a loop that fails ends the process with
    status 70 (EX_SOFTWARE), once the journal holds the match's instant, so that systemd starts
    it again; the recovered match is the one the journal holds."""
    def failing_step(self: ClockService) -> int | None:
        raise RuntimeError("an injected bug in a step")
    monkeypatch.setattr(ClockService, "_step", failing_step, raising=False)
    monkeypatch.setattr(ClockService, "step", failing_step)
    config = tmp_path / "mock.toml"
    config.write_text(MOCK_TEXT, encoding="utf-8")
    state = tmp_path / "state"
    handlers = {sig: signal.getsignal(sig) for sig in (signal.SIGTERM, signal.SIGINT)}
    try:
        status = cli.main(["run", "--config", str(config), "--state-dir", str(state)])
    finally:
        for sig, handler in handlers.items():
            signal.signal(sig, handler)
    assert status == 70
    assert any(r.levelno == logging.CRITICAL and "an injected bug" in r.getMessage()
               for r in caplog.records)
    assert not [r.getMessage() for r in caplog.records       # the panels took the fault screen
                if r.levelno == logging.ERROR and "failure" in r.getMessage()]
    (journal,) = journals_in_order(state)
    whole_journal(journal)
    assert read_journal(journal).last.kind == "tick"          # the instant, journaled


# --- the hall reads only what the card holds ------------------------------------------------------

def test_a_line_written_and_not_yet_synced_never_reaches_the_hall(tmp_path, caplog):
    """The hall's link publishes events read from the journal file. A record is in the file
    as soon as it is written, before its sync returns; a sync that fails cuts it back out (a
    dying card), a power cut may lose it. The link must read only records the writer has
    counted as on the card: here the publisher reads the file between the write and a failed
    sync (the card then stays dead), and the hall must hold nothing the journal does not."""
    match_file = tmp_path / "match.toml"
    match_file.write_text('[match]\nlength = 5\n[players]\nleft = "Anna"\nright = "Boris"\n',
                          encoding="utf-8")
    text = (f'[hardware]\npin_factory = "mock"\n[table]\nid = "table-1"\n'
            f'match_file = "{match_file}"\n'
            f'[hall]\nbroker = "mqtt://127.0.0.1:{free_port()}"\n')   # no broker: never sent
    clock = FakeClock()
    device = build_device(parse_device_config(text, str(tmp_path / "device.toml")),
                          tmp_path / "state", clock_ns=clock)
    link = device.hall.link                  # the link the clock runs now (its slot's)
    assert isinstance(link, HallLink)
    published: list[tuple[str, int]] = []

    def publish_json(topic: str, payload: dict[str, Any], retain: bool = False) -> Any:
        if topic == "events":
            published.append((payload["journal"], payload["seq"]))
        return type("Info", (), {"rc": MQTTErrorCode.MQTT_ERR_SUCCESS, "mid": len(published),
                                 "is_published": lambda self: False})()
    link.connection.publish_json = publish_json  # type: ignore[method-assign]
    session = device.session
    assert session is not None
    writer = session.journal
    assert isinstance(writer, JournalWriter)
    origin = device.service.origin
    dead = threading.Event()

    def dying_card(line: bytes) -> None:
        if dead.is_set():
            raise JournalError(f"{writer.path}: cannot append record {writer.next_seq}: "
                               f"Input/output error")
        if b'"effects":[]' in line:
            os.write(writer.fd, line)
            return
        size = os.lseek(writer.fd, 0, os.SEEK_END)
        os.write(writer.fd, line)           # in the file ...
        link.publisher.publish_events()     # ... the publisher reads it ...
        os.ftruncate(writer.fd, size)       # ... and the sync fails: cut back, as the writer does
        dead.set()
        raise JournalError(f"{writer.path}: cannot append record {writer.next_seq}: "
                           f"Input/output error")

    clock.ns = origin + 2 * S
    device.service.submit(ButtonEdge(origin + 1 * S, Button.LEFT, True))       # game 1
    device.service.submit(ButtonEdge(origin + 1 * S + 100 * MS, Button.LEFT, False))
    device.service.step()
    link.publisher.publish_events()
    before = list(published)
    assert before                                   # the game's start reached the hall
    writer._write = dying_card  # type: ignore[method-assign]
    clock.ns = origin + 4 * S
    device.service.submit(ButtonEdge(origin + 3 * S, Button.RIGHT, True))      # right's turn
    device.service.submit(ButtonEdge(origin + 3 * S + 100 * MS, Button.RIGHT, False))
    device.service.step()
    assert dead.is_set() and session.backlog         # the turn is in memory, not on the card
    device.close()
    for panel in device.panels:
        panel.close()

    journal = writer.path
    on_card = [(journal.name, r.seq) for r in read_journal(journal).records
               if r.kind in ("input", "tick") and r.data.get("effects")]
    assert published == on_card                      # a prefix of the journal: all of it here


def test_a_closed_link_publishes_nothing_even_when_its_publisher_outlives_the_close(tmp_path):
    """A starved CPU: the publisher is still reading the journal when the device closes its
    link (`close` waits for it a bounded while, then goes on: a clock built again on the folder
    may start its own link). When it wakes it must publish nothing more and keep no position:
    the link that runs now is the other one."""
    text = (f'[hardware]\npin_factory = "mock"\n[table]\nid = "table-1"\n'
            f'[hall]\nbroker = "mqtt://127.0.0.1:{free_port()}"\n')     # no broker
    (tmp_path / "match.toml").write_text('[match]\nlength = 5\n', encoding="utf-8")
    text = text.replace('id = "table-1"\n',
                        f'id = "table-1"\nmatch_file = "{tmp_path / "match.toml"}"\n')
    clock = FakeClock()
    device = build_device(parse_device_config(text, str(tmp_path / "device.toml")),
                          tmp_path / "state", clock_ns=clock)
    link = device.hall.link                  # the link the clock runs now (its slot's)
    assert isinstance(link, HallLink)
    origin = device.service.origin
    clock.ns = origin + 2 * S
    device.service.submit(ButtonEdge(origin + 1 * S, Button.LEFT, True))       # game 1
    device.service.submit(ButtonEdge(origin + 1 * S + 100 * MS, Button.LEFT, False))
    device.service.step()
    published: list[int] = []
    after_close: list[str] = []
    closed, reading = threading.Event(), threading.Event()

    def publish_json(topic: str, payload: dict[str, Any], retain: bool = False) -> Any:
        if closed.is_set():
            after_close.append(topic)
        published.append(1)
        return type("Info", (), {"rc": MQTTErrorCode.MQTT_ERR_SUCCESS, "mid": len(published),
                                 "is_published": lambda self: False})()
    link.connection.publish_json = publish_json  # type: ignore[method-assign]
    real_read = JournalTail.read

    def read(tail: JournalTail, *args: Any) -> Any:
        if threading.current_thread().name == "hall-publisher":
            reading.set()
            assert closed.wait(WAIT_S)         # the close has given up waiting for it
        return real_read(tail, *args)
    JournalTail.read = read  # type: ignore[method-assign]
    try:
        link._connected.set()                  # as if connected: the publisher reads events
        link.signal.wake.set()
        assert reading.wait(WAIT_S)
        memory = tmp_path / "state" / "hall-acked.json"
        link.close()
        kept = memory.read_bytes() if memory.exists() else None
        closed.set()
        publisher = next(t for t in link._threads if t.name == "hall-publisher")
        publisher.join(WAIT_S)
        assert not publisher.is_alive()
    finally:
        JournalTail.read = real_read  # type: ignore[method-assign]
        device.close()
        for panel in device.panels:
            panel.close()
    assert after_close == []
    assert (memory.read_bytes() if memory.exists() else None) == kept


@pytest.mark.parametrize("language, title", [("en", "CLOCK FAILED"), ("ru", "СБОЙ ЧАСОВ")])
def test_a_failed_loop_is_said_on_the_panels_in_their_language(tmp_path, language, title):
    """The screen a failed loop leaves on both panels is in the panels' language (SPEC §15)."""
    text = MOCK_TEXT + f'\n[display]\nlanguage = "{language}"\n'
    device = build_device(parse_config(text, "mock.toml"), tmp_path / "state")
    try:
        assert device.service.fault_view is not None
        view = device.service.fault_view("KeyError: a bug")
        assert view.title == title and "KeyError: a bug" in view.lines[0][0]
    finally:
        device.close()


def test_the_simulator_closes_its_screen_and_raises_when_the_clock_loop_fails(tmp_path,
                                                                               monkeypatch):
    """The interactive simulator runs the loop on a thread: a failed loop closes the screen
    (instead of a live screen over a dead clock) and `simulate` exits as `run` does."""
    from gammonclock.runtime.service import LoopFailed
    from gammonclock.sim import ui as simulator_ui
    device = build_device(parse_config(MOCK_TEXT, "mock.toml"), tmp_path / "state")
    failure = LoopFailed("the clock's loop failed: KeyError: a bug")

    def failing_run() -> None:
        device.service.failure = failure
        raise failure
    monkeypatch.setattr(device.service, "run", failing_run)
    screen_closed = threading.Event()

    def screen(_device: Any, stop: threading.Event, _socket: Any) -> None:
        if stop.wait(WAIT_S):            # the screen's own loop ends on `stop`
            screen_closed.set()
    monkeypatch.setattr(simulator_ui, "run_terminal", screen)
    with pytest.raises(LoopFailed):
        simulator_ui.run_interactive(device, text=True)
    assert screen_closed.is_set()

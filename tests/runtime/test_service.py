"""The real-time loop (service.py) driven step by step on a fake monotonic clock, with the real
engine and session: inputs in the order of their instants, timers before inputs of the same
instant, late inputs applied where the match stands, the next wake, faulty presenters, a clean stop
of `run()` on its thread, and checkpoints journaled while a clock runs."""

from __future__ import annotations

import itertools
import logging
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from gammonclock.config.loading import parse_config
from gammonclock.core.effects import Effect, FlagFell, GameStarted, Ignored, TurnEnded
from gammonclock.core.engine import ButtonEdge, Engine
from gammonclock.core.match import Phase
from gammonclock.core.rules import MatchRules
from gammonclock.journal.files import journal_header
from gammonclock.journal.key import load_or_create_key
from gammonclock.journal.reader import read_journal
from gammonclock.journal.records import JournalError, Stamp
from gammonclock.journal.replay import replay
from gammonclock.journal.writer import JournalWriter
from gammonclock.runtime.service import GRACE_NS, LATE_NS, TIMER_GRACE_NS, ClockService
from gammonclock.runtime.session import Session
from gammonclock.sides import Button, Pair, Side

S = 1_000_000_000
MS = 1_000_000
ORIGIN = 1_000 * S                      # the host's monotonic clock when the match started
RULES = MatchRules.defaults("backgammon", 7, names=Pair("Anna", "Boris"))

CONFIG = """\
[match]
length = 7
[players]
left = "Anna"
right = "Boris"
[time]
reserve = "20s"
[journal]
checkpoint_s = 1
"""


@dataclass
class FakeClock:
    """The host's monotonic clock, moved by the test."""

    ns: int = ORIGIN

    def __call__(self) -> int:
        return self.ns

    def at(self, engine_ns: int) -> None:
        """Set the clock to engine instant `engine_ns` (host time minus the origin)."""
        self.ns = ORIGIN + engine_ns


@dataclass
class Recorder:
    """A presenter that remembers every call and asks to be called again `again_ns` later."""

    again_ns: int | None = None
    calls: list[tuple[int, list[Effect]]] = field(default_factory=list)
    closed: bool = False
    seen: threading.Event = field(default_factory=threading.Event)

    def present(self, engine: Engine, t: int, effects: list[Effect]) -> int | None:
        self.calls.append((t, list(effects)))
        if effects:
            self.seen.set()
        return None if self.again_ns is None else t + self.again_ns

    def close(self) -> None:
        self.closed = True

    @property
    def effects(self) -> list[Effect]:
        return [e for _, effects in self.calls for e in effects]


class Boom:
    """A presenter whose display is broken: every call raises."""

    def __init__(self) -> None:
        self.calls = 0

    def present(self, engine: Engine, t: int, effects: list[Effect]) -> int | None:
        self.calls += 1
        raise OSError(121, "Remote I/O error")

    def close(self) -> None:
        pass


def fake_stamps():
    counter = itertools.count()
    return lambda: Stamp(10**9 + next(counter) * MS, "test-boot", 1_764_400_000 * S)


def edge(engine_ns: int, button: Button, pressed: bool) -> ButtonEdge:
    """An edge as a callback submits it: stamped in host monotonic time."""
    return ButtonEdge(ORIGIN + engine_ns, button, pressed)


def tap(service: ClockService, engine_ns: int, button: Button) -> None:
    service.submit(edge(engine_ns, button, True))
    service.submit(edge(engine_ns + 100 * MS, button, False))


@dataclass
class Rig:
    service: ClockService
    clock: FakeClock

    @property
    def session(self) -> Session:
        return self.service.session

    @property
    def engine(self) -> Engine:
        return self.service.session.engine

    def step_at(self, engine_ns: int) -> int | None:
        self.clock.at(engine_ns)
        return self.service.step()


def make_rig(presenters: list | None = None, journal: JournalWriter | None = None,
             rules: MatchRules = RULES, checkpoint_ns: int = 5 * S,
             timer_grace_ns: int = GRACE_NS) -> Rig:
    """A service on a fake clock. Timers wait the same grace as inputs unless told (the
    arithmetic of most tests here); the longer timer grace of the device has tests of its own."""
    clock = FakeClock()
    session = Session(Engine.start(rules, at=0), journal, fake_stamps(), checkpoint_ns)
    service = ClockService(session, list(presenters or []), origin=ORIGIN, clock_ns=clock,
                           timer_grace_ns=timer_grace_ns)
    return Rig(service, clock)


@pytest.fixture
def journaled(tmp_path: Path) -> Iterator[tuple[Rig, Path]]:
    """A rig whose session journals into tmp_path (checkpoints every second)."""
    config = parse_config(CONFIG, "test.toml")
    key = load_or_create_key(tmp_path / "state")
    stamps = fake_stamps()
    path = tmp_path / "match.jsonl"
    writer = JournalWriter.create(path, key, journal_header(CONFIG, "test.toml"), 0, stamps())
    rig = make_rig(journal=writer, rules=config.rules, checkpoint_ns=config.device.checkpoint_ns)
    yield rig, path
    rig.session.close()


def records(path: Path, kind: str | None = None) -> list:
    return [r for r in read_journal(path).records if kind is None or r.kind == kind]


# --- order --------------------------------------------------------------------------------------

def test_inputs_submitted_out_of_order_within_the_grace_are_applied_in_instant_order():
    recorder = Recorder()
    rig = make_rig([recorder])
    # The right button went down at 8 ms, the left at 10 ms, but the left's callback ran first.
    rig.service.submit(edge(10 * MS, Button.LEFT, True))
    rig.service.submit(edge(8 * MS, Button.RIGHT, True))

    # Until the grace after the earlier instant has passed, nothing is applied.
    assert rig.step_at(8 * MS + GRACE_NS - 1) == ORIGIN + 8 * MS + GRACE_NS
    assert rig.engine.match.phase is Phase.BETWEEN_GAMES
    # Then the earlier one alone: right's tap starts the game, left's clock runs.
    assert rig.step_at(8 * MS + GRACE_NS) == ORIGIN + 10 * MS + GRACE_NS
    assert rig.engine.match.running_side is Side.LEFT
    rig.step_at(10 * MS + GRACE_NS)

    started = [e for e in recorder.effects if isinstance(e, GameStarted)]
    assert [(e.t, e.starter) for e in started] == [(8 * MS, Side.LEFT)]
    # Left's press at 10 ms then ends left's turn: right runs, from 10 ms.
    switch = [e for e in recorder.effects if isinstance(e, TurnEnded)]
    assert [(e.t, e.side) for e in switch] == [(10 * MS, Side.LEFT)]
    assert rig.engine.match.running_side is Side.RIGHT
    assert rig.engine.match.turn.started_at == 10 * MS


def test_inputs_of_the_same_instant_keep_their_order_of_arrival():
    rig = make_rig()
    rig.service.submit(edge(S, Button.RIGHT, True))     # right's press starts: left runs
    rig.service.submit(edge(S, Button.LEFT, True))      # then left's, the same instant: a switch
    rig.step_at(S + GRACE_NS)
    assert rig.engine.match.running_side is Side.RIGHT


def test_a_flag_due_at_the_instant_of_an_input_fires_first(journaled):
    rig, path = journaled
    tap(rig.service, 0, Button.LEFT)                     # right's clock runs from 0
    rig.step_at(200 * MS)
    flag_at = rig.engine.match.turn.flag_at()
    assert flag_at is not None
    # Right presses at the very instant the flag falls (callback on time, within the grace).
    rig.clock.at(flag_at)
    rig.service.submit(edge(flag_at, Button.RIGHT, True))
    rig.step_at(flag_at + GRACE_NS)

    state = rig.engine.state_json()
    assert (state["phase"], state["end_reason"], state["flag"]) == ("match_over", "flag", "right")
    # The flag is its own step (a tick record) before the press, which the over match ignores.
    last_two = records(path)[-2:]
    assert [r.kind for r in last_two] == ["tick", "input"]
    assert [r.t for r in last_two] == [flag_at, flag_at]
    assert "flag_fell" in [e["kind"] for e in last_two[0].data["effects"]]
    assert [e["kind"] for e in last_two[1].data["effects"]] == ["ignored"]


def test_a_flag_fires_before_an_input_of_the_same_instant_seen_by_the_presenters():
    recorder = Recorder()
    rig = make_rig([recorder])
    tap(rig.service, 0, Button.LEFT)
    rig.step_at(200 * MS)
    flag_at = rig.engine.match.turn.flag_at()
    rig.service.submit(edge(flag_at, Button.RIGHT, True))
    rig.step_at(flag_at + GRACE_NS)
    # Two presentations at the flag's instant: the flag alone, then the ignored press.
    at_flag = [effects for t, effects in recorder.calls if t == flag_at and effects]
    assert not any(isinstance(e, Ignored) for e in at_flag[0])
    assert any(isinstance(e, FlagFell) for e in at_flag[0])
    assert [type(e) for e in at_flag[1]] == [Ignored]


# --- late inputs --------------------------------------------------------------------------------

def test_an_input_stamped_before_the_engines_last_instant_is_applied_at_that_instant(caplog):
    recorder = Recorder()
    rig = make_rig([recorder])
    rig.service.submit(edge(200 * MS, Button.LEFT, True))     # game 1: right's clock runs
    rig.step_at(300 * MS)
    assert rig.engine.now == 200 * MS
    # A source whose callback ran long after its edge: stamped 150 ms before the engine's instant.
    rig.service.submit(edge(50 * MS, Button.RIGHT, True))
    with caplog.at_level(logging.WARNING, logger="gammonclock.service"):
        rig.step_at(400 * MS)                                   # no exception

    ended = [e for e in recorder.effects if isinstance(e, TurnEnded)]
    assert [(e.t, e.side) for e in ended] == [(200 * MS, Side.RIGHT)]   # at the engine's instant
    assert rig.engine.match.running_side is Side.LEFT
    assert rig.engine.match.turn.started_at == 200 * MS
    assert any("late" in r.getMessage() for r in caplog.records)


def test_an_input_a_little_late_is_applied_without_a_warning(caplog):
    rig = make_rig()
    rig.service.submit(edge(200 * MS, Button.LEFT, True))
    rig.step_at(300 * MS)
    rig.service.submit(edge(200 * MS - LATE_NS, Button.RIGHT, True))
    with caplog.at_level(logging.WARNING, logger="gammonclock.service"):
        rig.step_at(400 * MS)
    assert rig.engine.match.turn.started_at == 200 * MS
    assert not caplog.records


# --- the next wake ------------------------------------------------------------------------------

def test_step_returns_none_when_nothing_is_due():
    rig = make_rig()
    assert rig.step_at(0) is None
    assert rig.step_at(3600 * S) is None
    rig.service.submit(edge(S, Button.CUBE, True))           # between games: the info page
    rig.service.submit(edge(S + 100 * MS, Button.CUBE, False))
    rig.step_at(2 * S)
    assert rig.step_at(2 * S) is None                          # no clock runs, no press is held


def test_step_returns_the_grace_after_a_pending_input():
    rig = make_rig()
    rig.clock.at(S)
    rig.service.submit(edge(S, Button.LEFT, True))
    assert rig.service.step() == ORIGIN + S + GRACE_NS
    assert rig.engine.match.phase is Phase.BETWEEN_GAMES      # not yet applied


def test_step_returns_the_grace_after_the_next_timer():
    rig = make_rig()
    rig.service.submit(edge(S, Button.LEFT, True))            # held: a hold is due at 1 s + 2 s
    assert rig.step_at(S + GRACE_NS) == ORIGIN + S + RULES.hold_ns + GRACE_NS
    rig.service.submit(edge(S + 100 * MS, Button.LEFT, False))
    rig.step_at(S + 100 * MS + GRACE_NS)
    flag_at = rig.engine.match.turn.flag_at()                 # no press held: the flag is next
    assert flag_at == S + RULES.reserve_ns + RULES.time.delay_ns
    assert rig.service.step() == ORIGIN + flag_at + GRACE_NS


def test_step_returns_a_presenters_redraw_instant_and_calls_it_then():
    recorder = Recorder(again_ns=250 * MS)
    rig = make_rig([recorder])
    rig.service.present_all([])                                # what run() does first
    assert recorder.calls == [(0, [])]
    assert rig.step_at(0) == ORIGIN + 250 * MS                 # no grace on a redraw
    assert rig.step_at(249 * MS) == ORIGIN + 250 * MS
    assert len(recorder.calls) == 1
    assert rig.step_at(250 * MS) == ORIGIN + 500 * MS
    assert recorder.calls[-1] == (250 * MS, [])


def test_step_returns_the_earliest_of_timer_input_and_redraw():
    recorder = Recorder(again_ns=10 * S)
    rig = make_rig([recorder])
    rig.service.submit(edge(S, Button.LEFT, True))
    rig.step_at(S + GRACE_NS)                                  # a hold due at 3 s
    assert rig.step_at(S + GRACE_NS) == ORIGIN + 3 * S + GRACE_NS   # before the redraw at 11 s
    rig.clock.at(2 * S)
    rig.service.submit(edge(2 * S, Button.LEFT, False))       # released before the hold
    assert rig.service.step() == ORIGIN + 2 * S + GRACE_NS


# --- faults -------------------------------------------------------------------------------------

def test_a_presenter_that_raises_does_not_stop_the_loop(caplog):
    boom, recorder = Boom(), Recorder(again_ns=S)
    rig = make_rig([boom, recorder])
    with caplog.at_level(logging.ERROR, logger="gammonclock.service"):
        rig.service.present_all([])
        tap(rig.service, S, Button.LEFT)
        rig.step_at(2 * S)
        tap(rig.service, 5 * S, Button.RIGHT)
        rig.step_at(6 * S)
    assert boom.calls >= 3
    assert rig.engine.match.running_side is Side.LEFT         # both taps were applied
    assert any(isinstance(e, GameStarted) for e in recorder.effects)
    assert any("presenter" in r.getMessage() for r in caplog.records)
    # The broken presenter asks for nothing; the working one's redraws go on (last shown at the
    # press at 5 s, its release drawing nothing; redrawn at 6 s).
    assert rig.step_at(6 * S) == ORIGIN + 7 * S


def test_a_presenter_that_raises_on_a_thread_does_not_stop_run():
    recorder = Recorder()
    session = Session(Engine.start(RULES, at=0))
    origin = time.monotonic_ns()
    service = ClockService(session, [Boom(), recorder], origin=origin)
    worker = threading.Thread(target=service.run, daemon=True)
    worker.start()
    try:
        now = time.monotonic_ns()
        service.submit(ButtonEdge(now, Button.LEFT, True))
        assert recorder.seen.wait(2), "the input was not applied"
        assert worker.is_alive()
    finally:
        service.stop()
        worker.join(2)
    assert not worker.is_alive()
    assert session.engine.match.phase is Phase.RUNNING


# --- run() on its thread ------------------------------------------------------------------------

@pytest.mark.parametrize("clock_runs", [False, True], ids=["idle", "clock-running"])
def test_run_on_a_thread_stops_promptly(clock_runs: bool):
    recorder = Recorder(again_ns=60 * S)       # a long sleep between redraws
    session = Session(Engine.start(RULES, at=0))
    service = ClockService(session, [recorder], origin=time.monotonic_ns())
    worker = threading.Thread(target=service.run, daemon=True)
    worker.start()
    try:
        if clock_runs:
            service.submit(ButtonEdge(time.monotonic_ns(), Button.LEFT, True))
            assert recorder.seen.wait(2)
            assert session.engine.match.running_side is Side.RIGHT
        time.sleep(0.05)                       # let the loop go to sleep on its queue
        stopped = time.monotonic()
        service.stop()
        worker.join(2)
        assert time.monotonic() - stopped < 0.5
    finally:
        service.stop()
        worker.join(2)
    assert not worker.is_alive()
    assert recorder.closed


def test_run_applies_inputs_from_other_threads_at_their_instants():
    recorder = Recorder()
    session = Session(Engine.start(RULES, at=0))
    origin = time.monotonic_ns()
    service = ClockService(session, [recorder], origin=origin)
    worker = threading.Thread(target=service.run, daemon=True)
    worker.start()
    try:
        down = time.monotonic_ns()
        threading.Thread(target=service.submit,
                         args=(ButtonEdge(down, Button.LEFT, True),)).start()
        assert recorder.seen.wait(2)
    finally:
        service.stop()
        worker.join(2)
    assert session.engine.match.turn.started_at == down - origin


# --- checkpoints --------------------------------------------------------------------------------

def test_checkpoints_are_journaled_while_a_clock_runs(journaled):
    rig, path = journaled
    rig.step_at(10 * S)
    assert records(path, "tick") == []                         # no clock runs: nothing to keep
    tap(rig.service, 10 * S, Button.LEFT)                      # right's clock runs from 10 s
    assert rig.step_at(15 * S + 500 * MS) == ORIGIN + 16 * S + 100 * MS + GRACE_NS

    ticks = records(path, "tick")
    assert [r.t for r in ticks] == [s * S + 100 * MS for s in range(11, 16)]
    assert all(r.data["effects"] == [] for r in ticks)
    # The journal holds the match as the service has it.
    assert replay(read_journal(path)).engine.state_json() == rig.engine.state_json()


def test_timers_due_together_are_each_journaled_and_shown_once(journaled):
    """A late wake-up (or a clock run faster than real time) finds several checkpoints and the
    delay's end due at once: each is journaled, the panels are drawn once with all their
    effects; an input among them shows the timers before it first."""
    rig, path = journaled
    recorder = Recorder()
    rig.service.showing.add(recorder)
    tap(rig.service, 10 * S, Button.LEFT)                      # right's clock runs from 10 s
    rig.step_at(10 * S + 500 * MS)
    before = len(recorder.calls)
    tap(rig.service, 13 * S + 300 * MS, Button.RIGHT)          # among the timers: a press
    rig.step_at(15 * S + 800 * MS)

    ticks = records(path, "tick")
    assert [r.t for r in ticks] == [11 * S + 100 * MS, 12 * S + 100 * MS, 13 * S + 100 * MS,
                                    14 * S + 400 * MS, 15 * S + 400 * MS]
    calls = recorder.calls[before:]
    # 11, 12 and 13 s: one picture; the press: one (its release changes nothing); 14 and 15 s:
    # one.
    assert [t for t, _ in calls] == [13 * S + 100 * MS, 13 * S + 300 * MS, 15 * S + 400 * MS]
    shown = [e for _, effects in calls for e in effects]
    journaled_effects = [e for r in records(path) if r.kind in ("tick", "input") and r.t > 10 * S
                         + 500 * MS for e in r.data["effects"]]
    assert len(shown) == len(journaled_effects) and shown       # every effect shown, once


def test_an_input_that_changes_nothing_but_the_instant_draws_nothing():
    """A button let go after a tap changes nothing on the panels: they are not drawn for it (a
    tap was two frames on each panel), and still redraw when they asked to."""
    recorder = Recorder(again_ns=S)                   # a redraw a second after each picture
    rig = make_rig([recorder])
    tap(rig.service, 0, Button.LEFT)                  # right's clock runs from 0
    rig.service.submit(edge(2 * S, Button.RIGHT, True))
    rig.step_at(2 * S + GRACE_NS)
    drawn = len(recorder.calls)
    rig.service.submit(edge(2 * S + 100 * MS, Button.RIGHT, False))
    rig.step_at(2 * S + 100 * MS + GRACE_NS)
    assert rig.engine.match.now == 2 * S + 100 * MS     # applied, not drawn
    assert len(recorder.calls) == drawn
    rig.step_at(3 * S)
    assert recorder.calls[drawn:] == [(3 * S, [])]         # the redraw asked for at 2 s
    rig.service.submit(edge(4 * S, Button.LEFT, True))   # a press that ends a turn is drawn
    rig.step_at(4 * S + GRACE_NS)
    assert len(recorder.calls) == drawn + 2 and recorder.calls[-1][1]


def test_checkpoints_stop_when_no_clock_runs(journaled):
    rig, path = journaled
    tap(rig.service, 0, Button.LEFT)
    rig.service.submit(edge(3 * S, Button.CUBE, True))        # a held cube pauses (at 3 s)
    rig.step_at(5 * S + GRACE_NS)                               # the hold was recognised at 5 s
    rig.service.submit(edge(5 * S + 500 * MS, Button.CUBE, False))
    rig.step_at(6 * S)
    assert rig.engine.match.phase is Phase.PAUSED
    count = len(records(path, "tick"))
    assert rig.step_at(60 * S) is None                          # paused: nothing due
    assert len(records(path, "tick")) == count


def test_run_journals_checkpoints_in_real_time(tmp_path: Path):
    config = parse_config(CONFIG.replace("checkpoint_s = 1", "checkpoint_s = 0.1"), "t.toml")
    key = load_or_create_key(tmp_path / "state")
    stamps = fake_stamps()
    path = tmp_path / "match.jsonl"
    writer = JournalWriter.create(path, key, journal_header(config.text, "t.toml"), 0, stamps())
    session = Session(Engine.start(config.rules, at=0), writer, stamps,
                      config.device.checkpoint_ns)
    service = ClockService(session, [], origin=time.monotonic_ns())
    worker = threading.Thread(target=service.run, daemon=True)
    worker.start()
    try:
        service.submit(ButtonEdge(time.monotonic_ns(), Button.LEFT, True))
        deadline = time.monotonic() + 3
        while len(records(path, "tick")) < 3 and time.monotonic() < deadline:
            time.sleep(0.02)
    finally:
        service.stop()
        worker.join(2)
        session.close()
    ticks = records(path, "tick")
    assert len(ticks) >= 3
    gaps = [b.t - a.t for a, b in itertools.pairwise(ticks)]
    assert all(gap == 100 * MS for gap in gaps)


class DeadJournal:
    """A journal on a card that has failed: every append raises, as JournalWriter's does. After
    `limit` attempts it raises something else, so that a loop retrying forever fails the test
    instead of hanging it."""

    def __init__(self, last_t: int, limit: int = 100) -> None:
        self.last_t = last_t
        self.limit = limit
        self.attempts = 0

    def append(self, kind: str, t: int, data: dict, stamp: Stamp) -> None:
        self.attempts += 1
        if self.attempts > self.limit:
            raise RuntimeError(f"{self.attempts} appends: the loop retries the same write")
        raise JournalError(f"dead.jsonl: cannot append record {self.attempts}: "
                           "Input/output error")

    def close(self) -> None:
        pass


def test_a_failing_journal_does_not_hang_the_loop_while_a_clock_runs():
    journal = DeadJournal(last_t=0)                  # its header was the last record kept
    rig = make_rig(journal=journal)                  # type: ignore[arg-type]
    tap(rig.service, S, Button.LEFT)                 # the match goes on in memory
    rig.step_at(2 * S)
    assert rig.engine.match.running_side is Side.RIGHT
    assert rig.session.journal_error is not None     # the panels say so
    wake = rig.step_at(7 * S)                        # a checkpoint is due: its write fails too
    assert wake is not None and wake > ORIGIN + 7 * S
    rig.service.submit(edge(8 * S, Button.RIGHT, True))
    rig.step_at(9 * S)
    assert rig.engine.match.running_side is Side.LEFT   # the clock still works
    assert journal.attempts < 10


# --- the timer grace: a late callback of a press made before a timer still counts -----------

FLAG_AT = 13 * S      # right's turn from 0 with 1 s reserve + 12 s delay


def right_on_the_clock_with_a_second_left() -> Rig:
    """A rig with the device's timer grace; left has started the game: right's clock runs."""
    rig = make_rig(rules=MatchRules.defaults(reserve_ns=S), timer_grace_ns=TIMER_GRACE_NS)
    rig.clock.at(0)
    rig.service.submit(edge(0, Button.LEFT, True))
    rig.service.submit(edge(100 * MS, Button.LEFT, False))
    rig.step_at(100 * MS + GRACE_NS)
    return rig


def test_a_press_just_before_the_flag_counts_though_its_callback_comes_late():
    # right presses 1 ms before the flag, but the callback reaches the loop 30 ms later
    # (beyond GRACE_NS).
    rig = right_on_the_clock_with_a_second_left()
    for now in (FLAG_AT, FLAG_AT + 10 * MS, FLAG_AT + 29 * MS):
        rig.step_at(now)                             # the loop wakes meanwhile (display, …)
    assert rig.engine.state_json()["phase"] == "running"
    rig.service.submit(edge(FLAG_AT - MS, Button.RIGHT, True))
    rig.step_at(FLAG_AT + 30 * MS)
    rig.step_at(FLAG_AT + TIMER_GRACE_NS)
    state = rig.engine.state_json()
    assert state["phase"] == "running" and state["running"] == "left"
    assert state["flag"] is None


def test_a_timer_waits_its_grace_and_inputs_after_it_wait_for_it():
    rig = right_on_the_clock_with_a_second_left()
    rig.service.submit(edge(FLAG_AT + MS, Button.RIGHT, True))     # after the flag: too late
    assert rig.step_at(FLAG_AT + 10 * MS) == ORIGIN + FLAG_AT + TIMER_GRACE_NS
    assert rig.engine.state_json()["phase"] == "running"          # neither applied yet
    rig.step_at(FLAG_AT + TIMER_GRACE_NS)
    state = rig.engine.state_json()
    assert (state["phase"], state["flag"]) == ("match_over", "right")


class CardThatFails(DeadJournal):
    """A journal whose card fails while `failing`, and works again after."""

    def __init__(self) -> None:
        super().__init__(last_t=0)
        self.failing = False

    def append(self, kind: str, t: int, data: dict, stamp: Stamp) -> None:
        if self.failing:
            super().append(kind, t, data, stamp)


def test_an_input_whose_write_fails_or_recovers_is_drawn_though_it_changes_nothing_else():
    """A release changes nothing on the panels but the journal's alert, when its own write is
    the one that fails, or the one that drains the backlog: both are drawn at once."""
    recorder = Recorder()
    journal = CardThatFails()
    rig = make_rig([recorder], journal=journal)       # type: ignore[arg-type]
    rig.service.submit(edge(S, Button.LEFT, True))
    rig.step_at(S + GRACE_NS)
    drawn = len(recorder.calls)
    journal.failing = True
    rig.service.submit(edge(S + 100 * MS, Button.LEFT, False))
    rig.step_at(S + 100 * MS + GRACE_NS)
    assert rig.session.journal_error is not None
    assert len(recorder.calls) == drawn + 1               # the alert is on the panels now
    rig.service.submit(edge(2 * S, Button.RIGHT, True))    # the turn passes: drawn anyway
    rig.step_at(2 * S + GRACE_NS)
    drawn = len(recorder.calls)
    journal.failing = False
    rig.service.submit(edge(2 * S + 100 * MS, Button.RIGHT, False))
    rig.step_at(2 * S + 100 * MS + GRACE_NS)
    assert rig.session.journal_error is None
    assert recorder.calls[drawn:] == [(2 * S + 100 * MS, [])]   # and gone at once

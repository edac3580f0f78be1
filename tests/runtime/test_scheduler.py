"""One scheduler (issue 8): a scripted run is the service's own loop on a virtual clock; a
bounced button settles in service time (a timer of the loop, exact on a fake clock); `replay`
hands its observers each record with its effects, and tolerates fields added to effects since a
journal was written."""

from __future__ import annotations

import logging
import textwrap
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import gpiozero.pins.mock
import pytest

from device_helpers import MOCK_TEXT
from gammonclock.config.loading import parse_config
from gammonclock.core.effects import Effect, FlagFell, GameStarted, Ignored, TurnStarted
from gammonclock.core.engine import ButtonEdge, Engine, Input
from gammonclock.core.rules import MatchRules
from gammonclock.device.build import SETTLE_MARGIN_NS, Device, build_device
from gammonclock.export.stream import load_stream
from gammonclock.hardware import buttons as buttons_module
from gammonclock.journal.inputs import effects_data, effects_diverge
from gammonclock.journal.reader import JournalRead, read_journal
from gammonclock.journal.records import Record
from gammonclock.journal.replay import ReplayStep, replay
from gammonclock.runtime.service import TIMER_GRACE_NS, ClockService
from gammonclock.runtime.session import Session
from gammonclock.sides import Button, Side
from gammonclock.sim.script import parse_script
from gammonclock.sim.simulate import VirtualClock, run_script

S = 1_000_000_000
MS = 1_000_000
L, R, C = Button.LEFT, Button.RIGHT, Button.CUBE
DATA = Path(__file__).parents[1] / "data" / "before-issue8"


@dataclass
class Recorder:
    """A presenter that remembers its calls and asks to be redrawn `again_ns` later."""

    again_ns: int | None = None
    calls: list[tuple[int, list[Effect]]] = field(default_factory=list)

    def present(self, engine: Engine, t: int, effects: list[Effect]) -> int | None:
        self.calls.append((t, list(effects)))
        return None if self.again_ns is None else t + self.again_ns

    def close(self) -> None:
        pass


class Broken:
    """A panel whose bus fails on every call."""

    def present(self, engine: Engine, t: int, effects: list[Effect]) -> int | None:
        raise OSError(121, "Remote I/O error")

    def close(self) -> None:
        pass


def scripted(text: str, rules: MatchRules) -> tuple[list[Input], int]:
    parsed = parse_script(textwrap.dedent(text), rules.hold_ns)
    return parsed.inputs, parsed.end


# --- a scripted run is the service's loop ----------------------------------------------------

def test_a_presenter_that_fails_in_a_scripted_run_is_logged_and_the_run_goes_on(caplog):
    rules = MatchRules.defaults()
    inputs, end = scripted("""
        1.0 tap left
        5.0 tap right
        10 end
        """, rules)
    recorder = Recorder()
    session = Session(Engine.start(rules, at=0))
    with caplog.at_level(logging.ERROR, logger="gammonclock.service"):
        run_script(session, inputs, end, presenters=[Broken(), recorder])
    assert "failed" in caplog.text                       # as on the device: logged, not raised
    assert session.engine.match.running_side is Side.LEFT
    assert any(isinstance(e, GameStarted) for _, effects in recorder.calls for e in effects)


def test_a_paced_run_waits_for_every_instant_it_acts_or_redraws_at():
    rules = MatchRules.defaults()
    inputs, end = scripted("""
        1.0 tap left
        2.5 tap right
        4 end
        """, rules)
    paced: list[int] = []
    recorder = Recorder(again_ns=300 * MS)
    run_script(Session(Engine.start(rules, at=0)), inputs, end, pace=paced.append,
               presenters=[recorder])
    assert paced == sorted(paced)
    assert {e.t for e in inputs} <= set(paced)
    # Every redraw (a call with no effects, between inputs) waited for its instant too.
    redraws = [t for t, effects in recorder.calls if not effects and t > 0]
    assert 1_300 * MS in redraws              # 300 ms after the tap (its release draws nothing)
    assert set(redraws) <= set(paced)


@pytest.mark.parametrize("same_instant, expected", [
    # (what the script does at the flag's instant, the effects presented there, in order)
    ("press right", [[FlagFell], [Ignored]]),       # the timer first (fine point 4)
    ("release right", [[FlagFell]]),                # a release does nothing, after the flag
])
def test_a_timer_fires_before_an_input_of_its_instant_in_a_scripted_run(same_instant, expected):
    rules = _short_rules()
    engine, _ = Engine.start(rules, at=0).feed(ButtonEdge(0, L, True))
    turn = engine.match.turn
    flag_at = turn.flag_at() if turn is not None else None
    assert flag_at is not None
    inputs = [ButtonEdge(0, L, True), ButtonEdge(100 * MS, L, False),
              ButtonEdge(flag_at, R, same_instant == "press right")]
    recorder = Recorder()
    run_script(Session(Engine.start(rules, at=0)), inputs, flag_at + S, presenters=[recorder])
    at_flag = [effects for t, effects in recorder.calls if t == flag_at and effects]
    assert [[type(e) for e in effects if type(e) in (FlagFell, Ignored)]
            for effects in at_flag] == expected


def _short_rules() -> MatchRules:
    config = parse_config('[match]\nlength = 7\n[time]\nreserve = "20s"\n', "short.toml")
    return config.rules


def test_inputs_of_one_instant_keep_their_order_in_a_scripted_run():
    rules = MatchRules.defaults()
    both = [ButtonEdge(S, R, True), ButtonEdge(S, L, True)]    # right starts, left switches
    session = run_script(Session(Engine.start(rules, at=0)), both, 2 * S)
    assert session.engine.match.running_side is Side.RIGHT
    swapped = run_script(Session(Engine.start(rules, at=0)), both[::-1], 2 * S)
    assert swapped.engine.match.running_side is Side.LEFT


# --- the loop's own timers (call_at) ----------------------------------------------------------

ORIGIN = 1_000 * S


def service_on(clock: VirtualClock, presenters: list[Any] | None = None) -> ClockService:
    session = Session(Engine.start(_short_rules(), at=0))
    return ClockService(session, presenters or [], origin=ORIGIN, clock_ns=clock, grace_ns=0,
                        timer_grace_ns=0)


def test_a_call_runs_after_the_timer_of_its_instant_and_before_its_inputs():
    clock = VirtualClock(ORIGIN)
    order: list[str] = []
    recorder = Recorder()
    service = service_on(clock, [recorder])
    service.submit(ButtonEdge(ORIGIN, L, True))             # a tap: right's clock runs from 0
    service.submit(ButtonEdge(ORIGIN + 100 * MS, L, False))
    clock.move_to(ORIGIN + 200 * MS)
    service.step()
    turn = service.session.engine.match.turn
    flag_at = turn.flag_at() if turn is not None else None
    assert flag_at is not None

    def call(engine: Engine) -> Input | None:
        order.append("flag fallen" if engine.match.end_reason else "flag standing")
        return None

    service.submit(ButtonEdge(ORIGIN + flag_at, R, True))
    service.call_at(ORIGIN + flag_at, call)
    clock.move_to(ORIGIN + flag_at + service.grace_ns)
    service.step()
    assert order == ["flag fallen"]                           # after the match's timer
    last = recorder.calls[-1][1]
    assert [type(e) for e in last] == [Ignored]               # the press came after both


@pytest.mark.parametrize("due_ms, step_ms, runs", [
    (50, 49, False),          # not yet due
    (50, 50, True),           # due (timer grace 0 here)
])
def test_a_call_runs_in_service_time(due_ms, step_ms, runs):
    clock = VirtualClock(ORIGIN)
    seen: list[int] = []
    service = service_on(clock)
    service.call_at(ORIGIN + due_ms * MS, lambda engine: seen.append(engine.now) or None)
    clock.move_to(ORIGIN + step_ms * MS)
    wake = service.step()
    assert bool(seen) is runs
    assert wake == (None if runs else ORIGIN + due_ms * MS)


def test_the_input_a_call_returns_is_applied_at_its_instant():
    clock = VirtualClock(ORIGIN)
    service = service_on(clock)
    service.call_at(ORIGIN + 70 * MS, lambda engine: ButtonEdge(ORIGIN + 70 * MS, L, True))
    clock.move_to(ORIGIN + S)
    service.step()
    turn = service.session.engine.match.turn
    assert turn is not None and (turn.side, turn.started_at) == (Side.RIGHT, 70 * MS)


def test_a_call_that_raises_is_logged_and_the_loop_goes_on(caplog):
    clock = VirtualClock(ORIGIN)
    service = service_on(clock)

    def broken(engine: Engine) -> Input | None:
        raise OSError(5, "pin read failed")

    service.call_at(ORIGIN + 10 * MS, broken)
    service.submit(ButtonEdge(ORIGIN + 20 * MS, L, True))
    clock.move_to(ORIGIN + S)
    with caplog.at_level(logging.ERROR, logger="gammonclock.service"):
        service.step()
    assert "failed" in caplog.text
    assert service.session.engine.match.running_side is Side.RIGHT


# --- the settle after bounce, in service time ---------------------------------------------------

@dataclass
class Pins:
    """A mock device stepped by hand on a fake clock (engine instants)."""

    device: Device
    clock: VirtualClock

    @property
    def engine(self) -> Engine:
        return self.device.session.engine

    def at(self, t: int) -> None:
        at = self.device.service.origin + t
        assert at >= self.clock.ns, "a host clock never goes back"
        self.clock.move_to(at)
        self.device.service.step()

    def edge(self, seconds: float, button: Button, pressed: bool) -> None:
        self.at(round(seconds * S))
        pin = self.device.factory.pin(self.device.config.button_pins[button])
        pin.drive_low() if pressed else pin.drive_high()

    def inputs(self) -> list[Record]:
        journal = self.device.session.journal
        assert journal is not None
        return [r for r in read_journal(journal.path).records if r.kind == "input"]


@pytest.fixture
def pins(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[Pins]:
    clock = VirtualClock(ORIGIN)
    def seconds() -> float:           # gpiozero's time, on the same clock
        return clock.ns / S

    monkeypatch.setattr(gpiozero.pins.mock, "monotonic", seconds)
    started: list[object] = []

    class NoWallTimer:
        """Any wall-clock timer the board starts is recorded and never fires."""

        def __init__(self, *args: object, **kwargs: object) -> None:
            started.append(args)
            self.daemon = True

        def start(self) -> None:
            pass

        def cancel(self) -> None:
            pass

    monkeypatch.setattr(buttons_module.threading, "Timer", NoWallTimer)
    device = build_device(parse_config(MOCK_TEXT, "mock.toml"), tmp_path / "state",
                          clock_ns=clock)
    device.factory.ticks = seconds
    device.service.present_all([])
    yield Pins(device, clock)
    device.close()
    for side in Side:
        device.panels[side].close()
    device.factory.close()
    assert started == [], "the settle must run in service time, not on a wall-clock timer"


SETTLE_NS = 30 * MS + SETTLE_MARGIN_NS        # debounce_ms of the reference config + margin


def test_a_release_lost_in_bounce_is_applied_at_the_settle_instant_in_service_time(pins):
    pins.edge(1.000, L, True)             # a tap: game 1, right's clock runs
    pins.edge(1.010, L, False)            # released inside debounce_ms: the engine ignores it
    due = 1_010 * MS + SETTLE_NS
    pins.at(due + TIMER_GRACE_NS - 1)
    assert pins.engine.button(L).down      # not yet: the settle waits out the timer's grace
    pins.at(due + TIMER_GRACE_NS)
    assert pins.engine.button(L).down is False
    last = pins.inputs()[-1]
    assert (last.t, last.data["input"]) == (due, {"type": "edge", "button": "left",
                                                   "pressed": False})
    pins.at(5 * S)                         # past hold_s: the tap stayed a tap
    assert pins.engine.match.running_side is Side.RIGHT
    assert len(pins.inputs()) == 3


def test_a_new_press_before_the_loop_runs_the_settle_does_not_swallow_the_lost_release(pins):
    pins.edge(1.000, L, True)             # a tap: game 1, right's clock runs
    pins.edge(1.010, L, False)            # released inside debounce_ms: the engine ignores it
    due = 1_010 * MS + SETTLE_NS
    # The same player presses again 40 ms after the settle's instant, before the loop has run
    # the settle (it waits out the timer grace): the pin reads "pressed" again by then.
    again = due + 40 * MS
    pins.edge(again / S, L, True)
    pins.at(due + TIMER_GRACE_NS + 10 * MS)
    edges = [(r.t, r.data["input"]["pressed"]) for r in pins.inputs()]
    assert edges[-2:] == [(due, False), (again, True)]   # the release, then the new press
    assert pins.engine.button(L).down is True
    # The new press is a press of its own: 2 s after the first press's edge it is no hold yet
    # (merged with the first, it would have opened the result entry at 3.000 s).
    pins.at(3_050 * MS)
    assert pins.engine.match.phase.value == "running"
    pins.at(again + 2 * S + TIMER_GRACE_NS)
    assert pins.engine.match.phase.value == "result_entry"


def test_a_settle_the_engine_agrees_with_adds_no_record(pins):
    pins.edge(1.000, L, True)
    pins.edge(1.200, L, False)             # accepted
    pins.edge(1.210, L, True)              # bounce of the release: ignored
    pins.edge(1.215, L, False)             # ... up again: the engine already believes it
    pins.at(3 * S)
    assert len(pins.inputs()) == 4
    assert pins.engine.button(L).down is False


def test_a_later_bounce_moves_the_settle_on(pins):
    pins.edge(1.000, L, True)              # accepted
    pins.edge(1.010, L, False)             # ignored (settle due 1.045 s)
    pins.edge(1.020, L, True)              # a repeat (settle moved to 1.055 s)
    pins.edge(1.028, L, False)             # ignored (settle moved to 1.063 s)
    pins.at(2 * S)
    settled = pins.inputs()[4:]
    assert [(r.t, r.data["input"]["pressed"]) for r in settled] == [(1_028 * MS + SETTLE_NS,
                                                                     False)]


# --- replay hands each record over with its effects ------------------------------------------

def test_replay_hands_each_record_with_its_effects_and_keeps_the_old_observer():
    read = read_journal(DATA / "match11.jsonl")
    steps: list[ReplayStep] = []
    old: list[tuple[int, list[Effect]]] = []
    replay(read, lambda engine, effects: old.append((engine.now, effects)),
           observe_steps=steps.append)
    applied = [r for r in read.records[1:] if r.kind in ("input", "tick")]
    assert [s.record for s in steps] == applied
    for step in steps:
        assert step.engine.now == step.record.t
        assert not effects_diverge(step.effects, step.record.data["effects"])
    assert old == [(s.engine.now, s.effects) for s in steps if s.effects]


def test_the_export_stamps_each_effect_with_the_record_that_holds_it():
    stream = load_stream(DATA / "match11.jsonl")
    assert stream.effects
    for stamped in stream.effects:
        recorded = stamped.record.data["effects"]
        assert any(not effects_diverge([stamped.effect], [then]) for then in recorded)
    total = sum(len(r.data["effects"]) for r in stream.read.records[1:]
                if r.kind in ("input", "tick"))
    assert stream.total == total


def _effect() -> Effect:
    return TurnStarted(5 * S, Side.LEFT, 100 * S, 12 * S)


def _recorded(**changes: Any) -> dict[str, Any]:
    data = effects_data([_effect()])[0]
    for key, value in changes.items():
        if value is None:
            data.pop(key)
        else:
            data[key] = value
    return data


@pytest.mark.parametrize("recorded, diverges", [
    ([_recorded()], False),                         # the same
    ([_recorded(delay=None)], False),               # written before `delay` was added
    ([_recorded(delay=None, reserve=None)], False),
    ([_recorded(reserve=1)], True),                 # a recorded key with another value
    ([_recorded(kind="turn_ended")], True),
    ([_recorded(new_field=1)], True),               # a key this firmware does not compute
    ([], True),                                     # an effect missing
    ([_recorded(), _recorded()], True),             # an effect extra
    (None, True),                                   # no effects recorded at all
    (["turn_started"], True),                       # not an effect
])
def test_a_recorded_effect_is_compared_on_the_keys_it_has(recorded, diverges):
    assert effects_diverge([_effect()], recorded) is diverges


def _without(read: JournalRead, key: str) -> JournalRead:
    """The journal as a firmware that had no `key` in its effects would have written it."""
    def strip(record: Record) -> Record:
        effects = record.data.get("effects")
        if record.kind not in ("input", "tick") or not effects:
            return record
        data = dict(record.data, effects=[{k: v for k, v in e.items() if k != key}
                                          for e in effects])
        return replace(record, data=data)
    return replace(read, records=[strip(r) for r in read.records])


def test_a_journal_written_before_a_field_was_added_replays_without_divergence():
    read = read_journal(DATA / "match11.jsonl")
    assert any("reserve" in e for r in read.records[1:] if r.kind in ("input", "tick")
               for e in r.data["effects"])
    replayed = replay(_without(read, "reserve"))
    assert replayed.diverged == []
    assert replayed.engine.state_json() == replay(read).engine.state_json()


def test_a_recorded_value_that_differs_is_still_a_divergence():
    read = read_journal(DATA / "match11.jsonl")
    index = next(i for i, r in enumerate(read.records)
                 if r.kind == "input" and r.data["effects"])
    record = read.records[index]
    effects = [dict(e) for e in record.data["effects"]]
    effects[0]["t"] = effects[0]["t"] + 1
    records = list(read.records)
    records[index] = replace(record, data=dict(record.data, effects=effects))
    assert replay(replace(read, records=records)).diverged == [f"record {record.seq}"]

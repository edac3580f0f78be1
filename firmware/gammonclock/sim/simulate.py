"""Scripted runs (SPEC §9): a session driven by a script, in virtual time.

A scripted run is the device's own loop (`ClockService`) on a virtual clock, with no grace: the
run moves the clock from instant to instant (the next input's or the next thing the loop has due:
a timer, a checkpoint, a panel's redraw, whichever comes first) and lets the loop do what is due.
So each timer fires in its own step at its exact instant, before an input of the same instant,
and inputs of one instant keep their order (SPEC §3 fine point 4), by the code that orders them
on the device. Without pacing the run goes as fast as the machine allows; with a `Pacer` each
move of the clock first waits for its instant on the wall clock at a chosen speed (so a run can
be watched, or killed at a real instant in the journal's tests).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence

from gammonclock.core.effects import Effect
from gammonclock.core.engine import Engine, Input
from gammonclock.core.rules import MatchRules
from gammonclock.durations import NS_PER_S, format_clock, format_seconds
from gammonclock.journal.replay import Observer
from gammonclock.runtime.presenting import Presenter
from gammonclock.runtime.service import ClockService
from gammonclock.runtime.session import Session
from gammonclock.sides import Side


class Pacer:
    """Waits until virtual instant `t` is due on the wall clock, `speed` times faster than real."""

    def __init__(self, speed: float, clock: Callable[[], float] = time.monotonic,
                 sleep: Callable[[float], None] = time.sleep) -> None:
        self.speed, self.clock, self.sleep = speed, clock, sleep
        self.start = clock()

    def __call__(self, t: int) -> None:
        wait = self.start + t / NS_PER_S / self.speed - self.clock()
        if wait > 0:
            self.sleep(wait)


class VirtualClock:
    """The monotonic clock of a scripted run: it stands at an instant until the run moves it on
    (after `pace`, when given, has waited for the new instant)."""

    def __init__(self, ns: int, pace: Callable[[int], None] | None = None) -> None:
        self.ns, self.pace = ns, pace

    def __call__(self) -> int:
        return self.ns

    def move_to(self, t: int) -> None:
        if self.pace is not None:
            self.pace(t)
        self.ns = max(self.ns, t)


class ScriptedService:
    """A `ClockService` on a `VirtualClock` (engine time, grace 0), stepped by the run."""

    def __init__(self, session: Session, presenters: Sequence[Presenter],
                 pace: Callable[[int], None] | None = None) -> None:
        self.clock = VirtualClock(session.engine.now, pace)
        self.service = ClockService(session, list(presenters), origin=0, clock_ns=self.clock,
                                    grace_ns=0, timer_grace_ns=0)
        self.service.present_all([])
        self.wake = self.service.step()

    def run_until(self, t: int) -> None:
        """Do everything due up to `t`, one step per instant."""
        while self.wake is not None and self.wake <= t:
            self.clock.move_to(self.wake)
            self.wake = self.service.step()

    def feed(self, event: Input) -> None:
        """Everything due up to the input's instant, then the input, at that instant."""
        self.run_until(event.t)
        self.clock.move_to(event.t)
        self.service.submit(event)
        self.wake = self.service.step()


def run_script(session: Session, inputs: Iterable[Input], end: int,
               pace: Callable[[int], None] | None = None,
               presenters: Sequence[Presenter] = ()) -> Session:
    """Feed `inputs` to `session` at their instants and stop at `end`; `presenters` (panels
    recording frames) are shown every step and at every instant they ask to be redrawn."""
    run = ScriptedService(session, presenters, pace)
    for event in inputs:
        run.feed(event)
    run.run_until(end)
    session.checkpoint(end)      # the journal ends at the run's end: its replay is this state
    return session


def simulate(rules: MatchRules, inputs: Iterable[Input], end: int,
             observe: Observer | None = None) -> Engine:
    """Run `inputs` through a fresh engine from instant 0, with no journal, and stop at `end`."""
    session = Session(Engine.start(rules, at=0), observers=[observe] if observe else [])
    return run_script(session, inputs, end).engine


def account_line(engine: Engine, effect: Effect) -> str:
    """One line of the readable account: instant, what happened, both reserves."""
    names = engine.rules.names
    state = engine.match
    clocks = "  ".join(f"{names[s]} {format_clock(state.reserve_at(s))}" for s in Side)
    return f"{format_seconds(effect.t):>12} s  {effect.describe():<70}  {clocks}"

"""Scripted runs (SPEC §9): a session driven by a script, in virtual time.

Each timer (a hold recognised, a flag, a break's end, a journal checkpoint) is fired in its own
step at its exact instant, then each input at its own. Without pacing the run goes as fast as the
machine allows; with a `Pacer` it keeps to the wall clock at a chosen speed (so a run can be
watched, or killed at a real instant in the journal's tests).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable

from .durations import NS_PER_S, format_clock, format_seconds
from .effects import Effect
from .engine import Engine, Input
from .rules import MatchRules
from .session import Observer, Session
from .sides import Side


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


def run_until(session: Session, t: int, pace: Callable[[int], None] | None = None) -> None:
    """Fire every timer due up to `t`, one step per instant."""
    while (due := session.next_wakeup()) is not None and due <= t:
        if pace:
            pace(due)
        session.advance(due)


def run_script(session: Session, inputs: Iterable[Input], end: int,
               pace: Callable[[int], None] | None = None) -> Session:
    """Feed `inputs` to `session` at their instants and stop at `end`."""
    for event in inputs:
        run_until(session, event.t, pace)
        if pace:
            pace(event.t)
        session.feed(event)
    run_until(session, end, pace)
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

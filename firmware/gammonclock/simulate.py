"""Scripted runs (SPEC §9): a session driven by a script, in virtual time.

Each timer (a hold recognised, a flag, a break's end, a journal checkpoint) is fired in its own
step at its exact instant, then each input at its own. Without pacing the run goes as fast as the
machine allows; with a `Pacer` it keeps to the wall clock at a chosen speed (so a run can be
watched, or killed at a real instant in the journal's tests).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence

from .durations import NS_PER_S, format_clock, format_seconds
from .effects import Effect
from .engine import Engine, Input
from .rules import MatchRules
from .service import Presenter
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


class _Driver:
    """Steps a session through virtual time, with presenters redrawn at the instants they ask."""

    def __init__(self, session: Session, presenters: Sequence[Presenter],
                 pace: Callable[[int], None] | None) -> None:
        self.session, self.presenters, self.pace = session, presenters, pace
        self.redraw_at: list[int | None] = [None] * len(presenters)

    def show(self, t: int, effects: list[Effect]) -> None:
        for i, presenter in enumerate(self.presenters):
            self.redraw_at[i] = presenter.present(self.session.engine, t, effects)

    def run_until(self, t: int) -> None:
        """Fire every timer and redraw due up to `t`, one step per instant."""
        while True:
            due = self.session.next_wakeup()
            redraws = [at for at in self.redraw_at if at is not None]
            redraw = min(redraws) if redraws else None
            if redraw is not None and redraw <= t and (due is None or redraw < due):
                self.show(redraw, [])
                continue
            if due is None or due > t:
                return
            if self.pace:
                self.pace(due)
            effects = self.session.advance(due)
            if self.presenters:
                self.show(due, effects)


def run_script(session: Session, inputs: Iterable[Input], end: int,
               pace: Callable[[int], None] | None = None,
               presenters: Sequence[Presenter] = ()) -> Session:
    """Feed `inputs` to `session` at their instants and stop at `end`; `presenters` (panels
    recording frames) are shown every step and at every instant they ask to be redrawn."""
    driver = _Driver(session, presenters, pace)
    driver.show(session.engine.now, [])
    for event in inputs:
        driver.run_until(event.t)
        if pace:
            pace(event.t)
        effects = session.feed(event)
        if presenters:
            driver.show(event.t, effects)
    driver.run_until(end)
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

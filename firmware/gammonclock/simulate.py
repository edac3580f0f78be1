"""Scripted runs in virtual time (SPEC §9): the engine driven by a script, as fast as it goes.

Each timer (a hold recognised, a flag, a break's end) is fired in its own step at its exact
instant, then each input at its own; the observer sees every step's effects with the engine as it
stands after the step.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from .durations import format_clock, format_seconds
from .effects import Effect
from .engine import Engine, Input
from .rules import MatchRules
from .sides import Side

Observer = Callable[[Engine, list[Effect]], None]


def run_until(engine: Engine, t: int, observe: Observer | None = None) -> Engine:
    """Fire every timer due up to `t`, one step per instant, and bring the engine to `t`."""
    while (due := engine.next_deadline()) is not None and due <= t:
        engine, effects = engine.advance(due)
        if observe and effects:
            observe(engine, effects)
    engine, effects = engine.advance(t)
    if observe and effects:
        observe(engine, effects)
    return engine


def simulate(rules: MatchRules, inputs: Iterable[Input], end: int,
             observe: Observer | None = None) -> Engine:
    """Run `inputs` through a fresh engine from instant 0 and stop at `end`."""
    engine = Engine.start(rules, at=0)
    for event in inputs:
        engine = run_until(engine, event.t, observe)
        engine, effects = engine.feed(event)
        if observe and effects:
            observe(engine, effects)
    return run_until(engine, end, observe)


def account_line(engine: Engine, effect: Effect) -> str:
    """One line of the readable account: instant, what happened, both reserves."""
    names = engine.rules.names
    state = engine.match
    clocks = "  ".join(f"{names[s]} {format_clock(state.reserve_at(s))}" for s in Side)
    return f"{format_seconds(effect.t):>12} s  {effect.describe():<70}  {clocks}"

"""Time control (SPEC §2): one turn's clock, in integer nanoseconds.

A turn's reserve is never decremented on a tick: everything is computed from the instant the turn
started, the time it has run (pauses excluded) and its reserve at the start.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from enum import Enum

from gammonclock.sides import Side


class TimeMode(str, Enum):
    DELAY = "delay"            # simple / US delay: the first D of each turn is free
    BRONSTEIN = "bronstein"    # the time used, up to D, is given back at the end of the turn
    FISCHER = "fischer"        # D is added at the end of every turn
    NONE = "none"


class FlagRule(str, Enum):
    MATCH_LOSS = "match_loss"  # IBF: a flag loses the match
    OVERTIME = "overtime"      # the first fall adds overtime, the second loses


@dataclass(frozen=True)
class TimeControl:
    mode: TimeMode
    delay_ns: int
    flag_rule: FlagRule
    overtime_ns: int


@dataclass(frozen=True)
class TurnEnd:
    """What the end of a turn charged. `span` = `delay_used` + `charged`."""

    span: int          # time the turn ran, pauses excluded
    delay_used: int    # simple delay consumed (never charged)
    charged: int       # taken from the reserve
    refund: int        # Bronstein refund or Fischer increment added back
    reserve_after: int


@dataclass(frozen=True)
class Turn:
    """A span in which one side's clock runs.

    `elapsed` is the time run before `since`; `since` is the instant it last started running, or
    None while it is frozen (paused, or interrupted by a result entry).
    """

    side: Side
    started_at: int
    start_reserve: int
    mode: TimeMode
    delay: int
    elapsed: int = 0
    since: int | None = None

    @staticmethod
    def begin(side: Side, at: int, reserve: int, mode: TimeMode, delay: int) -> Turn:
        """A fresh turn: a new turn always starts with a fresh delay."""
        return Turn(side, at, reserve, mode, delay, 0, at)

    @property
    def running(self) -> bool:
        return self.since is not None

    def elapsed_at(self, t: int) -> int:
        return self.elapsed + (t - self.since if self.since is not None else 0)

    def delay_left_at(self, t: int) -> int:
        if self.mode is not TimeMode.DELAY:
            return 0
        return max(0, self.delay - self.elapsed_at(t))

    def reserve_at(self, t: int) -> int:
        """The reserve shown at `t`; in simple delay the unused delay is not part of it."""
        e = self.elapsed_at(t)
        if self.mode is TimeMode.DELAY:
            return self.start_reserve - max(0, e - self.delay)
        return self.start_reserve - e

    def flag_at(self) -> int | None:
        """The exact instant the reserve reaches zero, or None while frozen."""
        if self.since is None:
            return None
        budget = self.start_reserve + (self.delay if self.mode is TimeMode.DELAY else 0)
        return self.since + budget - self.elapsed

    def frozen(self, t: int) -> Turn:
        return replace(self, elapsed=self.elapsed_at(t), since=None) if self.running else self

    def resumed(self, t: int) -> Turn:
        return self if self.running else replace(self, since=t)

    def with_reserve_change(self, t: int, delta: int) -> tuple[Turn, int]:
        """Add `delta` to the reserve shown at `t`, clamped at zero; returns the applied change."""
        shown = self.reserve_at(t)
        applied = max(-shown, delta)
        return replace(self, start_reserve=self.start_reserve + applied), applied

    def _spent(self, t: int) -> tuple[int, int]:
        """(span, simple delay used) of the turn at `t`."""
        span = self.elapsed_at(t)
        return span, (min(span, self.delay) if self.mode is TimeMode.DELAY else 0)

    def end(self, t: int) -> TurnEnd:
        """The end-of-turn rule of the mode, applied at `t` (at a frozen turn's frozen time)."""
        span, delay_used = self._spent(t)
        charged = span - delay_used
        if self.mode is TimeMode.BRONSTEIN:
            refund = min(span, self.delay)
        elif self.mode is TimeMode.FISCHER:
            refund = self.delay
        else:
            refund = 0
        return TurnEnd(span, delay_used, charged, refund, self.start_reserve - charged + refund)

    def flag_end(self, t: int) -> TurnEnd:
        """A flag at `t` freezes the clock at zero: no refund, nothing added."""
        span, delay_used = self._spent(t)
        return TurnEnd(span, delay_used, span - delay_used, 0, 0)

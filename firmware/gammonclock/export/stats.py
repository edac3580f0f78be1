"""Figures for the report: each player's think times, and whether the dice look fair.

Think times are exact integers of ns. The dice test is Pearson's chi-square goodness of fit of the
face counts against fair dice (scipy.stats.chisquare, 5 degrees of freedom); the doubles rate is
checked against 1/6 with an exact binomial test. scipy is imported only when dice are tested.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from gammonclock.sides import Side
from gammonclock.words import number, percent, say

from .model import MatchRecord, Roll, Turn

FACES = (1, 2, 3, 4, 5, 6)
MIN_PER_FACE = 5          # below this expected count per face the chi-square test says little


# --- think times -----------------------------------------------------------------------------

@dataclass(frozen=True)
class TimeStats:
    side: Side
    turns: int             # finished moves and cube decisions
    total: int             # think time (the sum of the turns' spans)
    charged: int           # taken from the reserve
    delay_used: int
    median: int            # of the spans; the mean of the middle two, rounded down, if even
    longest: Turn | None
    overrun: int           # late returns from breaks (not think time)
    reserve_left: int      # at the journal's end


def _median(values: Sequence[int]) -> int:
    ordered = sorted(values)
    if not ordered:
        return 0
    mid = len(ordered) // 2
    return ordered[mid] if len(ordered) % 2 else (ordered[mid - 1] + ordered[mid]) // 2


def time_stats(match: MatchRecord, side: Side) -> TimeStats:
    turns = [t for t in match.turns if t.side is side and t.finished and t.is_move]
    spans = [t.span or 0 for t in turns]
    longest = max(turns, key=lambda t: t.span or 0, default=None)
    overrun = sum(b.overrun for b in match.breaks if b.side is side)
    return TimeStats(side, len(turns), sum(spans), sum(t.charged or 0 for t in turns),
                     sum(t.delay_used or 0 for t in turns), _median(spans), longest, overrun,
                     match.replayed.engine.match.reserve_at(side))


# --- dice ------------------------------------------------------------------------------------

@dataclass(frozen=True)
class DiceStats:
    rolls: int                       # throws (one or two dice)
    dice: int                        # single dice
    faces: tuple[int, ...]           # counts of 1..6
    pairs: int                       # two-dice throws
    doubles: int
    chi_square: float | None         # None without dice
    p_value: float | None
    doubles_p_value: float | None    # exact binomial test of the doubles against 1/6

    @property
    def doubles_rate(self) -> float | None:
        return self.doubles / self.pairs if self.pairs else None

    @property
    def enough(self) -> bool:
        return self.dice >= MIN_PER_FACE * len(FACES)

    def reading(self, lang: str = "en") -> str:
        """What the test says, in plain words, in `lang`."""
        if not self.dice or self.p_value is None:
            return say("d.none", lang)
        p = self.p_value
        if not self.enough:
            return say("d.few", lang, dice=self.dice, need=MIN_PER_FACE * len(FACES),
                       per=MIN_PER_FACE)
        if p >= 0.05:
            return say("d.fine", lang, pct=percent(p, 0, lang), p=number(f"{p:.3f}", lang))
        if p >= 0.01:
            return say("d.uneven", lang, pct=percent(p, 1, lang), p=number(f"{p:.3f}", lang))
        return say("d.very", lang, p=number(f"{p:.2g}", lang))


def dice_stats(throws: Iterable[Sequence[int]]) -> DiceStats:
    """Face counts, doubles and the fairness tests of a set of throws."""
    throws = [tuple(t) for t in throws]
    faces = tuple(sum(t.count(f) for t in throws) for f in FACES)
    pairs = [t for t in throws if len(t) == 2]
    doubles = sum(1 for a, b in pairs if a == b)
    n = sum(faces)
    chi = p = p_doubles = None
    if n:
        # The report extra; only needed once there are dice.
        from scipy import stats  # type: ignore[import-untyped]

        test = stats.chisquare(faces)
        chi, p = float(test.statistic), float(test.pvalue)
        if pairs:
            p_doubles = float(stats.binomtest(doubles, len(pairs), 1 / 6).pvalue)
    return DiceStats(len(throws), n, faces, len(pairs), doubles, chi, p, p_doubles)


def counted(rolls: Iterable[Roll], side: Side | None = None) -> list[tuple[int, ...]]:
    """The throws that stand (void ones are struck), of one player or of everyone. A throw
    whose roller nobody knows (an opening die without L/R) counts for everyone only."""
    return [r.dice for r in rolls if not r.voided and (side is None or r.roller is side)]

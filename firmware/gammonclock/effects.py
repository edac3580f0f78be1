"""What the engine reports: every change it made, and every input it refused or ignored.

Effects are what the journal, the displays and the logs consume. Each is a frozen dataclass with
the instant `t` (ns) it happened at, a one-line `describe()` for people and `as_dict()` for
machines. Effects are numbered by their position in the engine's stream; `Rewound` retracts the
ones from `since_seq` on (a press that became a hold, an arbiter's undo) before the replay that
follows it re-reports what now holds.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from enum import Enum
from fractions import Fraction
from typing import Any, ClassVar

from .durations import format_clock, format_seconds
from .rules import EndReason, GameResult, format_score
from .sides import Pair, Side


def _secs(ns: int) -> str:
    return f"{format_seconds(ns)} s"


def _score(score: Pair[Fraction]) -> str:
    return f"{format_score(score.left)}-{format_score(score.right)}"


def _plain(value: Any) -> Any:
    """A JSON-ready form of an effect field."""
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, Fraction):
        return int(value) if value.denominator == 1 else float(value)
    if isinstance(value, Pair):
        return {"left": _plain(value.left), "right": _plain(value.right)}
    if isinstance(value, GameResult):
        return {"winner": _plain(value.winner), "kind": value.kind.value,
                "points": _plain(value.points)}
    if isinstance(value, tuple):
        return [_plain(v) for v in value]
    return value


@dataclass(frozen=True)
class Effect:
    t: int
    # True for effects that change nothing (an ignored tap, a refused double, a hint): an input
    # whose effects are all inert "had no effect" and is dropped by an undo that passes over it.
    inert: ClassVar[bool] = False

    @property
    def kind(self) -> str:
        name = type(self).__name__
        return "".join("_" + c.lower() if c.isupper() else c for c in name).lstrip("_")

    def describe(self) -> str:
        raise NotImplementedError

    def as_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, **{f.name: _plain(getattr(self, f.name)) for f in fields(self)}}


class TurnEndReason(str, Enum):
    SWITCH = "switch"          # the player pressed their clock
    DOUBLE = "double"          # the player doubled
    TAKE = "take"              # the player took a double
    RESULT = "result"          # the game ended with a confirmed result
    ARBITER = "arbiter"        # a forfeit, disqualification or lost challenge
    BREAK_OVER = "break_over"  # a late player came back from a break
    FLAG = "flag"              # the reserve ran out


@dataclass(frozen=True)
class GameStarted(Effect):
    game: int
    starter: Side
    white: Side | None
    crawford: bool

    def describe(self) -> str:
        extra = " (Crawford game)" if self.crawford else ""
        colour = f", {self.white} plays white" if self.white else ""
        return f"game {self.game} starts: {self.starter} to play{colour}{extra}"


@dataclass(frozen=True)
class TurnStarted(Effect):
    side: Side
    reserve: int
    delay: int

    def describe(self) -> str:
        delay = f" + {_secs(self.delay)} delay" if self.delay else ""
        return f"{self.side}'s clock runs from {format_clock(self.reserve)}{delay}"


@dataclass(frozen=True)
class TurnEnded(Effect):
    side: Side
    reason: TurnEndReason
    span: int
    delay_used: int
    charged: int
    refund: int
    reserve_after: int

    def describe(self) -> str:
        parts = [f"{self.side}'s turn ends ({self.reason.value}) after {_secs(self.span)}",
                 f"charged {_secs(self.charged)}"]
        if self.delay_used:
            parts.append(f"delay used {_secs(self.delay_used)}")
        if self.refund:
            parts.append(f"added back {_secs(self.refund)}")
        return ", ".join(parts)


@dataclass(frozen=True)
class DoubleOffered(Effect):
    doubler: Side
    value: int

    def describe(self) -> str:
        return f"{self.doubler} doubles to {self.value}"


@dataclass(frozen=True)
class DoubleTaken(Effect):
    taker: Side
    value: int

    def describe(self) -> str:
        return f"{self.taker} takes: cube at {self.value}, owned by {self.taker}"


@dataclass(frozen=True)
class ResultEntryStarted(Effect):
    holder: Side
    proposal: GameResult
    passed: bool

    def describe(self) -> str:
        what = "passes" if self.passed else "enters the game's result"
        return f"{self.holder} {what}; proposed: {self.proposal.describe()}"


@dataclass(frozen=True)
class ResultProposed(Effect):
    proposal: GameResult

    def describe(self) -> str:
        return f"proposed: {self.proposal.describe()}"


@dataclass(frozen=True)
class ResultEntryCancelled(Effect):
    holder: Side

    def describe(self) -> str:
        return f"{self.holder} cancels the result entry; play goes on"


@dataclass(frozen=True)
class GameEnded(Effect):
    game: int
    result: GameResult
    score: Pair[Fraction]
    by_arbiter: bool
    next_crawford: bool

    def describe(self) -> str:
        how = "forfeit: " if self.by_arbiter else ""
        crawford = "; next game is the Crawford game" if self.next_crawford else ""
        score = _score(self.score)
        return f"game {self.game}: {how}{self.result.describe()}; score {score}{crawford}"


@dataclass(frozen=True)
class MatchEnded(Effect):
    winner: Side | None
    reason: EndReason
    score: Pair[Fraction]

    def describe(self) -> str:
        who = f"{self.winner} wins" if self.winner else "no winner (tie)"
        return f"match over ({self.reason.value}): {who}, {_score(self.score)}"


@dataclass(frozen=True)
class FlagFell(Effect):
    side: Side

    def describe(self) -> str:
        return f"{self.side}'s flag falls"


@dataclass(frozen=True)
class OvertimeGiven(Effect):
    side: Side
    amount: int

    def describe(self) -> str:
        return f"{self.side}'s flag falls: overtime, {_secs(self.amount)} added"


@dataclass(frozen=True)
class Paused(Effect):
    by: str   # "cube" or "arbiter"

    def describe(self) -> str:
        return f"paused ({self.by})"


@dataclass(frozen=True)
class Resumed(Effect):
    by: str

    def describe(self) -> str:
        return f"resumed ({self.by})"


@dataclass(frozen=True)
class Recovered(Effect):
    """The match was rebuilt from its journal after an outage; `paused`: a clock was running and
    is now paused (a cube hold or the arbiter resumes it)."""

    paused: bool

    def describe(self) -> str:
        return "recovered after an outage" + ("; paused" if self.paused else "")


@dataclass(frozen=True)
class BreakStarted(Effect):
    side: Side
    ends_at: int
    breaks_left: Pair[int]

    def describe(self) -> str:
        return f"{self.side} takes a break until {format_seconds(self.ends_at)} s"


@dataclass(frozen=True)
class BreakOverrun(Effect):
    side: Side

    def describe(self) -> str:
        return f"break over: {self.side} is late, their reserve runs"


@dataclass(frozen=True)
class BreakEnded(Effect):
    side: Side
    overrun: int

    def describe(self) -> str:
        late = f" ({_secs(self.overrun)} late)" if self.overrun else ""
        return f"{self.side}'s break ends{late}"


@dataclass(frozen=True)
class ArbiterCommand(Effect):
    """The command as the arbiter gave it; what it did (or why not) follows."""

    text: str
    inert: ClassVar[bool] = True

    def describe(self) -> str:
        return f"arbiter: {self.text}"


@dataclass(frozen=True)
class ReserveChanged(Effect):
    side: Side
    change: int
    reserve: int

    def describe(self) -> str:
        sign = "+" if self.change >= 0 else "-"
        return (f"{self.side}'s reserve {sign}{_secs(abs(self.change))} "
                f"-> {format_clock(self.reserve)}")


@dataclass(frozen=True)
class ScoreChanged(Effect):
    score: Pair[Fraction]
    crawford_next: bool

    def describe(self) -> str:
        crawford = " (Crawford game next)" if self.crawford_next else ""
        return f"score set to {_score(self.score)}{crawford}"


@dataclass(frozen=True)
class CubeSet(Effect):
    value: int
    owner: Side | None

    def describe(self) -> str:
        return f"cube set to {self.value}" + (f", owned by {self.owner}" if self.owner else "")


@dataclass(frozen=True)
class Warned(Effect):
    side: Side
    text: str

    def describe(self) -> str:
        return f"warning to {self.side}: {self.text}"


@dataclass(frozen=True)
class ChallengeDecided(Effect):
    side: Side
    upheld: bool
    rejected: int

    def describe(self) -> str:
        outcome = "upheld" if self.upheld else f"rejected ({self.rejected} rejected so far)"
        return f"{self.side}'s challenge {outcome}"


@dataclass(frozen=True)
class DiceRolled(Effect):
    side: Side | None
    dice: tuple[int, ...]
    game: int
    turn: int        # the turn of the game it belongs to; 0 for an opening roll
    early: bool      # rolled by the side whose clock is not running

    def describe(self) -> str:
        dice = "-".join(map(str, self.dice))
        if self.turn == 0:
            who = f"{self.side}'s" if self.side else "the"
            return f"{who} opening {'die' if len(self.dice) == 1 else 'roll'} {dice}"
        early = " (early roll)" if self.early else ""
        return f"{self.side or 'the running player'} rolls {dice}{early}"


@dataclass(frozen=True)
class RollVoided(Effect):
    dice: tuple[int, ...]

    def describe(self) -> str:
        return f"roll {'-'.join(map(str, self.dice))} void"


@dataclass(frozen=True)
class Rewound(Effect):
    """Effects numbered `since_seq` up to this one no longer hold; what holds follows."""

    since_seq: int
    to: int
    why: str

    def describe(self) -> str:
        return f"{self.why}: rewound to {format_seconds(self.to)} s"


@dataclass(frozen=True)
class Undone(Effect):
    what: str

    def describe(self) -> str:
        return f"undone: {self.what}"


@dataclass(frozen=True)
class Ignored(Effect):
    what: str
    why: str
    inert: ClassVar[bool] = True

    def describe(self) -> str:
        return f"ignored {self.what}: {self.why}"


@dataclass(frozen=True)
class Refused(Effect):
    what: str
    why: str
    inert: ClassVar[bool] = True

    def describe(self) -> str:
        return f"refused {self.what}: {self.why}"


@dataclass(frozen=True)
class Shown(Effect):
    """A page or hint on the displays that changes nothing (the info page, 'take: press …')."""

    text: str
    inert: ClassVar[bool] = True

    def describe(self) -> str:
        return f"shown: {self.text}"


def surviving(effects: list[Effect]) -> list[Effect]:
    """The effects that still hold once every `Rewound` has retracted what it names."""
    kept: list[tuple[int, Effect]] = []
    for seq, effect in enumerate(effects):
        if isinstance(effect, Rewound):
            kept = [(s, e) for s, e in kept if s < effect.since_seq]
        else:
            kept.append((seq, effect))
    return [e for _, e in kept]

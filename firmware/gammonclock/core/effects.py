"""What the engine reports: every change it made, and every input it refused or ignored.

Effects are what the journal, the displays and the logs consume. Each is a frozen dataclass with
the instant `t` (ns) it happened at, a one-line `describe()` for people and `as_dict()` for
machines (the journal's form: the effect's `kind`, see `Effect`, and its fields). `Ignored`,
`Refused` and `Shown` carry a `Reason` code: code decides from it, never from their text. Effects
are numbered by their position in the engine's stream; `Rewound` retracts the ones from
`since_seq` on (a press that became a hold, an arbiter's undo) before the replay that follows it
re-reports what now holds.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from enum import Enum
from fractions import Fraction
from typing import Any, ClassVar

from gammonclock.durations import format_clock, format_seconds
from gammonclock.sides import Pair, Side

from .reasons import Reason
from .rules import EndReason, GameResult, format_score, json_points


def _secs(ns: int) -> str:
    return f"{format_seconds(ns)} s"


def _score(score: Pair[Fraction]) -> str:
    return f"{format_score(score.left)}-{format_score(score.right)}"


_AS_IS = frozenset({int, str, bool, type(None)})   # JSON already (exact types: no Enum, no Side)


def _plain(value: Any) -> Any:
    """A JSON-ready form of an effect field."""
    if type(value) in _AS_IS:          # most fields: instants and spans; first, it is every record
        return value
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, Fraction):
        return json_points(value)
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
    """One thing the engine did or declined to do, at instant `t`.

    `kind` names the effect in the journal (the `"kind"` key of `as_dict`, beside the fields)
    and in the export's incidents. It is part of the journal format: each class states its own,
    once and for all, so that renaming a class never changes what journals say; a new effect
    takes a new kind, and a kind is never reused.
    """

    t: int
    kind: ClassVar[str]
    # True for effects that change nothing (an ignored tap, a refused double, a hint): an input
    # whose effects are all inert "had no effect" and is dropped by an undo that passes over it.
    inert: ClassVar[bool] = False

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "kind" not in cls.__dict__:
            raise TypeError(f"effect {cls.__name__} states no `kind`: give it its journal name")

    def describe(self) -> str:
        raise NotImplementedError

    def as_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"kind": self.kind}
        for name in _field_names(type(self)):     # every journal record: kept plain and quick
            data[name] = _plain(getattr(self, name))
        return data


_FIELD_NAMES: dict[type, tuple[str, ...]] = {}


def _field_names(cls: type) -> tuple[str, ...]:
    """An effect class's field names (computed once a class: `fields()` is slow)."""
    names = _FIELD_NAMES.get(cls)
    if names is None:
        names = _FIELD_NAMES[cls] = tuple(f.name for f in fields(cls))
    return names


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
    kind: ClassVar[str] = "game_started"
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
    kind: ClassVar[str] = "turn_started"
    side: Side
    reserve: int
    delay: int

    def describe(self) -> str:
        delay = f" + {_secs(self.delay)} delay" if self.delay else ""
        return f"{self.side}'s clock runs from {format_clock(self.reserve)}{delay}"


@dataclass(frozen=True)
class TurnEnded(Effect):
    kind: ClassVar[str] = "turn_ended"
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
    kind: ClassVar[str] = "double_offered"
    doubler: Side
    value: int

    def describe(self) -> str:
        return f"{self.doubler} doubles to {self.value}"


@dataclass(frozen=True)
class DoubleTaken(Effect):
    kind: ClassVar[str] = "double_taken"
    taker: Side
    value: int

    def describe(self) -> str:
        return f"{self.taker} takes: cube at {self.value}, owned by {self.taker}"


@dataclass(frozen=True)
class ResultEntryStarted(Effect):
    kind: ClassVar[str] = "result_entry_started"
    holder: Side
    proposal: GameResult
    passed: bool

    def describe(self) -> str:
        what = "passes" if self.passed else "enters the game's result"
        return f"{self.holder} {what}; proposed: {self.proposal.describe()}"


@dataclass(frozen=True)
class ResultProposed(Effect):
    kind: ClassVar[str] = "result_proposed"
    proposal: GameResult

    def describe(self) -> str:
        return f"proposed: {self.proposal.describe()}"


@dataclass(frozen=True)
class ResultEntryCancelled(Effect):
    kind: ClassVar[str] = "result_entry_cancelled"
    holder: Side

    def describe(self) -> str:
        return f"{self.holder} cancels the result entry; play goes on"


@dataclass(frozen=True)
class GameEnded(Effect):
    kind: ClassVar[str] = "game_ended"
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
    kind: ClassVar[str] = "match_ended"
    winner: Side | None
    reason: EndReason
    score: Pair[Fraction]

    def describe(self) -> str:
        if self.reason is EndReason.ABANDONED:
            return f"match abandoned by the arbiter at {_score(self.score)}"
        if self.reason is EndReason.MOVED:
            return f"match moved to another clock at {_score(self.score)}"
        who = f"{self.winner} wins" if self.winner else "no winner (tie)"
        return f"match over ({self.reason.value}): {who}, {_score(self.score)}"


@dataclass(frozen=True)
class FlagFell(Effect):
    kind: ClassVar[str] = "flag_fell"
    side: Side

    def describe(self) -> str:
        return f"{self.side}'s flag falls"


@dataclass(frozen=True)
class OvertimeGiven(Effect):
    kind: ClassVar[str] = "overtime_given"
    side: Side
    amount: int

    def describe(self) -> str:
        return f"{self.side}'s flag falls: overtime, {_secs(self.amount)} added"


@dataclass(frozen=True)
class Paused(Effect):
    kind: ClassVar[str] = "paused"
    by: str   # "cube", "arbiter" or "recovery"

    def describe(self) -> str:
        return f"paused ({self.by})"


@dataclass(frozen=True)
class Resumed(Effect):
    kind: ClassVar[str] = "resumed"
    by: str

    def describe(self) -> str:
        return f"resumed ({self.by})"


@dataclass(frozen=True)
class Recovered(Effect):
    """The match was rebuilt from its journal after an outage; `paused`: a clock was running and
    is now paused (a cube hold or the arbiter resumes it)."""

    kind: ClassVar[str] = "recovered"
    paused: bool

    def describe(self) -> str:
        return "recovered after an outage" + ("; paused" if self.paused else "")


@dataclass(frozen=True)
class BreakStarted(Effect):
    kind: ClassVar[str] = "break_started"
    side: Side
    ends_at: int
    breaks_left: Pair[int]

    def describe(self) -> str:
        return f"{self.side} takes a break until {format_seconds(self.ends_at)} s"


@dataclass(frozen=True)
class BreakOverrun(Effect):
    kind: ClassVar[str] = "break_overrun"
    side: Side

    def describe(self) -> str:
        return f"break over: {self.side} is late, their reserve runs"


@dataclass(frozen=True)
class BreakEnded(Effect):
    kind: ClassVar[str] = "break_ended"
    side: Side
    overrun: int

    def describe(self) -> str:
        late = f" ({_secs(self.overrun)} late)" if self.overrun else ""
        return f"{self.side}'s break ends{late}"


@dataclass(frozen=True)
class ArbiterCommand(Effect):
    """The command as the arbiter gave it; what it did (or why not) follows."""

    kind: ClassVar[str] = "arbiter_command"
    text: str
    # Who gave it (SPEC §13.4): "socket", "panel", "hall" or "script", and the login or
    # account. None in the journals written before these were recorded here.
    source: str | None = None
    by: str | None = None
    inert: ClassVar[bool] = True

    def describe(self) -> str:
        return f"arbiter: {self.text}"


@dataclass(frozen=True)
class ReserveChanged(Effect):
    kind: ClassVar[str] = "reserve_changed"
    side: Side
    change: int
    reserve: int

    def describe(self) -> str:
        sign = "+" if self.change >= 0 else "-"
        return (f"{self.side}'s reserve {sign}{_secs(abs(self.change))} "
                f"-> {format_clock(self.reserve)}")


@dataclass(frozen=True)
class ScoreChanged(Effect):
    kind: ClassVar[str] = "score_changed"
    score: Pair[Fraction]
    crawford_next: bool
    # The side a penalty point was taken from (`point SIDE`, SPEC §7); None for a correction.
    penalty: Side | None = None

    def describe(self) -> str:
        crawford = " (Crawford game next)" if self.crawford_next else ""
        if self.penalty is not None:
            return (f"penalty point: one point taken from {self.penalty}; score "
                    f"{_score(self.score)}{crawford}")
        return f"score set to {_score(self.score)}{crawford}"


@dataclass(frozen=True)
class CubeSet(Effect):
    kind: ClassVar[str] = "cube_set"
    value: int
    owner: Side | None

    def describe(self) -> str:
        return f"cube set to {self.value}" + (f", owned by {self.owner}" if self.owner else "")


@dataclass(frozen=True)
class Warned(Effect):
    kind: ClassVar[str] = "warned"
    side: Side
    text: str

    def describe(self) -> str:
        return f"warning to {self.side}: {self.text}"


@dataclass(frozen=True)
class ChallengeDecided(Effect):
    kind: ClassVar[str] = "challenge_decided"
    side: Side
    upheld: bool
    rejected: int

    def describe(self) -> str:
        outcome = "upheld" if self.upheld else f"rejected ({self.rejected} rejected so far)"
        return f"{self.side}'s challenge {outcome}"


@dataclass(frozen=True)
class DiceRolled(Effect):
    kind: ClassVar[str] = "dice_rolled"
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
    kind: ClassVar[str] = "roll_voided"
    dice: tuple[int, ...]

    def describe(self) -> str:
        return f"roll {'-'.join(map(str, self.dice))} void"


@dataclass(frozen=True)
class Rewound(Effect):
    """Effects numbered `since_seq` up to this one no longer hold; what holds follows."""

    kind: ClassVar[str] = "rewound"
    since_seq: int
    to: int
    why: str

    def describe(self) -> str:
        return f"{self.why}: rewound to {format_seconds(self.to)} s"


# What an undo can take back (`Undone.action`): a game's start, a double, a take, a game's
# confirmed result, a turn switch. Part of the journal format, as a Reason's value is.
UNDOABLE = ("start", "double", "take", "result", "switch")


@dataclass(frozen=True)
class Undone(Effect):
    """An undo took a player's action back. `what` is the action in English (what journals
    before the other fields said); the fields say it for any language: which action, whose
    press it was, of which game, the cube's value of a double, a result, and the instant (engine
    ns) it was made. An Undone built by hand may give `what` only."""

    kind: ClassVar[str] = "undone"
    what: str
    action: str | None = None           # one of UNDOABLE
    side: Side | None = None            # who pressed (None: the cube button)
    game: int | None = None
    value: int | None = None            # the cube's value of an undone double
    result: GameResult | None = None    # the undone result
    made_at: int | None = None          # when the undone action was made (engine ns)

    def describe(self) -> str:
        if self.made_at is None:
            return f"undone: {self.what}"
        return f"undone: {self.what} (at {format_clock(self.made_at)} match time)"


# Facts a refusal or an ignored input names (a reserve, a length, a count), as (name, value)
# pairs: its words in any language are made from its reason's code and these.
Facts = tuple[tuple[str, str | int], ...]


@dataclass(frozen=True)
class Ignored(Effect):
    kind: ClassVar[str] = "ignored"
    what: str
    why: str
    # The code the panels, the export and the hall decide from (the text is for people).
    # None only in an effect built by hand; the engine always gives one.
    reason: Reason | None = None
    facts: Facts = ()                # what `why` names, for its words in another language
    inert: ClassVar[bool] = True

    def describe(self) -> str:
        return f"ignored {self.what}: {self.why}"


@dataclass(frozen=True)
class Refused(Effect):
    kind: ClassVar[str] = "refused"
    what: str
    why: str
    # The code the panels, the export and the hall decide from (the text is for people).
    # None only in an effect built by hand; the engine always gives one.
    reason: Reason | None = None
    facts: Facts = ()                # what `why` names, for its words in another language
    inert: ClassVar[bool] = True

    def describe(self) -> str:
        return f"refused {self.what}: {self.why}"


@dataclass(frozen=True)
class Shown(Effect):
    """A page or hint on the displays that changes nothing (the info page, 'take: press …')."""

    kind: ClassVar[str] = "shown"
    text: str
    reason: Reason | None = None     # as `Ignored.reason`
    # What `text` names, for its words elsewhere (a locked chord: the lockout's `left_ns`).
    facts: Facts = ()
    inert: ClassVar[bool] = True

    def describe(self) -> str:
        return f"shown: {self.text}"


# Every effect there is: code that must handle each one matches on this, and mypy checks that
# none is forgotten (`typing.assert_never`).
AnyEffect = (GameStarted | TurnStarted | TurnEnded | DoubleOffered | DoubleTaken
             | ResultEntryStarted | ResultProposed | ResultEntryCancelled | GameEnded | MatchEnded
             | FlagFell | OvertimeGiven | Paused | Resumed | Recovered | BreakStarted
             | BreakOverrun | BreakEnded | ArbiterCommand | ReserveChanged | ScoreChanged | CubeSet
             | Warned | ChallengeDecided | DiceRolled | RollVoided | Rewound | Undone | Ignored
             | Refused | Shown)


def as_any(effect: Effect) -> AnyEffect:
    """`effect` as one of the effects there are, for a `match` that mypy checks is exhaustive."""
    assert isinstance(effect, AnyEffect), f"{type(effect).__name__} is not in AnyEffect"
    return effect


def surviving(effects: list[Effect]) -> list[Effect]:
    """The effects that still hold once every `Rewound` has retracted what it names.

    Linear: the kept effects stay in stream order, so a `Rewound` pops from the end what it
    retracts (each effect is kept once and dropped at most once)."""
    kept: list[tuple[int, Effect]] = []
    for seq, effect in enumerate(effects):
        if isinstance(effect, Rewound):
            while kept and kept[-1][0] >= effect.since_seq:
                kept.pop()
        else:
            kept.append((seq, effect))
    return [e for _, e in kept]

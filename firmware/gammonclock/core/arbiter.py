"""The arbiter's commands (SPEC §7): their words, parsed into typed values.

The same words come from a simulation script (`arbiter deduct left 30s`), the control socket and
`gammonclock arbiter …`. Parsing checks only the form; whether a command may act now (a penalty
over half the reserve, a score at the length) is the engine's decision, reported as a refusal.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from fractions import Fraction

from gammonclock.durations import (
    MAX_CUBE,
    MAX_DIGITS,
    MAX_POINTS,
    MAX_TEXT_LENGTH,
    DurationError,
    LineFault,
    PointsError,
    PointsProblem,
    bounded_points,
    format_seconds,
    line_fault,
    parse_duration,
    parse_signed_duration,
    quoted,
)
from gammonclock.errors import GammonclockError
from gammonclock.sides import Side

from .rules import format_score


class ArbiterSyntaxError(GammonclockError, ValueError):
    """Words that are not an arbiter command; the message says what was expected (English).

    `code` and `fields` say the same for the runtime to word in the arbiter's language (the core
    imports no words): a field may be a DurationError ("error") or, for "usage", the
    ArbiterSyntaxError it adds the usage to ("detail", or None)."""

    def __init__(self, message: str, code: str = "other", **fields: object) -> None:
        super().__init__(message)
        self.code, self.fields = code, fields


@dataclass(frozen=True)
class Pause:
    def describe(self) -> str:
        return "pause"


@dataclass(frozen=True)
class Resume:
    def describe(self) -> str:
        return "resume"


@dataclass(frozen=True)
class Adjust:
    side: Side
    delta_ns: int

    def describe(self) -> str:
        sign = "+" if self.delta_ns >= 0 else "-"
        return f"adjust {self.side} {sign}{format_seconds(abs(self.delta_ns))}s"


@dataclass(frozen=True)
class Deduct:
    side: Side
    amount_ns: int

    def describe(self) -> str:
        return f"deduct {self.side} {format_seconds(self.amount_ns)}s"


@dataclass(frozen=True)
class AddTime:
    side: Side
    amount_ns: int

    def describe(self) -> str:
        return f"add {self.side} {format_seconds(self.amount_ns)}s"


@dataclass(frozen=True)
class PointPenalty:
    side: Side

    def describe(self) -> str:
        return f"point {self.side}"


@dataclass(frozen=True)
class Forfeit:
    side: Side
    points: int | None   # None: the cube value

    def describe(self) -> str:
        return f"forfeit {self.side}" + ("" if self.points is None else f" {self.points}")


@dataclass(frozen=True)
class Disqualify:
    side: Side

    def describe(self) -> str:
        return f"disqualify {self.side}"


@dataclass(frozen=True)
class Warn:
    side: Side
    text: str

    def describe(self) -> str:
        return f"warn {self.side} {self.text}"


@dataclass(frozen=True)
class Challenge:
    side: Side
    upheld: bool

    def describe(self) -> str:
        return f"challenge {self.side} {'upheld' if self.upheld else 'rejected'}"


@dataclass(frozen=True)
class Abandon:
    """The match ends here with no winner (SPEC §13.2: a next match forced in mid-match)."""

    def describe(self) -> str:
        return "abandon"


@dataclass(frozen=True)
class Moved:
    """The match was continued on another clock (SPEC §13.5): it ends here with no winner and
    is never resumed here. `to`: the table it went to; None when the arbiter at the panels,
    who cannot type a name, says it moved."""

    to: str | None = None

    def describe(self) -> str:
        return "moved" if self.to is None else f"moved {self.to}"


@dataclass(frozen=True)
class EndBreak:
    """The break ends now, as if its taker had tapped (SPEC §13.4, the arbiter's menu)."""

    def describe(self) -> str:
        return "end-break"


@dataclass(frozen=True)
class Undo:
    def describe(self) -> str:
        return "undo"


@dataclass(frozen=True)
class SetScore:
    left: Fraction
    right: Fraction

    def describe(self) -> str:
        return f"score {format_score(self.left)} {format_score(self.right)}"


@dataclass(frozen=True)
class SetCube:
    value: int
    owner: Side | None

    def describe(self) -> str:
        return f"cube {self.value}" + ("" if self.owner is None else f" {self.owner}")


Command = (Pause | Resume | Adjust | Deduct | AddTime | PointPenalty | Forfeit | Disqualify | Warn
           | Challenge | Undo | SetScore | SetCube | Abandon | EndBreak | Moved)

USAGE = {
    "pause": "pause", "resume": "resume", "adjust": "adjust SIDE ±DURATION",
    "deduct": "deduct SIDE DURATION", "add": "add SIDE DURATION", "point": "point SIDE",
    "forfeit": "forfeit SIDE [POINTS]", "disqualify": "disqualify SIDE", "warn": "warn SIDE TEXT",
    "challenge": "challenge SIDE upheld|rejected", "undo": "undo", "score": "score LEFT RIGHT",
    "cube": "cube VALUE [SIDE]", "abandon": "abandon", "end-break": "end-break",
    "moved": "moved [TABLE]",
}

# A table's id (SPEC §13.1: `[table] id`), as `moved` names where the match went.
TABLE_ID = re.compile(r"[A-Za-z0-9_-]{1,32}")

# The commands that are their one word.
_BARE: dict[str, type[Pause | Resume | Undo | Abandon | EndBreak]] = {
    "pause": Pause, "resume": Resume, "undo": Undo, "abandon": Abandon, "end-break": EndBreak}


def _side(word: str) -> Side:
    try:
        return Side(word.lower())
    except ValueError:
        raise ArbiterSyntaxError(f"{quoted(word)} is not a side (left or right)", "not_side",
                                 word=quoted(word)) from None


def _points(word: str) -> Fraction:
    """A score: whole or half points from 0 to `MAX_POINTS` (`bounded_points`)."""
    try:
        if not word.isascii() or len(word) > MAX_DIGITS:   # Decimal reads other scripts' digits
            raise ValueError(word)
        number = Decimal(word)
    except (InvalidOperation, ValueError):
        raise ArbiterSyntaxError(f"{quoted(word)} is not a score", "not_score",
                                 word=quoted(word)) from None
    if not number.is_finite():
        raise ArbiterSyntaxError(f"{quoted(word)} is not a score", "not_score", word=quoted(word))
    try:
        return bounded_points(number, MAX_POINTS)
    except PointsError as exc:
        if exc.problem is PointsProblem.OVER:
            raise ArbiterSyntaxError(f"{quoted(word)} is not a score (at most {MAX_POINTS}, "
                                     "the longest match)", "score_over", word=quoted(word),
                                     max=MAX_POINTS) from None
        raise ArbiterSyntaxError(f"{quoted(word)} is not a score (whole or half points, "
                                 "not negative)", "score_halves", word=quoted(word)) from None


def _whole(word: str, high: int) -> int | None:
    """A whole number from 0 to `high` in ASCII digits, else None (`str.isdigit` also takes "²",
    which `int` refuses, and other scripts' digits; the length is checked before `int`)."""
    digits = word.lstrip("0") or "0"
    if not (word.isascii() and word.isdigit()) or len(digits) > len(str(high)):
        return None
    value = int(digits)
    return value if value <= high else None


def _text(words: list[str]) -> str:
    """A warning's text: at most `MAX_TEXT_LENGTH` characters, none of them a control character
    (it goes to the log and the panels as it is)."""
    text = " ".join(words)
    fault = line_fault(text, MAX_TEXT_LENGTH)
    if fault is LineFault.TOO_LONG:
        raise ArbiterSyntaxError(f"the text is {len(text)} characters long; "
                                 f"at most {MAX_TEXT_LENGTH}", "text_long", n=len(text),
                                 max=MAX_TEXT_LENGTH)
    if fault is LineFault.CONTROL:
        raise ArbiterSyntaxError("the text holds a control character (NUL, newline, escape, …); "
                                 "use printable characters only", "text_control")
    return text


def _duration(word: str, signed: bool = False) -> int:
    try:
        return parse_signed_duration(word) if signed else parse_duration(word, bare_seconds=True)
    except DurationError as exc:
        raise ArbiterSyntaxError(str(exc), "duration", error=exc) from None


def parse_command(words: list[str]) -> Command:
    """Parse the words of one arbiter command, e.g. `["deduct", "left", "30s"]`."""
    if not words:
        raise ArbiterSyntaxError(f"no command; expected one of: {', '.join(USAGE)}", "no_command",
                                 commands=", ".join(USAGE))
    name, args = words[0].lower(), words[1:]
    if name not in USAGE:
        raise ArbiterSyntaxError(f"unknown arbiter command {quoted(words[0])}; "
                                 f"expected one of: {', '.join(USAGE)}", "unknown",
                                 word=quoted(words[0]), commands=", ".join(USAGE))
    try:
        return _build(name, args)
    except (IndexError, ArbiterSyntaxError) as exc:
        detail = exc if isinstance(exc, ArbiterSyntaxError) else None
        raise ArbiterSyntaxError(f"{detail}; usage: {USAGE[name]}" if detail else
                                 f"usage: {USAGE[name]}", "usage", detail=detail,
                                 name=name) from None


def _build(name: str, args: list[str]) -> Command:
    def exactly(n: int) -> None:
        if len(args) != n:
            raise ArbiterSyntaxError(f"{name} takes {n} argument{'s' if n != 1 else ''}", "takes",
                                     name=name, n=n)

    if name in _BARE:
        exactly(0)
        return _BARE[name]()
    if name == "moved":
        if len(args) > 1:
            raise ArbiterSyntaxError("moved takes at most the table the match went to",
                                     "moved_args")
        if args and TABLE_ID.fullmatch(args[0]) is None:
            raise ArbiterSyntaxError(f"{quoted(args[0])} is not a table id (1 to 32 letters, "
                                     "digits, '-' or '_')", "not_table", word=quoted(args[0]))
        return Moved(args[0] if args else None)
    if name == "warn":
        if len(args) < 2:
            raise ArbiterSyntaxError("warn needs a side and a text", "warn_args")
        return Warn(_side(args[0]), _text(args[1:]))
    if name == "forfeit":
        if len(args) not in (1, 2):
            raise ArbiterSyntaxError("forfeit takes a side and optionally the points",
                                     "forfeit_args")
        points = None
        if len(args) == 2:
            points = _whole(args[1], MAX_POINTS)
            if points is None or points < 1:
                raise ArbiterSyntaxError(f"{quoted(args[1])} is not a number of points "
                                         f"(1 to {MAX_POINTS})", "forfeit_points",
                                         word=quoted(args[1]), max=MAX_POINTS)
        return Forfeit(_side(args[0]), points)
    if name == "cube":
        if len(args) not in (1, 2):
            raise ArbiterSyntaxError("cube takes a value and optionally the owner", "cube_args")
        value = _whole(args[0], MAX_CUBE)
        if value is None or value < 1 or value & (value - 1):
            raise ArbiterSyntaxError(f"{quoted(args[0])} is not a cube value (a power of two "
                                     f"from 1 to {MAX_CUBE})", "cube_value",
                                     word=quoted(args[0]), max=MAX_CUBE)
        owner = _side(args[1]) if len(args) == 2 else None
        if value == 1 and owner is not None:
            raise ArbiterSyntaxError("a cube at 1 is in the middle and has no owner",
                                     "cube_middle")
        return SetCube(value, owner)
    if name == "score":
        exactly(2)
        return SetScore(_points(args[0]), _points(args[1]))
    if name in ("point", "disqualify"):
        exactly(1)
        return (PointPenalty if name == "point" else Disqualify)(_side(args[0]))
    if name == "challenge":
        exactly(2)
        if args[1].lower() not in ("upheld", "rejected"):
            raise ArbiterSyntaxError(f"{quoted(args[1])} is not an outcome (upheld or rejected)",
                                     "outcome", word=quoted(args[1]))
        return Challenge(_side(args[0]), args[1].lower() == "upheld")
    exactly(2)   # adjust, deduct, add
    side = _side(args[0])
    if name == "adjust":
        return Adjust(side, _duration(args[1], signed=True))
    amount = _duration(args[1])
    if amount <= 0:
        raise ArbiterSyntaxError(f"{name} needs a duration above zero", "above_zero", name=name)
    return (Deduct if name == "deduct" else AddTime)(side, amount)

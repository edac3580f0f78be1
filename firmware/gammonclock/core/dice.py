"""The dice-reader line protocol (SPEC §8): one ASCII message per line.

`ROLL d1 d2`, `ROLL d` (one die of the opening roll), `ROLL L d1 d2` / `ROLL R d1 d2` (with the side
that rolled) and `VOID`. Anything else is garbage: the reader logs it and goes on.
"""

from __future__ import annotations

from dataclasses import dataclass

from gammonclock.durations import quoted
from gammonclock.errors import GammonclockError
from gammonclock.sides import Side


class DiceSyntaxError(GammonclockError, ValueError):
    """A line that is not a message of the protocol."""


@dataclass(frozen=True)
class Roll:
    dice: tuple[int, ...]        # one die (an opening roll) or two
    side: Side | None = None     # the side that rolled, when the reader knows it

    def to_line(self) -> str:
        """The protocol line for this roll (what the journal keeps)."""
        side = {Side.LEFT: "L ", Side.RIGHT: "R "}.get(self.side, "") if self.side else ""
        return f"ROLL {side}{' '.join(map(str, self.dice))}"

    def describe(self) -> str:
        who = f"{self.side} " if self.side else ""
        return f"{who}rolled {'-'.join(map(str, self.dice))}"


@dataclass(frozen=True)
class Void:
    """The last roll is void (cocked, off the board): it is struck from the record."""

    def to_line(self) -> str:
        return "VOID"

    def describe(self) -> str:
        return "last roll void"


DiceMessage = Roll | Void

_SIDE_LETTER = {"L": Side.LEFT, "R": Side.RIGHT}


def _die(word: str) -> int:
    if len(word) != 1 or word not in "123456":
        raise DiceSyntaxError(f"{quoted(word)} is not a die (1-6)")
    return int(word)


def parse_words(words: list[str]) -> DiceMessage:
    """A message from its words, case-insensitive: `["ROLL", "R", "3", "1"]`."""
    if not words:
        raise DiceSyntaxError("empty line")
    head, args = words[0].upper(), words[1:]
    if head == "VOID":
        if args:
            raise DiceSyntaxError("VOID takes nothing after it")
        return Void()
    if head != "ROLL":
        raise DiceSyntaxError(f"{quoted(words[0])} is neither ROLL nor VOID")
    side = None
    if args and args[0].upper() in _SIDE_LETTER:
        side = _SIDE_LETTER[args[0].upper()]
        args = args[1:]
        if len(args) != 2:
            raise DiceSyntaxError("ROLL L|R takes two dice")
    if len(args) not in (1, 2):
        raise DiceSyntaxError("ROLL takes one or two dice")
    return Roll(tuple(_die(a) for a in args), side)


def parse_line(line: str | bytes) -> DiceMessage:
    """One protocol line (terminator optional); raises DiceSyntaxError on garbage."""
    if isinstance(line, bytes):
        try:
            line = line.decode("ascii")
        except UnicodeDecodeError:
            raise DiceSyntaxError("not ASCII") from None
    return parse_words(line.strip().split())

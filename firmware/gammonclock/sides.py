"""The two physical sides of the table, the three buttons, and a value per side."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from enum import Enum
from typing import Generic, TypeVar

T = TypeVar("T")


class Side(str, Enum):
    """A side as seen by the arbiter standing in front of the clock."""

    LEFT = "left"
    RIGHT = "right"

    @property
    def other(self) -> Side:
        return Side.RIGHT if self is Side.LEFT else Side.LEFT

    def __str__(self) -> str:
        return self.value


class Button(str, Enum):
    LEFT = "left"
    RIGHT = "right"
    CUBE = "cube"

    @property
    def side(self) -> Side | None:
        """The side whose clock button this is; None for the cube button."""
        # Not `Side(self.value)`: an enum's lookup by value is a slow call, and every press
        # asks (the engine's hot path).
        return None if self is Button.CUBE else Side.LEFT if self is Button.LEFT else Side.RIGHT

    @staticmethod
    def of(side: Side) -> Button:
        return Button(side.value)

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True, slots=True)
class Pair(Generic[T]):
    """An immutable value per side; `with_` returns a new pair."""

    left: T
    right: T

    @staticmethod
    def both(value: T) -> Pair[T]:
        return Pair(value, value)

    def __getitem__(self, side: Side) -> T:
        return self.left if side is Side.LEFT else self.right

    def with_(self, side: Side, value: T) -> Pair[T]:
        return Pair(value, self.right) if side is Side.LEFT else Pair(self.left, value)

    def __iter__(self) -> Iterator[T]:
        yield self.left
        yield self.right

    def as_dict(self) -> dict[str, T]:
        return {"left": self.left, "right": self.right}

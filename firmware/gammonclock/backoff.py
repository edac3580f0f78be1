"""Exponential back-off: how long to wait before trying a failed device again.

Shared by the panels (instants in integer nanoseconds) and the dice reader (waits in seconds):
the delays double from `initial` up to `maximum`, and start over after a success. Nothing here
reads a clock: a caller passes its own instants, so tests drive it with any clock they like.
"""

from __future__ import annotations

from typing import Generic, TypeVar

N = TypeVar("N", int, float)   # nanoseconds (int) or seconds (float): the caller's unit


class Backoff(Generic[N]):
    """Waits of `initial`, then twice as long after each further failure, up to `maximum`."""

    def __init__(self, initial: N, maximum: N) -> None:
        self.initial: N = initial
        self.maximum: N = maximum
        self._next: N = initial
        self.ready_at: N | None = None   # the instant of the next attempt (see `failed_at`)

    @property
    def next_delay(self) -> N:
        """The wait that the next failure will bring."""
        return self._next

    def failed(self) -> N:
        """A failure: the wait before the next attempt (the one after will be twice as long)."""
        delay = self._next
        self._next = min(2 * delay, self.maximum)
        return delay

    def failed_at(self, now: N) -> N:
        """A failure at instant `now`: the next attempt is not before the instant returned."""
        self.ready_at = now + self.failed()
        return self.ready_at

    def ready(self, now: N) -> bool:
        """Whether an attempt at `now` is due (always, until a failure set an instant)."""
        return self.ready_at is None or now >= self.ready_at

    def succeeded(self) -> None:
        """A success: the next failure waits `initial` again."""
        self._next = self.initial

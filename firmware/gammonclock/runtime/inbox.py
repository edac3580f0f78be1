"""What the clock's loop takes from other threads (SPEC §7, §13): inputs with where their answer
goes (`Reply`: a command is never reported failed and applied later), work for the loop's
thread in order with them (`Task`), and calls at an instant (a button's settle); bounded, so
that a flood from one source can neither starve a press nor grow memory."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass

from gammonclock.core.effects import Effect
from gammonclock.core.engine import Engine, Input

# How many inputs may wait for the loop. Button edges come from two hands and a cube and get far
# more room than the other sources (dice reader, arbiter socket), so a flood from those can
# neither starve a press nor grow memory without bound.
MAX_WAITING_EDGES = 4096

MAX_WAITING_OTHERS = 64

@dataclass(frozen=True)
class Task:
    """Work for the loop's thread at instant `t` (monotonic, as `submit` takes inputs), in order
    with the inputs: loading the next match. Its return value goes to the Reply's `value`."""

    t: int
    run: Callable[[], object]

    def __str__(self) -> str:
        return f"task at {self.t} ns"

class Reply:
    """Where the loop leaves what an input did, for a caller waiting on another thread (the
    arbiter's socket).

    A caller that stops waiting `withdraw`s the input: if the loop has not taken it yet it never
    will (the command is certainly not applied); if it has, the caller knows the outcome is on
    its way and can wait for it. So a command is never reported as failed and applied later.
    """

    def __init__(self) -> None:
        self.done = threading.Event()
        self.effects: list[Effect] = []
        self.value: object = None            # a Task's result
        self._lock = threading.Lock()
        self._state = "waiting"          # waiting | taken (by the loop) | withdrawn (by the caller)

    def take(self) -> bool:
        """The loop claims the input before applying it; False: the caller withdrew it."""
        with self._lock:
            if self._state == "withdrawn":
                return False
            self._state = "taken"
            return True

    def withdraw(self) -> bool:
        """The caller gives up waiting; True if the input will never be applied, False if the
        loop has already taken it (its effects will arrive: `wait` again)."""
        with self._lock:
            if self._state == "taken":
                return False
            self._state = "withdrawn"
            return True

    def deliver(self, effects: list[Effect], value: object = None) -> None:
        self.effects, self.value = effects, value
        self.done.set()

    def wait(self, timeout: float) -> list[Effect] | None:
        return self.effects if self.done.wait(timeout) else None

    def wait_taken(self, timeout_s: float, grace_s: float) -> bool:
        """Wait, bounded, for the loop: False when it never took the input (withdrawn, never to
        be applied); True when it did (its outcome is here, or, after `grace_s` more, still on
        its way: `done` says which)."""
        if self.wait(timeout_s) is None:
            if self.withdraw():
                return False
            self.wait(grace_s)           # taken: its outcome is coming
        return True

# A call the loop makes at its instant (a button's settle): it is given the engine as it stands
# then (None: no match loaded) and may return an input (stamped on the monotonic clock, as
# `submit` takes them) to apply at once.
TimedCall = Callable[[Engine | None], Input | None]

@dataclass(frozen=True)
class TimedCallAt:
    at: int               # monotonic instant
    action: TimedCall

Arrival = tuple[Input | Task, Reply | None] | TimedCallAt

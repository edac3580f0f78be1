"""One writer thread per I²C bus: the panels' frames leave the clock's thread.

A frame takes milliseconds on the bus (a whole one 23 ms at 400 kHz, 93 ms at 100 kHz); written
on the clock's loop it would delay the next input, timer and journal write by as much. So
`Panel.show` only hands its frame to the writer of its bus and returns. The writer keeps one slot
per panel: a frame handed over while an older one still waits replaces it (the stale one is never
sent: the glass only ever needs the newest picture). Both panels usually share bus 1, so one
thread per bus also keeps their transfers from interleaving on it.

While the clock's loop syncs the journal, it renders the frames that show the new records
beside the sync and `hold`s the writer: frames handed over meanwhile wait (the newest per panel)
and leave only at `release`, once the records are on the card.

When both panels' frames wait (a press changes both), they leave together: each panel plans its
windows, and their messages go in one `I2C_RDWR` ioctl (`i2c_rdwr.Batch`: the kernel entered
once, the second panel planned while the first's bytes are still hot); a panel whose messages
fail after its `write` hears it through its `write_failed`.

While no frame waits, the writer rewrites, one small piece at a time, the glass of a panel that
asked for it (`Target.rewrite_step`), so a rewrite never holds a frame back by more than a piece.

The thread starts with the first frame and ends when the last panel on it has been detached
(`detach`, from `Panel.close`). At exit the frames still waiting are written (bounded), before
luma's own exit hooks close the bus.
"""

from __future__ import annotations

import atexit
import logging
import threading
import time
from typing import Protocol

from . import i2c_rdwr

log = logging.getLogger(__name__)

EXIT_FLUSH_S = 1.0        # at exit, the waiting frames get this long (a full frame: 0.1 s)


class Target(Protocol):
    """What the writer writes to: a panel (see `Panel`)."""

    name: str

    def write(self, job: object) -> bool:
        """Write `job` (a frame) to the device; whether glass waits to be rewritten. Never
        raises."""

    def rewrite_step(self) -> bool:
        """Rewrite one piece of the glass; whether more pieces wait. Never raises."""


class BusWriter:
    """The writer of one bus (see the module's docstring)."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._cond = threading.Condition()
        self._pending: dict[Target, object] = {}     # the newest unwritten job per target
        self._rewrites: dict[Target, None] = {}      # targets with glass to rewrite, in order
        self._attached: set[Target] = set()
        self._active: tuple[Target, ...] = ()         # the targets being written to
        self._thread: threading.Thread | None = None
        self._holding = False
        self._held: dict[Target, object] = {}        # frames handed over while held
        self.written = 0
        self.dropped = 0                             # frames superseded before they were sent

    # --- the clock's side ----------------------------------------------------------------------

    def submit(self, target: Target, job: object) -> None:
        """Hand `job` over for `target`, replacing one still waiting; returns at once. While
        the writer is held it waits for `release`."""
        with self._cond:
            if self._holding:
                if self._held.pop(target, None) is not None:
                    self.dropped += 1
                self._held[target] = job
                self._attached.add(target)
                return
            if self._pending.pop(target, None) is not None:
                self.dropped += 1
            self._pending[target] = job              # at the end: the other panel goes first
            self._attached.add(target)
            self._start()
            self._cond.notify_all()

    def hold(self) -> None:
        """Keep the frames handed over from now on until `release` (the journal's sync: a
        frame leaves for the glass only once what it shows is on the card)."""
        with self._cond:
            self._holding = True

    def release(self) -> None:
        """Let the frames held go to the glass (each still replaces an older one waiting)."""
        with self._cond:
            self._holding = False
            held, self._held = self._held, {}
            for target, job in held.items():
                if self._pending.pop(target, None) is not None:
                    self.dropped += 1
                self._pending[target] = job
            if held:
                self._start()
                self._cond.notify_all()

    def flush(self, target: Target | None = None, timeout: float = 1.0) -> bool:
        """Wait until `target`'s (or every) waiting frame is written; whether it was in time.
        Rewrites of the glass do not count: they are background work."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while self._busy_with(target):
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._cond.wait(left)
            return True

    def detach(self, target: Target, timeout: float = 1.0) -> bool:
        """Never touch `target` again (a frame still waiting is dropped: `flush` first); whether
        the writer let go of it within `timeout` (if not, it is still writing to it)."""
        deadline = time.monotonic() + timeout
        with self._cond:
            self._pending.pop(target, None)
            self._held.pop(target, None)
            self._rewrites.pop(target, None)
            self._attached.discard(target)
            self._cond.notify_all()                  # the thread ends if nothing is attached
            while target in self._active:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._cond.wait(left)
        return True

    def hold_at_exit(self) -> None:
        """Have the waiting frames written at exit, before the exit hooks registered so far
        (luma registers one per device that closes its bus: call this after opening one)."""
        atexit.unregister(self._flush_at_exit)
        atexit.register(self._flush_at_exit)

    def _flush_at_exit(self) -> None:
        if not self.flush(timeout=EXIT_FLUSH_S):
            log.warning("%s: frames still unwritten at exit", self.name)

    def _busy_with(self, target: Target | None) -> bool:
        if target is None:
            return bool(self._pending) or bool(self._active)
        return target in self._pending or target in self._active

    # --- the writer's side ---------------------------------------------------------------------

    def _start(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name=f"{self.name} writer",
                                            daemon=True)
            self._thread.start()

    def _run(self) -> None:
        while True:
            with self._cond:
                work = self._next()
                while not work:
                    if not self._attached:
                        self._thread = None
                        return
                    self._cond.wait()
                    work = self._next()
                self._active = tuple(target for target, _ in work)
            done = self._write(work)
            with self._cond:
                self._active = ()
                for (target, job), more in zip(work, done, strict=True):
                    self.written += job is not None
                    if more and target in self._attached:
                        self._rewrites[target] = None
                self._cond.notify_all()

    def _write(self, work: list[tuple[Target, object | None]]) -> list[bool]:
        """Write each piece of `work`; whether its target has glass left to rewrite. Several
        frames (both panels' at a press) leave in one ioctl (`i2c_rdwr.Batch`)."""
        if len(work) == 1:
            target, job = work[0]
            return [self._attempt(target, job)]
        batch = i2c_rdwr.Batch()
        done = []
        with batch.gather():
            for target, job in work:
                batch.owner = target
                done.append(self._attempt(target, job))
        for owner, exc in batch.send():
            target, job = next((t, j) for t, j in work if t is owner)
            try:
                target.write_failed(job, exc)   # type: ignore[attr-defined]
            except Exception:   # a target that raises must not end the writer
                log.exception("%s: writing to %s failed", self.name, target.name)
        return done

    def _attempt(self, target: Target, job: object | None) -> bool:
        try:
            return target.rewrite_step() if job is None else target.write(job)
        except Exception:   # a target that raises must not end the writer
            log.exception("%s: writing to %s failed", self.name, target.name)
            return False

    def _next(self) -> list[tuple[Target, object | None]]:
        """The next piece of work: the oldest waiting frame — every waiting frame when each of
        their targets takes a failure after its write (`write_failed`: they leave together) —
        else one rewrite piece; none when nothing waits."""
        if self._pending:
            if len(self._pending) > 1 and all(hasattr(t, "write_failed") for t in self._pending):
                work: list[tuple[Target, object | None]] = list(self._pending.items())
                self._pending.clear()
                return work
            target = next(iter(self._pending))
            return [(target, self._pending.pop(target))]
        if self._rewrites:
            target = next(iter(self._rewrites))
            del self._rewrites[target]
            return [(target, None)]
        return []


_writers: dict[int, BusWriter] = {}
_writers_lock = threading.Lock()


def writer_for_bus(port: int) -> BusWriter:
    """The one writer of I²C bus `port` (shared by every panel on it)."""
    with _writers_lock:
        if port not in _writers:
            _writers[port] = BusWriter(f"i2c-{port}")
        return _writers[port]

"""The optional dice reader (SPEC §8): protocol lines from a serial port, as DiceEvents.

The port is anything `serial.serial_for_url` opens: a device (`/dev/ttyUSB0`, a
`/dev/serial/by-id/…` name), `socket://host:port`, `rfc2217://…`, or `loop://` in tests. It is
read on a thread of its own, so nothing here ever blocks the caller. Lines are ASCII, ending in
`\\n` or `\\r\\n`. A read returns whatever arrived when its timeout ends (as `readline` does), so
a fragment is kept until its terminator comes; each whole line is parsed with `dice.parse_line`
and sent to `sink` as `DiceEvent(t, message)`, `t` being the monotonic instant its terminator was
read. Garbage is logged with its raw bytes and skipped.

A reader cannot flood the clock: lines beyond a human rate (a burst of `BURST_LINES`, then
`LINES_PER_S` a second) are dropped unread, in whole chunks, and counted; the count reaches the
journal as a `DiceDropped` input when the flood pauses, at most every `DROP_REPORT_S` while it
lasts, and when the reader stops. An input the clock's inbox turns away counts as dropped too.

A reader that fails never stops the clock: on `SerialException` or `OSError` (an unplugged USB
adapter raises those, while the port's `closed` stays False) the port is closed, the fragment of
the dead connection dropped (logged), and the port reopened with exponential back-off (0.5 s
doubling to 10 s). Each change of state is logged once: connected, lost, cannot open (again only
when the reason changes); the attempts in between go to debug.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Protocol

import serial  # type: ignore[import-untyped]

from gammonclock.backoff import Backoff
from gammonclock.core.dice import DiceSyntaxError, parse_line
from gammonclock.core.match import DiceDropped, DiceEvent

log = logging.getLogger("gammonclock.hardware.dice")

LF = ord("\n")
MAX_LINE = 128                # bytes; the longest message is 12, so anything longer is garbage
READ_TIMEOUT_S = 0.1          # bounds how long stop() waits for a read in progress
BACKOFF_INITIAL_S = 0.5
BACKOFF_MAX_S = 10.0
# A human at a board rolls at most every second or two; an opening roll, a void and a reroll come
# in a handful. Beyond this a reader is faulty or hostile, and its lines are dropped unread.
BURST_LINES = 8
LINES_PER_S = 2
DROP_REPORT_S = 10.0          # while a flood lasts, its count is journaled this often


class LineBudget:
    """A token bucket over the lines of the port: `burst` at once, then `per_s` a second."""

    def __init__(self, burst: int, per_s: float) -> None:
        self.burst, self.per_s = burst, per_s
        self.tokens = float(burst)
        self.at: int | None = None

    def take(self, t: int) -> bool:
        if self.at is not None:
            self.tokens = min(self.burst, self.tokens + (t - self.at) / 1e9 * self.per_s)
        self.at = t
        if self.tokens >= 1:
            self.tokens -= 1
            return True
        return False


class Port(Protocol):
    """What the reader needs of an open pyserial port."""

    def read(self, size: int = ...) -> bytes: ...

    @property
    def in_waiting(self) -> int: ...

    def close(self) -> None: ...


Opener = Callable[[str, int, float], Port]        # (port, baudrate, read timeout) -> open port
Wait = Callable[[threading.Event, float], bool]   # wait up to s seconds; True if told to stop


def open_port(port: str, baudrate: int, timeout: float) -> Port:
    """A pyserial port for a device path or URL, 8N1 without flow control."""
    opened: Port = serial.serial_for_url(port, baudrate=baudrate, timeout=timeout)
    return opened


def _wait(stop: threading.Event, seconds: float) -> bool:
    return stop.wait(seconds)


class DiceReader:
    """Reads dice messages from `port` on its own thread until `stop()`.

    `sink` gets each DiceEvent, and a DiceDropped for lines dropped over the rate (it is called
    on the reader's thread: a queue's `put` fits; a sink that returns False turned the input
    away, and it is counted as dropped).
    `wait` is how the back-off waits (injectable so tests need not wait seconds); `opener`
    opens the port (`serial.serial_for_url` by default).
    """

    def __init__(self, port: str, baudrate: int,
                 sink: Callable[[DiceEvent | DiceDropped], object],
                 clock_ns: Callable[[], int] = time.monotonic_ns,
                 log: logging.Logger = log, *,
                 read_timeout_s: float = READ_TIMEOUT_S,
                 backoff_initial_s: float = BACKOFF_INITIAL_S,
                 backoff_max_s: float = BACKOFF_MAX_S,
                 wait: Wait = _wait, opener: Opener = open_port,
                 max_line: int = MAX_LINE, burst_lines: int = BURST_LINES,
                 lines_per_s: float = LINES_PER_S,
                 drop_report_s: float = DROP_REPORT_S) -> None:
        self.port = port
        self.baudrate = baudrate
        self._sink = sink
        self._clock_ns = clock_ns
        self._log = log
        self._read_timeout_s = read_timeout_s
        self._backoff_initial_s = backoff_initial_s
        self._backoff_max_s = backoff_max_s
        self._wait = wait
        self._opener = opener
        self._max_line = max_line
        self._stop = threading.Event()
        self._connected = threading.Event()
        self._thread: threading.Thread | None = None
        self._open_error: str | None = None   # the last reason the port would not open
        self._budget = LineBudget(burst_lines, lines_per_s)
        self._drop_report_ns = int(drop_report_s * 1e9)
        self.dropped = 0                      # lines dropped since the last DiceDropped
        self._flood_since: int | None = None  # when the unreported drops began

    # --- control ----------------------------------------------------------------------------

    def start(self) -> None:
        """Start reading on a daemon thread and return at once (opening happens there)."""
        if self._thread is not None:
            raise RuntimeError("the dice reader was already started")
        self._thread = threading.Thread(target=self._run, name="gammonclock-dice", daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 2.0) -> bool:
        """Stop reading and close the port; True if the thread ended within `timeout` s.

        The thread notices within one read timeout (0.1 s) or at once while backing off;
        closing a socket:// port adds 0.3 s (pyserial sleeps there, for quick reconnects).
        """
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout)
            return not self._thread.is_alive()
        return True

    @property
    def connected(self) -> bool:
        return self._connected.is_set()

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def wait_connected(self, timeout: float) -> bool:
        """Wait until the port is open; False after `timeout` seconds."""
        return self._connected.wait(timeout)

    def __enter__(self) -> DiceReader:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # --- the thread -------------------------------------------------------------------------

    def _run(self) -> None:
        backoff = Backoff(self._backoff_initial_s, self._backoff_max_s)
        delay: float | None = None           # no wait before the first attempt
        while True:
            if delay is not None and self._wait(self._stop, delay):
                break
            if self._stop.is_set():
                break
            port = self._open()
            if port is None:
                delay = backoff.failed()
                continue
            try:
                self._serve(port)
            except Exception:             # a bug must not end the thread: log, reopen
                self._log.exception("dice reader: unexpected error on %s", self.port)
            finally:
                self._connected.clear()
                self._close(port)
            backoff.succeeded()              # it was connected: after a loss, start over
            delay = backoff.failed()
        self._report_drops(self._clock_ns())
        self._log.debug("dice reader on %s stopped", self.port)

    def _open(self) -> Port | None:
        try:
            port = self._opener(self.port, self.baudrate, self._read_timeout_s)
        except Exception as exc:   # SerialException, OSError; ValueError for a bad URL
            reason = f"{type(exc).__name__}: {exc}"
            if reason != self._open_error:
                self._log.warning("dice reader: cannot open %s (%s); retrying with back-off up "
                                  "to %g s", self.port, reason, self._backoff_max_s)
            else:
                self._log.debug("dice reader: still cannot open %s", self.port)
            self._open_error = reason
            return None
        self._open_error = None
        self._connected.set()
        self._log.info("dice reader: connected to %s at %d baud", self.port, self.baudrate)
        return port

    def _close(self, port: Port) -> None:
        try:
            port.close()
        except Exception as exc:
            self._log.debug("dice reader: closing %s: %s", self.port, exc)

    def _serve(self, port: Port) -> None:
        """Read lines until the port fails or stop() is called."""
        pending = bytearray()                 # bytes after the last terminator
        skipping = False                      # inside an over-long line, until its terminator
        while not self._stop.is_set():
            before = len(pending)
            try:
                # One byte or the read timeout, then whatever else is waiting; each read is
                # kept at once, so a failure in the second still shows what was lost.
                pending += port.read(1)
                if len(pending) > before and (waiting := port.in_waiting):
                    pending += port.read(waiting)
            except (serial.SerialException, OSError) as exc:
                self._log.warning("dice reader: lost %s (%s: %s); reconnecting with back-off",
                                  self.port, type(exc).__name__, exc)
                if pending and not skipping:
                    self._log.warning("dice reader: dropped the unfinished line %r",
                                      bytes(pending))
                return
            except Exception:
                self._log.exception("dice reader: unexpected error reading %s; reconnecting",
                                    self.port)
                return
            if len(pending) == before:
                if self.dropped:
                    self._report_drops(self._clock_ns())   # the flood has paused
                continue                      # the read timed out with nothing new
            t = self._clock_ns()              # the terminators in these bytes are here now
            while (end := pending.find(LF)) >= 0:
                if skipping:
                    skipping = False          # the end of an over-long line: dropped
                elif not self._budget.take(t):
                    # Over the rate: every whole line of this chunk goes at once, unread (cheap
                    # however fast the port floods).
                    last = pending.rfind(LF)
                    self._drop(pending.count(LF, 0, last + 1), t)
                    del pending[:last + 1]
                    break
                else:
                    self._line(bytes(pending[:end + 1]), t)
                del pending[:end + 1]
            if self._flood_since is not None and t - self._flood_since >= self._drop_report_ns:
                self._report_drops(t)         # a flood that does not pause: report as it goes
            if skipping:
                pending.clear()
            elif len(pending) > self._max_line:
                self._log.warning("dice reader: garbage %r… (longer than %d bytes), skipped to "
                                  "its end", bytes(pending[:40]), self._max_line)
                pending.clear()
                skipping = True

    def _line(self, raw: bytes, t: int) -> None:
        if len(raw) > self._max_line:
            self._log.warning("dice reader: garbage %r… (longer than %d bytes), ignored",
                              raw[:40], self._max_line)
            return
        try:
            message = parse_line(raw)
        except DiceSyntaxError as exc:
            self._log.warning("dice reader: garbage %r (%s), ignored", raw, exc)
            return
        if self.dropped:
            self._report_drops(t)             # the drops came before this line
        try:
            if self._sink(DiceEvent(t, message)) is False:
                self._drop(1, t)
        except Exception:
            self._log.exception("dice reader: %r not delivered", raw)

    def _drop(self, count: int, t: int) -> None:
        if not self.dropped and self._flood_since is None:
            self._log.warning("dice reader: %s sends more lines than dice are rolled; dropping "
                              "them unread (the count goes to the journal)", self.port)
        if self._flood_since is None:
            self._flood_since = t
        self.dropped += count

    def _report_drops(self, t: int) -> None:
        """Tell the clock how many lines were dropped since the last report."""
        count, self.dropped, self._flood_since = self.dropped, 0, None
        if not count:
            return
        self._log.warning("dice reader: %d lines dropped", count)
        try:
            if self._sink(DiceDropped(t, count)) is False:
                self.dropped += count         # the inbox is full: report them later
                self._flood_since = t
        except Exception:
            self._log.exception("dice reader: the count of dropped lines was not delivered")

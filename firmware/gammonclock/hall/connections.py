"""The page's connections, bounded (SPEC §14; issue 18): how many per address and in all, how long a
request may dribble in, file descriptors kept for the archive and the broker (`Gate`,
`GuardedSite`), and a log that says a flood once rather than once per connection (`QuietLog`)."""

from __future__ import annotations

import asyncio
import ipaddress
import logging
import time
from collections import OrderedDict, deque
from collections.abc import Callable
from dataclasses import dataclass, field

from aiohttp import web

log = logging.getLogger(__name__)


FD_RESERVE = 256              # file descriptors the page may never take (archive, broker, logs)

@dataclass(frozen=True)
class Limits:
    """What one connection to the page may take. The stream `/events` lives as long as the page
    is open: only its request (headers) is timed, and a page that stops reading it is dropped."""

    header_s: float = 10.0      # from the accept to the end of the first request's headers
    idle_s: float = 10.0        # a kept-alive connection between requests, the next request's
                                # headers included (aiohttp's keepalive_timeout)
    body_s: float = 30.0        # a request's body, once its headers are in
    stall_s: float = 30.0       # the peer reads nothing of what it was sent
    per_address: int = 32       # open connections from one client address
    total: int = 512            # and in all (lowered to leave FD_RESERVE of the open-file limit)

def open_files_limit() -> int:
    """The process's soft limit of open files (a large number where there is none)."""
    try:
        import resource
    except ImportError:                           # not on Unix
        return 1 << 16
    soft, _hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    return soft if soft != resource.RLIM_INFINITY else 1 << 16

@dataclass
class GateCounts:
    """What the gate did, for the log and the tests."""

    admitted: int = 0
    refused: int = 0          # beyond a cap, nobody to close in its place
    evicted: int = 0          # closed in favour of a newer one (it still had no headers)
    late: int = 0             # its headers did not come within the deadline
    stalled: int = 0          # it read nothing it was sent for `stall_s`

    @property
    def turned_away(self) -> int:
        return self.refused + self.evicted + self.late + self.stalled

    def summary(self) -> str:
        return (f"{self.admitted} connections taken; {self.refused} refused at a cap, "
                f"{self.evicted} closed to make room, {self.late} closed for want of headers, "
                f"{self.stalled} closed for reading nothing")

@dataclass
class Gate:
    """aiohttp's protocol factory behind caps and deadlines: every accepted connection passes
    here before aiohttp sees it (aiohttp itself has no deadline for a first request's headers and
    no cap on connections)."""

    server: Callable[[], asyncio.Protocol]
    limits: Limits = field(default_factory=Limits)
    counts: GateCounts = field(default_factory=GateCounts)

    def __post_init__(self) -> None:
        self.total = max(16, min(self.limits.total, open_files_limit() - FD_RESERVE))
        self.per_address = min(self.limits.per_address, self.total)
        self.by_address: dict[str, set[GuardedConnection]] = {}
        self.open = 0
        self.waiting: dict[GuardedConnection, None] = {}   # no headers yet, oldest first

    def __call__(self) -> asyncio.Protocol:
        return GuardedConnection(self)

    def admit(self, connection: GuardedConnection) -> bool:
        # The caps first, the set last: an eviction may empty this address's set and drop it
        # from the map (`release`), and a connection added to a set no longer there was never
        # counted out: `open` crept up until every connection was refused.
        here = len(self.by_address.get(connection.address, ()))
        if here >= self.per_address and not self._evict(connection.address):
            return self._refuse(connection, f"{self.per_address} from this address")
        if self.open >= self.total and not self._evict(None):
            return self._refuse(connection, f"{self.total} in all")
        self.by_address.setdefault(connection.address, set()).add(connection)
        self.open += 1
        self.waiting[connection] = None
        self.counts.admitted += 1
        return True

    def _refuse(self, connection: GuardedConnection, cap: str) -> bool:
        self.counts.refused += 1
        log.warning("page: connections refused at the cap (%s)", cap)
        return False

    def _evict(self, address: str | None) -> bool:
        for old in self.waiting:
            if address is None or old.address == address:
                self.counts.evicted += 1
                log.warning("page: connections closed before their headers to make room")
                old.drop()
                return True
        return False

    def release(self, connection: GuardedConnection) -> None:
        self.waiting.pop(connection, None)
        mine = self.by_address.get(connection.address)
        if mine is not None and connection in mine:
            mine.discard(connection)
            self.open -= 1
            if not mine:
                del self.by_address[connection.address]

class GuardedConnection(asyncio.Protocol):
    """One connection: aiohttp's protocol inside, with the header deadline, the stall deadline
    and the gate's bookkeeping around it."""

    def __init__(self, gate: Gate) -> None:
        self.gate = gate
        self.inner: asyncio.Protocol | None = None
        self.transport: asyncio.Transport | None = None
        self.address = "?"
        self._tail = b""
        self._begun = False          # a byte other than CR or LF came (the request line)
        self._headers: asyncio.TimerHandle | None = None
        self._stall: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport
        peer = transport.get_extra_info("peername")
        self.address = str(peer[0]) if isinstance(peer, tuple) and peer else "?"
        if not self.gate.admit(self):
            transport.abort()
            return
        loop = asyncio.get_running_loop()
        self._headers = loop.call_later(self.gate.limits.header_s, self._late)
        self.inner = self.gate.server()
        self.inner.connection_made(transport)

    def data_received(self, data: bytes) -> None:
        chunk = data
        if self._headers is not None and not self._begun:   # blank lines before a request
            chunk = chunk.lstrip(b"\r\n")
            self._begun = bool(chunk)
        if self._headers is not None and chunk:
            seen = self._tail + chunk
            if b"\n\r\n" in seen or b"\n\n" in seen:       # the end of the request's headers
                self._headers.cancel()
                self._headers = None
                self.gate.waiting.pop(self, None)
            else:
                self._tail = seen[-2:]
        if self.inner is not None:
            self.inner.data_received(data)

    def eof_received(self) -> bool | None:
        return self.inner.eof_received() if self.inner is not None else None

    def pause_writing(self) -> None:
        if self._stall is None:
            self._stall = asyncio.get_running_loop().call_later(self.gate.limits.stall_s,
                                                                 self._stalled)
        if self.inner is not None:
            self.inner.pause_writing()

    def resume_writing(self) -> None:
        if self._stall is not None:
            self._stall.cancel()
            self._stall = None
        if self.inner is not None:
            self.inner.resume_writing()

    def connection_lost(self, exc: Exception | None) -> None:
        self._cancel_timers()
        self.gate.release(self)
        if self.inner is not None:
            inner, self.inner = self.inner, None
            inner.connection_lost(exc)

    def drop(self) -> None:
        """Close now, and count this connection out at once (not when the loop reports it)."""
        self._cancel_timers()
        self.gate.release(self)
        if self.transport is not None:
            self.transport.abort()

    def _late(self) -> None:
        self._headers = None
        self.gate.counts.late += 1
        log.warning("page: connections closed: no request headers within %g s",
                    self.gate.limits.header_s)
        self.drop()

    def _stalled(self) -> None:
        self._stall = None
        self.gate.counts.stalled += 1
        log.warning("page: connections closed: the peer read nothing for %g s",
                    self.gate.limits.stall_s)
        self.drop()

    def _cancel_timers(self) -> None:
        for timer in (self._headers, self._stall):
            if timer is not None:
                timer.cancel()
        self._headers = self._stall = None

class GuardedSite(web.BaseSite):
    """A TCP site whose connections pass through a `Gate` (aiohttp's TCPSite, with the gate's
    protocol factory in place of the runner's server)."""

    __slots__ = ("_host", "_port", "gate")

    def __init__(self, runner: web.BaseRunner, host: str, port: int,
                 limits: Limits | None = None) -> None:
        super().__init__(runner)
        assert runner.server is not None
        self._host, self._port = host, port
        self.gate = Gate(runner.server, limits or Limits())

    @property
    def name(self) -> str:
        shown = f"[{self._host}]" if ":" in self._host else self._host
        return f"http://{shown}:{self._port}"

    async def start(self) -> None:
        await super().start()
        loop = asyncio.get_running_loop()
        self._server = await loop.create_server(self.gate, self._host or None, self._port,
                                                backlog=self._backlog, reuse_address=True)

class QuietLog(logging.Filter):
    """At most one record of a kind (logger and the first line of its message) per window; the
    next one says how many were left out, and a traceback becomes one line. A flood of bad
    connections then costs a few lines a minute, not megabytes."""

    KINDS_KEPT = 256

    def __init__(self, window_s: float = 10.0,
                 clock: Callable[[], float] = time.monotonic) -> None:
        super().__init__()
        self.window_s, self.clock = window_s, clock
        self.kinds: dict[tuple[str, str], list[float]] = {}    # kind -> [last shown, left out]

    def filter(self, record: logging.LogRecord) -> bool:
        kind = (record.name, str(record.msg).split("\n", 1)[0][:200])
        now = self.clock()
        seen = self.kinds.get(kind)
        if seen is not None and now - seen[0] < self.window_s:
            seen[1] += 1
            return False
        if len(self.kinds) >= self.KINDS_KEPT:
            self.kinds = {k: v for k, v in self.kinds.items() if now - v[0] < self.window_s}
        left_out = int(seen[1]) if seen is not None else 0
        self.kinds[kind] = [now, 0]
        message = record.getMessage().split("\n", 1)[0]
        if record.exc_info and record.exc_info[1] is not None:
            exc = record.exc_info[1]
            message += f": {type(exc).__name__}: {exc}"
        if left_out:
            message += f" (and {left_out} more like this in the last {self.window_s:g} s)"
        record.msg, record.args = message, None
        record.exc_info = record.exc_text = None
        record.stack_info = None
        return True

NOISY_LOGGERS = ("asyncio", "aiohttp.server", "aiohttp.web", "aiohttp.access",
                 "aiohttp.internal", __name__)

def quiet_logs(window_s: float = 10.0) -> QuietLog:
    """Rate-limit the loggers a hostile network can make talk (accept errors, bad requests,
    refused connections)."""
    quiet = QuietLog(window_s)
    for name in NOISY_LOGGERS:
        logger = logging.getLogger(name)
        for old in [f for f in logger.filters if isinstance(f, QuietLog)]:
            logger.removeFilter(old)
        logger.addFilter(quiet)
    return quiet


class WrongPasswords:
    """Wrong page passwords per address (HTTP Basic has no lockout of its own): after
    `allowed` wrong ones within `window_s`, that address waits out the window before it may
    try again (a 429), so a page password cannot be guessed at the rate 32 connections allow.
    A right password does not clear the count (a guesser who found it still waits). An IPv6
    address counts by its /64 (one machine may take any address of its /64). At most
    `MAX_ADDRESSES` are remembered; one whose window is over is forgotten first, and while all
    of them are within theirs a new address waits as a held one does: a flood of addresses
    costs bounded memory and buys no more guesses."""

    MAX_ADDRESSES = 4096

    def __init__(self, allowed: int = 10, window_s: float = 60.0,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.allowed, self.window_s, self.clock = allowed, window_s, clock
        self._wrong: OrderedDict[str, deque[float]] = OrderedDict()

    @staticmethod
    def who(address: str) -> str:
        """What one guesser is: an IPv4 address, or an IPv6 address's /64."""
        try:
            ip = ipaddress.ip_address(address)
        except ValueError:
            return address
        if isinstance(ip, ipaddress.IPv6Address):
            if ip.ipv4_mapped is not None:
                return str(ip.ipv4_mapped)
            return str(ipaddress.IPv6Network((ip, 64), strict=False))
        return str(ip)

    def wrong(self, address: str) -> None:
        now, who = self.clock(), self.who(address)
        times = self._wrong.pop(who, None)
        if times is None:
            while len(self._wrong) >= self.MAX_ADDRESSES:
                oldest = next(iter(self._wrong.values()))
                if oldest[-1] + self.window_s > now:
                    return              # all within their window: `wait_s` holds a new one
                self._wrong.popitem(last=False)
            times = deque(maxlen=self.allowed)
        times.append(now)
        self._wrong[who] = times

    def wait_s(self, address: str) -> int:
        """Seconds this address must still wait before a password is checked (0: none)."""
        now, who = self.clock(), self.who(address)
        times = self._wrong.get(who)
        if times is None:
            if len(self._wrong) < self.MAX_ADDRESSES:
                return 0
            # Every place is held by a guesser within its window: a new one waits for the
            # oldest's window to end.
            oldest = next(iter(self._wrong.values()))
            left = oldest[-1] + self.window_s - now
            return int(left) + 1 if left > 0 else 0
        if len(times) < self.allowed:
            return 0
        left = times[0] + self.window_s - now
        if left <= 0:
            return 0
        return int(left) + 1

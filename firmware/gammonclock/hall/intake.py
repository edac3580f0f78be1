"""The hall's intake from the broker (server.py takes each message): every table's messages wait
in a queue of their own and are taken one table after another, each table at most TABLE_RATE a
second (a token bucket), FAIR_BATCH at a time before the loop serves the pages again; and a
table's bad messages, logged at most once per BAD_LOG_EVERY_S for that table.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import OrderedDict, deque
from collections.abc import Callable

log = logging.getLogger("gammonclock.hall")

INBOX_PER_TABLE = 1000       # a table's messages waiting for the loop; more are dropped unread
FAIR_BATCH = 64              # messages taken in turn before the loop serves the pages again
TABLE_RATE = 200.0           # messages a second the hall takes of one table, at most...
TABLE_BURST = 400.0          # ... after a burst of this many (an honest table sends a window of
                             # 20 events per acknowledgement: it is paced at most, never dropped)
BAD_LOG_EVERY_S = 10.0       # a table's refused messages: one log line per this, with a count

Message = tuple[str, bytes, bool, int]      # topic, payload, retained, received (ms)


class BadMessages:
    """Each table's bad messages in the hall's log, one line per BAD_LOG_EVERY_S at most."""

    def __init__(self) -> None:
        self._bad_logged: dict[str, list[float]] = {}   # table -> [last logged, left out]

    def log(self, table: str, text: str) -> None:
        """A table's bad message, logged at most once per BAD_LOG_EVERY_S for that table (with
        how many were left out): a table flooding the hall never floods its log, and never
        hides another table's problem (each table has its own window)."""
        now = time.monotonic()
        seen = self._bad_logged.get(table)
        if seen is not None and now - seen[0] < BAD_LOG_EVERY_S:
            seen[1] += 1
            return
        left_out = int(seen[1]) if seen is not None else 0
        self._bad_logged[table] = [now, 0]
        log.warning("%s%s", text[:500], f" ({left_out} more bad messages from {table} left out)"
                    if left_out else "")


class Intake:
    """The messages from the broker, queued per table and handed to `take` in turn, on the
    loop."""

    def __init__(self, prefix: str, take: Callable[[str, bytes, bool, int], None],
                 bad: BadMessages, closing: Callable[[], bool]) -> None:
        self.prefix = prefix
        self.take = take
        self.bad = bad
        self.closing = closing
        # Messages from the broker wait here per table and are taken one table at a time, in
        # turn: a table flooding the hall delays the others by one message each, not by its
        # whole flood (the broker's one connection hands them over in arrival order).
        self._inbox: OrderedDict[str, deque[Message]] = OrderedDict()
        self._tokens: dict[str, tuple[float, float]] = {}    # table -> (tokens, monotonic)
        self._draining = False
        self.dropped = 0

    def receive(self, topic: str, payload: bytes, retained: bool, received_ms: int) -> None:
        """A message from the broker (on the loop): queued under its table, taken in turn."""
        head = self.prefix + "/"
        table = topic[len(head):].partition("/")[0] if topic.startswith(head) else ""
        queue = self._inbox.get(table)
        if queue is None:
            queue = self._inbox[table] = deque()
        elif len(queue) >= INBOX_PER_TABLE:
            self.dropped += 1             # an event dropped is not acknowledged: sent again
            self.bad.log(table, f"{topic}: {INBOX_PER_TABLE} messages of this table wait for "
                                "the hall; dropped unread")
            return
        queue.append((topic, payload, retained, received_ms))
        if not self._draining:
            self._draining = True
            asyncio.get_running_loop().call_soon(self._drain)

    def _drain(self) -> None:
        """Take up to FAIR_BATCH waiting messages, one table after another, each table at most
        TABLE_RATE a second: a flood waits in its own queue and costs the hall's loop (and the
        GIL that paho's network thread needs to read every other table's messages) little."""
        taken = skipped = 0
        while self._inbox and taken < FAIR_BATCH and skipped < len(self._inbox):
            table, queue = next(iter(self._inbox.items()))
            if not self._token(table):
                self._inbox.move_to_end(table)
                skipped += 1
                continue
            skipped = 0
            message = queue.popleft()
            if queue:
                self._inbox.move_to_end(table)
            else:
                del self._inbox[table]
            taken += 1
            try:
                self.take(*message)
            except Exception:     # a bug with one message never stops the hall's intake
                log.exception("%s: the hall failed on this message", message[0])
        loop = asyncio.get_running_loop()
        if not self._inbox or self.closing():
            self._draining = False
        elif taken:
            loop.call_soon(self._drain)
        else:                     # every table waiting is over its rate: wait for a token
            loop.call_later(1 / TABLE_RATE, self._drain)

    def _token(self, table: str) -> bool:
        """Whether `table` may have a message taken now (a token bucket per table)."""
        now = time.monotonic()
        tokens, at = self._tokens.get(table, (TABLE_BURST, now))
        tokens = min(TABLE_BURST, tokens + (now - at) * TABLE_RATE)
        if len(self._tokens) > 4096:                  # table names come from topics: bounded
            self._tokens = {t: v for t, v in self._tokens.items() if t in self._inbox}
        if tokens < 1:
            self._tokens[table] = (tokens, now)
            return False
        self._tokens[table] = (tokens - 1, now)
        return True

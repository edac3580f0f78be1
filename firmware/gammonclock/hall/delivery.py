"""The hall's acknowledgements (SPEC §14, hall/PROTOCOL.md `ack`): how far the hall holds each
table's events without a gap, and which finished journals its archive has written and checked
(archived, whatever the verdict: a TAMPERED one is archived and said so, not "verified").

A table's outbox advances only on these (never on the broker's PUBACK), so a broker that drops a
message, another client that took a table's or the hall's connection, or an archive that could
not write loses nothing: the table publishes again from the position the hall acknowledged.

- Each event names the seq of the event of its journal published before it (`after`, 0 for the
  first): the hall moves a table's position only along that chain, so a message lost on the way
  is a gap the ack stays behind. A few events beyond a gap are kept (`AHEAD_MAX`) and count once
  the gap is filled.
- One ack per table at most every ACK_EVERY_S, at once when ACK_AT_ONCE (half the clock's
  window) are waiting; retained, so a restarted hall reads its own positions back (and a table
  reconnecting finds where to go on).
- Pure bookkeeping: no broker, no clock, no file here (acks.py publishes, archiving.py archives).
"""

from __future__ import annotations

import logging
from collections import OrderedDict, deque
from dataclasses import dataclass, field
from typing import Any

from gammonclock.wire import MAX_ARCHIVED, Ack

from .messages import strict_json

log = logging.getLogger("gammonclock.hall")

ACK_EVERY_S = 0.15       # an ack per table at most this often...
ACK_AT_ONCE = 10         # ... but at once when this many events wait for it (half a window)
ACK_GRACE_S = 2.0        # after the hall starts, its retained acks come back before it says
                         # "I hold nothing" to a table it has not heard of yet
AHEAD_MAX = 64           # events kept beyond a gap (the clock's window is 20)
JOURNALS_KEPT = 16       # journals per table whose highest seq (and past positions) are kept
REJECT_TRIES = 2         # an event the view refuses is acknowledged when sent this many times
MAX_NAME = 255


@dataclass(frozen=True)
class EventKey:
    journal: str
    seq: int
    after: int


def event_key(payload: bytes) -> EventKey | None:
    """The `(journal, seq, after)` of an event message, strictly parsed; None when it carries
    no `after` (a clock from before the hall acknowledged: shown, not tracked). ValueError
    naming the field for anything else that is not an event."""
    try:
        data = strict_json(payload)          # as the view reads it: no NaN, bounded
    except (ValueError, RecursionError) as exc:
        raise ValueError(f"not JSON ({exc})") from None
    if not isinstance(data, dict):
        raise ValueError("not a JSON object")
    journal, seq, after = data.get("journal"), data.get("seq"), data.get("after")
    if not isinstance(journal, str) or not 0 < len(journal) <= MAX_NAME:
        raise ValueError("`journal` must be a journal name")
    if type(seq) is not int or not 0 < seq < 2**53:
        raise ValueError("`seq` must be a whole number > 0")
    if after is None and "after" not in data:
        return None
    if type(after) is not int or not 0 <= after < seq:
        raise ValueError("`after` must be a whole number from 0 to seq - 1")
    return EventKey(journal, seq, after)


@dataclass
class TablePosition:
    """What the hall holds of one table."""

    journal: str | None = None
    seq: int = 0
    known: bool = False                 # from an event chain or the hall's own retained ack
    ahead: dict[tuple[str, int], int] = field(default_factory=dict)   # (journal, after) -> seq
    past: deque[str] = field(default_factory=lambda: deque(maxlen=JOURNALS_KEPT))
    highest: OrderedDict[str, int] = field(default_factory=OrderedDict)   # journal -> seq seen
    archived: deque[str] = field(default_factory=lambda: deque(maxlen=MAX_ARCHIVED))
    rejected: dict[tuple[str, int], int] = field(default_factory=dict)
    waiting: int = 0                    # events taken since the last ack
    due: bool = False                   # an ack is to be published

    def seen(self, journal: str, seq: int) -> None:
        if seq > self.highest.get(journal, -1):
            self.highest[journal] = seq
        self.highest.move_to_end(journal)
        while len(self.highest) > JOURNALS_KEPT:
            self.highest.popitem(last=False)

    def take(self, key: EventKey) -> bool:
        """One event (counted or not by the view); True when the position moved."""
        self.seen(key.journal, key.seq)
        self.due = True
        self.waiting += 1
        if key.journal == self.journal:
            if key.seq <= self.seq:
                return False                     # held already
            if key.after == self.seq:
                self.seq = key.seq
                self._follow()
                return True
        elif key.after == 0 and key.journal not in self.past:
            if self.journal is not None:         # the table went on with its next journal
                self.past.append(self.journal)
            self.journal, self.seq, self.known = key.journal, key.seq, True
            self.ahead = {k: v for k, v in self.ahead.items() if k[0] == key.journal}
            self._follow()
            return True
        elif key.journal in self.past:
            return False                         # an older journal, sent again
        if len(self.ahead) >= AHEAD_MAX:         # a gap the table will fill by sending again
            self.ahead.pop(next(iter(self.ahead)))
        self.ahead[(key.journal, key.after)] = key.seq
        return False

    def _follow(self) -> None:
        while self.journal is not None and (self.journal, self.seq) in self.ahead:
            self.seq = self.ahead.pop((self.journal, self.seq))

    def seed(self, ack: Ack) -> bool:
        """The hall's own retained ack, read back after a restart: where it stood (unless it
        has learnt better since). True when it changed the position."""
        for name in sorted(ack.archived - set(self.archived)):
            self.archived.appendleft(name)
        if self.known or ack.journal is None:
            return False
        self.journal, self.seq, self.known = ack.journal, ack.seq, True
        self.seen(ack.journal, ack.seq)
        self._follow()
        self.due = True
        return True

    def note_archived(self, name: str) -> None:
        if name in self.archived:
            self.archived.remove(name)
        self.archived.append(name)
        self.due = True

    def rejected_again(self, key: EventKey) -> bool:
        """An event the view refused: True when it has now been refused REJECT_TRIES times
        (then it is acknowledged: a hall that cannot read one event must not stall the table
        for good; the record itself is in the journal, which reaches the archive)."""
        count = self.rejected.get((key.journal, key.seq), 0) + 1
        if len(self.rejected) > AHEAD_MAX:
            self.rejected.clear()
        self.rejected[(key.journal, key.seq)] = count
        return count >= REJECT_TRIES

    def payload(self, at: str) -> dict[str, Any]:
        return {"journal": self.journal, "seq": self.seq, "archived": list(self.archived),
                "at": at}

"""A round pushed over a round still playing (SPEC §13.2, §14; hall/PROTOCOL.md "`match`"): the
next match of a table whose match is in progress is queued at the hall, and published on the
table's retained `P/T/match` once the table's state says that match is over, or that it is idle
or ready. SPEC §13.2's rules still hold (the clock decides whether it loads); the hall only does
not send a load it knows will be refused.

- Each table has at most one next match here (`NextMatch`), in one of three states: `HELD` (the
  hall holds it: the table's match is in progress), `SENT` (published; the clock's answer on
  `notice` not seen yet) or `WAITING` (published, and the clock answered that its match is in
  progress: it holds the match and loads it by itself once that match is over; the notice
  says `pending`). A table's notice naming the match's sha256 settles it: loaded (`ok`), waiting
  (`match_in_progress`, a race: the match started between the state the hall saw and the load),
  or refused otherwise (said on the card as before).
- A second push to a table replaces its next match (the reply says which round it replaced).
  One the clock holds as `WAITING` is replaced by publishing the new text at once: the clock
  swaps the match that waits (PROTOCOL.md), so the old one never loads.
- Only a table's own state moves its own next match (the state comes on `P/T/state`, which only
  T's account may write, and the match goes to `P/T/match` of the table it was pushed to): a
  table's message never sends another table's match.
- Kept in the archive folder (`QUEUE_FILE`: written beside, fsynced, renamed), so a restarted
  hall keeps what it had queued; the file is read bounded and checked as anything from disk.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Any

from gammonclock.journal.durable import read_kept_list, write_atomically

from .accounts import TABLE_ID
from .pairings import Pairing
from .view import MATCH_IN_PROGRESS, HallView

log = logging.getLogger("gammonclock.hall")

QUEUE_FILE = "queued-matches.json"     # in the archive folder (the archive lists folders only)
MAX_TABLES = 1000                      # as the view keeps
MAX_TEXT = 16 * 1024                   # a pushed match file is a few hundred bytes
MAX_FIELD = 300
MAX_QUEUE_FILE = MAX_TABLES * (2 * MAX_TEXT + 4 * MAX_FIELD)
LOADABLE = ("idle", "ready", "match_over")     # SPEC §13.2: a load is accepted in these


class Status(Enum):
    """Where a table's next match is."""

    HELD = "held"           # at the hall: the table's match is in progress
    SENT = "sent"           # published on P/T/match; the clock has not answered yet
    WAITING = "waiting"     # published; the clock holds it until its match is over


class Delivery(Enum):
    """What became of a pushed row, as the push's reply says it."""

    LOADED = "loaded"       # the clock said it loaded it
    SENT = "sent"           # published; no answer yet (offline, never seen, or slow)
    QUEUED = "queued"       # it loads when the table's match in progress is over
    REFUSED = "refused"     # the clock refused it (its card says why)


@dataclass(frozen=True)
class NextMatch:
    """A table's next match, as pushed: its match file and what the card says of it."""

    table: str
    text: str
    event: str
    round: str
    left: str
    right: str
    length: int
    pushed_ms: int

    @property
    def digest(self) -> str:
        """The sha256 a clock's notice names it by (the retained payload's, UTF-8)."""
        return hashlib.sha256(self.text.encode("utf-8")).hexdigest()

    def as_json(self) -> dict[str, Any]:
        return {"table": self.table, "text": self.text, "event": self.event,
                "round": self.round, "left": self.left, "right": self.right,
                "length": self.length, "pushed_ms": self.pushed_ms}

    @classmethod
    def parse(cls, data: object) -> NextMatch | None:
        """One entry of QUEUE_FILE, checked (None for anything else)."""
        if not isinstance(data, dict):
            return None
        table, text, length, at = (data.get("table"), data.get("text"), data.get("length"),
                                   data.get("pushed_ms"))
        words = [data.get(k) for k in ("event", "round", "left", "right")]
        if not isinstance(table, str) or TABLE_ID.fullmatch(table) is None \
                or not isinstance(text, str) or not 0 < len(text) <= MAX_TEXT \
                or type(length) is not int or not 1 <= length <= 99 \
                or type(at) is not int or not all(isinstance(w, str) and len(w) <= MAX_FIELD
                                                  for w in words):
            return None
        event, round_name, left, right = (str(w) for w in words)
        return cls(table, text, event, round_name, left, right, length, at)


@dataclass(frozen=True)
class Pushed:
    """A good row handed to the queue: what it did now, the next match it replaced, and the
    broker's acknowledgement of the publish (None: held at the hall)."""

    delivery: Delivery
    replaced: NextMatch | None
    published: asyncio.Future[None] | None


@dataclass
class _Entry:
    match: NextMatch
    status: Status
    answered: asyncio.Future[Delivery] | None = None   # a push waits on it (not kept on disk)
    forcing: bool = False        # the director's force of it is on its way (not sent meanwhile)


def loadable(state: dict[str, Any] | None) -> bool:
    """Whether the table, as its last state shows it, takes a next match now (SPEC §13.2: idle,
    ready or match over). A table never heard from decides when it connects (it reads its
    retained match then); a clock without `lifecycle` (an older one) only when idle or over."""
    if not state:
        return True
    lifecycle = state.get("lifecycle")
    if lifecycle is not None:
        return lifecycle in LOADABLE
    return state.get("phase") in ("idle", "match_over")


class NextMatches:
    """Each table's next match pushed by the director, until its clock has loaded it."""

    def __init__(self, archive: Path, prefix: str, view: HallView,
                 publish: Callable[[str, str], asyncio.Future[None]],
                 sent: Callable[[str], None], changed: Callable[[str], None],
                 moved_away: Callable[[str], str | None] = lambda _table: None) -> None:
        self.path = archive / QUEUE_FILE
        self.prefix = prefix
        self.view = view
        self.publish = publish          # (topic, text): retained, QoS 1
        self.sent = sent                # a next match pushed to or sent to the table
                                        # (moves.next_match)
        self.changed = changed
        self.moved_away = moved_away    # the journal the director moved off the table, if any
        self.entries: dict[str, _Entry] = {}

    def topic(self, table: str) -> str:
        return f"{self.prefix}/{table}/match"

    # --- the director's push ---------------------------------------------------------------

    def push(self, row: Pairing, event: str, round_name: str, now_ms: int) -> Pushed:
        """A good row of a pushed round: published now if its table takes a next match now (or
        holds the one it replaces as waiting: the clock swaps it), else held until it does.
        The caller saves once the round's rows are in (`save`)."""
        assert row.toml is not None and row.match is not None
        table = row.table
        match = NextMatch(table, row.toml, event[:MAX_FIELD], round_name[:MAX_FIELD],
                          row.match.left, row.match.right, row.match.length, now_ms)
        before = self.entries.pop(table, None)
        replaced = before.match if before is not None and before.status is not Status.SENT \
            else None
        if before is not None and before.answered is not None and not before.answered.done():
            before.answered.set_result(Delivery.SENT)
        waits_there = before is not None and before.status is Status.WAITING
        if waits_there or self._takes(table):
            entry = _Entry(match, Status.SENT)
            self.entries[table] = entry
            published = self._send(entry)
            delivery = Delivery.QUEUED if waits_there else Delivery.SENT
        else:
            self.entries[table] = _Entry(match, Status.HELD)
            published, delivery = None, Delivery.QUEUED
            self.sent(table)      # pushed: a moved notice the table took is cleared (moves.py)
        while len(self.entries) > MAX_TABLES:     # bounded: the oldest sent one goes first
            del self.entries[min(self.entries, key=lambda t: (
                self.entries[t].status is not Status.SENT, self.entries[t].match.pushed_ms))]
        self.changed(table)
        return Pushed(delivery, replaced, published)

    def _takes(self, table: str) -> bool:
        """Whether TABLE takes a next match now: its state says so, or its match in progress
        is the one the director moved away (its clock ends it on reading `moved`, then loads
        the match that waits: the clock orders the two)."""
        view = self.view.tables.get(table)
        state = view.state if view is not None else None
        if loadable(state):
            return True
        moved = self.moved_away(table)
        return moved is not None and state is not None and state.get("journal") == moved

    def answered(self, table: str) -> asyncio.Future[Delivery] | None:
        """The clock's answer to the match just sent to TABLE (a future of what it did)."""
        entry = self.entries.get(table)
        if entry is None or entry.status is not Status.SENT:
            return None
        if entry.answered is None:
            entry.answered = asyncio.get_running_loop().create_future()
        return entry.answered

    def _send(self, entry: _Entry) -> asyncio.Future[None]:
        entry.status = Status.SENT
        published = self.publish(self.topic(entry.match.table), entry.match.text)
        self.sent(entry.match.table)
        log.info("%s: round %r's match (%s v %s) sent", self.topic(entry.match.table),
                 entry.match.round, entry.match.left, entry.match.right)
        return published

    # --- from the table ----------------------------------------------------------------------

    def state_seen(self, table: str) -> None:
        """TABLE's state as the view now holds it: a next match held for it goes out once the
        table takes one (its match over, or idle or ready). Only TABLE's own."""
        entry = self.entries.get(table)
        view = self.view.tables.get(table)
        if entry is None or entry.status is not Status.HELD or entry.forcing or view is None \
                or view.state is None or not self._takes(table):
            return
        self._send(entry)
        self.save()
        self.changed(table)

    def notice_seen(self, table: str) -> bool:
        """TABLE's notice as the view now holds it: its answer to the match sent. True when it
        refused it only because its match is in progress and holds it (a race, or the match
        that waits replaced): the match is queued, not a refusal for the director."""
        entry = self.entries.get(table)
        view = self.view.tables.get(table)
        notice = view.notice if view is not None else None
        if entry is None or entry.status is Status.HELD or not notice \
                or notice.get("match") != entry.match.digest:
            return False
        if notice.get("ok") is True:
            outcome = Delivery.LOADED
            del self.entries[table]
        elif notice.get("code") == MATCH_IN_PROGRESS and notice.get("pending") is True:
            outcome = Delivery.QUEUED
            entry.status = Status.WAITING
            self.view.queued_again(table, entry.match.digest)
        else:
            outcome = Delivery.REFUSED
            del self.entries[table]
        if entry.answered is not None and not entry.answered.done():
            entry.answered.set_result(outcome)
        self.save()
        self.changed(table)
        return outcome is Delivery.QUEUED

    # --- the director forces it --------------------------------------------------------------

    def force(self, table: str, digest: str) -> str | None:
        """The text of TABLE's next match held here, when its sha256 is DIGEST (the one the
        director's confirmation named), for the page's "Force load…" to send with `new-match
        --force` (the clock holds no copy of it to force); until `forced` says how that went,
        the table's states do not send it."""
        entry = self.entries.get(table)
        if entry is None or entry.status is not Status.HELD or entry.match.digest != digest:
            return None
        entry.forcing = True
        return entry.match.text

    def forced(self, table: str, digest: str, loaded: bool) -> None:
        """TABLE's clock answered the force of DIGEST: loaded, it is queued no more; else (or
        no answer) it stays queued, sent as before once the table takes a next match."""
        entry = self.entries.get(table)
        if entry is None or entry.match.digest != digest:
            return
        entry.forcing = False
        if loaded:
            del self.entries[table]
            self.sent(table)
            self.save()
            self.changed(table)
        else:
            self.state_seen(table)

    # --- what the card says ------------------------------------------------------------------

    def card(self, table: str) -> dict[str, Any] | None:
        """The table's next match while it is queued (held here, or waiting at the clock)."""
        entry = self.entries.get(table)
        if entry is None or entry.status is Status.SENT:
            return None
        match = entry.match
        return {"round": match.round, "event": match.event, "left": match.left,
                "right": match.right, "length": match.length, "pushed_ms": match.pushed_ms,
                "status": entry.status.value, "match": match.digest}

    # --- on disk -------------------------------------------------------------------------------

    def save(self) -> None:
        data = [{**e.match.as_json(), "status": e.status.value} for e in self.entries.values()]
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            write_atomically(self.path, json.dumps(data, ensure_ascii=False).encode("utf-8"))
        except OSError as exc:
            log.warning("%s: the queued matches are not saved (a restarted hall will not know "
                        "them): %s", self.path, exc.strerror or exc)

    def load(self) -> str | None:
        """The next matches queued before a restart; what is wrong with the file, if anything."""
        data, problem = read_kept_list(self.path, MAX_QUEUE_FILE, "the queued matches")
        statuses = {s.value: s for s in Status}
        for item in data[:MAX_TABLES]:
            match = NextMatch.parse(item)
            status = statuses.get(str(item.get("status"))) if isinstance(item, dict) else None
            if match is not None and status is not None:
                self.entries[match.table] = _Entry(match, status)
        return problem

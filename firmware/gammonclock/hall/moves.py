"""The source clock told its match moved (SPEC §13.5, §14.1; hall/PROTOCOL.md "`moved`"): the
hall's retained `P/T/moved` (`wire.Moved`), published once the spare has continued the match
(actions.py, after the director's decision is on disk), and cleared (an empty retained message)
when a next match is pushed to that table.

The clear must not race the table reading it: a clock that was off when its match moved reads
`moved` only when it connects again, and a cleared `moved` is a match it would resume. So a push
clears it only once the table has shown that it took it: its `notice` naming the journal
(`{"ok", "moved": NAME, …}`), or a live state of another journal, or of that journal over. A
push before that marks the notice to be cleared as soon as it has (`clear_when_taken`); until
then it stays (a clock ignores a `moved` of a journal it does not hold unfinished).

At its start the hall reads back its own retained notices (it subscribes to `P/+/moved`), so the
cards say "moved to TABLE" again after a restart.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from gammonclock.wire import MOVED_TOPIC, Moved

from .accounts import TABLE_ID
from .messages import strict_json
from .mqtt import HallClient

log = logging.getLogger("gammonclock.hall")

MAX_NOTICE = 16 * 1024


@dataclass
class _Notice:
    moved: Moved
    taken: bool = False              # the table showed it took it
    clear_when_taken: bool = False   # a next match was pushed to the table meanwhile


class MovedNotices:
    """Each table's `moved` notice as the hall published it (or read it back)."""

    def __init__(self, prefix: str, client: HallClient, changed: Callable[[str], None]) -> None:
        self.prefix = prefix
        self.client = client
        self.changed = changed
        self.notices: dict[str, _Notice] = {}

    def topic(self, table: str) -> str:
        return f"{self.prefix}/{table}/{MOVED_TOPIC}"

    def publish(self, table: str, moved: Moved) -> Any:
        """Publish TABLE's notice retained (QoS 1); the broker's acknowledgement (a future)."""
        self.notices[table] = _Notice(moved)
        self.changed(table)
        return self.client.publish(self.topic(table), moved.payload(), retain=True)

    def journal(self, table: str) -> str | None:
        """The journal moved off TABLE (None: none)."""
        notice = self.notices.get(table)
        return notice.moved.journal if notice is not None else None

    def card(self, table: str) -> dict[str, Any] | None:
        """What the table's card says of it: moved to whom, by whom, when (None: nothing)."""
        notice = self.notices.get(table)
        if notice is None:
            return None
        moved = notice.moved
        return {"journal": moved.journal, "to": moved.to, "by": moved.by, "at": moved.at,
                "taken": notice.taken}

    # --- from the broker ---------------------------------------------------------------------

    def read_back(self, table: str, payload: bytes, retained: bool) -> None:
        """The hall's own retained notice, at its (re)subscription; its live echo is the one
        it published (ignored)."""
        if not retained or not payload or TABLE_ID.fullmatch(table) is None \
                or table in self.notices:
            return
        try:
            moved = Moved.parse(payload)
        except ValueError as exc:
            log.warning("%s: %s; ignored", self.topic(table), exc)
            return
        self.notices[table] = _Notice(moved)
        self.changed(table)

    def notice_seen(self, table: str, payload: bytes, retained: bool) -> None:
        """A table's `notice`: one that names the moved journal says the table took it."""
        notice = self.notices.get(table)
        if notice is None or retained or len(payload) > MAX_NOTICE:
            return
        data = _object(payload)
        if data is not None and data.get("moved") == notice.moved.journal:
            self._taken(table, notice)

    def state_seen(self, table: str, payload: bytes, retained: bool) -> None:
        """A table's live state: of another journal, or of the moved one over, the table has
        left the moved match behind."""
        notice = self.notices.get(table)
        if notice is None or retained or notice.taken:
            return
        state = _object(payload)
        if state is None:
            return
        journal = state.get("journal")
        over = state.get("lifecycle") == "match_over" or state.get("phase") == "match_over"
        # Another journal, or none (idle: the clock holds no match in progress), or the moved
        # one over: the clock has left the moved match behind.
        if journal != notice.moved.journal or over:
            self._taken(table, notice)

    def _taken(self, table: str, notice: _Notice) -> None:
        if not notice.taken:
            notice.taken = True
            self.changed(table)
        if notice.clear_when_taken:
            self._clear(table)

    # --- the director's ----------------------------------------------------------------------

    def next_match(self, table: str) -> None:
        """A next match was pushed to TABLE: its notice is cleared, now if the table took it,
        else as soon as it has."""
        notice = self.notices.get(table)
        if notice is None:
            return
        if notice.taken:
            self._clear(table)
        else:
            notice.clear_when_taken = True

    def _clear(self, table: str) -> None:
        self.notices.pop(table, None)
        self.client.publish(self.topic(table), b"", retain=True)
        self.changed(table)


def _object(payload: bytes) -> dict[str, Any] | None:
    """A table's message as the view reads it (messages.strict_json: bounded, strict), if it
    is a JSON object."""
    try:
        data = strict_json(payload)
    except (ValueError, RecursionError):
        return None
    return data if isinstance(data, dict) else None

"""The director's actions on the tables (the page's buttons, web.py): a round's pairings pushed
retained on each table's `match`, a §7 command sent on `cmd` and its reply awaited (only the
table it went to can answer it), a match moved to a spare table (continuation.py, moves.py).

A move (SPEC §13.5, §14.1) is the director's act, and it names what it does: from a table that is
not known to be offline only with `live` (the page's second confirmation: its clock will be
stopped for good), never from the spare itself, and (with `journal`) only of the journal the
director was shown. The spare continues the hall's verified copy; once it answers `acted`, the
move is recorded in the director's decisions (decisions.py) first, then the source table is told
on its retained `moved` (moves.py).
"""

from __future__ import annotations

import asyncio
import json
import logging
import secrets
import time
from typing import Any

from gammonclock.wire import Moved, iso_utc

from .continuation import LiveCopies, Refused, WholeCopy, move_command, verified_copy
from .decisions import DecisionError, HallDecisions
from .moves import MovedNotices
from .mqtt import HallClient
from .pairings import parse_pairings
from .results import Results
from .view import HallView

log = logging.getLogger("gammonclock.hall")

REPLY_WAIT_S = 10.0          # how long a command's HTTP request waits for the table's answer
ACK_WAIT_S = 5.0             # how long a pushed match waits for the broker's acknowledgement
MAX_COMMAND = 300


def now_ms() -> int:
    return time.time_ns() // 1_000_000


class NotConfirmed(Refused):
    """A move the director has not confirmed as it stands now (HTTP 409): a source table not
    known to be offline without `live`, or a journal other than the one the dialog showed."""

    status = 409


class NotRecorded(Refused):
    """The spare continued the match, but the hall could not record the move (HTTP 500): the
    source table was not told."""

    status = 500


class Actions:
    """What the director does to the tables, and the commands waiting for their replies."""

    def __init__(self, prefix: str, view: HallView, client: HallClient, results: Results,
                 live: LiveCopies, decisions: HallDecisions, moves: MovedNotices) -> None:
        self.prefix = prefix
        self.view = view
        self.client = client
        self.results = results
        self.live = live
        self.decisions = decisions
        self.moves = moves
        self.replies: dict[tuple[str, str], asyncio.Future[dict[str, Any]]] = {}  # (table, id)

    def topic(self, table: str, what: str) -> str:
        return f"{self.prefix}/{table}/{what}"

    def answer(self, table: str, payload: bytes) -> None:
        """A command's reply, taken (checked) by the view: it answers the request only when it
        came from the table the request went to (another table cannot answer for it)."""
        try:
            reply = json.loads(payload)
            waiting = self.replies.pop((table, str(reply.get("id"))), None)
        except (ValueError, AttributeError):
            return
        if waiting is not None and not waiting.done():
            waiting.set_result(reply)

    async def push_round(self, csv_text: str, event: str = "", round_name: str = ""
                         ) -> list[dict[str, Any]]:
        """Each good row published retained on P/TABLE/match; every row's outcome."""
        rows = parse_pairings(csv_text, event, round_name, set(self.view.tables))
        sent = [(row, self.client.publish(self.topic(row.table, "match"), row.toml, retain=True)
                 if row.toml is not None else None) for row in rows]
        try:
            self.results.pushed(event, round_name,
                                (row.match for row in rows if row.match is not None), now_ms(),
                                byes=[row.bye for row in rows if row.bye is not None])
        except OSError as exc:
            log.warning("the pushed round is not saved (a restarted hall will not know it): %s",
                        exc.strerror or exc)
        for row in rows:           # a match moved from it is over there: its notice can go
            if row.toml is not None:
                self.moves.next_match(row.table)
        out = []
        for row, acked in sent:
            result: dict[str, Any] = {"line": row.line, "table": row.table,
                                      "ok": row.error is None, "error": row.error}
            if row.code is not None:       # the page says it in its language
                result["code"], result["fields"] = row.code, row.fields
            if row.bye is not None:        # kept with the round; nothing goes to a table
                result["bye"] = row.bye.as_json()
            if acked is not None:
                result["acknowledged"] = await _within(acked, ACK_WAIT_S)
                if row.table not in self.view.tables:
                    result["warning"] = (f"table {row.table} has never been seen on the broker; "
                                         "it loads the match when it connects")
                    result["warning_code"] = "never_seen"
            out.append(result)
        return out

    async def command(self, table: str, command: str, by: str, text: str | None = None,
                      wait_s: float = REPLY_WAIT_S) -> dict[str, Any]:
        """Send a §7 command (or `new-match` with `text`) to a table; its reply, or None when
        none came within `wait_s` (it still shows on the card when it comes)."""
        command = " ".join(command.split())
        if not command or len(command) > MAX_COMMAND:
            raise Refused(f"a command is one line of 1 to {MAX_COMMAND} characters",
                          "command_length", max=MAX_COMMAND)
        if table not in self.view.tables:
            raise Refused(f"table {table[:40]!r} is not known to the hall", "no_table")
        ident = secrets.token_hex(8)
        request: dict[str, Any] = {"id": ident, "by": by, "command": command}
        if text is not None:
            request["text"] = text
        answer: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self.replies[table, ident] = answer
        await _within(self.client.publish(self.topic(table, "cmd"), json.dumps(request)),
                      ACK_WAIT_S)
        try:
            reply = await asyncio.wait_for(asyncio.shield(answer), wait_s)
        except TimeoutError:
            reply = None
        finally:
            if answer.done() or wait_s > 0:
                self.replies.pop((table, ident), None)
        return {"id": ident, "reply": reply}

    async def move(self, from_table: str, to_table: str, by: str, force: bool = False,
                   wait_s: float = REPLY_WAIT_S, *, live: bool = False,
                   journal: str | None = None) -> dict[str, Any]:
        """"Move FROM's match to TO" (SPEC §13.5): TO continues FROM's newest journal as the
        hall holds it, whole and verified (`continuation.py`). Refused (a ValueError with a
        code) for the same table, a source not known to be offline without `live`, a journal
        other than `journal`, a copy the hall does not hold whole and verified, or an unknown
        spare; else the spare's reply, as `command`, and `moved` once it continued the match
        (the decision recorded, the source told)."""
        if from_table == to_table:
            raise Refused("a match is moved to another table, not to the table it is on",
                          "same_table", table=from_table[:40])
        view = self.view.tables.get(from_table)
        if (view is None or view.online is not False) and not live:
            raise NotConfirmed(
                f"table {from_table[:40]} is not known to be offline: moving its match stops "
                f"its clock for good (it shows \"moved to {to_table[:40]}\"); confirm it on the "
                "page (the request's \"live\": true)", "source_live", table=from_table[:40],
                to=to_table[:40])
        # NoWholeCopy: Refused, a code. The text taken on the loop, its seals checked off it.
        whole = await asyncio.to_thread(verified_copy, self.live.to_verify(from_table))
        if (view is None or view.online is not False) and journal is None:
            # The second confirmation names what it moves (SPEC §14.1), never "the newest".
            raise NotConfirmed(f"a move of table {from_table[:40]}, not known to be offline, "
                               f"names the journal its confirmation showed ({whole.journal})",
                               "move_unnamed", table=from_table[:40], journal=whole.journal)
        if journal is not None and journal != whole.journal:
            raise NotConfirmed(f"the hall's newest journal of table {from_table} is "
                               f"{whole.journal}, not {journal[:200]}: the dialog was out of "
                               "date; look again", "move_stale", table=from_table,
                               journal=whole.journal, asked=journal[:200])
        answer = await self.command(to_table, move_command(from_table, whole.journal, force),
                                    by, whole.text, wait_s)
        reply = answer.get("reply")
        if isinstance(reply, dict) and reply.get("ok") is True \
                and reply.get("outcome") == "acted":
            answer["moved"] = await self._moved(from_table, to_table, by, whole)
        return answer

    async def _moved(self, source: str, to: str, by: str, whole: WholeCopy) -> dict[str, Any]:
        """The spare continued WHOLE: the decision on disk first, then the source told."""
        last = next((d for d in reversed(self.decisions.of_kind("moved"))
                     if d.get("source") == source), None)
        try:
            if last is not None and (last.get("journal"), last.get("to"), last.get("seq")) \
                    == (whole.journal, to, str(whole.last_seq)):
                decision = last                  # the same move asked again: recorded once
            else:
                decision = self.decisions.record("moved", by, source=source, to=to,
                                                 journal=whole.journal, seq=whole.last_seq)
        except (OSError, DecisionError) as exc:
            why = getattr(exc, "strerror", None) or str(exc)
            log.error("the move of %s's match to %s is not recorded (%s): %s is not told",
                      source, to, why, source)
            raise NotRecorded(f"{to} continued the match, but the hall could not record the "
                              f"move ({why}): {source} was not told; press Move here again",
                              "move_not_recorded", table=source, to=to, why=why) from None
        moved = Moved(whole.journal, to, decision.by, iso_utc(decision.at_ms * 1_000_000))
        published = await _within(self.moves.publish(source, moved), ACK_WAIT_S)
        log.info("%s's match (%s, record %d) moved to %s by %s; %s told on %s", source,
                 whole.journal, whole.last_seq, to, decision.by, source,
                 self.moves.topic(source))
        return {"source": source, "to": to, "journal": whole.journal, "seq": whole.last_seq,
                "by": decision.by, "at": moved.at, "published": published}


async def _within(done: asyncio.Future[None], seconds: float) -> bool:
    try:
        await asyncio.wait_for(asyncio.shield(done), seconds)
        return True
    except TimeoutError:
        return False

"""The director's actions on the tables (the page's buttons, web.py): a round's pairings pushed
retained on each table's `match`, a §7 command sent on `cmd` and its reply awaited (only the
table it went to can answer it), a match moved to a spare table (continuation.py).
"""

from __future__ import annotations

import asyncio
import json
import logging
import secrets
import time
from typing import Any

from .continuation import LiveCopies, Refused, move_command
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


class Actions:
    """What the director does to the tables, and the commands waiting for their replies."""

    def __init__(self, prefix: str, view: HallView, client: HallClient, results: Results,
                 live: LiveCopies) -> None:
        self.prefix = prefix
        self.view = view
        self.client = client
        self.results = results
        self.live = live
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
                                (row.match for row in rows if row.match is not None), now_ms())
        except OSError as exc:
            log.warning("the pushed round is not saved (a restarted hall will not know it): %s",
                        exc.strerror or exc)
        out = []
        for row, acked in sent:
            result: dict[str, Any] = {"line": row.line, "table": row.table,
                                      "ok": row.error is None, "error": row.error}
            if row.code is not None:       # the page says it in its language
                result["code"], result["fields"] = row.code, row.fields
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
                   wait_s: float = REPLY_WAIT_S) -> dict[str, Any]:
        """"Move FROM's match to TO" (SPEC §13.5): TO continues FROM's newest journal as the
        hall holds it (`continuation.py`). Refused (a ValueError) when the hall holds no whole
        copy, or for an unknown table; else the spare's reply, as `command`."""
        if from_table == to_table:
            raise ValueError("a match is moved to another table")
        name, text = self.live.journal_text(from_table)    # NoWholeCopy: Refused, a code
        return await self.command(to_table, move_command(from_table, name, force), by, text,
                                  wait_s)


async def _within(done: asyncio.Future[None], seconds: float) -> bool:
    try:
        await asyncio.wait_for(asyncio.shield(done), seconds)
        return True
    except TimeoutError:
        return False

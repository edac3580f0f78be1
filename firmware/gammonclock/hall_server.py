"""`gammonclock hall` (SPEC §14): the director's side. It subscribes to every table on the broker,
keeps the hall's view (hall_view), archives and verifies finished journals (hall_archive),
pushes a round's pairings (hall_pairings) and commands, and serves the page (hall_web).

Everything runs on one asyncio loop; paho's network thread only hands messages over to it
(hall_mqtt). Verifying a journal runs in a worker thread: the page never waits for it.
"""

from __future__ import annotations

import asyncio
import json
import logging
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .hall_archive import ArchiveError, Verified, archived, store, verify_archived
from .hall_mqtt import BrokerURL, HallClient
from .hall_pairings import parse_pairings
from .hall_view import HallView

log = logging.getLogger("gammonclock.hall")

REPLY_WAIT_S = 10.0          # how long a command's HTTP request waits for the table's answer
ACK_WAIT_S = 5.0             # how long a pushed match waits for the broker's acknowledgement
MAX_COMMAND = 300


def now_ms() -> int:
    return time.time_ns() // 1_000_000


@dataclass
class HallOptions:
    broker: BrokerURL
    user: str
    password: str
    prefix: str = "gammonclock"
    ca_file: str | None = None
    archive: Path = Path("hall-archive")
    keys_dir: Path | None = None
    client_id: str | None = None


@dataclass
class Listener:
    """One page's stream: what changed since it last sent (coalesced: a table that changed
    five times while the page was busy is sent once, as it is now)."""

    tables: set[str] = field(default_factory=set)
    broker: bool = False
    archive: list[dict[str, Any]] = field(default_factory=list)
    wake: asyncio.Event = field(default_factory=asyncio.Event)


class Hall:
    def __init__(self, options: HallOptions) -> None:
        self.options = options
        self.view = HallView(options.prefix)
        self.client = HallClient(options.broker, options.user, options.password,
                                 options.prefix, options.ca_file, options.client_id)
        self.archive: dict[str, Verified] = {}          # by path
        self.listeners: list[Listener] = []
        self.replies: dict[str, asyncio.Future[dict[str, Any]]] = {}
        self.on_change: list[Callable[[str, int], None]] = []   # the benchmark's probe
        self._tasks: set[asyncio.Task[Any]] = set()
        self.closing = False

    # --- life ----------------------------------------------------------------------------------

    async def start(self) -> None:
        loop = asyncio.get_running_loop()
        self.options.archive.mkdir(parents=True, exist_ok=True)
        self.client.on_status(self._broker_changed)
        self.client.start(loop, self.receive)
        self._spawn(self._verify_existing())

    async def stop(self) -> None:
        self.closing = True
        for listener in self.listeners:          # the pages' streams end now
            listener.wake.set()
        self.client.stop()
        for task in list(self._tasks):
            task.cancel()

    def _spawn(self, work: Any) -> None:
        task = asyncio.ensure_future(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    # --- from the broker -----------------------------------------------------------------------

    def receive(self, topic: str, payload: bytes, retained: bool, received_ms: int) -> None:
        where = self.view.split_topic(topic)
        if where is None:
            return
        table, what = where
        try:
            changed = self.view.receive(topic, payload, received_ms, retained)
        except ValueError as exc:
            log.warning("%s", exc)
            return
        if what == "journal":
            self._spawn(self._archive(table, payload))
        if what == "cmd/reply":
            self._answer(payload)
        if changed is not None:
            self.changed(changed, received_ms)

    def changed(self, table: str, received_ms: int | None = None) -> None:
        for listener in self.listeners:
            listener.tables.add(table)
            listener.wake.set()
        for probe in self.on_change:
            probe(table, received_ms if received_ms is not None else now_ms())

    def _broker_changed(self) -> None:
        for listener in self.listeners:
            listener.broker = True
            listener.wake.set()

    def _answer(self, payload: bytes) -> None:
        try:
            reply = json.loads(payload)
            waiting = self.replies.pop(str(reply.get("id")), None)
        except (ValueError, AttributeError):
            return
        if waiting is not None and not waiting.done():
            waiting.set_result(reply)

    # --- the archive ---------------------------------------------------------------------------

    async def _archive(self, table: str, payload: bytes) -> None:
        try:
            message = json.loads(payload)
            name, text = message["journal"], message["text"]
            if not isinstance(name, str) or not isinstance(text, str):
                raise ArchiveError("`journal` and `text` must be strings")
            path, new = await asyncio.to_thread(store, self.options.archive, table, name, text)
        except (ValueError, KeyError, TypeError, ArchiveError, OSError) as exc:
            log.warning("%s/%s/journal: not archived: %s", self.options.prefix, table, exc)
            self.view.note_archive(table, f"journal not archived: {exc}")
            self.changed(table)
            return
        if new or str(path) not in self.archive:
            await self._verify(table, path)

    async def _verify(self, table: str, path: Path) -> None:
        verdict = await asyncio.to_thread(verify_archived, path, table, self.options.keys_dir)
        self.archive[str(path)] = verdict
        log.info("archived %s: %s", path, verdict.message)
        if not verdict.ok:
            self.view.note_archive(table, f"journal {verdict.name}: {verdict.message}")
            self.changed(table)
        for listener in self.listeners:
            listener.archive.append(verdict.as_json())
            listener.wake.set()

    async def _verify_existing(self) -> None:
        for table, path in await asyncio.to_thread(archived, self.options.archive):
            if str(path) not in self.archive:
                await self._verify(table, path)

    def archive_list(self) -> list[dict[str, Any]]:
        return [v.as_json() for v in sorted(self.archive.values(),
                                            key=lambda v: (v.table, v.name))]

    # --- the director's actions ----------------------------------------------------------------

    def topic(self, table: str, what: str) -> str:
        return f"{self.options.prefix}/{table}/{what}"

    async def push_round(self, csv_text: str, event: str = "", round_name: str = ""
                         ) -> list[dict[str, Any]]:
        """Each good row published retained on P/TABLE/match; every row's outcome."""
        rows = parse_pairings(csv_text, event, round_name, set(self.view.tables))
        sent = [(row, self.client.publish(self.topic(row.table, "match"), row.toml, retain=True)
                 if row.toml is not None else None) for row in rows]
        out = []
        for row, acked in sent:
            result: dict[str, Any] = {"line": row.line, "table": row.table,
                                      "ok": row.error is None, "error": row.error}
            if acked is not None:
                result["acknowledged"] = await _within(acked, ACK_WAIT_S)
                if row.table not in self.view.tables:
                    result["warning"] = (f"table {row.table} has never been seen on the broker; "
                                         "it loads the match when it connects")
            out.append(result)
        return out

    async def command(self, table: str, command: str, by: str, text: str | None = None,
                      wait_s: float = REPLY_WAIT_S) -> dict[str, Any]:
        """Send a §7 command (or `new-match` with `text`) to a table; its reply, or None when
        none came within `wait_s` (it still shows on the card when it comes)."""
        command = " ".join(command.split())
        if not command or len(command) > MAX_COMMAND:
            raise ValueError(f"a command is one line of 1 to {MAX_COMMAND} characters")
        if table not in self.view.tables:
            raise ValueError(f"table {table!r} is not known to the hall")
        ident = secrets.token_hex(8)
        request: dict[str, Any] = {"id": ident, "by": by, "command": command}
        if text is not None:
            request["text"] = text
        answer: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self.replies[ident] = answer
        await _within(self.client.publish(self.topic(table, "cmd"), json.dumps(request)),
                      ACK_WAIT_S)
        try:
            reply = await asyncio.wait_for(asyncio.shield(answer), wait_s)
        except TimeoutError:
            reply = None
        finally:
            if answer.done() or wait_s > 0:
                self.replies.pop(ident, None)
        return {"id": ident, "reply": reply}

    def snapshot(self) -> dict[str, Any]:
        return {"server_now_ms": now_ms(), "broker": self.broker_json(),
                "cards": self.view.cards(), "archive": self.archive_list()}

    def broker_json(self) -> dict[str, Any]:
        url = self.options.broker
        return {"connected": self.client.connected, "status": self.client.status,
                "url": f"{'mqtts' if url.tls else 'mqtt'}://{url.host}:{url.port}"}


async def _within(done: asyncio.Future[None], seconds: float) -> bool:
    try:
        await asyncio.wait_for(asyncio.shield(done), seconds)
        return True
    except TimeoutError:
        return False

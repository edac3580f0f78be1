"""`gammonclock hall` (SPEC §14): the director's side. It subscribes to every table on the broker,
keeps the hall's view (view), archives and verifies finished journals (archive) and
collects each one's result from it (results.py), pushes a round's pairings (pairings.py)
and commands, and serves the page (web.py).

Everything runs on one asyncio loop; paho's network thread only hands messages over to it
(mqtt.py). Verifying a journal runs in a worker thread: the page never waits for it.

The hall acknowledges (retained `P/T/ack`, delivery.py): how far it holds each table's events
without a gap, and which finished journals its archive has written and checked (its verdict,
TAMPERED too, is on the card and the archive list: archived is not verified); a table's outbox
goes on only on that. A journal shorter than the events already seen of it is kept aside as cut
short and not acknowledged the first time (the table sends it again); the same one sent again
is archived as cut short and acknowledged (the table has no more). A journal the archive could
not write is not acknowledged.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gammonclock.wire import BrokerURL

from .accounts import TABLE_ID
from .acks import Acks
from .actions import REPLY_WAIT_S, Actions
from .actions import now_ms as now_ms  # web.py takes it from here
from .archive import Verified
from .archiving import Archiving
from .continuation import LIVE_DIR, LiveCopies, Refusal, refusal_problem
from .decisions import Decision, HallDecisions
from .delivery import EventKey, TablePosition, event_key
from .intake import BadMessages, Intake
from .messages import natural_key
from .moves import MovedNotices
from .mqtt import HallClient
from .results import Result, Results, file_sha256
from .view import HallView

log = logging.getLogger("gammonclock.hall")


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
    """The hall's parts put together: the intake (intake.py) hands each message to `take`,
    which gives it to the view and to the acks (acks.py), a finished journal to the archiving
    (archiving.py), a command's reply to the director's actions (actions.py); the pages'
    streams (`listeners`) hear of every change."""

    def __init__(self, options: HallOptions) -> None:
        self.options = options
        self.view = HallView(options.prefix)
        self.client = HallClient(options.broker, options.user, options.password,
                                 options.prefix, options.ca_file, options.client_id)
        # The director's decisions (a held result accepted, a match moved), synced before they
        # count and read back after a restart (decisions.py).
        self.decisions = HallDecisions.in_archive(options.archive)
        # Each archived match's result, counted by the one rule (counting.py) against the
        # rounds pushed, the tables' keys and the decisions.
        self.results = Results(options.archive, self.decisions, options.keys_dir)
        self.listeners: list[Listener] = []
        self.on_change: list[Callable[[str, int], None]] = []   # the benchmark's probe
        self._tasks: set[asyncio.Task[Any]] = set()
        self.closing = False
        self._bad = BadMessages()
        self.intake = Intake(options.prefix, self.take, self._bad, lambda: self.closing)
        self.acks = Acks(options.prefix, self.client, lambda: self.closing)
        self.archiving = Archiving(options.archive, options.keys_dir, options.prefix,
                                   self.view, self.results, self.acks, self.changed,
                                   self._archive_changed, self._spawn)
        self.archive: dict[str, Verified] = self.archiving.archive      # by path
        # Each table's journal as its events carried it and its key verified it (on disk
        # beside the archive), and the notices of matches moved away (moves.py).
        self.live = LiveCopies(options.archive / LIVE_DIR, options.keys_dir,
                               self._copy_refused)
        self.moves = MovedNotices(options.prefix, self.client, self._known_changed)
        self.actions = Actions(options.prefix, self.view, self.client, self.results, self.live,
                               self.decisions, self.moves)

    # --- life ----------------------------------------------------------------------------------

    async def start(self) -> None:
        loop = asyncio.get_running_loop()
        self.options.archive.mkdir(parents=True, exist_ok=True)
        self.live.load()             # before any message: what a hall before this one kept
        for problem in (self.results.load(), self.decisions.load()):
            if problem is not None:
                log.warning("%s", problem)
        self.acks.start()
        self.client.on_status(self._broker_changed)
        self.client.start(loop, self.receive)
        self._spawn(self.archiving.verify_existing())

    async def stop(self) -> None:
        self.closing = True
        for listener in self.listeners:          # the pages' streams end now
            listener.wake.set()
        self.acks.stop()
        self.client.stop()
        for task in list(self._tasks):
            task.cancel()

    def _spawn(self, work: Any) -> None:
        task = asyncio.ensure_future(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    # --- from the broker -----------------------------------------------------------------------

    def receive(self, topic: str, payload: bytes, retained: bool, received_ms: int) -> None:
        """A message from the broker (on the loop): queued under its table, taken in turn."""
        self.intake.receive(topic, payload, retained, received_ms)

    @property
    def inbox_dropped(self) -> int:
        """Messages dropped unread: their table had INBOX_PER_TABLE waiting (intake.py)."""
        return self.intake.dropped

    def take(self, topic: str, payload: bytes, retained: bool, received_ms: int) -> None:
        """One message from the broker, now."""
        head = self.options.prefix + "/"
        if topic.startswith(head) and topic.endswith("/ack"):
            self.acks.read_back(topic[len(head):-len("/ack")], payload, retained)
            return
        if topic.startswith(head) and topic.endswith("/moved"):     # the hall's own (moves.py)
            self.moves.read_back(topic[len(head):-len("/moved")], payload, retained)
            return
        where = self.view.split_topic(topic)
        if where is None:
            return
        table, what = where
        key: EventKey | None = None
        if what == "events" and TABLE_ID.fullmatch(table) is not None:
            try:
                key = event_key(payload)
            except ValueError as exc:
                self._bad.log(table, f"{topic}: not an event the hall can acknowledge: {exc}")
        try:
            changed = self.view.receive(topic, payload, received_ms, retained)
        except ValueError as exc:
            self._bad.log(table, str(exc))
            if key is not None:
                self.acks.rejected(table, key)
            shown = getattr(exc, "table", None)       # the card now says so (view.Rejected)
            if shown is not None:
                self.changed(shown, received_ms)
            return
        if key is not None:
            self.acks.took(table, key)
            self.live.take(table, payload)        # its journal's lines (continuation.py)
        if what == "state" and TABLE_ID.fullmatch(table) is not None:
            self.acks.state_seen(table, payload)
            self.moves.state_seen(table, payload, retained)
        if what == "notice":
            self.moves.notice_seen(table, payload, retained)
        if what == "journal":
            self.archiving.journal_in(table, payload, self.acks.highest_seen(table))
        if what == "cmd/reply":
            self.actions.answer(table, payload)
        if changed is not None:
            self.changed(changed, received_ms)

    # --- to the pages --------------------------------------------------------------------------

    def changed(self, table: str, received_ms: int | None = None) -> None:
        for listener in self.listeners:
            listener.tables.add(table)
            listener.wake.set()
        for probe in self.on_change:
            probe(table, received_ms if received_ms is not None else now_ms())

    def _known_changed(self, table: str) -> None:
        """A table's card changed, if the hall lists it (a notice read back before the table's
        own messages shows once they come)."""
        if table in self.view.tables:
            self.changed(table)

    def _copy_refused(self, table: str, journal: str, refusal: Refusal) -> None:
        """A line of the table's events that its key does not verify (continuation.py): its
        card says so, once per journal copy."""
        problem = refusal_problem(table, journal, refusal)
        self.view.note_copy_refused(table, str(problem), problem.code, journal,
                                    "?" if refusal.seq is None else refusal.seq)
        self.changed(table)

    def _broker_changed(self) -> None:
        for listener in self.listeners:
            listener.broker = True
            listener.wake.set()

    def _archive_changed(self, verdict: Verified) -> None:
        for listener in self.listeners:
            listener.archive.append(verdict.as_json())
            listener.wake.set()

    def position(self, table: str) -> TablePosition:
        """How far the hall holds the table's events, and its journals archived (acks.py)."""
        return self.acks.position(table)

    # --- the director's actions (actions.py) ---------------------------------------------------

    def topic(self, table: str, what: str) -> str:
        return f"{self.options.prefix}/{table}/{what}"

    async def push_round(self, csv_text: str, event: str = "", round_name: str = ""
                         ) -> list[dict[str, Any]]:
        """Each good row published retained on P/TABLE/match; every row's outcome."""
        return await self.actions.push_round(csv_text, event, round_name)

    async def command(self, table: str, command: str, by: str, text: str | None = None,
                      wait_s: float = REPLY_WAIT_S) -> dict[str, Any]:
        """A §7 command to a table and its reply (None when none came within `wait_s`)."""
        return await self.actions.command(table, command, by, text, wait_s)

    async def move(self, from_table: str, to_table: str, by: str, force: bool = False,
                   wait_s: float = REPLY_WAIT_S, *, live: bool = False,
                   journal: str | None = None) -> dict[str, Any]:
        """"Move FROM's match to TO" (SPEC §13.5, actions.py), as `command`."""
        return await self.actions.move(from_table, to_table, by, force, wait_s, live=live,
                                       journal=journal)

    async def accept(self, journal: str, sha256: str, by: str) -> tuple[Result, Decision]:
        """The director accepts a held result (results.Results.accept): the file as it is on
        disk now must be the one the page showed (its SHA-256, read off the loop)."""
        try:
            on_disk = await asyncio.to_thread(file_sha256, self.options.archive / journal)
        except OSError:
            on_disk = ""
        return self.results.accept(journal, sha256, by, on_disk)

    # --- the JSON views (web.py) ---------------------------------------------------------------

    def archive_list(self) -> list[dict[str, Any]]:
        """Every archived journal; a journal's complete copy first among its copies (a copy
        set aside as cut short after it)."""
        return self.archiving.archive_list()

    def results_json(self) -> dict[str, Any]:
        """Every result (`counted`, or `held` with why), each pushed round's completion, every
        round's name (pushed or named by a result, in the order they began), the standings
        (`/api/results.json`): one assessment, so `counted` is what the standings count."""
        cards = {card["table"]: card for card in self.view.cards()}
        results = self.results.results()
        return {"server_now_ms": now_ms(),
                "results": [r.as_json() for r in results],
                "rounds": self.results.round_status(cards, results),
                "round_names": self.results.round_names(results),
                "standings": self.results.standings(results=results),
                "not_collected": self.results.dropped, **self.counting_json()}

    def counting_json(self) -> dict[str, Any]:
        """Whether the hall can verify a journal at all (`--keys-dir`): without it every result
        is held (the page says so)."""
        return {"keys_dir": self.options.keys_dir is not None}

    def card(self, table: str) -> dict[str, Any]:
        """The table's card for the director's page: the view's, with what the hall holds of
        its journal for a move (`copy`) and its match moved away (`moved`)."""
        return {**self.view.card(table), "copy": self.live.held(table),
                "moved": self.moves.card(table)}

    def cards(self) -> list[dict[str, Any]]:
        return [self.card(table) for table in sorted(self.view.tables, key=natural_key)]

    def snapshot(self) -> dict[str, Any]:
        return {"server_now_ms": now_ms(), "broker": self.broker_json(),
                "cards": self.cards(), "archive": self.archive_list(),
                "counting": self.counting_json()}

    def broker_json(self) -> dict[str, Any]:
        url = self.options.broker
        return {"connected": self.client.connected, "status": self.client.status,
                "url": f"{'mqtts' if url.tls else 'mqtt'}://{url.host}:{url.port}"}

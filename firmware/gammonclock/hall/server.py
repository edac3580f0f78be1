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
import json
import logging
import secrets
import time
from collections import OrderedDict, deque
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from gammonclock.wire import Ack, BrokerURL, iso_utc

from .accounts import TABLE_ID
from .archive import (
    ArchiveError,
    Verified,
    archived,
    journal_message,
    journal_of,
    store_journal,
    verify_archived,
)
from .continuation import LIVE_DIR, LiveCopies, NoWholeCopy, move_command
from .delivery import (
    ACK_AT_ONCE,
    ACK_EVERY_S,
    ACK_GRACE_S,
    EventKey,
    TablePosition,
    event_key,
)
from .mqtt import HallClient
from .pairings import parse_pairings
from .results import Result, Results, collect
from .view import HallView

log = logging.getLogger("gammonclock.hall")

INBOX_PER_TABLE = 1000       # a table's messages waiting for the loop; more are dropped unread
FAIR_BATCH = 64              # messages taken in turn before the loop serves the pages again
TABLE_RATE = 200.0           # messages a second the hall takes of one table, at most...
TABLE_BURST = 400.0          # ... after a burst of this many (an honest table sends a window of
                             # 20 events per acknowledgement: it is paced at most, never dropped)
BAD_LOG_EVERY_S = 10.0       # a table's refused messages: one log line per this, with a count
REPLY_WAIT_S = 10.0          # how long a command's HTTP request waits for the table's answer
ACK_WAIT_S = 5.0             # how long a pushed match waits for the broker's acknowledgement
MAX_COMMAND = 300
JOURNALS_WAITING = 4         # a table's finished journals waiting while one is archived


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
        self.results = Results(options.archive)         # each archived match's result
        self.listeners: list[Listener] = []
        self.replies: dict[tuple[str, str], asyncio.Future[dict[str, Any]]] = {}  # (table, id)
        self.on_change: list[Callable[[str, int], None]] = []   # the benchmark's probe
        self._tasks: set[asyncio.Task[Any]] = set()
        self.closing = False
        self.positions: dict[str, TablePosition] = {}
        self._bad_logged: dict[str, list[float]] = {}   # table -> [last logged, left out]
        self._ack_timers: dict[str, asyncio.TimerHandle] = {}
        self._acks_sent: dict[str, tuple[Any, ...]] = {}
        self._acks_from = 0.0        # (monotonic) "I hold nothing" waits for the read-back
        # Messages from the broker wait here per table and are taken one table at a time, in
        # turn: a table flooding the hall delays the others by one message each, not by its
        # whole flood (the broker's one connection hands them over in arrival order).
        Message = tuple[str, bytes, bool, int]
        self._inbox: OrderedDict[str, deque[Message]] = OrderedDict()
        self._tokens: dict[str, tuple[float, float]] = {}    # table -> (tokens, monotonic)
        self._draining = False
        self.inbox_dropped = 0
        # One journal of a table archived at a time (each up to 16 MiB, parsed and written in a
        # worker thread), and at most JOURNALS_WAITING more, in order: beyond that the oldest
        # waiting is dropped (the table sends what was not acknowledged again), so a table's
        # journals never pile up, and an honest table's few are all taken at once.
        self._archiving: set[str] = set()
        self._journal_next: dict[str, deque[tuple[bytes, dict[str, int]]]] = {}
        # Each table's journal as its events carried it (on disk beside the archive).
        self.live = LiveCopies(options.archive / LIVE_DIR)

    # --- life ----------------------------------------------------------------------------------

    async def start(self) -> None:
        loop = asyncio.get_running_loop()
        self.options.archive.mkdir(parents=True, exist_ok=True)
        self.live.load()             # before any message: what a hall before this one kept
        problem = self.results.load()
        if problem is not None:
            log.warning("%s", problem)
        self._acks_from = time.monotonic() + ACK_GRACE_S
        self.client.on_status(self._broker_changed)
        self.client.start(loop, self.receive)
        self._spawn(self._verify_existing())

    async def stop(self) -> None:
        self.closing = True
        for listener in self.listeners:          # the pages' streams end now
            listener.wake.set()
        for handle in self._ack_timers.values():
            handle.cancel()
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
        head = self.options.prefix + "/"
        table = topic[len(head):].partition("/")[0] if topic.startswith(head) else ""
        queue = self._inbox.get(table)
        if queue is None:
            queue = self._inbox[table] = deque()
        elif len(queue) >= INBOX_PER_TABLE:
            self.inbox_dropped += 1       # an event dropped is not acknowledged: sent again
            self._log_bad(table, f"{topic}: {INBOX_PER_TABLE} messages of this table wait for "
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
        if not self._inbox or self.closing:
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

    def take(self, topic: str, payload: bytes, retained: bool, received_ms: int) -> None:
        """One message from the broker, now."""
        head = self.options.prefix + "/"
        if topic.startswith(head) and topic.endswith("/ack"):
            self._read_back(topic[len(head):-len("/ack")], payload, retained)
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
                self._log_bad(table, f"{topic}: not an event the hall can acknowledge: {exc}")
        try:
            changed = self.view.receive(topic, payload, received_ms, retained)
        except ValueError as exc:
            self._log_bad(table, str(exc))
            if key is not None:
                self._rejected(table, key)
            shown = getattr(exc, "table", None)       # the card now says so (view.Rejected)
            if shown is not None:
                self.changed(shown, received_ms)
            return
        if key is not None:
            self._took(table, key)
            self.live.take(table, payload)        # its journal's lines (continuation.py)
        if what == "state" and TABLE_ID.fullmatch(table) is not None:
            self._state_seen(table, payload)
        if what == "journal":
            self._journal_in(table, payload, self._highest_seen(table))
        if what == "cmd/reply":
            self._answer(table, payload)
        if changed is not None:
            self.changed(changed, received_ms)

    def _log_bad(self, table: str, text: str) -> None:
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

    def changed(self, table: str, received_ms: int | None = None) -> None:
        for listener in self.listeners:
            listener.tables.add(table)
            listener.wake.set()
        for probe in self.on_change:
            probe(table, received_ms if received_ms is not None else now_ms())

    # --- acknowledgements (delivery.py) -------------------------------------------------------

    def position(self, table: str) -> TablePosition:
        position = self.positions.get(table)
        if position is None:
            position = self.positions[table] = TablePosition()
        return position

    def _took(self, table: str, key: EventKey) -> None:
        position = self.position(table)
        held = key.journal in position.past or (key.journal == position.journal
                                                 and key.seq <= position.seq)
        if held:
            # The table sends what the hall holds: it has not got the ack (lost, or the broker's
            # retained copy rolled back). Say it again, though nothing moved.
            self._acks_sent.pop(table, None)
        position.take(key)
        self._ack_soon(table, at_once=position.waiting >= ACK_AT_ONCE)

    def _state_seen(self, table: str, payload: bytes) -> None:
        """A state names its journal's last record (`journal`, `seq`): the hall has seen that
        much of the journal (a journal sent shorter is cut short)."""
        try:
            state = json.loads(payload, parse_constant=_no_constant)
        except (ValueError, RecursionError):
            return
        if not isinstance(state, dict):
            return
        journal, seq = state.get("journal"), state.get("seq")
        if isinstance(journal, str) and 0 < len(journal) <= 255 and type(seq) is int \
                and 0 <= seq < 2**53:
            self.position(table).seen(journal, seq)

    def _rejected(self, table: str, key: EventKey) -> None:
        """An event the view refused is not acknowledged: the table sends it again. Refused
        again, it is acknowledged all the same (the view's refusal may be the hall's own fault,
        and a table must not stall for good on one event; the record is in its journal, which
        reaches the archive)."""
        if self.position(table).rejected_again(key):
            log.error("%s/%s/events: %s seq %d refused again by the hall's view; acknowledged "
                      "anyway so that the table goes on (the record is in its journal)",
                      self.options.prefix, table, key.journal, key.seq)
            self._took(table, key)
        else:
            log.warning("%s/%s/events: %s seq %d not acknowledged (the table sends it again)",
                        self.options.prefix, table, key.journal, key.seq)

    def _read_back(self, table: str, payload: bytes, retained: bool) -> None:
        """The hall's own retained ack (at each subscription): where it stood before a restart.
        Its live acks come back too, not retained: ignored."""
        if not retained or not payload or TABLE_ID.fullmatch(table) is None:
            return
        try:
            ack = Ack.parse(payload)
        except ValueError as exc:
            log.warning("%s/%s/ack: %s; ignored", self.options.prefix, table, exc)
            return
        position = self.position(table)
        if position.seed(ack):
            self._acks_sent[table] = (ack.journal, ack.seq, tuple(position.archived))
            self._ack_soon(table)

    def _ack_soon(self, table: str, at_once: bool = False) -> None:
        """Publish the table's ack within ACK_EVERY_S (coalesced), or now."""
        handle = self._ack_timers.get(table)
        if at_once:
            if handle is not None:
                handle.cancel()
            self._publish_ack(table)
        elif handle is None:
            self._ack_timers[table] = asyncio.get_running_loop().call_later(
                ACK_EVERY_S, self._publish_ack, table)

    def _publish_ack(self, table: str) -> None:
        self._ack_timers.pop(table, None)
        position = self.position(table)
        if not position.due or self.closing:
            return
        wait = self._acks_from - time.monotonic()
        if not position.known and wait > 0:      # its retained ack may still be coming
            self._ack_timers[table] = asyncio.get_running_loop().call_later(
                wait, self._publish_ack, table)
            return
        position.due, position.waiting = False, 0
        said = (position.journal, position.seq, tuple(position.archived))
        if self._acks_sent.get(table) == said:
            return                               # retained already: nothing new to say
        self._acks_sent[table] = said
        self.client.publish(self.topic(table, "ack"), json.dumps(
            position.payload(iso_utc(time.time_ns())), ensure_ascii=False), retain=True)

    def _broker_changed(self) -> None:
        for listener in self.listeners:
            listener.broker = True
            listener.wake.set()

    def _answer(self, table: str, payload: bytes) -> None:
        """A command's reply, taken (checked) by the view: it answers the request only when it
        came from the table the request went to (another table cannot answer for it)."""
        try:
            reply = json.loads(payload)
            waiting = self.replies.pop((table, str(reply.get("id"))), None)
        except (ValueError, AttributeError):
            return
        if waiting is not None and not waiting.done():
            waiting.set_result(reply)

    # --- the archive ---------------------------------------------------------------------------

    def _highest_seen(self, table: str) -> dict[str, int]:
        """What the hall had seen of the journals when this text came (taken now: a state
        that follows it must not make it look cut short)."""
        return dict(self.position(table).highest) if table in self.positions else {}

    def _journal_in(self, table: str, payload: bytes, highest: dict[str, int]) -> None:
        if table in self._archiving:
            self._journal_next.setdefault(table, deque(maxlen=JOURNALS_WAITING)).append(
                (payload, highest))
            return
        self._archiving.add(table)
        self._spawn(self._archive_in_turn(table, payload, highest))

    async def _archive_in_turn(self, table: str, payload: bytes, highest: dict[str, int]
                               ) -> None:
        try:
            while True:
                await self._archive(table, payload, highest)
                waiting = self._journal_next.get(table)
                if not waiting:
                    return
                payload, highest = waiting.popleft()
        finally:
            self._archiving.discard(table)
            self._journal_next.pop(table, None)

    async def _archive(self, table: str, payload: bytes, highest: dict[str, int]) -> None:
        """Write and verify a finished journal; acknowledged (listed as archived in the table's
        ack) only once written and checked (whatever the verdict: a TAMPERED journal sent again
        is TAMPERED again; the card says it is archived, NOT verified), and only when it is not
        shorter than the events already seen of it: else the table sends it again, and the very
        same short journal sent again is archived cut short (the table has no more)."""
        try:
            # Its size is checked before any of it is parsed, and the parse is off the loop.
            message = await asyncio.to_thread(journal_message, table, payload)
            name, text, records = message.name, message.text, message.records
            seen = highest.get(name, -1)
            short = message.last < seen
            stored = await asyncio.to_thread(store_journal, self.options.archive, table, name,
                                             text, cut_short=short)
        except (ValueError, KeyError, TypeError, ArchiveError, OSError) as exc:
            why = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
            log.warning("%s/%s/journal: not archived (not acknowledged: the table sends it "
                        "again): %s", self.options.prefix, table, why)
            code = exc.code if isinstance(exc, ArchiveError) else ""
            fields = exc.fields if isinstance(exc, ArchiveError) else {}
            self.view.note_archive(table, f"journal not archived: {why}",
                                   ("archive_failed", str(why), code, str(fields.get("name", "")),
                                    int(fields.get("size", 0)), int(fields.get("max", 0))))
            self.changed(table)
            return
        if stored.set_aside is not None:
            was, now = stored.set_aside
            self.archive.pop(str(was), None)
            self.results.forget(str(was))
            await self._verify(table, now)
        if short:
            verdict = await self._verify(table, stored.path, note=False)
            said = f"cut short: {records} of {seen + 1} records"
            # The very same short journal again (it was on disk already): the table has no more
            # (a power cut took its tail). Archived as it is, so that its next journals go on.
            final = not stored.new
            if final:
                said = (f"archived cut short, NOT verified: {records} of {seen + 1} records (sent "
                        f"again the same: the table has no more)")
            cut = {"code": "final" if final else "received", "records": records, "of": seen + 1}
            self.archive[str(stored.path)] = replace(verdict, ok=False, cut_short=True,
                                                     message=f"{said}; {verdict.message}",
                                                     cut=cut)
            log.warning("%s/%s/journal: %s %s (the hall has seen seq %d of it); kept as %s, %s",
                        self.options.prefix, table, name, said, seen, stored.path.name,
                        "acknowledged" if final else "not acknowledged: the table sends it "
                        "again, and the same again is archived as it is")
            self.view.note_archive(table, f"journal {name} {said}",
                                   ("archive_cut_short_final" if final else "archive_cut_short",
                                    name, records, seen + 1))
            self.changed(table)
            self._archive_changed(self.archive[str(stored.path)])
            if not final:
                return
            if name in self.position(table).archived:
                self._acks_sent.pop(table, None)     # sent again: the table lacks the ack
        elif stored.new or str(stored.path) not in self.archive:
            await self._verify(table, stored.path)
        elif name in self.position(table).archived:
            self._acks_sent.pop(table, None)     # sent again: the table lacks the ack; re-say
        self.position(table).note_archived(name)
        self._ack_soon(table, at_once=True)

    async def _verify(self, table: str, path: Path, note: bool = True) -> Verified:
        verdict, result = await asyncio.to_thread(self._verify_and_collect, path, table)
        self.archive[str(path)] = verdict
        if result is not None and not self.results.take(str(path), result):
            log.warning("%s: its result is not collected: the hall holds %d results already",
                        path, len(self.results.by_path))
        if not note:
            pass                             # a cut-short copy: the caller says what it is
        elif verdict.verified:
            log.info("archived %s, verified: %s", path, verdict.message)
        elif verdict.ok:                     # no key to check its seals with
            log.info("archived %s, NOT verified: %s", path, verdict.message)
        else:
            log.warning("archived %s, NOT verified: %s", path, verdict.message)
        if not verdict.ok and note:
            self.view.note_archive(table, f"journal {verdict.name} archived, NOT verified: "
                                          f"{verdict.message}",
                                   ("archive_not_verified", verdict.name,
                                    *_flat(verdict.say)))
            self.changed(table)
        if note:
            self._archive_changed(verdict)
        return verdict

    def _verify_and_collect(self, path: Path, table: str) -> tuple[Verified, Result | None]:
        """The verdict on an archived journal and the result it holds, recomputed from it (in
        a worker thread)."""
        verdict = verify_archived(path, table, self.options.keys_dir)
        return verdict, collect(path, verdict)

    def _archive_changed(self, verdict: Verified) -> None:
        for listener in self.listeners:
            listener.archive.append(verdict.as_json())
            listener.wake.set()

    async def _verify_existing(self) -> None:
        for table, path in await asyncio.to_thread(archived, self.options.archive):
            if str(path) not in self.archive:
                verdict = await self._verify(table, path)
                if not verdict.cut_short and journal_of(path.name) == path.name:
                    self.position(table).note_archived(path.name)

    def archive_list(self) -> list[dict[str, Any]]:
        """Every archived journal; a journal's complete copy first among its copies (a copy
        set aside as cut short after it)."""
        return [v.as_json() for v in sorted(
            self.archive.values(),
            key=lambda v: (v.table, v.journal or v.name, v.cut_short,
                           v.name != (v.journal or v.name), v.name))]

    # --- the director's actions ----------------------------------------------------------------

    def topic(self, table: str, what: str) -> str:
        return f"{self.options.prefix}/{table}/{what}"

    async def push_round(self, csv_text: str, event: str = "", round_name: str = ""
                         ) -> list[dict[str, Any]]:
        """Each good row published retained on P/TABLE/match; every row's outcome."""
        rows = parse_pairings(csv_text, event, round_name, set(self.view.tables))
        sent = [(row, self.client.publish(self.topic(row.table, "match"), row.toml, retain=True)
                 if row.toml is not None else None) for row in rows]
        try:
            self.results.pushed(event, round_name,
                                (row.table for row in rows if row.toml is not None), now_ms())
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
            raise ValueError(f"a command is one line of 1 to {MAX_COMMAND} characters")
        if table not in self.view.tables:
            raise ValueError(f"table {table!r} is not known to the hall")
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
        hall holds it (`continuation.py`). ValueError when the hall holds no whole copy, or for
        an unknown table; else the spare's reply, as `command`."""
        if from_table == to_table:
            raise ValueError("a match is moved to another table")
        try:
            name, text = self.live.journal_text(from_table)
        except NoWholeCopy as exc:
            raise exc from None          # a ValueError with a code the page words
        return await self.command(to_table, move_command(from_table, name, force), by, text,
                                  wait_s)

    def results_json(self) -> dict[str, Any]:
        """Every result, each pushed round's completion, the standings (`/api/results.json`)."""
        cards = {card["table"]: card for card in self.view.cards()}
        return {"server_now_ms": now_ms(),
                "results": [r.as_json() for r in self.results.results()],
                "rounds": self.results.round_status(cards),
                "standings": self.results.standings(),
                "not_collected": self.results.dropped}

    def snapshot(self) -> dict[str, Any]:
        return {"server_now_ms": now_ms(), "broker": self.broker_json(),
                "cards": self.view.cards(), "archive": self.archive_list()}

    def broker_json(self) -> dict[str, Any]:
        url = self.options.broker
        return {"connected": self.client.connected, "status": self.client.status,
                "url": f"{'mqtts' if url.tls else 'mqtt'}://{url.host}:{url.port}"}


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


async def _within(done: asyncio.Future[None], seconds: float) -> bool:
    try:
        await asyncio.wait_for(asyncio.shield(done), seconds)
        return True
    except TimeoutError:
        return False


def _flat(say: dict[str, Any]) -> tuple[str, int, str, str]:
    """A verdict's code and fields as an alert's parameters: code, records, key, detail."""
    records = say.get("records")
    return (str(say.get("code", "")), records if isinstance(records, int) else 0,
            str(say.get("key", "")), str(say.get("detail", "")))

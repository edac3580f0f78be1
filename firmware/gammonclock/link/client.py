"""The clock's side of the hall (SPEC §14): the table on the tournament's MQTT broker.

Topics are `PREFIX/TABLE/…` (hall/PROTOCOL.md has every payload). The link never holds up the
clock and the clock never waits for it:

- The clock's loop only signals: `HallSignal` (signal.py), one of the service's
  presenters, sets an event when something changed (a press, a timer's effects, a next
  match). Nothing else of the link runs on the loop.
- paho's own network thread connects, reconnects with back-off (1 s doubling to 10 s), and
  takes callbacks that only note things and hand messages to the link's worker.
- The publisher thread publishes `state` (retained; newest wins, at most one unacknowledged at a
  time; every 10 s while a clock runs) and the journal's events, read from the journal FILE from
  the last position the HALL acknowledged (`outbox.py`), at most `WINDOW` beyond it at a time.
  The position moves only on the hall's retained `P/T/ack` (never on the broker's PUBACK: a
  broker that dropped a message, or another client that took it, loses nothing) and is kept on
  the card. With no progress of the ack within RESEND_MIN_S of publishing, at a reconnect or a
  restart of the clock, every event not yet acknowledged is published again from the position,
  in order (at least once: the director de-duplicates by `(journal, seq)`); while the hall stays
  silent the wait doubles up to RESEND_MAX_S. A finished match's whole journal goes to `journal`
  until the hall's ack lists it as archived (written and checked: its verdict, TAMPERED or cut
  short too, is the hall's to show; archived is not verified).
- The worker thread answers `cmd` and loads `match` (`requests.py`): through the clock's
  queue, like a press. It sleeps on its queue: a `match` that waits for the match in progress
  is loaded when the publisher, woken by the loop's signal, sees that match over and hands the
  worker a `RETRY` (within milliseconds of the end, not at the next tick of a timer).

A broker that is down, slow, refuses the login or vanishes changes nothing at the table: the
link logs each change of its connection once and goes on trying.
"""

from __future__ import annotations

import collections
import contextlib
import json
import logging
import queue
import ssl
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import paho.mqtt.client as mqtt
from paho.mqtt.enums import CallbackAPIVersion, MQTTErrorCode, MQTTProtocolVersion
from paho.mqtt.reasoncodes import ReasonCode

from gammonclock.config.loading import HallConfig
from gammonclock.core.match import Phase
from gammonclock.runtime.health import Backlog, HostSystem, System, read_health
from gammonclock.runtime.lifecycle import Table
from gammonclock.runtime.service import ClockService
from gammonclock.wire import Ack, BrokerURL, Event, iso_utc

from .outbox import HallMemory, JournalTail, journal_file, journals_in_order
from .requests import HallRequests
from .signal import HallSignal

log = logging.getLogger(__name__)

WINDOW = 20                 # events published and not yet acknowledged, at most
MAX_QUEUED = 200            # messages paho may hold (events, states, replies): memory is bounded
STATE_EVERY_S = 10.0        # `state` again while a clock runs
SAVE_EVERY_S = 1.0          # the acknowledged position is kept at least this often while it moves
KEEPALIVE_S = 15            # the broker notices a vanished clock (and sends its will) in ~1.5x
RECONNECT_MIN_S, RECONNECT_MAX_S = 1, 10   # a table is back at most 10 s after its broker
REFUSED_RETRY_S = 30.0      # events the broker refused (its ACL) are tried again this much later
IDLE_WAKE_S = 1.0           # the publisher looks at the journal (and a waiting match) this often
REQUESTS_WAITING = 32       # cmd/match messages waiting for the worker; more are dropped
RETRY = "retry"             # for the worker: the match that waited may load now (not a topic)
CLOSE_WAIT_S = 1.0          # at a stop, how long the last `online` "0" may take
SUBSCRIBED = ("match", "cmd", "ack")
REQUESTS = ("match", "cmd")     # the worker's; `ack` is taken on paho's thread
RESEND_MIN_S = 5.0          # no progress of the hall's ack this long after publishing: again
RESEND_MAX_S = 60.0         # ... the wait doubling while the hall stays silent, up to this
HEALTH_EVERY_S = 60.0       # `health` (retained) this often, and at each connection


def read_password(path: str | None) -> str | None:
    """The account's password: the file's first line. An unreadable file is logged (the broker
    will then refuse the login, and the table plays on)."""
    if path is None:
        return None
    try:
        with open(path, encoding="utf-8") as f:
            return f.readline().rstrip("\r\n")
    except (OSError, UnicodeDecodeError) as exc:
        log.error("hall: cannot read the password file %s (%s); the broker will refuse the "
                  "login ([hall] password_file)", path, getattr(exc, "strerror", None) or exc)
        return None


class _DropNotConnected(logging.Filter):
    """paho says "Client is not connected" at every publish tried during a broker outage (one a
    press, on every table); the link says once that the broker is gone, so these are dropped."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not record.getMessage().startswith("Client is not connected")


PAHO_LOG = logging.getLogger(f"{__name__}.paho")
PAHO_LOG.addFilter(_DropNotConnected())


class HallLink:
    """The table on the hall's broker, from `start()` to `close()`."""

    def __init__(self, service: ClockService, table: Table, hall: HallConfig,
                 state_dir: str | Path, *, signal: HallSignal | None = None,
                 wall_ns: Callable[[], int] = time.time_ns,
                 state_every_s: float = STATE_EVERY_S,
                 health_system: System | None = None,
                 health_every_s: float = HEALTH_EVERY_S) -> None:
        self.service = service
        self.table = table
        self.hall = hall
        self.state_dir = Path(state_dir)
        self.signal = signal or HallSignal()
        self.wall_ns = wall_ns
        self.state_every_s = state_every_s
        self.broker = BrokerURL.parse(hall.broker)      # checked with the config
        self.topic = f"{hall.prefix}/{table.table_id}"
        self.memory = HallMemory(state_dir)
        self.requests = HallRequests(service, table, self.memory, self._answer,
                                     match_topic=f"{self.topic}/match", wall_ns=wall_ns)
        self._connected = threading.Event()
        self._stop = threading.Event()
        self._link_state = ""
        self._inflight: collections.deque[tuple[Event, mqtt.MQTTMessageInfo]] = \
            collections.deque()
        self._refused: dict[int, ReasonCode] = {}     # mid -> the broker's refusal (its ACL)
        self._refused_lock = threading.Lock()
        self._retry_at = 0.0
        self._tail: JournalTail | None = None
        self._state_info: mqtt.MQTTMessageInfo | None = None
        self._next_state_at = 0.0
        self._unsaved = False             # the acknowledged position moved since it was kept
        self._save_at = 0.0
        self._journal_info: tuple[str, mqtt.MQTTMessageInfo] | None = None
        self._journal_resend_at = 0.0
        self._journal_resend_s = RESEND_MIN_S
        self._resend_s = RESEND_MIN_S       # the wait for the hall's ack (doubles while silent)
        self._resend_at = float("inf")
        self._hall_silent = False
        self._ack_lock = threading.Lock()
        self._ack: Ack | None = None        # the newest ack from the hall not yet applied
        self._archived: frozenset[str] = frozenset()   # finished journals the hall archived
        self._ack_refused: str | None = None
        self._reconnected = threading.Event()
        self._read_failed: str | None = None
        self._inbox: queue.Queue[tuple[str, bytes]] = queue.Queue(REQUESTS_WAITING)
        self._retry_asked = threading.Event()      # a RETRY is in the worker's queue
        self._dropped = 0
        self.health_system: System = health_system or HostSystem()
        self.health_every_s = health_every_s
        self._health_now = threading.Event()     # set at each connection (and at a stop)
        self.client = self._make_client()
        self._threads = [threading.Thread(target=self._publishing, name="hall-publisher",
                                          daemon=True),
                         threading.Thread(target=self._serving, name="hall-requests",
                                          daemon=True),
                         # Its own thread: a command it runs (vcgencmd, chronyc) that hangs
                         # up to its deadline never holds up the events.
                         threading.Thread(target=self._health_publishing, name="hall-health",
                                          daemon=True)]

    # --- the client ---------------------------------------------------------------------------

    def _make_client(self) -> mqtt.Client:
        client = mqtt.Client(CallbackAPIVersion.VERSION2,
                             client_id=f"gammonclock-{self.table.table_id}",
                             protocol=MQTTProtocolVersion.MQTTv5)
        client.suppress_exceptions = True       # a bug in a callback never kills the thread
        client.enable_logger(PAHO_LOG)
        if self.hall.username is not None:
            client.username_pw_set(self.hall.username, read_password(self.hall.password_file))
        if self.broker.tls:
            client.tls_set(ca_certs=self.hall.ca_file, cert_reqs=ssl.CERT_REQUIRED)
        client.will_set(f"{self.topic}/online", "0", qos=1, retain=True)
        client.reconnect_delay_set(RECONNECT_MIN_S, RECONNECT_MAX_S)
        client.max_queued_messages_set(MAX_QUEUED)
        client.max_inflight_messages_set(WINDOW)
        client.on_connect = self._on_connect
        client.on_connect_fail = self._on_connect_fail
        client.on_disconnect = self._on_disconnect
        client.on_publish = self._on_publish
        client.on_message = self._on_message
        client.on_subscribe = self._on_subscribe
        return client

    def start(self) -> HallLink:
        log.info("hall: table %s on %s as %s (topics %s/…)", self.table.table_id,
                 self.hall.broker, self.hall.username or "no account", self.topic)
        self.client.connect_async(self.broker.host, self.broker.port, keepalive=KEEPALIVE_S,
                                  clean_start=True)
        self.client.loop_start()
        for thread in self._threads:
            thread.start()
        return self

    def close(self) -> None:
        """Say goodbye (`online` "0"), stop the threads and the connection; never blocks the
        stop for long."""
        self._stop.set()
        self.signal.wake.set()
        self._health_now.set()
        with contextlib.suppress(queue.Full):
            self._inbox.put_nowait(("stop", b""))       # the worker stops waiting at once
        for thread in self._threads:
            if thread.is_alive():
                thread.join(timeout=2)
        if self._unsaved:
            self._save_position()
        if self._connected.is_set():
            info = self.client.publish(f"{self.topic}/online", "0", qos=1, retain=True)
            if info.rc == MQTTErrorCode.MQTT_ERR_SUCCESS:
                info.wait_for_publish(CLOSE_WAIT_S)
            self.client.disconnect()
        self.client.loop_stop()

    def _say(self, state: str, level: int, message: str, *args: object) -> None:
        """Log a change of the link's state once, not at every retry."""
        if state != self._link_state:
            self._link_state = state
            log.log(level, message, *args)

    # --- callbacks: paho's network thread; they only note and hand over ---------------------------

    def _on_connect(self, client: mqtt.Client, _userdata: Any, _flags: Any,
                    reason: ReasonCode, _properties: Any = None) -> None:
        if reason.is_failure:
            self._say(f"refused {reason}", logging.ERROR,
                      "hall: the broker %s refuses the login of %r: %s (check [hall] username "
                      "and password_file, and the broker's accounts); the table plays on, "
                      "trying again", self.hall.broker, self.hall.username, reason)
            return
        self._say("connected", logging.INFO, "hall: connected to %s", self.hall.broker)
        # `online` "1" follows the SUBACK: a table online takes `cmd` (_on_subscribe)
        client.subscribe([(f"{self.topic}/{name}", 1) for name in SUBSCRIBED])
        self.signal.changed.set()          # the retained state may be old: publish it now
        self._reconnected.set()            # what the hall has not acknowledged goes again
        self._connected.set()
        self._health_now.set()             # the card's health at once, not in a minute
        self.signal.wake.set()

    def _on_connect_fail(self, _client: mqtt.Client, _userdata: Any) -> None:
        self._say("unreachable", logging.WARNING,
                  "hall: cannot reach the broker %s; the table plays on, trying again (up to "
                  "every %d s)", self.hall.broker, RECONNECT_MAX_S)

    def _on_disconnect(self, _client: mqtt.Client, _userdata: Any, _flags: Any,
                       reason: ReasonCode, _properties: Any = None) -> None:
        self._connected.clear()
        if not self._stop.is_set() and self._link_state == "connected":
            self._say("lost", logging.WARNING, "hall: lost the broker %s (%s); the table "
                      "plays on, events wait in the journal", self.hall.broker, reason)

    def _on_publish(self, _client: mqtt.Client, _userdata: Any, mid: int, reason: ReasonCode,
                    _properties: Any = None) -> None:
        if reason.is_failure:
            with self._refused_lock:
                if len(self._refused) > 1000:       # refusals of messages no one waits for
                    self._refused.clear()
                self._refused[mid] = reason
        self.signal.wake.set()

    def _on_subscribe(self, client: mqtt.Client, _userdata: Any, _mid: int,
                      reasons: list[ReasonCode], _properties: Any = None) -> None:
        for name, reason in zip(SUBSCRIBED, reasons, strict=False):
            if reason.is_failure:
                log.error("hall: the broker refuses %s/%s to this account: %s (check its ACL)",
                          self.topic, name, reason)
        client.publish(f"{self.topic}/online", "1", qos=1, retain=True)

    def _on_message(self, _client: mqtt.Client, _userdata: Any,
                    message: mqtt.MQTTMessage) -> None:
        name = message.topic.removeprefix(self.topic + "/")
        if name == "ack":
            self._on_ack(bytes(message.payload))
            return
        if name not in REQUESTS:
            return
        try:
            self._inbox.put_nowait((name, bytes(message.payload)))
        except queue.Full:
            self._dropped += 1
            if self._dropped == 1 or self._dropped % 100 == 0:
                log.warning("hall: too many requests waiting; %s dropped (%d so far; the "
                            "director sends it again)", name, self._dropped)

    def _on_ack(self, payload: bytes) -> None:
        """The hall's acknowledgement: kept for the publisher (the newest wins)."""
        if not payload:
            return                             # the director cleared it
        try:
            ack = Ack.parse(payload)
        except ValueError as exc:
            if self._ack_refused != str(exc):
                log.error("hall: %s/ack is not an acknowledgement the link can read (%s); "
                          "events wait in the journal", self.topic, exc)
            self._ack_refused = str(exc)
            return
        self._ack_refused = None
        with self._ack_lock:
            self._ack = ack
        self.signal.wake.set()

    def _refusal(self, mid: int) -> ReasonCode | None:
        with self._refused_lock:
            return self._refused.pop(mid, None)

    def _answer(self, suffix: str, payload: dict[str, Any]) -> None:
        self._publish_json(suffix, payload)

    def _publish_json(self, suffix: str, payload: dict[str, Any], retain: bool = False
                      ) -> mqtt.MQTTMessageInfo:
        return self.client.publish(f"{self.topic}/{suffix}",
                                   json.dumps(payload, ensure_ascii=False), qos=1,
                                   retain=retain)

    # --- the worker: cmd and match ------------------------------------------------------------

    def _serving(self) -> None:
        while not self._stop.is_set():
            name, payload = self._inbox.get()     # close() puts a "stop": no timer needed
            if self._stop.is_set():
                return
            if name == RETRY:
                self._retry_asked.clear()
            elif name in REQUESTS:
                handle = self.requests.on_cmd if name == "cmd" else self.requests.on_match
                self._guard(lambda: handle(payload))     # noqa: B023 (called at once)
            # After each message too: a match refused as pending while the match in progress
            # ended (its signal came before it was pending), or a RETRY lost to a full queue.
            self._guard(self.requests.retry_pending)

    def _ask_for_retry(self) -> None:
        """The publisher's thread, at each wake: once the match a `match` waited for is over,
        have the worker load it. The loop's signal wakes the publisher at the end (its
        effects), so this is prompt; the publisher's own wakes (every IDLE_WAKE_S) are a
        safety net that costs nothing, should a signal ever be missed."""
        if self._retry_asked.is_set() or not self.requests.pending_can_load():
            return
        self._retry_asked.set()
        try:
            self._inbox.put_nowait((RETRY, b""))
        except queue.Full:                 # the worker retries after each message it takes
            self._retry_asked.clear()

    @staticmethod
    def _guard(work: Callable[[], None]) -> None:
        try:
            work()
        except Exception:   # a bug in the link never reaches the table
            log.exception("hall: the link's worker failed")

    # --- the publisher: state, events, journals ---------------------------------------------------

    def _publishing(self) -> None:
        while not self._stop.is_set():
            self.signal.wake.wait(self._wait_s())
            self.signal.wake.clear()
            if self._stop.is_set():
                continue
            self._guard(self._ask_for_retry)   # loading needs no broker: the notice waits
            if not self._connected.is_set():
                continue
            self._guard(self._publish_state_if_due)
            self._guard(self._collect_acks)
            self._guard(self._publish_events)

    def _wait_s(self) -> float:
        """Until the next thing due (a state, a resend), at most IDLE_WAKE_S."""
        if not self._connected.is_set():
            return IDLE_WAKE_S
        due = min(self._next_state_at, self._resend_at if self._inflight else float("inf"),
                  self._journal_resend_at if self._journal_info else float("inf"))
        return max(0.05, min(IDLE_WAKE_S, due - time.monotonic()))

    # health (issue 24): its own thread, every HEALTH_EVERY_S and at each connection

    def _health_publishing(self) -> None:
        while not self._stop.is_set():
            self._health_now.wait(self.health_every_s)
            self._health_now.clear()
            if self._stop.is_set() or not self._connected.is_set():
                continue
            self._guard(self.publish_health)

    def publish_health(self) -> None:
        self._publish_json("health", self.health_payload(), retain=True)

    def health_payload(self) -> dict[str, Any]:
        """The table's health now (health.py; hall/PROTOCOL.md `health`)."""
        return read_health(self.health_system, self.state_dir, backlog=self.backlog,
                           at=iso_utc(self.wall_ns())).as_json()

    def backlog(self) -> Backlog:
        """The journal records the hall has not acknowledged: of the journal the outbox is on
        when the clock is writing it (else None: its end is not known without reading it), and
        how many journals after it wait."""
        with self.memory.lock:
            journal, seq = self.memory.journal, self.memory.seq
        current = self._current_journal()
        if journal is None:
            return Backlog(0, 0)
        on_card = self._on_card(journal) if journal == current else None
        records = max(0, on_card - seq) if on_card is not None else None
        order = [path.name for path in journals_in_order(self.state_dir)]
        after = len(order) - 1 - order.index(journal) if journal in order else 0
        return Backlog(records, after)

    # state

    def _publish_state_if_due(self) -> None:
        if self._state_info is not None:
            acked = _acknowledged(self._state_info)
            if acked is False:
                return                         # the newest state goes once this one is acked
            refused = self._refusal(self._state_info.mid)
            if refused is not None:
                self._say("state refused", logging.ERROR, "hall: the broker refuses %s/state: "
                          "%s (the account must be the table id %r under the shipped ACL)",
                          self.topic, refused, self.table.table_id)
            self._state_info = None
        due = time.monotonic() >= self._next_state_at
        if not self.signal.changed.is_set() and not due:
            return
        self.signal.changed.clear()
        state = self.state_payload()
        info = self._publish_json("state", state, retain=True)
        if info.rc == MQTTErrorCode.MQTT_ERR_SUCCESS:
            self._state_info = info
        running = state.get("running") is not None
        self._next_state_at = time.monotonic() + self.state_every_s if running else float("inf")

    def state_payload(self) -> dict[str, Any]:
        """The SPEC §9 state now, with the table's keys (hall/PROTOCOL.md)."""
        session = self.service.session
        state: dict[str, Any] = dict(self.service.status())
        state.pop("addresses", None)
        device = self.table.device.device
        extra: dict[str, Any] = {"table": self.table.table_id, "event": device.table_event,
                                 "players": None, "journal": None, "seq": None,
                                 "at": iso_utc(self.wall_ns()), "online": True}
        if session is not None:
            names = session.engine.rules.names
            extra["players"] = {"left": names.left, "right": names.right}
            journal = session.journal
            if journal is not None:
                extra["journal"] = Path(journal.path).name
                next_seq = getattr(getattr(journal, "writer", journal), "next_seq", None)
                extra["seq"] = next_seq - 1 if isinstance(next_seq, int) else None
        state.update(extra)
        return state

    # events

    def _collect_acks(self) -> None:
        """Move the acknowledged position to where the hall's ack says it holds the events, and
        keep it on the card; publish again from there at a reconnect, when paho gave up on a
        message, or when the hall's ack did not move within the wait (which doubles while the
        hall stays silent)."""
        if self._stop.is_set():                # closed: `close` keeps the position itself
            return
        if self._reconnected.is_set():
            self._reconnected.clear()
            self._again()
            self._journal_info = None          # published again now, if still not archived
        for _event, info in self._inflight:
            acked = _acknowledged(info)
            if acked is None:                  # paho gave up on it: again from the position
                self._again()
                break
            refused = self._refusal(info.mid) if acked else None
            if refused is not None:
                self._events_refused(refused)
                break
        with self._ack_lock:
            ack, self._ack = self._ack, None
        if ack is not None:
            self._apply_ack(ack)
        now = time.monotonic()
        if self._inflight and now >= self._resend_at:
            self._hall_is_silent(now)
        if self._unsaved and (not self._inflight or now >= self._save_at):
            self._save_position()

    def _again(self) -> None:
        """Publish again from the acknowledged position (nothing published counts)."""
        self._inflight.clear()
        self._tail = None

    def _hall_is_silent(self, now: float) -> None:
        first, last = self._inflight[0][0], self._inflight[-1][0]
        if not self._hall_silent:
            log.warning("hall: the hall has not acknowledged %s seq %d to %d within %.0f s; "
                        "publishing them again (then up to every %.0f s while it is silent)",
                        first.journal, first.seq, last.seq, self._resend_s, RESEND_MAX_S)
        self._hall_silent = True
        self._again()
        self._resend_s = min(self._resend_s * 2, RESEND_MAX_S)
        self._resend_at = now + self._resend_s

    def _apply_ack(self, ack: Ack) -> None:
        self._archived = ack.archived
        with self.memory.lock:
            journal, seq = self.memory.journal, self.memory.seq
        if journal is None:
            return
        if ack.journal == journal and ack.seq > seq:
            with self.memory.lock:
                self.memory.seq = ack.seq
            while self._inflight and self._inflight[0][0].seq <= ack.seq:
                self._inflight.popleft()
            if self._tail is not None and self._tail.last_event < ack.seq:
                self._tail = None              # the hall holds more than was read: go on there
            self._unsaved = True
            self._resend_s = RESEND_MIN_S
            self._resend_at = time.monotonic() + RESEND_MIN_S
            if self._hall_silent:
                log.info("hall: the hall acknowledges events again")
            self._hall_silent = False
            if self._link_state == "events refused":
                self._say("connected", logging.INFO, "hall: the broker takes the events again")
            return
        behind = ack.seq if ack.journal == journal else 0
        if behind >= seq:
            return
        # The hall holds less than it once acknowledged (its memory lost): what it lacks goes
        # again, from where it stands (or the journal's start when it is on another journal).
        log.warning("hall: the hall holds %s up to seq %d, not %s up to %d; publishing again "
                    "from seq %d", ack.journal, ack.seq, journal, seq, behind)
        with self.memory.lock:
            self.memory.seq = behind
        self._again()
        self._unsaved = True

    def _save_position(self) -> None:
        """Keep the acknowledged position on the card: when the window is empty (at once, in
        play: an event a press), else at most every SAVE_EVERY_S (a backlog drains a window at
        a time; a position not kept costs a few events sent again, which the hall drops)."""
        with self.memory.lock:
            self.memory.save()
        self._unsaved = False
        self._save_at = time.monotonic() + SAVE_EVERY_S

    def _events_refused(self, reason: ReasonCode) -> None:
        """The broker would not take an event (its ACL): publish again from the acknowledged
        position later; nothing is lost, nothing moves."""
        self._say("events refused", logging.ERROR,
                  "hall: the broker refuses %s/events: %s (the account %r must be the table id "
                  "%r under the shipped ACL); trying again every %d s", self.topic, reason,
                  self.hall.username, self.table.table_id, REFUSED_RETRY_S)
        self._again()
        self._retry_at = time.monotonic() + REFUSED_RETRY_S

    def _publish_events(self) -> None:
        if self._stop.is_set() or time.monotonic() < self._retry_at \
                or len(self._inflight) >= WINDOW:
            return
        tail = self._current_tail()
        if tail is None:
            return
        try:
            events = tail.read(WINDOW - len(self._inflight), self._on_card(tail.path.name))
        except OSError as exc:
            if self._read_failed != str(exc):
                log.warning("hall: cannot read %s (%s); trying again", tail.path, exc)
            self._read_failed = str(exc)
            self._tail = None
            return
        self._read_failed = None
        for event in events:
            if self._stop.is_set():            # closed: a link built after this one goes on
                self._tail = None
                return
            info = self._publish_json("events", event.payload())
            if info.rc != MQTTErrorCode.MQTT_ERR_SUCCESS:
                # The connection dropped since the check (paho may still send it after the
                # reconnect: the hall drops a duplicate), or paho's queue is full: either way
                # read again from the position the broker acknowledged, once connected.
                self._tail = None
                return
            if not self._inflight:
                self._resend_at = time.monotonic() + self._resend_s
            self._inflight.append((event, info))
        if not events and not self._inflight:
            self._journal_read_to_end(tail)

    def _current_tail(self) -> JournalTail | None:
        """The tail of the journal whose events go next (after the acknowledged position)."""
        with self.memory.lock:
            name, seq = self.memory.journal, self.memory.seq
        if name is None:
            name = self._current_journal()
            if name is None:
                return None                    # idle since the first start: nothing to send
            with self.memory.lock:
                self.memory.journal, self.memory.seq, self.memory.journal_sent = name, 0, False
                self.memory.save()
        if self._tail is None or self._tail.path.name != name:
            sent = max(seq, self._inflight[-1][0].seq if self._inflight else 0)
            self._tail = JournalTail(journal_file(self.state_dir, name), sent)
        return self._tail

    def _on_card(self, name: str) -> int | None:
        """The last seq of journal `name` its writer has on the card, when the clock is writing
        it (None: no bound, nothing more is written to it). The writer counts a record only
        once it is written and synced; a line in the file before that may still be cut back (a
        failed sync) or lost (a power cut), and must never reach the hall first."""
        session = self.service.session
        journal = session.journal if session is not None else None
        if journal is None or Path(journal.path).name != name:
            return None
        next_seq = getattr(getattr(journal, "writer", journal), "next_seq", None)
        return next_seq - 1 if isinstance(next_seq, int) else None

    def _current_journal(self) -> str | None:
        session = self.service.session
        if session is None or session.journal is None:
            return None
        return Path(session.journal.path).name

    def _journal_read_to_end(self, tail: JournalTail) -> None:
        """Every event of this journal is acknowledged: once its match is over, its text goes
        to `journal`; once the clock plays another journal, go on with the next one."""
        name = tail.path.name
        current = self._current_journal()
        finished = name != current or self._match_over()
        with self.memory.lock:
            sent = self.memory.journal_sent
        if finished and not sent and not self._send_journal(tail.path):
            return
        if name == current:
            return
        following = self._journal_after(name)
        if following is None:
            return
        with self.memory.lock:
            self.memory.journal, self.memory.seq, self.memory.journal_sent = following, 0, False
            self.memory.save()
        self._tail = None
        self.signal.wake.set()                 # go on at once with the next journal

    def _match_over(self) -> bool:
        session = self.service.session
        return session is not None and session.engine.match.play_phase is Phase.MATCH_OVER

    def _send_journal(self, path: Path) -> bool:
        """Publish the whole journal until the hall's ack lists it as archived (written and
        checked, whatever its verdict: sending it again would not change it); True then.
        Published again when no such ack comes within the wait (doubling up to RESEND_MAX_S: a
        hall that cannot write is not flooded) and at each reconnect."""
        name = path.name
        now = time.monotonic()
        if name in self._archived:
            if self._journal_info is not None:
                self._journal_info = None
            log.info("hall: the hall archived the finished journal %s (its verdict is on the "
                     "hall's archive list)", name)
            self._journal_resend_s = RESEND_MIN_S
            with self.memory.lock:
                self.memory.journal_sent = True
                self.memory.save()
            return True
        if self._journal_info is not None and self._journal_info[0] == name:
            info = self._journal_info[1]
            acked = _acknowledged(info)
            refused = self._refusal(info.mid) if acked else None
            if refused is not None:
                self._journal_info = None
                self._events_refused(refused)
                return False
            if acked is not None and now < self._journal_resend_at:
                return False                   # waiting for the hall's ack
            if acked is not None:
                log.warning("hall: the hall has not archived %s within %.0f s; sending it "
                            "again", name, self._journal_resend_s)
                self._journal_resend_s = min(self._journal_resend_s * 2, RESEND_MAX_S)
        try:
            text = path.read_text(encoding="utf-8", errors="replace").rstrip("\0")  # prealloc
        except OSError as exc:
            log.warning("hall: cannot read %s to send it (%s); trying again", path, exc)
            return False
        info = self._publish_json("journal", {"journal": name, "text": text})
        if info.rc != MQTTErrorCode.MQTT_ERR_SUCCESS:
            self._journal_info = None          # sent again at the next wake while connected
            return False
        self._journal_info = (name, info)
        self._journal_resend_at = now + self._journal_resend_s
        return False

    def _journal_after(self, name: str) -> str | None:
        """The journal played after `name`: the next in the clock's order, or, when `name` is
        not among them (gone, or continued in another after damage), the newest."""
        order = [path.name for path in journals_in_order(self.state_dir)]
        if name in order:
            i = order.index(name)
            return order[i + 1] if i + 1 < len(order) else None
        log.warning("hall: journal %s is no longer in %s; going on with the newest",
                    name, self.state_dir)
        return order[-1] if order and order[-1] != name else None


def _acknowledged(info: mqtt.MQTTMessageInfo) -> bool | None:
    """Whether the broker has acknowledged a QoS 1 message; None when paho says it never will.
    The link keeps only messages paho took (rc SUCCESS), and paho 2.x marks one failed later
    only for QoS 0; but a message it failed raises from `is_published` at every call, which
    once stalled the link for good, so a failure is read as "publish again", never raised."""
    try:
        return info.is_published()
    except (RuntimeError, ValueError):
        return None

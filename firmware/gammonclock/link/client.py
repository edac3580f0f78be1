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
- The worker thread answers `cmd`, loads `match` and ends a match `moved` to another clock
  (`requests.py`): through the clock's
  queue, like a press. It sleeps on its queue: a `match` that waits for the match in progress
  is loaded when the publisher, woken by the loop's signal, sees that match over and hands the
  worker a `RETRY` (within milliseconds of the end, not at the next tick of a timer).

A broker that is down, slow, refuses the login or vanishes changes nothing at the table: the
link logs each change of its connection once and goes on trying.

`HallLink` puts the parts together and runs their threads: the connection and paho's callbacks
(connection.py), the state (state.py), the events and finished journals (publisher.py), the
requests (requests.py), the health (runtime/health.py).
"""

from __future__ import annotations

import contextlib
import logging
import queue
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from paho.mqtt.enums import MQTTErrorCode

from gammonclock.config.loading import HallConfig
from gammonclock.runtime.health import Backlog, HostSystem, System, read_health
from gammonclock.runtime.lifecycle import Table
from gammonclock.runtime.service import ClockService
from gammonclock.wire import MOVED_TOPIC, BrokerURL, iso_utc

from .connection import KEEPALIVE_S, REQUESTS, Connection
from .outbox import HallMemory, journals_in_order
from .publisher import Publisher, current_journal, on_card
from .requests import HallRequests
from .signal import HallSignal
from .state import StatePublisher

log = logging.getLogger(__name__)

STATE_EVERY_S = 10.0        # `state` again while a clock runs
IDLE_WAKE_S = 1.0           # the publisher looks at the journal (and a waiting match) this often
REQUESTS_WAITING = 32       # cmd/match messages waiting for the worker; more are dropped
RETRY = "retry"             # for the worker: the match that waited may load now (not a topic)
CLOSE_WAIT_S = 1.0          # at a stop, how long the last `online` "0" may take
HEALTH_EVERY_S = 60.0       # `health` (retained) this often, and at each connection


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
        self.broker = BrokerURL.parse(hall.broker)      # checked with the config
        self.topic = f"{hall.prefix}/{table.table_id}"
        self.memory = HallMemory(state_dir)
        self.requests = HallRequests(service, table, self.memory, self._answer,
                                     match_topic=f"{self.topic}/match", wall_ns=wall_ns)
        self._connected = threading.Event()
        self._stop = threading.Event()
        self._inbox: queue.Queue[tuple[str, bytes]] = queue.Queue(REQUESTS_WAITING)
        self._retry_asked = threading.Event()      # a RETRY is in the worker's queue
        self.health_system: System = health_system or HostSystem()
        self.health_every_s = health_every_s
        self._health_now = threading.Event()     # set at each connection (and at a stop)
        self.connection = Connection(hall, self.broker, table.table_id, self.topic, self.signal,
                                     stop=self._stop, connected=self._connected,
                                     health_now=self._health_now, requests=self._inbox)
        self.client = self.connection.client
        self.state = StatePublisher(service, table, self.connection, self.signal, wall_ns,
                                    state_every_s)
        self.publisher = Publisher(service, self.state_dir, self.memory, self.connection,
                                   self.signal, self._stop)
        self._threads = [threading.Thread(target=self._publishing, name="hall-publisher",
                                          daemon=True),
                         threading.Thread(target=self._serving, name="hall-requests",
                                          daemon=True),
                         # Its own thread: a command it runs (vcgencmd, chronyc) that hangs
                         # up to its deadline never holds up the events.
                         threading.Thread(target=self._health_publishing, name="hall-health",
                                          daemon=True)]

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
        if self.publisher.unsaved:
            self.publisher.save_position()
        if self._connected.is_set():
            info = self.client.publish(f"{self.topic}/online", "0", qos=1, retain=True)
            if info.rc == MQTTErrorCode.MQTT_ERR_SUCCESS:
                info.wait_for_publish(CLOSE_WAIT_S)
            self.client.disconnect()
        self.client.loop_stop()

    def _answer(self, suffix: str, payload: dict[str, Any]) -> None:
        self.connection.publish_json(suffix, payload)

    # --- the worker: cmd and match ------------------------------------------------------------

    def _serving(self) -> None:
        while not self._stop.is_set():
            name, payload = self._inbox.get()     # close() puts a "stop": no timer needed
            if self._stop.is_set():
                return
            if name == RETRY:
                self._retry_asked.clear()
            elif name in REQUESTS:
                handle = {"cmd": self.requests.on_cmd, "match": self.requests.on_match,
                          MOVED_TOPIC: self.requests.on_moved}[name]
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
            self._guard(self.state.publish_if_due)
            self._guard(self.publisher.collect_acks)
            self._guard(self.publisher.publish_events)

    def _wait_s(self) -> float:
        """Until the next thing due (a state, a resend), at most IDLE_WAKE_S."""
        if not self._connected.is_set():
            return IDLE_WAKE_S
        due = min(self.state.next_at, self.publisher.due())
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
        self.connection.publish_json("health", self.health_payload(), retain=True)

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
        current = current_journal(self.service)
        if journal is None:
            return Backlog(0, 0)
        last = on_card(self.service, journal) if journal == current else None
        records = max(0, last - seq) if last is not None else None
        order = [path.name for path in journals_in_order(self.state_dir)]
        after = len(order) - 1 - order.index(journal) if journal in order else 0
        return Backlog(records, after)

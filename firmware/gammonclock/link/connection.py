"""The link's connection to the broker: paho's client (MQTT 5, TLS, the table's will, the
back-off, bounded queues) and its callbacks. They run on paho's network thread and only note
things and hand them over: the connection's state (logged once per change), the broker's
refusals of messages, the hall's newest ack (the publisher takes it, publisher.py), and `cmd`,
`match` and `moved` (into the worker's queue, client.py).
"""

from __future__ import annotations

import json
import logging
import queue
import ssl
import threading
from typing import Any

import paho.mqtt.client as mqtt
from paho.mqtt.enums import CallbackAPIVersion, MQTTProtocolVersion
from paho.mqtt.reasoncodes import ReasonCode

from gammonclock.config.loading import HallConfig
from gammonclock.wire import MOVED_TOPIC, Ack, BrokerURL

from .signal import HallSignal

# The link's lines in the log keep the one name they have always had (the clock's log shows it).
log = logging.getLogger("gammonclock.link.client")

WINDOW = 20                 # events published and not yet acknowledged, at most
MAX_QUEUED = 200            # messages paho may hold (events, states, replies): memory is bounded
KEEPALIVE_S = 15            # the broker notices a vanished clock (and sends its will) in ~1.5x
RECONNECT_MIN_S, RECONNECT_MAX_S = 1, 10   # a table is back at most 10 s after its broker
SUBSCRIBED = ("match", "cmd", "ack", MOVED_TOPIC)
REQUESTS = ("match", "cmd", MOVED_TOPIC)   # the worker's; `ack` is taken on paho's thread


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


PAHO_LOG = logging.getLogger("gammonclock.link.client.paho")
PAHO_LOG.addFilter(_DropNotConnected())


class Connection:
    """The table's one connection to the hall's broker, and what its callbacks noted."""

    def __init__(self, hall: HallConfig, broker: BrokerURL, table_id: str, topic: str,
                 signal: HallSignal, *, stop: threading.Event, connected: threading.Event,
                 health_now: threading.Event,
                 requests: queue.Queue[tuple[str, bytes]]) -> None:
        self.hall = hall
        self.broker = broker
        self.table_id = table_id
        self.topic = topic
        self.signal = signal
        self._stop = stop
        self.connected = connected
        self._health_now = health_now            # the health thread's (client.py)
        self._inbox = requests                   # the worker's queue (client.py)
        self.link_state = ""
        self._refused: dict[int, ReasonCode] = {}     # mid -> the broker's refusal (its ACL)
        self._refused_lock = threading.Lock()
        self._ack_lock = threading.Lock()
        self._ack: Ack | None = None        # the newest ack from the hall not yet applied
        self._ack_refused: str | None = None
        self.reconnected = threading.Event()      # what the hall has not acknowledged goes again
        self._dropped = 0
        self.client = self._make_client()

    def _make_client(self) -> mqtt.Client:
        client = mqtt.Client(CallbackAPIVersion.VERSION2,
                             client_id=f"gammonclock-{self.table_id}",
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

    def say(self, state: str, level: int, message: str, *args: object) -> None:
        """Log a change of the link's state once, not at every retry."""
        if state != self.link_state:
            self.link_state = state
            log.log(level, message, *args)

    # --- callbacks: paho's network thread; they only note and hand over ---------------------------

    def _on_connect(self, client: mqtt.Client, _userdata: Any, _flags: Any,
                    reason: ReasonCode, _properties: Any = None) -> None:
        if reason.is_failure:
            self.say(f"refused {reason}", logging.ERROR,
                     "hall: the broker %s refuses the login of %r: %s (check [hall] username "
                     "and password_file, and the broker's accounts); the table plays on, "
                     "trying again", self.hall.broker, self.hall.username, reason)
            return
        self.say("connected", logging.INFO, "hall: connected to %s", self.hall.broker)
        # `online` "1" follows the SUBACK: a table online takes `cmd` (_on_subscribe)
        client.subscribe([(f"{self.topic}/{name}", 1) for name in SUBSCRIBED])
        self.signal.changed.set()          # the retained state may be old: publish it now
        self.reconnected.set()             # what the hall has not acknowledged goes again
        self.connected.set()
        self._health_now.set()             # the card's health at once, not in a minute
        self.signal.wake.set()

    def _on_connect_fail(self, _client: mqtt.Client, _userdata: Any) -> None:
        self.say("unreachable", logging.WARNING,
                 "hall: cannot reach the broker %s; the table plays on, trying again (up to "
                 "every %d s)", self.hall.broker, RECONNECT_MAX_S)

    def _on_disconnect(self, _client: mqtt.Client, _userdata: Any, _flags: Any,
                       reason: ReasonCode, _properties: Any = None) -> None:
        self.connected.clear()
        if not self._stop.is_set() and self.link_state == "connected":
            self.say("lost", logging.WARNING, "hall: lost the broker %s (%s); the table "
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

    def refusal(self, mid: int) -> ReasonCode | None:
        with self._refused_lock:
            return self._refused.pop(mid, None)

    def take_ack(self) -> Ack | None:
        """The newest ack from the hall not yet applied (the publisher's thread), taken."""
        with self._ack_lock:
            ack, self._ack = self._ack, None
        return ack

    def publish_json(self, suffix: str, payload: dict[str, Any], retain: bool = False
                     ) -> mqtt.MQTTMessageInfo:
        return self.client.publish(f"{self.topic}/{suffix}",
                                   json.dumps(payload, ensure_ascii=False), qos=1,
                                   retain=retain)


def acknowledged(info: mqtt.MQTTMessageInfo) -> bool | None:
    """Whether the broker has acknowledged a QoS 1 message; None when paho says it never will.
    The link keeps only messages paho took (rc SUCCESS), and paho 2.x marks one failed later
    only for QoS 0; but a message it failed raises from `is_published` at every call, which
    once stalled the link for good, so a failure is read as "publish again", never raised."""
    try:
        return info.is_published()
    except (RuntimeError, ValueError):
        return None

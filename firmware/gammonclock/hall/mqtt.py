"""The hall's connection to the broker (SPEC §14): paho-mqtt's network thread, handed over to the
hall's asyncio loop.

- A persistent session (clean_session false; the client id is the account's name, which the
  shipped broker config enforces with `use_username_as_clientid true`, so no other account can
  take the hall's id or its queued messages): the broker keeps the hall's subscriptions and
  queues QoS 1 messages for it while it is away (bounded: `max_queued_messages`), and (with
  `persistence true`) across its own restart. What a broker drops anyway is sent again by the
  table, which goes on only on the hall's own `ack` (delivery.py).
- Subscribes to its own retained `P/+/ack` and `P/+/moved` too: a restarted hall reads back
  where it stood and which matches it moved away.
- Reconnects by itself, 1 s to 2 s apart (one client: trying every 2 s costs the broker
  nothing, and the hall is back within 2 s of its broker, before the tables' first resend at
  5 s: a restart of the broker does not make every table send its window twice); `status` says
  connected or why not (for the page).
- `publish` returns a future that is done when the broker has acknowledged the message.
"""

from __future__ import annotations

import asyncio
import collections
import logging
import ssl
import threading
import time
from collections.abc import Callable
from typing import Any

import paho.mqtt.client as mqtt
from paho.mqtt.enums import CallbackAPIVersion

from gammonclock.wire import BrokerURL

log = logging.getLogger("gammonclock.hall")

SUBSCRIBED = ("online", "state", "events", "journal", "notice", "cmd/reply", "ack", "health",
              "moved")
RECONNECT_S = (1, 2)        # the hall's reconnect back-off, from and to (seconds)


MessageHandler = Callable[[str, bytes, bool, int], None]


class HallClient:
    """The director's MQTT client. `on_message(topic, payload, retained, received_ms)` runs on
    the asyncio loop given to `start`."""

    def __init__(self, url: BrokerURL, user: str, password: str, prefix: str,
                 ca_file: str | None = None, client_id: str | None = None) -> None:
        self.url, self.prefix = url, prefix.rstrip("/")
        self.connected = False
        self.status = "connecting"
        self.client = mqtt.Client(CallbackAPIVersion.VERSION2,
                                  client_id=client_id or user,
                                  clean_session=False)
        self.client.username_pw_set(user, password)
        self.client.reconnect_delay_set(*RECONNECT_S)
        self.client.max_queued_messages_set(0)
        if url.tls:
            self.client.tls_set(ca_certs=ca_file, cert_reqs=ssl.CERT_REQUIRED)
        self.client.on_connect = self._on_connect
        self.client.on_disconnect = self._on_disconnect
        self.client.on_message = self._on_message
        self.client.on_publish = self._on_publish
        self._loop: asyncio.AbstractEventLoop | None = None
        self._handler: MessageHandler | None = None
        self._status_listeners: list[Callable[[], None]] = []
        self._lock = threading.Lock()
        self._pending: dict[int, asyncio.Future[None]] = {}
        self._acked: set[int] = set()
        self._arrived: collections.deque[tuple[str, bytes, bool, int]] = collections.deque()
        self._wake_pending = False

    def start(self, loop: asyncio.AbstractEventLoop, handler: MessageHandler) -> None:
        self._loop, self._handler = loop, handler
        self.client.connect_async(self.url.host, self.url.port, keepalive=30)
        self.client.loop_start()

    def stop(self) -> None:
        self.client.disconnect()
        self.client.loop_stop()

    def on_status(self, listener: Callable[[], None]) -> None:
        self._status_listeners.append(listener)

    def publish(self, topic: str, payload: str | bytes, retain: bool = False
                ) -> asyncio.Future[None]:
        """Publish with QoS 1; the future is done when the broker acknowledged it (paho queues
        it while the broker is away and sends it after the reconnect)."""
        assert self._loop is not None, "start() first"
        done: asyncio.Future[None] = self._loop.create_future()
        info = self.client.publish(topic, payload, qos=1, retain=retain)
        with self._lock:
            if info.mid in self._acked:
                self._acked.discard(info.mid)
                done.set_result(None)
            else:
                self._pending[info.mid] = done
        return done

    # --- paho's network thread ---------------------------------------------------------------

    def _on_connect(self, client: mqtt.Client, _userdata: Any, _flags: Any, reason: Any,
                    _properties: Any = None) -> None:
        if reason.is_failure:
            self._set_status(False, f"refused by the broker: {reason}")
            return
        client.subscribe([(f"{self.prefix}/+/{what}", 1) for what in SUBSCRIBED])
        self._set_status(True, "connected")

    def _on_disconnect(self, _client: mqtt.Client, _userdata: Any, _flags: Any, reason: Any,
                       _properties: Any = None) -> None:
        self._set_status(False, f"disconnected ({reason}); reconnecting")

    def _on_message(self, _client: mqtt.Client, _userdata: Any, msg: mqtt.MQTTMessage) -> None:
        received_ms = time.time_ns() // 1_000_000
        if self._loop is None or self._handler is None:
            return
        # Handed over in batches: one wake of the loop for all that arrived meanwhile. A wake is
        # a write to the loop's pipe, which lets go of the GIL; this thread then waited for it
        # while the loop was busy, message after message, and every table's messages waited
        # behind it in the broker's one connection.
        self._arrived.append((msg.topic, bytes(msg.payload), bool(msg.retain), received_ms))
        with self._lock:
            if self._wake_pending:
                return
            self._wake_pending = True
        self._loop.call_soon_threadsafe(self._hand_over)

    def _hand_over(self) -> None:
        """On the loop: every message that arrived, in order, to the handler."""
        with self._lock:
            self._wake_pending = False
        assert self._handler is not None
        while self._arrived:
            self._handler(*self._arrived.popleft())

    def _on_publish(self, _client: mqtt.Client, _userdata: Any, mid: int, _reason: Any,
                    _properties: Any = None) -> None:
        with self._lock:
            done = self._pending.pop(mid, None)
            if done is None:
                self._acked.add(mid)
        if done is not None and self._loop is not None:
            self._loop.call_soon_threadsafe(_resolve, done)

    def _set_status(self, connected: bool, status: str) -> None:
        if (connected, status) != (self.connected, self.status):
            log.info("broker %s:%s: %s", self.url.host, self.url.port, status)
        self.connected, self.status = connected, status
        if self._loop is not None:
            for listener in self._status_listeners:
                self._loop.call_soon_threadsafe(listener)


def _resolve(done: asyncio.Future[None]) -> None:
    if not done.done():
        done.set_result(None)

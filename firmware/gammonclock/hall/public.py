"""The spectators' view (SPEC §14): every table's public view, published by the hall on its own
topic tree (`PREFIX-public/t/TABLE` retained, and every change of a flush together on
`PREFIX-public/live`) to a second Mosquitto that serves it to browsers
over MQTT-over-WebSockets, read-only and anonymous (hall/broker/public.conf, its two ACLs, one
per listener, and public.nft, the bound per address).
The hall publishes once per change, whatever the number of spectators: a thousand phones cost
the broker, not the hall.

What a view holds is chosen key by key from the hall's checked state (`public_view`): the
players, score, length, game, Crawford, cube, whose turn, both reserves and their delay, breaks
left, the result when done, online or not. Never a journal, a seq, a PIN or anything of one, an
alert, a reply, a command or who sent it, an account's name (beyond the table's own name, which
is its topic) or the event's journal data.

`--public-delay SECONDS` holds every view back that long (live coverage's delay against
cheating): a view made at T is published at T + delay with its instants moved by the delay, so
the page counts the clocks as they were `delay` ago.

The hall's publisher connects with a client id that is random (128 bits) and secret: on the
spectators' broker no browser can take its place (Mosquitto's client ids span all listeners).
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
import secrets
import ssl
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from gammonclock.errors import GammonclockError
from gammonclock.wire import BrokerURL

from .accounts import TABLE_ID

log = logging.getLogger("gammonclock.hall")

VERSION = 1
MAX_VIEW_BYTES = 4096            # a view is a few hundred bytes; the page refuses more
MAX_DELAY_S = 3600.0
FLUSH_S = 0.25                   # views of tables that changed are made at most this often
MAX_BATCH_BYTES = 32768          # a `live` message: the views that changed in one flush
MAX_PENDING = 200_000            # delayed views waiting (a delay of an hour at 50 a second)
PUBLIC_USER = "hall-public"      # the hall's account there (public-hall.acl)
PUBLIC_PORT = 1884               # where the hall publishes (public.conf, loopback)
WEBSOCKET_PORT = 9001            # where the browsers connect (public.conf)
SIDES = ("left", "right")
# A §9 phase as spectators see it: the arbiter at the panels is a paused clock to them.
PHASES = {"between_games": "between_games", "running": "running",
          "cube_offered": "cube_offered", "paused": "paused", "result_entry": "result_entry",
          "break": "break", "match_over": "match_over", "arbiter": "paused", "idle": "idle",
          "ready": "ready"}
END_REASONS = frozenset({"score", "flag", "disqualified", "challenges", "abandoned"})
WEBSOCKET_URL = re.compile(r"wss?://[A-Za-z0-9.\-\[\]:]{1,200}(/[A-Za-z0-9._~/\-]{0,100})?")


class PublicError(GammonclockError, ValueError):
    """A public-view option that cannot be used (the message names it)."""


def is_public_path(path: str) -> bool:
    """The spectators' pages and their assets: served without the director's password (they
    show only what the public tree carries, and act on nothing)."""
    return (path == "/public" or path.startswith("/public/assets/")
            or path.startswith("/overlay/"))


def public_root(prefix: str) -> str:
    """The spectators' topic tree: beside the tables' (`gammonclock` -> `gammonclock-public`),
    never under it (a table's account writes under `PREFIX/TABLE/`)."""
    return prefix.rstrip("/") + "-public"


@dataclass(frozen=True)
class PublicOptions:
    """Where and how the hall publishes the public view."""

    broker: BrokerURL
    password: str
    user: str = PUBLIC_USER
    ca_file: str | None = None
    delay_s: float = 0.0

    def __post_init__(self) -> None:
        if not 0 <= self.delay_s <= MAX_DELAY_S:
            raise PublicError(f"--public-delay {self.delay_s:g}: give seconds from 0 to "
                              f"{MAX_DELAY_S:g}")


def websocket_url(text: str) -> str:
    """A `--public-websocket` URL (ws:// or wss://HOST[:PORT][/PATH]), checked: it is put in
    the public page."""
    if WEBSOCKET_URL.fullmatch(text) is None:
        raise PublicError(f"--public-websocket {text!r} is not ws://HOST:PORT or "
                          "wss://HOST:PORT[/PATH], e.g. ws://hall.local:9001")
    return text


# --- the spectators' broker ---------------------------------------------------------------------

# The files the shipped public.conf names, by what they are (public_broker_config's arguments).
SHIPPED_FILES = {"/etc/mosquitto/gammonclock-public.passwd": "password_file",
                 "/etc/mosquitto/gammonclock-public-hall.acl": "hall_acl",
                 "/etc/mosquitto/gammonclock-public-spectators.acl": "spectators_acl"}


def shipped_public_conf() -> str:
    from importlib import resources
    return resources.files(__package__).joinpath("broker", "public.conf").read_text(
        encoding="utf-8")


def public_broker_config(publish_port: int, websocket_port: int, *, password_file: str,
                         hall_acl: str, spectators_acl: str,
                         websocket_interface: str | None = "lo") -> list[str]:
    """The shipped public.conf line for line, its two listeners on these ports and its three
    files these (the demo's, the tests' and the benchmark's broker: where it logs and as whom it
    runs are theirs). The WebSocket listener binds WEBSOCKET_INTERFACE (`lo`: this machine only;
    None: every address, as shipped): Mosquitto 2.0.11 binds a WebSocket listener to an
    interface, and to every address when given an IP address."""
    files = {"password_file": password_file, "hall_acl": hall_acl,
             "spectators_acl": spectators_acl}
    lines: list[str] = []
    replaced: set[str] = set()
    for line in shipped_public_conf().splitlines():
        words = line.split()
        if words[:2] == ["listener", str(PUBLIC_PORT)]:
            line = " ".join(["listener", str(publish_port), *words[2:]])
            replaced.add("publisher's listener")
        elif words[:2] == ["listener", str(WEBSOCKET_PORT)]:
            line = " ".join(["listener", str(websocket_port),
                             *([websocket_interface] if websocket_interface else [])])
            replaced.add("spectators' listener")
        elif len(words) == 2 and words[1] in SHIPPED_FILES:
            line = f"{words[0]} {files[SHIPPED_FILES[words[1]]]}"
            replaced.add(SHIPPED_FILES[words[1]])
        lines.append(line)
    wanted = {"publisher's listener", "spectators' listener", *SHIPPED_FILES.values()}
    if replaced != wanted:
        raise PublicError("the shipped public.conf lacks its "
                          + ", ".join(sorted(wanted - replaced)))
    return lines


# --- the view ----------------------------------------------------------------------------------

def _side(value: object) -> str | None:
    return value if value in SIDES else None


def _int(value: object, low: int, high: int) -> int | None:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        return None
    return value


def _points(value: object) -> int | float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return value if 0 <= value <= 100_000 else None


def _name(value: object) -> str | None:
    return value[:64] if isinstance(value, str) else None


def public_view(table: str, online: bool | None, state: dict[str, Any],
                reserves_at_ms: int | None) -> dict[str, Any]:
    """A table's public view, chosen key by key from its checked state (messages.state_of):
    nothing else of the card or the state reaches it."""
    phase = PHASES.get(str(state.get("phase")), None)
    if state.get("lifecycle") == "ready" and phase == "between_games":
        phase = "ready"
    players = state.get("players") or {}
    score = state.get("score") or {}
    cube = state.get("cube") or {}
    clock = state.get("clock") or {}
    breaks = state.get("breaks_left") or {}

    def reserve(side: str) -> dict[str, int] | None:
        got = clock.get(side) if isinstance(clock, dict) else None
        if not isinstance(got, dict) or _int(got.get("reserve_ms"), -10**10, 10**10) is None:
            return None
        out = {"reserve_ms": int(got["reserve_ms"])}
        delay = _int(got.get("delay_ms"), 0, 10**10)
        if delay is not None:
            out["delay_ms"] = delay
        return out

    end = state.get("end_reason")
    return {
        "v": VERSION,
        "table": table,
        "online": online if isinstance(online, bool) else None,
        "event": _name(state.get("event")),
        "players": {s: _name(players.get(s)) for s in SIDES},
        "phase": phase,
        "match_length": _int(state.get("match_length"), 1, 10_000),
        "game": _int(state.get("game"), 0, 100_000),
        "score": {s: _points(score.get(s)) for s in SIDES},
        "crawford": state.get("crawford_game") is True,
        "cube": {"value": _int(cube.get("value"), 1, 1 << 20),
                 "owner": _side(cube.get("owner")),
                 "enabled": cube.get("enabled") is not False},
        "running": _side(state.get("running")) if online is not False else None,
        "clock": {s: reserve(s) for s in SIDES},
        "reserves_at_ms": reserves_at_ms,
        "breaks_left": {s: _int(breaks.get(s), 0, 99) for s in SIDES},
        "winner": _side(state.get("winner")),
        "end_reason": end if end in END_REASONS else None,
        "flag": _side(state.get("flag")),
    }


def view_payload(view: dict[str, Any], shift_ms: int, sent_ms: int) -> bytes:
    """A view as published: its instants moved by SHIFT_MS (the delay), the hall's clock now
    (`sent_ms`, the page's clock reference)."""
    out = dict(view)
    if isinstance(out.get("reserves_at_ms"), int):
        out["reserves_at_ms"] += shift_ms
    out["sent_ms"] = sent_ms
    return json.dumps(out, ensure_ascii=False, separators=(",", ":"),
                      allow_nan=False).encode("utf-8")


# --- the publisher -----------------------------------------------------------------------------

class PublicClient:
    """The hall's connection to the spectators' broker: paho's network thread; a random client
    id (128 bits, new for each start of the hall); QoS 0 retained publishes (what a lost
    connection drops, `on_connect` publishes again: every table's current view)."""

    def __init__(self, options: PublicOptions) -> None:
        import paho.mqtt.client as mqtt
        from paho.mqtt.enums import CallbackAPIVersion
        self.options = options
        # Secret: a WebSocket client given it would take this connection (client ids span
        # every listener of a Mosquitto). Published nowhere; only the broker's own log names it.
        self.client_id = f"{PUBLIC_USER}-{secrets.token_hex(16)}"
        self.client = mqtt.Client(CallbackAPIVersion.VERSION2, client_id=self.client_id,
                                  clean_session=True)
        self.client.username_pw_set(options.user, options.password)
        if options.broker.tls:
            context = ssl.create_default_context(cafile=options.ca_file)
            self.client.tls_set_context(context)
        self.client.reconnect_delay_set(1, 5)
        self.client.max_queued_messages_set(0)
        self.connected = False
        self.on_connect: Callable[[], None] = lambda: None
        self.client.on_connect = self._on_connect
        self.client.on_disconnect = self._on_disconnect

    def start(self) -> None:
        self.client.connect_async(self.options.broker.host, self.options.broker.port,
                                  keepalive=30)
        self.client.loop_start()

    def stop(self) -> None:
        self.client.disconnect()
        self.client.loop_stop()

    def publish(self, topic: str, payload: bytes, retain: bool = True) -> None:
        if self.connected:
            self.client.publish(topic, payload, qos=0, retain=retain)

    def _on_connect(self, _client: Any, _userdata: Any, _flags: Any, reason: Any,
                    _properties: Any) -> None:
        if getattr(reason, "is_failure", False):
            log.warning("public broker %s:%d refused the hall: %s",
                        self.options.broker.host, self.options.broker.port, reason)
            return
        self.connected = True
        self.on_connect()

    def _on_disconnect(self, _client: Any, _userdata: Any, _flags: Any, _reason: Any,
                       _properties: Any) -> None:
        self.connected = False


class PublicPublisher:
    """Every table's public view, published when it changes (coalesced, at most every FLUSH_S
    per table), after the delay. Hooked to the hall's `on_change`; runs on the hall's loop."""

    def __init__(self, hall: Any, options: PublicOptions,
                 client: PublicClient | None = None) -> None:
        self.hall = hall
        self.options = options
        self.root = public_root(hall.options.prefix)
        self.client = client or PublicClient(options)
        self.delay_ms = int(round(options.delay_s * 1000))
        self.dirty: set[str] = set()
        self.made: dict[str, dict[str, Any]] = {}       # the last view made, per table
        self.shown: dict[str, dict[str, Any]] = {}      # the last view published (delayed)
        self.pending: deque[tuple[float, str, dict[str, Any]]] = deque()
        self.published = 0
        self.dropped = 0
        self._loop: asyncio.AbstractEventLoop | None = None
        self._flush: asyncio.TimerHandle | None = None
        self._release: asyncio.TimerHandle | None = None

    def start(self) -> None:
        self._loop = asyncio.get_running_loop()
        loop = self._loop
        def connected() -> None:
            loop.call_soon_threadsafe(self.republish)

        self.client.on_connect = connected
        self.hall.on_change.append(self.changed)
        for table in list(self.hall.view.tables):
            self.dirty.add(table)
        self._schedule()
        self.client.start()

    def stop(self) -> None:
        for handle in (self._flush, self._release):
            if handle is not None:
                handle.cancel()
        if self.changed in self.hall.on_change:
            self.hall.on_change.remove(self.changed)
        self.client.stop()

    def topic(self, table: str) -> str:
        return f"{self.root}/t/{table}"

    @property
    def live_topic(self) -> str:
        return f"{self.root}/live"

    def changed(self, table: str, _received_ms: int) -> None:
        if TABLE_ID.fullmatch(table) is None:
            return
        self.dirty.add(table)
        self._schedule()

    def _schedule(self) -> None:
        if self._flush is None and self.dirty and self._loop is not None:
            self._flush = self._loop.call_later(FLUSH_S, self.flush)

    def flush(self) -> None:
        """Make the views of the tables that changed; queue those that differ."""
        self._flush = None
        tables, self.dirty = self.dirty, set()
        view = self.hall.view
        now = time.monotonic()
        for table in sorted(tables):
            if table not in view.tables:
                continue
            card = view.table(table)
            made = public_view(table, card.online, card.state or {},
                               view.reserves_at_ms(card))
            if self.made.get(table) == made:
                continue                         # an alert, a reply: nothing public changed
            self.made[table] = made
            if len(self.pending) >= MAX_PENDING:
                self.pending.popleft()
                self.dropped += 1
            self.pending.append((now + self.options.delay_s, table, made))
        self._release_due()

    def _release_due(self) -> None:
        if self._release is not None:
            self._release.cancel()
            self._release = None
        now = time.monotonic()
        due: list[tuple[str, dict[str, Any]]] = []
        while self.pending and self.pending[0][0] <= now:
            _due, table, made = self.pending.popleft()
            self.shown[table] = made
            due.append((table, made))
        if due:
            self._publish(due)
        if self.pending and self._loop is not None:
            self._release = self._loop.call_later(max(0.0, self.pending[0][0] - now),
                                                  self._release_due)

    def _publish(self, views: list[tuple[str, dict[str, Any]]], live: bool = True) -> None:
        """Each view retained on its table's topic (a page's first look, an overlay), and the
        lot as few `live` messages (the public page's stream: a spectator's browser gets a
        message per flush, not one per table: Mosquitto's WebSocket listener sends each client
        a message or so per turn of its loop)."""
        sent_ms = time.time_ns() // 1_000_000
        batch: list[bytes] = []
        size = 0
        for table, made in views:
            payload = view_payload(made, self.delay_ms, sent_ms)
            if len(payload) > MAX_VIEW_BYTES:
                log.warning("%s: its public view is %d bytes, more than %d; not published",
                            table, len(payload), MAX_VIEW_BYTES)
                continue
            self.published += 1
            self.client.publish(self.topic(table), payload)
            if not live:
                continue
            if size + len(payload) > MAX_BATCH_BYTES:
                self._send_batch(batch, sent_ms)
                batch, size = [], 0
            batch.append(payload)
            size += len(payload) + 1
        if batch:
            self._send_batch(batch, sent_ms)

    def _send_batch(self, views: list[bytes], sent_ms: int) -> None:
        self.client.publish(self.live_topic, b'{"v":%d,"sent_ms":%d,"views":[%s]}' % (
            VERSION, sent_ms, b",".join(views)), retain=False)

    def republish(self) -> None:
        """Every table's view as last published (after a reconnect: the broker keeps no
        retained view across its restart)."""
        self._publish(sorted(self.shown.items()), live=False)



"""A match moved at the hall (SPEC §13.5, §14.1; issue 31): the keys the hall verifies a table's
journal lines with (`--keys-dir`), journals sealed with a table's key or another (`sealed_lines`),
a table's events carrying them as its account publishes them (`publish_lines`), a spare that
answers the hall's `continue` as a clock would (`Spare`), what a table's account may read of the
retained `moved` (`retained`), and the director's decisions on disk (`decisions`). The hall's
move tests use them."""

from __future__ import annotations

import json
import shutil
import threading
import time
from pathlib import Path
from typing import Any

from gammonclock.journal.key import SECRET_FILE
from gammonclock.journal.records import Stamp
from gammonclock.journal.writer import JournalWriter
from hall_web_helpers import journal_event, publish
from mqtt_helpers import Broker, Collector

S = 1_000_000_000
CONFIG = '[match]\nlength = 7\n[players]\nleft = "Anna"\nright = "Boris"\n'


def key_of(table: str) -> bytes:
    """A device key of its own for TABLE (32 bytes; the same for the same name)."""
    import hashlib
    return hashlib.sha256(f"device key of {table}".encode()).digest()


def give_key(keys: Path, table: str, key: bytes) -> None:
    """KEYS/TABLE.key as the director copies a table's device.key there."""
    keys.mkdir(parents=True, exist_ok=True)
    (keys / f"{table}.key").write_text(key.hex() + "\n", encoding="utf-8")


def copy_device_key(keys: Path, table: str, state: Path) -> None:
    """KEYS/TABLE.key: a copy of the clock's own device.key (its state folder's)."""
    keys.mkdir(parents=True, exist_ok=True)
    shutil.copy(state / SECRET_FILE, keys / f"{table}.key")


def sealed_lines(path: Path, key: bytes, records: int = 5, config: str = CONFIG,
                 table: str = "table-1") -> list[str]:
    """A journal of RECORDS records after its header, sealed with KEY, written at PATH; its
    lines (without newlines)."""
    writer = JournalWriter.create(path, key, {"config": config, "table": table}, 0,
                                  Stamp(1, "boot", 2))
    for seq in range(1, records + 1):
        writer.append("tick", seq * S, {"effects": []}, Stamp(seq, "boot", seq))
    writer.close()
    return path.read_text(encoding="utf-8").splitlines()


def appended_lines(path: Path, key: bytes, more: int) -> list[str]:
    """MORE records appended to the journal at PATH, sealed with KEY (chained to its last
    record, as a journal's own writer would); the new lines."""
    from gammonclock.journal.reader import read_journal
    read = read_journal(path)
    before = len(path.read_text(encoding="utf-8").splitlines())
    writer = JournalWriter.reopen(read, key, read.last.t, Stamp(100, "boot", 100))
    for n in range(more):
        writer.append("tick", read.last.t + (n + 1) * S, {"effects": []},
                      Stamp(101 + n, "boot", 101 + n))
    writer.close()
    return path.read_text(encoding="utf-8").splitlines()[before:]


def publish_lines(client: Any, table: str, journal: str, lines: list[str], first: int = 0,
                  per_event: int = 3) -> None:
    """LINES (records `first`, `first`+1, …) as the table's events carry them, a few an event,
    published by CLIENT (a table's account)."""
    seq = first - 1
    for start in range(0, len(lines), per_event):
        part = lines[start:start + per_event]
        after, seq = (seq if seq >= 0 else 0), seq + len(part)
        publish(client, f"gammonclock/{table}/events", journal_event(journal, seq, after, part)
                .decode())


class Spare:
    """A spare table's account that answers the hall's `cmd`s as a clock that continues the
    match would (`acted`, "match continued: …"), noting each command it got."""

    def __init__(self, broker: Broker, table: str) -> None:
        self.table = table
        self.commands: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self.client = broker.client(table)
        self.client.on_message = self._on_message
        self.client.subscribe(f"gammonclock/{table}/cmd", 1)

    def _on_message(self, client: Any, _userdata: Any, msg: Any) -> None:
        request = json.loads(msg.payload)
        with self._lock:
            self.commands.append(request)
        words = str(request.get("command", "")).split()
        reply = {"id": request.get("id"), "ok": True, "outcome": "acted",
                 "said": [f"match continued: Anna-Boris, 7 points, from "
                          f"{words[2] if len(words) > 2 else '?'}"]}
        client.publish(f"gammonclock/{self.table}/cmd/reply", json.dumps(reply), qos=1)

    def got(self) -> list[dict[str, Any]]:
        with self._lock:
            return list(self.commands)

    def close(self) -> None:
        self.client.disconnect()
        self.client.loop_stop()


def retained(broker: Broker, user: str, topic: str, settle_s: float = 1.0) -> list[Any]:
    """The retained messages USER's account is given when it subscribes to TOPIC (its ACL
    decides), waited for SETTLE_S."""
    with Collector(broker, user, topic) as seen:
        time.sleep(settle_s)
        return [m for m in seen.messages if m.retain]


def decisions(archive: Path) -> list[dict[str, Any]]:
    """The director's decisions the hall recorded (ARCHIVE/hall-decisions.jsonl)."""
    path = archive / "hall-decisions.jsonl"
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def until(condition: Any, what: str, timeout: float = 30.0, step: Any = None) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"not within {timeout} s: {what}"
        if step is not None:
            step()
        time.sleep(0.01)


HALL_SECTION = """
[hall]
broker = "{url}"
username = "{user}"
password_file = "{password_file}"
"""


class _HallDevices(str):
    """A venue's device text whose `.format(table=…)` adds that table's [hall] section."""

    make: Any

    def __new__(cls, make: Any) -> _HallDevices:
        made = super().__new__(cls, "")
        made.make = make
        return made

    def format(self, *_args: object, **kwargs: object) -> str:
        return str(self.make(str(kwargs["table"])))


def with_hall(venue: Any, broker: Broker, more: Any = None) -> None:
    """Every clock VENUE builds from now on has a [hall] section for its own account (and
    `more(table)`'s sections, when given: a table's [arbiter])."""
    from venue_helpers import DEVICE_TEXT

    def text_for(table: str) -> str:
        return DEVICE_TEXT.format(table=table) + HALL_SECTION.format(
            url=broker.url, user=table, password_file=broker.password_file(table)) + (
            more(table) if more is not None else "")
    venue.device_text = _HallDevices(text_for)


def step(*devices: Any) -> None:
    """The clocks' loops, this thread's (the venue's devices are hand-stepped): what the hall
    asks is taken at once."""
    for device in devices:
        device.service.grace_ns = device.service.timer_grace_ns = 0
        device.service.step()


def post_move(pool: Any, hall: Any, body: dict[str, Any], *devices: Any
              ) -> tuple[int, dict[str, Any]]:
    """`POST /api/move` from another thread of `pool` while this one runs the clocks' loops;
    the HTTP status and the answer."""
    import urllib.error

    asked = pool.submit(hall.post, "/api/move", body)
    until(asked.done, "the hall answered the move", timeout=40, step=lambda: step(*devices))
    try:
        return 200, asked.result()
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())

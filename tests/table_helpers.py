"""A real clock with a `[hall]` link on mock pins, for the tests of the link and of the hall: its
device config, the clock itself (`Table`: tap, stop, start, its journal), and what the broker saw
of it. The `tables` fixture (tests/conftest.py) makes them."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from gammonclock.config.loading import parse_device_config
from gammonclock.core.arbiter import parse_command
from gammonclock.core.engine import ButtonEdge
from gammonclock.core.match import ArbiterAction
from gammonclock.device.build import Device, build_device
from gammonclock.journal.reader import read_journal
from gammonclock.journal.records import JOURNALS_DIR
from gammonclock.link import client as hall_link
from gammonclock.link.outbox import MEMORY_FILE
from gammonclock.runtime.inbox import Reply
from gammonclock.runtime.lifecycle import run_on_loop
from gammonclock.sides import Button
from mqtt_helpers import (
    Broker,
    Collector,
)

S = 1_000_000_000

TABLE = "table-1"

TOPIC = f"gammonclock/{TABLE}"

MATCH_TEXT = """\
[match]
length = 5

[players]
left = "Anna"
right = "Boris"
"""

OTHER_MATCH = MATCH_TEXT.replace("Boris", "Carla")

# A match file with the players to fill in (`MATCH.format(left=…, right=…)`).
MATCH = """\
[match]
length = 5

[players]
left = "{left}"
right = "{right}"
"""

def device_text(broker: Broker, *, table: str = TABLE, user: str = TABLE,
                password: str | None = None, match_file: Path | None = None) -> str:
    match = f'match_file = "{match_file}"\n' if match_file else ""
    ca = f'ca_file = "{broker.ca_file}"\n' if broker.tls else ""
    return f"""\
[hardware]
pin_factory = "mock"

[table]
id = "{table}"
event = "Moscow Open"
{match}
[hall]
broker = "{broker.url}"
username = "{user}"
password_file = "{broker.password_file(user, password)}"
{ca}"""

class Table:
    """One clock on mock pins, running on its own thread, that can be stopped and built again
    on the same state folder."""

    def __init__(self, tmp_path: Path, text: str) -> None:
        self.tmp_path = tmp_path
        self.state = tmp_path / "state"
        self.text = text
        self.device: Device | None = None
        self._worker: threading.Thread | None = None

    def start(self) -> Table:
        config = parse_device_config(self.text, str(self.tmp_path / "device.toml"))
        self.device = build_device(config, self.state)
        self._worker = threading.Thread(target=self.device.service.run, daemon=True)
        self._worker.start()
        return self

    def stop(self) -> None:
        if self.device is None:
            return
        self.device.service.stop()
        assert self._worker is not None
        self._worker.join(timeout=5)
        self.device.close()
        self.device = None

    @property
    def service(self) -> Any:
        assert self.device is not None
        return self.device.service

    def tap(self, button: Button) -> None:
        """A tap, applied and its records on the card before this returns."""
        now = self.service.clock_ns()
        self.service.submit(ButtonEdge(now, button, True))
        self.service.submit(ButtonEdge(now + S // 10, button, False))
        # `waiting()` drops when the loop takes an input, before its record is written: a task
        # after both edges runs only once the records before it are journaled.
        wait(lambda: self.service.waiting() == 0, "the tap was not applied")
        taken, _ = run_on_loop(self.service, lambda: None, wait_s=10.0)
        assert taken, "the loop did not take the task after the tap"

    def journal(self) -> Path:
        journals = sorted((self.state / JOURNALS_DIR).glob("match-*.jsonl"))
        assert journals, "no journal"
        return journals[-1]

def wait(condition: Callable[[], bool], what: str, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, what
        time.sleep(0.01)

def event_records(path: Path) -> list[tuple[str, int]]:
    """`(journal, seq)` of every record with effects, in the journal's order."""
    return [(path.name, r.seq) for r in read_journal(path).each()
            if r.kind in ("input", "tick") and r.data.get("effects")]

def seen_events(seen: Collector) -> list[tuple[str, int]]:
    """What a consumer that de-duplicates by `(journal, seq)` keeps, in arrival order."""
    kept: list[tuple[str, int]] = []
    for m in seen.on("events"):
        key = (m.json()["journal"], m.json()["seq"])
        if key not in kept:
            kept.append(key)
    return kept

def all_events_arrived(seen: Collector, expected: list[tuple[str, int]]) -> None:
    try:
        seen.wait_until(lambda _: set(expected) <= set(seen_events(seen)), timeout=15)
    except AssertionError:
        got = seen_events(seen)
        raise AssertionError(f"not received within 15 s: {[k for k in expected if k not in got]}"
                             f"; received, in order: {got}") from None

def link_of(table: Table) -> hall_link.HallLink:
    assert table.device is not None
    for closer in table.device.closers:        # the link itself, or the slot that runs it
        owner = getattr(closer, "__self__", None)
        for link in (owner, getattr(owner, "link", None)):
            if isinstance(link, hall_link.HallLink):
                return link
    raise AssertionError("no hall link runs on this clock")

def cmd(seen: Collector, request_id: str, command: str, **more: str) -> dict[str, Any]:
    seen.publish(f"{TOPIC}/cmd", json.dumps({"id": request_id, "command": command, **more}))
    n = len([m for m in seen.on("cmd/reply") if m.json()["id"] == request_id])
    reply = seen.wait_until(lambda ms: len([
        m for m in ms if m.topic.endswith("/cmd/reply") and m.json()["id"] == request_id]) > n)
    answer: dict[str, Any] = [m.json() for m in reply if m.topic.endswith("/cmd/reply")
                              and m.json()["id"] == request_id][-1]
    return answer

def end_the_match(table: Table) -> float:
    """The arbiter disqualifies left (as at the socket); when the match was over (monotonic)."""
    reply = Reply()
    command = parse_command(["disqualify", "left"])
    assert table.service.submit(ArbiterAction(table.service.clock_ns(), command, "socket"),
                                reply)
    assert reply.wait(5) is not None
    assert table.service.status()["phase"] == "match_over"
    return time.monotonic()

def right_player(table: Table) -> str | None:
    session = table.service.session
    return None if session is None else session.engine.rules.names.right

def acked(table: Table) -> dict[str, Any]:
    try:
        data: dict[str, Any] = json.loads((table.state / MEMORY_FILE).read_text())
    except (OSError, ValueError):
        return {}
    return data


def play(table: Table, taps: int) -> None:
    for i in range(taps):
        table.tap(Button.LEFT if i % 2 == 0 else Button.RIGHT)


def all_acknowledged(table: Table) -> bool:
    """The table's position on the card is its journal's last event."""
    expected = event_records(table.journal())
    return bool(expected) and (acked(table).get("journal"), acked(table).get("seq")) == \
        expected[-1]

def as_sent(monkeypatch: pytest.MonkeyPatch, journal: Path, change: Callable[[str], str]
            ) -> list[str]:
    """What the table's link reads of `journal` to send it, changed by `change` (a tail lost on
    a power cut, a record tampered with); the texts it read, in order."""
    from gammonclock.link import publisher

    real = publisher.written_bytes
    sent: list[str] = []

    def written_bytes(path: str | Path) -> bytes:
        data = real(path)
        if Path(path) != journal or threading.current_thread().name == "MainThread":
            return data
        sent.append(change(data.decode("utf-8", errors="replace")))
        return sent[-1].encode("utf-8")

    monkeypatch.setattr(publisher, "written_bytes", written_bytes)
    return sent


def loaded_clock(tables: Callable[..., Table], broker: Broker, tmp_path: Path, hall: Any
                 ) -> Table:
    """A real clock on mock pins (the `tables` fixture's), Anna v Boris loaded, once the hall
    (hall_web_helpers.RunningHall) has its state with its players."""
    match_file = tmp_path / "match.toml"
    match_file.write_text(MATCH_TEXT, encoding="utf-8")
    table = tables(device_text(broker, match_file=match_file))
    hall.wait(lambda: (hall.hall.view.tables.get(TABLE) is not None
                       and (hall.hall.view.tables[TABLE].state or {}).get("players")),
              "the clock's state in the hall")
    return table

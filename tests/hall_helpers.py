"""The real hall (`gammonclock.hall.server.Hall`) on its own asyncio loop in a thread, for the
delivery tests: what it received, what it holds of each table, what its archive has.

    with HallRunner(broker, tmp_path / "archive") as hall:
        hall.wait(lambda: hall.holds("table-1", expected), "every event in the hall")
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from gammonclock.hall.server import Hall, HallOptions
from gammonclock.wire import BrokerURL
from mqtt_helpers import DIRECTOR, Broker

P = "gammonclock"
T = TypeVar("T")


class HallRunner:
    """`Hall` started on entry and stopped on exit (the same archive folder may be given to a
    second one: a restarted hall). `events[table]` is every `(journal, seq)` the hall's view
    took from the broker."""

    def __init__(self, broker: Broker, archive: Path, keys_dir: Path | None = None) -> None:
        self.options = HallOptions(BrokerURL.parse(broker.url), DIRECTOR,
                                   broker.passwords[DIRECTOR], P, None, archive, keys_dir)
        self.loop = asyncio.new_event_loop()
        self.hall = Hall(self.options)
        self.events: dict[str, set[tuple[str, int]]] = {}
        self.acks: list[tuple[str, bytes]] = []
        self._lock = threading.Lock()
        self._started = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        receive = self.hall.receive

        def noting(topic: str, payload: bytes, retained: bool, received_ms: int) -> None:
            self._note(topic, payload)
            receive(topic, payload, retained, received_ms)

        self.hall.receive = noting      # type: ignore[method-assign]
        publish = self.hall.client.publish

        def published(topic: str, payload: str | bytes, retain: bool = False) -> Any:
            if topic.endswith("/ack"):
                with self._lock:
                    self.acks.append((topic, payload if isinstance(payload, bytes)
                                      else payload.encode()))
            return publish(topic, payload, retain)

        self.hall.client.publish = published    # type: ignore[method-assign]

    def _note(self, topic: str, payload: bytes) -> None:
        import json
        if not topic.endswith("/events"):
            return
        try:
            event = json.loads(payload)
            key = (event["journal"], event["seq"])
        except (ValueError, KeyError, TypeError):
            return
        with self._lock:
            self.events.setdefault(topic.split("/")[1], set()).add(key)

    def _run(self) -> None:
        asyncio.set_event_loop(self.loop)
        self.loop.run_until_complete(self.hall.start())
        self._started.set()
        self.loop.run_forever()

    def __enter__(self) -> HallRunner:
        self._thread.start()
        assert self._started.wait(10), "the hall did not start"
        self.wait(lambda: self.hall.client.connected, "the hall connected to the broker")
        return self

    def __exit__(self, *_exc: object) -> None:
        asyncio.run_coroutine_threadsafe(self.hall.stop(), self.loop).result(10)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(10)

    def call(self, work: Callable[[], T]) -> T:
        """WORK run on the hall's loop (its state is the loop's)."""
        async def run() -> T:
            return work()
        return asyncio.run_coroutine_threadsafe(run(), self.loop).result(10)

    def holds(self, table: str, expected: list[tuple[str, int]]) -> bool:
        with self._lock:
            return set(expected) <= self.events.get(table, set())

    def position(self, table: str) -> tuple[str | None, int]:
        return self.call(lambda: (self.hall.position(table).journal,
                                  self.hall.position(table).seq))

    def archived(self, table: str) -> list[str]:
        return self.call(lambda: list(self.hall.position(table).archived))

    def archive_list(self) -> list[dict[str, Any]]:
        return self.call(self.hall.archive_list)

    def alerts(self, table: str) -> str:
        """The table's card as text (its alerts among it)."""
        import json
        cards = self.call(self.hall.view.cards)
        return json.dumps([c for c in cards if c.get("table") == table], ensure_ascii=False)

    @staticmethod
    def wait(condition: Callable[[], bool], what: str, timeout: float = 15.0) -> None:
        deadline = time.monotonic() + timeout
        while not condition():
            if time.monotonic() > deadline:
                raise AssertionError(f"not within {timeout} s: {what}")
            time.sleep(0.02)

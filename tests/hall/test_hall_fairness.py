"""The hall takes every table's messages in turn (issue 18: one table can spoil only its own card).

Driven without a broker: `Hall.receive` is what paho's thread hands each message to, on the hall's
loop; the tests call it as that hand-over does and then let the loop run. Before the fair intake
a table's flood was taken whole before the next table's message (press -> page p99 1.5 s in
bench_hostile); a table's bad messages each wrote a log line.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from pathlib import Path
from typing import Any

import pytest

from gammonclock.hall import intake as hall_intake
from gammonclock.hall.mqtt import HallClient
from gammonclock.hall.server import Hall, HallOptions
from gammonclock.wire import BrokerURL

P = "gammonclock"


def _hall(tmp_path: Path) -> Hall:
    return Hall(HallOptions(BrokerURL(False, "127.0.0.1", 1), "hall", "unused",
                            archive=tmp_path / "archive"))


def _event(seq: int, journal: str = "match-h.jsonl", flags: int = 20) -> bytes:
    return json.dumps({"journal": journal, "seq": seq, "after": seq - 1,
                       "at": "2026-12-01T10:00:00.000Z",
                       "effects": [{"kind": "flag_fell", "side": "left"}] * flags}).encode()


def _state() -> bytes:
    return json.dumps({"phase": "running", "game": 1, "match_length": 7,
                       "score": {"left": 0, "right": 0}, "running": "left",
                       "clock": {"left": {"reserve_ms": 840000},
                                 "right": {"reserve_ms": 840000}},
                       "table": "table-1", "at": "2026-12-01T10:00:00.000Z"}).encode()


async def _until(condition: Any, seconds: float = 5.0) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "the hall did not get there"
        await asyncio.sleep(0.001)


def test_a_tables_message_waits_for_one_batch_not_for_another_tables_flood(tmp_path):
    """3 000 events of a flooding table arrive first, then one state of table-1: table-1's card
    changes after at most a batch of the flood, not after all of it."""
    hall = _hall(tmp_path)
    flood_taken_when_table_1_changed: list[int] = []

    def probe(table: str, _ms: int) -> None:
        if table == "table-1" and not flood_taken_when_table_1_changed:
            flood_taken_when_table_1_changed.append(hall.view.tables["table-H"].events)

    hall.on_change.append(probe)

    async def run() -> None:
        for seq in range(1, 3001):
            hall.receive(f"{P}/table-H/events", _event(seq), False, 0)
        hall.receive(f"{P}/table-1/state", _state(), False, 0)
        await _until(lambda: flood_taken_when_table_1_changed)

    asyncio.run(run())
    assert flood_taken_when_table_1_changed[0] <= hall_intake.FAIR_BATCH


def test_a_flooding_table_is_paced_and_what_overflows_is_dropped_unread(tmp_path):
    """One table is taken at most TABLE_RATE a second after a burst; past INBOX_PER_TABLE
    waiting, its messages are dropped unread (an event dropped is not acknowledged: an honest
    table sends it again). Another table is served meanwhile at once."""
    hall = _hall(tmp_path)
    sent = hall_intake.INBOX_PER_TABLE + 500

    async def run() -> tuple[int, int]:
        for seq in range(1, sent + 1):
            hall.receive(f"{P}/table-H/events", _event(seq, flags=0), False, 0)
        dropped = hall.inbox_dropped
        started = time.monotonic()
        await asyncio.sleep(0.5)
        hall.receive(f"{P}/table-1/state", _state(), False, 0)
        await _until(lambda: hall.view.tables.get("table-1") is not None
                     and hall.view.tables["table-1"].state is not None, 0.5)
        taken = len(hall.view.tables["table-H"].seen)    # records without effects: no events
        elapsed = time.monotonic() - started
        assert taken <= hall_intake.TABLE_BURST + elapsed * hall_intake.TABLE_RATE + 1
        return dropped, taken

    dropped, taken = asyncio.run(run())
    assert dropped == 500
    assert taken >= hall_intake.TABLE_BURST          # paced, not stopped


def test_an_honest_backlog_is_never_dropped(tmp_path):
    """A table draining a backlog sends a window of 20 events per acknowledgement: far under the
    inbox bound, so it is at most paced; every event is counted."""
    hall = _hall(tmp_path)

    async def run() -> None:
        for window in range(30):
            for seq in range(window * 20 + 1, window * 20 + 21):
                hall.receive(f"{P}/table-2/events", _event(seq, "match-2.jsonl", 1), False, 0)
            await asyncio.sleep(0)
        await _until(lambda: hall.view.tables["table-2"].events == 600)

    asyncio.run(run())
    assert hall.inbox_dropped == 0


def test_bad_messages_are_logged_once_per_window_per_table_and_shown_at_once(tmp_path, caplog):
    """A table's flood of bad messages writes one log line per window (with the count of those
    left out the next time), never hides another table's, and its card is shown again at once."""
    hall = _hall(tmp_path)
    changed: list[str] = []
    hall.on_change.append(lambda table, _ms: changed.append(table))

    async def run() -> None:
        for _ in range(200):
            hall.receive(f"{P}/table-H/state", b'{"phase": "running", "game": NaN}', False, 0)
        hall.receive(f"{P}/table-2/state", b"[1, 2", False, 0)
        await _until(lambda: "table-2" in changed)

    with caplog.at_level(logging.WARNING, logger="gammonclock.hall"):
        asyncio.run(run())
    lines = [r.getMessage() for r in caplog.records]
    assert sum("table-H" in line for line in lines) == 1, lines
    assert sum("table-2" in line for line in lines) == 1, lines
    assert "table-H" in changed                        # the card says so without waiting
    assert hall.view.tables["table-H"].bad_messages == 200


@pytest.mark.parametrize("messages", [1, 50])
def test_paho_hands_messages_over_in_one_wake_of_the_loop(messages):
    """paho's thread wakes the hall's loop once for every message that arrived meanwhile (a wake
    per message let go of the GIL each time, and the thread then waited for the busy loop)."""

    class Message:
        def __init__(self, n: int) -> None:
            self.topic, self.payload, self.retain = f"{P}/table-1/state", b"%d" % n, False

    async def run() -> list[bytes]:
        client = HallClient(BrokerURL(False, "127.0.0.1", 1), "hall", "unused", P)
        got: list[bytes] = []
        client._loop = asyncio.get_running_loop()
        client._handler = lambda _t, payload, _r, _ms: got.append(payload)
        wakes: list[Any] = []
        real = client._loop.call_soon_threadsafe

        def counting(callback: Any, *args: Any) -> Any:
            wakes.append(callback)
            return real(callback, *args)

        client._loop.call_soon_threadsafe = counting  # type: ignore[method-assign]
        for n in range(messages):
            client._on_message(client.client, None, Message(n))  # type: ignore[arg-type]
        assert len(wakes) == 1
        await _until(lambda: len(got) == messages)
        return got

    assert asyncio.run(run()) == [b"%d" % n for n in range(messages)]


def test_an_event_sent_again_has_the_ack_said_again(tmp_path):
    """Review of issue 18: a table sends again what the hall holds when the ack did not reach it
    (lost, or the broker's retained copy rolled back after a crash). The hall, finding nothing
    new to say, said nothing, and the table sent again every minute for ever. Now a resend of
    what the hall holds has the same ack published again."""
    hall = _hall(tmp_path)
    acks: list[bytes] = []
    hall.client.publish = lambda topic, payload, retain=False: acks.append(  # type: ignore
        payload.encode() if isinstance(payload, str) else payload)

    async def run() -> None:
        for seq in (1, 2):
            hall.receive(f"{P}/table-1/events", _event(seq, "match-1.jsonl", 0), False, 0)
        await _until(lambda: len(acks) == 1)
        hall.receive(f"{P}/table-1/events", _event(2, "match-1.jsonl", 0), False, 0)
        await _until(lambda: len(acks) == 2)

    asyncio.run(run())
    assert [(json.loads(a)["journal"], json.loads(a)["seq"]) for a in acks] == \
        [("match-1.jsonl", 2)] * 2

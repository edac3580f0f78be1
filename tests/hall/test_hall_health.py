"""The table's health on the director's page (issue 24): the clock publishes `P/T/health`
(retained, at each connection and every minute) through a real Mosquitto and the shipped ACL;
the hall checks it as untrusted (a hostile table spoils only its own card) and marks what the
director should look at."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from gammonclock.hall.health import marks
from gammonclock.hall.view import HallView, Rejected
from gammonclock.link import client as hall_link
from gammonclock.sides import Button
from hall_web_helpers import P, RunningHall, publish, table_client
from health_helpers import health, recorded
from mqtt_helpers import Broker, Collector
from table_helpers import TOPIC, Table, device_text, link_of, wait

NOW_MS = 1_764_650_000_000


def take(view: HallView, table: str, data: Any) -> str | None:
    payload = data if isinstance(data, bytes) else json.dumps(data).encode()
    return view.receive(f"{P}/{table}/health", payload, NOW_MS)


# --- marks ---------------------------------------------------------------------------------------

def card_health(data: dict[str, Any]) -> dict[str, Any]:
    view = HallView(P)
    assert take(view, "table-1", data) == "table-1"
    shown = view.card("table-1")["health"]
    assert isinstance(shown, dict)
    return shown


def test_a_healthy_pi_4_is_marked_only_for_its_clock_and_its_figures_are_kept():
    shown = card_health(health("pi4", fsync_p99_ms=4.2, fsyncs_in_hour=812))
    assert shown["marks"] == ["clock"]        # its recorded timesyncd is not synchronised
    assert shown["received_ms"] == NOW_MS
    assert shown["pi"] == "Raspberry Pi 4 Model B Rev 1.4" and shown["cpu_temp_c"] == 47.7
    assert shown["fsync_p99_ms"] == 4.2 and shown["fsyncs_in_hour"] == 812


@pytest.mark.parametrize(("board", "over", "expected"), [
    ("pi3", {}, ["supply"]),                                  # under-voltage since boot
    ("pi5", {}, ["supply", "hot"]),                           # under-voltage and throttled now
    ("pi4", {"clock": {"synchronized": True, "source": "chrony"}}, []),
    ("pi4", {"clock": {"synchronized": None, "source": None}}, []),   # unknown is not marked
    ("pi3", {"throttled": None}, []),
    # nearly full: under 10 % of the card, or under 200 MB whatever its size
    ("pi3", {"throttled": None, "disk": {"free_bytes": 2_900_000_000,
                                         "total_bytes": 30_000_000_000}}, ["card_full"]),
    ("pi3", {"throttled": None, "disk": {"free_bytes": 3_100_000_000,
                                         "total_bytes": 30_000_000_000}}, []),
    ("pi3", {"throttled": None, "disk": {"free_bytes": 199_000_000,
                                         "total_bytes": 1_000_000_000}}, ["card_full"]),
    # slow: the fsync p99 above 50 ms
    ("pi3", {"throttled": None, "fsync_p99_ms": 50.0}, []),
    ("pi3", {"throttled": None, "fsync_p99_ms": 51.2}, ["slow"]),
])
def test_what_the_hall_marks(board, over, expected):
    assert card_health(health(board, **over))["marks"] == expected
    assert marks(card_health(health(board, **over))) == expected


def test_off_a_pi_the_figures_are_null_and_nothing_is_marked():
    pc = health("pi4", pi=None, throttled=None, cpu_temp_c=None,
                clock={"synchronized": None, "source": None})
    shown = card_health(pc)
    assert shown["pi"] is None and shown["throttled"] is None and shown["marks"] == []


# --- a hostile table ------------------------------------------------------------------------------

BAD: list[tuple[str, Any]] = [
    ("too big", json.dumps({**health(), "pi": "x" * 5000}).encode()),
    ("NaN", json.dumps(health()).replace('"cpu_temp_c": 47.7', '"cpu_temp_c": NaN').encode()),
    ("a hot sun", {**health(), "cpu_temp_c": 5000}),
    ("a string for a bool", {**health(), "throttled": {**health()["throttled"],
                                                        "under_voltage": "yes"}}),
    ("free above total", {**health(), "disk": {"free_bytes": 2, "total_bytes": 1}}),
    ("a negative backlog", {**health(), "hall_backlog": {"records": -1, "journals": 0}}),
    ("an array", [1, 2, 3]),
    ("a long version", {**health(), "version": "9" * 41}),
    ("fsync as text", {**health(), "fsync_p99_ms": "fast"}),
    ("a bool for a number", {**health(), "uptime_s": True}),
]


@pytest.mark.parametrize(("why", "payload"), BAD, ids=[b[0] for b in BAD])
def test_a_bad_health_spoils_only_its_own_card_and_keeps_the_last_good_one(why, payload):
    view = HallView(P)
    take(view, "table-1", health("pi4"))
    take(view, "table-2", health("pi4"))
    before = view.card("table-2")
    with pytest.raises(Rejected) as refused:
        take(view, "table-1", payload)
    assert refused.value.table == "table-1" and "health" in str(refused.value)
    card = view.card("table-1")
    assert card["health"]["pi"] == "Raspberry Pi 4 Model B Rev 1.4"    # the last good one
    assert [n["kind"] for n in card["needs"]] == ["bad"]
    assert view.card("table-2") == before


def test_unknown_keys_are_dropped_and_text_is_cut():
    shown = card_health(health("pi4", extra={"a": 1}, pi="Raspberry Pi " + "9" * 100))
    assert "extra" not in shown and len(shown["pi"]) == 80


# --- the clock's link through a real Mosquitto ----------------------------------------------

@pytest.fixture
def pi5(monkeypatch: pytest.MonkeyPatch) -> None:
    """The clock reads the recorded Pi 5 (its supply sags)."""
    monkeypatch.setattr(hall_link, "HostSystem", lambda: recorded("pi5"))


def test_the_clock_publishes_its_health_retained_at_connect_and_every_minute(
        broker: Broker, tables: Callable[..., Table], pi5: None, tmp_path: Path) -> None:  # noqa: F811
    match_file = tmp_path / "match.toml"
    match_file.write_text('[match]\nlength = 5\n[players]\nleft = "Anna"\nright = "Boris"\n')
    with Collector(broker, "hall", f"{TOPIC}/health") as seen:
        table = tables(device_text(broker, match_file=match_file))
        first = seen.wait_for(lambda m: m.topic == f"{TOPIC}/health")
        data = first.json()
        assert data["pi"] == "Raspberry Pi 5 Model B Rev 1.0"
        assert data["throttled"]["under_voltage"] is True
        assert data["clock"] == {"synchronized": True, "source": "chrony 10.0.0.2"}
        assert data["hall_backlog"]["journals"] == 0
        assert isinstance(data["hall_backlog"]["records"], int)
        assert data["at"].endswith("Z")
        table.tap(Button.LEFT)
        link = link_of(table)
        assert link.health_every_s == hall_link.HEALTH_EVERY_S == 60.0
        link.health_every_s = 0.2            # a minute is long for a test: the same loop
        link._health_now.set()
        seen.wait_until(lambda ms: len([m for m in ms if m.topic.endswith("/health")]) >= 3)
    with Collector(broker, "hall", f"{TOPIC}/health") as late:
        retained = late.wait_for(lambda m: m.topic.endswith("/health"))
        assert retained.retain and retained.json()["pi"] == "Raspberry Pi 5 Model B Rev 1.0"


def test_the_journal_backlog_counts_what_the_hall_has_not_acknowledged(
        broker: Broker, tables: Callable[..., Table], pi5: None, tmp_path: Path) -> None:  # noqa: F811
    """No hall acknowledges here: every event the clock journals stays in its backlog."""
    match_file = tmp_path / "match.toml"
    match_file.write_text('[match]\nlength = 5\n[players]\nleft = "Anna"\nright = "Boris"\n')
    table = tables(device_text(broker, match_file=match_file))
    link = link_of(table)
    wait(lambda: link.backlog().records is not None, "the outbox never took the journal")
    before = link.backlog().records
    assert before is not None
    table.tap(Button.LEFT)
    table.tap(Button.RIGHT)
    after = link.backlog()
    assert after.records is not None and after.records >= before + 2 and after.journals == 0


def test_the_acl_lets_a_table_write_only_its_own_health(broker: Broker) -> None:  # noqa: F811
    with Collector(broker, "hall", f"{P}/+/health") as seen:
        one = table_client(broker, "table-1")
        try:
            publish(one, f"{P}/table-2/health", health("pi3"))          # refused by the ACL
            publish(one, f"{P}/table-1/health", {**health("pi4"), "version": "mine"})
            seen.wait_for(lambda m: m.json().get("version") == "mine")
        finally:
            one.disconnect()
            one.loop_stop()
        assert [m.topic for m in seen.messages] == [f"{P}/table-1/health"]


def test_the_hall_takes_the_health_onto_the_card(broker: Broker, tmp_path: Path,  # noqa: F811
                                                 caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger="gammonclock")
    with RunningHall(broker, tmp_path / "archive") as running:
        one, two = table_client(broker, "table-1"), table_client(broker, "table-2")
        try:
            publish(one, f"{P}/table-1/health", health("pi5"), retain=True)
            publish(two, f"{P}/table-2/health", '{"pi": NaN}')
            view = running.hall.view
            wait(lambda: view.tables.get("table-1") is not None
                 and view.tables["table-1"].health is not None
                 and view.tables.get("table-2") is not None
                 and view.tables["table-2"].bad_messages > 0, "the hall did not take both")
            assert view.card("table-1")["health"]["marks"] == ["supply", "hot"]
            assert view.card("table-2")["health"] is None
            assert "table-2/health" in caplog.text
        finally:
            for client in (one, two):
                client.disconnect()
                client.loop_stop()

"""The venue with nothing copied by hand (issue 32's "done when", on this machine; the container
test does it again under a real systemd after `scripts/install --hall`): the director provisions a
table with `gammonclock hall provision`, the stick's folder is plugged into a fresh clock (no PIN,
no [hall]), the clock joins the real Mosquitto with the stick's account, the director pushes the
round on the page, the match is played and ended, and its result counts at the hall, verified
with the key the hall kept, with no key, password or device file carried by anyone but the
stick."""

from __future__ import annotations

import signal
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from gammonclock.sides import Button
from hall_provision_helpers import Stick, provision
from hall_web_helpers import RunningHall
from mqtt_helpers import DIRECTOR, WATCHER, Broker, Collector
from provision_helpers import ask_clock
from table_helpers import Table, end_the_match, right_player, wait

T1 = "table-1"
FRESH = '[hardware]\npin_factory = "mock"\n'          # a card as installed: no PIN, no hall
ROUND = "table,left,right,length\ntable-1,Anna,Boris,3\n"


@pytest.fixture
def venue_broker(tmp_path: Path) -> Iterator[Broker]:
    """The tables' Mosquitto as `scripts/install --hall` leaves it: the director's account and
    nobody else's; the tables' accounts are provision's to add."""
    broker = Broker(tmp_path / "broker", {DIRECTOR: "director-pw", WATCHER: "watcher-pw"})
    try:
        broker.start()
        yield broker
    finally:
        broker.stop()


def reload(broker: Broker) -> None:
    """`systemctl reload mosquitto` (its ExecReload: SIGHUP, the password file read again)."""
    assert broker._process is not None
    broker._process.send_signal(signal.SIGHUP)
    time.sleep(0.3)


def counted(hall: RunningHall, journal: str) -> list[dict[str, object]]:
    return [r for r in hall.get("/api/results.json")["results"]
            if r["journal"] == journal and r["counted"]]


def test_a_provisioned_clock_plays_and_its_result_counts_with_nothing_copied_by_hand(
        tmp_path: Path, venue_broker: Broker) -> None:
    broker = venue_broker
    keys = tmp_path / "hall" / "keys"
    done = provision(tmp_path, T1, "--to", str(tmp_path / "sticks"), "--event", "Club night",
                     passwd=broker.folder / "passwd", keys=keys, broker=broker.url)
    assert done.returncode == 0, done.stderr
    reload(broker)
    stick = Stick(tmp_path / "sticks" / T1)

    with RunningHall(broker, tmp_path / "archive", keys) as hall, \
            Collector(broker, WATCHER, f"gammonclock/{T1}/online") as online:
        table = Table(tmp_path / "clock", FRESH).start()
        try:
            answer = ask_clock(table.state, ["usb-stick", str(stick.root)])   # plugged in
            assert answer["ok"], answer
            assert any(line.startswith(f"provisioned from the USB stick: table {T1}")
                       for line in answer["said"]), answer["said"]
            online.wait_for(lambda m: m.text == "1", timeout=30)

            pushed = hall.post("/api/round", {"csv": ROUND, "event": "Club night",
                                              "round": "1"})
            assert pushed["errors"] == 0, pushed
            wait(lambda: right_player(table) == "Boris", "the pushed match loaded", 30)
            table.tap(Button.LEFT)
            table.tap(Button.RIGHT)
            end_the_match(table)
            journal = f"{T1}/{table.journal().name}"
            hall.wait(lambda: bool(counted(hall, journal)), "the result counted", timeout=40)
        finally:
            table.stop()
        [result] = counted(hall, journal)
        assert (result["round"], result["left"], result["right"], result["verdict"]) == (
            "1", "Anna", "Boris", "intact"), result
        [entry] = [e for e in hall.get("/api/archive")["archive"]
                   if e["name"] == journal.split("/")[1]]
        assert entry["ok"] and entry["sealed"] and entry["verified"], entry   # the kept key

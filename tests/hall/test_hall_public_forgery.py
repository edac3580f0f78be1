"""Who may write the spectators' view (SPEC §14.1 "Spectators read the public tree and nothing
else"), tried as a hostile spectator would, against a real Mosquitto started from the shipped
public.conf and its two ACLs: a WebSocket client naming itself `hall-public` (no password, a
wrong one, an empty one) or any other name, or none, reads the public tree at most and writes
nothing; the overlay in a real Chromium and a genuine spectator still show the hall's view; no
WebSocket client takes the hall publisher's connection (client ids span every listener)."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from gammonclock.hall.public import PUBLIC_USER, PublicClient, public_root
from hall_web_helpers import PAGE_WAIT_MS, P, clock_state, publish, table_client
from mqtt_helpers import Broker
from public_helpers import BROKER_FILES, PublicBroker, PublicHall, Spectator

ROOT = public_root(P)
FORGED_VIEW = {"v": 1, "table": "table-1", "online": True, "event": "Spring Open",
               "players": {"left": "Anna", "right": "Boris"}, "phase": "match_over",
               "match_length": 7, "game": 9, "score": {"left": 3, "right": 7},
               "crawford": False, "cube": {"value": 64, "owner": "right", "enabled": True},
               "running": None, "clock": {"left": {"reserve_ms": 0},
                                          "right": {"reserve_ms": 600_000}},
               "reserves_at_ms": None, "breaks_left": {"left": 0, "right": 0},
               "winner": "right", "end_reason": "flag", "flag": "left", "sent_ms": 1}
FORGED = json.dumps(FORGED_VIEW).encode()
# Who a hostile browser says it is: (user name, password).
NAMES = [(None, None), (PUBLIC_USER, None), (PUBLIC_USER, "wrong"), (PUBLIC_USER, ""),
         ("hall", "x"), ("table-1", None)]


def wait_connected(client: PublicClient, public: PublicBroker) -> None:
    deadline = time.monotonic() + 10
    while not client.connected and time.monotonic() < deadline:
        time.sleep(0.02)
    assert client.connected, public.log()


def forge(public: PublicBroker, username: str | None, password: str | None) -> Spectator:
    """A WebSocket client that says it is USERNAME publishes the forged view, retained, where the
    hall publishes (each table's topic and the stream) and beyond; QoS 1, each one answered."""
    evil = Spectator(public, username=username, password=password)
    # The listener checks no password: any name is let in (to read at most), so every forged
    # publish reaches the broker, which answers it and keeps none of it.
    assert not evil.refused and evil.client.is_connected(), (evil.refused, public.log())
    for topic in (f"{ROOT}/t/table-1", f"{ROOT}/live", f"{ROOT}/t/table-2", f"{P}/table-1/match",
                  "anything"):
        info = evil.client.publish(topic, FORGED, qos=1, retain=True)
        info.wait_for_publish(5)
        assert info.is_published(), (topic, public.log())
    deadline = time.monotonic() + 10
    while public.log().count("Denied PUBLISH") < 5 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert public.log().count("Denied PUBLISH") >= 5, public.log()
    return evil


@pytest.mark.parametrize("username, password", NAMES)
def test_a_websocket_client_of_any_name_reads_at_most_and_writes_nothing(
        public: PublicBroker, username: str | None, password: str | None) -> None:
    hall = PublicClient(public.options())
    hall.start()
    watcher = evil = late = None
    try:
        wait_connected(hall, public)
        hall.publish(f"{ROOT}/t/table-1", b'{"v":1,"table":"table-1","players":{"left":"Anna"}}')
        watcher = Spectator(public)
        watcher.subscribe(f"{ROOT}/#")
        watcher.wait_for(lambda m: m.topic == f"{ROOT}/t/table-1", what="the hall's view")
        evil = forge(public, username, password)
        # What it may read: the public tree at most, never $SYS or the tables' tree.
        evil.subscribe("#", "$SYS/#", f"{P}/#", f"{ROOT}/#")
        # A marker from the hall after the forger's publishes: everything before it came.
        hall.publish(f"{ROOT}/zz-marker", b"{}")
        watcher.wait_for(lambda m: m.topic == f"{ROOT}/zz-marker", what="the marker")
        with watcher.lock:
            seen = [(m.topic, m.payload) for m in watcher.messages]
        assert all(payload != FORGED for _topic, payload in seen), seen
        evil.wait_for(lambda m: m.topic == f"{ROOT}/zz-marker", what="the forger's marker")
        with evil.lock:
            read = [m.topic for m in evil.messages]
        assert all(topic.startswith(ROOT + "/") for topic in read), read
        late = Spectator(public)             # the retained view is still the hall's
        late.subscribe(f"{ROOT}/#")
        message = late.wait_for(lambda m: m.topic == f"{ROOT}/t/table-1")
        assert b"Anna" in message.payload and message.payload != FORGED, message.payload
        hall.publish(f"{ROOT}/zz-marker", b"{}")
        late.wait_for(lambda m: m.topic == f"{ROOT}/zz-marker", what="the late marker")
        with late.lock:
            retained = {m.topic: m.payload for m in late.messages}
        assert FORGED not in retained.values(), retained
        assert hall.connected
    finally:
        for client in (watcher, evil, late):
            if client is not None:
                client.close()
        hall.stop()


def test_the_spectators_acl_has_no_account_and_writes_nothing() -> None:
    """The WebSocket listener's ACL reaches no `user` section: every name a client may give
    there gets at most the read lines; the account's write rule is in the loopback listener's
    ACL only. Each listener of public.conf names its own ACL."""
    spectators = [line.split() for line in
                  (BROKER_FILES / "public-spectators.acl").read_text().splitlines()
                  if line.strip() and not line.lstrip().startswith("#")]
    assert spectators and all(line[0] in ("topic", "pattern") and line[1] == "read"
                              for line in spectators), spectators
    hall = (BROKER_FILES / "public-hall.acl").read_text().split()
    assert hall.count("user") == 1 and hall[hall.index("user") + 1] == PUBLIC_USER
    listeners: list[dict[str, str]] = []
    for line in (BROKER_FILES / "public.conf").read_text().splitlines():
        words = line.split("#", 1)[0].split()
        if words[:1] == ["listener"]:
            listeners.append({"listener": " ".join(words[1:])})
        elif words and listeners:
            listeners[-1][words[0]] = " ".join(words[1:])
    assert [x["listener"] for x in listeners] == ["1884 127.0.0.1", "9001"]
    publisher, browsers = listeners
    assert publisher["allow_anonymous"] == "false" and "password_file" in publisher
    assert publisher["acl_file"].endswith("gammonclock-public-hall.acl")
    assert browsers["protocol"] == "websockets" and browsers["allow_anonymous"] == "true"
    assert browsers["acl_file"].endswith("gammonclock-public-spectators.acl")


@pytest.fixture
def forged_hall(broker: Broker, public: PublicBroker,  # noqa: F811
                tmp_path: Path) -> Iterator[PublicHall]:
    """The hall publishing table-1's real view (Anna v Boris, cube 2 on the right, playing),
    then a WebSocket client naming itself `hall-public`, without a password, publishing a
    forged one retained (Boris wins on time, cube 64), and one with a wrong password."""
    table = table_client(broker, "table-1")
    try:
        with PublicHall(broker, public, tmp_path / "archive") as hall:
            watcher = Spectator(public)
            watcher.subscribe(f"{ROOT}/t/table-1")
            publish(table, f"{P}/table-1/online", "1", retain=True)
            publish(table, f"{P}/table-1/state", clock_state(), retain=True)
            watcher.wait_for(lambda m: b'"running":"left"' in m.payload, timeout=10,
                             what="the hall's view of table-1")
            watcher.close()
            for password in (None, "wrong"):
                forge(public, PUBLIC_USER, password).close()
            yield hall
    finally:
        table.disconnect()
        table.loop_stop()


def test_the_overlay_and_a_spectator_show_the_halls_view_not_the_forgers(
        browser: Any, forged_hall: PublicHall, public: PublicBroker,  # noqa: F811
        tmp_path: Path) -> None:
    spectator = Spectator(public)
    page = browser.new_page(viewport={"width": 1920, "height": 1080})
    try:
        spectator.subscribe(f"{ROOT}/#")
        view = json.loads(spectator.wait_for(lambda m: m.topic == f"{ROOT}/t/table-1").payload)
        assert view["cube"]["value"] == 2 and view["winner"] is None, view
        page.goto(f"{forged_hall.base}/overlay/table-1")
        page.wait_for_selector('.panel[data-view="table-1"]', timeout=PAGE_WAIT_MS)
        page.wait_for_selector('body[data-status="connected"]', timeout=PAGE_WAIT_MS)
        text = page.inner_text(".panel")
        page.screenshot(path=str(tmp_path / "overlay-after-forgery.png"))
        assert "Anna" in text and "Boris" in text, text
        assert "wins" not in text and "on time" not in text, text
        assert page.inner_text('.panel .ov-row[data-side="right"] .cube') == "2"
        assert "64" not in text, text
        page.goto(f"{forged_hall.base}/public")
        page.wait_for_selector('.table[data-view="table-1"]', timeout=PAGE_WAIT_MS)
        public_text = page.inner_text('.table[data-view="table-1"]')
        assert "wins" not in public_text and "64" not in public_text, public_text
        with spectator.lock:
            assert all(m.payload != FORGED for m in spectator.messages)
    finally:
        page.close()
        spectator.close()


def test_no_websocket_client_takes_the_publishers_connection(public: PublicBroker) -> None:
    """Mosquitto's client ids span its listeners: a WebSocket client given the publisher's
    exact id would close its connection. That id is 128 random bits, new for each start of the
    hall and published nowhere; every guess, under the account's name too, takes nothing."""
    hall = PublicClient(public.options())
    other = PublicClient(public.options())
    own_id = hall.client_id
    assert own_id.startswith(f"{PUBLIC_USER}-") and len(own_id) >= len(PUBLIC_USER) + 33
    assert other.client_id != own_id
    drops: list[int] = []
    disconnect = hall.client.on_disconnect

    def noted(*args: Any) -> None:
        drops.append(1)
        assert disconnect is not None
        disconnect(*args)

    hall.client.on_disconnect = noted
    hall.start()
    spectators = []
    try:
        wait_connected(hall, public)
        for guess in ("hall", PUBLIC_USER, f"{PUBLIC_USER}-", f"{PUBLIC_USER}-0", "table-1", ""):
            for username, password in ((None, None), (PUBLIC_USER, None), (PUBLIC_USER, "x")):
                spectators.append(Spectator(public, client_id=guess, username=username,
                                            password=password))
        # (each guess took the one before it of the same id: ids span accounts and none)
        watcher = Spectator(public)
        spectators.append(watcher)
        hall.publish(f"{ROOT}/t/table-1", b"{}")
        watcher.subscribe(f"{ROOT}/#")
        watcher.wait_for(lambda m: m.topic == f"{ROOT}/t/table-1")
        assert hall.connected and drops == [], public.log()
    finally:
        for spectator in spectators:
            spectator.close()
        hall.stop()

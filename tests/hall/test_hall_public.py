"""The spectators' view (SPEC §14): the hall publishes each table's public view to a second,
real Mosquitto (hall/broker/public.conf and its two ACLs) that anonymous browsers read over
WebSockets; the public page and the stream overlay in a real headless Chromium read it from
there. Attacks: the public view never carries a PIN, an arbiter's data, a journal or an
account's name (what a WebSocket client may do there: test_hall_public_forgery.py; one address
holding every connection: test_hall_public_firewall.py)."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from gammonclock.hall.public import (
    MAX_VIEW_BYTES,
    PublicClient,
    public_root,
    public_view,
)
from hall_web_helpers import P, clock_state, publish, table_client
from mqtt_helpers import Broker
from public_helpers import PublicBroker, PublicHall, Spectator

ROOT = public_root(P)
SECRET_PIN_HASH = "5e" * 32
ARBITER = "arbiter-olga"


def view_of(message: Any) -> dict[str, Any]:
    data = json.loads(message.payload)
    assert isinstance(data, dict)
    return data


# --- the spectators' broker (what a WebSocket client may do: test_hall_public_forgery.py) -------

def test_the_tables_broker_has_no_anonymous_or_websocket_listener() -> None:
    """The spectators have a broker of their own (public.conf says why): the tables' broker
    keeps every client bound to an account."""
    shipped = (Path(__file__).resolve().parents[2] / "hall" / "mosquitto.conf").read_text()
    lines = [line.split("#", 1)[0].split() for line in shipped.splitlines()]
    assert ["allow_anonymous", "false"] in lines
    assert ["allow_anonymous", "true"] not in lines
    assert not any(line[:1] == ["protocol"] for line in lines)


# --- what the hall publishes ------------------------------------------------------------------

def test_a_view_is_chosen_key_by_key() -> None:
    state = {**clock_state(), "pin_hash": SECRET_PIN_HASH, "by": ARBITER,
             "arbiter": {"pin": "1234"}, "phase": "arbiter"}
    view = public_view("table-1", True, state, 123)
    text = json.dumps(view)
    for private in (SECRET_PIN_HASH, ARBITER, "1234", "journal", "seq", "match-1.jsonl"):
        assert private not in text
    assert view["phase"] == "paused"         # the arbiter at the panels: a paused clock
    assert view["players"] == {"left": "Anna", "right": "Boris"}
    assert view["cube"] == {"value": 2, "owner": "right", "enabled": True}
    assert view["clock"]["left"] == {"reserve_ms": 600_000}
    assert view["reserves_at_ms"] == 123
    offline = public_view("table-1", False, clock_state(), 123)
    assert offline["running"] is None and offline["online"] is False


def test_a_press_reaches_the_spectators_and_nothing_private_does(
        broker: Broker, public: PublicBroker, tmp_path: Path) -> None:  # noqa: F811
    table = table_client(broker, "table-1")
    watcher = Spectator(public)
    watcher.subscribe(f"{ROOT}/#")
    try:
        with PublicHall(broker, public, tmp_path / "archive") as hall:
            publish(table, f"{P}/table-1/online", "1", retain=True)
            publish(table, f"{P}/table-1/state",
                    {**clock_state(seq=5), "pin_hash": SECRET_PIN_HASH, "by": ARBITER})
            first = view_of(watcher.wait_for(lambda m: m.topic == f"{ROOT}/t/table-1"))
            assert first["running"] == "left" and first["score"] == {"left": 3, "right": 2}
            # An arbiter's action with its PIN data, and a PIN failure at the panels.
            publish(table, f"{P}/table-1/events", {
                "journal": "match-1.jsonl", "seq": 6, "at": clock_state()["at"],
                "effects": [{"kind": "arbiter_action", "by": ARBITER,
                             "pin_hash": SECRET_PIN_HASH},
                            {"kind": "refused", "reason": "pin_wrong",
                             "why": f"PIN {SECRET_PIN_HASH}"}]})
            hall.wait(lambda: any(n["kind"] == "pin" for n in hall.card("table-1")["needs"]),
                      "the PIN alert on the director's card")
            # The press: the right player's turn now.
            publish(table, f"{P}/table-1/state",
                    {**clock_state(seq=7, running="right", left_ms=590_000),
                     "pin_hash": SECRET_PIN_HASH})
            pressed = view_of(watcher.wait_for(
                lambda m: m.topic.endswith("/t/table-1") and b'"running":"right"' in m.payload,
                what="the press"))
            live = watcher.wait_for(lambda m: m.topic == f"{ROOT}/live"
                                    and b'"running":"right"' in m.payload, what="the stream")
            assert json.loads(live.payload)["views"] == [pressed]
            assert pressed["clock"]["left"]["reserve_ms"] == 590_000
            published = hall.publisher.published
            assert published >= 2
        with watcher.lock:
            payloads = [m.payload for m in watcher.messages if "/t/" in m.topic]
            everything = [m.payload for m in watcher.messages]
        for payload in payloads:
            assert len(payload) <= MAX_VIEW_BYTES
        for payload in everything:
            for private in (SECRET_PIN_HASH, ARBITER, "PIN", "journal", "seq", "needs",
                            "alert", "pin", "hall"):
                assert private.encode() not in payload, (private, payload)
        # An alert is not public: the PIN failure published nothing more.
        assert len(payloads) == published
    finally:
        watcher.close()
        table.disconnect()
        table.loop_stop()


def test_the_public_delay_holds_every_view_back(broker: Broker, public: PublicBroker,  # noqa: F811
                                                tmp_path: Path) -> None:
    table = table_client(broker, "table-1")
    watcher = Spectator(public)
    watcher.subscribe(f"{ROOT}/#")
    try:
        with PublicHall(broker, public, tmp_path / "archive", delay_s=1.5) as hall:
            publish(table, f"{P}/table-1/online", "1", retain=True)
            sent = time.monotonic()
            publish(table, f"{P}/table-1/state", clock_state(seq=5))
            message = watcher.wait_for(lambda m: m.topic == f"{ROOT}/t/table-1", timeout=10)
            came = time.monotonic()
            view = view_of(message)
            card = hall.card("table-1")
        # Not before the delay (a lower bound: it cannot come sooner), and its clock moved by it.
        assert came - sent >= 1.5 - 0.05
        assert view["reserves_at_ms"] - card["reserves_at_ms"] == 1500
    finally:
        watcher.close()
        table.disconnect()
        table.loop_stop()


def test_the_public_page_needs_no_password_and_the_directors_still_does(
        broker: Broker, public: PublicBroker, tmp_path: Path) -> None:  # noqa: F811
    import urllib.error
    import urllib.request
    with PublicHall(broker, public, tmp_path / "archive", password="s3cret") as hall:
        for path in ("/public", "/public?lang=ru", "/overlay/table-1",
                     "/public/assets/public.js", "/public/assets/mqtt_ws.js"):
            with urllib.request.urlopen(hall.base + path, timeout=10) as response:
                assert response.status == 200
                text = response.read().decode()
                assert "s3cret" not in text and hall.token not in text
        for path in ("/", "/api/cards", "/api/results.csv", "/static/hall.js",
                     "/public/assets/texts.json", "/public/assets/../hall.js"):
            with pytest.raises(urllib.error.HTTPError) as refused:
                urllib.request.urlopen(hall.base + path, timeout=10)
            assert refused.value.code in (401, 404), path
        with pytest.raises(urllib.error.HTTPError) as bad:
            urllib.request.urlopen(hall.base + "/overlay/..%2Fhall", timeout=10)
        assert bad.value.code == 404


@pytest.mark.parametrize("given, said", [
    (["--public-delay", "30"], "need --public-broker"),
    (["--public-websocket", "ws://hall.local:9001"], "need --public-broker"),
    (["--public-broker", "http://x"], "--public-broker 'http://x' is not a broker URL"),
    (["--public-broker", "mqtt://127.0.0.1:1884"], "--public-password-file"),
    (["--public-broker", "mqtt://127.0.0.1:1884", "--public-password-file", "PW",
      "--public-delay", "7200"], "--public-delay 7200: give seconds from 0 to 3600"),
    (["--public-broker", "mqtt://127.0.0.1:1884", "--public-password-file", "PW",
      "--public-websocket", "javascript:alert(1)"], "is not ws://HOST:PORT"),
])
def test_bad_public_options_are_refused_before_anything_starts(
        given: list[str], said: str, tmp_path: Path, capsys: Any) -> None:
    from gammonclock.cli.main import main
    secret = tmp_path / "pw"
    secret.write_text("secret\n")
    argv = ["hall", "--broker", "mqtt://127.0.0.1:1", "--password-file", str(secret),
            "--archive", str(tmp_path / "archive"),
            *[str(secret) if a == "PW" else a for a in given]]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert said in err, err
    assert not (tmp_path / "archive").exists()


def test_the_shipped_public_conf_runs_as_it_is(tmp_path: Path) -> None:
    """hall/public.conf line for line, only its ports and files moved into the test's folder
    (its WebSocket listener on every address, as shipped), is a broker that lets the hall's
    account publish and an anonymous WebSocket client read."""
    from gammonclock.hall.public import shipped_public_conf
    shipped = PublicBroker(tmp_path, websocket_interface=None)
    written = shipped.write_config().read_text().splitlines()
    moved = [(a, b) for a, b in zip(shipped_public_conf().splitlines(), written) if a != b]
    assert [a for a, _b in moved] == [
        "listener 1884 127.0.0.1", "password_file /etc/mosquitto/gammonclock-public.passwd",
        "acl_file /etc/mosquitto/gammonclock-public-hall.acl", "listener 9001",
        "acl_file /etc/mosquitto/gammonclock-public-spectators.acl"], moved
    assert [b for _a, b in moved][3] == f"listener {shipped.websocket_port}"
    shipped.start()
    hall = PublicClient(shipped.options())
    try:
        hall.start()
        deadline = time.monotonic() + 10
        while not hall.connected and time.monotonic() < deadline:
            time.sleep(0.05)
        assert hall.connected, shipped.log()
        hall.publish(f"{ROOT}/table-1", b'{"v":1}')
        spectator = Spectator(shipped)
        spectator.subscribe(f"{ROOT}/+")
        spectator.wait_for(lambda m: m.topic == f"{ROOT}/table-1")
        spectator.close()
    finally:
        hall.stop()
        shipped.stop()

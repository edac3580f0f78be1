"""A clock takes a provisioning stick (issue 32, SPEC §14.1: the stick carries files, not
authority): real clocks on mock pins with their loop running (table_helpers), asked on their
socket as `gammonclock usb-stick` asks them, on a real Mosquitto. A fresh clock (no PIN, no
journal) takes it at once and joins the hall with the stick's account, its journals sealed
by the stick's key; a clock with journals keeps its own key and gives it back on the stick; a
match in progress refuses it."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from gammonclock.journal.key import read_key
from gammonclock.journal.reader import read_header
from gammonclock.journal.verify import verify
from gammonclock.sides import Button
from mqtt_helpers import WATCHER, Broker, Collector, start_broker
from provision_helpers import ask_clock, new_key, state_files, write_stick
from table_helpers import MATCH_TEXT, Table, end_the_match, wait

FRESH = '[hardware]\npin_factory = "mock"\n'
ONLINE = "gammonclock/table-1/online"


def test_a_fresh_clock_joins_the_hall_with_the_sticks_account_and_key(
        tmp_path: Path, broker: Broker, tables: Callable[..., Table]) -> None:
    key = new_key()
    stick = tmp_path / "stick"
    write_stick(stick, broker, "table-1", key=key)
    with Collector(broker, WATCHER, "gammonclock/table-1/#") as seen, Collector(broker) as hall:
        table = tables(FRESH)
        answer = ask_clock(table.state, ["usb-stick", str(stick)])
        assert answer["ok"], answer
        assert any(line.startswith("provisioned from the USB stick: table table-1")
                   for line in answer["said"]), answer["said"]
        assert any("the device key is the stick's" in line for line in answer["said"])
        # The hall link started with the stick's [hall], logged in with the stick's account.
        seen.wait_for(lambda m: m.topic == ONLINE and m.text == "1", timeout=30)
        assert "u'table-1'" in broker.log()
        assert read_key(table.state) == key
        assert table.service.status()["table"] == "table-1"
        # A match pushed by the director is played, and its journal is sealed by the stick's
        # key: the hall, which holds that key, verifies it.
        hall.publish("gammonclock/table-1/match", MATCH_TEXT, retain=True)
        wait(lambda: table.service.session is not None, "the pushed match was not loaded", 30)
        table.tap(Button.LEFT)
        table.tap(Button.RIGHT)
        end_the_match(table)
        journal = table.journal()
        verdict = verify(journal, key)
        assert verdict.intact and verdict.sealed, verdict.words
        assert read_header(journal).data["table"] == "table-1"
        seen.wait_for(lambda m: m.topic == "gammonclock/table-1/events"
                      and json.loads(m.payload)["journal"] == journal.name, timeout=30)
    # A restart keeps it: the provisioned set lies over device.toml at boot.
    table.stop()
    with Collector(broker, WATCHER, "gammonclock/table-1/online") as seen:
        table.start()
        seen.wait_for(lambda m: m.text == "1" and m.topic == ONLINE, timeout=30)
        assert table.service.status()["table"] == "table-1"


def test_a_clock_with_journals_keeps_its_key_and_gives_it_back(
        tmp_path: Path, broker: Broker, tables: Callable[..., Table]) -> None:
    """No PIN, but past its first boot (a journal sealed): the stick is only offered, since
    taking it would send the clock's key out on it; the arbiters' group takes it on the socket,
    and the same stick plugged again carries the key back for the hall."""
    match = tmp_path / "match.toml"
    match.write_text(MATCH_TEXT, encoding="utf-8")
    table = tables(FRESH + f'[table]\nid = "pi-7"\nmatch_file = "{match}"\n')
    own = read_key(table.state)
    assert table.journal().exists()                  # loaded at boot: sealed by its own key
    stick_key = new_key()
    stick = tmp_path / "stick"
    folder = write_stick(stick, broker, "table-1", key=stick_key)
    before = state_files(table.state)
    offered = ask_clock(table.state, ["usb-stick", str(stick)])
    assert offered["ok"], offered
    assert any("offered from the USB stick, NOT taken" in line for line in offered["said"])
    assert state_files(table.state) == before        # nothing taken on the stick's word
    assert not (folder / "returned.key").exists()    # and the key never left the clock
    assert "u'table-1'" not in broker.log()
    with Collector(broker, WATCHER, ONLINE) as seen:
        taken = ask_clock(table.state, ["provision"])    # the arbiters' group on the socket
        assert taken["ok"], taken
        seen.wait_for(lambda m: m.text == "1", timeout=30)
    assert read_key(table.state) == own              # every journal it wrote still verifies
    assert not (folder / "returned.key").exists()    # the stick was gone when it was taken
    again = ask_clock(table.state, ["usb-stick", str(stick)])
    assert again["ok"], again
    assert (folder / "returned.key").read_text() == own.hex() + "\n"
    assert (folder / "returned.table").read_text() == "table-1\n"
    assert not list(folder.glob(".*partial"))        # written whole, under its final names
    assert any("already provisioned" in line for line in again["said"]), again["said"]
    # Once more: nothing changes.
    third = ask_clock(table.state, ["usb-stick", str(stick)])
    assert third["ok"] and any("already provisioned" in line for line in third["said"])


def test_a_match_in_progress_refuses_the_stick(tmp_path: Path, broker: Broker,
                                               tables: Callable[..., Table]) -> None:
    match = tmp_path / "match.toml"
    match.write_text(MATCH_TEXT, encoding="utf-8")
    table = tables(FRESH + f'[table]\nid = "pi-7"\nmatch_file = "{match}"\n')
    table.tap(Button.LEFT)                           # game 1 under way
    before = state_files(table.state)
    stick = tmp_path / "stick"
    write_stick(stick, broker, "table-1", key=new_key())
    answer = ask_clock(table.state, ["usb-stick", str(stick)])
    assert not answer["ok"]
    assert any("NOT provisioned: a match is in progress here (game 1" in line
               for line in answer["said"]), answer["said"]
    assert state_files(table.state) == before
    assert not (table.state / "provisioned").exists()
    assert table.device is not None and table.device.table.table_id == "pi-7"
    assert "u'table-1'" not in broker.log()


def test_a_tls_stick_brings_the_venues_ca(tmp_path: Path, tables: Callable[..., Table]) -> None:
    """`mqtts://` with the venue's CA as a file next to device.toml: kept in the state folder,
    the link checks the broker's certificate with it."""
    broker = start_broker(tmp_path / "tls", tls=True)
    try:
        stick = tmp_path / "stick"
        folder = write_stick(stick, broker, "table-1", key=new_key())
        assert (folder / "venue-ca.crt").exists()
        with Collector(broker, WATCHER, ONLINE) as seen:
            table = tables(FRESH)
            answer = ask_clock(table.state, ["usb-stick", str(stick)])
            assert answer["ok"], answer
            seen.wait_for(lambda m: m.text == "1", timeout=30)
        kept = table.state / "provisioned"
        assert (kept / "venue-ca.crt").read_bytes() == broker.ca_file.read_bytes()
        hall = table.device.table.device.device.hall if table.device else None
        assert hall is not None and hall.ca_file == str((kept / "venue-ca.crt").resolve())
    finally:
        broker.stop()

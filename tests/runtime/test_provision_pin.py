"""A provisioning stick on a clock with the arbiter's PIN (issue 32, SPEC §14.1): only offered,
journaled for the menu, taken once the arbiter confirms it at these panels after the PIN (or
on the socket), never by the stick alone; a wrong PIN takes nothing. Whole devices on mock
hardware (venue_helpers), the arbiter's chord and PIN as button edges through the service, and
a real Mosquitto the link joins once it is taken."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from gammonclock.core.arbiter import parse_command
from gammonclock.core.match import ArbiterAction
from gammonclock.core.match_state import MenuItem, PanelStage, Phase
from gammonclock.device.build import Device
from gammonclock.journal.key import read_key
from gammonclock.journal.reader import read_journal
from gammonclock.journal.replay import replay
from gammonclock.runtime.lifecycle import load_next_match
from gammonclock.sides import Button
from lifecycle_helpers import on_loop
from mqtt_helpers import WATCHER, Broker, Collector
from provision_helpers import ask_clock, clock_in, new_key, plug, state_files, write_stick
from stick_offer_helpers import (
    PIN_DEVICE_TEXT,
    PUSHED_MATCH,
    chord,
    enter_pin,
    journal_inputs,
    panel,
    press,
    texts_of,
)
from venue_helpers import Venue, journal_of

ONLINE = "gammonclock/table-1/online"


@pytest.fixture
def venue(venues: Callable[[str], Venue]) -> Venue:
    return venues(PIN_DEVICE_TEXT)


def ready_clock(venue: Venue, tmp_path: Path) -> Device:
    clock = clock_in(venue, tmp_path)
    assert load_next_match(clock.service, clock.table, PUSHED_MATCH, "pushed.toml").ok
    return clock


def test_a_pin_clock_only_offers_the_stick_until_the_arbiter_confirms_it(
        venue: Venue, tmp_path: Path, broker: Broker) -> None:
    clock = ready_clock(venue, tmp_path)
    own, ready = read_key(clock.table.state_dir), journal_of(clock)
    stick = tmp_path / "stick"
    folder = write_stick(stick, broker, "table-1", key=new_key())
    before = state_files(clock.table.state_dir)
    answer = plug(clock, stick)
    assert answer["ok"], answer
    assert answer["said"][1:] == [
        f"offered from the USB stick, NOT taken: table table-1, hall {broker.url} as table-1",
        "the arbiter takes it at these panels: the three buttons held, the PIN, then the "
        "menu's TABLE FROM STICK; or on the socket: gammonclock arbiter provision"]
    # Nothing taken by the stick: the same table, key and files; the offer is journaled.
    assert clock.table.table_id == "pi-3" and state_files(clock.table.state_dir) == before
    offers = [i for i in journal_inputs(ready) if i["type"] == "provision_offer"]
    assert [(o["table"], o["host"]) for o in offers] == [("table-1", "127.0.0.1")]
    assert texts_of(panel(clock))[:4] == ["PROVISIONING STICK", "table-1: 127.0.0.1",
                                          "arbiter: chord, PIN,", "menu: TABLE FROM STICK"]
    # A wrong PIN: nothing.
    chord(venue, clock)
    enter_pin(venue, clock, "LRCC")
    assert clock.session is not None
    assert clock.session.engine.match.phase is not Phase.ARBITER
    assert clock.table.table_id == "pi-3"
    # The right PIN, the menu's second item, confirmed.
    chord(venue, clock)
    enter_pin(venue, clock)
    press(venue, clock, Button.RIGHT)
    assert clock.session.engine.match.panel is not None
    assert clock.session.engine.match.panel.item is MenuItem.PROVISION_STICK
    menu = panel(clock)
    assert (menu.title, menu.lines) == ("TABLE FROM STICK", (("table-1", ""),
                                                             ("hall 127.0.0.1", "")))
    press(venue, clock, Button.CUBE)
    confirm = panel(clock)
    assert (confirm.title, confirm.lines) == ("CONFIRM?", (("become table-1?", ""),
                                                           ("hall and account", "")))
    assert clock.table.table_id == "pi-3"                 # not before the yes
    with Collector(broker, WATCHER, ONLINE) as seen:
        press(venue, clock, Button.CUBE)
        venue.wait(clock, 0.5)
        assert clock.table.table_id == "table-1"
        seen.wait_for(lambda m: m.text == "1", timeout=30)
    assert "u'table-1'" in broker.log()
    # The match here has journals sealed by its own key: kept, owed to the hall.
    assert read_key(clock.table.state_dir) == own
    assert not (folder / "returned.key").exists()         # the stick was gone by then
    requested = [e for r in read_journal(ready).records if r.kind == "input"
                 for e in r.data["effects"] if e.get("reason") == "provision_requested"]
    assert len(requested) == 1
    assert [i for i in journal_inputs(ready) if i["type"] == "provision_offer"][-1] == {
        "type": "provision_offer"}                        # taken: withdrawn
    assert clock.session.engine.match.provision_offer is None
    assert replay(read_journal(ready)).diverged == []
    # Plugged in again: the key goes back on it for the hall.
    again = plug(clock, stick)
    assert again["ok"], again
    assert (folder / "returned.key").read_text() == own.hex() + "\n"
    assert (folder / "returned.table").read_text() == "table-1\n"


def test_an_idle_pin_clock_takes_it_only_on_the_socket(venue: Venue, tmp_path: Path,
                                                       broker: Broker) -> None:
    clock = clock_in(venue, tmp_path)
    key = new_key()
    write_stick(tmp_path / "stick", broker, "table-1", key=key)
    answer = plug(clock, tmp_path / "stick")
    assert answer["ok"] and answer["said"][-1] == (
        "this clock is past its first boot (an arbiter's PIN, journals or a hall already) and "
        "no match is loaded: the arbiter takes it on the socket: gammonclock arbiter provision")
    assert clock.table.table_id == "pi-3"
    assert not (clock.table.state_dir / "provisioned").exists()
    state = clock.table.state_dir
    taken = on_loop(clock, lambda: ask_clock(state, ["provision"]))    # the arbiters' group
    assert taken["ok"], taken
    assert clock.table.table_id == "table-1"
    assert read_key(clock.table.state_dir) == key         # no journal sealed yet: adopted
    again = on_loop(clock, lambda: ask_clock(state, ["provision"]))
    assert not again["ok"]
    assert again["error"] == "no provisioning stick is offered here: plug it in again"


def test_the_offer_waits_for_the_end_of_a_match_in_progress(venue: Venue, tmp_path: Path,
                                                            broker: Broker) -> None:
    from venue_helpers import tap
    clock = ready_clock(venue, tmp_path)
    write_stick(tmp_path / "stick", broker, "table-1", key=new_key())
    assert plug(clock, tmp_path / "stick")["ok"]
    tap(venue, clock, Button.LEFT)                        # game 1 starts here
    chord(venue, clock)
    enter_pin(venue, clock)
    press(venue, clock, Button.RIGHT)
    assert clock.session is not None and clock.session.engine.match.panel is not None
    assert clock.session.engine.match.panel.item is MenuItem.ADJUST_LEFT     # not listed
    assert clock.session.engine.match.panel.stage is PanelStage.MENU
    assert clock.table.table_id == "pi-3"
    # The match ends (the arbiter disqualifies left at the menu's end): the offer is there
    # for after it.
    press(venue, clock, Button.CUBE, held_s=2.0)          # resume play
    clock.service.apply(ArbiterAction(clock.service.engine_time(clock.service.clock_ns()),
                                      parse_command(["disqualify", "left"]), "socket"))
    assert clock.service.status()["phase"] == "match_over"
    chord(venue, clock)
    enter_pin(venue, clock)
    press(venue, clock, Button.RIGHT)
    assert clock.session.engine.match.panel is not None
    assert clock.session.engine.match.panel.item is MenuItem.PROVISION_STICK
    press(venue, clock, Button.CUBE)
    press(venue, clock, Button.CUBE)
    venue.wait(clock, 0.5)
    assert clock.table.table_id == "table-1"

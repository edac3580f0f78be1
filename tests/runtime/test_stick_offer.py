"""A stick carries files, never authority (SPEC §13.5, §14.1, issue 31): a dead clock's match on
a USB stick is only OFFERED here, loaded once the arbiter's PIN is entered at these panels, and
a stick never ends a match in progress.

The attack: a stick holding `gammonclock/continue/<forged journal>` and `SPARE.continue`, plugged
into a ready clock, ended its pushed match "abandoned by the arbiter" (no arbiter acted) and
loaded the forged match at 6-0. Here the clocks are whole devices on mock hardware (the venue:
venue_helpers), the stick a folder, the arbiter's chord and PIN button edges through the
service, as the buttons give them."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from gammonclock.core.match import Phase
from gammonclock.core.match_state import MenuItem, PanelStage
from gammonclock.device.build import Device
from gammonclock.journal.reader import read_header, read_journal
from gammonclock.journal.records import JOURNALS_DIR
from gammonclock.journal.replay import replay
from gammonclock.runtime.continuation import checked_then
from gammonclock.runtime.lifecycle import load_next_match
from gammonclock.sides import Button
from stick_offer_helpers import (
    FORGED_TABLE,
    PIN_DEVICE_TEXT,
    PUSHED_MATCH,
    chord,
    enter_pin,
    forged_journal,
    journal_inputs,
    panel,
    plug,
    press,
    stick_with,
    texts_of,
)
from venue_helpers import DEVICE_TEXT, Venue, journal_of, on_loop, tap


@pytest.fixture
def venue() -> Iterator[Venue]:
    made = Venue(device_text=PIN_DEVICE_TEXT)
    yield made
    for device in made.clocks:
        device.close()


@pytest.fixture
def forged(venue: Venue, tmp_path: Path) -> Path:
    return forged_journal(venue, tmp_path)


def ready_spare(venue: Venue, tmp_path: Path, name: str = "spare") -> Device:
    """The spare table, its pushed match loaded and no game started (ready)."""
    spare = venue.build(tmp_path, "SPARE", tmp_path / name, 50 * 3600, f"boot-{name}")
    assert load_next_match(spare.service, spare.table, PUSHED_MATCH, "pushed.toml").ok
    assert spare.service.status()["lifecycle"] == "ready"
    return spare


def journals(device: Device) -> list[Path]:
    return sorted((device.table.state_dir / JOURNALS_DIR).glob("*.jsonl"))


def offer_of(forged: Path) -> dict:
    last = read_journal(forged).last
    return {"type": "stick_offer", "table": FORGED_TABLE, "left": "Anna", "right": "Boris",
            "length": 7, "score": "6-0", "file": forged.name, "seq": last.seq, "mac": last.mac}


def take_at_the_menu(venue: Venue, device: Device) -> None:
    """The menu's second item (the stick's offer), chosen and confirmed."""
    press(venue, device, Button.RIGHT)
    press(venue, device, Button.CUBE)
    press(venue, device, Button.CUBE)
    venue.wait(device, 0.5)          # the device carries it out on its loop


# --- the attack: a stick on a ready clock ---------------------------------------------------------

def test_a_sticks_continuation_on_a_ready_clock_ends_nothing_and_loads_nothing(
        venue, tmp_path, forged):
    spare = ready_spare(venue, tmp_path)
    session, ready = spare.session, journal_of(spare)
    answer = plug(spare, stick_with(tmp_path, forged, "SPARE"))
    assert answer["ok"], answer
    # Nothing ended, nothing loaded: the pushed match is still the one here, ready.
    assert spare.session is session and journals(spare) == [ready]
    assert spare.session.engine.rules.names.left == "Carla"
    assert spare.session.engine.match.end_reason is None
    assert spare.service.status()["lifecycle"] == "ready"
    assert not [i for i in journal_inputs(ready) if i["type"] == "arbiter"]
    # The offer is on the ready match's record, for its menu (and its replay).
    assert [i for i in journal_inputs(ready) if i["type"] == "stick_offer"] == [offer_of(forged)]
    assert replay(read_journal(ready)).diverged == []
    # What is offered and how to take it: in the reply (the unit's log) and on the panels.
    copy = spare.table.state_dir / "continue-from-stick" / forged.name
    assert answer["said"][1:] == [
        f"offered from the USB stick, NOT loaded (nothing here ended): {FORGED_TABLE}'s match "
        f"Anna-Boris, 7 points, score 6-0, from {forged.name} (record "
        f"{read_journal(forged).last.seq})",
        "the arbiter takes it at these panels: the three buttons held, the PIN, then the "
        f"menu's MATCH FROM STICK; or on the socket: gammonclock arbiter continue {copy}"]
    # (The export's line, "matches exported: 0, 1 in progress", would not fit whole: the reply
    # has it.)
    assert answer["said"][0] == "0 matches exported, 1 in progress"
    assert texts_of(panel(spare)) == ["MATCH ON THE STICK", f"{FORGED_TABLE}: Anna-Boris 6-0",
                                      "arbiter: chord, PIN,", "menu: MATCH FROM STICK"]


def test_on_an_idle_clock_a_stick_only_says_how_the_socket_takes_it(venue, tmp_path, forged):
    spare = venue.build(tmp_path, "SPARE", tmp_path / "spare", 50 * 3600, "boot-spare")
    answer = plug(spare, stick_with(tmp_path, forged, "match"))
    assert answer["ok"], answer
    assert spare.session is None and journals(spare) == []        # still idle
    copy = spare.table.state_dir / "continue-from-stick" / forged.name
    assert answer["said"][-1] == (
        "no match is loaded here, so there is no arbiter's menu at the panels: the arbiter "
        f"takes it on the socket: gammonclock arbiter continue {copy}")
    assert texts_of(panel(spare))[:4] == ["MATCH ON THE STICK", f"{FORGED_TABLE}: Anna-Boris 6-0",
                                          "no match here: socket:", "arbiter continue FROM"]


# --- taken by the arbiter's PIN at these panels ---------------------------------------------

def test_the_arbiters_pin_at_these_panels_takes_the_offer(venue, tmp_path, forged):
    spare = ready_spare(venue, tmp_path)
    ready = journal_of(spare)
    plug(spare, stick_with(tmp_path, forged, "SPARE"))
    chord(venue, spare)
    enter_pin(venue, spare)
    match = spare.session.engine.match
    assert match.phase is Phase.ARBITER and match.panel.stage is PanelStage.MENU
    press(venue, spare, Button.RIGHT)                    # the second item: the stick's offer
    assert match.panel.item is not MenuItem.CONTINUE_STICK      # (the state is a value)
    assert spare.session.engine.match.panel.item is MenuItem.CONTINUE_STICK
    menu = panel(spare)
    assert (menu.title, menu.lines) == ("MATCH FROM STICK", ((FORGED_TABLE, "6-0"),
                                                             ("Anna-Boris", "")))
    press(venue, spare, Button.CUBE)
    confirm = panel(spare)
    assert (confirm.title, confirm.lines) == ("CONFIRM?", ((f"continue {FORGED_TABLE}?", ""),
                                                           ("this match ENDS", "")))
    assert spare.session.engine.rules.names.left == "Carla"    # not before the yes
    press(venue, spare, Button.CUBE)
    venue.wait(spare, 0.5)
    # The offered match continues here, paused at 6-0, in a journal of its own.
    continued = spare.session.engine.match
    assert spare.session.engine.rules.names.left == "Anna"
    assert (continued.score.left, continued.score.right) == (6, 0)
    assert continued.phase is Phase.PAUSED
    new = journal_of(spare)
    assert journals(spare) == sorted([ready, new])
    continues = read_header(new).data["continues"]
    assert (continues["file"], continues["table"], continues["via"], continues["source"]) == (
        forged.name, FORGED_TABLE, "stick", "panel")
    # The ready match ended on the arbiter's act at the panels, after the confirmation.
    inputs = journal_inputs(ready)
    assert inputs[-1] == {"type": "arbiter", "command": "abandon", "source": "panel"}
    ended = replay(read_journal(ready))
    assert ended.diverged == [] and ended.engine.match.end_reason.value == "abandoned"
    asked = [e for r in read_journal(ready).records if r.kind == "input"
             for e in r.data["effects"] if e.get("reason") == "continue_stick_requested"]
    assert len(asked) == 1 and forged.name in asked[0]["text"]
    assert "this match ends abandoned" in asked[0]["text"]
    # Taken once: the table holds no offer any more, and the new match's menu lists none.
    assert spare.table.stick_offers.held_for(spare.session) is None
    assert spare.session.engine.match.stick_offer is None


def test_a_wrong_pin_takes_nothing_and_a_game_started_here_ends_the_offer(
        venue, tmp_path, forged):
    spare = ready_spare(venue, tmp_path)
    ready = journal_of(spare)
    plug(spare, stick_with(tmp_path, forged, "SPARE"))
    chord(venue, spare)
    enter_pin(venue, spare, "LRCC")                      # wrong
    assert spare.session.engine.match.phase is not Phase.ARBITER
    take_at_the_menu(venue, spare)                       # the same presses: now a player's
    assert spare.session.engine.rules.names.left == "Carla" and journals(spare) == [ready]
    match = spare.session.engine.match
    assert match.in_progress                             # right's tap started game 1 here
    assert match.stick_offer is None                     # … and the stick's offer is no more
    assert not [i for i in journal_inputs(ready) if i["type"] == "arbiter"]
    reasons = [e.get("reason") for r in read_journal(ready).records if r.kind == "input"
               for e in r.data["effects"]]
    assert "pin_wrong" in reasons and "stick_offer_ended" in reasons
    assert "continue_stick_requested" not in reasons
    # The right PIN now finds no stick's item in the menu: a game is in progress here.
    chord(venue, spare)
    enter_pin(venue, spare)
    press(venue, spare, Button.RIGHT)
    assert spare.session.engine.match.panel.item is MenuItem.ADJUST_LEFT


def test_without_a_pin_the_panels_cannot_take_it_and_the_socket_can(tmp_path):
    venue = Venue(device_text=DEVICE_TEXT)               # no [arbiter] pin
    try:
        forged = forged_journal(venue, tmp_path)
        spare = ready_spare(venue, tmp_path)
        ready = journal_of(spare)
        answer = plug(spare, stick_with(tmp_path, forged, "SPARE"))
        assert answer["ok"] and spare.session.engine.rules.names.left == "Carla"
        copy = spare.table.state_dir / "continue-from-stick" / forged.name
        assert answer["said"][-1] == (
            "this table has no arbiter's PIN ([arbiter] pin), so the panels cannot take it: the "
            f"arbiter takes it on the socket: gammonclock arbiter continue {copy}")
        assert texts_of(panel(spare))[2:4] == ["needs the arbiter's PIN",
                                               "or socket: continue FROM"]
        # The chord means nothing without a PIN: no menu, nothing continued.
        chord(venue, spare)
        take_at_the_menu(venue, spare)
        assert spare.session.engine.match.phase is not Phase.ARBITER
        assert spare.session.engine.rules.names.left == "Carla" and journals(spare) == [ready]
        # The arbiter's socket takes the copy the reply names (a game is now on: --force).
        assert spare.session.engine.match.in_progress
        refused = on_loop(checked_then(spare.service, spare.table, copy, via="journal",
                                       source_of="socket", by="arbiter"))
        assert not refused.ok and "`continue --force`" in refused.error
        taken = on_loop(checked_then(spare.service, spare.table, copy, via="journal",
                                     force=True, source_of="socket", by="arbiter"))
        assert taken.ok and spare.session.engine.rules.names.left == "Anna"
        assert read_header(journal_of(spare)).data["continues"]["source"] == "socket"
    finally:
        for device in venue.clocks:
            device.close()


# --- a stick never ends a match in progress -------------------------------------------------------

def test_mid_match_a_sticks_continuation_is_refused_and_nothing_changes(
        venue, tmp_path, forged):
    spare = ready_spare(venue, tmp_path)
    tap(venue, spare, Button.LEFT)                        # game 1 on: right's clock runs
    session, own = spare.session, journal_of(spare)
    before = own.read_bytes()
    answer = plug(spare, stick_with(tmp_path, forged, "SPARE"))
    assert not answer["ok"]
    assert answer["said"][-1] == (
        "match NOT continued: a match is in progress here (game 1, score 0-0): a stick never "
        "ends it; the arbiter continues the stick's match with the socket and --force "
        "(gammonclock arbiter continue FROM --force)")
    assert spare.session is session and own.read_bytes() == before and journals(spare) == [own]
    assert spare.session.engine.match.running_side is not None
    assert spare.table.stick_offers.held_for(session) is None
    assert panel(spare).notice == "match on: stick refused; arbiter: socket --force"
    # Nor does the stick's next match replace it (SPEC §13.2).
    stick = tmp_path / "next-stick"
    (stick / "gammonclock").mkdir(parents=True)
    (stick / "gammonclock" / "SPARE.toml").write_text(PUSHED_MATCH.replace("Dan", "Eve"),
                                                       encoding="utf-8")
    answer = plug(spare, stick)
    assert not answer["ok"] and answer["said"][-1].startswith("next match NOT loaded: a match "
                                                              "is in progress")
    assert spare.session is session and own.read_bytes() == before


def test_in_the_menu_the_stick_never_forces_a_match_in_progress(venue, tmp_path, forged):
    """The offer made while ready, a forfeit counted as played since (the socket's, while the
    arbiter was in the menu): the item goes, and nothing ends."""
    spare = ready_spare(venue, tmp_path)
    plug(spare, stick_with(tmp_path, forged, "SPARE"))
    chord(venue, spare)
    enter_pin(venue, spare)
    press(venue, spare, Button.RIGHT)
    assert spare.session.engine.match.panel.item is MenuItem.CONTINUE_STICK
    from venue_helpers import command
    command(spare, "forfeit", "left", "1")                # game 1 counts as played
    match = spare.session.engine.match
    assert match.in_progress and match.stick_offer is None
    assert match.panel.item is MenuItem.RESUME
    # A confirmation asked for before would not carry over either: the device refuses it.
    from gammonclock.runtime.lifecycle import PanelRequests
    [requests] = [p for p in spare.service.presenters if isinstance(p, PanelRequests)]
    held = spare.table.stick_offers.held_for(spare.session)
    assert held is not None
    refused = requests.continue_offered(held.offer)
    assert not refused.ok and refused.reason.value == "match_in_progress"
    assert spare.session.engine.rules.names.left == "Carla"


# --- how long an offer stands -------------------------------------------------------------------

def test_a_later_stick_replaces_the_offer_and_one_without_a_continuation_leaves_it(
        venue, tmp_path, forged):
    spare = ready_spare(venue, tmp_path)
    plug(spare, stick_with(tmp_path, forged, "SPARE"))
    other = tmp_path / "other"
    other.mkdir()
    second = forged.read_bytes()
    # Another journal of it: the forger's match one record earlier.
    lines = second.splitlines(keepends=True)
    shorter = other / forged.name.replace(".jsonl", "-early.jsonl")
    shorter.write_bytes(b"".join(lines[:-1]))
    plug(spare, stick_with(tmp_path, shorter, "match", name="stick-2"))
    offer = spare.session.engine.match.stick_offer
    assert offer is not None and offer.file == shorter.name
    # A stick with no continuation (exports only) leaves the offer standing.
    bare = tmp_path / "bare"
    bare.mkdir()
    assert plug(spare, bare)["ok"]
    assert spare.session.engine.match.stick_offer == offer
    chord(venue, spare)
    enter_pin(venue, spare)
    take_at_the_menu(venue, spare)
    header = read_header(journal_of(spare)).data["continues"]
    assert header["file"] == shorter.name and header["source"] == "panel"


def test_an_offer_the_clock_no_longer_holds_is_withdrawn_not_taken(venue, tmp_path, forged):
    """The clock restarted with an offer on the ready match's record: the menu lists it (the
    replay), but the clock holds no verified journal for it any more."""
    from venue_helpers import power_cut

    spare = ready_spare(venue, tmp_path)
    plug(spare, stick_with(tmp_path, forged, "SPARE"))
    venue.clocks.remove(spare)
    power_cut(spare)
    again = venue.build(tmp_path, "SPARE", tmp_path / "spare", 60 * 3600, "boot-again")
    assert again.session.engine.match.stick_offer is not None
    chord(venue, again)
    enter_pin(venue, again)
    take_at_the_menu(venue, again)
    assert again.session.engine.rules.names.left == "Carla"
    assert again.session.engine.match.stick_offer is None
    assert again.session.engine.match.panel.item is MenuItem.RESUME
    assert re.search(r"stick's offer gone", panel(again).notice or "")

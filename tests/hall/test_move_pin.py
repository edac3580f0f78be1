"""A match moved by the hall is judged at the spare's panels by the spare's arbiter's PIN (SPEC
§13.4, §13.5, §14.1, issue 31): the dead table's PIN, which its header holds, no longer opens
the arbiter's menu there, and the spare's own does, after the spare restarts too. Real Mosquitto
with the shipped config and ACL, the real `Hall` verifying the table's lines with its key, real
clocks on mock pins (the fake-time venue of venue_helpers), each with its hall link, the chord
and the PINs as button edges."""

from __future__ import annotations

import asyncio

from gammonclock.core.match import Phase
from gammonclock.journal.reader import read_header, read_journal
from gammonclock.runtime.lifecycle import load_next_match
from hall_helpers import HallRunner
from move_helpers import copy_device_key, step, until, with_hall
from pin_handover_helpers import (
    FORGER_PIN,
    assert_own_handover,
    assert_replays_to_the_match,
    wrong_pins_fail_own_opens,
)
from stick_offer_helpers import PIN
from venue_helpers import GAP_S, MATCH_TEXT, Venue, first_part, journal_of, power_cut

PINS = {"table-1": FORGER_PIN, "table-2": PIN}     # the dead table's; the spare's


def arbiter_of(table: str) -> str:
    return f'\n[arbiter]\npin = "{PINS[table]}"\n'


def test_a_match_moved_by_the_hall_opens_only_the_spares_own_pin(tmp_path, broker):
    venue = Venue()
    with_hall(venue, broker, arbiter_of)
    keys = tmp_path / "keys"
    with HallRunner(broker, tmp_path / "archive", keys) as hall:
        try:
            dead = venue.build(tmp_path, "table-1", tmp_path / "t1", 3 * 3600, "boot-t1")
            copy_device_key(keys, "table-1", tmp_path / "t1")
            assert load_next_match(dead.service, dead.table, MATCH_TEXT, "match.toml").ok
            first_part(venue, dead)
            card = journal_of(dead)
            last = read_journal(card).last
            until(lambda: (hall.call(lambda: hall.hall.live.held("table-1")) or {}).get(
                "last_seq") == last.seq, "the hall holds table-1's journal", step=dead.service.step)
            power_cut(dead)
            venue.clocks.remove(dead)
            until(lambda: hall.call(lambda: hall.hall.view.tables["table-1"].online) is False,
                  "the hall sees table-1 offline")
            venue.wait(None, GAP_S)
            spare = venue.build(tmp_path, "table-2", tmp_path / "t2", 50 * 3600, "boot-t2")
            until(lambda: "table-2" in hall.call(lambda: list(hall.hall.view.tables)),
                  "the spare is on the hall", step=spare.service.step)
            future = asyncio.run_coroutine_threadsafe(
                hall.hall.move("table-1", "table-2", "director"), hall.loop)

            until(future.done, "the hall's move answered", step=lambda: step(spare))
            answer = future.result()
            assert answer["reply"] is not None and answer["reply"]["ok"], answer
            assert read_header(journal_of(spare)).data["continues"]["via"] == "hall"
            assert spare.session.engine.match.phase is Phase.PAUSED
            assert_own_handover(spare, card)
            wrong_pins_fail_own_opens(venue, spare)
            assert_replays_to_the_match(spare)
            # Restarted (resumed from its journal): still its own PIN, not table-1's.
            path = journal_of(spare)
            venue.clocks.remove(spare)
            power_cut(spare)
            again = venue.build(tmp_path, "table-2", tmp_path / "t2", 60 * 3600, "boot-t2b")
            assert journal_of(again) == path
            wrong_pins_fail_own_opens(venue, again)
        finally:
            for device in venue.clocks:
                device.close()

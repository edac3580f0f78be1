"""A dead table's match moved to a spare from the hall's events alone (SPEC §13.5, §14; issue 24):
real Mosquitto with the shipped config and ACL, the real `Hall`, real clocks on mock pins (the
fake-time venue of venue_helpers), each with its hall link."""

from __future__ import annotations

import asyncio
import json
import shutil

import pytest

from gammonclock.core.match import Phase
from gammonclock.hall.continuation import LiveCopies, NoWholeCopy
from gammonclock.journal.reader import read_header, read_journal
from gammonclock.runtime.lifecycle import load_next_match
from hall_helpers import HallRunner
from hall_web_helpers import PAGE_WAIT_MS, journal_event
from move_helpers import copy_device_key, give_key, until, with_hall
from venue_helpers import (
    GAP_S,
    MATCH_TEXT,
    S,
    Venue,
    assert_same_export,
    first_part,
    journal_of,
    one_clock_reference,
    power_cut,
    second_part,
)

VENUE_TABLES = ("T7", "SPARE")


def test_a_dead_tables_match_moved_from_the_halls_events_alone(tmp_path, venue_broker):
    venue = Venue()
    with_hall(venue, venue_broker)
    keys = tmp_path / "keys"                # the hall verifies T7's lines with T7's own key
    with HallRunner(venue_broker, tmp_path / "archive", keys) as hall:
        dead = venue.build(tmp_path, "T7", tmp_path / "t7", 3 * 3600, "boot-t7")
        copy_device_key(keys, "T7", tmp_path / "t7")
        try:
            assert load_next_match(dead.service, dead.table, MATCH_TEXT, "match.toml").ok
            first_part(venue, dead)
            card = journal_of(dead)
            last = read_journal(card).last
            # The hall holds the journal to its last record, from the events alone.
            until(lambda: (hall.call(lambda: hall.hall.live.held("T7")) or {}).get("last_seq")
                  == last.seq, "the hall holds T7's journal", step=dead.service.step)
            power_cut(dead)                      # the clock dies; its card is never read
            venue.clocks.remove(dead)
            until(lambda: hall.call(lambda: hall.hall.view.tables["T7"].online) is False,
                  "the hall sees T7 offline")
            card.rename(card.with_suffix(".burnt"))
            venue.wait(None, GAP_S)
            spare = venue.build(tmp_path, "SPARE", tmp_path / "spare", 50 * 3600, "boot-sp")
            until(lambda: "SPARE" in hall.call(lambda: list(hall.hall.view.tables)),
                  "the spare is on the hall", step=spare.service.step)
            # Only the director's page may ask; a match it does not hold whole is refused.
            with pytest.raises(ValueError, match="holds no journal of table 'T9'"):
                _move(hall, spare, "T9", "SPARE", live=True)
            answer = _move(hall, spare, "T7", "SPARE")
            reply = answer["reply"]
            assert reply is not None and reply["ok"], answer
            assert answer["moved"]["journal"] == card.name and answer["moved"]["seq"] == last.seq
            assert reply["said"][0] == (f"match continued: Анна-Boris, 5 points, from "
                                        f"{card.name} (record {last.seq})")
            match = spare.session.engine.match
            assert match.phase is Phase.PAUSED and (match.score.left,
                                                    match.score.right) == (2, 2)
            continues = read_header(journal_of(spare)).data["continues"]
            assert continues["via"] == "hall" and continues["table"] == "T7"
            assert continues["last_mac"] == last.mac and continues["seq"] == last.seq
            # The same request again (the director clicks twice): kept, not made twice.
            again = _move(hall, spare, "T7", "SPARE")
            assert again["reply"]["said"][0].startswith("match already continued here")
            moves = hall.call(lambda: hall.hall.decisions.of_kind("moved"))
            assert [(d.get("source"), d.get("to"), d.get("journal")) for d in moves] == [
                ("T7", "SPARE", card.name)]              # recorded once
            second_part(venue, spare)
            assert spare.session.engine.match.phase is Phase.MATCH_OVER
            continued = journal_of(spare)
        finally:
            for device in venue.clocks:
                device.close()
    plain = Venue()
    try:
        reference = one_clock_reference(plain, tmp_path)
    finally:
        for device in plain.clocks:
            device.close()
    assert_same_export(continued, reference, {"last": last}, card, via="hall")


def _move(hall: HallRunner, spare, source: str, target: str,  # noqa: ANN001
          live: bool = False) -> dict:
    """`Hall.move` on the hall's loop while this thread is the spare's loop."""
    future = asyncio.run_coroutine_threadsafe(hall.hall.move(source, target, "director",
                                                             live=live), hall.loop)
    def step() -> None:
        spare.service.grace_ns = spare.service.timer_grace_ns = 0
        spare.service.step()
    until(future.done, "the hall's move answered", step=step)
    return future.result()


# --- the hall's copy, bounded and checked --------------------------------------------------------

def test_the_halls_copy_keeps_only_whole_lines_of_the_event_and_names_a_gap(tmp_path):
    from gammonclock.journal.records import Stamp
    from gammonclock.journal.writer import JournalWriter

    path = tmp_path / "match-1.jsonl"
    writer = JournalWriter.create(path, b"\x07" * 32, {"config": "[match]\nlength = 3\n"}, 0,
                                  Stamp(1, "b", 2))
    for seq in range(1, 6):
        writer.append("tick", seq * S, {"effects": []}, Stamp(seq, "b", seq))
    writer.close()
    lines = path.read_text().splitlines()
    keys = tmp_path / "keys"
    give_key(keys, "T1", b"\x07" * 32)            # the hall verifies T1's lines with T1's key
    copies = LiveCopies(keys_dir=keys)
    copies.take("T1", journal_event(path.name, 2, 0, lines[0:3]))
    # (A line that fails is refused, and its copy with it: test_move_forged.py.)
    copies.take("T1", journal_event(path.name, 5, 4, lines[5:6]))
    with pytest.raises(NoWholeCopy, match="lacks record 3"):
        copies.journal_text("T1")
    copies.take("T1", journal_event(path.name, 4, 2, lines[3:5]))
    name, text = copies.journal_text("T1")
    assert name == path.name and text == path.read_text()
    # A bad table or journal name is nothing the hall keeps.
    copies.take("../x", journal_event(path.name, 6, 5, lines[:1]))
    copies.take("T1", journal_event("../../etc.jsonl", 6, 5, lines[:1]))
    assert set(copies.tables) == {"T1"} and list(copies.tables["T1"]) == [path.name]


def test_a_tables_events_carry_every_line_of_its_journal_in_order(tmp_path):
    from gammonclock.journal.records import Stamp
    from gammonclock.journal.writer import JournalWriter
    from gammonclock.link.outbox import JournalTail
    from gammonclock.wire import MAX_EVENT_RECORDS_BYTES

    path = tmp_path / "match-2.jsonl"
    writer = JournalWriter.create(path, b"\x07" * 32, {"config": "[match]\nlength = 3\n"}, 0,
                                  Stamp(1, "b", 2))
    effects = [{"kind": "paused", "t": 1}]
    kinds = [("tick", []), ("input", effects), ("tick", []), ("tick", []), ("tick", effects),
             ("tick", [{"kind": "warned", "text": "x" * (MAX_EVENT_RECORDS_BYTES + 10)}]),
             ("tick", effects)]
    for seq, (kind, said) in enumerate(kinds, 1):
        data = {"effects": said} if kind == "tick" else {"input": {"type": "recover"},
                                                         "effects": said}
        writer.append(kind, seq * S, data, Stamp(seq, "b", seq))
    writer.close()
    lines = path.read_text().splitlines()
    events = JournalTail(path, 0).read(10)
    assert [(e.seq, e.after) for e in events] == [(2, 0), (5, 2), (6, 5), (7, 6)]
    assert list(events[0].records) == lines[0:3]          # the header, a quiet tick, the event
    assert list(events[1].records) == lines[3:6]
    assert events[2].records == () and events[2].records_cut     # a line too long: said so
    assert list(events[3].records) == lines[7:8] and not events[3].records_cut
    # Sent again from an acknowledged position: the lines after it.
    again = JournalTail(path, 2).read(10)
    assert list(again[0].records) == lines[3:6]
    # The hall's copy of these events names what the table left out.
    keys = tmp_path / "keys"
    give_key(keys, "T1", b"\x07" * 32)
    copies = LiveCopies(keys_dir=keys)
    for event in events:
        copies.take("T1", json.dumps(event.payload()).encode())
    with pytest.raises(NoWholeCopy, match="left records out"):
        copies.journal_text("T1")


def test_the_move_is_the_director_pages_and_says_what_the_hall_lacks(tmp_path, venue_broker):
    """`POST /api/move`: behind the page's password and token like every request that acts;
    a table the hall holds no whole journal of is refused, naming it, and nothing is sent."""
    import urllib.error

    from hall_web_helpers import RunningHall

    with RunningHall(venue_broker, tmp_path / "archive", password="open sesame") as hall:
        sent: list[tuple] = []
        command = hall.hall.command

        async def noted(*args, **kwargs):      # noqa: ANN002, ANN003, ANN202
            sent.append(args)
            return await command(*args, **kwargs)
        hall.hall.command = noted
        body = {"from": "T7", "to": "SPARE", "live": True}
        for token, auth, code in ((None, "open sesame", 403), ("the page's", None, 401)):
            with pytest.raises(urllib.error.HTTPError) as refused:
                hall.post("/api/move", body, auth=auth, token=token)
            assert refused.value.code == code
        with pytest.raises(urllib.error.HTTPError) as refused:
            hall.post("/api/move", body, auth="open sesame")
        assert refused.value.code == 400
        assert "the hall holds no journal of table 'T7'" in refused.value.read().decode()
        with pytest.raises(urllib.error.HTTPError) as refused:
            hall.post("/api/move", {**body, "force": "yes"}, auth="open sesame")
        assert refused.value.code == 400
        assert not sent                                   # no cmd went to any table


def test_the_page_moves_a_tables_match_here_and_shows_the_reply(tmp_path, venue_broker):
    """The table's dialog on the director's page (Chromium): "Move a match here…" lists the
    tables whose journal the hall holds (here: none; the dialog and its confirmation with
    tables: test_move_dialog.py)."""
    from hall_web_helpers import DESKTOP, RunningHall, clock_state, publish, table_client

    found = shutil.which("chromium") or "/usr/bin/chromium"
    from playwright.sync_api import sync_playwright
    with RunningHall(venue_broker, tmp_path / "archive") as hall, sync_playwright() as p:
        one, two = table_client(venue_broker, "SPARE"), table_client(venue_broker, "T7")
        try:
            publish(one, "gammonclock/SPARE/state", clock_state("SPARE"), retain=True)
            publish(two, "gammonclock/T7/state", clock_state("T7"), retain=True)
            launched = p.chromium.launch(executable_path=found, args=["--no-sandbox"])
            page = launched.new_page(viewport=DESKTOP)
            page.goto(hall.base + "/")
            page.click('.card[data-table="SPARE"]')
            page.click("#move-open")
            page.wait_for_selector("#move-dialog[open]", timeout=PAGE_WAIT_MS)
            assert page.inner_text("#move-from").strip() == (
                "The hall holds no other table's journal: nothing to move here.")
            assert page.is_disabled("#move-send")
            page.screenshot(path=str(tmp_path / "move.png"))
            launched.close()
        finally:
            for client in (one, two):
                client.disconnect()
                client.loop_stop()


def test_a_restarted_hall_keeps_its_copies(tmp_path):
    from gammonclock.journal.records import Stamp
    from gammonclock.journal.writer import JournalWriter

    path = tmp_path / "match-3.jsonl"
    writer = JournalWriter.create(path, b"\x07" * 32, {"config": "[match]\nlength = 3\n"}, 0,
                                  Stamp(1, "b", 2))
    for seq in range(1, 4):
        writer.append("tick", seq * S, {"effects": []}, Stamp(seq, "b", seq))
    writer.close()
    lines = path.read_text().splitlines()
    folder = tmp_path / "archive" / ".live"
    keys = tmp_path / "keys"
    give_key(keys, "T1", b"\x07" * 32)
    give_key(keys, "T2", b"\x07" * 32)
    copies = LiveCopies(folder, keys)
    copies.take("T1", journal_event(path.name, 2, 0, lines[0:3]))
    copies.take("T1", journal_event(path.name, 3, 2, lines[3:4]))
    copies.take("T1", journal_event(path.name, 3, 2, lines[3:4]))          # sent again
    cut = journal_event("match-4.jsonl", 1, 0, []).replace(b'"records": []',
                                                         b'"records_cut": true')
    copies.take("T2", cut)
    again = LiveCopies(folder, keys)
    again.load()
    assert again.journal_text("T1") == (path.name, path.read_text())
    with pytest.raises(NoWholeCopy, match="left records out"):
        again.journal_text("T2")
    # The archive's lists pass the folder by.
    from gammonclock.hall.archive import archived
    assert archived(tmp_path / "archive") == []

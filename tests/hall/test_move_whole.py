"""Issue 31's "Move here on a live table", whole, as the director would live it: round 1 pushed
from the page to table-2 (Анна v Boris) and table-3 (Eve v Fay); table-3 finishes its own match
and is the spare; table-2 is online and playing when the director moves its match to table-3.
The move needs the page's second confirmation; then table-2's clock, told on its retained
`moved`, ends the match there ("moved to table-3", never resumed after a restart) while table-3
plays it out; the results count the moved match once, and table-3's own result stands beside it.
Real Mosquitto with the shipped ACL, the real hall with its keys, real clocks on mock pins."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from gammonclock.core.match import Phase
from gammonclock.core.rules import EndReason
from gammonclock.hardware.presenters import PanelPresenter
from gammonclock.journal.reader import read_journal
from gammonclock.sides import Button
from hall_web_helpers import RunningHall
from move_helpers import copy_device_key, decisions, post_move, step, until, with_hall
from mqtt_helpers import Broker
from venue_helpers import Venue, command, journal_of, power_cut, tap

EVENT = "Moscow Open"
PAIRINGS = "table,left,right,length\ntable-2,Анна,Boris,5\ntable-3,Eve,Fay,3\n"


VENUE_TABLES = ("table-2", "table-3")


def results(hall: RunningHall) -> dict[str, dict[str, Any]]:
    return {r["journal"]: r for r in hall.get("/api/results.json")["results"]}


def panels(device: Any) -> list[tuple[str, tuple[str, ...]]]:
    [shown] = [p for p in device.service.presenters if isinstance(p, PanelPresenter)]
    return [(view.title, view.lines[0]) for view, _ in shown.shown_both()]


def test_a_live_match_moved_is_played_on_one_clock_and_counted_once(
        tmp_path: Path, venue_broker: Broker) -> None:
    venue = Venue()
    with_hall(venue, venue_broker)
    keys, archive = tmp_path / "keys", tmp_path / "archive"
    with RunningHall(venue_broker, archive, keys_dir=keys) as hall, \
            ThreadPoolExecutor(1) as pool:
        source = venue.build(tmp_path, "table-2", tmp_path / "t2", 3 * 3600, "boot-t2")
        spare = venue.build(tmp_path, "table-3", tmp_path / "t3", 50 * 3600, "boot-t3")
        copy_device_key(keys, "table-2", tmp_path / "t2")
        copy_device_key(keys, "table-3", tmp_path / "t3")
        clocks = (source, spare)
        try:
            until(lambda: hall.card("table-2").get("online") is True
                  and hall.card("table-3").get("online") is True, "both tables online",
                  step=lambda: step(*clocks))
            pushed = hall.post("/api/round", {"csv": PAIRINGS, "event": EVENT, "round": "1"})
            assert pushed["errors"] == 0, pushed
            until(lambda: source.session is not None and spare.session is not None,
                  "both clocks loaded the pushed round", timeout=30,
                  step=lambda: step(*clocks))
            # Table-3 plays its own match out: it is the spare now.
            tap(venue, spare, Button.LEFT)
            command(spare, "disqualify", "right")                    # Eve wins
            own = journal_of(spare)
            # Table-2 is online and playing.
            for button in (Button.LEFT, Button.RIGHT, Button.LEFT):
                tap(venue, source, button)
            command(source, "warn", "left", "slow play")      # the last record, an event
            moved = journal_of(source)
            last = read_journal(moved).last
            until(lambda: hall.call(lambda: (hall.hall.live.held("table-2") or {})
                                    .get("last_seq")) == last.seq,
                  "the hall holds table-2's journal", step=lambda: step(*clocks))
            assert source.session.engine.match.phase is Phase.RUNNING
            # The stale dialog's move, without the second confirmation: refused.
            status, body = post_move(pool, hall, {"from": "table-2", "to": "table-3"}, *clocks)
            assert (status, body.get("code")) == (409, "source_live"), body
            assert spare.session.engine.match.phase is Phase.MATCH_OVER     # untouched
            # Confirmed: the spare continues it, paused, and table-2 is told.
            status, body = post_move(pool, hall, {"from": "table-2", "to": "table-3",
                                                     "live": True, "journal": moved.name}, *clocks)
            assert status == 200 and body["reply"]["ok"] is True, body
            assert spare.session.engine.match.phase is Phase.PAUSED
            continued = journal_of(spare)
            until(lambda: source.session.engine.match.end_reason is EndReason.MOVED,
                  "table-2's clock ended the moved match", timeout=30,
                  step=lambda: step(*clocks))
            until(lambda: panels(source) == [("MATCH MOVED", ("moved to table-3", ""))] * 2,
                  "table-2's panels say where the match went", step=lambda: step(source))
            [decision] = decisions(archive)
            assert (decision["source"], decision["to"], decision["journal"]) == (
                "table-2", "table-3", moved.name)
            # Table-2 restarted (a power cut): its moved match is over, never resumed.
            power_cut(source)
            venue.clocks.remove(source)
            again = venue.build(tmp_path, "table-2", tmp_path / "t2", 0, "boot-t2-again")
            clocks = (again, spare)
            step(*clocks)
            assert again.session is None or again.session.journal is None \
                or Path(again.session.journal.path) != moved \
                or again.session.engine.match.end_reason is EndReason.MOVED
            assert again.session is None \
                or again.session.engine.match.phase is not Phase.PAUSED
            # The match goes on on table-3 only: Анна wins there.
            tap(venue, spare, Button.CUBE)          # the cube's tap: nothing; then resume
            command(spare, "resume")
            command(spare, "disqualify", "right")
            until(lambda: {f"table-3/{own.name}", f"table-3/{continued.name}"}
                  <= set(results(hall)), "both of table-3's journals archived",
                  timeout=40, step=lambda: step(*clocks))
            got = results(hall)
            mine, theirs = got[f"table-3/{own.name}"], got[f"table-3/{continued.name}"]
            assert (mine["counted"], mine["winner_name"]) == (True, "Eve"), mine
            assert (theirs["counted"], theirs["winner_name"]) == (True, "Анна"), theirs
            assert theirs["chain"] == f"table-2/{moved.name}"
            # Table-2's journal, once archived, is no result of its own: it ended moved.
            until(lambda: f"table-2/{moved.name}" in results(hall),
                  "table-2's moved journal archived", timeout=40, step=lambda: step(*clocks))
            source_result = results(hall)[f"table-2/{moved.name}"]
            assert (source_result["counted"], source_result["ended_by"]) == (False, "moved")
            standing = {p["player"]: p for p in hall.get("/api/standings.json")["players"]}
            assert standing["Анна"]["played"] == 1 and standing["Анна"]["wins"] == 1
            assert standing["Boris"]["played"] == 1
            assert standing["Eve"]["wins"] == 1 and standing["Fay"]["played"] == 1
        finally:
            for device in venue.clocks:
                device.close()

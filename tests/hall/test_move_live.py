"""Issue 31, "Move here on a live table" and "the source clock told" (SPEC §13.5, §14.1): the
page's spare dialog moved table-2's match while table-2 was online and playing, with no warning,
and both clocks then played the same match. Now `POST /api/move` refuses a table not known to be
offline unless the request carries the page's second confirmation (`"live": true`; 409
`source_live`), a journal other than the one the dialog showed (409 `move_stale`), and the spare
as its own source; once the spare continued the match, the move is in the director's decisions
(hall-decisions.jsonl) and the retained `P/table-2/moved` is on the broker, which table-2's
account reads and cannot write, and which is cleared only once table-2 took it after its next
match was pushed. Against a real Mosquitto with the shipped ACL, the real hall with its page and
real clocks on mock pins."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from gammonclock.core.match import Phase
from gammonclock.journal.reader import read_journal
from gammonclock.runtime.lifecycle import load_next_match
from gammonclock.sides import Button
from gammonclock.wire import Moved
from hall_web_helpers import RunningHall, publish, table_client
from move_helpers import copy_device_key, decisions, post_move, retained, until, with_hall
from mqtt_helpers import Broker, Collector
from venue_helpers import MATCH_TEXT, Venue, command, journal_of, power_cut, tap

TOPIC = "gammonclock/table-2/moved"


VENUE_TABLES = ("table-2", "table-3", "table-4")


def test_a_live_tables_match_moves_only_when_confirmed_and_its_clock_is_told(
        tmp_path: Path, venue_broker: Broker) -> None:
    venue = Venue()
    with_hall(venue, venue_broker)
    keys, archive = tmp_path / "keys", tmp_path / "archive"
    with RunningHall(venue_broker, archive, keys_dir=keys) as hall, \
            ThreadPoolExecutor(1) as pool:
        live = venue.build(tmp_path, "table-2", tmp_path / "t2", 3 * 3600, "boot-t2")
        copy_device_key(keys, "table-2", tmp_path / "t2")
        spare = venue.build(tmp_path, "table-3", tmp_path / "t3", 50 * 3600, "boot-t3")
        try:
            assert load_next_match(live.service, live.table, MATCH_TEXT, "m.toml").ok
            for button in (Button.LEFT, Button.RIGHT, Button.LEFT):
                tap(venue, live, button)
            command(live, "warn", "left", "slow play")
            card = journal_of(live)
            last = read_journal(card).last
            until(lambda: hall.call(lambda: (hall.hall.live.held("table-2") or {})
                                    .get("last_seq")) == last.seq,
                  "the hall holds table-2's journal", step=live.service.step)
            until(lambda: hall.card("table-2").get("online") is True
                  and hall.card("table-3").get("online") is True, "both tables online",
                  step=lambda: (live.service.step(), spare.service.step()))
            assert live.session.engine.match.phase is Phase.RUNNING      # playing
            with Collector(venue_broker, "watcher", "gammonclock/table-3/cmd") as sent:
                # Table-2 is online and playing: without the confirmation, refused.
                status, body = post_move(pool, hall, {"from": "table-2", "to": "table-3"}, spare)
                assert (status, body.get("code")) == (409, "source_live"), body
                assert body["fields"] == {"table": "table-2", "to": "table-3"}
                # A dialog that showed another journal: refused, even confirmed.
                status, body = post_move(pool, hall, {"from": "table-2", "to": "table-3",
                                                         "live": True,
                                                         "journal": "match-old.jsonl"}, spare)
                assert (status, body.get("code")) == (409, "move_stale"), body
                # The spare is not its own source; `live` is a yes or a no.
                status, body = post_move(pool, hall, {"from": "table-3", "to": "table-3",
                                                         "live": True}, spare)
                assert (status, body.get("code")) == (400, "same_table"), body
                status, body = post_move(pool, hall, {"from": "table-2", "to": "table-3",
                                                         "live": "yes"}, spare)
                assert status == 400
                # Confirmed, but naming nothing: a live move names the journal it moves.
                status, body = post_move(pool, hall, {"from": "table-2", "to": "table-3",
                                                     "live": True}, spare)
                assert (status, body.get("code")) == (409, "move_unnamed"), body
                assert body["fields"]["journal"] == card.name
                assert sent.messages == []                   # nothing went to table-3
            assert spare.session is None or spare.session.engine.match.phase is not Phase.PAUSED
            assert decisions(archive) == []
            assert retained(venue_broker, "watcher", TOPIC) == []
            # Confirmed (the page's second confirmation), with the journal it showed.
            status, body = post_move(pool, hall, {"from": "table-2", "to": "table-3",
                                                     "live": True, "journal": card.name}, spare)
            assert status == 200 and body["reply"]["ok"] is True, body
            match = spare.session.engine.match
            assert match.phase is Phase.PAUSED
            assert body["moved"] == {"source": "table-2", "to": "table-3", "journal": card.name,
                                     "seq": last.seq, "by": "hall",
                                     "at": body["moved"]["at"], "published": True}
        finally:
            power_cut(live)                 # (the clock's own side is another test's)
            venue.clocks.remove(live)
            for device in venue.clocks:
                device.close()
        # The decision is on disk, with exactly these fields.
        [decision] = decisions(archive)
        assert {k: decision[k] for k in ("kind", "by", "source", "to", "journal", "seq")} == {
            "kind": "moved", "by": "hall", "source": "table-2", "to": "table-3",
            "journal": card.name, "seq": last.seq}
        # The retained notice: table-2's account reads its own...
        [notice] = retained(venue_broker, "table-2", TOPIC)
        assert notice.qos == 1
        moved = Moved.parse(notice.payload)
        assert (moved.journal, moved.to, moved.by) == (card.name, "table-3", "hall")
        assert hall.card("table-2")["moved"] == {"journal": card.name, "to": "table-3",
                                                 "by": "hall", "at": moved.at, "taken": False}
        _acl(hall, venue_broker, notice.payload)
        # A next match pushed to table-2 before it took the notice: the notice stays (a clock
        # back later must still read it)...
        pushed = hall.post("/api/round", {"csv": "table,left,right,length\n"
                                                 "table-2,Chen,Dora,5\n", "round": "2"})
        assert pushed["pushed"] == 1
        assert [m.payload for m in retained(venue_broker, "watcher", TOPIC)] == [notice.payload]
        # ...a restarted hall reads it back...
    with RunningHall(venue_broker, archive, keys_dir=keys) as again:
        until(lambda: (again.card("table-2").get("moved") or {}).get("to") == "table-3",
              "the restarted hall shows table-2's match moved")
        # ...and once table-2 says it took it (as its clock does, on `notice`), a next
        # match pushed clears it.
        with Collector(venue_broker, "watcher", TOPIC) as seen:
            account = table_client(venue_broker, "table-2")
            try:
                publish(account, "gammonclock/table-2/notice",
                        {"ok": True, "moved": card.name, "to": "table-3", "at": moved.at})
                until(lambda: again.card("table-2")["moved"]["taken"] is True,
                      "the hall saw table-2 take the notice")
                assert [m.payload for m in retained(venue_broker, "watcher", TOPIC)] \
                    == [notice.payload]                   # not cleared without a push
                again.post("/api/round", {"csv": "table,left,right,length\n"
                                                 "table-2,Chen,Dora,5\n", "round": "2"})
                seen.wait_for(lambda m: m.topic == TOPIC and m.payload == b"")
            finally:
                account.disconnect()
                account.loop_stop()
        assert retained(venue_broker, "watcher", TOPIC) == []
        assert again.card("table-2")["moved"] is None


def _acl(hall: RunningHall, broker: Broker, payload: bytes) -> None:
    """With the shipped ACL, table-2's account cannot write its own `moved`, nor read
    table-4's."""
    account = table_client(broker, "table-2")
    try:
        account.publish(TOPIC, b'{"journal": "x.jsonl", "to": "table-2"}', qos=1,
                        retain=True).wait_for_publish(5)
        account.publish(TOPIC, b"", qos=1, retain=True).wait_for_publish(5)
    finally:
        account.disconnect()
        account.loop_stop()
    assert [m.payload for m in retained(broker, "watcher", TOPIC)] == [payload]
    other = Moved("match-x.jsonl", "table-9", "hall", "2026-05-01T14:03:00.000Z")
    hall.call(lambda: hall.hall.moves.publish("table-4", other))
    until(lambda: [m.payload for m in retained(broker, "watcher",
                                               "gammonclock/table-4/moved", 0.3)]
          == [other.payload()], "table-4's notice on the broker")
    assert [m.topic for m in retained(broker, "table-2", "gammonclock/+/moved")] == [TOPIC]
    assert retained(broker, "table-2", "gammonclock/table-4/moved") == []

"""Issue 32, "a round pushed over a round still playing": round 2 pushed while round 1 played
turned five cards amber ("match refused: … `new-match --force` ends it now …", a shell's hint on a
web page) while the push said "6 pushed, 0 with errors". Now the hall queues the next match of a
table whose match is in progress (kept in the archive folder), and publishes it on the table's
retained `P/T/match` only once that table's state says its match is over (SPEC §13.2: the clock
still decides); the push says which rows loaded and which are queued, the cards say "round 2
queued", a second push replaces what is queued (and says so), and a refusal because the match
started between (a race) queues the match again instead of alerting the director. Against a real
Mosquitto with the shipped ACL, the real hall with its page and real clocks with their link."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from gammonclock.hall import actions
from gammonclock.hall.queued import QUEUE_FILE
from gammonclock.sides import Button
from hall_web_helpers import RunningHall, clock_state, publish, table_client
from mqtt_helpers import WATCHER, Broker, Collector
from table_helpers import device_text, end_the_match, link_of, right_player, wait

P = "gammonclock"
ROUND_1 = "table,left,right,length\ntable-1,Anna,Boris,5\ntable-2,Chen,Dora,5\n"
ROUND_2 = "table,left,right,length\ntable-1,Anna,Chen,5\ntable-2,Boris,Dora,5\n"
ROUND_2_FIXED = "table,left,right,length\ntable-2,Boris,Eve,5\n"
WAIT_S = 30.0


def _push(hall: RunningHall, csv_text: str, round_name: str) -> dict[str, Any]:
    answer: dict[str, Any] = hall.post("/api/round", {"csv": csv_text, "event": "Open",
                                                      "round": round_name})
    return answer


def _lifecycle(hall: RunningHall, table: str) -> Any:
    return hall.card(table).get("state", {}).get("lifecycle")


def _loaded(hall: RunningHall, table: str, player: str) -> bool:
    """The hall has the table's notice that it loaded a match with PLAYER."""
    notice = hall.card(table).get("notice") or {}
    return notice.get("ok") is True and any(player in line for line in notice.get("said", []))


def _notices(seen: Collector, table: str) -> list[dict[str, Any]]:
    return [m.json() for m in seen.on("notice") if m.topic == f"{P}/{table}/notice"]


def _matches(seen: Collector, table: str) -> list[str]:
    return [m.text for m in seen.messages if m.topic == f"{P}/{table}/match" and m.payload]


def test_a_round_pushed_over_a_round_playing_is_queued_and_loads_as_each_match_ends(
        broker: Broker, tables: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(actions, "NOTICE_WAIT_S", WAIT_S)      # a loaded machine's clocks
    archive = tmp_path / "archive"
    one = tables(device_text(broker, table="table-1", user="table-1"), "t1")
    two = tables(device_text(broker, table="table-2", user="table-2"), "t2")
    with Collector(broker, WATCHER, f"{P}/+/match", f"{P}/+/notice") as seen:
        with RunningHall(broker, archive) as hall:
            hall.wait(lambda: all(hall.card(t).get("online") for t in ("table-1", "table-2")),
                      "both tables online", WAIT_S)
            first = _push(hall, ROUND_1, "1")
            assert [(r["table"], r["delivery"]) for r in first["rows"]] == [
                ("table-1", "loaded"), ("table-2", "loaded")], first
            assert (first["pushed"], first["loaded"], first["queued"]) == (2, 2, 0)
            one.tap(Button.LEFT)                       # round 1 is playing on both tables
            two.tap(Button.LEFT)
            hall.wait(lambda: _lifecycle(hall, "table-1") == _lifecycle(hall, "table-2")
                      == "in_progress", "round 1 in progress on both cards", WAIT_S)

            second = _push(hall, ROUND_2, "2")
            assert [(r["table"], r["delivery"]) for r in second["rows"]] == [
                ("table-1", "queued"), ("table-2", "queued")], second
            assert (second["pushed"], second["loaded"], second["queued"], second["errors"]) \
                == (2, 0, 2, 0)
            for table in ("table-1", "table-2"):
                card = hall.card(table)
                assert card["queued"] == {"round": "2", "event": "Open", "left": card["queued"]
                                          ["left"], "right": card["queued"]["right"],
                                          "length": 5, "pushed_ms": card["queued"]["pushed_ms"],
                                          "status": "held", "match": card["queued"]["match"]}, card
                assert [n for n in card["needs"] if n["kind"] == "notice"] == []
            assert hall.card("table-2")["queued"]["left"] == "Boris"
        # The hall is away: what it queued is on disk, and table-1's match ends meanwhile.
        kept = json.loads((archive / QUEUE_FILE).read_text(encoding="utf-8"))
        assert sorted(e["table"] for e in kept) == ["table-1", "table-2"]
        end_the_match(one)
        assert right_player(one) == "Boris"            # nothing loads without the hall
        with RunningHall(broker, archive) as hall:
            # The restarted hall reads table-1's state (its match over) and sends it round 2.
            wait(lambda: right_player(one) == "Chen", "table-1 loaded round 2", WAIT_S)
            hall.wait(lambda: hall.card("table-1").get("queued") is None,
                      "table-1's card no longer queued", WAIT_S)
            assert hall.card("table-2")["queued"]["round"] == "2"
            assert right_player(two) == "Dora"         # table-2 still plays round 1
            assert _matches(seen, "table-2") == [_matches(seen, "table-2")[0]]  # round 1 only
            # A second push over the queued one replaces it, and says which round it replaced.
            fixed = _push(hall, ROUND_2_FIXED, "2")
            [row] = fixed["rows"]
            assert (row["delivery"], row["replaced"]) == ("queued", {
                "round": "2", "event": "Open", "left": "Boris", "right": "Dora"}), row
            assert hall.card("table-2")["queued"]["right"] == "Eve"
            assert right_player(two) == "Dora"
            end_the_match(two)
            wait(lambda: right_player(two) == "Eve", "table-2 loaded the corrected round 2",
                 WAIT_S)
            hall.wait(lambda: hall.card("table-2").get("queued") is None,
                      "table-2's card no longer queued", WAIT_S)
            for table, player in (("table-1", "Chen"), ("table-2", "Eve")):
                hall.wait(lambda t=table, p=player: _loaded(hall, t, p), f"{table}'s notice",
                          WAIT_S)
                assert [n for n in hall.card(table)["needs"] if n["kind"] == "notice"] == []
        # Each clock was sent round 1, then its round 2 once its match was over, and never
        # refused a load (no notice says "in progress").
        assert [len(_matches(seen, t)) for t in ("table-1", "table-2")] == [2, 2]
        assert 'right = "Eve"' in _matches(seen, "table-2")[-1]
        for table in ("table-1", "table-2"):
            seen.wait_until(lambda _, t=table: len(_notices(seen, t)) >= 2, WAIT_S)
            assert [n["ok"] for n in _notices(seen, table)] == [True, True], \
                _notices(seen, table)
    assert json.loads((archive / QUEUE_FILE).read_text(encoding="utf-8")) == []


def test_a_match_that_started_between_is_queued_again_not_refused(
        broker: Broker, tables: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The hall saw table-1 ready and sent round 2; its players had started game 1 meanwhile
    (the state saying so was still on its way): the clock refuses and holds the match, the
    hall shows it queued (no amber card, no shell hint), and it loads once the match is over."""
    monkeypatch.setattr(actions, "NOTICE_WAIT_S", WAIT_S)
    one = tables(device_text(broker, table="table-1", user="table-1"), "t1")
    with Collector(broker, WATCHER, f"{P}/+/notice") as seen, \
            RunningHall(broker, tmp_path / "archive") as hall:
        hall.wait(lambda: hall.card("table-1").get("online"), "table-1 online", WAIT_S)
        assert _push(hall, "table,left,right,length\ntable-1,Anna,Boris,5\n", "1")["loaded"] == 1
        hall.wait(lambda: _lifecycle(hall, "table-1") == "ready", "table-1 ready", WAIT_S)
        link = link_of(one)
        real = link.state.publish_if_due
        monkeypatch.setattr(link.state, "publish_if_due", lambda: None)   # the state in flight
        one.tap(Button.LEFT)
        assert _lifecycle(hall, "table-1") == "ready"
        second = _push(hall, "table,left,right,length\ntable-1,Anna,Chen,5\n", "2")
        [row] = second["rows"]
        assert row["delivery"] == "queued", row
        refused = _notices(seen, "table-1")[-1]
        assert (refused["ok"], refused["code"], refused["pending"]) == (
            False, "match_in_progress", True)
        card = hall.card("table-1")
        assert card["queued"]["status"] == "waiting" and card["queued"]["round"] == "2", card
        assert [n for n in card["needs"] if n["kind"] == "notice"] == [], card["needs"]
        monkeypatch.setattr(link.state, "publish_if_due", real)
        assert right_player(one) == "Boris"
        end_the_match(one)
        wait(lambda: right_player(one) == "Chen", "the match that waited loaded", WAIT_S)
        hall.wait(lambda: hall.card("table-1").get("queued") is None, "no longer queued", WAIT_S)
        assert [n for n in hall.card("table-1")["needs"] if n["kind"] == "notice"] == []


def test_a_tables_state_moves_only_its_own_queued_match(broker: Broker, tmp_path: Path) -> None:
    """Table-1's account says, on its own state, that it is table-2 and its match is over, and
    tries table-2's state topic: table-2's queued match stays queued; only table-1's goes."""
    one, two = table_client(broker, "table-1"), table_client(broker, "table-2")
    try:
        with Collector(broker, WATCHER, f"{P}/+/match") as seen, \
                RunningHall(broker, tmp_path / "archive") as hall:
            for client, table in ((one, "table-1"), (two, "table-2")):
                publish(client, f"{P}/{table}/state",
                        clock_state(table, lifecycle="in_progress"), retain=True)
            hall.wait(lambda: _lifecycle(hall, "table-1") == _lifecycle(hall, "table-2")
                      == "in_progress", "both tables in progress")
            # A table paired twice: nothing of the round goes, every line says why.
            twice = _push(hall, ROUND_2 + "table-1,Eve,Fay,5\n", "2")
            assert (twice["round_refused"], twice["pushed"], twice["errors"]) == (True, 0, 3)
            assert [r["code"] for r in twice["rows"]] == ["paired_twice", "round_refused",
                                                          "paired_twice"], twice
            assert hall.card("table-1")["queued"] is None
            pushed = _push(hall, ROUND_2, "2")
            assert pushed["queued"] == 2 and pushed["round_refused"] is False, pushed
            forged = clock_state("table-2", lifecycle="match_over", phase="match_over",
                                 seq=9, running=None)
            publish(one, f"{P}/table-2/state", forged)          # refused by the broker's ACL
            publish(one, f"{P}/table-1/state", forged)          # its own topic, another name
            seen.wait_for(lambda m: m.topic == f"{P}/table-1/match", timeout=WAIT_S)
            hall.wait(lambda: hall.card("table-1").get("queued") is None, "table-1 sent")
            assert hall.card("table-2")["queued"]["status"] == "held"
            assert _lifecycle(hall, "table-2") == "in_progress"
            assert [m.topic for m in seen.messages] == [f"{P}/table-1/match"]
    finally:
        for client in (one, two):
            client.disconnect()
            client.loop_stop()


def test_a_match_waiting_for_the_one_in_progress_is_worded_for_the_page() -> None:
    """The clock's refusal names its shell's `new-match --force`; the card says the page's own
    words and action (Force load…), in each language by its id."""
    from gammonclock import words
    from gammonclock.hall.view import HallView
    error = words.say("load.in_progress", "en", game="game 2", score="1-0")
    assert "new-match --force" in error
    view = HallView()
    view.receive(f"{P}/table-1/notice", json.dumps({
        "ok": False, "error": error, "code": "match_in_progress", "pending": True,
        "match": "a" * 64}).encode(), 0)
    [need] = view.card("table-1")["needs"]
    assert need["say"] == ["notice_waits"] and need["match"] == "a" * 64
    assert "--force" not in need["text"] and "Force load…" in need["text"]


def test_a_force_that_did_not_load_leaves_the_match_queued(tmp_path: Path) -> None:
    """The director's force of a match queued at the hall: while it is on its way the table's
    states do not send it; refused or unanswered, it stays queued and goes once the table takes
    a next match; loaded, it is queued no more (and the file says so)."""
    from gammonclock.hall.pairings import parse_pairings
    from gammonclock.hall.queued import NextMatches
    from gammonclock.hall.view import HallView

    view, sent = HallView(), []
    queue = NextMatches(tmp_path, P, view, lambda topic, text: sent.append((topic, text)),
                        lambda _table: None, lambda _table: None)

    def state(lifecycle: str, seq: int) -> None:
        view.receive(f"{P}/table-1/state", json.dumps(clock_state(
            "table-1", lifecycle=lifecycle, seq=seq)).encode(), seq)
        queue.state_seen("table-1")

    state("in_progress", 1)
    [row] = parse_pairings("table,left,right,length\ntable-1,Anna,Chen,5\n", "Open", "2")
    assert queue.push(row, "Open", "2", 0).published is None and sent == []
    digest = queue.card("table-1")["match"]
    assert queue.force("table-1", "b" * 64) is None           # not the match confirmed
    assert queue.force("table-1", digest) == row.toml
    state("match_over", 2)                                     # the force on its way
    assert sent == []
    queue.forced("table-1", digest, loaded=False)              # refused: queued, and now sent
    assert sent == [(f"{P}/table-1/match", row.toml)]
    queue.entries.clear()
    state("in_progress", 3)
    queue.push(row, "Open", "2", 0)
    queue.save()
    assert json.loads((tmp_path / QUEUE_FILE).read_text(encoding="utf-8"))[0]["text"] == row.toml
    assert queue.force("table-1", digest) is not None
    queue.forced("table-1", digest, loaded=True)
    assert queue.card("table-1") is None
    assert json.loads((tmp_path / QUEUE_FILE).read_text(encoding="utf-8")) == []


@pytest.mark.parametrize("content", [
    b"not json", b'{"a": 1}', b"[1, 2, 3]", b"[" + b'"x",' * 10 + b'"x"]',
    json.dumps([{"table": "../table-2", "text": "x", "event": "", "round": "", "left": "A",
                 "right": "B", "length": 5, "pushed_ms": 0, "status": "held"},
                {"table": "table-2", "text": "x" * 20_000, "event": "", "round": "",
                 "left": "A", "right": "B", "length": 5, "pushed_ms": 0, "status": "held"},
                {"table": "table-2", "text": "x", "event": "", "round": "", "left": "A",
                 "right": "B", "length": 500, "pushed_ms": 0, "status": "held"},
                {"table": "table-2", "text": "x", "event": "", "round": "", "left": "A",
                 "right": "B", "length": 5, "pushed_ms": 0, "status": "gone"}]).encode(),
])
def test_a_queue_file_that_is_not_the_halls_queues_nothing(tmp_path: Path, content: bytes
                                                          ) -> None:
    """The hall's own file, read back bounded and checked entry by entry: what is not a queued
    match of a table is left out (a file that is not a list is said so)."""
    from gammonclock.hall.queued import NextMatches
    from gammonclock.hall.view import HallView
    (tmp_path / QUEUE_FILE).write_bytes(content)
    queue = NextMatches(tmp_path, P, HallView(), lambda *_: None, lambda _t: None,
                        lambda _t: None)
    problem = queue.load()
    assert queue.entries == {}
    assert (problem is None) == content.startswith(b"["), problem


def test_a_round_held_at_the_hall_still_clears_a_moved_notice_the_table_took(
        tmp_path: Path) -> None:
    """The moved notice's rule (moves.py): a next match *pushed* to a table clears the notice it
    took. A push the hall holds (the table plays a match of its own now) is such a push: the
    notice is told of it, as when the match goes out at once."""
    from gammonclock.hall.pairings import parse_pairings
    from gammonclock.hall.queued import NextMatches
    from gammonclock.hall.view import HallView

    view, pushed_to = HallView(), []
    queue = NextMatches(tmp_path, P, view, lambda topic, text: None, pushed_to.append,
                        lambda _table: None)
    view.receive(f"{P}/table-1/state", json.dumps(clock_state(
        "table-1", lifecycle="in_progress", seq=1)).encode(), 1)
    [row] = parse_pairings("table,left,right,length\ntable-1,Anna,Chen,5\n", "Open", "2")
    assert queue.push(row, "Open", "2", 0).published is None      # held: a match in progress
    assert pushed_to == ["table-1"]

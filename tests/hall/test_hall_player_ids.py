"""Player ids and byes in the pairings CSV (issue 32), and the rounds the results list: the
optional `left_id,right_id` columns read bounded, a bye row (no table, no right player), each
player once in a round; the results keyed by the pairing's ids (never the journal's), a bye
counted on the director's word; the standings with two players of one name and with byes
(the common Swiss rule: a match won, no points, no opponent in the tie-breaks); every round
with rows listed in the order it began; a table still on another round's match waiting, never
"still playing" the round after. Pure: the hall's own classes, no broker."""

from __future__ import annotations

import csv
import io
from pathlib import Path
from typing import Any

import pytest

from gammonclock.hall.pairings import PLAYER_ID, Bye, PairedMatch, parse_pairings
from gammonclock.hall.results import (
    RESULT_COLUMNS,
    ROUNDS_FILE,
    Result,
    Results,
    results_csv,
)
from gammonclock.hall.standings_web import standings_csv

EVENT = "Club night"
IDS = "table,left,right,length,left_id,right_id\n"

# --- the pairings CSV ----------------------------------------------------------------------------

# (the CSV under the header IDS, each row's (table, code or None, ids or bye))
PARSED: list[tuple[str, str, list[tuple[str, str | None, Any]]]] = [
    ("both ids", "table-1,Anna,Boris,5,RUS-17,RUS.23\n",
     [("table-1", None, ("RUS-17", "RUS.23"))]),
    ("one id, the other none", "table-1,Anna,Boris,5,17,\n", [("table-1", None, ("17", ""))]),
    ("no ids", "table-1,Anna,Boris,5,,\n", [("table-1", None, ("", ""))]),
    ("a formula is no id", "table-1,Anna,Boris,5,=HYPERLINK(1),\n",
     [("table-1", "bad_player_id", None)]),
    ("a leading dash is no id", "table-1,Anna,Boris,5,-17,\n",
     [("table-1", "bad_player_id", None)]),
    ("a space is no id", "table-1,Anna,Boris,5,1 7,\n", [("table-1", "bad_player_id", None)]),
    ("33 characters is no id", f"table-1,Anna,Boris,5,{'a' * 33},\n",
     [("table-1", "bad_player_id", None)]),
    ("a path is no id", "table-1,Anna,Boris,5,../17,\n", [("table-1", "bad_player_id", None)]),
    ("one id on both sides", "table-1,Anna,Boris,5,17,17\n",
     [("table-1", "same_player_id", None)]),
    ("the id that is not one named", "table-1,Anna,Boris,5,17,=1\n",
     [("table-1", "bad_player_id", "'=1'")]),
    ("one id in two rows: the later refused", "table-1,Anna,Boris,5,17,23\n"
     "table-2,Chen,Anna,5,31,17\n", [("table-1", None, ("17", "23")),
                                     ("table-2", "player_twice", None)]),
    ("a bye", "table-1,Anna,Boris,5,17,23\n,Chen,,,31,\n",
     [("table-1", None, ("17", "23")), ("", None, Bye("Chen", "31"))]),
    ("a bye without an id, its length given", ",Chen,,5,,\n", [("", None, Bye("Chen"))]),
    ("a bye has no right_id", ",Chen,,,31,32\n", [("", "bye_right_id", None)]),
    ("a bye's id is bounded", ",Chen,,,=1,\n", [("", "bad_player_id", None)]),
    ("a bye's name as a match file's", f",{'x' * 25},,,,\n", [("", "config", None)]),
    ("a bye to a player paired (by id)", "table-1,Anna,Boris,5,17,23\n,Anna,,,17,\n",
     [("table-1", None, ("17", "23")), ("", "player_twice", None)]),
    ("a bye to a player paired (by name)", "table-1,Anna,Boris,5,,\n,Boris,,,,\n",
     [("table-1", None, ("", "")), ("", "player_twice", None)]),
    ("two byes to one player", ",Chen,,,,\n,Chen,,,,\n",
     [("", None, Bye("Chen")), ("", "player_twice", None)]),
    ("no table but a right player is no bye", ",Anna,Boris,5,,\n", [("", "bad_table", None)]),
]


@pytest.mark.parametrize("name, body, expected", PARSED, ids=[p[0] for p in PARSED])
def test_the_pairings_ids_and_byes(name: str, body: str,
                                   expected: list[tuple[str, str | None, Any]]) -> None:
    rows = parse_pairings(IDS + body, EVENT, "2")
    assert [(r.table, r.code) for r in rows] == [(t, code) for t, code, _ in expected]
    for row, (_, code, what) in zip(rows, expected, strict=True):
        if code is not None:
            assert row.error is not None and row.toml is None and row.bye is None
            assert row.match is None
            if what is not None:
                assert row.fields["id"] == what
        elif isinstance(what, Bye):
            assert (row.bye, row.toml, row.match) == (what, None, None)
        else:
            assert row.match is not None and (row.match.left_id, row.match.right_id) == what
            assert row.toml is not None and "id" not in row.toml   # never in the match file


def test_a_header_without_ids_reads_as_before() -> None:
    [row] = parse_pairings("table,left,right,length\ntable-1,Anna,Boris,5\n")
    assert row.match == PairedMatch("table-1", "Anna", "Boris", 5)
    assert row.match.as_json() == {"table": "table-1", "left": "Anna", "right": "Boris",
                                   "length": 5, "discipline": ""}


@pytest.mark.parametrize("given, ok", [("1", True), ("a" * 32, True), ("RUS-17.b_2", True),
                                       ("a" * 33, False), ("", False), ("_1", False),
                                       (".1", False), ("+1", False), ("@1", False),
                                       ("Анна", False), ("1\n", False)])
def test_a_player_id_is_bounded(given: str, ok: bool) -> None:
    assert (PLAYER_ID.fullmatch(given) is not None) is ok


# --- results and standings ----------------------------------------------------------------------

def result(table: str, left: str, right: str, left_score: int, right_score: int, *,
           round_name: str, at: int, length: int = 5) -> Result:
    """A finished match's result as results.collect reads it from an intact journal."""
    return Result(table, f"{table}/match-{round_name}-{at}.jsonl", "intact", "intact",
                  event=EVENT, round=round_name, left=left, right=right, length=length,
                  left_score=left_score, right_score=right_score,
                  winner="left" if left_score > right_score else "right", ended_by="score",
                  started_wall_ms=at, ended_wall_ms=at + 1, sha256="a" * 64)


def held(tmp_path: Path) -> Results:
    keys = tmp_path / "keys"
    keys.mkdir(exist_ok=True)
    return Results(tmp_path / "archive", keys_dir=keys)


def push(results: Results, round_name: str, csv_text: str, at: int) -> None:
    rows = parse_pairings(csv_text, EVENT, round_name)
    assert all(r.error is None for r in rows), [r.error for r in rows]
    results.pushed(EVENT, round_name, [r.match for r in rows if r.match is not None], at,
                   byes=[r.bye for r in rows if r.bye is not None])


def take(results: Results, *each: Result) -> None:
    for r in each:
        results.take(r.journal, r)


def player(data: dict[str, Any], name: str, player_id: str = "") -> dict[str, Any]:
    [found] = [p for p in data["players"]
               if (p["player"], p["player_id"]) == (name, player_id)]
    return found


def test_two_players_of_one_name_are_two_by_their_ids(tmp_path: Path) -> None:
    """Two Annas (ids 17 and 31): one beats Boris, the other loses to Chen; by name they would
    be one Anna of 1 win and 1 loss."""
    results = held(tmp_path)
    push(results, "1", IDS + "table-1,Anna,Boris,5,17,23\ntable-2,Chen,Anna,5,40,31\n", 1000)
    take(results, result("table-1", "Anna", "Boris", 5, 2, round_name="1", at=2000),
         result("table-2", "Chen", "Anna", 5, 3, round_name="1", at=2000))
    data = results.standings()
    annas = sorted((p["player_id"], p["wins"], p["losses"], p["rank"])
                   for p in data["players"] if p["player"] == "Anna")
    assert annas == [("17", 1, 0, 1), ("31", 0, 1, 3)]
    assert player(data, "Boris", "23")["rounds"]["1"][0]["opponent_id"] == "17"
    # The CSVs carry the ids: the results' at the end, the standings' before the rounds.
    header, *body = list(csv.reader(io.StringIO(results_csv(results.results()))))
    assert tuple(header) == RESULT_COLUMNS and header[-2:] == ["left_id", "right_id"]
    assert [(r[2], r[3], r[-2], r[-1]) for r in body] == [("Anna", "Boris", "17", "23"),
                                                          ("Chen", "Anna", "40", "31")]
    header, *body = list(csv.reader(io.StringIO(standings_csv(data))))
    assert header[12:] == ["player_id", "round 1"]
    assert sorted((r[1], r[12]) for r in body) == [("Anna", "17"), ("Anna", "31"),
                                                   ("Boris", "23"), ("Chen", "40")]


def test_an_id_is_the_pairings_never_another_tables(tmp_path: Path) -> None:
    """A journal of table-2 naming table-1's players is not table-1's pairing: it gets no id
    (its players stay names), and is held, not counted under table-1's players' ids."""
    results = held(tmp_path)
    push(results, "1", IDS + "table-1,Anna,Boris,5,17,23\ntable-2,Chen,Dora,5,40,41\n", 1000)
    take(results, result("table-2", "Anna", "Boris", 5, 0, round_name="1", at=2000))
    [r] = results.results()
    assert (r.left_id, r.right_id, r.counted) == ("", "", False)
    assert r.reason is not None and r.reason.code.value == "not_the_pairing"


def test_a_bye_is_a_win_with_no_points_and_no_opponent_in_the_tie_breaks(
        tmp_path: Path) -> None:
    """Three players, two rounds, one bye each round (computed by hand):
    round 1: A beats B 5-2, C has a bye; round 2: A beats C 5-3, B has a bye.
    A: 2 wins, 10-5, Buchholz B 1 + C 1 = 2, Sonneborn-Berger 2. B: the bye and a loss, 2-5,
    Buchholz A 2 (the bye adds nothing), S-B 0, difference -3. C: the bye and a loss, 3-5,
    Buchholz 2, S-B 0, difference -2: C before B, by point difference."""
    results = held(tmp_path)
    push(results, "1", IDS + "table-1,A,B,5,1,2\n,C,,,3,\n", 1000)
    push(results, "2", IDS + "table-1,A,C,5,1,3\n,B,,,2,\n", 3000)
    take(results, result("table-1", "A", "B", 5, 2, round_name="1", at=2000),
         result("table-1", "A", "C", 5, 3, round_name="2", at=4000))
    data = results.standings()
    assert [(p["rank"], p["player"], p["decided_by"]) for p in data["players"]] == [
        (1, "A", ""), (2, "C", "score"), (3, "B", "point_difference")]
    got = {p["player"]: (p["played"], p["byes"], p["wins"], p["losses"], p["score"],
                         p["points_for"], p["points_against"], p["buchholz"],
                         p["sonneborn_berger"]) for p in data["players"]}
    assert got == {"A": (2, 0, 2, 0, 2, 10, 5, 2, 2), "B": (2, 1, 1, 1, 1, 2, 5, 2, 0),
                   "C": (2, 1, 1, 1, 1, 3, 5, 2, 0)}
    assert player(data, "C", "3")["rounds"]["1"] == [
        {"opponent": "", "opponent_id": "", "result": "W", "bye": True, "for": 0,
         "against": 0, "table": "", "ended_by": "bye", "journal": ""}]
    assert player(data, "B", "2")["round_texts"] == {"1": "L 2-5 v A", "2": "W bye"}
    # The results list the bye as counted (no table, no journal), the CSV too.
    byes = [r for r in results.results() if r.bye]
    assert [(r.round, r.left, r.left_id, r.ended_by, r.counted) for r in byes] == [
        ("1", "C", "3", "bye", True), ("2", "B", "2", "bye", True)]
    rows = list(csv.reader(io.StringIO(results_csv(results.results()))))[1:]
    assert rows[1] == ["1", "", "C", "", "", "0", "0", "C", "bye", "", "3", ""]
    assert [r[0] for r in rows] == ["1", "1", "2", "2"]         # a round's byes after its tables
    # Kept across a restart, as the rows are.
    again = held(tmp_path)
    assert again.load() is None
    assert again.rounds[(EVENT, "1")].byes == (Bye("C", "3"),)
    assert again.rounds[(EVENT, "1")].rows is not None
    assert again.rounds[(EVENT, "1")].rows["table-1"].left_id == "1"


def test_a_round_pushed_again_keeps_its_byes(tmp_path: Path) -> None:
    results = held(tmp_path)
    push(results, "1", IDS + "table-1,A,B,5,,\n,C,,,,\n", 1000)
    push(results, "1", IDS + "table-2,D,E,5,,\n", 2000)
    push(results, "1", IDS + ",F,,,,\n", 3000)                   # a bye alone
    pushed = results.rounds[(EVENT, "1")]
    assert pushed.byes == (Bye("C"), Bye("F")) and pushed.tables == ("table-1", "table-2")


def test_a_rounds_file_is_read_bounded(tmp_path: Path) -> None:
    """A kept file's ids and byes are checked again: an id that is not one is dropped."""
    archive = tmp_path / "archive"
    archive.mkdir()
    (archive / ROUNDS_FILE).write_text(
        '[{"event": "Club night", "round": "1", "tables": ["table-1"], "at_ms": 5, '
        '"rows": [{"table": "table-1", "left": "A", "right": "B", "length": 5, '
        '"left_id": "=cmd", "right_id": "2"}], '
        '"byes": [{"player": "C", "player_id": "../x"}, {"player": 7}, "D"]}]',
        encoding="utf-8")
    results = Results(archive)
    assert results.load() is None
    pushed = results.rounds[(EVENT, "1")]
    assert pushed.rows is not None and pushed.rows["table-1"] == PairedMatch(
        "table-1", "A", "B", 5, "", "", "2")
    assert pushed.byes == (Bye("C"),)


# --- the rounds listed, and what a round's tables show -------------------------------------------

def test_every_round_with_rows_is_listed_in_the_order_it_began(tmp_path: Path) -> None:
    """Round 1 was played from match files (never pushed from this hall), round 2 pushed after:
    both listed, round 1 first; a round pushed then gets its place by when it was pushed."""
    results = held(tmp_path)
    take(results, result("table-1", "A", "B", 5, 2, round_name="1", at=1000))
    push(results, "2", IDS + "table-1,A,C,5,,\n", 3000)
    assert results.round_names() == ["1", "2"]
    take(results, result("table-2", "D", "E", 5, 2, round_name="0", at=500))
    assert results.round_names() == ["0", "1", "2"]
    push(results, "3", IDS + "table-1,B,C,5,,\n", 5000)
    assert results.round_names() == ["0", "1", "2", "3"]
    assert [r.round for r in results.results()] == ["0", "1"]


def card(players: tuple[str, str] | None, length: int = 5, *, phase: str = "playing",
         journal: str = "m.jsonl") -> dict[str, Any]:
    state: dict[str, Any] = {"phase": phase, "match_length": length, "journal": journal,
                             "score": {"left": 2, "right": 1}}
    if players is not None:
        state["players"] = {"left": players[0], "right": players[1]}
    else:
        state = {"phase": "idle"}
    return {"online": True, "state": state}


def test_a_table_still_on_round_1_is_waiting_in_round_2_not_playing(tmp_path: Path) -> None:
    results = held(tmp_path)
    push(results, "1", IDS + "table-1,A,B,5,,\ntable-2,C,D,5,,\ntable-5,I,J,5,,\n", 1000)
    push(results, "2", IDS + "table-1,A,C,5,,\ntable-2,B,D,5,,\ntable-3,E,F,5,,\n"
                             "table-4,G,H,5,,\ntable-5,I,J,5,,\ntable-6,K,L,5,,\n", 2000)
    take(results, result("table-5", "I", "J", 5, 2, round_name="1", at=1500))
    cards = {"table-1": card(("A", "B")),                      # round 1 still on
             "table-2": card(("B", "D")),                      # round 2's match loaded
             "table-3": card(None),                            # nothing loaded
             # (table-4: no card: nothing known of it, it may be playing)
             "table-5": card(("I", "J"), phase="match_over",   # round 1's rematch, over
                             journal="match-1-1500.jsonl"),
             "table-6": card(("X", "Y"))}                      # a match of no round
    status = {s["round"]: s for s in results.round_status(cards)}
    two = status["2"]
    assert [p["table"] for p in two["playing"]] == ["table-2", "table-4"]
    assert [(p["table"], p["after"], p["over"], p["idle"]) for p in two["waiting"]] == [
        ("table-1", "1", False, False), ("table-3", "", False, True),
        ("table-5", "1", True, False), ("table-6", "", False, False)]
    assert two["complete"] is False
    assert status["1"]["reported"] == ["table-5"]
    # Round 1: table-1 still plays it; table-2 went on to round 2 with no result of round 1.
    assert [p["table"] for p in status["1"]["playing"]] == ["table-1"]
    assert [(p["table"], p["after"]) for p in status["1"]["waiting"]] == [("table-2", "2")]

"""The event's standings (hall/standings.py), pure: small events computed by hand, each tie-break
of each format deciding a place in turn, what is not counted and why, the CSV the pairing
software takes back. Each result is judged by the one rule of what counts (counting.py) against
the rounds its own pairings pushed, verified with its table's key (`judged`)."""

from __future__ import annotations

import csv
import io
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from gammonclock.cli import hall as hall_cli
from gammonclock.cli.main import build_parser
from gammonclock.hall.counting import Pushed, assess
from gammonclock.hall.pairings import PairedMatch
from gammonclock.hall.results import Result
from gammonclock.hall.run import options_of
from gammonclock.hall.server import Hall
from gammonclock.hall.standings import (
    FORMATS,
    ROUND_ROBIN,
    SWISS,
    StandingsError,
    standings,
)
from gammonclock.hall.standings_web import (
    STANDING_COLUMNS,
    add_standings_routes,
    standings_csv,
)
from gammonclock.hall.web import make_app

_tables = iter(range(1, 1_000_000))


def m(round_name: str, left: str, right: str, score: str, *, ended_by: str = "score",
      verdict: str = "intact", table: str | None = None, at: int = 0, error: str = "",
      event: str = "") -> Result:
    """A result as the hall collects it: `m("1", "Anna", "Boris", "5-3")`, the higher score
    winning (equal: a match tied at its length, no winner)."""
    a, b = (int(x) for x in score.split("-"))
    winner = "left" if a > b else "right" if b > a else ""
    if ended_by == "abandoned":
        winner = ""
    table = table or f"table-{next(_tables)}"
    return Result(table, f"{table}/match-{round_name}-{at}.jsonl", verdict, verdict,
                  round=round_name, left=left, right=right, length=max(a, b), left_score=a,
                  right_score=b, winner=winner, ended_by=ended_by, ended_wall_ms=at,
                  error=error, event=event)


def judged(results: list[Result], pairings: list[Result] | None = None) -> list[Result]:
    """RESULTS judged as the hall judges them (counting.assess), each round pushed with the
    pairings of PAIRINGS (default: of the results themselves), the tables' keys held."""
    rounds: dict[tuple[str, str], Pushed] = {}
    for r in pairings if pairings is not None else results:
        if not r.round:
            continue
        before = rounds.get((r.event, r.round))
        rows = {**(before.rows or {} if before else {}),
                r.table: PairedMatch(r.table, r.left, r.right, r.length)}
        rounds[(r.event, r.round)] = Pushed(r.event, r.round, tuple(rows), 0, rows)
    return assess(results, rounds, [], Path("keys"))


def places(data: dict[str, Any]) -> list[tuple[int, str, str]]:
    """(place, player, the tie-break that set it apart from the player above)."""
    return [(p["rank"], p["player"], p["decided_by"]) for p in data["players"]]


def row(data: dict[str, Any], name: str) -> dict[str, Any]:
    [found] = [p for p in data["players"] if p["player"] == name]
    return found


# --- Swiss ------------------------------------------------------------------------------------

SWISS_EVENT = [           # 4 players, 3 rounds, matches to 5
    m("1", "A", "B", "5-3"), m("1", "C", "D", "5-1"),
    m("2", "A", "C", "5-4"), m("2", "B", "D", "5-2"),
    m("3", "D", "A", "5-0"), m("3", "B", "C", "5-2"),
]


def test_a_four_player_swiss_of_three_rounds_computed_by_hand() -> None:
    """A: beat B 5-3 and C 5-4, lost to D 0-5: 2 wins, 10 for, 12 against; Buchholz B 2 + C 1
    + D 1 = 4; Sonneborn-Berger B 2 + C 1 = 3. B: 2 wins, 13-9; Buchholz 4, SB D 1 + C 1 = 2.
    C: 1 win, 11-11, Buchholz 5, SB 1. D: 1 win, 8-10, Buchholz 5, SB A 2 = 2. A and B tie on
    wins and Buchholz: SB puts A first; C and D too: SB puts D above C."""
    data = standings(judged(SWISS_EVENT), SWISS)
    assert data["format"] == "swiss"
    assert data["tie_breaks"] == ["score", "buchholz", "sonneborn_berger", "point_difference",
                                  "head_to_head"]
    assert places(data) == [(1, "A", ""), (2, "B", "sonneborn_berger"), (3, "D", "score"),
                            (4, "C", "sonneborn_berger")]
    got = {p["player"]: (p["played"], p["wins"], p["losses"], p["points_for"],
                         p["points_against"], p["point_difference"], p["buchholz"],
                         p["sonneborn_berger"]) for p in data["players"]}
    assert got == {"A": (3, 2, 1, 10, 12, -2, 4, 3), "B": (3, 2, 1, 13, 9, 4, 4, 2),
                   "C": (3, 1, 2, 11, 11, 0, 5, 1), "D": (3, 1, 2, 8, 10, -2, 5, 2)}
    assert data["rounds"] == ["1", "2", "3"]
    a = row(data, "A")["rounds"]
    assert [(r, a[r][0]["opponent"], a[r][0]["result"], a[r][0]["for"], a[r][0]["against"])
            for r in a] == [("1", "B", "W", 5, 3), ("2", "C", "W", 5, 4), ("3", "D", "L", 0, 5)]
    assert row(data, "D")["round_texts"] == {"1": "L 1-5 v C", "2": "L 2-5 v B",
                                             "3": "W 5-0 v A"}


@pytest.mark.parametrize("name, results, expected", [
    # B met A (2) and C (1): Buchholz 3; C met D (0) and B: 1.
    ("buchholz", [m("1", "A", "B", "5-3"), m("1", "C", "D", "5-3"),
                  m("2", "A", "D", "5-3"), m("2", "B", "C", "5-3")],
     [(1, "A", ""), (2, "B", "score"), (3, "C", "buchholz"), (4, "D", "score")]),
    # B and C: 1 win, Buchholz A 2 + D 0 = 2 each, SB D 0 each; B 0-5, 5-0: 0; C 5-3, 1-5: -2.
    ("point difference", [m("1", "A", "B", "5-0"), m("1", "C", "D", "5-3"),
                          m("2", "A", "C", "5-1"), m("2", "B", "D", "5-0")],
     [(1, "A", ""), (2, "B", "score"), (3, "C", "point_difference"), (4, "D", "score")]),
    # Six players (3-1 each): E, B, A, C on one win, -2 each. Buchholz E 5, B 5, A 4, C 4; SB 1
    # each. E beat B, A beat C: head-to-head orders each pair.
    ("head-to-head", [m("1", "F", "D", "1-3"), m("1", "E", "B", "3-1"), m("1", "C", "A", "1-3"),
                      m("2", "C", "E", "3-1"), m("2", "B", "D", "1-3"), m("2", "F", "A", "3-1"),
                      m("3", "A", "B", "1-3"), m("3", "E", "D", "1-3"), m("3", "F", "C", "3-1")],
     [(1, "D", ""), (2, "F", "score"), (3, "E", "score"), (4, "B", "head_to_head"),
      (5, "A", "buchholz"), (6, "C", "head_to_head")]),
    # A and C never met and are equal in all: they share first place; B and D the third.
    ("shared", [m("1", "A", "B", "5-3"), m("1", "C", "D", "5-3")],
     [(1, "A", ""), (1, "C", ""), (3, "B", "score"), (3, "D", "")]),
])
def test_each_swiss_tie_break_decides_in_turn(name: str, results: list[Result],
                                              expected: list[tuple[int, str, str]]) -> None:
    data = standings(judged(results), SWISS)
    assert places(data) == expected, name
    shared = [p["player"] for p in data["players"] if p["shared"]]
    assert shared == (["A", "C", "B", "D"] if name == "shared" else [])


# --- round robin -------------------------------------------------------------------------------

def test_a_four_player_round_robin_computed_by_hand() -> None:
    """A beat B, B beat C, C beat A (a circle: head-to-head 1 each), each beat D. Point
    difference: C 5-0, 5-4, 4-5 = +5; A 5-3, 4-5, 5-2 = +4; B 3-5, 5-1, 5-4 = +3."""
    data = standings(judged([m("1", "A", "B", "5-3"), m("1", "C", "D", "5-0"),
                             m("2", "A", "C", "4-5"), m("2", "B", "D", "5-1"),
                             m("3", "A", "D", "5-2"), m("3", "B", "C", "5-4")]), ROUND_ROBIN)
    assert data["tie_breaks"] == ["score", "head_to_head", "point_difference", "points_for"]
    assert places(data) == [(1, "C", ""), (2, "A", "point_difference"),
                            (3, "B", "point_difference"), (4, "D", "score")]
    got = {p["player"]: (p["wins"], p["losses"], p["points_for"], p["points_against"])
           for p in data["players"]}
    assert got == {"C": (2, 1, 14, 9), "A": (2, 1, 14, 10), "B": (2, 1, 13, 10),
                   "D": (0, 3, 3, 15)}


@pytest.mark.parametrize("name, results, expected", [
    # B and C: 2 wins, B beat C (though C's point difference, +5, is better than B's, -1);
    # A and D: 1 win, A beat D (D's -1 better than A's -3).
    ("head-to-head before points", [m("1", "A", "B", "2-3"), m("1", "C", "D", "3-0"),
                                    m("2", "A", "C", "0-3"), m("2", "B", "D", "0-3"),
                                    m("3", "A", "D", "3-2"), m("3", "B", "C", "3-2")],
     [(1, "B", ""), (2, "C", "head_to_head"), (3, "A", "score"), (4, "D", "head_to_head")]),
    # A, B, C in a circle, each +5; points for: C 15 (7-2 over D), A and B 13: then A beat B
    # (head-to-head again, between the two left tied).
    ("points for, then head-to-head again", [
        m("1", "A", "B", "5-3"), m("1", "C", "D", "7-2"), m("2", "B", "C", "5-3"),
        m("2", "A", "D", "5-0"), m("3", "C", "A", "5-3"), m("3", "B", "D", "5-0")],
     [(1, "C", ""), (2, "A", "points_for"), (3, "B", "head_to_head"), (4, "D", "score")]),
    # Three in a circle, all equal: one place, shared.
    ("shared", [m("1", "A", "B", "5-3"), m("2", "B", "C", "5-3"), m("3", "C", "A", "5-3")],
     [(1, "A", ""), (1, "B", ""), (1, "C", "")]),
])
def test_each_round_robin_tie_break_decides_in_turn(
        name: str, results: list[Result], expected: list[tuple[int, str, str]]) -> None:
    assert places(standings(judged(results), ROUND_ROBIN)) == expected, name


# --- what counts -------------------------------------------------------------------------------

def test_what_is_not_counted_is_listed_with_why() -> None:
    """The standings count exactly what `counted` says; every other finished result is listed
    with its code, fields and words: held (the director may accept it) or never counted. Two
    matches of one table and round are two matches: neither replaces the other (both held)."""
    first = m("1", "Anna", "Boris", "2-5", table="table-1", at=5)
    again = m("1", "Anna", "Boris", "5-3", table="table-1", at=10)
    counted = m("1", "Eve", "Fay", "5-3", table="table-10", at=10)
    results = [
        first, again, counted,
        m("1", "Clara", "Dmitri", "5-0", table="table-2", verdict="TAMPERED"),
        m("1", "Clara", "Dmitri", "2-1", table="table-3", ended_by="abandoned"),
        m("", "Anna", "Zoe", "5-0", table="table-4"),                      # of no round
        m("2", "Anna", "Anna", "5-0", table="table-5"),
        m("2", "Boris", "Clara", "1-0", table="table-6", ended_by="unfinished"),   # playing
        m("2", "Boris", "Eve", "0-0", table="table-7", error="not a journal", verdict="intact"),
        m("2", "Boris", "Dmitri", "5-5", table="table-8"),                 # tied at the length
        m("2", "Clara", "Fay", "5-0", table="table-9", ended_by="flag"),
        m("2", "Gus", "Hal", "5-0", table="table-11", verdict="seal not checked"),
    ]
    assessed = judged(results, [first, counted, *results[3:]])
    data = standings(assessed, SWISS, rounds=["2", "1"])
    assert [(e["table"], e["code"], e["held"]) for e in data["excluded"]] == [
        ("table-1", "pairing_taken", True), ("table-1", "pairing_taken", True),
        ("table-2", "tampered", False), ("table-3", "abandoned", False),
        ("table-4", "no_round", True), ("table-5", "same_player", False),
        ("table-7", "unreadable", False), ("table-11", "no_key", True)]
    assert [e["why"] for e in data["excluded"]][2:] == [
        "TAMPERED", "abandoned", "the match file names no round", "one player on both sides",
        "not a journal", "no key for table-11 (keys/table-11.key): the journal's seals cannot "
                         "be checked"]
    assert data["excluded"][0]["fields"] == {"other": again.journal, "others": 1}
    # /api/results.json's `counted` is the same rule
    assert {r.journal for r in assessed if r.counted} == {
        counted.journal, *(r.journal for r in results if r.table in ("table-8", "table-9"))}
    assert data["rounds"] == ["2", "1"]                       # the pushed order
    eve, boris = row(data, "Eve"), row(data, "Boris")
    assert (eve["played"], eve["wins"], eve["points_for"]) == (1, 1, 5)
    assert eve["rounds"]["1"][0]["journal"] == counted.journal
    assert (boris["played"], boris["wins"], boris["draws"], boris["losses"], boris["score"]) \
        == (1, 0, 1, 0, 0.5)
    assert boris["round_texts"] == {"2": "D 5-5 v Dmitri"}
    assert row(data, "Clara")["rounds"]["2"][0]["ended_by"] == "flag"
    assert not {"Zoe", "Anna", "Gus"} & {p["player"] for p in data["players"]}
    assert standings([], ROUND_ROBIN)["players"] == []
    with pytest.raises(StandingsError, match="format 'knockout' is not one of swiss, "
                                             "round-robin"):
        standings([], "knockout")


def test_one_events_standings_of_an_archive_that_holds_two() -> None:
    results = [m("1", "Anna", "Boris", "5-3", event="Spring", table="table-1", at=1),
               m("1", "Clara", "Anna", "5-0", event="Autumn", table="table-1", at=2),
               m("1", "Dora", "Eve", "5-1", event="Autumn", table="table-2", ended_by="abandoned")]
    results = judged(results)
    every = standings(results, SWISS)
    assert (every["event"], every["events"]) == (None, ["Autumn", "Spring"])
    # (both round 1 at table-1, but of two events: both count)
    assert [e["code"] for e in every["excluded"]] == ["abandoned"]
    assert row(every, "Anna")["played"] == 2
    spring = standings(results, SWISS, event="Spring")
    assert [(p["player"], p["wins"]) for p in spring["players"]] == [("Anna", 1), ("Boris", 0)]
    assert spring["excluded"] == [] and spring["events"] == ["Autumn", "Spring"]
    autumn = standings(results, SWISS, event="Autumn")
    assert [(p["player"], p["wins"]) for p in autumn["players"]] == [("Clara", 1), ("Anna", 0)]
    assert [e["table"] for e in autumn["excluded"]] == ["table-2"]
    assert standings(results, SWISS, event="Winter")["players"] == []


def test_the_csv_has_a_stable_header_and_one_column_per_round() -> None:
    text = standings_csv(standings(judged([*SWISS_EVENT, m("3", "=cmd", "Eve", "5-1")]), SWISS))
    header, *body = list(csv.reader(io.StringIO(text)))
    assert tuple(header[:len(STANDING_COLUMNS)]) == STANDING_COLUMNS
    assert header[len(STANDING_COLUMNS):] == ["round 1", "round 2", "round 3"]
    assert body[0] == ["1", "A", "3", "2", "0", "1", "2", "10", "12", "-2", "4", "3", "",
                       "W 5-3 v B", "W 5-4 v C", "L 0-5 v D"]
    [cmd] = [r for r in body if r[1] == "'=cmd"]                     # a formula quoted
    assert cmd[-1] == "W 5-1 v Eve" and cmd[9] == "4"
    assert text.endswith("\r\n") and not text.startswith("\ufeff")


def test_the_events_format_on_the_command_line(tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    """`gammonclock hall --format round-robin`: the page's standings' default (swiss without
    it); any other format is refused before the hall starts, naming the choices."""
    secret = tmp_path / "hall.password"
    secret.write_text("s3cret\n", encoding="utf-8")
    parser = build_parser()
    common = ["hall", "--broker", "mqtt://127.0.0.1:1883", "--password-file", str(secret)]
    assert options_of(parser.parse_args(common + ["--format", "round-robin"]))[1] \
        .standings_format == "round-robin"
    assert options_of(parser.parse_args(common))[1].standings_format == "swiss"
    with pytest.raises(SystemExit):
        parser.parse_args(common + ["--format", "knockout"])
    said = capsys.readouterr().err
    assert "--format: invalid choice: 'knockout'" in said and "round-robin" in said
    assert hall_cli.FORMATS == FORMATS
    with pytest.raises(ValueError, match="'knockout' is not one of swiss, round-robin"):
        add_standings_routes(web.Application(), "knockout")
    # The page's standings and /api/results.json's both rank by the event's format.
    options, page = options_of(parser.parse_args(common + ["--format", "round-robin",
                                                           "--archive", str(tmp_path)]))
    hall = Hall(options)
    make_app(hall, standings_format=page.standings_format)
    assert hall.results.standings()["tie_breaks"] == ["score", "head_to_head",
                                                      "point_difference", "points_for"]

"""The one rule of what counts (hall/counting.py, SPEC §14.1), pure and table-driven: a finished
match's result counts only from a journal verified with its table's own key that is the pairing
pushed to that table (or the match the director moved onto it), the only finished journal of its
match and the only match of its pairing; everything else that finished is held with its reason
until the director accepts that very file; TAMPERED, unreadable and abandoned never count. Also
the rounds file an older hall wrote (no rows) and the pairings a round's push keeps."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from gammonclock.hall.counting import (
    Link,
    Pushed,
    Standing,
    Why,
    assess,
    conflict,
    links_of,
)
from gammonclock.hall.decisions import Decision, HallDecisions
from gammonclock.hall.pairings import PairedMatch, parse_pairings
from gammonclock.hall.results import ROUNDS_FILE, Result, Results

KEYS = Path("keys")
EVENT = "Moscow Open"
ROUND_1 = {"table-1": PairedMatch("table-1", "Anna", "Boris", 5),
           "table-2": PairedMatch("table-2", "Chen", "Dora", 5, "longgammon"),
           "table-3": PairedMatch("table-3", "Eve", "Fay", 3)}
ROUNDS = {(EVENT, "1"): Pushed(EVENT, "1", tuple(ROUND_1), 0, ROUND_1)}


def r(table: str, left: str, right: str, length: int = 5, *, name: str = "m.jsonl",
      verdict: str = "intact", ended_by: str = "score", round_name: str = "1",
      event: str = EVENT, discipline: str = "backgammon", links: tuple[Link, ...] = (),
      error: str = "", sha: str = "a" * 64) -> Result:
    """A finished result as results.collect reads it (left wins 5-1)."""
    return Result(table, f"{table}/{name}", verdict, verdict, event=event, round=round_name,
                  left=left, right=right, length=length, left_score=length, right_score=1,
                  winner="left" if ended_by != "abandoned" else "", ended_by=ended_by,
                  discipline=discipline, links=links, error=error, sha256=sha)


def moved(source: str, to: str, journal: str, seq: int = 40) -> Decision:
    return Decision("moved", "td", 1, {"source": source, "to": to, "journal": journal,
                                       "seq": seq})


def accepted(journal: str, sha: str = "a" * 64) -> Decision:
    return Decision("accepted", "td", 2, {"journal": journal, "sha256": sha})


HANDOVER = (Link("t2.jsonl", "table-2", True, 40),)

# (name, results, decisions, keys, each result's (standing, why code or None))
CASES: list[tuple[str, list[Result], list[Decision], Path | None,
                  list[tuple[Standing, str | None]]]] = [
    ("the pairing's, verified", [r("table-1", "Anna", "Boris")], [], KEYS,
     [(Standing.COUNTED, None)]),
    ("no --keys-dir", [r("table-1", "Anna", "Boris", verdict="seal not checked")], [], None,
     [(Standing.HELD, "no_keys_dir")]),
    ("no key for the table", [r("table-1", "Anna", "Boris", verdict="seal not checked")], [],
     KEYS, [(Standing.HELD, "no_key")]),
    ("another table's pairing", [r("table-1", "Chen", "Dora")], [], KEYS,
     [(Standing.HELD, "not_the_pairing")]),
    ("sides swapped", [r("table-1", "Boris", "Anna")], [], KEYS,
     [(Standing.HELD, "not_the_pairing")]),
    ("another length", [r("table-1", "Anna", "Boris", 7)], [], KEYS,
     [(Standing.HELD, "not_the_pairing")]),
    ("another discipline than the row's", [r("table-2", "Chen", "Dora")], [], KEYS,
     [(Standing.HELD, "not_the_pairing")]),
    ("the row's discipline", [r("table-2", "Chen", "Dora", discipline="longgammon")], [], KEYS,
     [(Standing.COUNTED, None)]),
    ("a table the round pushed nothing to", [r("table-9", "Anna", "Boris")], [], KEYS,
     [(Standing.HELD, "no_pairing")]),
    ("a round not pushed", [r("table-1", "Anna", "Boris", round_name="2")], [], KEYS,
     [(Standing.HELD, "round_not_pushed")]),
    ("another event's round", [r("table-1", "Anna", "Boris", event="Club night")], [], KEYS,
     [(Standing.HELD, "round_not_pushed")]),
    ("no round", [r("table-1", "Anna", "Boris", round_name="")], [], KEYS,
     [(Standing.HELD, "no_round")]),
    ("TAMPERED", [r("table-1", "Anna", "Boris", verdict="TAMPERED")], [], KEYS,
     [(Standing.NOT_COUNTED, "tampered")]),
    ("TAMPERED and accepted: still not", [r("table-1", "Anna", "Boris", verdict="TAMPERED")],
     [accepted("table-1/m.jsonl")], KEYS, [(Standing.NOT_COUNTED, "tampered")]),
    ("unreadable", [r("table-1", "Anna", "Boris", error="no header")], [], KEYS,
     [(Standing.NOT_COUNTED, "unreadable")]),
    ("abandoned", [r("table-1", "Anna", "Boris", ended_by="abandoned")], [], KEYS,
     [(Standing.NOT_COUNTED, "abandoned")]),
    ("one player on both sides", [r("table-1", "Anna", "Anna")], [], KEYS,
     [(Standing.NOT_COUNTED, "same_player")]),
    ("not finished", [r("table-1", "Anna", "Boris", ended_by="unfinished")], [], KEYS,
     [(Standing.PLAYING, None)]),
    ("ended as moved: not a result", [r("table-2", "Chen", "Dora", ended_by="moved")], [], KEYS,
     [(Standing.MOVED, None)]),
    ("held, accepted (this very file)", [r("table-1", "Chen", "Dora")],
     [accepted("table-1/m.jsonl")], KEYS, [(Standing.ACCEPTED, "not_the_pairing")]),
    ("accepted another file under the name", [r("table-1", "Chen", "Dora")],
     [accepted("table-1/m.jsonl", "b" * 64)], KEYS, [(Standing.HELD, "not_the_pairing")]),
    # A spare (table-3) with its own round-1 match, and table-2's match moved onto it.
    ("the moved match beside the spare's own",
     [r("table-3", "Eve", "Fay", 3, name="own.jsonl"),
      r("table-3", "Chen", "Dora", name="cont.jsonl", discipline="longgammon", links=HANDOVER)],
     [moved("table-2", "table-3", "t2.jsonl")], KEYS,
     [(Standing.COUNTED, None), (Standing.COUNTED, None)]),
    ("a hand-over the director did not make",
     [r("table-3", "Chen", "Dora", discipline="longgammon", links=HANDOVER)], [], KEYS,
     [(Standing.HELD, "not_moved")]),
    ("a move of another record",
     [r("table-3", "Chen", "Dora", discipline="longgammon", links=HANDOVER)],
     [moved("table-2", "table-3", "t2.jsonl", seq=39)], KEYS, [(Standing.HELD, "not_moved")]),
    ("a move to another spare",
     [r("table-3", "Chen", "Dora", discipline="longgammon", links=HANDOVER)],
     [moved("table-2", "table-4", "t2.jsonl")], KEYS, [(Standing.HELD, "not_moved")]),
    ("moved twice: table-2 to table-4 to table-3",
     [r("table-3", "Chen", "Dora", discipline="longgammon", links=(
         Link("t4.jsonl", "table-4", True, 60), Link("t2.jsonl", "table-2", True, 40)))],
     [moved("table-2", "table-4", "t2.jsonl"), moved("table-4", "table-3", "t4.jsonl", 60)],
     KEYS, [(Standing.COUNTED, None)]),
    ("two clocks played one match: a fork",
     [r("table-2", "Chen", "Dora", name="t2.jsonl", discipline="longgammon"),
      r("table-3", "Chen", "Dora", name="cont.jsonl", discipline="longgammon", links=HANDOVER)],
     [moved("table-2", "table-3", "t2.jsonl")], KEYS,
     [(Standing.HELD, "fork"), (Standing.HELD, "fork")]),
    ("a fork, one accepted",
     [r("table-2", "Chen", "Dora", name="t2.jsonl", discipline="longgammon"),
      r("table-3", "Chen", "Dora", name="cont.jsonl", discipline="longgammon", links=HANDOVER)],
     [moved("table-2", "table-3", "t2.jsonl"), accepted("table-3/cont.jsonl")], KEYS,
     [(Standing.HELD, "fork"), (Standing.ACCEPTED, None)]),
    ("two matches of one pairing",
     [r("table-1", "Anna", "Boris", name="a.jsonl"), r("table-1", "Anna", "Boris",
                                                       name="b.jsonl")], [], KEYS,
     [(Standing.HELD, "pairing_taken"), (Standing.HELD, "pairing_taken")]),
    # Another table's header cannot make its journal part of table-2's match (no decision):
    # table-2's own result still counts.
    ("a header claiming another table's match",
     [r("table-2", "Chen", "Dora", name="t2.jsonl", discipline="longgammon"),
      r("table-1", "Chen", "Dora", name="x.jsonl", discipline="longgammon", links=HANDOVER)],
     [], KEYS, [(Standing.COUNTED, None), (Standing.HELD, "not_moved")]),
    ("a clock's own continuation of a damaged journal",
     [r("table-1", "Anna", "Boris", name="b.jsonl",
        links=(Link("a.jsonl", "", False, None),))], [], KEYS, [(Standing.COUNTED, None)]),
]


def case(name: str) -> tuple[list[Result], list[Decision]]:
    [found] = [c for c in CASES if c[0] == name]
    return found[1], found[2]


@pytest.mark.parametrize("name, results, decisions, keys, expected", CASES,
                         ids=[c[0] for c in CASES])
def test_what_counts(name: str, results: list[Result], decisions: list[Decision],
                     keys: Path | None, expected: list[tuple[Standing, str | None]]) -> None:
    judged = assess(results, ROUNDS, decisions, keys)
    got = [(j.standing, j.reason.why.value if j.reason else None) for j in judged]
    assert got == expected, name
    for j in judged:                          # `counted` is the one rule, in the JSON too
        assert j.as_json()["counted"] is j.counted is (j.standing in (Standing.COUNTED,
                                                                      Standing.ACCEPTED))
        assert (j.as_json()["held"] is not None) is (j.standing is Standing.HELD or (
            j.standing is Standing.ACCEPTED and j.reason is not None))


def test_a_held_result_says_why_in_fields_and_words() -> None:
    [held] = assess([r("table-1", "Chen", "Dora")], ROUNDS, [], KEYS)
    assert held.as_json()["held"] == {"code": "not_the_pairing", "table": "table-1",
                                      "left": "Anna", "right": "Boris", "length": 5,
                                      "discipline": "", "round": "1"}
    assert held.as_json()["why_text"] == "not the pairing pushed to table-1: Anna v Boris to 5"
    [fork, _] = assess([r("table-1", "Anna", "Boris", name="a.jsonl"),
                        r("table-1", "Anna", "Boris", name="b.jsonl")], ROUNDS, [], KEYS)
    assert fork.as_json()["held"] == {"code": "pairing_taken", "other": "table-1/b.jsonl",
                                      "others": 1}


def test_the_moved_match_is_keyed_by_its_chain_and_its_first_tables_pairing() -> None:
    results, decisions = case("the moved match beside the spare's own")
    [own, cont] = assess(results, ROUNDS, decisions, KEYS)
    assert (own.chain, own.origin) == ("table-3/own.jsonl", "table-3")
    assert (cont.chain, cont.origin) == ("table-2/t2.jsonl", "table-2")


def test_accepting_is_refused_where_it_would_count_a_match_twice() -> None:
    """A fork accepted once: the other journal of that match conflicts; so does a held result
    of a pairing another match counts for."""
    results, decisions = case("a fork, one accepted")
    held, counted = assess(results, ROUNDS, decisions, KEYS)
    assert conflict(held, [held, counted]) is counted
    no_key = r("table-1", "Anna", "Boris", name="b.jsonl", verdict="seal not checked")
    judged = assess([r("table-1", "Anna", "Boris", name="a.jsonl", verdict="intact"),
                     no_key], ROUNDS, [], KEYS)
    assert [j.standing for j in judged] == [Standing.COUNTED, Standing.HELD]
    assert conflict(judged[1], judged) is judged[0]
    other = assess([r("table-1", "Chen", "Dora")], ROUNDS, [], KEYS)
    assert conflict(other[0], [*judged, *other]) is None     # not that pairing's


@pytest.mark.parametrize("header, links", [
    ({}, ()),
    ({"continues": {"file": "a.jsonl", "records": 3, "last_mac": "x"}},
     (Link("a.jsonl", "", False, None),)),
    ({"continues": {"file": "b.jsonl", "table": "table-4", "handover": True, "seq": 9,
                    "before": {"file": "a.jsonl", "table": "table-2", "handover": True,
                               "seq": 4}}},
     (Link("b.jsonl", "table-4", True, 9), Link("a.jsonl", "table-2", True, 4))),
    ({"continues": {"file": 5}}, ()),
    ({"continues": {"file": "a.jsonl", "table": ["x"], "handover": True, "seq": "9"}},
     (Link("a.jsonl", "", True, None),)),
])
def test_a_headers_continues_read_bounded(header: dict[str, Any],
                                          links: tuple[Link, ...]) -> None:
    assert links_of(header) == links
    deep: dict[str, Any] = {"file": "z.jsonl"}
    for _ in range(50):
        deep = {"file": "z.jsonl", "before": deep}
    assert len(links_of({"continues": deep})) == 8


def test_a_push_keeps_each_rows_pairing_and_a_second_push_adds_tables(tmp_path: Path) -> None:
    held = Results(tmp_path)
    rows = parse_pairings("table,left,right,length,discipline\ntable-1,Anna,Boris,5\n"
                          "table-2, Chen ,Dora,5,longgammon\n")
    held.pushed(EVENT, "1", (p.match for p in rows if p.match), 1)
    held.pushed(EVENT, "1", [PairedMatch("table-3", "Eve", "Fay", 3)], 2)
    pushed = held.rounds[(EVENT, "1")]
    assert pushed.tables == ("table-1", "table-2", "table-3")
    assert pushed.rows is not None and pushed.rows["table-2"] == PairedMatch(
        "table-2", "Chen", "Dora", 5, "longgammon")
    again = Results(tmp_path)
    assert again.load() is None and again.rounds == held.rounds


def test_an_older_halls_rounds_file_loads_and_its_results_are_held(tmp_path: Path) -> None:
    (tmp_path / ROUNDS_FILE).write_text(json.dumps([
        {"event": EVENT, "round": "1", "tables": ["table-1", "table-2"], "at_ms": 5}]))
    held = Results(tmp_path, HallDecisions(None), KEYS)
    assert held.load() is None
    held.take("p", replace(r("table-1", "Anna", "Boris")))
    [result] = held.results()
    assert (result.standing, result.reason and result.reason.why) == (Standing.HELD,
                                                                      Why.PAIRING_NOT_KEPT)
    status = held.round_status({})
    assert status[0]["reported"] == ["table-1"] and status[0]["complete"] is False

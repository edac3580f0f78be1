"""The hall's own journal of the director's decisions (hall/decisions.py): kept before it counts,
read back after a restart, an edit by hand or a torn last line seen for what it is."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gammonclock.hall.decisions import DECISIONS_FILE, DecisionError, HallDecisions


def test_a_decision_is_on_disk_and_read_back_by_the_next_hall(tmp_path: Path) -> None:
    first = HallDecisions.in_archive(tmp_path)
    accepted = first.record("accepted", "director", journal="table-1/match-1.jsonl", seq=88)
    moved = first.record("moved", "  page  user ", source="table-2", to="table-9",
                         journal="match-2.jsonl")
    assert moved.by == "page user"
    again = HallDecisions.in_archive(tmp_path)
    assert again.load() is None
    assert again.decisions == [accepted, moved]
    assert [d.get("to") for d in again.of_kind("moved")] == ["table-9"]
    # and it goes on from where the file ends
    third = again.record("accepted", "director", journal="table-3/match-3.jsonl")
    last = HallDecisions.in_archive(tmp_path)
    assert last.load() is None and last.decisions[-1] == third


def test_a_line_edited_by_hand_stops_the_reading_there_and_says_which(tmp_path: Path) -> None:
    hall = HallDecisions.in_archive(tmp_path)
    hall.record("accepted", "director", journal="table-1/a.jsonl")
    hall.record("accepted", "director", journal="table-1/b.jsonl")
    hall.record("accepted", "director", journal="table-1/c.jsonl")
    path = tmp_path / DECISIONS_FILE
    lines = path.read_bytes().splitlines(keepends=True)
    edited = json.loads(lines[1])
    edited["journal"] = "table-1/forged.jsonl"
    lines[1] = json.dumps(edited).encode() + b"\n"
    path.write_bytes(b"".join(lines))
    again = HallDecisions.in_archive(tmp_path)
    problem = again.load()
    assert problem is not None and "line 3 does not follow" in problem   # line 2's digest changed
    assert [d.get("journal") for d in again.decisions] == ["table-1/a.jsonl",
                                                           "table-1/forged.jsonl"]
    assert again.problem == problem


def test_a_line_removed_is_seen(tmp_path: Path) -> None:
    hall = HallDecisions.in_archive(tmp_path)
    for name in "abc":
        hall.record("accepted", "director", journal=f"table-1/{name}.jsonl")
    path = tmp_path / DECISIONS_FILE
    lines = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(lines[0] + lines[2])
    again = HallDecisions.in_archive(tmp_path)
    assert "line 2 does not follow" in (again.load() or "")
    assert len(again.decisions) == 1


def test_a_torn_last_line_was_never_recorded(tmp_path: Path) -> None:
    hall = HallDecisions.in_archive(tmp_path)
    hall.record("accepted", "director", journal="table-1/a.jsonl")
    with (tmp_path / DECISIONS_FILE).open("ab") as f:
        f.write(b'{"kind":"accepted","by":"dir')
    again = HallDecisions.in_archive(tmp_path)
    assert again.load() is None
    assert [d.get("journal") for d in again.decisions] == ["table-1/a.jsonl"]
    # The next decision reads back after another restart (it is not glued to the torn bytes).
    again.record("moved", "director", source="table-1", to="table-2")
    third = HallDecisions.in_archive(tmp_path)
    assert third.load() is None
    assert [d.kind for d in third.decisions] == ["accepted", "moved"]


def test_nothing_is_recorded_after_a_line_that_does_not_read_back(tmp_path: Path) -> None:
    hall = HallDecisions.in_archive(tmp_path)
    hall.record("accepted", "director", journal="table-1/a.jsonl")
    with (tmp_path / DECISIONS_FILE).open("ab") as f:
        f.write(b"edited by hand\n")
    before = (tmp_path / DECISIONS_FILE).read_bytes()
    again = HallDecisions.in_archive(tmp_path)
    assert "line 2 is not JSON" in (again.load() or "")
    with pytest.raises(DecisionError, match="set the file right"):
        again.record("accepted", "director", journal="table-1/b.jsonl")
    assert (tmp_path / DECISIONS_FILE).read_bytes() == before


@pytest.mark.parametrize(("kind", "fields"), [
    ("counted", {"journal": "x"}),             # not a kind of decision
    ("accepted", {"prev": "x"}),               # a field that would hide the chain
    ("accepted", {"journal": ["a", "b"]}),     # not text or an integer
    ("accepted", {"journal": "x" * 200, "why": "y" * 300, "more": "z" * 300,
                  **{f"f{i}": "w" * 300 for i in range(20)}}),   # longer than a line
])
def test_a_decision_out_of_bounds_is_refused_and_nothing_is_kept(
        tmp_path: Path, kind: str, fields: dict[str, object]) -> None:
    hall = HallDecisions.in_archive(tmp_path)
    with pytest.raises(DecisionError):
        hall.record(kind, "director", **fields)
    assert hall.decisions == []
    assert not (tmp_path / DECISIONS_FILE).exists()


def test_a_hall_without_an_archive_keeps_them_in_memory() -> None:
    hall = HallDecisions.in_archive(None)
    assert hall.load() is None
    hall.record("moved", "director", source="table-1", to="table-2")
    assert len(hall.decisions) == 1

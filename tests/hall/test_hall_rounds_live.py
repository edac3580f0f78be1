"""Two rounds pushed and played against the real Mosquitto, the real hall and a real clock on mock
pins (issue 32): round 2 pushed while round 1 is still playing at the table, so the table waits
for round 2 (never "still playing" it) until its round-1 match is over and round 2 loads by
itself; each round's results by round in `/api/results.json`, both rounds' rows in
`/api/results.csv` with the pairings' player ids, and a bye each round (no table, no journal)
counted in the standings as a match won with no points."""

from __future__ import annotations

import csv
import io
import shutil
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from gammonclock.journal.key import SECRET_FILE
from gammonclock.link import publisher as link_publisher
from hall_web_helpers import RunningHall
from mqtt_helpers import Broker
from table_helpers import (
    MATCH,
    Table,
    all_acknowledged,
    device_text,
    end_the_match,
    play,
    right_player,
    wait,
)

T1 = "table-1"
EVENT = "Club night"
HEADER = "table,left,right,length,left_id,right_id\n"
ROUND_1 = HEADER + f"{T1},Anna,Boris,5,17,23\n,Clara,,,31,\n"
ROUND_2 = HEADER + f"{T1},Clara,Boris,5,31,23\n,Anna,,,17,\n"


@pytest.fixture(autouse=True)
def quick_resend(monkeypatch: pytest.MonkeyPatch) -> None:
    """The table's wait for the hall's ack, shortened (5 s doubling to 60 s in play)."""
    monkeypatch.setattr(link_publisher, "RESEND_MIN_S", 0.5)
    monkeypatch.setattr(link_publisher, "RESEND_MAX_S", 2.0)


def push(hall: RunningHall, round_name: str, csv_text: str) -> dict[str, Any]:
    answer = hall.post("/api/round", {"csv": csv_text, "event": EVENT, "round": round_name})
    assert answer["errors"] == 0, answer
    return answer


def results_csv(hall: RunningHall) -> list[list[str]]:
    with urllib.request.urlopen(hall.base + "/api/results.csv", timeout=20) as response:
        return list(csv.reader(io.StringIO(response.read().decode("utf-8"))))


def round_of(hall: RunningHall, name: str) -> dict[str, Any]:
    [found] = [r for r in hall.get("/api/results.json")["rounds"] if r["round"] == name]
    return found


def collected(hall: RunningHall, journal: str) -> bool:
    return any(r["journal"] == journal for r in hall.get("/api/results.json")["results"])


def test_two_rounds_pushed_and_played_with_ids_and_byes(broker: Broker,
                                                        tmp_path: Path) -> None:  # noqa: F811
    keys = tmp_path / "keys"
    keys.mkdir()
    folder = tmp_path / T1
    folder.mkdir()
    # The match file's own match: its journal's name sorts first (Table.journal: the newest).
    (folder / "match.toml").write_text(MATCH.format(left="Aaron", right="Nobody"),
                                       encoding="utf-8")
    with RunningHall(broker, tmp_path / "archive", keys) as hall:
        answer = push(hall, "1", ROUND_1)
        assert [row.get("bye") for row in answer["rows"]] == [
            None, {"player": "Clara", "player_id": "31"}]
        table = Table(folder, device_text(broker, table=T1, user=T1,
                                          match_file=folder / "match.toml")).start()
        shutil.copy(table.state / SECRET_FILE, keys / f"{T1}.key")
        try:
            wait(lambda: right_player(table) == "Boris", "round 1 loaded", timeout=20)
            play(table, 2)
            hall.wait(lambda: all_acknowledged(table), "round 1's events in the hall",
                      timeout=20)
            first = table.journal()

            # Round 2 pushed while round 1 plays: the table waits for it, still on round 1.
            push(hall, "2", ROUND_2)
            hall.wait(lambda: round_of(hall, "2")["waiting"] != [], "round 2 waiting",
                      timeout=20)
            two = round_of(hall, "2")
            assert two["playing"] == [] and two["complete"] is False
            [waiting] = two["waiting"]
            assert (waiting["table"], waiting["after"], waiting["over"]) == (T1, "1", False)
            assert (waiting["left"], waiting["right"]) == ("Anna", "Boris")
            assert [p["table"] for p in round_of(hall, "1")["playing"]] == [T1]
            assert round_of(hall, "2")["byes"] == [{"player": "Anna", "player_id": "17"}]
            # Both rounds listed (round 1 first), whatever has a result yet (and "": the
            # match file's own match, replaced before a game, names no round).
            names = hall.get("/api/results.json")["round_names"]
            assert [name for name in names if name] == ["1", "2"]

            # Round 1 over: its result; round 2 loads by itself, and plays, and ends.
            end_the_match(table)
            hall.wait(lambda: collected(hall, f"{T1}/{first.name}"), "round 1's result",
                      timeout=30)
            wait(lambda: right_player(table) == "Boris" and table.journal() != first,
                 "round 2 loaded after round 1", timeout=20)
            assert round_of(hall, "1")["complete"] is True
            play(table, 2)
            hall.wait(lambda: all_acknowledged(table), "round 2's events", timeout=20)
            second = table.journal()
            hall.wait(lambda: round_of(hall, "2")["playing"] != [], "round 2 playing",
                      timeout=20)
            assert round_of(hall, "2")["waiting"] == []
            end_the_match(table)
            hall.wait(lambda: collected(hall, f"{T1}/{second.name}"), "round 2's result",
                      timeout=30)
        finally:
            table.stop()

        data = hall.get("/api/results.json")
        assert [name for name in data["round_names"] if name] == ["1", "2"]
        assert round_of(hall, "2")["complete"] is True
        by_round = {name: [(r["table"], r["left"], r["left_id"], r["right"], r["right_id"],
                            r["ended_by"], r["counted"])
                           for r in data["results"] if r["round"] == name and r["counted"]]
                    for name in ("1", "2")}
        assert by_round == {
            "1": [(T1, "Anna", "17", "Boris", "23", "disqualified", True),
                  ("", "Clara", "31", "", "", "bye", True)],
            "2": [(T1, "Clara", "31", "Boris", "23", "disqualified", True),
                  ("", "Anna", "17", "", "", "bye", True)]}
        header, *rows = results_csv(hall)
        assert header[-2:] == ["left_id", "right_id"]
        assert [(r[0], r[1], r[2], r[3], r[7], r[8], r[10], r[11]) for r in rows] == [
            ("1", T1, "Anna", "Boris", "Boris", "disqualified", "17", "23"),
            ("1", "", "Clara", "", "Clara", "bye", "31", ""),
            ("2", T1, "Clara", "Boris", "Boris", "disqualified", "31", "23"),
            ("2", "", "Anna", "", "Anna", "bye", "17", "")]
        assert rows[0][9] == f"intact {T1}/{first.name}" and rows[1][9] == ""

        # Standings: Boris won both; Anna and Clara each a bye and a loss (0-5, Buchholz 2).
        standings = hall.get("/api/standings.json")
        got = {p["player_id"]: (p["rank"], p["player"], p["played"], p["byes"], p["wins"],
                                p["score"], p["points_for"], p["points_against"],
                                p["buchholz"]) for p in standings["players"]}
        assert got == {"23": (1, "Boris", 2, 0, 2, 2, 10, 0, 2),
                       "17": (2, "Anna", 2, 1, 1, 1, 0, 5, 2),
                       "31": (2, "Clara", 2, 1, 1, 1, 0, 5, 2)}
        anna = next(p for p in standings["players"] if p["player_id"] == "17")
        assert anna["round_texts"] == {"1": "L 0-5 v Boris", "2": "W bye"}

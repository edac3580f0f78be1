"""Results back (SPEC §14 "Results"): every finished match's result, recomputed by the hall from
the journal its archive holds, exported at `/api/results.csv` (the SPEC's columns), `/api/
results.json` and `/api/standings.csv`; a pushed round complete only when every table of it has
reported; a player's name that a spreadsheet would run as a formula escaped; a TAMPERED
journal's result flagged and kept out of the standings. Against the real Mosquitto, the real
hall and its page, and real clocks on mock pins that load the round the hall pushed."""

from __future__ import annotations

import base64
import csv
import hashlib
import http.client
import io
import json
import re
import shutil
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from export_helpers import EDGE_CASES, play_journal
from gammonclock.hall.archive import verify_archived
from gammonclock.hall.results import (
    MAX_RESULTS,
    RESULT_COLUMNS,
    Result,
    Results,
    collect,
    safe_cell,
)
from gammonclock.journal.key import SECRET_FILE
from gammonclock.link import publisher as link_publisher
from hall_web_helpers import PAGE_WAIT_MS, P, RunningHall, clock_state, publish, table_client
from mqtt_helpers import Broker
from table_helpers import (
    MATCH,
    Table,
    all_acknowledged,
    as_sent,
    device_text,
    end_the_match,
    play,
    right_player,
    wait,
)

T1, T2 = "table-1", "table-2"
INJECTION = "=HYPERLINK(1)"          # a "name" a spreadsheet would run


@pytest.fixture(autouse=True)
def quick_resend(monkeypatch: pytest.MonkeyPatch) -> None:
    """The table's wait for the hall's ack, shortened (5 s doubling to 60 s in play)."""
    monkeypatch.setattr(link_publisher, "RESEND_MIN_S", 0.5)
    monkeypatch.setattr(link_publisher, "RESEND_MAX_S", 2.0)


def fetch(hall: RunningHall, path: str, password: str | None = None) -> str:
    headers = {} if password is None else {
        "Authorization": "Basic " + base64.b64encode(f"td:{password}".encode()).decode()}
    request = urllib.request.Request(hall.base + path, headers=headers)
    with urllib.request.urlopen(request, timeout=20) as response:
        assert response.headers["Content-Type"].startswith("text/csv")
        return str(response.read().decode("utf-8"))


def rows(text: str) -> list[list[str]]:
    return list(csv.reader(io.StringIO(text)))


def start_table(tmp_path: Path, broker: Broker, keys: Path | None) -> Table:  # noqa: F811
    folder = tmp_path / T1
    folder.mkdir()
    match_file = folder / "match.toml"
    # The match file's own match, replaced by the pushed one before it starts; its journal's
    # name sorts first (Table.journal: the last name is the newest).
    match_file.write_text(MATCH.format(left="Aaron", right="Nobody"), encoding="utf-8")
    table = Table(folder, device_text(broker, table=T1, user=T1, match_file=match_file)).start()
    if keys is not None:
        shutil.copy(table.state / SECRET_FILE, keys / f"{T1}.key")
    return table


def push(hall: RunningHall, round_name: str, csv_text: str, password: str | None = None
         ) -> None:
    answer = hall.post("/api/round", {"csv": csv_text, "event": "Moscow Open",
                                      "round": round_name}, auth=password)
    assert answer["errors"] == 0, answer


def play_to_the_end(hall: RunningHall, table: Table, right: str) -> Path:
    """(Table.journal is the last name: each pushed match's left player sorts after the last.)
    The pushed match loaded (its right player `right`), played a little, then left is
    disqualified: its journal, once the hall has a result from it."""
    wait(lambda: right_player(table) == right, f"the pushed match ({right}) loaded")
    play(table, 2)
    hall.wait(lambda: all_acknowledged(table), "the events in the hall")
    journal = table.journal()
    end_the_match(table)
    hall.wait(lambda: any(r["journal"] == f"{T1}/{journal.name}"
                          for r in hall.get("/api/results.json")["results"]),
              "the result collected from the archived journal", timeout=20)
    return journal


def test_results_rounds_and_standings_from_the_archived_journals(
        broker: Broker, tmp_path: Path) -> None:  # noqa: F811
    keys = tmp_path / "keys"
    keys.mkdir()
    with RunningHall(broker, tmp_path / "archive", keys) as hall:
        push(hall, "1", f"table,left,right,length\n{T1},{INJECTION},Boris,5\n"
                        f"{T2},Clara,Dmitri,7\n")
        table = start_table(tmp_path, broker, keys)
        try:
            first = play_to_the_end(hall, table, "Boris")

            # The result, recomputed from the journal: the SPEC's columns, escaped cells.
            text = fetch(hall, "/api/results.csv")
            header, *body = rows(text)
            assert tuple(header) == RESULT_COLUMNS
            [row] = [r for r in body if r[9].endswith(first.name)]
            assert row == ["1", T1, "'" + INJECTION, "Boris", "5", "0", "5", "Boris",
                           "disqualified", f"intact {T1}/{first.name}", "", ""]
            data = hall.get("/api/results.json")
            [result] = [r for r in data["results"] if r["journal"] == f"{T1}/{first.name}"]
            assert result["left"] == INJECTION       # the JSON as written; only the CSV quotes
            assert (result["score"], result["winner"], result["event"], result["games"]) == \
                ("0-5", "right", "Moscow Open", 1)
            assert (result["verdict"], result["counted"]) == ("intact", True)
            assert result["match_s"] >= 0 and result["ended_wall_ms"] > 0

            # Round 1 pushed two tables; table-2 never played: incomplete, table-2 still playing.
            [round_1] = data["rounds"]
            assert round_1["round"] == "1" and round_1["complete"] is False
            assert round_1["reported"] == [T1]
            assert [p["table"] for p in round_1["playing"]] == [T2]

            # Round 2 of one table: complete once it reports.
            push(hall, "2", f"table,left,right,length\n{T1},Zoe,Boris,5\n")
            second = play_to_the_end(hall, table, "Boris")
            rounds = {r["round"]: r for r in hall.get("/api/results.json")["rounds"]}
            assert rounds["2"]["complete"] is True and rounds["2"]["playing"] == []
            assert rounds["1"]["complete"] is False
            assert second != first

            # Standings: per player, per round; the injected name escaped there too.
            header, *body = rows(fetch(hall, "/api/standings.csv"))
            assert header == ["rank", "player", "played", "wins", "draws", "losses", "score",
                              "points_for", "points_against", "point_difference", "buchholz",
                              "sonneborn_berger", "player_id", "round 1", "round 2"]
            standings = {r[1]: r for r in body}
            assert standings["Boris"] == ["1", "Boris", "2", "2", "0", "0", "2", "10", "0", "10",
                                          "0", "0", "", f"W 5-0 v {INJECTION}", "W 5-0 v Zoe"]
            assert standings["'" + INJECTION] == ["2", "'" + INJECTION, "1", "0", "0", "1", "0",
                                                  "0", "5", "-5", "2", "0", "", "L 0-5 v Boris",
                                                  ""]
            assert standings["Zoe"][:6] == ["2", "Zoe", "1", "0", "0", "1"]   # a shared place
            data = hall.get("/api/standings.json")
            assert (data["format"], data["event_format"], data["rounds"]) == \
                ("swiss", "swiss", ["1", "2"])
            assert [(p["rank"], p["player"], p["shared"]) for p in data["players"]] == [
                (1, "Boris", False), (2, INJECTION, True), (2, "Zoe", True)]
            assert data["players"][0]["rounds"]["2"][0]["journal"] == f"{T1}/{second.name}"
            other = hall.get("/api/standings.json?format=round-robin")
            assert other["tie_breaks"] == ["score", "head_to_head", "point_difference",
                                           "points_for"]
            with pytest.raises(urllib.error.HTTPError) as refused:
                fetch(hall, "/api/standings.csv?format=knockout")
            assert refused.value.code == 400
            assert "not one of swiss, round-robin" in refused.value.read().decode()
            # The match file's own match, replaced by the pushed one before a game: abandoned,
            # listed, not counted (no one played it).
            assert "Aaron" not in standings
            # (its journal, one record long, is verified on the archive's worker thread: its
            # result may come after the rounds' results)
            hall.wait(lambda: hall.get("/api/results.json")["standings"]["excluded"],
                      "the abandoned match collected from the archive", timeout=20)
            excluded = hall.get("/api/results.json")["standings"]["excluded"]
            assert [(e["why"], e["round"]) for e in excluded] == [("abandoned", "")]
        finally:
            table.stop()

    # A restarted hall knows the rounds it pushed and recollects the results from its archive.
    with RunningHall(broker, tmp_path / "archive", keys) as hall:
        hall.wait(lambda: len([r for r in hall.get("/api/results.json")["results"]
                               if r["ended_by"] == "disqualified"]) == 2, "results recollected")
        rounds = {r["round"]: r["complete"] for r in hall.get("/api/results.json")["rounds"]}
        assert rounds == {"1": False, "2": True}


TAIL = re.compile(r',"sum":"([0-9a-f]{16})","mac":"([0-9a-f]{64})"\}$')


def forged(text: str) -> str:
    """The journal as a forger without the device key makes it: a name changed and each changed
    line's checksum made again (the chain and the replay hold; only the seals tell)."""
    lines = []
    for line in text.splitlines(keepends=True):
        body, end = line.rstrip("\n"), line[len(line.rstrip("\n")):]
        tail = TAIL.search(body)
        if tail is not None and "Anna" in body:
            raw = body[:tail.start()].replace("Anna", "Anya") + "}"
            checksum = hashlib.sha256(raw.encode()).hexdigest()[:16]
            body = f'{raw[:-1]},"sum":"{checksum}","mac":"{tail.group(2)}"}}'
        lines.append(body + end)
    return "".join(lines)


def test_a_tampered_journal_is_flagged_and_not_counted_and_the_exports_are_guarded(
        broker: Broker, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: F811
    keys = tmp_path / "keys"
    keys.mkdir()
    password = "s3cret"
    with RunningHall(broker, tmp_path / "archive", keys, password=password) as hall:
        push(hall, "1", f"table,left,right,length\n{T1},Anna,Boris,5\n", password)
        table = start_table(tmp_path, broker, keys)
        try:
            wait(lambda: right_player(table) == "Boris", "the pushed match loaded")
            play(table, 2)
            hall.wait(lambda: all_acknowledged(table), "the events in the hall")
            journal = table.journal()
            as_sent(monkeypatch, journal, forged)
            end_the_match(table)

            def results() -> list[dict[str, Any]]:
                request = urllib.request.Request(hall.base + "/api/results.json", headers={
                    "Authorization": "Basic " + base64.b64encode(
                        f"td:{password}".encode()).decode()})
                with urllib.request.urlopen(request, timeout=20) as response:
                    return list(json.loads(response.read())["results"])

            hall.wait(lambda: any(r["journal"] == f"{T1}/{journal.name}" for r in results()),
                      "the tampered journal's result", timeout=20)
            [result] = [r for r in results() if r["journal"] == f"{T1}/{journal.name}"]
            assert result["verdict"] == "TAMPERED" and result["counted"] is False
            assert (result["left"], result["winner"], result["error"]) == ("Anya", "right", "")
            # The CSV the pairing software takes lists what counts: not a TAMPERED journal's.
            assert rows(fetch(hall, "/api/results.csv", password))[1:] == []
            header, *body = rows(fetch(hall, "/api/standings.csv", password))
            assert body == []                        # nothing counted from a TAMPERED journal
            data = json.loads(urllib.request.urlopen(urllib.request.Request(
                hall.base + "/api/results.json", headers={"Authorization": "Basic " + base64
                .b64encode(f"td:{password}".encode()).decode()}), timeout=20).read())
            assert [e["why"] for e in data["standings"]["excluded"]
                    if e["journal"].endswith(journal.name)] == ["TAMPERED"]
            # A TAMPERED journal is no report: the round waits for the clock's card (its
            # table is listed as still playing); the director sees the result and why.
            assert data["rounds"][0]["complete"] is False
            assert result["held"] is None and result["why"]["code"] == "tampered"
        finally:
            table.stop()

        # The exports are behind the page's password and its Host check.
        for path in ("/api/results.csv", "/api/results.json", "/api/standings.csv",
                     "/api/standings.json"):
            with pytest.raises(urllib.error.HTTPError) as refused:
                urllib.request.urlopen(hall.base + path, timeout=20)
            assert refused.value.code == 401
            connection = http.client.HTTPConnection("127.0.0.1", hall.port, timeout=20)
            connection.request("GET", path, headers={"Host": "evil.example"})
            assert connection.getresponse().status == 421
            connection.close()


@pytest.mark.parametrize("value,cell", [("=1+2", "'=1+2"), ("+7", "'+7"), ("-cmd", "'-cmd"),
                                        ("@SUM(A1)", "'@SUM(A1)"), ("\tx", "'\tx"),
                                        ("Борис", "Борис"), ("5", "5")])
def test_a_cell_a_spreadsheet_would_run_is_quoted(value: str, cell: str) -> None:
    assert safe_cell(value) == cell


def test_the_results_dialog_shows_the_round_and_the_tables_still_playing(
        browser: Any, broker: Broker, tmp_path: Path) -> None:  # noqa: F811
    """In Chromium: the Results button opens the round's results table (from the archived
    journal) and the table still playing with its score and time left, with the CSV links; in
    Russian too."""
    keys = tmp_path / "keys"
    keys.mkdir()
    other = table_client(broker, T2)
    with RunningHall(broker, tmp_path / "archive", keys) as hall:
        push(hall, "1", f"table,left,right,length\n{T1},Anna,Boris,5\n{T2},Clara,Dmitri,7\n")
        state = clock_state(T2, left_ms=600_000, right_ms=540_000, running=None,
                            phase="between_games")
        publish(other, f"{P}/{T2}/online", "1", retain=True)
        publish(other, f"{P}/{T2}/state", {**state, "players": {"left": "Clara",
                                                                "right": "Dmitri"}},
                retain=True)
        table = start_table(tmp_path, broker, keys)
        page = browser.new_page(viewport={"width": 1280, "height": 800})
        try:
            journal = play_to_the_end(hall, table, "Boris")
            page.goto(hall.base + "/")
            page.click("#open-results")
            row = f'#results-body tr[data-journal="{T1}/{journal.name}"]'
            page.wait_for_selector(row, timeout=PAGE_WAIT_MS)
            text = page.inner_text(row)
            assert "Anna — Boris" in text and "0-5 / 5" in text and "disqualification" in text
            assert "intact" in text
            status = page.inner_text("#results-status")
            assert "Round 1: 1 table still playing." in status
            playing = page.inner_text(f'#results-body li[data-table="{T2}"]')
            assert "Clara — Dmitri" in playing and "3-2 to 7" in playing
            assert "10:00 / 9:00" in playing
            assert page.get_attribute("#results-csv", "href") == "/api/results.csv"
            assert page.get_attribute("#standings-csv", "href") == "/api/standings.csv"
            page.select_option("#language", "ru")
            page.wait_for_function("() => document.querySelector('#results-status')"
                                   ".textContent.startsWith('Тур 1: ещё играет 1 стол')",
                                   timeout=PAGE_WAIT_MS)
            text = page.inner_text(row)
            assert "дисквалификация" in text and "цел" in text
            assert "Победитель" in page.inner_text("#results-body thead")
            assert "осталось времени 10:00 / 9:00" in page.inner_text(
                f'#results-body li[data-table="{T2}"]')
        finally:
            page.close()
            table.stop()
            other.disconnect()
            other.loop_stop()


# --- how a match ended, from the export's reading; the bounds -----------------------------------

FORFEIT = ("""\
[match]
length = 1

[players]
left = "Anna"
right = "Boris"

[event]
name = "Club night"
round = "3"
""", """\
1 tap left
5 arbiter forfeit right
10 end
""")


@pytest.mark.parametrize("case, ended_by, winner", [
    (FORFEIT, "forfeit", "left"),
    (EDGE_CASES["bronstein, overtime, second flag"], "flag", "left"),
])
def test_how_a_match_ended_comes_from_its_journal(tmp_path: Path, case: tuple[str, str],
                                                  ended_by: str, winner: str) -> None:
    played = play_journal(tmp_path, *case)
    result = collect(played.path, verify_archived(played.path, T1, None))
    assert result is not None and result.error == ""
    assert (result.ended_by, result.winner, result.verdict) == (ended_by, winner,
                                                               "seal not checked")
    assert result.finished and result.games >= 1
    if case is FORFEIT:
        assert (result.round, result.event, result.score_text) == ("3", "Club night", "1-0")


def test_the_results_held_are_bounded(tmp_path: Path) -> None:
    held = Results(tmp_path)
    result = Result(T1, f"{T1}/m.jsonl", "intact", "intact")
    for n in range(MAX_RESULTS + 3):
        held.take(f"{n}", result)
    assert len(held.by_path) == MAX_RESULTS and held.dropped == 3
    held.take("0", result)                   # one already held is taken again
    assert held.dropped == 3


def test_without_the_key_a_broken_chain_is_tampered_and_a_torn_tail_is_not(
        tmp_path: Path) -> None:
    """Without the table's key the archive checks the chain: a record altered without its
    checksum made again is TAMPERED in the results (not "unreadable"), while a last record
    torn by a power cut is no tampering."""
    from gammonclock.hall.archive import verify_archived
    from gammonclock.hall.results import TAMPERED, verdict_word
    from journal_helpers import journaled_run

    path, _, _ = journaled_run(tmp_path)
    text = path.read_text(encoding="utf-8")
    lines = text.splitlines(keepends=True)
    altered = tmp_path / "altered.jsonl"
    altered.write_text("".join(lines[:2]) + lines[2].replace('"t":', '"t": ', 1)
                       .replace('"seq":2', '"seq":2 ', 1) + "".join(lines[3:]),
                       encoding="utf-8")
    torn = tmp_path / "torn.jsonl"
    torn.write_text(text[:-20], encoding="utf-8")
    assert verdict_word(verify_archived(altered, "table-1", None)) == TAMPERED
    assert verdict_word(verify_archived(torn, "table-1", None)) != TAMPERED

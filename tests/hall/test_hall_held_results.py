"""Results and standings count only what their owner said (SPEC §14.1, issue 31), against the real
Mosquitto (its shipped config and ACL), the real hall and its page, journals made by the
project's own journal writer or by real clocks on mock pins (the venue of venue_helpers), each
sent on its table's own broker account as a clock sends a finished journal:

- journals sealed on another device, sent from table-1's account (one of them table-2's
  pairing): TAMPERED at the hall, counted for no one (the forged-result attack);
- a result that matches no pairing is held, listed with why, and counts only once the director
  accepts it on the page (the decision on disk, read back after a restart, bound to the file's
  SHA-256);
- a spare's own finished result stands beside the match the director moved onto it (keyed by
  the match, not by table and round), and a match finished on two clocks counts once;
- a hall given no `--keys-dir` says on its page that it counts nothing it cannot verify (in
  Chromium, English and Russian)."""

from __future__ import annotations

import asyncio
import base64
import csv
import hashlib
import io
import json
import shutil
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from export_helpers import play_journal
from gammonclock.hall.decisions import DECISIONS_FILE
from gammonclock.journal.key import load_or_create_key
from gammonclock.journal.reader import read_journal
from gammonclock.runtime.continuation import checked_then
from gammonclock.runtime.lifecycle import load_next_match
from gammonclock.sides import Button
from hall_ru_helpers import settled_in_russian, shots
from hall_web_helpers import DESKTOP, PAGE_WAIT_MS, P, RunningHall, publish, table_client
from move_helpers import copy_device_key, give_key
from mqtt_helpers import Broker, start_broker
from venue_helpers import (
    Venue,
    command,
    first_part,
    journal_of,
    on_loop,
    power_cut,
    second_part,
    tap,
)

EVENT = "Moscow Open"
PASSWORD = "s3cret"
TABLES = ("table-1", "table-2", "table-3")

MATCH = """\
[match]
length = {length}

[players]
left = "{left}"
right = "{right}"

[event]
name = "Moscow Open"
round = "{round}"
"""


@pytest.fixture
def broker(tmp_path: Path) -> Iterator[Broker]:
    """Mosquitto with the shipped ACL and an account for each of TABLES."""
    running = start_broker(tmp_path / "broker", tables=TABLES)
    try:
        yield running
    finally:
        running.stop()


def finished(folder: Path, left: str, right: str, *, key: bytes, table: str, name: str,
             winner: str = "left", length: int = 5, round_name: str = "1") -> Path:
    """A match played to its end through the engine into a journal sealed with KEY, its header
    naming TABLE: the score set by the arbiter, then a game forfeited to end it 5-0."""
    folder.mkdir(parents=True, exist_ok=True)
    loser = "right" if winner == "left" else "left"
    score = f"{length - 1} 0" if winner == "left" else f"0 {length - 1}"
    return play_journal(folder, MATCH.format(left=left, right=right, length=length,
                                             round=round_name),
                        f"1 tap left\n2 arbiter score {score}\n3 arbiter forfeit {loser} 1\n"
                        "10 end\n", name=name, key=key, table=table).path


def send(client: Any, table: str, journal: Path, name: str | None = None) -> None:
    """A finished journal on TABLE's account (`P/TABLE/journal`), as its clock sends it."""
    publish(client, f"{P}/{table}/journal", {"journal": name or journal.name,
                                             "text": journal.read_text(encoding="utf-8")})


def results(hall: RunningHall) -> dict[str, dict[str, Any]]:
    return {r["journal"]: r for r in hall.get("/api/results.json", PASSWORD)["results"]}


def until_results(hall: RunningHall, journals: list[str]) -> dict[str, dict[str, Any]]:
    hall.wait(lambda: set(journals) <= set(results(hall)), f"the results of {journals}",
              timeout=30)
    return results(hall)


def push(hall: RunningHall, csv_text: str, round_name: str = "1") -> None:
    answer = hall.post("/api/round", {"csv": csv_text, "event": EVENT, "round": round_name},
                       auth=PASSWORD)
    assert answer["errors"] == 0, answer


def accept(hall: RunningHall, journal: str, sha256: str, token: str | None = "the page's"
           ) -> tuple[int, dict[str, Any]]:
    try:
        return 200, hall.post("/api/accept", {"journal": journal, "sha256": sha256},
                              auth=PASSWORD, token=token)
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def players(hall: RunningHall) -> dict[str, dict[str, Any]]:
    return {p["player"]: p for p in hall.get("/api/standings.json", PASSWORD)["players"]}


# --- a forged result ------------------------------------------------------------------------------

def test_journals_sealed_on_another_device_are_tampered_and_count_for_no_one(
        broker: Broker, browser: Any, tmp_path: Path) -> None:
    """Table-1's account sends two journals made and sealed on another device (their headers
    say table-1): one of table-2's pairing (Chen beats Dora), one of its own (Boris beats
    Anna). The hall holds keys/table-1.key: both are TAMPERED, counted for no one, on the page
    too; table-1's own journal, sealed by its key, counts."""
    keys = tmp_path / "keys"
    give_key(keys, "table-1", table_1 := load_or_create_key(tmp_path / "table-1-card"))
    give_key(keys, "table-2", load_or_create_key(tmp_path / "table-2-card"))
    forger = load_or_create_key(tmp_path / "another-device")
    made = tmp_path / "made"
    genuine = finished(made, "Anna", "Boris", key=table_1, table="table-1",
                       name="match-1.jsonl")
    chen = finished(made, "Chen", "Dora", key=forger, table="table-1", name="match-2.jsonl")
    boris = finished(made, "Anna", "Boris", key=forger, table="table-1", name="match-3.jsonl",
                     winner="right")
    client = table_client(broker, "table-1")
    page = browser.new_context(viewport=DESKTOP, http_credentials={
        "username": "td", "password": PASSWORD}).new_page()
    try:
        with RunningHall(broker, tmp_path / "archive", keys, password=PASSWORD) as hall:
            push(hall, "table,left,right,length\ntable-1,Anna,Boris,5\ntable-2,Chen,Dora,5\n")
            for journal in (genuine, chen, boris):
                send(client, "table-1", journal)
            names = [f"table-1/{p.name}" for p in (genuine, chen, boris)]
            got = until_results(hall, names)
            for forged in names[1:]:
                result = got[forged]
                assert (result["verdict"], result["counted"]) == ("TAMPERED", False), result
                assert (result["standing"], result["held"], result["why"]["code"]) == (
                    "not_counted", None, "tampered"), result
                assert result["verdict_text"].startswith(
                    "TAMPERED: sealed by another device's key")
            assert (got[names[0]]["verdict"], got[names[0]]["counted"]) == ("intact", True)
            # The standings: Anna beat Boris; no Chen, no Dora, no forged win of Boris.
            ranked = players(hall)
            assert set(ranked) == {"Anna", "Boris"}
            assert ranked["Anna"]["round_texts"] == {"1": "W 5-0 v Boris"}
            assert ranked["Boris"]["wins"] == 0
            standings = hall.get("/api/standings.json", PASSWORD)
            assert [(e["journal"], e["code"], e["held"]) for e in standings["excluded"]] == [
                (names[1], "tampered", False), (names[2], "tampered", False)]
            # The archive says why: sealed by another device's key than table-1's.
            verdicts = {v["name"]: v for v in hall.get("/api/archive", PASSWORD)["archive"]}
            assert verdicts[chen.name]["say"]["code"] == "other_key"
            assert verdicts[chen.name]["verified"] is False
            # Table-2 has not reported: a journal from table-1's account is not table-2's.
            [round_1] = hall.get("/api/results.json", PASSWORD)["rounds"]
            assert round_1["reported"] == ["table-1"] and not round_1["complete"]
            # A TAMPERED result is never accepted, however the director asks: nothing recorded.
            for forged in names[1:]:
                status, refusal = accept(hall, forged, got[forged]["sha256"])
                assert status == 409, (forged, refusal)
            assert not (tmp_path / "archive" / DECISIONS_FILE).exists()
            assert set(players(hall)) == {"Anna", "Boris"}
            # The CSV for the pairing software has the counted result only.
            rows = hall_csv(hall, "/api/results.csv")
            assert [row[2:4] + row[7:8] for row in rows[1:]] == [["Anna", "Boris", "Anna"]]

            page.goto(hall.base + "/")
            page.click("#open-results")
            forged_row = f'#results-body tr[data-journal="{names[1]}"]'
            page.wait_for_selector(forged_row, timeout=PAGE_WAIT_MS)
            assert "not counted: journal TAMPERED" in page.inner_text(forged_row)
            assert "counted" in page.inner_text(f'#results-body tr[data-journal="{names[0]}"]')
            page.screenshot(path=str(shots(tmp_path) / "results-forged-en.png"), full_page=True)
            page.select_option("#language", "ru")
            page.wait_for_function("(row) => document.querySelector(row).textContent"
                                   ".includes('не засчитан: журнал ИЗМЕНЁН')", arg=forged_row,
                                   timeout=PAGE_WAIT_MS)
            page.screenshot(path=str(shots(tmp_path) / "results-forged-ru.png"), full_page=True)
    finally:
        page.context.close()
        client.disconnect()
        client.loop_stop()


def hall_csv(hall: RunningHall, path: str) -> list[list[str]]:
    request = urllib.request.Request(hall.base + path, headers={
        "Authorization": "Basic " + base64.b64encode(f"td:{PASSWORD}".encode()).decode()})
    with urllib.request.urlopen(request, timeout=20) as response:
        return list(csv.reader(io.StringIO(response.read().decode("utf-8"))))


# --- held, then accepted by the director -------------------------------------------------------

def test_a_result_of_no_pairing_is_held_until_the_director_accepts_it(
        broker: Broker, tmp_path: Path) -> None:
    """Table-1's own journal (sealed by its key) of a match that is not the one pushed to it:
    held, with why; counted only once the director accepts it (a decision with who and the
    file's SHA-256 synced to the hall's journal before the answer), after a restart too; a
    different file under the same name later is held again."""
    keys = tmp_path / "keys"
    give_key(keys, "table-1", table_1 := load_or_create_key(tmp_path / "table-1-card"))
    journal = finished(tmp_path / "made", "Anna", "Zoe", key=table_1, table="table-1",
                       name="match-1.jsonl")
    name = f"table-1/{journal.name}"
    digest = hashlib.sha256(journal.read_bytes()).hexdigest()
    client = table_client(broker, "table-1")
    try:
        with RunningHall(broker, tmp_path / "archive", keys, password=PASSWORD) as hall:
            push(hall, "table,left,right,length\ntable-1,Anna,Boris,5\n")
            send(client, "table-1", journal)
            result = until_results(hall, [name])[name]
            assert result["counted"] is False
            assert players(hall) == {}
            assert result["standing"] == "held"
            assert result["held"] == {"code": "not_the_pairing", "table": "table-1",
                                      "left": "Anna", "right": "Boris", "length": 5,
                                      "discipline": "", "round": "1"}
            assert result["sha256"] == digest
            [excluded] = hall.get("/api/standings.json", PASSWORD)["excluded"]
            assert (excluded["code"], excluded["held"]) == ("not_the_pairing", True)
            # Held is a report: the round knows table-1 finished.
            assert hall.get("/api/results.json", PASSWORD)["rounds"][0]["complete"] is True

            # Only the page may accept (its token), only this file, only a result there is.
            assert accept(hall, name, digest, token=None)[0] == 403
            assert accept(hall, name, "0" * 64) == (409, {
                "error": f"{name} is not the file the page showed (its SHA-256 differs): "
                         "reload the results", "code": "changed", "fields": {"journal": name}})
            assert accept(hall, "table-1/match-9.jsonl", digest)[0] == 404
            assert accept(hall, "table-1/../x.jsonl", digest)[0] == 400
            assert not (tmp_path / "archive" / DECISIONS_FILE).exists()

            status, answer = accept(hall, name, digest)
            assert status == 200 and answer["accepted"]["by"] == "td", answer
            line = json.loads((tmp_path / "archive" / DECISIONS_FILE).read_text().splitlines()[-1])
            assert {k: line[k] for k in ("kind", "by", "journal", "sha256", "table", "held")} == {
                "kind": "accepted", "by": "td", "journal": name, "sha256": digest,
                "table": "table-1", "held": "not_the_pairing"}
            assert line["at_ms"] == answer["accepted"]["at_ms"]
            result = results(hall)[name]
            assert (result["counted"], result["standing"], result["accepted"]) == (
                True, "accepted", answer["accepted"])
            assert players(hall)["Anna"]["round_texts"] == {"1": "W 5-0 v Zoe"}
            assert accept(hall, name, digest)[1]["code"] == "already_counted"

        # A restarted hall reads the decision back: still counted, still "accepted by td".
        with RunningHall(broker, tmp_path / "archive", keys, password=PASSWORD) as hall:
            result = until_results(hall, [name])[name]
            assert (result["counted"], result["accepted"]["by"]) == (True, "td")
            assert players(hall)["Anna"]["wins"] == 1

        # Another file under the same name (Zoe the winner) is not what was accepted.
        other = finished(tmp_path / "other", "Anna", "Zoe", key=table_1, table="table-1",
                         name="match-1.jsonl", winner="right")
        shutil.copy(other, tmp_path / "archive" / "table-1" / journal.name)
        with RunningHall(broker, tmp_path / "archive", keys, password=PASSWORD) as hall:
            result = until_results(hall, [name])[name]
            assert (result["counted"], result["standing"], result["winner"]) == (
                False, "held", "right")
            assert players(hall) == {}
            assert accept(hall, name, digest)[1]["code"] == "changed"
    finally:
        client.disconnect()
        client.loop_stop()


# --- keyed by the match ---------------------------------------------------------------------------

SPARE_MATCH = MATCH.format(left="Eve", right="Fay", length=1, round="1")
MOVED_MATCH = MATCH.format(left="Анна", right="Boris", length=5, round="1")
PAIRINGS = "table,left,right,length\ntable-2,Анна,Boris,5\ntable-3,Eve,Fay,1\n"


class Moved:
    """Table-2's match (Анна v Boris, round 1) under way on its clock; table-3, a spare, has
    played its own round-1 match (Eve v Fay) to the end and then continued table-2's from a
    copy of table-2's journal (as the hall's move does): real clocks on mock pins."""

    def __init__(self, tmp_path: Path) -> None:
        self.venue = Venue()
        self.source = self.venue.build(tmp_path, "table-2", tmp_path / "t2", 3 * 3600,
                                       "boot-t2")
        assert load_next_match(self.source.service, self.source.table, MOVED_MATCH,
                               "match.toml").ok
        first_part(self.venue, self.source)
        copy = tmp_path / "copy"
        copy.mkdir()
        self.moved = copy / journal_of(self.source).name
        shutil.copy(journal_of(self.source), self.moved)
        self.last = read_journal(self.moved).last
        self.spare = self.venue.build(tmp_path, "table-3", tmp_path / "t3", 50 * 3600,
                                      "boot-t3")
        assert load_next_match(self.spare.service, self.spare.table, SPARE_MATCH,
                               "match.toml").ok
        tap(self.venue, self.spare, Button.LEFT)
        command(self.spare, "disqualify", "right")          # Eve wins the spare's own match
        self.own = journal_of(self.spare)
        outcome = on_loop(checked_then(self.spare.service, self.spare.table, self.moved,
                                       via="hall", source_of="hall", by="td"))
        assert outcome.ok, outcome.error
        self.continued = journal_of(self.spare)
        second_part(self.venue, self.spare)                  # Анна wins on the spare
        self.keys = tmp_path / "keys"
        for table, state in (("table-2", "t2"), ("table-3", "t3")):
            copy_device_key(self.keys, table, tmp_path / state)

    def record_move(self, hall: RunningHall) -> None:
        """The director's move of table-2's match to table-3, as the hall records it."""
        async def record() -> None:
            hall.hall.decisions.record("moved", "td", source="table-2", to="table-3",
                                       journal=self.moved.name, seq=self.last.seq)
        asyncio.run_coroutine_threadsafe(record(), hall.loop).result(10)

    def close(self) -> None:
        for device in self.venue.clocks:
            device.close()


def test_a_spares_own_result_stands_beside_the_match_moved_onto_it(
        broker: Broker, tmp_path: Path) -> None:
    venue = Moved(tmp_path)
    power_cut(venue.source)            # table-2's clock is dead: its match went on on the spare
    venue.venue.clocks.remove(venue.source)
    client = table_client(broker, "table-3")
    try:
        with RunningHall(broker, tmp_path / "archive", venue.keys, password=PASSWORD) as hall:
            push(hall, PAIRINGS)
            send(client, "table-3", venue.own)
            send(client, "table-3", venue.continued)
            own, continued = (f"table-3/{venue.own.name}", f"table-3/{venue.continued.name}")
            got = until_results(hall, [own, continued])
            # The spare's own result counts (a later result at its table replaces nothing).
            assert {"Eve", "Fay"} <= set(players(hall))
            assert (got[own]["counted"], got[own]["left"]) == (True, "Eve")
            # Before the director's move is on record, the continuation is held.
            assert got[continued]["held"] == {"code": "not_moved", "file": venue.moved.name,
                                              "source": "table-2", "to": "table-3"}
            venue.record_move(hall)
            got = results(hall)
            assert (got[own]["counted"], got[continued]["counted"]) == (True, True)
            assert got[continued]["chain"] == f"table-2/{venue.moved.name}"
            assert (got[continued]["winner_name"], got[continued]["ended_by"]) == ("Анна",
                                                                                   "score")
            ranked = players(hall)
            assert set(ranked) == {"Eve", "Fay", "Анна", "Boris"}
            assert ranked["Eve"]["round_texts"] == {"1": "W 1-0 v Fay"}
            assert ranked["Анна"]["wins"] == 1 and ranked["Boris"]["losses"] == 1
            [round_1] = hall.get("/api/results.json", PASSWORD)["rounds"]
            assert round_1["reported"] == ["table-2", "table-3"] and round_1["complete"]
    finally:
        venue.close()
        client.disconnect()
        client.loop_stop()


def test_a_match_finished_on_two_clocks_counts_once(broker: Broker, tmp_path: Path) -> None:
    """Table-2's clock played on after its match was moved to the spare: both finished it. A
    fork of one match: both held; the director accepts one, and the other cannot be."""
    venue = Moved(tmp_path)
    command(venue.source, "pause")                 # table-2 plays on (as the spare resumes:
    second_part(venue.venue, venue.source)         # a hold of the cube) to the same end
    t2, t3 = table_client(broker, "table-2"), table_client(broker, "table-3")
    try:
        with RunningHall(broker, tmp_path / "archive", venue.keys, password=PASSWORD) as hall:
            push(hall, PAIRINGS)
            venue.record_move(hall)
            on_source = journal_of(venue.source)
            send(t2, "table-2", on_source)
            send(t3, "table-3", venue.continued)
            first = f"table-2/{on_source.name}"
            second = f"table-3/{venue.continued.name}"
            got = until_results(hall, [first, second])
            assert "Анна" not in players(hall)        # not once, let alone twice
            assert got[first]["held"] == {"code": "fork", "other": second, "others": 1}
            assert got[second]["held"] == {"code": "fork", "other": first, "others": 1}
            status, answer = accept(hall, second, got[second]["sha256"])
            assert status == 200, answer
            assert players(hall)["Анна"]["played"] == 1
            status, answer = accept(hall, first, got[first]["sha256"])
            assert (status, answer["code"], answer["fields"]["other"]) == (
                409, "already_counted", second)
            assert players(hall)["Анна"]["played"] == 1
    finally:
        venue.close()
        for client in (t2, t3):
            client.disconnect()
            client.loop_stop()


# --- a hall with no keys says so -----------------------------------------------------------------

def test_a_hall_without_keys_says_it_counts_nothing_it_cannot_verify(
        broker: Broker, browser: Any, tmp_path: Path) -> None:
    """No --keys-dir: the page says, on its main view and in Results and Standings, that the hall
    counts nothing it cannot verify; a result is held until the director accepts it there, then
    shows who accepted it and when. In English and Russian."""
    journal = finished(tmp_path / "made", "Anna", "Boris", name="match-1.jsonl",
                       key=load_or_create_key(tmp_path / "table-1-card"), table="table-1")
    name = f"table-1/{journal.name}"
    client = table_client(broker, "table-1")
    context = browser.new_context(viewport=DESKTOP, http_credentials={
        "username": "td", "password": PASSWORD})
    page = context.new_page()
    folder = shots(tmp_path)
    try:
        with RunningHall(broker, tmp_path / "archive", None, password=PASSWORD) as hall:
            push(hall, "table,left,right,length\ntable-1,Anna,Boris,5\n")
            send(client, "table-1", journal)
            result = until_results(hall, [name])[name]
            assert result["counted"] is False
            assert result["held"] == {"code": "no_keys_dir"}
            page.goto(hall.base + "/")
            page.wait_for_selector("#no-keys", state="visible", timeout=PAGE_WAIT_MS)
            assert page.inner_text("#no-keys") == (
                "This hall was started without --keys-dir: it cannot verify any journal, so "
                "it counts no result by itself. Every result is held until you accept it "
                "(Results).")
            page.screenshot(path=str(folder / "no-keys-en.png"))
            page.click("#open-results")
            row = f'#results-body tr[data-journal="{name}"]'
            page.wait_for_selector(row, timeout=PAGE_WAIT_MS)
            assert page.is_visible("#results-no-keys")
            assert "held: the hall was started without --keys-dir: the journal's seals cannot " \
                   "be checked" in page.inner_text(row)
            assert "1 result is held: it counts only once you accept it." in \
                page.inner_text("#results-status")
            page.screenshot(path=str(folder / "results-held-en.png"), full_page=True)
            page.click(f"{row} button.accept")
            page.wait_for_function("(row) => document.querySelector(row)"
                                   ".dataset.standing === 'accepted'", arg=row,
                                   timeout=PAGE_WAIT_MS)
            assert "counted: accepted by td," in page.inner_text(row)
            assert "Accepted by td" in page.inner_text("#results-accept")
            page.screenshot(path=str(folder / "results-accepted-en.png"), full_page=True)
            page.keyboard.press("Escape")
            page.click("#open-standings")
            page.wait_for_selector('#standings-body tr[data-player="Anna"]', timeout=PAGE_WAIT_MS)
            assert page.is_visible("#standings-no-keys")

            page.select_option("#language", "ru")
            page.wait_for_function("() => document.querySelector('#standings-no-keys')"
                                   ".textContent.startsWith('Зал запущен без --keys-dir')",
                                   timeout=PAGE_WAIT_MS)
            assert page.inner_text("#no-keys").startswith(
                "Зал запущен без --keys-dir: он не может проверить ни одного журнала")
            settled_in_russian(page, "#standings-dialog", "the standings",
                               allowed=("CSV", "JSON", "Anna", "Boris"))
            page.screenshot(path=str(folder / "standings-no-keys-ru.png"), full_page=True)
            page.keyboard.press("Escape")
            page.click("#open-results")
            page.wait_for_function("(row) => document.querySelector(row) && document"
                                   ".querySelector(row).textContent.includes('засчитан: "
                                   "принят (td,')", arg=row, timeout=PAGE_WAIT_MS)
            assert page.is_visible("#results-no-keys")
            settled_in_russian(page, "#results-dialog", "the results",
                               allowed=("CSV", "JSON", "Anna", "Boris", "td"))
            page.screenshot(path=str(folder / "results-accepted-ru.png"), full_page=True)

        # A second result, held, on the Russian page: why, in Russian.
        other = finished(tmp_path / "made2", "Anna", "Boris", name="match-2.jsonl",
                         key=load_or_create_key(tmp_path / "table-1-card"), table="table-1",
                         winner="right")
        with RunningHall(broker, tmp_path / "archive", None, password=PASSWORD) as hall:
            send(client, "table-1", other)
            second = f"table-1/{other.name}"
            until_results(hall, [name, second])
            page.goto(hall.base + "/")          # (another port: its own stored language)
            page.select_option("#language", "ru")
            page.click("#open-results")
            page.select_option("#results-round", "*")
            row = f'#results-body tr[data-journal="{second}"]'
            page.wait_for_selector(row, timeout=PAGE_WAIT_MS)
            assert "ждёт решения: зал запущен без --keys-dir: печати журнала проверить нечем" \
                in page.inner_text(row)
            assert page.inner_text(f"{row} button.accept") == "Засчитать"
            page.screenshot(path=str(folder / "results-held-ru.png"), full_page=True)
    finally:
        context.close()
        client.disconnect()
        client.loop_stop()

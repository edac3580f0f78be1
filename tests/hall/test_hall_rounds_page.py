"""The Results and Standings dialogs by round, in headless Chromium, in English and Russian (issue
32): with round 2 pushed while a round-1 match still plays, the round selector lists round 1 and
round 2; Round 2 lists only round 2's matches, and the table still on round 1 is "not started
yet", never round 2's "still playing"; a bye (no table, no journal) is a row of its round and a
won match in the standings; the pairings' player ids beside the names. The real hall and
Mosquitto; the results are real journals in the archive, sealed with the tables' key."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import hall_web_helpers as web
from export_helpers import KEY, play_journal
from hall_ru_helpers import settled_in_russian, shots
from hall_web_helpers import PAGE_WAIT_MS, RunningHall
from mqtt_helpers import Broker

PASSWORD = "s3cret"
EVENT = "Клубный вечер"
HEADER = "table,left,right,length,left_id,right_id\n"
# Round 1: table-1 played (Анна beat Борис), table-2 still on (Вера v Глеб), Дарья a bye.
ROUND_1 = HEADER + "table-1,Анна,Борис,5,17,23\ntable-2,Вера,Глеб,5,40,41\n,Дарья,,,51,\n"
# Round 2, pushed while table-2 plays round 1: table-1 played (Дарья beat Анна), Борис a bye.
ROUND_2 = HEADER + "table-1,Анна,Дарья,5,17,51\ntable-2,Глеб,Вера,5,41,40\n,Борис,,,23,\n"
PLAYED = [("1", "Анна", "Борис", "left"), ("2", "Анна", "Дарья", "right")]


def match_text(left: str, right: str, round_name: str) -> str:
    """A match file of EVENT's round: to 5, the players given."""
    return (f'[match]\nlength = 5\n\n[players]\nleft = "{left}"\nright = "{right}"\n\n'
            f'[event]\nname = "{EVENT}"\nround = "{round_name}"\n')


def archive_rounds(archive: Path) -> None:
    """Each match of table-1 played through the engine into the archive, sealed with KEY, won
    5-1 by WINNER (the score set by the arbiter, then a game forfeited)."""
    folder = archive / "table-1"
    folder.mkdir(parents=True)
    for round_name, left, right, winner in PLAYED:
        end = ("2 arbiter score 4 1\n3 arbiter forfeit right 1\n" if winner == "left"
               else "2 arbiter score 1 4\n3 arbiter forfeit left 1\n")
        play_journal(folder, match_text(left, right, round_name), f"1 tap left\n{end}10 end\n",
                     name=f"match-{round_name}.jsonl")


@pytest.fixture
def hall(broker: Broker, tmp_path: Path) -> Iterator[RunningHall]:  # noqa: F811
    archive_rounds(tmp_path / "archive")
    keys = tmp_path / "keys"
    keys.mkdir()
    for table in ("table-1", "table-2"):
        (keys / f"{table}.key").write_text(KEY.hex() + "\n", encoding="utf-8")
    other = web.table_client(broker, "table-2")
    with RunningHall(broker, tmp_path / "archive", keys, password=PASSWORD) as running:
        for round_name, text in (("1", ROUND_1), ("2", ROUND_2)):
            answer = running.post("/api/round", {"csv": text, "event": EVENT,
                                                 "round": round_name}, auth=PASSWORD)
            assert answer["errors"] == 0, answer
        # table-2's clock still on its round-1 match (Вера v Глеб, 3-2 to 5).
        web.publish(other, f"{web.P}/table-2/online", "1", retain=True)
        web.publish(other, f"{web.P}/table-2/state", web.clock_state(
            "table-2", players={"left": "Вера", "right": "Глеб"}, match_length=5,
            journal="match-1.jsonl"), retain=True)
        running.wait(lambda: len([r for r in running.get("/api/results.json", PASSWORD)
                                  ["results"] if r["counted"]]) == 4 and running.get(
            "/api/results.json", PASSWORD)["rounds"][1]["waiting"] != [],
            "the archived journals read, table-2 on round 1", timeout=30)
        try:
            yield running
        finally:
            other.disconnect()
            other.loop_stop()


def options(page: Any) -> list[str]:
    return [str(v) for v in page.eval_on_selector_all(
        "#results-round option", "(os) => os.map((o) => o.value)")]


def body_rows(page: Any) -> list[str]:
    return [str(t) for t in page.eval_on_selector_all(
        "#results-body tbody tr", "(rs) => rs.map((r) => r.getAttribute('data-journal') "
                                  "|| 'bye:' + r.getAttribute('data-bye'))")]


def test_the_round_selector_the_waiting_table_and_the_bye_in_both_languages(
        browser: Any, hall: RunningHall, tmp_path: Path) -> None:
    context = browser.new_context(viewport=web.DESKTOP,
                                  http_credentials={"username": "td", "password": PASSWORD})
    try:
        page = context.new_page()
        page.goto(hall.base + "/")
        folder = shots(tmp_path)
        page.click("#open-results")
        page.wait_for_selector("#results-body tbody tr", timeout=PAGE_WAIT_MS)
        # Both rounds listed; the last pushed shown first: only its matches and its bye.
        assert options(page) == ["*", "1", "2"]
        assert page.input_value("#results-round") == "2"
        assert body_rows(page) == ["table-1/match-2.jsonl", "bye:23"]
        status = page.inner_text("#results-status")
        assert "Round 2: 1 table has not started it yet." in status
        assert "still playing" not in status
        assert page.locator("#results-body ul.playing").count() == 0
        waiting = page.inner_text('#results-body ul.waiting li[data-table="table-2"]')
        assert "round 1 still playing there: Вера — Глеб, 3-2 to 5" in waiting
        bye = page.inner_text('#results-body tr[data-bye="23"]')
        assert "Борис #23 — bye" in bye and "no journal" in bye and "counted" in bye
        assert "Анна #17 — Дарья #51" in page.inner_text(
            '#results-body tr[data-journal="table-1/match-2.jsonl"]')
        page.screenshot(path=str(folder / "results-round-2-en.png"), full_page=True)

        # Round 1: its own rows, its bye, table-2 still playing it.
        page.select_option("#results-round", "1")
        page.wait_for_selector('#results-body tr[data-journal="table-1/match-1.jsonl"]',
                               timeout=PAGE_WAIT_MS)
        assert body_rows(page) == ["table-1/match-1.jsonl", "bye:51"]
        assert "Round 1: 1 table still playing." in page.inner_text("#results-status")
        assert "Вера — Глеб" in page.inner_text(
            '#results-body ul.playing li[data-table="table-2"]')
        page.screenshot(path=str(folder / "results-round-1-en.png"), full_page=True)

        page.select_option("#language", "ru")
        page.select_option("#results-round", "2")
        page.wait_for_function("() => document.querySelector('#results-status').textContent"
                               ".includes('Тур 2: ещё не начал 1 стол')", timeout=PAGE_WAIT_MS)
        assert "там ещё играют тур 1: Вера — Глеб, счёт 3-2 до 5" in page.inner_text(
            '#results-body ul.waiting li[data-table="table-2"]')
        bye = page.inner_text('#results-body tr[data-bye="23"]')
        assert "без соперника" in bye and "свободен от игры" in bye
        assert "Ещё не начали" in page.inner_text("#results-body")
        settled_in_russian(page, "#results-dialog", "the results by round",
                           allowed=("CSV", "JSON"))
        page.screenshot(path=str(folder / "results-round-2-ru.png"), full_page=True)
        page.keyboard.press("Escape")

        # Standings: each bye a won match with no points and no opponent.
        page.click("#open-standings")
        page.wait_for_selector('#standings-body tr[data-player-id="23"]', timeout=PAGE_WAIT_MS)
        borya = page.inner_text('#standings-body tr[data-player-id="23"]')
        assert "В без игры" in borya and "П 1-5" in borya
        settled_in_russian(page, "#standings-dialog", "the standings with byes",
                           allowed=("CSV", "JSON"))
        page.screenshot(path=str(folder / "standings-byes-ru.png"), full_page=True)
        page.select_option("#language", "en")
        page.wait_for_function("() => document.querySelector('#standings-body')"
                               ".textContent.includes('W bye')", timeout=PAGE_WAIT_MS)
        data = json.loads(page.evaluate("async () => JSON.stringify(await (await fetch("
                                        "'/api/standings.json')).json())"))
        # Дарья: the bye and 5-1 over Анна. Анна and Борис one win each (Борис's the bye):
        # Buchholz Анна 3 (Борис 1 + Дарья 2), Борис 1 (Анна; the bye adds nothing).
        assert [(p["rank"], p["player"], p["player_id"], p["score"], p["byes"], p["buchholz"])
                for p in data["players"]] == [
            (1, "Дарья", "51", 2, 1, 1), (2, "Анна", "17", 1, 0, 3), (3, "Борис", "23", 1, 1, 1)]
        darya = page.inner_text('#standings-body tr[data-player-id="51"]')
        assert "W bye" in darya and "W 5-1" in darya
        page.screenshot(path=str(folder / "standings-byes-en.png"), full_page=True)
        page.keyboard.press("Escape")

        # Pushing a round with a bye and a row whose id is not one: each said in its words.
        page.click("#open-round")
        page.fill("#round-event", EVENT)
        page.fill("#round-name", "3")
        page.fill("#round-csv", HEADER + "table-1,Анна,Глеб,5,17,=1\n,Вера,,,40,\n")
        page.click("#round-form button[type=submit]")
        page.wait_for_selector("#round-result table", timeout=PAGE_WAIT_MS)
        said = page.inner_text("#round-result")
        assert "1 pushed, 1 with errors" in said
        assert "bye: Вера (kept with the round; nothing goes to a table)" in said
        assert "line 2: '=1' is not a player id" in said
        page.select_option("#language", "ru")
        page.click("#round-form button[type=submit]")
        page.wait_for_function("() => document.querySelector('#round-result').textContent"
                               ".includes('свободен от игры: Вера')", timeout=PAGE_WAIT_MS)
        assert "строка 2: '=1' — не номер игрока" in page.inner_text("#round-result")
        page.screenshot(path=str(folder / "round-bye-ru.png"), full_page=True)
    finally:
        context.close()

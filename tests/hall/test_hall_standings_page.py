"""The event's standings served by the real hall (SPEC §14 "Results"): recomputed from the journals
in its archive (each a real journal played through the engine, with `[event] round`, never a
typed result), at `/api/standings.csv` and `/api/standings.json` under the page's password, and
the Standings table on the director's page in headless Chromium, in English and Russian, in the
event's format and the other. Also: a card's low-time style follows this browser's low-time mark
("warn under M:SS"), not a fixed minute."""

from __future__ import annotations

import base64
import csv
import io
import json
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import table_helpers
from export_helpers import KEY, play_journal
from hall_ru_helpers import VISIBLE_TEXT, no_english
from hall_web_helpers import (
    DESKTOP,
    PAGE_WAIT_MS,
    P,
    RunningHall,
    clock_state,
    publish,
    table_client,
)
from mqtt_helpers import Broker

PASSWORD = "s3cret"

# The four-player Swiss of test_hall_standings (computed there by hand): A, B (Sonneborn-Berger),
# D, C (Sonneborn-Berger). (round, table, left, right, left's score, right's score), to 5.
EVENT = [("1", "table-1", "A", "B", 5, 3), ("1", "table-2", "C", "D", 5, 1),
         ("2", "table-1", "A", "C", 5, 4), ("2", "table-2", "B", "D", 5, 2),
         ("3", "table-1", "D", "A", 5, 0), ("3", "table-2", "B", "C", 5, 2),
         ("3", "table-3", "Борис", "Clara", 2, 1),      # abandoned: listed, not counted
         ("1", "table-4", "Xena", "Yuri", 5, 2)]        # of another event (AUTUMN)
AUTUMN = "Autumn cup"

MATCH = table_helpers.MATCH + """\

[event]
name = "{event}"
round = "{round}"
"""


def archive_event(archive: Path) -> None:
    """Each match of EVENT played through the engine into its table's folder of the archive,
    as the hall stores a finished journal: the score corrected by the arbiter, then a game
    forfeited to end it at the score wanted (the last one abandoned instead)."""
    for round_name, table, left, right, ls, rs in EVENT:
        folder = archive / table
        folder.mkdir(parents=True, exist_ok=True)
        if ls < 5 and rs < 5:
            end = f"2 arbiter score {ls} {rs}\n3 arbiter abandon\n"
        elif ls > rs:
            end = f"2 arbiter score 4 {rs}\n3 arbiter forfeit right 1\n"
        else:
            end = f"2 arbiter score {ls} 4\n3 arbiter forfeit left 1\n"
        event = AUTUMN if table == "table-4" else "Club night"
        play_journal(folder, MATCH.format(left=left, right=right, round=round_name, event=event),
                     f"1 tap left\n{end}10 end\n", name=f"match-round-{round_name}.jsonl")


def get(hall: RunningHall, path: str, password: str | None = PASSWORD) -> tuple[str, str]:
    headers = {} if password is None else {
        "Authorization": "Basic " + base64.b64encode(f"td:{password}".encode()).decode()}
    request = urllib.request.Request(hall.base + path, headers=headers)
    with urllib.request.urlopen(request, timeout=20) as response:
        return response.headers["Content-Type"], response.read().decode("utf-8")


def push_event(hall: RunningHall) -> None:
    """Each round of EVENT pushed from the hall's page, as the director pushes them: the
    results count only as the pairings pushed to their tables."""
    rounds: dict[tuple[str, str], list[str]] = {}
    for round_name, table, left, right, _, _ in EVENT:
        event = AUTUMN if table == "table-4" else "Club night"
        rounds.setdefault((event, round_name), []).append(f"{table},{left},{right},5")
    for (event, round_name), lines in rounds.items():
        answer = hall.post("/api/round", {"csv": "table,left,right,length\n" + "\n".join(lines),
                                          "event": event, "round": round_name}, auth=PASSWORD)
        assert answer["errors"] == 0, answer


def table_keys(folder: Path) -> Path:
    """The keys folder holding each table's key (the journals' key, export_helpers.KEY)."""
    folder.mkdir()
    for table in {table for _, table, *_ in EVENT}:
        (folder / f"{table}.key").write_text(KEY.hex() + "\n", encoding="utf-8")
    return folder


@pytest.fixture
def hall(broker: Broker, tmp_path: Path) -> Iterator[RunningHall]:  # noqa: F811
    archive_event(tmp_path / "archive")
    with RunningHall(broker, tmp_path / "archive", table_keys(tmp_path / "keys"),
                     password=PASSWORD) as running:
        push_event(running)
        running.wait(lambda: len(json.loads(get(running, "/api/standings.json")[1])
                                 ["excluded"]) == 1 and len(json.loads(
                                     get(running, "/api/results.json")[1])["results"]) == 8,
                     "the archived journals read", timeout=30)
        yield running


def test_the_standings_endpoints_recompute_the_event_from_the_archive(
        hall: RunningHall) -> None:
    # The whole archive: both events' players; an event's own: its players only.
    data = json.loads(get(hall, "/api/standings.json")[1])
    assert (data["event"], data["events"]) == (None, [AUTUMN, "Club night"])
    assert {p["player"] for p in data["players"]} == {"A", "B", "C", "D", "Xena", "Yuri"}
    kind, text = get(hall, "/api/standings.csv?event=Club%20night")
    assert kind.startswith("text/csv")
    header, *body = list(csv.reader(io.StringIO(text)))
    assert header == ["rank", "player", "played", "wins", "draws", "losses", "score",
                      "points_for", "points_against", "point_difference", "buchholz",
                      "sonneborn_berger", "player_id", "round 1", "round 2", "round 3"]
    assert body == [
        ["1", "A", "3", "2", "0", "1", "2", "10", "12", "-2", "4", "3", "",
         "W 5-3 v B", "W 5-4 v C", "L 0-5 v D"],
        ["2", "B", "3", "2", "0", "1", "2", "13", "9", "4", "4", "2", "",
         "L 3-5 v A", "W 5-2 v D", "W 5-2 v C"],
        ["3", "D", "3", "1", "0", "2", "1", "8", "10", "-2", "5", "2", "",
         "L 1-5 v C", "L 2-5 v B", "W 5-0 v A"],
        ["4", "C", "3", "1", "0", "2", "1", "11", "11", "0", "5", "1", "",
         "W 5-1 v D", "L 4-5 v A", "L 2-5 v B"]]

    data = json.loads(get(hall, "/api/standings.json?format=round-robin&event=Club+night")[1])
    assert (data["format"], data["event_format"]) == ("round-robin", "swiss")
    # Round robin: A and B 2 wins, A beat B; C and D 1 win, C beat D.
    assert [(p["rank"], p["player"], p["decided_by"]) for p in data["players"]] == [
        (1, "A", ""), (2, "B", "head_to_head"), (3, "C", "score"), (4, "D", "head_to_head")]
    assert [(e["table"], e["code"]) for e in data["excluded"]] == [("table-3", "abandoned")]
    assert data["players"][0]["rounds"]["1"][0]["journal"] == "table-1/match-round-1.jsonl"
    # Behind the page's password, as /api/results.csv.
    for path in ("/api/standings.csv", "/api/standings.json"):
        with pytest.raises(urllib.error.HTTPError) as refused:
            get(hall, path, password=None)
        assert refused.value.code == 401
    for bad in ("format=knockout", "event=" + "x" * 121):
        with pytest.raises(urllib.error.HTTPError) as refused:
            get(hall, f"/api/standings.csv?{bad}")
        assert refused.value.code == 400


def test_the_standings_table_on_the_page_in_both_languages_and_formats(
        browser: Any, hall: RunningHall, tmp_path: Path) -> None:  # noqa: F811
    context = browser.new_context(viewport=DESKTOP, http_credentials={
        "username": "td", "password": PASSWORD})
    page = context.new_page()
    try:
        page.goto(hall.base + "/")
        page.click("#open-standings")
        page.wait_for_selector("#standings-body tr[data-player]", timeout=PAGE_WAIT_MS)
        # The archive holds two events: all of them first, then the director picks one.
        assert page.is_visible("#standings-event")
        assert page.locator("#standings-body tbody tr").count() == 6
        page.select_option("#standings-event", "=Club night")
        page.wait_for_function("() => document.querySelectorAll('#standings-body tbody tr')"
                               ".length === 4", timeout=PAGE_WAIT_MS)
        rows = page.locator("#standings-body tbody tr")
        assert [rows.nth(i).get_attribute("data-player") for i in range(4)] == \
            ["A", "B", "D", "C"]
        assert page.input_value("#standings-format") == "swiss"
        b = page.inner_text('#standings-body tr[data-player="B"]')
        assert "Sonneborn-Berger" in b and "13–9" in b and "+4" in b
        assert "L 3-5" in b and "W 5-2" in b
        status = page.inner_text("#standings-status")
        assert status.startswith("Places by wins, Buchholz, Sonneborn-Berger, point "
                                 "difference, head-to-head")
        head = page.inner_text("#standings-body thead")
        assert "Buch." in head and "Round 3" in head
        assert "table-3, round 3: match abandoned" in page.inner_text("#standings-body ul")
        assert page.get_attribute("#standings-dl-csv", "href") == \
            "/api/standings.csv?format=swiss&event=Club+night"
        page.screenshot(path=str(tmp_path / "standings-en.png"), full_page=True)

        page.select_option("#language", "ru")
        page.wait_for_function("() => document.querySelector('#standings-status').textContent"
                               ".startsWith('Места по: победы, Бухгольц')", timeout=PAGE_WAIT_MS)
        b = page.inner_text('#standings-body tr[data-player="B"]')
        assert "Зоннеборн — Бергер" in b and "П 3-5" in b and "В 5-2" in b
        assert "Тур 3" in page.inner_text("#standings-body thead")
        assert "table-3, тур 3: матч прерван судьёй" in page.inner_text("#standings-body ul")
        no_english(page.evaluate(VISIBLE_TEXT, page.query_selector("#standings-dialog")),
                   "the standings", allowed=("CSV", "JSON"))
        page.screenshot(path=str(tmp_path / "standings-ru.png"), full_page=True)

        page.select_option("#standings-format", "round-robin")
        page.wait_for_function("() => document.querySelector('#standings-status').textContent"
                               ".includes('Система турнира — швейцарская')", timeout=PAGE_WAIT_MS)
        rows = page.locator("#standings-body tbody tr")
        assert [rows.nth(i).get_attribute("data-player") for i in range(4)] == \
            ["A", "B", "C", "D"]
        assert "личная встреча" in page.inner_text('#standings-body tr[data-player="B"]')
        assert "Бух." not in page.inner_text("#standings-body thead")
        assert page.get_attribute("#standings-dl-csv", "href") == \
            "/api/standings.csv?format=round-robin&event=Club+night"
        assert page.locator("#standings-body tbody tr").count() == 4   # the event kept
        page.screenshot(path=str(tmp_path / "standings-ru-round-robin.png"), full_page=True)
    finally:
        context.close()


# --- the card's low-time style follows this browser's mark ---------------------------------------

def low(page: Any, side: str) -> bool:
    return bool(page.evaluate(
        f"() => document.querySelector('.reserve[data-table=\"table-1\"][data-side=\"{side}\"]')"
        ".classList.contains('low')"))


def mark(page: Any, text: str) -> None:
    page.fill("#low-time", text)
    page.dispatch_event("#low-time", "change")


def styled(page: Any, left: bool, right: bool) -> None:
    """Wait until the card's reserves are styled so (the page restyles them every 200 ms)."""
    page.wait_for_function(
        "([left, right]) => ['left', 'right'].every((side, i) => document.querySelector("
        "`.reserve[data-table=\"table-1\"][data-side=\"${side}\"]`).classList.contains('low')"
        " === [left, right][i])", arg=[left, right], timeout=PAGE_WAIT_MS)


def test_a_cards_low_time_style_follows_this_browsers_mark(
        browser: Any, broker: Broker, tmp_path: Path) -> None:  # noqa: F811
    table = table_client(broker, "table-1")
    publish(table, f"{P}/table-1/online", "1", retain=True)
    # Neither clock running: 1:30 and 0:45 stay as they are.
    publish(table, f"{P}/table-1/state", clock_state(running=None, phase="between_games",
                                                     left_ms=90_000, right_ms=45_000),
            retain=True)
    context = browser.new_context(viewport=DESKTOP)
    page = context.new_page()
    try:
        with RunningHall(broker, tmp_path / "archive") as hall:
            page.goto(hall.base + "/")
            page.wait_for_selector('.reserve[data-table="table-1"][data-side="left"]',
                                   timeout=PAGE_WAIT_MS)
            styled(page, left=False, right=True)              # the default mark, 1:00
            mark(page, "2:00")
            styled(page, left=True, right=True)               # 1:30 is under 2:00
            page.screenshot(path=str(tmp_path / "low-mark-2-00.png"))
            mark(page, "0:30")
            styled(page, left=False, right=False)             # 0:45 is not under 0:30
            page.reload()                                     # the browser remembers it
            page.wait_for_selector('.reserve[data-table="table-1"][data-side="left"]',
                                   timeout=PAGE_WAIT_MS)
            assert page.input_value("#low-time") == "0:30"
            styled(page, left=False, right=False)
            mark(page, "1:00")
            styled(page, left=False, right=True)
            mark(page, "0")                                   # off: no clock marked low
            styled(page, left=False, right=False)
            assert not low(page, "right")
    finally:
        context.close()
        table.disconnect()
        table.loop_stop()

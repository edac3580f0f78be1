"""Issue 32, the queued round on the director's page: six tables, five playing round 1 and one
ready, round 2 pushed from the page's dialog. The reply says "6 pushed: 1 loaded, 5 queued" (in
the page's language), each row what became of it, the five cards "round 2 queued" (not amber,
nothing "needs you"); a round pairing a table twice is refused whole, every duplicate line named;
a row with several problems names them all. In English and Russian, against a real Mosquitto
with the shipped ACL, the real hall and its page in a headless Chromium (the screenshots are
looked at); the ready table is a table's own account that answers its `match` as a clock does."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from gammonclock.hall import actions
from hall_ru_helpers import VISIBLE_TEXT, language_hall, no_english, shots
from hall_web_helpers import DESKTOP, PAGE_WAIT_MS, P, clock_state, iso, publish, table_client
from mqtt_helpers import Broker

VENUE_TABLES = tuple(f"table-{n}" for n in range(1, 7))
PLAYING = VENUE_TABLES[:5]
READY = "table-6"
ROUND_2 = "table,left,right,length\n" + "".join(
    f"{t},Игрок {n}a,Игрок {n}b,5\n" for n, t in enumerate(VENUE_TABLES, start=1))
TWICE = ("table,left,right,length\n"
         "table-1,Анна,Борис,5\n"
         "table-2,Вера,,0\n"
         "table-1,Глеб,Дина,5\n"
         "table-3,Ева,Жанна,5\n")
SAID = {
    "en": {"summary": "6 pushed: 1 loaded, 5 queued",
           "queued": "queued: loads when the match in progress is over", "loaded": "loaded",
           "card": "round 2 queued: Игрок 1a v Игрок 1b",
           "refused": "Nothing pushed: a table is paired twice. Fix the lines marked ✗ and push "
                      "again.",
           "twice": "line 2: table table-1 is paired on lines 2, 4: the round is not pushed",
           "both": "line 3: both players need a name (left, right); length '0' is not a match "
                   "length; use a number from 1 to 99",
           "replaced": "replaces the queued round 2 (Игрок 1a v Игрок 1b)",
           "fixed": "round 2 queued: Анна v Борис"},
    "ru": {"summary": "разослано: 6 (загружено: 1, в очереди: 5)",
           "queued": "в очереди: загрузится, когда закончится текущий матч", "loaded": "загружен",
           "card": "тур 2 в очереди: Игрок 1a — Игрок 1b",
           "refused": "Ничего не разослано: стол указан дважды. Исправьте строки, отмеченные ✗, "
                      "и разошлите снова.",
           "twice": "строка 2: стол table-1 указан в строках 2, 4: тур не разослан",
           "both": "строка 3: нужны имена обоих игроков (left, right); '0' — не длина матча; "
                   "укажите число от 1 до 99",
           "replaced": "заменяет тур 2 в очереди (Игрок 1a — Игрок 1b)",
           "fixed": "тур 2 в очереди: Анна — Борис"},
}


def _clock_that_loads(client: Any, table: str) -> None:
    """TABLE's account answers each `match` as a ready clock does: loaded, naming its sha256."""
    def on_message(_client: Any, _userdata: Any, message: Any) -> None:
        if message.payload:
            publish(client, f"{P}/{table}/notice", {
                "ok": True, "said": ["next match loaded"],
                "match": hashlib.sha256(message.payload).hexdigest(), "at": iso()})
    client.on_message = on_message
    client.subscribe(f"{P}/{table}/match", qos=1)


@pytest.mark.parametrize("language", ["en", "ru"])
def test_the_queued_round_on_the_cards_and_in_the_pushs_reply(
        browser: Any, venue_broker: Broker, tmp_path: Path, language: str,
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(actions, "NOTICE_WAIT_S", 20.0)
    said = SAID[language]
    clients = {t: table_client(venue_broker, t) for t in VENUE_TABLES}
    try:
        for n, (table, client) in enumerate(clients.items(), start=1):
            publish(client, f"{P}/{table}/online", "1", retain=True)
            lifecycle = "ready" if table == READY else "in_progress"
            publish(client, f"{P}/{table}/state", clock_state(
                table, lifecycle=lifecycle, players={"left": f"Игрок {n}", "right": f"Игрок {n}x"},
                **({"phase": "between_games", "game": 1, "running": None} if table == READY
                   else {})), retain=True)
        _clock_that_loads(clients[READY], READY)
        with language_hall(venue_broker, tmp_path, language) as hall:
            page = browser.new_page(viewport=DESKTOP)
            try:
                page.goto(hall.base + "/")
                page.wait_for_function(
                    f"document.querySelectorAll('.card').length === {len(VENUE_TABLES)}",
                    timeout=PAGE_WAIT_MS)
                page.click("#open-round")
                page.wait_for_selector("#round-dialog[open]", timeout=PAGE_WAIT_MS)
                page.fill("#round-name", "2")
                page.fill("#round-csv", ROUND_2)
                page.click("#round-form button[type=submit]")
                page.wait_for_selector("#round-result table", timeout=PAGE_WAIT_MS)
                assert page.inner_text("#round-result .round-summary") == said["summary"]
                cells = page.eval_on_selector_all(
                    "#round-result tr td:nth-child(3)",
                    "tds => tds.map(td => [td.dataset.delivery, td.firstChild.textContent])")
                assert cells == [["queued", said["queued"]]] * 5 + [["loaded", said["loaded"]]]
                if language == "ru":
                    no_english(page.evaluate(VISIBLE_TEXT, page.query_selector("#round-result")),
                               "the push's reply")
                page.screenshot(path=str(shots(tmp_path) / f"hall-{language}-round-queued.png"))
                page.keyboard.press("Escape")

                # The five playing tables' cards: round 2 queued, not amber, nothing needed.
                page.wait_for_function(
                    "document.querySelectorAll('.card .queued').length === 5",
                    timeout=PAGE_WAIT_MS)
                assert page.inner_text('.card[data-table="table-1"] .queued') == said["card"]
                for table in PLAYING:
                    card = page.query_selector(f'.card[data-table="{table}"]')
                    assert card is not None
                    classes = card.get_attribute("class") or ""
                    assert "need-amber" not in classes and "need-red" not in classes, classes
                    assert card.query_selector(".needs") is None
                    assert hall.card(table)["queued"]["status"] == "held"
                assert page.query_selector(f'.card[data-table="{READY}"] .queued') is None
                counts = page.inner_text("#counts")
                assert ("0 need you" if language == "en" else "0 ждут вас") in counts, \
                    counts
                if language == "ru":
                    no_english(page.evaluate(VISIBLE_TEXT, page.query_selector("#cards")),
                               "the cards", allowed=("Spring Open", "a", "b", "x"))
                page.screenshot(path=str(shots(tmp_path) / f"hall-{language}-cards-queued.png"))

                # A table paired twice: nothing pushed, both lines named; every problem said.
                page.click("#open-round")
                page.wait_for_selector("#round-dialog[open]", timeout=PAGE_WAIT_MS)
                page.fill("#round-name", "3")
                page.fill("#round-csv", TWICE)
                page.click("#round-form button[type=submit]")
                page.wait_for_function(
                    "document.querySelector('#round-result .round-summary') && document"
                    f".querySelector('#round-result .round-summary').textContent === "
                    f"{json.dumps(said['refused'])}", timeout=PAGE_WAIT_MS)
                rows = page.eval_on_selector_all("#round-result tr td:nth-child(3)",
                                                  "tds => tds.map(td => td.textContent)")
                assert rows[0] == said["twice"] and rows[2] == said["twice"].replace(
                    "line 2:" if language == "en" else "строка 2:",
                    "line 4:" if language == "en" else "строка 4:"), rows
                assert rows[1] == said["both"], rows
                assert [r.startswith(("line 5:", "строка 5:")) for r in rows] == [
                    False, False, False, True]
                assert hall.card("table-1")["queued"]["round"] == "2"   # not replaced
                if language == "ru":
                    no_english(page.evaluate(VISIBLE_TEXT, page.query_selector("#round-result")),
                               "the refused round", allowed=("left", "right"))
                page.screenshot(path=str(shots(tmp_path) / f"hall-{language}-round-twice.png"))

                # Round 2 pushed again with table-1's pairing fixed: it replaces the queued one.
                page.fill("#round-name", "2")
                page.fill("#round-csv", "table,left,right,length\ntable-1,Анна,Борис,5\n")
                page.click("#round-form button[type=submit]")
                page.wait_for_function(
                    "document.querySelectorAll('#round-result tr').length === 1",
                    timeout=PAGE_WAIT_MS)
                [row] = page.eval_on_selector_all("#round-result tr td:nth-child(3)",
                                                  "tds => tds.map(td => td.textContent)")
                assert row == f"{said['queued']}; {said['replaced']}", row
                assert hall.card("table-1")["queued"]["right"] == "Борис"
                page.wait_for_function(
                    "document.querySelector('.card[data-table=\"table-1\"] .queued')"
                    f".textContent === {json.dumps(said['fixed'])}", timeout=PAGE_WAIT_MS)
            finally:
                page.close()
    finally:
        for client in clients.values():
            client.disconnect()
            client.loop_stop()

"""The director's page shows a table whose match moved to another clock (SPEC §13.5, issue 31):
its state (`end_reason` "moved", `moved_to` the table) is kept, not refused as bad, and the card
says "moved to table-9" where it said "match over" (English and Russian, in headless Chromium);
a `moved_to` that is no table id spoils only that table's card. The spectators' view says it
moved, never a draw."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from gammonclock.hall.public import public_view
from gammonclock.hall.view import HallView, Rejected
from hall_ru_helpers import language_hall, no_english, shots
from hall_web_helpers import PAGE_WAIT_MS, P, clock_state, iso, open_page, publish, table_client
from mqtt_helpers import Broker
from public_helpers import PublicBroker, PublicHall

MOVED = {"phase": "match_over", "running": None, "lifecycle": "match_over", "winner": None,
         "end_reason": "moved", "moved_to": "table-9", "game": 2}


def moved_state(table: str = "table-1", **over: Any) -> dict[str, Any]:
    return clock_state(table, **{**MOVED, **over})


def test_the_hall_keeps_where_a_match_went() -> None:
    view = HallView(P)
    view.receive(f"{P}/table-1/state", json.dumps(moved_state()).encode(), 1_000, True)
    card = view.card("table-1")
    assert (card["state"]["end_reason"], card["state"]["moved_to"]) == ("moved", "table-9")
    assert card["bad_messages"] == 0


@pytest.mark.parametrize("where", ["table 9", "<img src=x onerror=alert(1)>", "t" * 33, 9, ""])
def test_a_moved_to_that_is_no_table_spoils_only_its_card(where: object) -> None:
    view = HallView(P)
    view.receive(f"{P}/table-2/state", json.dumps(moved_state("table-2")).encode(), 1_000, True)
    honest = json.dumps(view.card("table-2"))
    with pytest.raises(Rejected):
        view.receive(f"{P}/table-1/state", json.dumps(moved_state(moved_to=where)).encode(),
                     2_000, True)
    assert view.card("table-1")["bad_messages"] == 1
    assert json.dumps(view.card("table-2")) == honest


def _said(page: Any, table: str) -> tuple[str, str]:
    """The card's phase and its tag of where the match went, as written (the CSS capitalises
    the phase)."""
    card = f'.card[data-table="{table}"]'
    page.wait_for_selector(f"{card} .tag.moved", timeout=PAGE_WAIT_MS)
    return (str(page.text_content(f"{card} .phase")),
            str(page.text_content(f"{card} .tag.moved")))


@pytest.mark.parametrize("language", ["en", "ru"])
def test_the_card_says_where_the_match_went(browser: Any, broker: Broker, tmp_path: Path,
                                            language: str) -> None:
    client = table_client(broker, "table-1")
    other = table_client(broker, "table-2")
    try:
        with language_hall(broker, tmp_path, language) as hall:
            publish(client, f"{P}/table-1/online", "1", retain=True)
            publish(client, f"{P}/table-1/state", moved_state(), retain=True)
            publish(other, f"{P}/table-2/online", "1", retain=True)
            publish(other, f"{P}/table-2/state",      # said at the panels: no table
                    moved_state("table-2", moved_to=None, at=iso()), retain=True)
            page = open_page(browser, hall)
            page.wait_for_function("document.querySelectorAll('.card').length === 2",
                                   timeout=PAGE_WAIT_MS)
            said = {"en": (("moved", "moved to table-9"), ("moved", "moved to another clock")),
                    "ru": (("перенесён", "матч перенесён на стол table-9"),
                           ("перенесён", "матч перенесён на другие часы"))}
            assert (_said(page, "table-1"), _said(page, "table-2")) == said[language]
            # Nothing of the card runs past its edge (the phase beside the table's name).
            assert page.eval_on_selector_all(
                ".card", "cs => cs.every(c => c.scrollWidth <= c.clientWidth)")
            page.screenshot(path=str(shots(tmp_path) / f"hall-moved-{language}.png"))
            if language == "ru":
                no_english(str(page.text_content(".cards")), "the moved cards",
                           allowed=("Spring Open", "Anna", "Boris"))
            page.close()
    finally:
        for c in (client, other):
            c.disconnect()
            c.loop_stop()


def test_spectators_see_it_moved_not_a_draw(browser: Any, broker: Broker, public: PublicBroker,
                                            tmp_path: Path) -> None:
    view = public_view("table-1", True, moved_state(), 1_000)
    assert view["end_reason"] == "moved" and view["winner"] is None
    client = table_client(broker, "table-1")
    try:
        with PublicHall(broker, public, tmp_path / "archive") as hall:
            publish(client, f"{P}/table-1/online", "1", retain=True)
            publish(client, f"{P}/table-1/state", moved_state(), retain=True)
            for lang, moved, draw in (("en", "moved to another table", "no winner"),
                                      ("ru", "перенесён на другой стол", "без победителя")):
                page = browser.new_page()
                page.goto(hall.base + f"/public?lang={lang}")
                page.wait_for_selector('.table[data-view="table-1"]', timeout=PAGE_WAIT_MS)
                text = page.inner_text('.table[data-view="table-1"]')
                assert moved in text and draw not in text.lower(), text
                page.screenshot(path=str(shots(tmp_path) / f"public-moved-{lang}.png"))
                page.close()
    finally:
        client.disconnect()
        client.loop_stop()

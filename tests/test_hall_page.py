"""The director's page in a real headless Chromium (Debian's, driven by Playwright; its own
browser downloads are never used): cards appear, the running reserve ticks, a flag shows within
a second, a command is sent from a card, and the page fits a phone. Clock states are published
straight to a real Mosquitto, as a clock would."""

from __future__ import annotations

import json
import os
import shutil
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from mqtt_helpers import Broker, broker  # noqa: F401  (the fixture)
from test_hall_web import P, RunningHall, clock_state, publish, table_client

CHROMIUM = "/usr/bin/chromium"
PHONE = {"width": 390, "height": 844}
DESKTOP = {"width": 1280, "height": 800}


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    found = shutil.which("chromium") or (CHROMIUM if os.path.exists(CHROMIUM) else None)
    if found is None:
        pytest.fail("chromium is not installed: run scripts/test-deps", pytrace=False)
    from playwright.sync_api import sync_playwright
    with sync_playwright() as p:
        launched = p.chromium.launch(executable_path=found, args=["--no-sandbox"])
        yield launched
        launched.close()


@pytest.fixture
def hall(broker: Broker, tmp_path: Path) -> Iterator[RunningHall]:  # noqa: F811
    with RunningHall(broker, tmp_path / "archive") as running:
        yield running


@pytest.fixture
def table(broker: Broker) -> Iterator[Any]:  # noqa: F811
    client = table_client(broker, "table-1")
    yield client
    client.disconnect()
    client.loop_stop()


def open_page(browser: Any, hall: RunningHall, viewport: dict[str, int] = DESKTOP) -> Any:
    page = browser.new_page(viewport=viewport)
    page.goto(hall.base + "/")
    return page


def reserve(page: Any, table: str, side: str) -> str:
    return str(page.inner_text(f'.card[data-table="{table}"] .reserve[data-side="{side}"]'))


def seconds(clock: str) -> int:
    """A reserve as the page shows it ("9:59", "1:02:03") in seconds (text compares "9:59" above
    "10:00")."""
    total = 0
    for part in clock.split(":"):
        total = total * 60 + int(part)
    return total


def test_cards_appear_and_the_running_reserve_ticks(browser: Any, hall: RunningHall,
                                                    table: Any) -> None:
    publish(table, f"{P}/table-1/online", "1", retain=True)
    publish(table, f"{P}/table-1/state", clock_state(left_ms=600_000, right_ms=540_000),
            retain=True)
    page = open_page(browser, hall)
    try:
        page.wait_for_selector('.card[data-table="table-1"]', timeout=5000)
        card = page.inner_text('.card[data-table="table-1"]')
        assert "Anna" in card and "Boris" in card and "to 7" in card
        first = reserve(page, "table-1", "left")
        # Counted from the state's instant: a page slow to open (a loaded machine) has lost
        # a few seconds, never more, and never shows more than the state's 10:00.
        assert 590 <= seconds(first) <= 600, first
        page.wait_for_function(
            """first => document.querySelector(
                 '.card[data-table="table-1"] .reserve[data-side="left"]').textContent !== first""",
            arg=first, timeout=3000)
        assert seconds(reserve(page, "table-1", "left")) < seconds(first)   # it counts down
        assert reserve(page, "table-1", "right") == "9:00"   # the waiting side does not
    finally:
        page.close()


def test_an_offline_table_shows_nobody_on_the_clock(browser: Any, hall: RunningHall,
                                                    table: Any) -> None:
    publish(table, f"{P}/table-1/state", clock_state(left_ms=600_000, right_ms=540_000),
            retain=True)
    publish(table, f"{P}/table-1/online", "0", retain=True)
    page = open_page(browser, hall)
    try:
        page.wait_for_selector('.card[data-table="table-1"].offline', timeout=5000)
        assert page.query_selector_all('.card[data-table="table-1"] .running') == []
        assert "offline" in page.inner_text('.card[data-table="table-1"]')
    finally:
        page.close()


def test_a_flag_shows_within_a_second_and_comes_first(browser: Any, hall: RunningHall,
                                                      broker: Broker) -> None:  # noqa: F811
    clients = [table_client(broker, t) for t in ("table-1", "table-2")]
    try:
        for client, name in zip(clients, ("table-1", "table-2")):
            publish(client, f"{P}/{name}/state", clock_state(name), retain=True)
        page = open_page(browser, hall)
        page.wait_for_selector('.card[data-table="table-2"]', timeout=5000)
        assert page.eval_on_selector_all(".card", "cs => cs.map(c => c.dataset.table)") == [
            "table-1", "table-2"]
        publish(clients[1], f"{P}/table-2/state",
                clock_state("table-2", phase="match_over", running=None, flag="left",
                            left_ms=0))
        page.wait_for_selector('.card[data-table="table-2"] .need[data-kind="flag"]',
                               timeout=1000)
        assert page.eval_on_selector_all(".card", "cs => cs.map(c => c.dataset.table)") == [
            "table-2", "table-1"]
        assert "Anna" in page.inner_text('.card[data-table="table-2"] .need')
        page.close()
    finally:
        for client in clients:
            client.disconnect()
            client.loop_stop()


def test_a_command_from_a_card_shows_its_reply(browser: Any, hall: RunningHall,
                                               table: Any) -> None:
    def answer(client: Any, _userdata: Any, msg: Any) -> None:
        request = json.loads(msg.payload)
        client.publish(f"{P}/table-1/cmd/reply", json.dumps(
            {"id": request["id"], "ok": True, "outcome": f"done: {request['command']}"}), qos=1)

    table.on_message = answer
    table.subscribe(f"{P}/table-1/cmd", qos=1)
    publish(table, f"{P}/table-1/state", clock_state(), retain=True)
    page = open_page(browser, hall, PHONE)
    try:
        page.click('.card[data-table="table-1"]')
        page.fill("#cmd-input", "deduct left 30s")
        page.click("#cmd-form button[type=submit]")
        page.wait_for_selector("#cmd-result.ok", timeout=5000)
        assert page.inner_text("#cmd-result") == "✓ done: deduct left 30s"
    finally:
        page.close()


def _hall_of_tables(broker: Broker) -> list[Any]:  # noqa: F811
    """Eight tables in every situation the page shows (for the screenshots)."""
    accounts = [f"table-{n}" for n in range(3, 11)]
    for name in accounts:
        broker.add_account(name)
    clients = [broker.client(name) for name in accounts]
    names = [("Anna", "Boris"), ("Chen", "Dora"), ("Елена", "Фёдор"), ("Gus", "Hana"),
             ("Ivo", "Jana"), ("Kai", "Lena"), ("Mo", "Nils"), ("Olga", "Pavel")]
    variants: list[dict[str, Any]] = [
        {}, {"running": "right", "left_ms": 302_000, "right_ms": 45_000},
        {"phase": "paused", "running": None}, {"phase": "break", "running": "left"},
        {"phase": "match_over", "running": None, "flag": "right", "right_ms": 0},
        {"phase": "between_games", "running": None, "crawford_game": True,
         "score": {"left": 6, "right": 4}},
        {"phase": "cube_offered", "running": "right"}, {}]
    for client, name, (left, right), variant in zip(clients, accounts, names, variants):
        publish(client, f"{P}/{name}/online", "1", retain=True)
        publish(client, f"{P}/{name}/state",
                clock_state(name, **{"players": {"left": left, "right": right}, **variant}),
                retain=True)
    publish(clients[-1], f"{P}/table-10/online", "0", retain=True)
    return clients


def test_the_page_fits_a_phone_and_a_desktop(browser: Any, hall: RunningHall,
                                            broker: Broker, tmp_path: Path) -> None:  # noqa: F811
    shots = Path(os.environ.get("GAMMONCLOCK_SCREENSHOTS", tmp_path))
    shots.mkdir(parents=True, exist_ok=True)
    clients = _hall_of_tables(broker)
    try:
        for label, viewport in (("desktop", DESKTOP), ("phone", PHONE)):
            page = open_page(browser, hall, viewport)
            page.wait_for_function("document.querySelectorAll('.card').length === 8",
                                   timeout=5000)
            time.sleep(0.3)                         # a few ticks of the reserves
            page.screenshot(path=str(shots / f"hall-{label}.png"), full_page=label == "phone")
            width = page.evaluate("document.documentElement.scrollWidth")
            assert width <= viewport["width"], f"{label}: the page scrolls sideways"
            if label == "phone":
                heights = page.eval_on_selector_all(
                    ".bar button", "bs => bs.map(b => b.getBoundingClientRect().height)")
                assert heights and min(heights) >= 44      # big enough for a thumb
            order = page.eval_on_selector_all(".card", "cs => cs.map(c => c.dataset.table)")
            assert order[0] == "table-7"                    # the flag first
            page.close()
    finally:
        for client in clients:
            client.disconnect()
            client.loop_stop()

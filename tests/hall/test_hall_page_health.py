"""The fleet's health on the director's page (issue 24), in a real headless Chromium: each table's
card shows its figures and marks a supply that sags, a card nearly full or slow, a wall clock not
synchronised, a version other than most tables', and a health that has gone stale; in English
and in Russian. States and healths are published to a real Mosquitto, as the clocks would."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hall_web_helpers import DESKTOP, PAGE_WAIT_MS, P, RunningHall, clock_state, open_page, publish
from health_helpers import health
from mqtt_helpers import Broker

SYNCED = {"synchronized": True, "source": "systemd-timesyncd 10.0.0.2"}

# table -> (players, health): one table in each situation the card shows.
FLEET: dict[str, tuple[tuple[str, str], dict[str, Any]]] = {
    "table-1": (("Anna", "Boris"), health("pi4", clock=SYNCED, fsync_p99_ms=3.1)),
    "table-2": (("Chen", "Dora"), health("pi5", fsync_p99_ms=6.4, fsyncs_in_hour=760)),   # sags now
    "table-3": (("Елена", "Фёдор"), health("pi3", disk={"free_bytes": 150_000_000,
                                                         "total_bytes": 15_900_000_000})),
    "table-4": (("Gus", "Hana"), health("pi4", fsync_p99_ms=121.0, version="0.0.9")),
    "table-5": (("Ivo", "Jana"), health("pi4", pi=None, throttled=None, cpu_temp_c=None,
                                        clock={"synchronized": None, "source": None},
                                        fsync_p99_ms=0.8)),
}
EXPECTED = {"table-1": "", "table-2": "supply hot", "table-3": "supply card_full",
            "table-4": "slow clock version", "table-5": ""}


@pytest.fixture
def fleet(broker: Broker) -> Iterator[None]:  # noqa: F811
    clients = []
    for table, ((left, right), data) in FLEET.items():
        broker.add_account(table)
        client = broker.client(table)
        clients.append(client)
        publish(client, f"{P}/{table}/online", "1", retain=True)
        publish(client, f"{P}/{table}/state",
                clock_state(table, players={"left": left, "right": right}), retain=True)
        publish(client, f"{P}/{table}/health", data, retain=True)
    yield
    for client in clients:
        client.disconnect()
        client.loop_stop()


def marks_of(page: Any) -> dict[str, str]:
    return dict(page.eval_on_selector_all(
        ".card", "cs => cs.map(c => [c.dataset.table, "
                 "(c.querySelector('.health') || {dataset: {marks: null}}).dataset.marks])"))


def wait_for_fleet(page: Any) -> None:
    page.wait_for_function("document.querySelectorAll('.card .health').length === 5",
                           timeout=PAGE_WAIT_MS)


def test_each_card_shows_its_health_and_its_marks(browser: Any, hall: RunningHall,  # noqa: F811
                                                  fleet: None, tmp_path: Path) -> None:
    shots = Path(os.environ.get("GAMMONCLOCK_SCREENSHOTS", tmp_path))
    shots.mkdir(parents=True, exist_ok=True)
    page = open_page(browser, hall, DESKTOP)
    try:
        wait_for_fleet(page)
        assert marks_of(page) == EXPECTED
        card = lambda t: page.inner_text(f'.card[data-table="{t}"] .health')  # noqa: E731
        assert "47.7" not in card("table-1") and "48 °C" in card("table-1")
        assert "time ✓" in card("table-1") and "v0.1.0" in card("table-1")
        # The journal's sync is an fdatasync since issue 20: the words say "sync", not "fsync".
        assert "sync 3.1 ms" in card("table-1") and "fsync" not in card("table-1")
        assert "under-voltage now" in card("table-2")
        assert "under-voltage since boot" in card("table-3")
        assert "card nearly full: 150 MB free" in card("table-3")
        assert "slow card: journal sync 121 ms" in card("table-4")
        assert "wall clock not synchronised" in card("table-4")
        assert "version 0.0.9 (most: 0.1.0)" in card("table-4")
        assert "not a Pi" in card("table-5") and "time ?" in card("table-5")
        red = "n => n.classList.contains('red')"      # sags now: red; only since boot: amber
        assert page.eval_on_selector('.card[data-table="table-2"] .hmark[data-mark="supply"]', red)
        assert not page.eval_on_selector(
            '.card[data-table="table-3"] .hmark[data-mark="supply"]', red)
        page.screenshot(path=str(shots / "hall-health.png"))
        page.click('.card[data-table="table-2"]')
        page.wait_for_selector("#table-dialog[open] .hline")
        dialog = page.inner_text("#td-body")
        assert "Board: Raspberry Pi 5 Model B Rev 1.0" in dialog
        assert "0x50005: now under-voltage, throttled; since boot under-voltage, throttled" \
            in dialog
        assert "Wall clock: synchronised (chrony 10.0.0.2)" in dialog
        assert "Journal sync: p99 6.4 ms over the last hour (760 syncs)" in dialog
        assert "fsync" not in dialog
        page.screenshot(path=str(shots / "hall-health-dialog.png"))
    finally:
        page.close()


def test_in_russian(browser: Any, hall: RunningHall, fleet: None,  # noqa: F811
                    tmp_path: Path) -> None:
    shots = Path(os.environ.get("GAMMONCLOCK_SCREENSHOTS", tmp_path))
    page = open_page(browser, hall, DESKTOP)
    try:
        wait_for_fleet(page)
        page.select_option("#language", "ru")
        page.wait_for_function("document.documentElement.lang === 'ru'")
        card = lambda t: page.inner_text(f'.card[data-table="{t}"] .health')  # noqa: E731
        assert "пониженное напряжение сейчас" in card("table-2")
        assert "карта почти заполнена: свободно 150 МБ" in card("table-3")
        assert "медленная карта: запись журнала 121 мс" in card("table-4")
        # Figures with a decimal comma, as the panels write Russian (words.number); a version
        # is no figure and keeps its dots.
        assert "запись 3,1 мс" in card("table-1") and "fsync" not in card("table-1")
        assert "свободно 3,1 ГБ" in card("table-1") and "3.1" not in card("table-1")
        assert "часы не синхронизированы" in card("table-4")
        assert "версия 0.0.9 (у большинства 0.1.0)" in card("table-4")
        assert "не Raspberry Pi" in card("table-5")
        page.screenshot(path=str(shots / "hall-health-ru.png"))
        page.click('.card[data-table="table-2"]')
        page.wait_for_selector("#table-dialog[open] .hline")
        dialog = page.inner_text("#td-body")
        assert "p99 6,4 мс" in dialog and "3,1 ГБ" in dialog and "6.4" not in dialog, dialog
        assert "(760 синхронизаций)" in dialog, dialog          # the count's plural form
    finally:
        page.close()


def test_a_health_older_than_3_minutes_is_marked_stale(browser: Any, hall: RunningHall,  # noqa: F811
                                                       fleet: None, tmp_path: Path) -> None:
    page = browser.new_page(viewport=DESKTOP)
    try:
        page.clock.install()                 # the page's own clock, moved on below
        page.goto(hall.base + "/")
        wait_for_fleet(page)
        assert "stale" not in marks_of(page)["table-1"]
        page.clock.fast_forward("02:30")
        kinds = "t => healthMarks(cards.get(t)).map(m => m[0])"
        assert "stale" not in page.evaluate(kinds, "table-1")
        page.clock.fast_forward("01:00")     # 3.5 minutes since the healths came
        page.wait_for_function(
            "document.querySelector('.card[data-table=\"table-1\"] .health')"
            ".dataset.marks.includes('stale')", timeout=PAGE_WAIT_MS)
        assert all("stale" in marks.split() for marks in marks_of(page).values())
        assert "no health for 3 min" in page.inner_text('.card[data-table="table-1"] .health')
        page.screenshot(path=str(Path(os.environ.get("GAMMONCLOCK_SCREENSHOTS", tmp_path))
                                 / "hall-health-stale.png"))
    finally:
        page.close()

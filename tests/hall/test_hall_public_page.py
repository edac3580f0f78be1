"""The spectators' pages in a real headless Chromium (Debian's, driven by Playwright), reading
a real spectators' Mosquitto over WebSockets: /public shows every table live (the running
reserve ticks), in Russian with ?lang=ru; /overlay/TABLE is transparent around its panel; and
what the page takes from the broker is bounded (a view too long, not JSON, of the wrong shape,
or one table too many changes nothing else). Screenshots land in the test's folder."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from gammonclock.hall.public import PublicClient, public_root
from hall_web_helpers import PAGE_WAIT_MS, P, clock_state, publish, seconds, table_client
from mqtt_helpers import Broker
from public_helpers import PublicBroker, PublicHall, Spectator

ROOT = public_root(P)

PHONE = {"width": 390, "height": 844}
FULL_HD = {"width": 1920, "height": 1080}


@pytest.fixture
def tables(broker: Broker) -> Iterator[list[Any]]:  # noqa: F811
    clients = [table_client(broker, name) for name in ("table-1", "table-2")]
    yield clients
    for client in clients:
        client.disconnect()
        client.loop_stop()


@pytest.fixture
def hall(broker: Broker, public: PublicBroker,  # noqa: F811
         tmp_path: Path) -> Iterator[PublicHall]:
    with PublicHall(broker, public, tmp_path / "archive") as running:
        yield running


def play(tables: list[Any]) -> None:
    """Two tables: a Latin match with the cube on the right, a Cyrillic one at Crawford."""
    one, two = tables
    publish(one, f"{P}/table-1/online", "1", retain=True)
    publish(one, f"{P}/table-1/state", clock_state("table-1", left_ms=600_000,
                                                   right_ms=540_000), retain=True)
    publish(two, f"{P}/table-2/online", "1", retain=True)
    publish(two, f"{P}/table-2/state", clock_state(
        "table-2", running="right", left_ms=412_000, right_ms=45_000, crawford_game=True,
        players={"left": "Ильдар", "right": "Мария"}, event="Кубок Москвы",
        score={"left": 6, "right": 4}, cube={"value": 1, "owner": None, "enabled": True},
        clock={"left": {"reserve_ms": 412_000}, "right": {"reserve_ms": 45_000,
                                                          "delay_ms": 8_000}}), retain=True)


def test_the_public_page_shows_every_table_live(browser: Any, hall: PublicHall,  # noqa: F811
                                                tables: list[Any], tmp_path: Path) -> None:
    play(tables)
    page = browser.new_page(viewport=PHONE)
    try:
        page.goto(hall.base + "/public")
        page.wait_for_selector('.table[data-view="table-2"]', timeout=PAGE_WAIT_MS)
        page.wait_for_selector('body[data-status="connected"]', timeout=PAGE_WAIT_MS)
        one = page.inner_text('.table[data-view="table-1"]')
        assert "Anna" in one and "Boris" in one and "to 7" in one and "game 2" in one
        # The cube is the owner's: by the right player's name.
        assert page.inner_text('.table[data-view="table-1"] .row[data-side="right"] .cube') == "2"
        two = page.inner_text('.table[data-view="table-2"]')
        assert "Ильдар" in two and "Мария" in two and "Crawford" in two
        first = reserve_of(page, "table-1", "left")
        assert 590 <= seconds(first) <= 600, first
        page.wait_for_function(
            """first => document.querySelector('.table[data-view="table-1"] '
                 + '.reserve[data-side="left"]').textContent !== first""", arg=first,
            timeout=PAGE_WAIT_MS)
        assert reserve_of(page, "table-1", "right") == "9:00"       # the waiting side
        # Its delay first, then the reserve: the running side inside its 8 s delay.
        assert reserve_of(page, "table-2", "right") == "0:45"
        assert page.inner_text(
            '.table[data-view="table-2"] .row[data-side="right"] .delay').startswith("+")
        page.screenshot(path=str(tmp_path / "public-en.png"), full_page=True)
        # A press at table 1: the right player's turn, on the page (bench_public times it).
        publish(tables[0], f"{P}/table-1/state", clock_state(
            "table-1", seq=6, running="right", left_ms=580_000, right_ms=540_000))
        page.wait_for_selector('.table[data-view="table-1"] .row.running[data-side="right"]',
                               timeout=PAGE_WAIT_MS)
        assert reserve_of(page, "table-1", "left") == "9:40"
    finally:
        page.close()


def test_the_public_page_in_russian(browser: Any, hall: PublicHall,  # noqa: F811
                                    tables: list[Any], tmp_path: Path) -> None:
    play(tables)
    page = browser.new_page(viewport=PHONE)
    try:
        page.goto(hall.base + "/public?lang=ru")
        page.wait_for_selector('.table[data-view="table-2"]', timeout=PAGE_WAIT_MS)
        page.wait_for_selector('body[data-status="connected"]', timeout=PAGE_WAIT_MS)
        assert page.evaluate("document.documentElement.lang") == "ru"
        two = page.inner_text('.table[data-view="table-2"]')
        assert "идёт игра" in two and "до 7" in two and "Кроуфорд" in two
        assert "2 стола" in page.inner_text("#counts")
        assert page.inner_text("#status") == "в эфире"
        page.screenshot(path=str(tmp_path / "public-ru.png"), full_page=True)
    finally:
        page.close()


def test_the_overlay_is_transparent_around_its_panel(browser: Any, hall: PublicHall,  # noqa: F811
                                                     tables: list[Any], tmp_path: Path) -> None:
    from PIL import Image
    play(tables)
    page = browser.new_page(viewport=FULL_HD)
    try:
        for table, lang in (("table-1", "en"), ("table-2", "ru")):
            page.goto(f"{hall.base}/overlay/{table}?lang={lang}")
            page.wait_for_selector(f'.panel[data-view="{table}"]', timeout=PAGE_WAIT_MS)
            text = page.inner_text(".panel")
            assert ("Anna" in text and "to 7" in text) if lang == "en" else (
                "Мария" in text and "до 7" in text and "Кроуфорд" in text)
            assert page.query_selector_all(".table") == []      # one table, no grid
            shot = tmp_path / f"overlay-{table}-{lang}.png"
            page.screenshot(path=str(shot), omit_background=True)
            image = Image.open(shot).convert("RGBA")
            assert image.size == (1920, 1080)
            assert image.getpixel((10, 10))[3] == 0               # the camera shows through
            assert image.getpixel((960, 100))[3] == 0
            box = page.eval_on_selector(".panel", "p => { const r = p.getBoundingClientRect();"
                                                  " return [r.x, r.y, r.width, r.height]; }")
            inside = (int(box[0] + 10), int(box[1] + box[3] / 2))
            assert image.getpixel(inside)[3] > 200                 # the panel is not
            # Over a checkerboard, as OBS puts it over a camera: to look at.
            board = Image.new("RGBA", image.size)
            for y in range(0, 1080, 60):
                for x in range(0, 1920, 60):
                    shade = (200, 60, 60, 255) if (x // 60 + y // 60) % 2 else (240, 240, 240, 255)
                    board.paste(shade, (x, y, x + 60, y + 60))
            board.alpha_composite(image)
            board.convert("RGB").save(tmp_path / f"overlay-{table}-{lang}-checker.png")
    finally:
        page.close()


def test_the_page_bounds_what_it_takes_from_the_broker(browser: Any, hall: PublicHall,  # noqa: F811
                                                       public: PublicBroker,  # noqa: F811
                                                       tables: list[Any]) -> None:
    """Views published straight to the public tree (as a faulty or compromised publisher
    would): each bad one is dropped by itself, and at most 500 tables are kept."""
    play(tables)
    raw = PublicClient(public.options())
    raw.start()
    page = browser.new_page(viewport=PHONE)
    try:
        hall.wait(lambda: raw.connected, "the raw publisher connected")
        good = {"v": 1, "table": "x", "players": {"left": "L", "right": "R"}, "phase": "running"}
        bad = {
            "bad-json": b"{not json",
            "bad-long": json.dumps({**good, "table": "bad-long", "event": "x" * 5000}).encode(),
            "bad-shape": b"[1, 2, 3]",
            "bad-table": json.dumps({**good, "table": "someone-else"}).encode(),
            "bad-utf8": b'{"v":1,"table":"bad-utf8","players":{"left":"\xff\xfe"}}',
        }
        for table, payload in bad.items():     # retained views: the page's first look
            raw.publish(f"{ROOT}/t/{table}", payload)
        raw.publish(f"{ROOT}/t/zz-last", json.dumps({**good, "table": "zz-last"}).encode())
        # QoS 0 has no answer: the views are on the broker once a spectator is given the last
        # one retained (else the page, subscribing first, would wait for it in vain)
        watcher = Spectator(public)
        try:
            watcher.subscribe(f"{ROOT}/t/zz-last")
            hall.wait(lambda: any(m.topic.endswith("/zz-last") for m in list(watcher.messages)),
                      "the retained views on the public broker")
        finally:
            watcher.close()
        page.goto(hall.base + "/public")
        page.wait_for_selector('.table[data-view="zz-last"]', timeout=PAGE_WAIT_MS)
        assert not page.query_selector_all('.table[data-view^="bad-"]')
        odd = {**good, "table": "odd", "players": {"left": "N" * 500, "right": 42},
               "score": {"left": "3", "right": 1e308}, "phase": "<img src=x onerror=alert(1)>",
               "cube": {"value": 3.5, "owner": "middle"}, "reserves_at_ms": "soon",
               "clock": {"left": {"reserve_ms": "lots"}, "right": {"reserve_ms": 5000}}}
        raw.publish(f"{ROOT}/live", json.dumps({"v": 1, "views": [odd]}).encode(), retain=False)
        # The stream: a message that is not a batch; a batch of 300 views (256 taken); then
        # batches of 20 up to 560 tables (500 kept). Longer messages the broker itself refuses
        # (max_packet_size).
        raw.publish(f"{ROOT}/live", b'{"v":1,"views":{"table":"bad-batch"}}', retain=False)
        for start, count in [(0, 300)] + [(n, 20) for n in range(300, 560, 20)]:
            raw.publish(f"{ROOT}/live", json.dumps({"v": 1, "views": [
                {**good, "table": f"many-{i:03d}"} for i in range(start, start + count)]}
            ).encode(), retain=False)
        page.wait_for_function("() => document.querySelectorAll('.table').length >= 500",
                               timeout=PAGE_WAIT_MS)
        shown = page.eval_on_selector_all(".table", "ts => ts.map(t => t.dataset.view)")
        assert len(shown) == 500
        assert not any(name.startswith("bad-") for name in shown)
        assert "table-1" in shown and "odd" in shown
        assert "many-255" in shown and "many-256" not in shown and "many-299" not in shown
        odd_text = page.inner_text('.table[data-view="odd"]')
        assert "N" * 64 in odd_text and "N" * 65 not in odd_text      # a name cut to 64
        assert "Right" in odd_text and "onerror" not in odd_text       # a bad name, a bad phase
        assert page.query_selector_all("img") == []
        assert page.inner_text('.table[data-view="odd"] .row[data-side="right"] .reserve') == "0:05"
        assert "Anna" in page.inner_text('.table[data-view="table-1"]')
    finally:
        page.close()
        raw.stop()


def reserve_of(page: Any, table: str, side: str) -> str:
    return str(page.inner_text(f'.table[data-view="{table}"] .reserve[data-side="{side}"]'))


def test_a_delayed_view_says_so_and_an_overlay_waits_for_its_table(
        browser: Any, broker: Broker, public: PublicBroker,  # noqa: F811
        tmp_path: Path) -> None:
    with PublicHall(broker, public, tmp_path / "archive", delay_s=30) as hall:
        page = browser.new_page(viewport=PHONE)
        try:
            page.goto(hall.base + "/public?lang=ru")
            page.wait_for_selector('body[data-status="connected"]', timeout=PAGE_WAIT_MS)
            assert page.inner_text("#status") == "в эфире, задержка 30 с"
            assert page.inner_text("#message") == "Столов пока нет."
            page.goto(hall.base + "/overlay/table-9")
            page.wait_for_selector(".panel.waiting", timeout=PAGE_WAIT_MS)
            assert page.inner_text(".panel") == "Table table-9: waiting for the hall…"
        finally:
            page.close()

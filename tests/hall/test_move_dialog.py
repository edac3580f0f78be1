"""Issue 31, "Move here on a live table", on the director's page (SPEC §14.1): the spare's dialog
offered every table, the first chosen by default, and moved a live table's match with no warning.
Now "Move a match here…" lists the tables whose journal the hall holds, those offline first with
their last contact ("offline since 14:03, 6 min ago"), none chosen; a copy the hall refused says
why and cannot be chosen; a table online asks a second confirmation that names its table,
players, score and what happens to its clock, and only that confirmation sends `"live": true`.
After the move, the source's card says "moved to table-9 by … at …". English and Russian, in a
headless Chromium against a real Mosquitto and the real hall; the screenshots are looked at."""

from __future__ import annotations

import json
import time
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from gammonclock.hall.continuation import LIVE_DIR
from hall_ru_helpers import LanguageHall, no_english, shots
from hall_web_helpers import DESKTOP, PAGE_WAIT_MS, clock_state, iso, publish
from move_helpers import (
    Spare,
    appended_lines,
    decisions,
    give_key,
    key_of,
    publish_lines,
    sealed_lines,
    until,
)
from mqtt_helpers import Broker, start_broker

AGO_MS = 6 * 60_000 + 20_000          # table-1 went offline 6 min 20 s before the hall started

SAID = {
    "en": {
        "offline_since": "offline since {time}, {n} min ago",
        "online": "online · playing",
        "refused": "table-4 sent lines of match-4.jsonl that its own key did not seal "
                   "(record 4): the hall kept no such line, and this match cannot be moved "
                   "from the hall's copy; continue it from the clock's card or a stick",
        "groups": ["Offline", "Not known to be offline: asks again"],
        "stops": "table-2 is online and playing: its clock will be stopped for good and show "
                 "“moved to table-9”.",
        "confirm": "Stop table-2 and move",
        "moved": "moved to table-9 by hall at {time}",
        "alert": "journal lines refused (match-4.jsonl, record 4): not sealed by the table's "
                 "own key; its match cannot be moved from the hall's copy",
    },
    "ru": {
        "offline_since": "нет связи с {time}, {n} мин назад",
        "online": "на связи · идёт игра",
        "refused": "стол table-4 прислал строки журнала match-4.jsonl, не запечатанные его "
                   "собственным ключом (запись 4): зал не сохранил ни одной такой строки, и "
                   "этот матч нельзя перенести по копии зала; продолжите его с карты памяти "
                   "часов или с флешки",
        "groups": ["Нет связи", "Связь, возможно, есть: нужно второе подтверждение"],
        "stops": "Стол table-2 на связи, на нём идёт игра: его часы будут остановлены навсегда "
                 "и покажут «матч перенесён на table-9».",
        "confirm": "Остановить table-2 и перенести",
        "moved": "матч перенесён на table-9: hall, {time}",
        "alert": "строки журнала отвергнуты (match-4.jsonl, запись 4): не запечатаны ключом "
                 "стола; матч не перенести по копии зала",
    },
}


@pytest.fixture
def tables_broker(tmp_path: Path):
    broker = start_broker(tmp_path / "broker", tables=("table-1", "table-2", "table-4",
                                                       "table-9"))
    try:
        yield broker
    finally:
        broker.stop()


def _before_the_hall(broker: Broker, tmp_path: Path, archive: Path, keys: Path) -> int:
    """table-1 went offline AGO_MS ago (its retained state and `online` "0") and a hall before
    this one kept its journal in `.live/`; the instant of its last state (ms)."""
    for table in ("table-1", "table-2", "table-4"):
        give_key(keys, table, key_of(table))
    folder = archive / LIVE_DIR / "table-1"
    folder.mkdir(parents=True)
    lines = sealed_lines(tmp_path / "match-1.jsonl", key_of("table-1"), table="table-1")
    (folder / "match-1.jsonl").write_text("".join(f"{line}\n" for line in lines))
    at = time.time_ns() // 1_000_000 - AGO_MS
    client = broker.client("table-1")
    try:
        publish(client, "gammonclock/table-1/state",
                clock_state("table-1", phase="paused", running=None, at=iso(at),
                            lifecycle="in_progress"), retain=True)
        publish(client, "gammonclock/table-1/online", "0", retain=True)
    finally:
        client.disconnect()
        client.loop_stop()
    return at


def _tables(broker: Broker, tmp_path: Path, spare: Spare) -> list[Any]:
    """table-2 online and playing, its journal in its events; table-4 offline, whose account
    sent lines another key sealed; table-9, the spare, ready."""
    two, four = broker.client("table-2"), broker.client("table-4")
    publish(two, "gammonclock/table-2/online", "1", retain=True)
    publish(two, "gammonclock/table-2/state",
            clock_state("table-2", journal="match-2.jsonl", lifecycle="in_progress"),
            retain=True)
    publish_lines(two, "table-2", "match-2.jsonl",
                  sealed_lines(tmp_path / "match-2.jsonl", key_of("table-2"), table="table-2"))
    path = tmp_path / "match-4.jsonl"
    lines = sealed_lines(path, key_of("table-4"), records=3, table="table-4")
    publish_lines(four, "table-4", "match-4.jsonl",
                  lines + appended_lines(path, key_of("another device"), 2))
    publish(four, "gammonclock/table-4/online", "0", retain=True)
    publish(spare.client, "gammonclock/table-9/online", "1", retain=True)
    publish(spare.client, "gammonclock/table-9/state",
            clock_state("table-9", phase="between_games", running=None, lifecycle="ready",
                        players={"left": "Chen", "right": "Dora"}, journal="match-9.jsonl"),
            retain=True)
    return [two, four]


def _rows(page: Any) -> list[tuple[str, str, bool, bool]]:
    """The dialog's rows: (table, kind, enabled, checked), in order."""
    return [tuple(row) for row in page.eval_on_selector_all(
        "#move-from label.source",
        "ls => ls.map(l => [l.dataset.table, l.dataset.kind, !l.querySelector('input').disabled,"
        " l.querySelector('input').checked])")]


@pytest.mark.parametrize("language", ["en", "ru"])
def test_the_spares_dialog_offers_offline_tables_first_and_asks_again_for_a_live_one(
        browser: Any, tables_broker: Broker, tmp_path: Path, language: str) -> None:
    said = SAID[language]
    archive, keys = tmp_path / "archive", tmp_path / "keys"
    at = _before_the_hall(tables_broker, tmp_path, archive, keys)
    shown_at = datetime.fromtimestamp(at / 1000).strftime("%H:%M")
    spare = Spare(tables_broker, "table-9")
    clients: list[Any] = []
    with LanguageHall(tables_broker, archive, language, keys) as hall:
        page = browser.new_page(viewport=DESKTOP)
        posted: list[dict[str, Any]] = []
        page.on("request", lambda r: posted.append(json.loads(r.post_data or "{}"))
                if r.url.endswith("/api/move") else None)
        try:
            clients = _tables(tables_broker, tmp_path, spare)
            held = lambda table: hall.call(lambda: hall.hall.live.held(table)) or {}  # noqa: E731
            until(lambda: {"table-1", "table-2", "table-4", "table-9"} <= {
                c["table"] for c in hall.get("/api/cards")["cards"]}
                and held("table-2").get("last_seq") == 5 and held("table-4")
                and hall.card("table-4").get("online") is False, "the tables on the hall")
            page.goto(hall.base + "/")
            page.click('.card[data-table="table-9"] .players')
            page.click("#move-open")
            page.wait_for_selector('#move-from label[data-table="table-4"]', timeout=PAGE_WAIT_MS)
            # Offline first (table-1, table-4), then the live one; none chosen; table-4's copy
            # refused, not to be chosen.
            assert _rows(page) == [("table-1", "offline", True, False),
                                   ("table-4", "offline", False, False),
                                   ("table-2", "online", True, False)]
            assert page.eval_on_selector_all("#move-from h3", "hs => hs.map(h => h.textContent)") \
                == said["groups"]
            assert page.is_disabled("#move-send")
            one = page.inner_text('#move-from label[data-table="table-1"]')
            assert any(said["offline_since"].format(time=shown_at, n=n) in one
                       for n in (6, 7)), one
            assert page.inner_text('#move-from label[data-table="table-4"]').endswith(
                said["refused"])
            assert said["online"] in page.inner_text('#move-from label[data-table="table-2"]')
            if language == "ru":
                no_english(page.inner_text("#move-dialog"), "the move's dialog",
                           allowed=("Anna", "Boris"))
            page.screenshot(path=str(shots(tmp_path) / f"hall-{language}-move-dialog.png"))
            # The live table: a second confirmation that names what it does; cancelled,
            # nothing is sent.
            page.check('#move-from input[value="table-2"]')
            assert not page.is_disabled("#move-send")
            page.click("#move-send")
            page.wait_for_selector("#move-confirm[open]", timeout=PAGE_WAIT_MS)
            body = page.inner_text("#mc-body")
            assert said["stops"] in body and "Anna 3–2 Boris" in body, body
            assert page.inner_text("#mc-confirm") == said["confirm"]
            if language == "ru":
                no_english(page.inner_text("#move-confirm"), "the confirmation",
                           allowed=("Anna", "Boris"))
            page.screenshot(path=str(shots(tmp_path) / f"hall-{language}-move-confirm.png"))
            page.click("#mc-cancel")
            assert posted == [] and spare.got() == []
            # Confirmed: sent with `live`, and the journal the dialog showed.
            page.click("#move-send")
            page.wait_for_selector("#move-confirm[open]", timeout=PAGE_WAIT_MS)
            page.click("#mc-confirm")
            page.wait_for_selector("#move-result.ok", timeout=PAGE_WAIT_MS)
            assert posted == [{"from": "table-2", "to": "table-9", "journal": "match-2.jsonl",
                               "live": True}]
            assert [c["command"] for c in spare.got()] == ["continue table-2 match-2.jsonl"]
            [decision] = decisions(archive)
            assert (decision["source"], decision["to"], decision["journal"]) == (
                "table-2", "table-9", "match-2.jsonl")
            # The offline table's match moves without asking again (and without `live`).
            page.check('#move-from input[value="table-1"]')
            page.click("#move-send")
            until(lambda: len(spare.got()) == 2, "the second move sent")
            assert not page.is_visible("#move-confirm")
            assert posted[1] == {"from": "table-1", "to": "table-9", "journal": "match-1.jsonl"}
            # The source's card says where its match went, by whom and when.
            page.click("#md-cancel")
            page.click("#table-dialog .close")
            moved_at = datetime.fromtimestamp(decision["at_ms"] / 1000).strftime("%H:%M")
            page.wait_for_selector('.card[data-table="table-2"] .moved', timeout=PAGE_WAIT_MS)
            assert page.inner_text('.card[data-table="table-2"] .moved') == said["moved"].format(
                time=moved_at)
            # table-4's card says what its account sent.
            assert page.inner_text('.card[data-table="table-4"] .need[data-kind="bad"]') \
                == said["alert"]
            page.screenshot(path=str(shots(tmp_path) / f"hall-{language}-moved-card.png"))
        finally:
            page.close()
            for client in clients:
                client.disconnect()
                client.loop_stop()
            spare.close()

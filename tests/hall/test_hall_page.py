"""The director's page in a real headless Chromium (Debian's, driven by Playwright; its own
browser downloads are never used): cards appear, the running reserve ticks, a flag shows within
a second, a command is sent from a card, alerts are marked seen (one, or all of a table), the
page fits a phone, and a page of another name resolved to the hall (DNS rebinding) can neither
act nor read. Clock states are published straight to a real Mosquitto, as a clock would."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

from hall_web_helpers import (
    DESKTOP,
    PAGE_WAIT_MS,
    PHONE,
    P,
    RunningHall,
    clock_state,
    iso,
    open_page,
    publish,
    seconds,
    table_client,
)
from mqtt_helpers import Broker

EVIL = "evil.example"              # hall/conftest.py's browser resolves it to the hall
def reserve(page: Any, table: str, side: str) -> str:
    return str(page.inner_text(f'.card[data-table="{table}"] .reserve[data-side="{side}"]'))


def test_cards_appear_and_the_running_reserve_ticks(browser: Any, hall: RunningHall,
                                                    table: Any) -> None:
    publish(table, f"{P}/table-1/online", "1", retain=True)
    publish(table, f"{P}/table-1/state", clock_state(left_ms=600_000, right_ms=540_000),
            retain=True)
    page = open_page(browser, hall)
    try:
        page.wait_for_selector('.card[data-table="table-1"]', timeout=PAGE_WAIT_MS)
        card = page.inner_text('.card[data-table="table-1"]')
        assert "Anna" in card and "Boris" in card and "to 7" in card
        first = reserve(page, "table-1", "left")
        # Counted from the state's instant: a page slow to open (a loaded machine) has lost
        # a few seconds, never more, and never shows more than the state's 10:00.
        assert 590 <= seconds(first) <= 600, first
        page.wait_for_function(
            """first => document.querySelector(
                 '.card[data-table="table-1"] .reserve[data-side="left"]').textContent !== first""",
            arg=first, timeout=PAGE_WAIT_MS)
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
        page.wait_for_selector('.card[data-table="table-1"].offline', timeout=PAGE_WAIT_MS)
        assert page.query_selector_all('.card[data-table="table-1"] .running') == []
        assert "offline" in page.inner_text('.card[data-table="table-1"]')
    finally:
        page.close()


def test_a_flag_shows_at_once_and_comes_first(browser: Any, hall: RunningHall,
                                                      broker: Broker) -> None:  # noqa: F811
    clients = [table_client(broker, t) for t in ("table-1", "table-2")]
    try:
        for client, name in zip(clients, ("table-1", "table-2")):
            publish(client, f"{P}/{name}/state", clock_state(name), retain=True)
        page = open_page(browser, hall)
        page.wait_for_selector('.card[data-table="table-2"]', timeout=PAGE_WAIT_MS)
        assert page.eval_on_selector_all(".card", "cs => cs.map(c => c.dataset.table)") == [
            "table-1", "table-2"]
        publish(clients[1], f"{P}/table-2/state",
                clock_state("table-2", phase="match_over", running=None, flag="left",
                            left_ms=0))
        page.wait_for_selector('.card[data-table="table-2"] .need[data-kind="flag"]',
                               timeout=PAGE_WAIT_MS)
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
        page.wait_for_selector("#cmd-result.ok", timeout=PAGE_WAIT_MS)
        assert page.inner_text("#cmd-result") == "✓ deduct left 30s → done: deduct left 30s"
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
    # table-3: a loaded match before game 1: its §9 phase is between_games, a person reads ready
    variants[0] = {"phase": "between_games", "running": None, "lifecycle": "ready", "game": 1,
                   "score": {"left": 0, "right": 0}}
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
                                   timeout=PAGE_WAIT_MS)
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
            ready = page.inner_text('.card[data-table="table-3"]').lower()
            assert "ready" in ready and "between games" not in ready, ready
            page.close()
    finally:
        for client in clients:
            client.disconnect()
            client.loop_stop()


# --- alerts marked seen ----------------------------------------------------------------------

def _alerts(table: Any, events: int) -> None:
    """EVENTS events of table-1, each with a flag and a challenge: two alerts each."""
    for seq in range(1, events + 1):
        publish(table, f"{P}/table-1/events",
                {"journal": "match-1.jsonl", "seq": seq, "at": iso(),
                 "effects": [{"kind": "flag_fell", "side": "left" if seq % 2 else "right"},
                             {"kind": "challenge_decided", "side": "right", "upheld": True}]})


def _listed(page: Any) -> int:
    return int(page.eval_on_selector_all("#td-body .alert-row button", "bs => bs.length"))


def test_alerts_marked_seen_one_and_all(browser: Any, hall: RunningHall, table: Any,
                                        tmp_path: Path) -> None:
    """A card lists its first four needs and counts the rest ("and N more", those the hall no
    longer lists included); its dialog lists them all, each with "seen"; "Mark all seen" on the
    card clears them without opening the dialog."""
    shots = Path(os.environ.get("GAMMONCLOCK_SCREENSHOTS", tmp_path))
    shots.mkdir(parents=True, exist_ok=True)
    publish(table, f"{P}/table-1/online", "1", retain=True)
    publish(table, f"{P}/table-1/state", clock_state(), retain=True)
    for _ in range(3):                 # refused by the view: counted on the card, state kept
        publish(table, f"{P}/table-1/state", '{"phase": "running", "game": NaN}')
    _alerts(table, 30)                 # 60 alerts: past the view's cap of 50
    hall.wait(lambda: hall.hall.view.events_counted == 30, "the events")
    api = hall.card("table-1")
    assert api["alerts_dropped"] > 0 and api["bad_messages"] == 3
    keyed = [n for n in api["needs"] if n["key"]]
    assert len(keyed) >= 5
    page = open_page(browser, hall)
    try:
        card = '.card[data-table="table-1"]'
        page.wait_for_selector(f"{card} .seen-all", timeout=PAGE_WAIT_MS)
        assert page.eval_on_selector_all(f'{card} .need:not([data-kind="more"])',
                                         "ns => ns.length") == 4
        text = page.inner_text(card)
        assert f"and {len(api['needs']) - 4 + api['alerts_dropped']} more" in text
        assert "3 bad messages from this table" in text
        assert page.inner_text(f"{card} .seen-all") == (
            f"Mark all seen ({len(keyed) + api['alerts_dropped']})")
        page.screenshot(path=str(shots / "hall-alerts-before.png"))
        # One alert, from the table's dialog.
        page.click(f"{card} .facts")
        before = _listed(page)
        assert before == len(keyed)
        page.screenshot(path=str(shots / "hall-alerts-dialog.png"))
        page.click("#td-body .alert-row button")
        page.wait_for_function(
            "n => document.querySelectorAll('#td-body .alert-row button').length === n",
            arg=before - 1, timeout=PAGE_WAIT_MS)
        page.keyboard.press("Escape")
        # All of them, from the card: the dialog does not open.
        page.click(f"{card} .seen-all")
        page.wait_for_selector(f"{card} .seen-all", state="detached", timeout=PAGE_WAIT_MS)
        assert not page.eval_on_selector("#table-dialog", "d => d.open")
        assert page.query_selector_all(f"{card} .need") == []
        assert "more" not in page.inner_text(card)
        page.screenshot(path=str(shots / "hall-alerts-after.png"))
    finally:
        page.close()
    assert [n for n in hall.card("table-1")["needs"] if n["key"]] == []


# --- DNS rebinding --------------------------------------------------------------------------

ATTACK = """async () => {
  const out = {};
  const get = async (path) => {
    try { const r = await fetch(path); return [r.status, (await r.text()).slice(0, 200)]; }
    catch (err) { return [0, String(err)]; }
  };
  const post = async (path, body) => {
    try {
      const r = await fetch(path, { method: "POST", body: JSON.stringify(body),
                                    headers: { "Content-Type": "application/json" } });
      return [r.status, (await r.text()).slice(0, 200)];
    } catch (err) { return [0, String(err)]; }
  };
  out.cmd = await post("/api/cmd", { table: "table-1", command: "deduct left 1s", wait: 0 });
  out.dismiss_all = await post("/api/dismiss-all", { table: "table-1" });
  out.archive = await get("/archive/table-1/match-1.jsonl");
  out.cards = await get("/api/cards");
  out.page = await get("/");
  return out;
}"""


def test_a_page_of_another_name_can_neither_act_nor_read(browser: Any, hall: RunningHall,
                                                         table: Any) -> None:
    received: list[Any] = []
    table.on_message = lambda _c, _u, msg: received.append(msg.payload)
    table.subscribe(f"{P}/table-1/cmd", qos=1)
    publish(table, f"{P}/table-1/state", clock_state(), retain=True)
    hall.wait(lambda: "table-1" in hall.hall.view.tables, "the table seen")
    folder = hall.options.archive / "table-1"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "match-1.jsonl").write_text('{"secret": "the whole match"}\n')
    page = browser.new_page()
    try:
        # The attacker's page, its name now resolved to the hall's address.
        answer = page.goto(f"http://{EVIL}:{hall.port}/")
        assert answer is not None and answer.status == 421
        assert "own names" in page.inner_text("body")
        results = page.evaluate(ATTACK)
        # The hall's own page, meanwhile, is whole.
        genuine = browser.new_page()
        genuine.goto(hall.base + "/")
        genuine.wait_for_selector('.card[data-table="table-1"]', timeout=PAGE_WAIT_MS)
        genuine.close()
    finally:
        page.close()
    for what, (status, text) in results.items():
        assert status == 421, (what, status, text)
        assert "secret" not in text and "hall-token" not in text
    time.sleep(0.5)
    assert received == []                  # no command reached the table

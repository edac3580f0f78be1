"""What a table answered, on the director's page (SPEC §14, issue 19): every reply says the
command sent and, in words, what the table did or why not (its `said`, its `reason`, a status's
state), as text (never markup), from that table only; and a match that waits for the match in
progress can be forced from the page, after a confirmation that names the table, the players and
the score to be abandoned. Against a real Mosquitto, a real clock on mock pins (its `HallLink`)
or a table's own client, and the page in a headless Chromium (tests/hall/test_hall_page.py)."""

from __future__ import annotations

import json
import os
import threading
import urllib.error
from pathlib import Path
from typing import Any

import pytest

from gammonclock.hall.view import HallView
from gammonclock.journal.reader import read_journal
from gammonclock.link.requests import match_digest
from gammonclock.sides import Button
from hall_web_helpers import (
    PAGE_WAIT_MS,
    PHONE,
    P,
    RunningHall,
    clock_state,
    open_page,
    publish,
    table_client,
)
from mqtt_helpers import Broker, Collector
from table_helpers import (
    MATCH_TEXT,
    OTHER_MATCH,
    TOPIC,
    Table,
    cmd,
    device_text,
    link_of,
    loaded_clock,
    right_player,
    wait,
)

WORDS_NEVER_SHOWN = ("null", "undefined", "[object", "{")


def shots(tmp_path: Path) -> Path:
    folder = Path(os.environ.get("GAMMONCLOCK_SCREENSHOTS", tmp_path))
    folder.mkdir(parents=True, exist_ok=True)
    return folder


@pytest.fixture
def clock(broker: Broker, tables, tmp_path: Path, hall: RunningHall) -> Table:  # noqa: F811
    """A real clock on mock pins, Anna v Boris loaded, seen by the hall with its players."""
    return loaded_clock(tables, broker, tmp_path, hall)


def send(page: Any, command: str) -> str:
    """Type COMMAND in the table's dialog, send it, and return the reply line shown."""
    page.evaluate("document.getElementById('cmd-result').className = 'result'")
    page.fill("#cmd-input", command)
    page.click("#cmd-form button[type=submit]")
    page.wait_for_selector("#cmd-result.ok, #cmd-result.bad", timeout=PAGE_WAIT_MS)
    return str(page.inner_text("#cmd-result"))


def dialog_text(page: Any) -> str:
    return str(page.inner_text("#table-dialog"))


def never_raw(text: str) -> None:
    for word in WORDS_NEVER_SHOWN:
        assert word not in text, f"{word!r} shown: {text}"


# --- the replies, in words ----------------------------------------------------------------------

def test_a_reply_says_the_command_and_what_the_table_did(browser: Any,  # noqa: F811
                                                         hall: RunningHall, clock: Table,
                                                         tmp_path: Path) -> None:
    clock.tap(Button.LEFT)                  # game 1 starts: Boris's clock runs
    page = open_page(browser, hall)
    try:
        page.wait_for_selector('.card[data-table="table-1"]', timeout=PAGE_WAIT_MS)
        page.click('.card[data-table="table-1"] .facts')
        deducted = send(page, "deduct left 30s")
        assert deducted.startswith("✓ deduct left 30s → left's reserve -30 s → 9:30"), deducted
        assert "acted" not in deducted
        status = send(page, "status")
        assert status.startswith("✓ status → playing · Anna 0–0 Boris (to 5, game 1) · "
                                 "left 9:30 · right "), status
        refused = send(page, "deduct left 9999s")
        assert refused == ("✗ deduct left 9999s → refused: more than half of the remaining "
                           "9:30.0"), refused
        bad = send(page, "dedcut left 30s")
        assert bad.startswith("✗ dedcut left 30s → not understood: unknown arbiter command "
                              "'dedcut'"), bad
        # The dialog's own list (the card's last three replies) says as much, command first.
        page.wait_for_function("""() => {
            const first = document.querySelector('#td-body li.reply');
            return first !== null && first.innerText.startsWith('✗ dedcut');
        }""", timeout=PAGE_WAIT_MS)
        listed = page.eval_on_selector_all("#td-body li.reply", "ls => ls.map(l => l.innerText)")
        assert listed == [bad, refused, status], listed
        never_raw(dialog_text(page))
        page.screenshot(path=str(shots(tmp_path) / "hall-replies-dialog.png"))
    finally:
        page.close()


HOSTILE = '<img src=x onerror="window.pwned=1"><b>bold</b>'


def test_a_table_cannot_inject_markup_nor_answer_for_another(browser: Any,  # noqa: F811
                                                             hall: RunningHall,
                                                             broker: Broker) -> None:  # noqa: F811
    """table-2 answers table-1's command first (with table-1's request id, which it could only
    guess): the page shows table-1's reply only, and every text of it as text."""
    one, two = table_client(broker, "table-1"), table_client(broker, "table-2")

    def answer(client: Any, _userdata: Any, msg: Any) -> None:
        request = json.loads(msg.payload)
        two.publish(f"{P}/table-2/cmd/reply", json.dumps(
            {"id": request["id"], "ok": True, "outcome": "acted",
             "said": ["spoofed by table-2"]}), qos=1).wait_for_publish(5)
        client.publish(f"{P}/table-1/cmd/reply", json.dumps(
            {"id": request["id"], "ok": False, "outcome": "refused", "reason": HOSTILE,
             "code": HOSTILE, "said": [f"arbiter: {request['command']}", HOSTILE]}), qos=1)

    try:
        one.on_message = answer
        one.subscribe(f"{P}/table-1/cmd", qos=1)
        publish(one, f"{P}/table-1/state", clock_state(), retain=True)
        publish(two, f"{P}/table-2/state", clock_state("table-2"), retain=True)
        page = open_page(browser, hall, PHONE)
        try:
            page.wait_for_selector('.card[data-table="table-2"]', timeout=PAGE_WAIT_MS)
            page.click('.card[data-table="table-1"]')
            shown = send(page, "pause")
            assert shown == f"✗ pause → refused: {HOSTILE}", shown
            page.wait_for_selector("#td-body li.reply", timeout=PAGE_WAIT_MS)
            text = dialog_text(page)
            assert "spoofed" not in text and HOSTILE in text
            assert page.query_selector_all("#table-dialog img, #table-dialog b") == []
            assert page.evaluate("window.pwned") is None
        finally:
            page.close()
    finally:
        for client in (one, two):
            client.disconnect()
            client.loop_stop()
    assert [r.get("said") for r in hall.card("table-2")["replies"]] == [["spoofed by table-2"]]
    assert "spoofed by table-2" not in json.dumps(hall.card("table-1")["replies"])


def test_the_view_binds_a_command_to_its_own_tables_reply() -> None:
    view = HallView()
    view.receive(f"{P}/table-1/state", json.dumps(clock_state()).encode(), 1)
    view.receive(f"{P}/table-2/state", json.dumps(clock_state("table-2")).encode(), 1)
    assert view.note_command("table-1", "r1", "deduct left 30s") is None     # not come yet
    view.receive(f"{P}/table-2/cmd/reply", b'{"id": "r1", "ok": true, "command": "forged"}', 2)
    view.receive(f"{P}/table-1/cmd/reply",
                 json.dumps({"id": "r1", "ok": True, "outcome": "acted", "command": "forged",
                             "state": clock_state(), "effects": [{"kind": "x"}]}).encode(), 3)
    one, two = view.card("table-1")["replies"][0], view.card("table-2")["replies"][0]
    assert one["command"] == "deduct left 30s" and one["state"]["players"]["left"] == "Anna"
    assert "effects" not in one
    assert "command" not in two                     # the table's own `command` is not taken
    kept = view.note_command("table-2", "r2", "pause")      # the reply may come first, too
    assert kept is None
    view.receive(f"{P}/table-2/cmd/reply", b'{"id": "r2", "ok": true}', 4)
    assert view.card("table-2")["replies"][0]["command"] == "pause"
    with pytest.raises(ValueError):                 # a status's state is checked as a state is
        view.receive(f"{P}/table-1/cmd/reply",
                     b'{"id": "r3", "ok": true, "state": {"phase": "nonsense"}}', 5)


# --- forcing the match that waits -----------------------------------------------------------------

def test_a_match_refused_mid_match_is_forced_from_the_page(browser: Any,  # noqa: F811
                                                           hall: RunningHall, clock: Table,
                                                           tmp_path: Path) -> None:
    clock.tap(Button.LEFT)                           # Anna v Boris is in progress
    first = clock.journal()
    pushed = hall.post("/api/round", {"csv": "table,left,right,length\ntable-1,Chen,Dora,5\n",
                                      "event": "Spring Open", "round": "2"})
    assert pushed["pushed"] == 1
    hall.wait(lambda: (hall.card("table-1").get("notice") or {}).get("pending") is True,
              "the table's refusal")
    digest = hall.card("table-1")["notice"]["match"]
    page = open_page(browser, hall)
    try:
        page.wait_for_selector('.card[data-table="table-1"]', timeout=PAGE_WAIT_MS)
        page.click('.card[data-table="table-1"] .facts')
        alert = "#td-body .alert-row:has(button.force)"
        page.wait_for_selector(alert, timeout=PAGE_WAIT_MS)
        assert "match refused" in page.inner_text(alert)
        assert page.query_selector_all("#td-body button.force") != []
        # It names the table, the players and the score to be abandoned; cancelled, nothing
        # is sent.
        page.click(f"{alert} button.force")
        page.wait_for_selector("#force-dialog[open]", timeout=PAGE_WAIT_MS)
        asked = page.inner_text("#force-dialog")
        assert "table-1" in asked and "Anna 0–0 Boris (to 5, game 1)" in asked, asked
        assert "abandoned" in asked
        page.screenshot(path=str(shots(tmp_path) / "hall-force-confirm.png"))
        page.click("#fd-cancel")
        assert not page.eval_on_selector("#force-dialog", "d => d.open")
        # The alert marked seen, the match file's line offers it still.
        page.click(f"{alert} button:not(.force)")
        page.wait_for_selector(alert, state="detached", timeout=PAGE_WAIT_MS)
        assert len(page.query_selector_all("#td-body button.force")) == 1
        page.click("#td-body p.notice button.force")
        page.wait_for_selector("#force-dialog[open]", timeout=PAGE_WAIT_MS)
        assert "Anna 0–0 Boris (to 5, game 1)" in page.inner_text("#force-dialog")
        assert right_player(clock) == "Boris" and clock.journal() == first
        page.click("#fd-confirm")
        page.wait_for_selector("#cmd-result.ok", timeout=PAGE_WAIT_MS)
        said = page.inner_text("#cmd-result")
        assert said.startswith(f"✓ new-match --force --waiting {digest[:8]}… → "), said
        assert "match abandoned by the arbiter at 0-0" in said
        assert "next match loaded: Chen-Dora, 5 points" in said
        # The refusal is over: no button offers it any more (the table's notice says loaded).
        page.wait_for_selector("#td-body button.force", state="detached", timeout=PAGE_WAIT_MS)
        page.screenshot(path=str(shots(tmp_path) / "hall-force-done.png"))
    finally:
        page.close()
    assert right_player(clock) == "Dora"
    ended = [r.data for r in read_journal(first).each() if r.kind == "input"][-1]
    assert ended["input"] == {"type": "arbiter", "command": "abandon", "source": "hall",
                              "by": "hall"}, ended
    assert any(e.get("reason") == "abandoned" for e in ended["effects"]), ended
    # Loaded once: the retained match no longer waits, nor loads again.
    link = link_of(clock)
    assert link.requests.pending_match is None and link.memory.match == digest
    assert "match refused" not in json.dumps(hall.card("table-1")["needs"])
    # Without the page's token the same command is refused, and nothing reaches the table.
    with pytest.raises(urllib.error.HTTPError) as refused:
        hall.post("/api/cmd", {"table": "table-1", "wait": 0,
                               "command": f"new-match --force --waiting {digest}"}, token=None)
    assert refused.value.code == 403
    with pytest.raises(urllib.error.HTTPError) as stale:
        hall.post("/api/cmd", {"table": "table-1", "wait": 0,
                               "command": f"new-match --force --waiting {digest}"},
                  token="an old page's token")
    assert stale.value.code == 403
    assert hall.card("table-1")["replies"][0]["command"].startswith("new-match --force")
    assert len(hall.card("table-1")["replies"]) == 1


# --- the table's side, against the real Mosquitto ---------------------------------------------

def test_the_table_forces_only_the_match_that_waits(broker: Broker, tables) -> None:  # noqa: F811
    with Collector(broker, "hall", f"{TOPIC}/cmd/reply", f"{TOPIC}/notice",
                   f"{TOPIC}/online") as seen:
        table: Table = tables(device_text(broker))
        seen.wait_for(lambda m: m.text == "1")
        digest = match_digest(OTHER_MATCH.encode())
        nothing = cmd(seen, "f-0", f"new-match --force --waiting {digest}")
        assert nothing["outcome"] == "refused" and nothing["code"] == "match_not_waiting"
        assert cmd(seen, "m-1", "new-match", text=MATCH_TEXT)["ok"] is True
        table.tap(Button.LEFT)                       # Anna v Boris in progress
        first = table.journal()
        seen.publish(f"{TOPIC}/match", OTHER_MATCH, retain=True)
        seen.wait_for(lambda m: m.topic.endswith("/notice") and m.json()["pending"] is True)
        other = cmd(seen, "f-1", f"new-match --force --waiting {'0' * 64}")
        assert other["outcome"] == "refused" and other["code"] == "match_not_waiting", other
        assert "nothing was done" in other["reason"]
        with_text = cmd(seen, "f-2", f"new-match --force --waiting {digest}", text=MATCH_TEXT)
        assert with_text["outcome"] == "bad request"
        assert right_player(table) == "Boris" and table.journal() == first
        forced = cmd(seen, "f-3", f"new-match --force --waiting {digest}", by="td")
        assert forced["ok"] is True and forced["outcome"] == "acted", forced
        assert any("next match loaded: Anna-Carla" in line for line in forced["said"])
        assert right_player(table) == "Carla" and table.journal() != first
        abandon = [r.data["input"] for r in read_journal(first).each() if r.kind == "input"][-1]
        assert abandon["source"] == "hall" and abandon["by"] == "td", abandon
        loaded = seen.wait_for(lambda m: m.topic.endswith("/notice") and m.json()["ok"] is True)
        assert loaded.json()["match"] == digest
        link = link_of(table)
        assert link.requests.pending_match is None and link.memory.match == digest
        again = cmd(seen, "f-4", f"new-match --force --waiting {digest}")    # waits no more
        assert again["code"] == "match_not_waiting"
        assert cmd(seen, "f-3", f"new-match --force --waiting {digest}")["repeated"] is True
        journals = sorted(first.parent.glob("match-*.jsonl"))
        assert len(journals) == 2                    # loaded once, never twice
    wait(lambda: table.service.status()["phase"] == "between_games", "the forced match ready")


def test_only_a_match_that_waits_is_offered_for_forcing() -> None:
    """The page offers to force a refused match only while the table says it waits (a sha256
    it named, `match_in_progress`, `pending`); once the table says it loaded, the refusal goes."""
    view = HallView()
    digest = match_digest(OTHER_MATCH.encode())

    def notice(**data: Any) -> list[dict[str, Any]]:
        view.receive(f"{P}/table-1/notice", json.dumps(data).encode(), 1)
        return [n for n in view.card("table-1")["needs"] if n["kind"] == "notice"]

    bad_file = notice(ok=False, error="bad", code="match_file_bad", pending=False, match=digest)
    assert "match" not in bad_file[0]
    not_a_digest = notice(ok=False, error="x", code="match_in_progress", pending=True,
                          match="<b>not a digest</b>")
    assert all("match" not in n for n in not_a_digest)
    waiting = notice(ok=False, error="a match is in progress", code="match_in_progress",
                     pending=True, match=digest)
    assert [n.get("match") for n in waiting] == [None, None, digest]
    loaded = notice(ok=True, said=["next match loaded: Anna-Carla, 5 points"], match=digest)
    assert [n.get("match") for n in loaded] == [None, None]      # the refusals of other files stay


def test_the_hall_waits_only_for_the_reply_of_the_table_it_asked(tmp_path: Path) -> None:
    """`Hall.command` is answered by its own table's reply to its id, never by another table
    that sends a reply with the same id first (the page then shows only the right one)."""
    import asyncio

    from gammonclock.hall.server import Hall, HallOptions
    from gammonclock.wire import BrokerURL

    hall = Hall(HallOptions(BrokerURL.parse("mqtt://127.0.0.1:1"), "hall", "pw",
                            archive=tmp_path / "archive"))
    sent: list[dict[str, Any]] = []

    def publish(topic: str, payload: str | bytes, retain: bool = False) -> Any:
        sent.append(json.loads(payload))
        done = asyncio.get_running_loop().create_future()
        done.set_result(None)
        return done
    hall.client.publish = publish  # type: ignore[method-assign]

    async def ask() -> dict[str, Any]:
        for table in ("table-1", "table-2"):
            hall.take(f"{P}/{table}/online", b"true", True, 0)
        asking = asyncio.ensure_future(hall.command("table-1", "status", "director"))
        while not sent:
            await asyncio.sleep(0)
        ident = sent[0]["id"]
        hall.take(f"{P}/table-2/cmd/reply", json.dumps(
            {"id": ident, "ok": True, "outcome": "acted", "said": ["forged"]}).encode(), False, 1)
        hall.take(f"{P}/table-1/cmd/reply", json.dumps(
            {"id": ident, "ok": True, "outcome": "acted", "said": ["mine"]}).encode(), False, 2)
        return await asking
    # On a thread of its own: Playwright's sync API (this module's browser) runs a loop here.
    answers: list[dict[str, Any]] = []
    runner = threading.Thread(target=lambda: answers.append(asyncio.run(ask())))
    runner.start()
    runner.join(30)
    answer = answers[0]
    assert answer["reply"] is not None and answer["reply"]["said"] == ["mine"]

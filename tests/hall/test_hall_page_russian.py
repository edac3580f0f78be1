"""The director's page in Russian (issue 25): `gammonclock hall --language ru` (and `hall demo
--language ru`) makes every text of the page Russian, in the words of the Russian rules (партия,
матч, куб, перерыв, флажок, Кроуфорд, судья), counts in their plural forms (1 стол, 2 стола,
5 столов); a switch on the page chooses the language for that browser, which remembers it.

The page's texts are one catalogue per language (hall/static/texts.json, put in the page by the
hall); the hall's alerts come with their catalogue id and parameters (`say`), and in English the
page says exactly what the hall says. Against a real Mosquitto, tables' own MQTT clients, and the
page in a headless Chromium (tests/hall/test_hall_page.py)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from gammonclock.cli.main import build_parser
from gammonclock.config.loading import parse_match_config
from gammonclock.hall import page as hall_page
from gammonclock.hall import web as hall_web
from gammonclock.hall.page import TextsError, page_texts
from gammonclock.hall.run import options_of
from gammonclock.hall.view import HallView
from gammonclock.hall.web import make_app, page_html
from gammonclock.sim import hall_demo
from hall_ru_helpers import (
    VISIBLE_TEXT,
    language_hall,
    no_english,
    shots,
)
from hall_web_helpers import (
    DESKTOP,
    PAGE_WAIT_MS,
    PHONE,
    P,
    RunningHall,
    clock_state,
    iso,
    publish,
    table_client,
)
from mqtt_helpers import Broker

STATIC = Path(hall_web.__file__).with_name("static")
SHA = "ab" * 32
BROKER_URL = ("mqtt://",)          # the broker pill's title: its address
COMMAND_EXAMPLE = ("deduct left 30s",)    # the command field's example: a command is English
ATTRIBUTES = """() => [...document.querySelectorAll("[title], [placeholder], [aria-label]")]
  .filter((e) => e.checkVisibility() && !e.closest("select"))
  .map((e) => [e.getAttribute("title"), e.getAttribute("placeholder"),
               e.getAttribute("aria-label")].filter(Boolean).join("\\n")).join("\\n")"""


def placeholders(text: Any) -> set[str]:
    values = text.values() if isinstance(text, dict) else [text]
    return {name for value in values for name in re.findall(r"\{(\w+)\}", value)}


# --- the catalogue ------------------------------------------------------------------------------

# The keys hall.js makes from a value (`t(`phase.${phase}`)`): every value it may take.
PHASES = ("between_games", "running", "cube_offered", "paused", "result_entry", "break",
          "match_over", "idle", "ready", "arbiter", "offline")
# What the page keeps in the browser's localStorage: names, not texts.
STORAGE_KEYS = {"gammonclock.hall.language", "gammonclock.hall.alerts",
                "gammonclock.hall.low_time"}
RU_FORMS = {"one", "few", "many", "other"}
EN_FORMS = {"one", "other"}


def keys_used() -> set[str]:
    """Every catalogue key the page's script and HTML name."""
    script = "".join((STATIC / name).read_text(encoding="utf-8")
                     for name in ("hall.js", "health.js", "standings.js", "hall_alerts.js",
                                  "round_push.js"))
    page = (STATIC / "index.html").read_text(encoding="utf-8")
    used = set(re.findall(r"\btn?\(\s*\"([\w.]+)\"", script))
    used |= set(re.findall(r"\"([a-z_]+\.[\w.]+)\"", script)) - STORAGE_KEYS
    used |= set(re.findall(r"data-t(?:-[a-z-]+)?=\"([\w.]+)\"", page))
    used |= {f"phase.{p}" for p in PHASES} | {"side.left", "side.right"}
    says = re.search(r"const SAY = new Map\(\[(.*?)\]\);", script, re.S)
    assert says is not None
    used |= {f"alert.{say}" for say in re.findall(r"\[\"(\w+)\", \[", says.group(1))}
    return used


def test_every_text_of_the_page_is_in_both_languages() -> None:
    texts = page_texts()
    assert set(texts) == {"en", "ru"}
    assert set(texts["en"]) == set(texts["ru"])
    for key, english in texts["en"].items():
        russian = texts["ru"][key]
        assert placeholders(english) == placeholders(russian), key
        assert isinstance(english, dict) == isinstance(russian, dict), key
        if isinstance(english, dict):
            assert set(english) == EN_FORMS and set(russian) == RU_FORMS, key
    missing = keys_used() - set(texts["en"])
    assert missing == set(), f"the page uses texts the catalogue lacks: {sorted(missing)}"
    # Every text the hall's view makes names an id the catalogue has, with its parameters.
    view = a_view_with_every_alert()
    ids = {n["say"][0] for c in view.cards() for n in c["needs"]}
    assert ids == {"offline", "paused", "arbiter", "lost", "late", "flag", "overrun",
                   "challenge", "pin", "chord", "bad", "notice", "notice_waits", "refused",
                   "archive"}
    assert {f"alert.{i}" for i in ids} <= set(texts["ru"])


def test_a_text_in_one_language_only_stops_the_hall(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    texts = json.loads((STATIC / "texts.json").read_text(encoding="utf-8"))
    texts["en"]["only.english"] = "only in English"
    (tmp_path / "texts.json").write_text(json.dumps(texts), encoding="utf-8")
    monkeypatch.setattr(hall_page, "STATIC", tmp_path)
    with pytest.raises(TextsError, match=r"ru lacks \['only.english'\]"):
        page_texts()
    with pytest.raises(TextsError):
        make_app(None, language="ru")   # type: ignore[arg-type]  (refused before the hall)


def test_the_hall_serves_its_language_and_the_catalogue_as_data() -> None:
    page = page_html("ru", "tok")
    assert '<html lang="ru">' in page and '<meta name="hall-language" content="ru">' in page
    data = re.search(r'<script id="hall-texts" type="application/json">(.*?)</script>', page,
                     re.S)
    assert data is not None and "<" not in data.group(1)
    assert json.loads(data.group(1)) == page_texts()
    assert '<html lang="en">' in page_html("en", "tok")
    with pytest.raises(ValueError, match="'de'"):
        make_app(None, language="de")   # type: ignore[arg-type]


def test_language_on_the_command_line(tmp_path: Path) -> None:
    secret = tmp_path / "hall.password"
    secret.write_text("s3cret\n", encoding="utf-8")
    parser = build_parser()
    common = ["hall", "--broker", "mqtt://127.0.0.1:1883", "--password-file", str(secret)]
    _options, page = options_of(parser.parse_args(common + ["--language", "ru"]))
    assert page.language == "ru"
    assert options_of(parser.parse_args(common))[1].language == "en"
    with pytest.raises(SystemExit):
        parser.parse_args(common + ["--language", "de"])
    demo = parser.parse_args(["hall", "demo", "--language", "ru"])
    assert demo.demo_language == "ru"
    # The demo's clocks speak it too (their panels and their replies to the page).
    table = hall_demo.demo_tables(2, "ru")[0]
    assert parse_match_config(table.match_text()).device.language == "ru"
    assert parse_match_config(table.match_text()).event.name == "Показ зала"
    assert parse_match_config(hall_demo.demo_tables(2)[0].match_text()).device.language == "en"


def a_view_with_every_alert() -> HallView:
    """Tables whose cards hold every alert the hall makes (the names Cyrillic, one hostile)."""
    view = HallView(P)
    at = 1_000

    def send(table: str, what: str, data: Any) -> None:
        nonlocal at
        at += 1
        payload = data if isinstance(data, bytes) else json.dumps(data).encode()
        try:
            view.receive(f"{P}/{table}/{what}", payload, at)
        except ValueError:
            pass

    players = {"left": "Анна", "right": "<b>{who}</b>"}
    send("table-1", "state", clock_state(flag="left", phase="match_over", running=None,
                                         players=players))
    send("table-1", "events", {"journal": "match-1.jsonl", "seq": 1, "at": iso(), "effects": [
        {"kind": "flag_fell", "side": "left"}, {"kind": "break_overrun", "side": "right"},
        {"kind": "challenge_decided", "side": "right", "upheld": True},
        {"kind": "challenge_decided", "side": "left", "upheld": False},
        {"kind": "challenge_decided"},
        {"kind": "refused", "reason": "pin_wrong"},
        {"kind": "refused", "reason": "pin_timeout"},
        {"kind": "refused", "reason": "pin_wrong", "why": "ПИН-код неверен (2 из 3)"},
        {"kind": "shown", "reason": "chord_locked"},
        {"kind": "shown", "reason": "chord_locked", "text": "заблокировано на 4:10"}]})
    send("table-1", "cmd/reply", {"id": "r1", "ok": False, "reason": "нельзя сейчас"})
    send("table-1", "cmd/reply", {"id": "r2", "ok": False})
    send("table-1", "notice", {"ok": False, "error": "идёт матч", "code": "match_in_progress",
                               "pending": True, "match": SHA})
    send("table-1", "notice", {"ok": False, "error": "файл матча с ошибками",
                               "code": "match_file_bad", "match": SHA})
    for _ in range(3):
        send("table-1", "state", b'{"phase": "running", "game": NaN}')
    view.note_archive("table-1", "journal match-1.jsonl archived, NOT verified: TAMPERED")
    send("table-2", "state", clock_state("table-2", phase="break", running="right",
                                         players={"left": "Ильдар", "right": "Мария"}))
    send("table-3", "state", clock_state("table-3", phase="paused", running=None))
    send("table-4", "state", clock_state("table-4", phase="arbiter", running=None))
    send("table-5", "online", b"0")
    return view


def test_the_page_says_each_alert_as_the_hall_does_and_in_russian(
        browser: Any, broker: Broker, tmp_path: Path) -> None:  # noqa: F811
    """In English the page's words for every alert are the hall's own `text`; in Russian they
    hold no English word but what a table sent (its names, its reasons: here Cyrillic); a
    player's name that looks like markup or a parameter stays text."""
    view = a_view_with_every_alert()
    cards = view.cards()
    with language_hall(broker, tmp_path, "en") as hall:
        page = browser.new_page(viewport=DESKTOP)
        try:
            page.goto(hall.base + "/")
            english = page.evaluate(
                "cards => cards.map(c => c.needs.map(n => alertText(n, c)))", cards)
            assert english == [[n["text"] for n in c["needs"]] for c in cards]
            page.select_option("#language", "ru")
            russian = page.evaluate(
                "cards => cards.map(c => c.needs.map(n => alertText(n, c)))", cards)
        finally:
            page.close()
    said = [line for c in russian for line in c]
    for line in said:
        no_english(line, "an alert", allowed=("<b>{who}</b>", "NaN", "TAMPERED", "NOT",
                                              "journal", "archived", "verified", "state",
                                              "game", "is", "not", "JSON"))
    assert "упал флажок: Анна (слева)" in said
    assert "проигрыш по времени: Анна (слева)" in said
    assert "перерыв превышен: <b>{who}</b> (справа)" in said
    assert "апелляция (<b>{who}</b> (справа)): принята" in said
    assert "апелляция (игрок): отклонена" in said
    assert "опаздывает с перерыва: Мария (справа)" in said
    assert "неверный ПИН-код судьи на часах: ПИН-код не введён вовремя" in said
    assert "неверный ПИН-код судьи на часах: ПИН-код неверен (2 из 3)" in said
    assert "команда отклонена: нельзя сейчас" in said
    assert "команда отклонена: причина не указана" in said
    assert "матч не принят: файл матча с ошибками" in said
    # A match waiting for the one in progress: the page's own words and action, never the
    # clock's shell hint (`new-match --force`).
    assert ("следующий матч ждёт: идёт матч; следующий загрузится, когда он закончится "
            "(прервать его сейчас: «Загрузить принудительно…»)") in said
    assert not any("--force" in line for line in said)
    assert "часы на паузе" in said and "часы остановлены: судья у часов" in said
    assert "нет связи" in said
    bad = [line for line in said if line.startswith("ошибочное сообщение от стола (state): ")]
    assert len(bad) == 1 and bad[0].endswith(" (всего 3)"), bad


# --- the page in Russian, in a browser ----------------------------------------------------------

EVENT = "Кубок Москвы"
NAMES = {"table-1": ("Анна", "Борис"), "table-2": ("Ильдар", "Мария"),
         "table-3": ("Георгий", "Ольга")}


def three_tables(broker: Broker) -> list[Any]:  # noqa: F811
    """table-1 plays, table-2's flag fell (Мария's), table-3 is offline: Cyrillic names."""
    clients = []
    for table, (left, right) in NAMES.items():
        if table != "table-1":
            broker.add_account(table)
        client = table_client(broker, table) if table == "table-1" else broker.client(table)
        clients.append(client)
        publish(client, f"{P}/{table}/online", "1", retain=True)
        state: dict[str, Any] = {"players": {"left": left, "right": right}, "event": EVENT,
                                 "crawford_game": table == "table-1"}
        if table == "table-2":
            state.update(phase="match_over", running=None, flag="right", right_ms=0)
        publish(client, f"{P}/{table}/state", clock_state(table, **state), retain=True)
    publish(clients[1], f"{P}/table-2/events", {
        "journal": "match-1.jsonl", "seq": 6, "at": iso(),
        "effects": [{"kind": "flag_fell", "side": "right"}]})
    publish(clients[2], f"{P}/table-3/online", "0", retain=True)
    return clients


def stop(clients: list[Any]) -> None:
    for client in clients:
        client.disconnect()
        client.loop_stop()


def answer_commands(client: Any, table: str) -> None:
    """The table answers every command: refused as not understood, a reason in its language."""
    def answer(c: Any, _userdata: Any, msg: Any) -> None:
        request = json.loads(msg.payload)
        c.publish(f"{P}/{table}/cmd/reply", json.dumps(
            {"id": request["id"], "ok": False, "outcome": "bad request",
             "reason": "неизвестная команда судьи"}), qos=1)
    client.on_message = answer
    client.subscribe(f"{P}/{table}/cmd", qos=1)


def test_the_russian_page_shows_no_english(browser: Any, hall_ru: RunningHall,  # noqa: F811
                                           broker: Broker, tmp_path: Path) -> None:  # noqa: F811
    clients = three_tables(broker)
    answer_commands(clients[1], "table-2")
    page = browser.new_page(viewport=DESKTOP)
    try:
        page.goto(hall_ru.base + "/")
        page.wait_for_selector('.card[data-table="table-2"] .need[data-kind="flag"]',
                               timeout=PAGE_WAIT_MS)
        page.wait_for_function("document.querySelectorAll('.card').length === 3",
                               timeout=PAGE_WAIT_MS)
        page.wait_for_selector("#broker.pill-ok", timeout=PAGE_WAIT_MS)
        assert page.evaluate("document.documentElement.lang") == "ru"
        assert page.inner_text("#counts") == "3 стола · 2 ждут вас · 1 без связи"
        assert page.evaluate("[1, 2, 5, 11, 21, 22, 25].map(n => tn('count.tables', n))") == [
            "1 стол", "2 стола", "5 столов", "11 столов", "21 стол", "22 стола", "25 столов"]
        flagged = page.inner_text('.card[data-table="table-2"]')
        assert "упал флажок: Мария (справа)" in flagged
        assert "проигрыш по времени: Мария (справа)" in flagged
        assert "матч окончен" in flagged.lower() and "Ильдар" in flagged and EVENT in flagged
        assert "КРОУФОРД" in page.inner_text('.card[data-table="table-1"]')
        assert "нет связи" in page.inner_text('.card[data-table="table-3"]')
        no_english(page.evaluate(VISIBLE_TEXT), "the cards")
        no_english(page.evaluate(ATTRIBUTES), "the cards' titles", allowed=BROKER_URL)
        page.screenshot(path=str(shots(tmp_path) / "hall-ru-cards.png"))

        # A table's dialog: its alerts, a command and the table's reply.
        page.click('.card[data-table="table-2"] .facts')
        page.wait_for_selector("#table-dialog[open]", timeout=PAGE_WAIT_MS)
        assert page.inner_text("#td-title") == "table-2: Ильдар — Мария"
        page.fill("#cmd-input", "dedcut left 30s")
        page.click("#cmd-form button[type=submit]")
        page.wait_for_selector("#cmd-result.bad", timeout=PAGE_WAIT_MS)
        assert page.inner_text("#cmd-result") == (
            "✗ dedcut left 30s → не понято: неизвестная команда судьи")
        page.wait_for_selector("#td-body li.reply", timeout=PAGE_WAIT_MS)
        dialog = page.evaluate(VISIBLE_TEXT, page.query_selector("#table-dialog"))
        assert "Ответы" in dialog and "Последние события" in dialog
        no_english(dialog, "the table's dialog")
        no_english(page.evaluate(ATTRIBUTES), "the dialog's titles",
                   allowed=BROKER_URL + COMMAND_EXAMPLE)
        page.screenshot(path=str(shots(tmp_path) / "hall-ru-table-dialog.png"))
        # The hall's refusal of a stale page (it restarted) in the page's words too.
        page.evaluate("token = 'a token of the hall before it restarted'")
        page.evaluate("document.getElementById('cmd-result').className = 'result'")
        page.click('.quick button[data-cmd="pause"]')
        page.wait_for_selector("#cmd-result.bad", timeout=PAGE_WAIT_MS)
        assert page.inner_text("#cmd-result") == (
            "✗ pause: ключ страницы устарел или отсутствует (зал перезапущен?): обновите страницу")
        page.evaluate(f"token = {json.dumps(hall_ru.token)}")
        page.keyboard.press("Escape")

        # The round: its form, and the hall's answer in words.
        page.click("#open-round")
        page.wait_for_selector("#round-dialog[open]", timeout=PAGE_WAIT_MS)
        page.fill("#round-event", EVENT)
        page.fill("#round-name", "2")
        assert page.inner_text("#round-dialog .file-pick") == (
            "Пары тура (CSV)\nВыбрать файл…\nфайл не выбран")
        csv = tmp_path / "тур-2.csv"
        csv.write_text("table,left,right,length\ntable-1,Дмитрий,Елена,5\n", encoding="utf-8")
        page.set_input_files("#round-file", str(csv))
        page.wait_for_function("document.getElementById('round-csv').value.includes('Елена')",
                               timeout=PAGE_WAIT_MS)
        assert page.inner_text("#round-file-name") == "тур-2.csv"
        page.click("#round-form button[type=submit]")
        page.wait_for_selector("#round-result table", timeout=PAGE_WAIT_MS)
        pushed = page.inner_text("#round-result")
        # Table-1 is playing: its next match waits at the hall until that match is over.
        assert "разослано: 1 (в очереди: 1)" in pushed \
            and "в очереди: загрузится, когда закончится текущий матч" in pushed, pushed
        no_english(page.evaluate(VISIBLE_TEXT, page.query_selector("#round-dialog")),
                   "the round dialog", allowed=("CSV", "тур-2.csv"))   # the file's kind and name
        # The CSV's header and disciplines are the file's format (hall_pairings), not words.
        no_english(page.evaluate(ATTRIBUTES), "the round dialog's placeholders",
                   allowed=("table,left,right,length,discipline", "longgammon", *BROKER_URL))
        page.screenshot(path=str(shots(tmp_path) / "hall-ru-round.png"))
        page.keyboard.press("Escape")

        # The archive: nothing finished yet.
        page.click("#open-archive")
        page.wait_for_selector("#archive-dialog[open]", timeout=PAGE_WAIT_MS)
        assert "Законченных журналов пока нет." in page.inner_text("#archive-dialog")
        no_english(page.evaluate(VISIBLE_TEXT, page.query_selector("#archive-dialog")),
                   "the archive")
    finally:
        page.close()
        stop(clients)


def test_the_force_load_confirmation_in_russian(browser: Any, hall_ru: RunningHall,  # noqa: F811
                                                broker: Broker, tmp_path: Path) -> None:  # noqa: F811
    client = table_client(broker, "table-1")
    try:
        publish(client, f"{P}/table-1/online", "1", retain=True)
        publish(client, f"{P}/table-1/state", clock_state(
            players={"left": "Анна", "right": "Борис"}, event=EVENT), retain=True)
        publish(client, f"{P}/table-1/notice", {
            "ok": False, "error": "идёт матч Анна — Борис", "code": "match_in_progress",
            "pending": True, "match": SHA})
        page = browser.new_page(viewport=PHONE)
        try:
            page.goto(hall_ru.base + "/")
            page.wait_for_selector('.card[data-table="table-1"] .need[data-kind="notice"]',
                                   timeout=PAGE_WAIT_MS)
            page.click('.card[data-table="table-1"] .facts')
            page.wait_for_selector("#td-body button.force", timeout=PAGE_WAIT_MS)
            said = page.inner_text("#td-body")
            assert "Файл матча: не принят: идёт матч: этот загрузится, когда он закончится" \
                in said and "--force" not in said, said
            page.click("#td-body .alert-row button.force")
            page.wait_for_selector("#force-dialog[open]", timeout=PAGE_WAIT_MS)
            asked = page.inner_text("#force-dialog")
            assert "Принудительно загрузить следующий матч на столе table-1?" in asked
            assert "Анна 3–2 Борис (до 7, партия 2)" in asked, asked
            assert "прерванный" in asked and "Прервать и загрузить" in asked
            no_english(page.evaluate(VISIBLE_TEXT, page.query_selector("#force-dialog")),
                       "the force-load confirmation")
            assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
            page.screenshot(path=str(shots(tmp_path) / "hall-ru-force-confirm.png"))
            # The archive's verdicts in words (an entry as the hall's stream brings it).
            page.click("#fd-cancel")
            page.keyboard.press("Escape")
            page.evaluate("""setArchive([
              {table: "table-1", name: "match-1.jsonl", ok: true, sealed: true, verified: true,
               message: "", summary: ""},
              {table: "table-1", name: "match-2.jsonl", ok: true, sealed: false,
               verified: false, message: "", summary: ""},
              {table: "table-1", name: "match-3.jsonl", ok: false, sealed: true,
               verified: false, message: "", summary: ""}])""")
            page.click("#open-archive")
            listed = page.eval_on_selector_all("#archive-list li", "ls => ls.map(l => l.innerText)")
            assert [line.split("\n")[1] for line in listed] == [
                "проверен", "читается, печать не проверена", "НЕ проверен"], listed
        finally:
            page.close()
    finally:
        stop([client])


def test_the_switch_changes_the_language_and_is_remembered(
        browser: Any, hall_en: RunningHall, broker: Broker,  # noqa: F811
        tmp_path: Path) -> None:
    clients = three_tables(broker)
    context = browser.new_context(viewport=PHONE)
    try:
        page = context.new_page()
        page.goto(hall_en.base + "/")
        page.wait_for_selector('.card[data-table="table-2"] .need[data-kind="flag"]',
                               timeout=PAGE_WAIT_MS)
        page.wait_for_function("document.querySelectorAll('.card').length === 3",
                               timeout=PAGE_WAIT_MS)
        assert page.inner_text("#counts") == "3 tables · 2 need you · 1 offline"
        assert "flag fell: right (Мария)" in page.inner_text('.card[data-table="table-2"]')
        assert page.inner_text("#open-round") == "Push round"
        page.select_option("#language", "ru")
        assert page.inner_text("#counts") == "3 стола · 2 ждут вас · 1 без связи"
        assert "упал флажок: Мария (справа)" in page.inner_text('.card[data-table="table-2"]')
        assert page.inner_text("#open-round") == "Разослать тур"
        no_english(page.evaluate(VISIBLE_TEXT), "the page switched to Russian")
        # Remembered by this browser: a reload is Russian at once.
        page.reload()
        page.wait_for_selector('.card[data-table="table-2"] .need[data-kind="flag"]',
                               timeout=PAGE_WAIT_MS)
        page.wait_for_function("document.querySelectorAll('.card').length === 3",
                               timeout=PAGE_WAIT_MS)
        assert page.evaluate("document.documentElement.lang") == "ru"
        assert page.input_value("#language") == "ru"
        assert page.inner_text("#counts") == "3 стола · 2 ждут вас · 1 без связи"
        no_english(page.evaluate(VISIBLE_TEXT), "the page reloaded")
        assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
        page.screenshot(path=str(shots(tmp_path) / "hall-ru-phone.png"), full_page=True)
        # Another browser has not chosen: the hall's language.
        other = browser.new_page(viewport=DESKTOP)
        other.goto(hall_en.base + "/")
        other.wait_for_function("document.querySelectorAll('.card').length === 3",
                                timeout=PAGE_WAIT_MS)
        assert other.inner_text("#counts") == "3 tables · 2 need you · 1 offline"
        other.close()
        # And back: English again, remembered too.
        page.select_option("#language", "en")
        page.reload()
        page.wait_for_function("document.querySelectorAll('.card').length === 3",
                               timeout=PAGE_WAIT_MS)
        assert page.inner_text("#counts") == "3 tables · 2 need you · 1 offline"
    finally:
        context.close()
        stop(clients)


"""The director's "move the match here" on the Russian page (issue 25, SPEC §13.5): when the
hall holds no whole copy of the table's journal it says why with a code and its fields
(`NoWholeCopy`), and the page words it in its language; the English page says what the hall
says. Against a real Mosquitto, the real hall and the page in a headless Chromium; the
screenshot is looked at."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from gammonclock.hall.continuation import LiveCopies, NoWholeCopy
from hall_ru_helpers import no_english, shots
from hall_web_helpers import (
    DESKTOP,
    RunningHall,
    clock_state,
    journal_event,
    publish,
    table_client,
)
from mqtt_helpers import Broker


def _copies(tmp_path: Path) -> LiveCopies:
    from gammonclock.journal.records import Stamp
    from gammonclock.journal.writer import JournalWriter

    path = tmp_path / "match-3.jsonl"
    writer = JournalWriter.create(path, b"\x07" * 32, {"config": "[match]\nlength = 3\n"}, 0,
                                  Stamp(1, "b", 2))
    for seq in range(1, 4):
        writer.append("tick", seq * 1_000_000_000, {"effects": []}, Stamp(seq, "b", seq))
    writer.close()
    lines = path.read_text().splitlines()
    copies = LiveCopies()
    copies.take("T1", journal_event(path.name, 1, 0, lines[0:2]))
    copies.take("T1", journal_event(path.name, 3, 2, lines[3:4]))     # record 2 missed
    cut = journal_event("match-4.jsonl", 1, 0, []).replace(b'"records": []',
                                                         b'"records_cut": true')
    copies.take("T2", cut)
    return copies


@pytest.mark.parametrize(("table", "journal", "code", "fields"), [
    ("T9", None, "no_copy", {"table": "T9"}),
    ("T1", "match-9.jsonl", "no_copy_of", {"table": "T1", "journal": "match-9.jsonl"}),
    ("T1", None, "copy_gap", {"table": "T1", "journal": "match-3.jsonl", "record": 2}),
    ("T2", None, "copy_cut", {"table": "T2", "journal": "match-4.jsonl"}),
])
def test_no_whole_copy_carries_a_code_and_its_fields(tmp_path, table, journal, code,
                                                     fields) -> None:
    with pytest.raises(NoWholeCopy) as caught:
        _copies(tmp_path).journal_text(table, journal)
    assert isinstance(caught.value, ValueError)
    assert (caught.value.code, caught.value.fields) == (code, fields)


SAID_RU = {
    "no_copy": "у зала нет журнала стола T9 (с запуска зала от стола не пришло событий с "
               "записями)",
    "no_copy_of": "у зала нет копии журнала match-9.jsonl стола T1",
    "copy_gap": "в копии журнала match-3.jsonl стола T1 в зале нет записи 2 (с запуска зала "
                "пропущены события): по копии зала матч не перенести; продолжите его с карты "
                "памяти часов или с флешки",
    "copy_cut": "копия журнала match-4.jsonl стола T2 в зале неполная: стол не прислал часть "
                "записей (сообщение было бы слишком длинным)",
}


def _errors(tmp_path: Path) -> list[NoWholeCopy]:
    copies, errors = _copies(tmp_path), []
    for table, journal in (("T9", None), ("T1", "match-9.jsonl"), ("T1", None), ("T2", None)):
        try:
            copies.journal_text(table, journal)
        except NoWholeCopy as exc:
            errors.append(exc)
    return errors


def _tables(broker: Broker) -> list[Any]:
    one, two = table_client(broker, "table-2"), table_client(broker, "table-1")
    publish(one, "gammonclock/table-2/state", clock_state("table-2"), retain=True)
    publish(two, "gammonclock/table-1/state", clock_state("table-1"), retain=True)
    return [one, two]


def test_the_russian_page_says_why_the_match_cannot_be_moved(
        browser: Any, hall_ru: RunningHall, broker: Broker, tmp_path: Path) -> None:
    clients = _tables(broker)
    page = browser.new_page(viewport=DESKTOP)
    try:
        page.goto(hall_ru.base + "/")
        page.click('.card[data-table="table-2"] .facts')
        page.wait_for_selector("#move-from option[value='table-1']", state="attached")
        page.click("#move-send")
        page.wait_for_selector("#cmd-result.bad", timeout=5000)
        text = page.inner_text("#cmd-result")
        assert text.endswith("у зала нет журнала стола table-1 (с запуска зала от стола не "
                             "пришло событий с записями)"), text
        no_english(text, "the move's answer", allowed=("continue",))
        page.screenshot(path=str(shots(tmp_path) / "hall-ru-move-refused.png"))
        # A command longer than the hall takes: said in Russian too (its code and bound).
        page.fill("#cmd-input", "warn left " + "x" * 400)
        page.click("#cmd-form button[type=submit]")
        page.wait_for_function("() => document.querySelector('#cmd-result').textContent"
                               ".includes('300')", timeout=5000)
        assert page.inner_text("#cmd-result").endswith(
            "команда — одна строка длиной от 1 до 300 знаков")
        for exc in _errors(tmp_path):
            said = page.evaluate("([code, fields]) => t(`error.${code}`, fields)",
                                 [exc.code, exc.fields])
            assert said == SAID_RU[exc.code]
    finally:
        page.close()
        for client in clients:
            client.disconnect()
            client.loop_stop()


def test_the_english_page_says_what_the_hall_says(
        browser: Any, hall_en: RunningHall, tmp_path: Path) -> None:
    page = browser.new_page(viewport=DESKTOP)
    try:
        page.goto(hall_en.base + "/")
        page.wait_for_function("() => typeof t === 'function'", timeout=5000)
        for exc in _errors(tmp_path):
            said = page.evaluate("([code, fields]) => t(`error.${code}`, fields)",
                                 [exc.code, exc.fields])
            assert said == str(exc)
    finally:
        page.close()

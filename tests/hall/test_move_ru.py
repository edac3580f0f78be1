"""The director's "move the match here" on the Russian page (issues 25 and 31, SPEC §13.5): when
the hall holds no whole, verified copy of the table's journal it says why with a code and its
fields (`NoWholeCopy`), and the page words it in its language; the English page says what the
hall says. Against a real Mosquitto, the real hall and the page in a headless Chromium; the
screenshot is looked at."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from gammonclock.hall.continuation import LiveCopies, NoWholeCopy
from hall_ru_helpers import no_english, shots
from hall_web_helpers import (
    DESKTOP,
    PAGE_WAIT_MS,
    RunningHall,
    clock_state,
    journal_event,
    publish,
    table_client,
)
from move_helpers import give_key, publish_lines, sealed_lines
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
    keys = tmp_path / "keys"
    give_key(keys, "T1", b"\x07" * 32)
    give_key(keys, "T2", b"\x07" * 32)
    copies = LiveCopies(keys_dir=keys)
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


def _tables(broker: Broker, tmp_path: Path) -> list[Any]:
    """table-2 (the spare, ready) and table-1, offline, whose events brought its journal's
    lines to a hall that holds no key (`hall_ru` has no --keys-dir)."""
    one, two = table_client(broker, "table-2"), table_client(broker, "table-1")
    publish(one, "gammonclock/table-2/state", clock_state("table-2", phase="between_games",
                                                          running=None, lifecycle="ready"),
            retain=True)
    publish(two, "gammonclock/table-1/state", clock_state("table-1"), retain=True)
    lines = sealed_lines(tmp_path / "match-1.jsonl", b"\x07" * 32)
    publish_lines(two, "table-1", "match-1.jsonl", lines)
    publish(two, "gammonclock/table-1/online", "0", retain=True)
    return [one, two]


def test_the_russian_page_says_why_the_match_cannot_be_moved(
        browser: Any, hall_ru: RunningHall, broker: Broker, tmp_path: Path) -> None:
    clients = _tables(broker, tmp_path)
    page = browser.new_page(viewport=DESKTOP)
    try:
        page.goto(hall_ru.base + "/")
        page.click('.card[data-table="table-2"] .players')
        page.click("#move-open")
        row = '#move-from label[data-table="table-1"]'
        page.wait_for_selector(row, timeout=PAGE_WAIT_MS)
        page.wait_for_function("() => document.querySelector('#move-from label[data-table="
                               "\"table-1\"]').dataset.kind === 'offline'", timeout=PAGE_WAIT_MS)
        text = page.inner_text(row)
        assert text.endswith("зал запущен без --keys-dir: он не хранит строк журнала, которые "
                             "не может проверить, поэтому переносить из журнала стола table-1 "
                             "нечего; продолжите матч с карты памяти часов или с флешки"), text
        assert page.is_disabled(f"{row} input") and page.is_disabled("#move-send")
        no_english(page.inner_text("#move-dialog"), "the move's dialog",
                   allowed=("--keys-dir", "Anna", "Boris"))
        page.screenshot(path=str(shots(tmp_path) / "hall-ru-move-refused.png"))
        page.click("#md-cancel")
        # A command longer than the hall takes: said in Russian too (its code and bound).
        page.fill("#cmd-input", "warn left " + "x" * 400)
        page.click("#cmd-form button[type=submit]")
        page.wait_for_function("() => document.querySelector('#cmd-result').textContent"
                               ".includes('300')", timeout=PAGE_WAIT_MS)
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
        page.wait_for_function("() => typeof t === 'function'", timeout=PAGE_WAIT_MS)
        for exc in _errors(tmp_path):
            said = page.evaluate("([code, fields]) => t(`error.${code}`, fields)",
                                 [exc.code, exc.fields])
            assert said == str(exc)
    finally:
        page.close()


def _move_refusals(tmp_path: Path) -> list[NoWholeCopy | Exception]:
    """Every refusal of a move the hall words with a code (issue 31), as the hall raises them:
    each way a table's journal line fails, no key, no --keys-dir, a source not confirmed, a
    stale dialog, the spare as its own source, a move not recorded."""
    import asyncio

    from gammonclock.cli.main import build_parser
    from gammonclock.hall.continuation import CopyFault, Refusal, refusal_problem
    from gammonclock.hall.decisions import HallDecisions
    from gammonclock.hall.run import options_of
    from gammonclock.hall.server import Hall
    from move_helpers import key_of

    found: list[Exception] = [refusal_problem("table-1", "match-1.jsonl", Refusal(fault, 4))
                              for fault in CopyFault]
    lines = sealed_lines(tmp_path / "match-1.jsonl", key_of("table-1"))
    for keys in (None, tmp_path / "no-keys"):
        copies = LiveCopies(keys_dir=keys)
        copies.take("table-1", journal_event("match-1.jsonl", 5, 0, lines))
        found.append(copies.problem("table-1") or AssertionError("no refusal"))
    secret = tmp_path / "hall.password"
    secret.write_text("s3cret\n", encoding="utf-8")
    give_key(tmp_path / "keys", "table-1", key_of("table-1"))
    options, _ = options_of(build_parser().parse_args(
        ["hall", "--broker", "mqtt://127.0.0.1:1883", "--password-file", str(secret),
         "--archive", str(tmp_path / "archive"), "--keys-dir", str(tmp_path / "keys")]))
    hall = Hall(options)
    hall.live.take("table-1", journal_event("match-1.jsonl", 5, 0, lines))
    for args, kwargs in ((("table-1", "table-2"), {}),
                         (("table-1", "table-2"), {"live": True, "journal": "match-0.jsonl"}),
                         (("table-2", "table-2"), {"live": True})):
        try:
            asyncio.run(hall.move(*args, "director", **kwargs))
        except Exception as exc:         # noqa: BLE001 (each one is checked below)
            found.append(exc)
    (tmp_path / "a-file").write_text("")
    hall.actions.decisions = HallDecisions(tmp_path / "a-file" / "hall-decisions.jsonl")
    try:
        asyncio.run(hall.actions._moved("table-1", "table-2", "director",
                                        hall.live.whole_copy("table-1")))
    except Exception as exc:             # noqa: BLE001
        found.append(exc)
    return found


CODES_RU = {
    "copy_seal": "стол table-1 прислал строки журнала match-1.jsonl, не запечатанные его "
                 "собственным ключом (запись 4)",
    "copy_chain": "стол table-1 прислал строку журнала match-1.jsonl, которая не продолжает "
                  "записи, что есть в зале (запись 4)",
    "copy_bounds": "стол table-1 прислал строку журнала match-1.jsonl вне события, которое её "
                   "несло (запись 4)",
    "copy_damaged": "стол table-1 прислал строку журнала match-1.jsonl, которая не является "
                    "целой записью",
    "no_keys_dir": "зал запущен без --keys-dir",
    "no_key": "у зала нет ключа стола table-1",
    "source_live": "неизвестно, что со столом table-1 нет связи: перенос его матча навсегда "
                   "остановит его часы (они покажут «матч перенесён на table-2»)",
    "move_stale": "новейший журнал стола table-1 в зале — match-1.jsonl, а не match-0.jsonl",
    "same_table": "матч переносят на другой стол, а не на тот, где он идёт",
    "move_not_recorded": "стол table-2 продолжил матч, но зал не смог записать перенос",
}


def test_the_moves_refusals_say_in_english_what_the_hall_says_and_are_worded_in_russian(
        browser: Any, hall_en: RunningHall, hall_ru: RunningHall, tmp_path: Path) -> None:
    from concurrent.futures import ThreadPoolExecutor
    with ThreadPoolExecutor(1) as pool:       # (its asyncio loop: not the browser's thread)
        refusals = pool.submit(_move_refusals, tmp_path).result()
    assert sorted(getattr(exc, "code", repr(exc)) for exc in refusals) == sorted(CODES_RU)
    pages = {}
    try:
        for language, hall in (("en", hall_en), ("ru", hall_ru)):
            pages[language] = browser.new_page(viewport=DESKTOP)
            pages[language].goto(hall.base + "/")
            pages[language].wait_for_function("() => typeof t === 'function'", timeout=PAGE_WAIT_MS)
        for exc in refusals:
            assert isinstance(exc, ValueError)
            code, fields = exc.code, exc.fields           # type: ignore[attr-defined]
            english = pages["en"].evaluate("([c, f]) => t(`error.${c}`, f)", [code, fields])
            assert english == str(exc)
            russian = pages["ru"].evaluate("([c, f]) => t(`error.${c}`, f)", [code, fields])
            assert russian.startswith(CODES_RU[code]), russian
            # (the key's path is a file's name, not a word: its table id is taken out first;
            # an OS error is the system's own words)
            no_english(russian, code, allowed=("--keys-dir", '"live": true',
                                               str(tmp_path / "no-keys"), ".key",
                                               str(fields.get("why", "-"))))
    finally:
        for page in pages.values():
            page.close()

"""What the archive found in a journal, on the Russian director's page (issue 25): the verdict's
detail is the journal's own words (what verify found in a tampered journal, the reader's torn or
damaged record, why a journal cannot be read), and the hall sends it in every language the page
speaks (`details`, from words.py's "jv.*", "jr.*", "jd.*"), the file names and numbers as they
are. In English the page says what the hall says. Against a real Mosquitto, the real hall and
the page in a headless Chromium; the screenshot of the dialog is looked at."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from gammonclock.hall.archive import verify_archived
from gammonclock.journal.key import read_key
from hall_ru_helpers import shots
from hall_web_helpers import (
    DESKTOP,
    PAGE_WAIT_MS,
    P,
    RunningHall,
    clock_state,
    finished_journal,
    publish,
    table_client,
)
from journal_helpers import bodies_of, sealed, set_in
from mqtt_helpers import Broker


def _archived(tmp_path: Path) -> dict[str, Any]:
    """Three archived copies of a real journal with the table's key: one with a record removed
    (TAMPERED), one whose last line is torn (intact), one whose header's config is not valid,
    sealed all the same (intact, its match cannot be replayed)."""
    journal, state = finished_journal(tmp_path)
    keys = tmp_path / "keys"
    keys.mkdir()
    (keys / "table-1.key").write_text((state / "device.key").read_text())
    lines = journal.read_text().splitlines(keepends=True)
    folder = tmp_path / "archive" / "table-1"
    folder.mkdir(parents=True)
    removed = folder / "match-removed-table-1.jsonl"
    removed.write_text("".join(lines[:2] + lines[3:]))
    torn = folder / "match-torn-table-1.jsonl"
    torn.write_text("".join(lines) + lines[-1][:40])
    bodies = bodies_of(journal)
    set_in(bodies[0], "data.config", '[match]\nlength = 0\n')
    bad_config = folder / "match-config-table-1.jsonl"
    bad_config.write_bytes(sealed(read_key(state), bodies))
    return {name: verify_archived(path, "table-1", keys)
            for name, path in (("removed", removed), ("torn", torn), ("config", bad_config))}


def test_the_hall_sends_the_journals_own_words_in_each_language(tmp_path: Path) -> None:
    found = _archived(tmp_path)
    removed = found["removed"].say
    assert removed["code"] == "tampered"
    assert removed["details"]["en"] == removed["detail"] == "line 3: record 2 was removed"
    assert removed["details"]["ru"] == "строка 3: запись 2 удалена"
    torn = found["torn"].say
    assert torn["code"] == "intact"
    assert torn["details"] == {"en": "; a torn last line of 40 bytes was dropped",
                               "ru": "; оборванная последняя строка (40 байт) отброшена"}
    config = found["config"].summary_say
    assert config["code"] == "cannot_replay"
    assert config["details"]["en"] == config["detail"]
    assert config["details"]["ru"].endswith(
        "(заголовок журнала): match.length: 0 — вне допустимых пределов; допустимо 1..99"), \
        config
    # without the table's key: the reader's problems, each said in Russian
    unchecked = verify_archived(Path(found["removed"].path), "table-1", None).say
    assert unchecked["code"] == "unchecked_no_keys"
    path = found["removed"].path
    assert re.fullmatch(re.escape(path) + r": оборванная последняя запись \(\d+ байт с байта "
                        r"\d+\) отброшена", unchecked["details"]["ru"]), unchecked
    assert unchecked["details"]["en"] == unchecked["detail"]


def _says(hall: RunningHall, tmp_path: Path) -> list[dict[str, Any]]:
    return [v.as_json() for v in _archived(tmp_path).values()]


def test_the_russian_page_says_the_journals_words_in_russian(
        browser: Any, hall_ru: RunningHall, broker: Broker, tmp_path: Path) -> None:
    client = table_client(broker, "table-1")
    publish(client, f"{P}/table-1/online", "1", retain=True)
    publish(client, f"{P}/table-1/state", clock_state(), retain=True)
    page = browser.new_page(viewport=DESKTOP)
    try:
        page.goto(hall_ru.base + "/")
        page.wait_for_selector('.card[data-table="table-1"]', timeout=PAGE_WAIT_MS)
        records = _says(hall_ru, tmp_path)
        said = page.evaluate("records => records.map((v) => archiveMessage(v))", records)
        assert said[0] == "ЖУРНАЛ ИЗМЕНЁН: строка 3: запись 2 удалена"
        assert re.fullmatch(r"цел, печати проверены: \d+ запис(ь|и|ей); оборванная последняя "
                            r"строка \(40 байт\) отброшена", said[1]), said[1]
        summary = page.evaluate("v => archiveSummary(v)", records[2])
        assert summary.startswith("не воспроизводится: ") and summary.endswith(
            "(заголовок журнала): match.length: 0 — вне допустимых пределов; допустимо "
            "1..99"), summary
        # an archived journal's alert says the archive's own verdict, its detail in Russian
        page.evaluate("records => setArchive(records)", records)
        alert = page.evaluate("""() => alertText(
            { say: ["archive_not_verified", "match-removed-table-1.jsonl", "tampered", 0, "",
                    "line 3: record 2 was removed"] }, { table: "table-1" })""")
        assert alert.endswith("ЖУРНАЛ ИЗМЕНЁН: строка 3: запись 2 удалена"), alert
        page.click("#open-archive")
        page.wait_for_selector("#archive-dialog[open]", timeout=PAGE_WAIT_MS)
        assert "строка 3: запись 2 удалена" in page.inner_text("#archive-dialog")
        page.screenshot(path=str(shots(tmp_path) / "hall-ru-archive-details.png"))
    finally:
        page.close()
        client.disconnect()
        client.loop_stop()


def test_the_english_page_says_what_the_hall_says(
        browser: Any, hall_en: RunningHall, broker: Broker, tmp_path: Path) -> None:
    page = browser.new_page(viewport=DESKTOP)
    try:
        page.goto(hall_en.base + "/")
        page.wait_for_function("() => typeof archiveMessage === 'function'", timeout=PAGE_WAIT_MS)
        records = _says(hall_en, tmp_path)
        said = page.evaluate("records => records.map((v) => archiveMessage(v))", records)
        assert said == [v["message"] for v in records]
        assert page.evaluate("v => archiveSummary(v)", records[2]) == records[2]["summary"]
    finally:
        page.close()

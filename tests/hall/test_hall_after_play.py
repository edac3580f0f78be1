"""After play (issue 32): a round's printable sheet (one match a printed page, both players'
and the arbiter's signatures, in the page's language), each archived match's HTML report (the
clock's own export, made by the hall on demand; none for a TAMPERED journal), and a round's
archive as one zip (its journals, its results.csv, the reports made), each under the page's
password, linked from the results and the archive. Against a real Mosquitto, the real hall
and two real clocks on mock pins that play the round the hall pushed to the end; the sheet in
headless Chromium's print preview and its PDF."""

from __future__ import annotations

import base64
import csv
import io
import os
import re
import shutil
import socket
import sys
import time
import urllib.error
import urllib.request
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest

from gammonclock.hall import after_play, reports
from gammonclock.hall.after_play import (
    Words,
    round_results,
    round_sheet_html,
    safe_name,
    zip_entries,
)
from gammonclock.hall.results import Result
from gammonclock.journal.key import SECRET_FILE
from gammonclock.link import publisher as link_publisher
from hall_ru_helpers import shots
from hall_web_helpers import DESKTOP, PAGE_WAIT_MS, RunningHall
from mqtt_helpers import Broker, start_broker
from table_helpers import MATCH, Table, all_acknowledged, device_text, end_the_match, play, wait

PASSWORD = "s3cret"
ROUND = "R1"
PAIRS = {"table-1": ("Anna", "Boris"), "table-2": ("Вера", "Глеб")}
CYRILLIC = re.compile("[а-яёА-ЯЁ]")


@dataclass
class Played:
    hall: RunningHall
    archive: Path
    journals: dict[str, str]          # table -> the name of its round's journal
    forged: str                       # table-1's copy with a name changed: TAMPERED


def get(hall: RunningHall, path: str, password: str | None = PASSWORD
        ) -> tuple[int, dict[str, str], bytes]:
    headers = {} if password is None else {
        "Authorization": "Basic " + base64.b64encode(f"td:{password}".encode()).decode()}
    request = urllib.request.Request(hall.base + quote(path, safe="/?=&%"), headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=90) as response:
            return response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), error.read()


@pytest.fixture(scope="module")
def played(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Played]:
    """Round R1 pushed to two real clocks and played to the end (left disqualified), their
    journals archived and verified with the tables' keys; then, beside table-1's, a copy of it
    with a record changed (TAMPERED, its round still read), and the hall started again on that
    archive."""
    root = tmp_path_factory.mktemp("after-play")
    keys, archive = root / "keys", root / "archive"
    keys.mkdir()
    patch = pytest.MonkeyPatch()
    patch.setattr(link_publisher, "RESEND_MIN_S", 0.5)
    patch.setattr(link_publisher, "RESEND_MAX_S", 2.0)
    broker: Broker = start_broker(root / "broker")
    tables: list[Table] = []
    journals: dict[str, str] = {}
    try:
        with RunningHall(broker, archive, keys, password=PASSWORD) as hall:
            rows = "".join(f"{t},{left},{right},3\n" for t, (left, right) in PAIRS.items())
            answer = hall.post("/api/round", {"csv": "table,left,right,length\n" + rows,
                                              "event": "Moscow Open", "round": ROUND},
                               auth=PASSWORD)
            assert answer["errors"] == 0, answer
            for table_id in PAIRS:
                folder = root / table_id
                folder.mkdir()
                match_file = folder / "match.toml"
                match_file.write_text(MATCH.format(left="Aaron", right="Nobody"),
                                      encoding="utf-8")
                table = Table(folder, device_text(broker, table=table_id, user=table_id,
                                                  match_file=match_file)).start()
                tables.append(table)
                shutil.copy(table.state / SECRET_FILE, keys / f"{table_id}.key")
            for table_id, table in zip(PAIRS, tables, strict=True):
                right = PAIRS[table_id][1]
                wait(lambda t=table, r=right: t.service.session is not None and
                     t.service.session.engine.rules.names.right == r, "the pushed match loaded",
                     timeout=30)
                play(table, 2)
                hall.wait(lambda t=table: all_acknowledged(t), "the events in the hall", 30)
                journals[table_id] = table.journal().name
                end_the_match(table)

            def counted() -> bool:
                results = hall.get("/api/results.json", auth=PASSWORD)["results"]
                return len([r for r in results if r["round"] == ROUND and r["counted"]]) == 2

            hall.wait(counted, "both results counted", timeout=40)
        for table in tables:
            table.stop()
        tables.clear()
        original = archive / "table-1" / journals["table-1"]
        forged = original.name.replace(".jsonl", "-copy.jsonl")
        lines = original.read_text(encoding="utf-8").splitlines(keepends=True)
        lines[2] = re.sub(r'"mono":(\d)', lambda m: f'"mono":{(int(m[1]) + 1) % 10}', lines[2],
                          count=1)               # a record's instant changed: its checksum fails
        (original.parent / forged).write_text("".join(lines), encoding="utf-8")
        with RunningHall(broker, archive, keys, password=PASSWORD) as hall:
            hall.wait(lambda: len(hall.hall.archive) >= 5, "the archive verified again", 40)
            verdict = hall.hall.archive[str(original.parent / forged)]
            assert verdict.tampered and not verdict.ok, verdict
            yield Played(hall, archive, journals, forged)
    finally:
        for table in tables:
            table.stop()
        broker.stop()
        patch.undo()


def test_every_page_after_play_asks_the_password(played: Played) -> None:
    name = played.journals["table-1"]
    for path in (f"/round-sheet?round={ROUND}", f"/api/round.zip?round={ROUND}",
                 f"/report/table-1/{name}"):
        status, _headers, _body = get(played.hall, path, password=None)
        assert status == 401, path
        status, _headers, _body = get(played.hall, path, password="wrong")
        assert status == 401, path


def test_a_verified_matchs_report_is_served_and_a_tampered_one_gets_none(played: Played
                                                                          ) -> None:
    hall, name = played.hall, played.journals["table-1"]
    status, headers, body = get(hall, f"/report/table-1/{name}?lang=en")
    assert status == 200, body[:300]
    assert headers["Content-Type"].startswith("text/html")
    assert "script-src" not in headers["Content-Security-Policy"]
    assert "default-src 'none'" in headers["Content-Security-Policy"]
    page = body.decode("utf-8")
    assert "Anna" in page and "Boris" in page and "<script" not in page
    assert "intact" in page and "TAMPERED" not in page
    # Made once, cached next to the journal; asked again, the same file.
    [made] = list((played.archive / "table-1").glob(f"{name[:-6]}.*.en.html"))
    assert get(hall, f"/report/table-1/{name}?lang=en")[2] == made.read_bytes()
    # In Russian: the report's own Russian.
    status, _headers, body = get(hall, f"/report/table-2/{played.journals['table-2']}?lang=ru")
    assert status == 200 and "Вера" in body.decode() and CYRILLIC.search(
        body.decode().split("<body", 1)[1].replace("Вера", "").replace("Глеб", ""))

    # A TAMPERED journal: no report, words that say so, nothing made.
    status, _headers, body = get(hall, f"/report/table-1/{played.forged}?lang=en")
    assert status == 409 and "TAMPERED" in body.decode(), body
    status, _headers, body = get(hall, f"/report/table-1/{played.forged}?lang=ru")
    assert status == 409 and "ПОДДЕЛАН" in body.decode(), body
    assert not list((played.archive / "table-1").glob(f"{played.forged[:-6]}.*.html"))
    # Nothing but an archived journal's.
    for path in ("/report/table-9/match-1.jsonl", "/report/table-1/nothing.jsonl",
                 "/report/table-1/..%2Fpushed-rounds.json", "/report/..%2Fkeys/table-1.key",
                 "/report/table-1/.hidden.jsonl"):
        status, _headers, body = get(hall, path)
        assert status == 404, (path, status, body[:200])


def test_a_report_being_made_is_waited_for_a_bounded_time(played: Played,
                                                          monkeypatch: pytest.MonkeyPatch
                                                          ) -> None:
    """A page waits for a report at most REPORT_WAIT_S (here none): told to reload; the report
    is made all the same, and served from the cache when asked again."""
    monkeypatch.setattr(reports, "REPORT_WAIT_S", 0.0)
    name = played.journals["table-2"]
    status, _headers, body = get(played.hall, f"/report/table-2/{name}?lang=en")
    assert (status, body.decode()) == (
        503, f"table-2/{name}: the report is still being made; reload in a minute.\n")
    played.hall.wait(lambda: list((played.archive / "table-2").glob(f"{name[:-6]}.*.en.html")),
                     "the report made in its thread", timeout=60)
    monkeypatch.setattr(reports, "REPORT_WAIT_S", 60.0)
    status, _headers, body = get(played.hall, f"/report/table-2/{name}?lang=en")
    assert status == 200 and "Вера" in body.decode()


def test_a_rounds_archive_is_one_zip_of_its_journals_results_and_reports(played: Played
                                                                         ) -> None:
    hall, archive = played.hall, played.archive
    name = played.journals["table-1"]
    assert get(hall, f"/report/table-1/{name}?lang=ru")[0] == 200      # a report made
    status, headers, body = get(hall, f"/api/round.zip?round={ROUND}")
    assert status == 200 and headers["Content-Type"] == "application/zip"
    assert headers["Content-Disposition"] == f'attachment; filename="round-{ROUND}.zip"'
    with zipfile.ZipFile(io.BytesIO(body)) as got:
        assert got.testzip() is None
        names = got.namelist()
        for table, journal in [*played.journals.items(), ("table-1", played.forged)]:
            inside = f"round-{ROUND}/{table}/{journal}"
            assert got.read(inside) == (archive / table / journal).read_bytes(), inside
        # Every report made (here and by the tests before), none of the TAMPERED copy.
        reports = [n for n in names if n.endswith(".html")]
        made = sorted(archive.glob("table-*/*.html"))
        assert sorted(reports) == sorted(f"round-{ROUND}/{p.parent.name}/{p.name}" for p in made)
        assert [n for n in reports if n.startswith(f"round-{ROUND}/table-1/{name[:-6]}.")
                and n.endswith(".ru.html")], reports
        for inside in reports:
            _round, table, report = inside.split("/")
            assert got.read(inside) == (archive / table / report).read_bytes()
        rows = list(csv.reader(io.StringIO(got.read(f"round-{ROUND}/results.csv").decode())))
        assert rows[0][:4] == ["round", "table", "left", "right"]
        assert sorted((r[1], r[2], r[3], r[7]) for r in rows[1:]) == [
            ("table-1", "Anna", "Boris", "Boris"), ("table-2", "Вера", "Глеб", "Глеб")]
        assert len(names) == 1 + 3 + len(reports)
        for inside in names:
            assert ".." not in inside.split("/") and not inside.startswith("/"), inside
            assert inside.startswith(f"round-{ROUND}/")


def zip_threads() -> list[list[str]]:
    """The stacks (innermost first) of the threads writing a round's zip."""
    stacks = [[f.f_code.co_name for f in _outer(frame)]
              for frame in sys._current_frames().values()]
    return [stack for stack in stacks if "_write_zip" in stack]


def writing_a_zip() -> bool:
    return bool(zip_threads())


def zip_waits_for_the_network() -> bool:
    """A zip's thread waits for room in the queue to the network (its client reads nothing)."""
    return any("wait" in stack and "result" in stack and "write" in stack
               for stack in zip_threads())


def _outer(frame: Any) -> Iterator[Any]:
    while frame is not None:
        yield frame
        frame = frame.f_back


def stalled() -> bool:
    """The zip's thread waits for the network, and still does a second later."""
    if not zip_waits_for_the_network():
        return False
    time.sleep(1.0)
    return zip_waits_for_the_network()


def test_a_client_that_goes_away_ends_the_zip(played: Played, broker: Broker,  # noqa: F811
                                              tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                              ) -> None:
    """A round's zip far larger than the network holds, its client gone after a few bytes:
    the thread writing it ends (it waits for the network a chunk at a time), and the next
    client has the whole zip."""
    monkeypatch.setattr(after_play, "ZIP_CHUNKS", 1)
    archive = tmp_path / "archive"
    shutil.copytree(played.archive, archive)
    original = archive / "table-1" / played.journals["table-1"]
    big = original.with_name(original.name.replace(".jsonl", "-big.jsonl"))
    big.write_text(original.read_text(encoding="utf-8") + "".join(      # 12 MB, compressing
        base64.b64encode(os.urandom(3000)).decode() + "\n" for _ in range(3000)),  # little
                   encoding="utf-8")
    with RunningHall(broker, archive, played.archive.parent / "keys",
                     password=PASSWORD) as hall:
        hall.wait(lambda: str(big) in hall.hall.archive, "the big journal verified", 60)
        auth = base64.b64encode(f"td:{PASSWORD}".encode()).decode()
        with socket.create_connection(("127.0.0.1", hall.port), timeout=20) as client:
            client.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            client.sendall(f"GET /api/round.zip?round={ROUND} HTTP/1.1\r\n"
                           f"Host: 127.0.0.1:{hall.port}\r\nAuthorization: Basic {auth}\r\n"
                           "\r\n".encode())
            assert client.recv(1000).startswith(b"HTTP/1.1 200")
            hall.wait(stalled, "the zip's thread waiting for the network", 30)
        hall.wait(lambda: not writing_a_zip(), "the zip's thread ended", 30)
        status, _headers, body = get(hall, f"/api/round.zip?round={ROUND}")
        with zipfile.ZipFile(io.BytesIO(body)) as got:
            assert got.read(f"round-{ROUND}/table-1/{big.name}") == big.read_bytes()


@pytest.mark.parametrize(("query", "status", "said"), [
    ("round=R9", 404, "Round R9: nothing of it is in the archive yet."),
    ("round=R9&lang=ru", 404, "Тур R9: в архиве пока ничего нет."),
    ("round=..%2F..%2Fetc", 404, "Round ../../etc: nothing of it is in the archive yet."),
    ("round=" + "x" * 41, 400, "a round's name is at most 40 characters"),
    ("", 400, "name the round"),
])
def test_a_round_with_nothing_is_said_in_words(played: Played, query: str, status: int,
                                               said: str) -> None:
    for path in ("/api/round.zip", "/round-sheet"):
        got, _headers, body = get(played.hall, f"{path}?{query}")
        assert (got, said in body.decode()) == (status, True), (path, got, body)


def test_a_round_name_as_a_folder_in_the_zip_is_safe(tmp_path: Path) -> None:
    assert safe_name("../../etc/passwd") == "______etc_passwd"
    assert safe_name("тур 3") == "____3"
    assert safe_name("") == "_" and safe_name("R1-a_b") == "R1-a_b"
    # A round named to climb out, a result's journal that is not an archive's name: neither
    # gives a name inside the zip that is not the round's folder's.
    (tmp_path / "table-1").mkdir()
    (tmp_path / "table-1" / "match-1.jsonl").write_text("{}\n", encoding="utf-8")
    climbing = "../../" + "x" * 30
    results = [Result("table-1", "table-1/match-1.jsonl", "intact", "", round=climbing),
               Result("table-1", "table-1/../../keys/table-1.key", "intact", "", round=climbing),
               Result("..", "../match-1.jsonl", "intact", "", round=climbing)]
    entries = zip_entries(tmp_path, round_results(results, climbing), climbing)
    assert [name for name, _what in entries] == [
        f"round-______{'x' * 30}/results.csv", f"round-______{'x' * 30}/table-1/match-1.jsonl"]


# --- the round sheet ------------------------------------------------------------------------------

class WithIds(Result):
    """A result whose pairing gave the players' ids (pairings' `left_id,right_id`)."""

    def as_json(self) -> dict[str, Any]:
        return {**super().as_json(), "left_id": "FIDE-1", "right_id": "<b>2</b>"}


def test_the_sheet_shows_the_players_ids_when_the_pairings_give_them() -> None:
    hostile = '<script>alert(1)</script>'
    result = Result("table-3", "table-3/match-1.jsonl", "intact", "intact", event=hostile,
                    round="R1", left="Anna", right="Boris", length=3, left_score=3,
                    winner="left", ended_by="score")
    with_ids = round_sheet_html([WithIds(**vars(result))], "R1", Words("en"))
    assert "id FIDE-1" in with_ids and "id &lt;b&gt;2&lt;/b&gt;" in with_ids
    assert "<script>" not in with_ids and "&lt;script&gt;" in with_ids
    without = round_sheet_html([result], "R1", Words("ru"))
    assert "id " not in without and "Подпись судьи" in without and "Итоговый счёт" in without


def uri(name: str) -> str:
    """NAME as the page's encodeURIComponent writes it in a link."""
    return quote(name, safe="-_.!~*'()")


def sheet_page(browser: Any, played: Played, lang: str) -> Any:
    context = browser.new_context(viewport=DESKTOP, http_credentials={
        "username": "td", "password": PASSWORD})
    page = context.new_page()
    page.goto(f"{played.hall.base}/round-sheet?round={ROUND}&lang={lang}",
              timeout=PAGE_WAIT_MS)
    page.wait_for_selector("section.sheet", timeout=PAGE_WAIT_MS)
    return page


def pdf_pages(pdf: bytes) -> int:
    return len(re.findall(rb"/Type\s*/Page(?![a-zA-Z])", pdf))


@pytest.mark.parametrize(("lang", "sign", "facts"), [
    ("en", "Signature: the arbiter", ("Final score", "Winner", "Ended by", "disqualification")),
    ("ru", "Подпись судьи", ("Итоговый счёт", "Победитель", "Как окончен",
                             "дисквалификация")),
])
def test_the_round_sheet_prints_one_table_a_page(browser: Any, played: Played, lang: str,
                                                 sign: str, facts: tuple[str, ...],
                                                 tmp_path: Path) -> None:
    page = sheet_page(browser, played, lang)
    try:
        page.emulate_media(media="print")
        sheets = page.query_selector_all("section.sheet")
        assert [s.get_attribute("data-table") for s in sheets] == list(PAIRS)
        for sheet, (left, right) in zip(sheets, PAIRS.values(), strict=True):
            text = sheet.inner_text()
            for fact in (*facts, left, right, sign, "Moscow Open", ROUND, "0–3"):
                assert fact in text, (fact, text)
            assert text.count(left) >= 2 and text.count(right) >= 3, text   # names, signatures
            assert len(sheet.query_selector_all(".sign .line")) == 3
        assert page.evaluate("() => getComputedStyle(document.querySelector('.hint')).display"
                             ) == "none"
        assert page.evaluate("() => getComputedStyle(document.querySelector('section.sheet'))"
                             ".breakAfter") == "page"
        page.screenshot(path=str(shots(tmp_path) / f"round-sheet-print-{lang}.png"),
                        full_page=True)
        pdf = page.pdf(format="A4")
        (shots(tmp_path) / f"round-sheet-{lang}.pdf").write_bytes(pdf)
        assert pdf_pages(pdf) == len(PAIRS)
    finally:
        page.context.close()


def test_the_results_link_the_round_sheet_zip_and_reports(browser: Any, played: Played,
                                                         tmp_path: Path) -> None:
    context = browser.new_context(viewport=DESKTOP, http_credentials={
        "username": "td", "password": PASSWORD})
    page = context.new_page()
    try:
        page.goto(played.hall.base + "/", timeout=PAGE_WAIT_MS)
        page.select_option("#language", "ru")
        page.click("#open-results")
        page.wait_for_selector("#results-body a.round-sheet", timeout=PAGE_WAIT_MS)
        assert page.select_option("#results-round", ROUND)
        sheet = page.get_attribute("#results-body a.round-sheet", "href")
        assert sheet == f"/round-sheet?round={ROUND}&lang=ru"
        assert page.inner_text("#results-body a.round-sheet") == "Протокол тура (печать)"
        assert page.get_attribute("#results-body a.round-zip", "href") == \
            f"/api/round.zip?round={ROUND}&lang=ru"
        links = [a.get_attribute("href") for a in page.query_selector_all("#results-body a.report")]
        assert sorted(links) == sorted(f"/report/{t}/{uri(j)}?lang=ru"
                                       for t, j in played.journals.items()), links
        page.screenshot(path=str(shots(tmp_path) / "results-after-play-ru.png"))
        with context.expect_page(timeout=PAGE_WAIT_MS) as opened:
            page.click("#results-body a.report >> nth=0")
        report = opened.value
        report.wait_for_load_state(timeout=PAGE_WAIT_MS)
        assert "Anna" in report.content() or "Вера" in report.content()
        report.screenshot(path=str(shots(tmp_path) / "report-from-results-ru.png"))
        # The archive lists the report of a good journal, none of the TAMPERED one.
        page.keyboard.press("Escape")
        page.click("#open-archive")
        page.wait_for_selector("#archive-list a.report", timeout=PAGE_WAIT_MS)
        reports = [a.get_attribute("href") for a in page.query_selector_all(
            "#archive-list a.report")]
        assert not [r for r in reports if uri(played.forged) in (r or "")], reports
        assert {f"/report/{t}/{uri(j)}?lang=ru" for t, j in played.journals.items()} <= \
            set(reports)
    finally:
        context.close()

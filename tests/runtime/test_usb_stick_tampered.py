"""A finished journal that does not verify, exported to a USB stick (SPEC §13.3, §14.1, issue
31): it is still copied byte for byte (it is the record), but its CSV and HTML say TAMPERED at
their top (the CSV in every row), never a silently partial export; the panels' summary and the
log say so, in English and in Russian. The clock's own files are untouched."""

from __future__ import annotations

import csv
import io
import shutil
from pathlib import Path

import pytest

from gammonclock.config.problems import said
from gammonclock.journal.key import read_key
from gammonclock.runtime.usb_stick import export_to_stick
from usb_stick_helpers import CURRENT, FOLDER, NAMES, TABLE

BAD = NAMES[1]


@pytest.fixture
def clock_folder(made: Path, tmp_path: Path) -> Path:
    """The clock's journals (conftest's `made`), the second finished one with record 5 removed."""
    folder = tmp_path / "clock"
    shutil.copytree(made, folder)
    lines = (folder / BAD).read_bytes().splitlines(keepends=True)
    del lines[5]
    (folder / BAD).write_bytes(b"".join(lines))
    return folder


def rows(path: Path) -> list[list[str]]:
    return list(csv.reader(io.StringIO(path.read_text(encoding="utf-8-sig"))))


@pytest.mark.parametrize("with_key", [True, False], ids=["device key", "no key"])
def test_a_tampered_finished_journal_is_copied_and_its_exports_marked(clock_folder: Path,
                                                                     tmp_path: Path,
                                                                     with_key: bool) -> None:
    stick = tmp_path / "stick"
    stick.mkdir()
    before = {p: p.read_bytes() for p in clock_folder.rglob("*") if p.is_file()}
    key = read_key(clock_folder / "state") if with_key else None
    report = export_to_stick(stick, TABLE, [clock_folder / n for n in NAMES],
                             clock_folder / CURRENT, key)
    assert report.problem is None and report.exported == 3
    assert report.summary() == "3 matches exported, 1 in progress; TAMPERED: 1 (exports marked)"
    assert report.summary("ru") == ("записано матчей: 3, и текущий матч; ЖУРНАЛ ИЗМЕНЁН: 1 "
                                    "(выгрузки помечены)")
    assert report.tampered == [BAD]
    mark = "TAMPERED: line 6: record 5 was removed"
    [note] = [n for n in report.notes if BAD in str(n)]
    assert f"{mark}; copied as it is" in str(note)
    assert "ЖУРНАЛ ИЗМЕНЁН: строка 6: запись 5 удалена; скопирован как есть" in said(note, "ru")
    folder = stick / FOLDER
    # The record itself, byte for byte.
    assert (folder / BAD).read_bytes() == (clock_folder / BAD).read_bytes()
    stem = BAD.removesuffix(".jsonl")
    marked = rows(folder / f"{stem}.csv")
    assert marked[0][0] == "verdict" and len(marked) > 1
    assert all(r[0] == mark for r in marked[1:])
    page = (folder / f"{stem}.html").read_text(encoding="utf-8")
    body = page.split("<body>", 1)[1]
    assert body.lstrip().startswith('<div class="verdict tampered" role="alert">')
    assert body.index(mark) < body.index("<h1>")
    # The others, intact, as they always were.
    for name in (NAMES[0], NAMES[2]):
        other = name.removesuffix(".jsonl")
        assert rows(folder / f"{other}.csv")[0][0] == "game"
        html = (folder / f"{other}.html").read_text(encoding="utf-8")
        assert "TAMPERED" not in html and 'class="verdict' in html
    assert {p: p.read_bytes() for p in clock_folder.rglob("*") if p.is_file()} == before

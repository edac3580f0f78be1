"""What the journal's reader and verify say, in Russian too (issue 25, SPEC §15): a torn last
record, a damaged line that stops the replay, and each kind of tampering are Problems (a str of
the English, so every caller and test that reads it is unchanged, remembering its catalogue id
and fields) that the Russian report says in Russian."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from gammonclock.config.problems import said
from gammonclock.export import TamperedJournal, export_journal
from gammonclock.journal.key import load_or_create_key
from gammonclock.journal.reader import read_journal
from gammonclock.journal.records import encode
from gammonclock.journal.verify import verify
from journal_helpers import journaled_run


def latin_words(text: str) -> set[str]:
    """Latin words of a Russian text but file paths."""
    return set(re.findall(r"[A-Za-z]+", re.sub(r"\S*/\S*", "", text)))


def forge(line: bytes, **fields: object) -> bytes:
    obj = json.loads(line)
    obj.pop("mac")
    obj.pop("sum")
    obj.update(fields)
    return encode(b"not the device key", obj)


def journal(tmp_path: Path, change=None) -> tuple[Path, bytes]:
    path, _, _ = journaled_run(tmp_path)
    if change is not None:
        lines = path.read_bytes().splitlines(keepends=True)
        path.write_bytes(b"".join(change(lines)))
    return path, load_or_create_key(tmp_path / "state")


@pytest.mark.parametrize(("change", "en", "ru"), [
    (lambda ls: ls[:7] + [forge(ls[7])] + ls[8:],             # re-sealed without the key
     "line 8: record 7 was altered (its seal does not match)",
     "строка 8: запись 7 изменена (её печать не совпадает)"),
    (lambda ls: ls[:7] + [ls[7].replace(b'"t":', b'"t" :', 1)] + ls[8:],
     "line 8: record 7 was altered (checksum does not match)",
     "строка 8: запись 7 изменена (контрольная сумма не совпадает)"),
    (lambda ls: ls[:7] + ls[8:], "line 8: record 7 was removed", "строка 8: запись 7 удалена"),
    (lambda ls: ls[:7] + ls[10:], "line 8: records 7-9 were removed",
     "строка 8: записи 7-9 удалены"),
    (lambda ls: ls[:7] + [ls[3]] + ls[7:],
     "line 8: record 3 was inserted or moved here (record 7 was due)",
     "строка 8: запись 3 вставлена или перемещена сюда (ожидалась запись 7)"),
])
def test_each_tampering_in_russian(tmp_path: Path, change, en: str, ru: str) -> None:
    path, key = journal(tmp_path, change)
    verdict = verify(path, key)
    assert not verdict.intact
    assert verdict.message == en and verdict.words == f"TAMPERED: {en}"   # the English as it was
    assert said(verdict.message, "ru") == ru
    assert not latin_words(ru), ru
    with pytest.raises(TamperedJournal):        # not exported unless allowed (SPEC §14.1)
        export_journal(path, "html", tmp_path / "r.html", key=key, language="ru")
    export_journal(path, "html", tmp_path / "r.html", key=key, language="ru",
                   allow_tampered=True)
    page = (tmp_path / "r.html").read_text(encoding="utf-8")
    assert f"ЖУРНАЛ ИЗМЕНЁН: {ru}" in page and f"Журнал не прошёл проверку: {ru}" in page
    assert en not in page


def test_a_torn_journal_in_russian(tmp_path: Path) -> None:
    path, key = journal(tmp_path)
    blob = path.read_bytes()
    path.write_bytes(blob[:-40])                      # a power cut in the last record
    torn_at = blob.rstrip(b"\n").rfind(b"\n") + 1
    length = len(blob) - 40 - torn_at
    read = read_journal(path)
    assert read.problems() == [f"{path}: a torn last record ({length} bytes at byte {torn_at}) "
                               "was dropped"]
    ru = f"{path}: оборванная последняя запись ({length} байт с байта {torn_at}) отброшена"
    assert [said(p, "ru") for p in read.problems()] == [ru]
    verdict = verify(path, key)
    assert said(verdict.message, "ru") == (f"цел: записей {verdict.records}; оборванная последняя "
                                           f"строка ({length} байт) отброшена")
    export_journal(path, "html", tmp_path / "r.html", key=key, language="ru")
    page = (tmp_path / "r.html").read_text(encoding="utf-8")
    assert ru in page and "torn last" not in page
    assert (f"оборванная последняя строка ({length} байт) отброшена, печати проверены" in page)


def test_a_damaged_line_that_stops_the_replay_in_russian(tmp_path: Path) -> None:
    path, _ = journal(tmp_path, lambda ls: ls[:7] + [ls[7].replace(b'"t":', b'"t" :', 1)]
                      + ls[8:])
    read = read_journal(path)
    (stopped,) = read.problems()
    offset = sum(len(line) for line in path.read_bytes().splitlines(keepends=True)[:7])
    assert stopped == (f"{path}: record at line 8 (byte {offset}) is damaged: checksum does not "
                       "match; replay stops before it")
    ru = said(stopped, "ru")
    assert ru == (f"{path}: запись в строке 8 (байт {offset}) повреждена: контрольная сумма не "
                  "совпадает; воспроизведение останавливается перед ней")
    assert not latin_words(ru), ru

"""A USB stick's export and next match said in the table's language (issue 25, SPEC §13.3,
§15): on a Russian table the reply's summary, the panels' problem and the reasons a stick's
match file is not taken are Russian, file names and the system's own reason as they are; the
English stays exactly as it was."""

from __future__ import annotations

import errno
import os
import re
from pathlib import Path

import pytest
from PIL import Image

from gammonclock.config.problems import message_of, said
from gammonclock.hardware.screens import message_view, render
from gammonclock.hardware.texts import Text
from gammonclock.runtime.usb_stick import StickError, export_to_stick, next_match_on_stick
from usb_stick_helpers import CURRENT, TABLE, Clock, creating, export, fail


@pytest.fixture
def clock(usb_clock: Clock) -> Clock:
    """The clock's side (conftest's `usb_clock`), by its short name in these tests."""
    return usb_clock


def latin_words(text: str) -> set[str]:
    """Latin words of a Russian text but paths, file and format names."""
    text = re.sub(r"\S*/\S*|'[^']*'", "", text)
    return set(re.findall(r"[A-Za-z][A-Za-z0-9-]*", text)) - {"HTML", "CSV", "TOML", "UTF-8"}


def test_a_russian_tables_summary(clock: Clock, stick: Path) -> None:  # noqa: F811
    report = export(clock, stick)
    assert report.summary("ru") == "записано матчей: 3, и текущий матч"
    assert report.summary() == "3 matches exported, 1 in progress"
    again = export(clock, stick)
    assert again.summary("ru") == "нового нет; матчей уже на флешке: 3"
    assert again.summary() == "nothing new to copy; 3 already on the stick"
    for text in (report.summary("ru"), again.summary("ru")):
        assert not latin_words(text), text


@pytest.mark.parametrize(("call", "nth", "code", "ru"), [
    ("replace", 3, errno.EIO, "флешку вынули во время копирования: скопировано файлов: 2 из 10; "
                              "файлы часов не тронуты"),
    ("fsync", 2, errno.ENOSPC, "флешка заполнена: скопировано файлов: 0 из 10; файлы часов не "
                               "тронуты; освободите на ней место и вставьте её снова"),
    ("open", 1, errno.EROFS, "флешка только для чтения (защищена от записи, или часам нельзя на "
                             "неё писать): скопировано файлов: 0 из 10; файлы часов не тронуты"),
])
def test_a_stick_fault_in_russian(clock: Clock, stick: Path, monkeypatch: pytest.MonkeyPatch,  # noqa: F811
                                  call: str, nth: int, code: int, ru: str) -> None:
    fail(monkeypatch, stick, call, nth, code,
         creating if call == "open" else (lambda *args, **kw: True))
    report = export(clock, stick)
    monkeypatch.undo()
    assert report.summary("ru") == ru and said(report.problem, "ru") == ru
    assert not latin_words(ru), ru
    assert report.summary() == report.problem and "files copied" in report.problem


def test_no_stick_and_a_bad_table_id_in_russian(tmp_path: Path) -> None:
    gone = export_to_stick(tmp_path / "gone", TABLE, [], None, None)
    assert gone.summary("ru") == (f"флешки нет: {tmp_path / 'gone'} не найдена (не подключена "
                                  "или уже извлечена)")
    assert gone.summary() == (f"no stick: {tmp_path / 'gone'} is not there (not mounted, or "
                              "already removed)")
    bad = export_to_stick(tmp_path, "a b", [], None, None)
    assert bad.summary("ru") == ("номер стола 'a b' не годится как имя папки на флешке: "
                                 "допустимы только латинские буквы, цифры, '-' и '_'")
    for text in (gone.summary("ru"), bad.summary("ru")):
        assert not latin_words(text), text


@pytest.mark.parametrize(("write", "ru", "en"), [
    (lambda p: p.write_bytes(b"x" * (65 * 1024)),
     "{path}: больше 64 КиБ; файл матча — несколько строк TOML",
     "{path}: larger than 64 KiB; a match file is a few lines of TOML"),
    (lambda p: p.write_bytes(b"[match]\n# Z\xfcrich\n"),
     "{path}: не текст в UTF-8 (байт 11); сохраните его в UTF-8",
     "{path}: not UTF-8 text (byte 11); save it as UTF-8"),
    (lambda p: p.mkdir(), "{path}: не обычный файл; файл матча — текстовый файл TOML",
     "{path}: not a plain file; a match file is a TOML text file"),
])
def test_a_sticks_match_file_not_taken_in_russian(stick: Path, write, ru: str, en: str) -> None:  # noqa: F811
    (stick / "gammonclock").mkdir()
    path = stick / "gammonclock" / "match.toml"
    write(path)
    with pytest.raises(StickError) as caught:
        next_match_on_stick(stick, TABLE)
    assert said(message_of(caught.value), "ru") == ru.format(path=path)
    assert not latin_words(ru.format(path=path)), ru
    assert str(caught.value) == en.format(path=path)


def test_a_stick_fault_on_the_russian_panels(clock: Clock, stick: Path,  # noqa: F811
                                             monkeypatch: pytest.MonkeyPatch,
                                             tmp_path: Path) -> None:
    """The panels' screen for a stick that filled up: all Russian; looked at."""
    fail(monkeypatch, stick, "fsync", 2, errno.ENOSPC)
    report = export(clock, stick)
    monkeypatch.undo()
    from gammonclock.runtime.stick_handler import _stick_words
    text = _stick_words(report, "ru")
    assert text.key == "stick.problem" and not latin_words(str(text.args["problem"]))
    image = render(message_view("USB STICK", [text, Text("stick.no_match")], lang="ru"))
    out = Path(os.environ.get("GAMMONCLOCK_SHOTS", tmp_path)) / "stick-full-ru.png"
    image.convert("L").resize((image.width * 4, image.height * 4), Image.NEAREST).save(out)
    assert out.stat().st_size > 0
    assert CURRENT in report.copied or report.copied == []

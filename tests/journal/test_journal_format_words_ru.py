"""The journal format's own diagnostics in Russian (issue 25): a record this firmware cannot read
raises a RecordError whose message is a Problem ("jf.*": English as a str, unchanged), so the
hall's "unreadable" verdict carries it in every language the page speaks (`details: {en, ru}`).
The format's field names, kinds, JSON values, type names, versions and paths stay as written;
what a core parser says of a bad arbiter command or dice line is its own English (left so)."""

from __future__ import annotations

import re
from typing import Any

import pytest

from gammonclock import __version__
from gammonclock.config.problems import message_of, said
from gammonclock.core.engine import PinKeyKind
from gammonclock.hall.archive import verify_archived
from gammonclock.journal.inputs import INPUT_TYPES, InputError, input_from
from gammonclock.journal.reader import read_journal
from gammonclock.journal.records import RecordError, parse_record, snapshot_problem
from gammonclock.journal.replay import replay
from gammonclock.sides import Button
from journal_helpers import DELETE, not_understood

# Names as written: quoted names and JSON values, paths, the format's fields, input types,
# buttons, PIN keys and type names, the version.
WRITTEN = ["seq", "format", "config", "match_no", "continues", "effects", "input", "type",
           "digest", "offset", "length", "str", "int", "bool", "null", "true", "false", "JSON",
           "history", "buttons", "match", "trimmed", "serials", *INPUT_TYPES,
           *(b.value for b in Button), *(k.value for k in PinKeyKind)]
NAMES = re.compile(r"'[^']*'|\"[^\"]*\"|\S*/\S*|\b(?:" + "|".join(WRITTEN) + r")\b|"
                   + re.escape(__version__))
LATIN_WORD = re.compile(r"[A-Za-z]{2,}")

# (case, record, field, value, the English as before, the Russian)
CASES: list[tuple[str, int, str, Any, str, str]] = [
    ("input type unknown", 3, "data.input.type", "chord",
     f"record 3 (line 4): input type 'chord' is unknown to this firmware (version "
     f"{__version__}); the journal may come from a newer version",
     f"запись 3 (строка 4): тип ввода 'chord' неизвестен этой прошивке (версия {__version__}); "
     f"журнал, возможно, записан более новой версией"),
    ("kind unknown", 5, "kind", "snapshot",
     f'record 5 (line 6): kind "snapshot" is unknown to this firmware (version {__version__}); '
     f"the journal may come from a newer version",
     f'запись 5 (строка 6): вид записи "snapshot" неизвестен этой прошивке (версия '
     f"{__version__}); журнал, возможно, записан более новой версией"),
    ("newer format", 0, "data.format", 2,
     f"record 0 (line 1): journal format 2 is newer than this firmware's (1, version "
     f"{__version__}); the journal comes from a newer version",
     f"запись 0 (строка 1): формат журнала 2 новее, чем у этой прошивки (1, версия "
     f"{__version__}); журнал записан более новой версией"),
    ("missing field", 4, "boot", DELETE, "record 4 (line 5): the field 'boot' is missing",
     "запись 4 (строка 5): нет поля 'boot'"),
    ("seq a bool", 4, "seq", True,
     "line 5: the record has no sequence number (seq is true; a whole number from 0 is due)",
     "строка 5: у записи нет порядкового номера (seq равен true; нужно целое число от 0)"),
    ("prev short", 5, "prev", "ab",
     'record 5 (line 6): the field \'prev\' is "ab"; it must be 64 hex digits',
     'запись 5 (строка 6): поле \'prev\' равно "ab"; нужно: 64 шестнадцатеричные цифры'),
    ("t as text", 4, "t", "5",
     f'record 4 (line 5): the field \'t\' is "5"; it must be a whole number of ns from 0 to '
     f"{2**63 - 1}",
     f'запись 4 (строка 5): поле \'t\' равно "5"; нужно: целое число нс от 0 до {2**63 - 1}'),
    ("tick without effects", 5, "data.effects", DELETE,
     "record 5 (line 6): the effects are null; a list of objects is due",
     "запись 5 (строка 6): effects равны null; нужен список объектов"),
    ("pressed as text", 3, "data.input.pressed", "yes",
     "record 3 (line 4): the edge input's 'pressed' is str; bool is due",
     "запись 3 (строка 4): поле 'pressed' ввода edge имеет тип str; нужен тип bool"),
    ("unknown button", 3, "data.input.button", "middle",
     "record 3 (line 4): button 'middle' is unknown; one of left, right, cube is due",
     "запись 3 (строка 4): кнопка 'middle' неизвестна; нужна одна из: left, right, cube"),
    ("edge without button", 3, "data.input.button", DELETE,
     "record 3 (line 4): the edge input's 'button' is missing; str is due",
     "запись 3 (строка 4): у ввода edge нет поля 'button'; нужен тип str"),
    ("time goes back", 7, "t", 1,
     "record 7 (line 8): its instant (1 ns) is before the match's",
     "запись 7 (строка 8): её момент (1 нс) раньше момента матча"),
]


def no_english(text: str) -> None:
    found = LATIN_WORD.findall(NAMES.sub(" ", text))
    assert found == [], f"English in the Russian diagnostic: {found}\n{text}"


@pytest.mark.parametrize("case, index, where, value, english, russian", CASES,
                         ids=[c[0] for c in CASES])
def test_a_record_not_understood_is_said_in_russian(tmp_path, case, index, where, value,
                                                    english, russian):
    path = not_understood(tmp_path, index, where, value)
    with pytest.raises(RecordError) as caught:
        replay(read_journal(path))
    message = message_of(caught.value)
    assert str(caught.value).startswith(f"{path}: {english}")          # English as before
    assert said(message, "en") == str(caught.value)
    ru = said(message, "ru")
    assert ru.startswith(f"{path}: {russian}"), ru
    no_english(ru)


def test_the_hall_sends_an_unreadable_journals_words_in_russian(tmp_path):
    path = not_understood(tmp_path, 3, "data.input.type", "chord")
    found = verify_archived(path, "table-1", None)
    say = found.say
    assert say["code"] == "unreadable"
    assert say["details"]["en"] == say["detail"] == found.message
    assert "input type 'chord' is unknown to this firmware" in say["details"]["en"]
    assert "тип ввода 'chord' неизвестен этой прошивке" in say["details"]["ru"]
    no_english(say["details"]["ru"])


@pytest.mark.parametrize(("body", "english", "russian"), [
    (b"[1]", "line 2: the record is not a JSON object", "строка 2: запись — не объект JSON"),
    (b"{", "line 2: the record is not JSON text", "строка 2: запись — не текст JSON"),
    (b'{"seq": 1, "kind": "tick", "t": 0, "mono": 0, "boot": "b", "wall": 0, "data": {}, '
     b'"prev": "' + b"0" * 64 + b'"}',
     "record 1 (line 2): the effects are null; a list of objects is due",
     "запись 1 (строка 2): effects равны null; нужен список объектов"),
    (b'{"seq": 1, "kind": "header", "t": 0, "mono": 0, "boot": "b", "wall": 0, "data": {}, '
     b'"prev": "' + b"0" * 64 + b'"}',
     "record 1 (line 2): a header record after the first record",
     "запись 1 (строка 2): запись заголовка после первой записи"),
])
def test_the_readers_own_checks_in_russian(body, english, russian):
    with pytest.raises(RecordError) as caught:
        parse_record(body, "0" * 64, 2)
    assert str(caught.value) == english
    assert said(message_of(caught.value), "ru") == russian


@pytest.mark.parametrize(("data", "russian"), [
    ({"type": "pin", "key": "x"}, "клавиша ПИН-кода 'x' неизвестна; нужна одна из: "),
    ({"type": "dice_dropped", "count": -1},
     "число пропущенных строк считывателя костей (-1) вне допустимых пределов"),
    ({}, "у ввода нет типа (type)"),
    ({"type": "arbiter", "command": "x" * 1001}, "поле 'command' ввода arbiter длиннее 1000 "
                                                 "символов"),
])
def test_an_input_not_understood_in_russian(data, russian):
    with pytest.raises(InputError) as caught:
        input_from(0, data)
    assert said(message_of(caught.value), "ru").startswith(russian)
    no_english(said(message_of(caught.value), "ru"))


def test_a_snapshots_outline_in_russian():
    problem = snapshot_problem({"format": 1, "match": {}, "buttons": {}, "history": {}})
    assert problem == "the snapshot's history is {}; a list is due"
    assert said(problem, "ru") == "history снимка равен {}; нужно: список"
    assert said(snapshot_problem({"format": 9}), "ru").startswith("формат снимка 9 новее")

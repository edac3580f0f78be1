"""The config problems the first round left English (issue 25, SPEC §15): a file that is not
TOML (tomllib's own words kept, ours and the place said in Russian), a duration beyond the
bounds, a pin_hash that is not one, a reserve from per_point beyond the bound. Each is Russian
in a Russian `check-config`, and its English stays as it was."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from gammonclock.cli.main import main

RU = '\n[display]\nlanguage = "ru"\n'
SHORT_SALT = "scrypt$14$8$1$YWJj$" + "eHh4" * 10 + "eHg="     # a 3-byte salt, 32-byte digest


def latin_words(line: str) -> set[str]:
    """Latin words of a Russian problem but its key path, values and commands as written (the
    value a problem starts with is as written, cut short or not)."""
    _, _, said = line.partition(": ")
    said = said.split(" — ", 1)[-1]
    said = re.sub(r'"[^"]*"|`[^`]*`|\b[a-z_]+\.[a-z_.]+\b', "", said)
    return set(re.findall(r"[A-Za-z][A-Za-z0-9]*", said)) - {"TOML", "base64"}   # names


@pytest.fixture
def check(tmp_path: Path, capsys):
    def go(text: str, *args: str) -> list[str]:
        path = tmp_path / "config.toml"
        path.write_text(text, encoding="utf-8")
        assert main(["check-config", *args, str(path)]) == 2
        return [line.removeprefix(f"{path}: ") for line in capsys.readouterr().err.splitlines()]
    return go


@pytest.mark.parametrize(("text", "ru", "en", "tomllib_said"), [
    ("[match]\nlength = \n",
     "это не правильный TOML: строка 2, столбец 10: Invalid value",
     "not valid TOML: Invalid value (at line 2, column 10)", "Invalid value"),
    ("[match]\nlength = 5\nx = [1,\n",
     "это не правильный TOML: в конце файла: Invalid value",
     "not valid TOML: Invalid value (at end of document)", "Invalid value"),
    ("[match]\nlength = " + "9" * 5000 + "\n",
     "это не правильный TOML: в числе слишком много цифр",
     "not valid TOML: a number with too many digits", ""),
    ("[match]\nlength = " + "[" * 3000 + "\n",
     "это не правильный TOML: массивы или таблицы вложены слишком глубоко",
     "not valid TOML: arrays or tables nested too deeply", ""),
])
def test_a_file_that_is_not_toml_is_said_in_russian(check, text, ru, en, tomllib_said) -> None:
    # not TOML, so the file cannot say its own language: --language (or its device's) does
    assert check(text, "--language", "ru") == [ru]
    assert not latin_words(ru.replace(tomllib_said, "")), ru    # tomllib's words, as it says them
    assert check(text) == [en]


@pytest.mark.parametrize(("time", "ru", "en"), [
    ('reserve = "100000h"', 'time.reserve: "100000h" — слишком долго; не больше "1000h"',
     'time.reserve: "100000h" is too long; at most 1000h'),
    ("reserve = 1e40", 'time.reserve: 1E+40 — слишком долго; не больше "1000h"',
     "time.reserve: 1E+40 is too long; at most 1000h"),
    ('delay = "1.0000000000000000000000000000001s"',
     'time.delay: "1.0000000000000000000000000000001s" — слишком много цифр; не больше 30',
     'time.delay: "1.0000000000000000000000000000001s" has too many digits; at most 30'),
    ('per_point = "1000h"', 'time.per_point: "1000h" × 5 очков — это резерв "5000h"; резерв не '
     'больше "1000h": уменьшите time.per_point или задайте time.reserve',
     "time.per_point: 1000h × 5 points is a reserve of 5000h; a reserve is at most 1000h: lower "
     "per_point or set time.reserve"),
])
def test_a_duration_beyond_the_bounds_is_said_in_russian(check, time, ru, en) -> None:
    text = f"[match]\nlength = 5\n[time]\n{time}\n"
    assert check(text + RU) == [ru]
    assert not latin_words(ru), ru
    assert check(text) == [en]


def test_a_reserves_points_take_their_russian_form(check) -> None:
    text = '[match]\nlength = 5\nstart_score = [1, 0]\n[time]\nper_point = "300h"\n'
    assert check(text + RU) == [
        'time.per_point: "300h" × 4,5 очка — это резерв "1350h"; резерв не больше "1000h": '
        "уменьшите time.per_point или задайте time.reserve"]


@pytest.mark.parametrize(("pin_hash", "ru", "en"), [
    ("nonsense", '"nonsense" — не хеш ПИН-кода: это не хеш в том виде, как его печатает '
     '`python -m gammonclock.pin PIN [--key FILE]`: "scrypt-k$14$8$1$<salt base64>$<digest '
     'base64>" (или "scrypt$…", без ключа)',
     '"nonsense" is not a PIN hash: it is not a hash as `python -m gammonclock.pin PIN [--key '
     'FILE]` prints it: "scrypt-k$14$8$1$<salt base64>$<digest base64>" (or "scrypt$…", '
     "unkeyed)"),
    (SHORT_SALT, f'"{SHORT_SALT[:38]}… — не хеш ПИН-кода: соль должна быть 8..64 байт',
     f'"{SHORT_SALT[:38]}… is not a PIN hash: its salt must be 8..64 bytes'),
    ("scrypt$14$8$1$YWJjZGVmZ2g$" + "eHh4" * 10 + "eHg=",
     '"scrypt$14$8$1$YWJjZGVmZ2g$eHh4eHh4eHh4… — не хеш ПИН-кода: соль: не base64',
     '"scrypt$14$8$1$YWJjZGVmZ2g$eHh4eHh4eHh4… is not a PIN hash: its salt is not base64'),
    ("scrypt$14$8$1$YWJjZGVmZ2g=$eHh4", '"scrypt$14$8$1$YWJjZGVmZ2g=$eHh4" — не хеш ПИН-кода: '
     "дайджест должен быть 32 байт",
     '"scrypt$14$8$1$YWJjZGVmZ2g=$eHh4" is not a PIN hash: its digest must be 32 bytes'),
])
def test_a_pin_hash_that_is_not_one_is_said_in_russian(check, pin_hash, ru, en) -> None:
    text = f'[match]\nlength = 5\n[arbiter]\npin_hash = "{pin_hash}"\n'
    assert check(text + RU) == [f"arbiter.pin_hash: {ru}"]
    assert not latin_words(f"arbiter.pin_hash: {ru}"), ru
    assert check(text) == [f"arbiter.pin_hash: {en}"]

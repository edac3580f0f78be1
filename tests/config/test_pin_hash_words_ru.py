"""A pin_hash whose scrypt parameters are out of bounds (issue 25): the problem says what each
parameter is (its cost, block size, parallelism, and which field of the hash it is) in the
config's language, the parameters' own names (log2 N, r, p) and scrypt's as written. The core
gives the same English (`PinHashError`), its code and fields for the words."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from gammonclock.cli.main import main
from gammonclock.core.pin import PinCheck, PinHashError, hash_pin

RU = '\n[display]\nlanguage = "ru"\n'
GOOD = hash_pin("LRCLR").hashed          # scrypt-k?$14$8$1$…
SCHEME, _, _, _, SALT, DIGEST = GOOD.split("$")


def with_params(log_n: int, r: int, p: int) -> str:
    return "$".join((SCHEME, str(log_n), str(r), str(p), SALT, DIGEST))


@pytest.fixture
def check(tmp_path: Path, capsys):
    def go(text: str) -> str:
        path = tmp_path / "config.toml"
        path.write_text(text, encoding="utf-8")
        assert main(["check-config", str(path)]) == 2
        lines = capsys.readouterr().err.splitlines()
        assert len(lines) == 1, lines
        return lines[0].removeprefix(f"{path}: arbiter.pin_hash: ")
    return go


@pytest.mark.parametrize(("params", "ru", "en"), [
    ((20, 8, 1), "показатель стоимости scrypt (log2 N, второе поле) равен 20; допустимо 10..16",
     "its scrypt cost (log2 N, the 2nd field) is 20; 10..16 is allowed"),
    ((14, 17, 1), "размер блока scrypt (r, третье поле) равен 17; допустимо 1..16",
     "its scrypt block size (r, the 3rd field) is 17; 1..16 is allowed"),
    ((14, 8, 5), "параллелизм scrypt (p, четвёртое поле) равен 5; допустимо 1..4",
     "its scrypt parallelism (p, the 4th field) is 5; 1..4 is allowed"),
    ((16, 16, 1), "его параметры требуют от scrypt больше 64 МиБ памяти (128 × r × 2^log2 N "
     "байт)",
     "its parameters ask scrypt for more than 64 MiB of memory (128 × r × 2^log2 N bytes)"),
])
def test_scrypts_parameters_are_said_in_the_configs_language(check, params, ru, en) -> None:
    value = with_params(*params)
    text = f'[match]\nlength = 5\n[arbiter]\npin_hash = "{value}"\n'
    said_ru = check(text + RU)
    assert said_ru.endswith(f" — не хеш ПИН-кода: {ru}"), said_ru
    words = set(re.findall(r"[A-Za-z][A-Za-z0-9]*", said_ru.split(" — ", 1)[1]))
    assert words <= {"scrypt", "log2", "N", "r", "p"}, words      # the names as written
    assert check(text).endswith(f" is not a PIN hash: {en}")
    with pytest.raises(PinHashError) as caught:          # the core's English is the same
        PinCheck.parse(value)
    assert str(caught.value) == en


def test_a_pin_hash_that_is_not_text_is_said_in_russian(check) -> None:
    said = check("[match]\nlength = 5\n[arbiter]\npin_hash = 1234\n" + RU)
    assert said.startswith("1234 — не хеш ПИН-кода: это не хеш в том виде, как его печатает "
                           "`python -m gammonclock.pin PIN [--key FILE]`"), said
    assert check("[match]\nlength = 5\n[arbiter]\npin_hash = 1234\n").startswith(
        "1234 is not a PIN hash: it is not a hash as `python -m gammonclock.pin PIN")

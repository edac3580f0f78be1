"""An arbiter's command that is not one, said in the match's language (issue 25, SPEC §15):
the core's ArbiterSyntaxError carries a code and its fields (the core imports no words), the
runtime says it from words.py. On a Russian match the socket's and the hall's replies are
Russian, the commands, sides and values kept as the arbiter types them; an English match's stay
exactly the core's English."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from gammonclock.core.arbiter import USAGE, ArbiterSyntaxError, parse_command
from gammonclock.link.outbox import HallMemory
from gammonclock.link.requests import HallRequests
from gammonclock.runtime.arbiter_client import ask
from gammonclock.runtime.arbiter_socket import socket_path
from gammonclock.runtime.arbiter_words import syntax_error_said

COMMANDS = ", ".join(USAGE)

# the words typed, what a Russian arbiter reads
CASES = [
    ([], f"нет команды; ожидается одна из: {COMMANDS}"),
    (["frob"], f"неизвестная команда судьи 'frob'; ожидается одна из: {COMMANDS}"),
    (["deduct"], "deduct: нужно аргументов: 2; как писать: deduct СТОРОНА ВРЕМЯ"),
    (["point"], "point: нужен 1 аргумент; как писать: point СТОРОНА"),
    (["pause", "now"], "pause: аргументы не нужны; как писать: pause"),
    (["deduct", "up", "3s"], "'up' — не сторона (left или right); как писать: deduct СТОРОНА "
                             "ВРЕМЯ"),
    (["deduct", "left", "abc"], """'abc' — не длительность; пишите, например, "12s", "2m30s", \
"2.5m", "1500ms"; как писать: deduct СТОРОНА ВРЕМЯ"""),
    (["deduct", "left", "0"], "deduct: нужна длительность больше нуля; как писать: deduct "
                              "СТОРОНА ВРЕМЯ"),
    (["adjust", "left", "+99999999h"], """'99999999h' — слишком долго; не больше "1000h"; как \
писать: adjust СТОРОНА ±ВРЕМЯ"""),
    (["add", "left", "0.0000000001"], "'0.0000000001' — точнее наносекунды; как писать: add "
                                      "СТОРОНА ВРЕМЯ"),
    (["score", "a", "1"], "'a' — не счёт; как писать: score СЧЁТ_ЛЕВОГО СЧЁТ_ПРАВОГО"),
    (["score", "100", "1"], "'100' — не счёт (не больше 99, как в самом длинном матче); как "
                            "писать: score СЧЁТ_ЛЕВОГО СЧЁТ_ПРАВОГО"),
    (["score", "1.3", "1"], "'1.3' — не счёт (целые очки или половины очка, не меньше 0); как "
                            "писать: score СЧЁТ_ЛЕВОГО СЧЁТ_ПРАВОГО"),
    (["warn", "left"], "warn: нужны сторона и текст; как писать: warn СТОРОНА ТЕКСТ"),
    (["warn", "left", "x" * 300], "текст слишком длинный (300); допустимо не больше 200 знаков; "
                                  "как писать: warn СТОРОНА ТЕКСТ"),
    (["warn", "left", "a\x00"], "в тексте есть управляющий символ (нулевой байт, перевод строки и "
                                "т. п.); используйте только печатные символы; как писать: warn "
                                "СТОРОНА ТЕКСТ"),
    (["forfeit"], "forfeit: нужна сторона и, если надо, число очков; как писать: forfeit "
                  "СТОРОНА [ОЧКИ]"),
    (["forfeit", "left", "0"], "'0' — не число очков (от 1 до 99); как писать: forfeit СТОРОНА "
                               "[ОЧКИ]"),
    (["cube"], "cube: нужно значение и, если надо, владелец; как писать: cube ЗНАЧЕНИЕ [СТОРОНА]"),
    (["cube", "3"], "'3' — не значение куба (степень двойки от 1 до 4096); как писать: cube "
                    "ЗНАЧЕНИЕ [СТОРОНА]"),
    (["cube", "1", "left"], "куб на 1 стоит в середине, владельца у него нет; как писать: cube "
                            "ЗНАЧЕНИЕ [СТОРОНА]"),
    (["challenge", "left", "maybe"], "'maybe' — не решение по апелляции (upheld или rejected); "
                                     "как писать: challenge СТОРОНА upheld|rejected"),
]


def latin_words(text: str) -> set[str]:
    """Latin words left in a Russian error but the commands, sides, outcomes and values as
    typed (quoted '…' or "…")."""
    text = re.sub(r"'[^']*'|\"[^\"]*\"", "", text)
    kept = {*USAGE, "left", "right", "upheld", "rejected", "end", "break"}
    return set(re.findall(r"[A-Za-z]+", text)) - kept


def error_of(typed: list[str]) -> ArbiterSyntaxError:
    with pytest.raises(ArbiterSyntaxError) as caught:
        parse_command(typed)
    return caught.value


@pytest.mark.parametrize(("typed", "ru"), CASES)
def test_each_syntax_error_in_russian_and_its_english_unchanged(typed, ru) -> None:
    exc = error_of(typed)
    assert syntax_error_said(exc, "ru") == ru
    assert not latin_words(ru), ru
    assert syntax_error_said(exc, "en") == str(exc)      # the catalogue's English is the core's


def test_every_commands_usage_is_worded() -> None:
    for name in USAGE:
        exc = error_of([name, "x", "y", "z", "w"]) if name != "warn" else error_of([name])
        assert syntax_error_said(exc, "en") == str(exc)
        assert not latin_words(syntax_error_said(exc, "ru")), name


def test_a_russian_matchs_socket_says_a_bad_command_in_russian(running_ru) -> None:
    _, state_dir = running_ru
    answer = ask(socket_path(state_dir), ["dedcut", "left", "30s"])
    assert answer == {"ok": False, "error": "неизвестная команда судьи 'dedcut'; ожидается "
                                            f"одна из: {COMMANDS}"}
    answer = ask(socket_path(state_dir), ["deduct", "left", "30x"])
    assert answer["error"] == ("""'30x' — не длительность; пишите, например, "12s", "2m30s", """
                               """"2.5m", "1500ms"; как писать: deduct СТОРОНА ВРЕМЯ""")


def test_an_english_matchs_socket_keeps_the_cores_english(running) -> None:
    _, state_dir = running
    answer = ask(socket_path(state_dir), ["dedcut", "left", "30s"])
    assert answer["error"] == f"unknown arbiter command 'dedcut'; expected one of: {COMMANDS}"


def test_a_russian_matchs_hall_reply_to_a_bad_command_is_russian(running_ru,
                                                                   tmp_path: Path) -> None:
    device, _ = running_ru
    (tmp_path / "hall").mkdir()
    hall = HallRequests(device.service, None, HallMemory(tmp_path / "hall"),  # type: ignore[arg-type]
                        lambda *_: None, match_topic="gammonclock/table-1/match")
    answer = hall.answer(json.dumps({"id": "r1", "by": "director",
                                     "command": "cube 3 left"}).encode())
    assert answer["ok"] is False and answer["outcome"] == "bad request"
    assert answer["reason"] == ("'3' — не значение куба (степень двойки от 1 до 4096); как "
                                "писать: cube ЗНАЧЕНИЕ [СТОРОНА]; ничего не сделано")

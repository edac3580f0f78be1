"""`gammonclock check-config` in the config's language (issue 25, SPEC §15): a Russian config's
verdict, notes and problems are Russian (its own `[display] language`, else its device's, or
`--language`), the file names, key paths and values as written kept verbatim; an English
config's stay as they were."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from gammonclock.cli.main import main
from gammonclock.config.loading import ConfigError, parse_config

BAD = """\
[match]
length = 0
discipline = "chess"
colour = 3

[players]
left = "Анна"
right = ""

[time]
reserve = "abc"
delay = -1
"""
RU = '\n[display]\nlanguage = "ru"\n'

RU_LINES = [
    "match.colour: неизвестный ключ; в [match] допустимы: discipline, length, crawford, "
    "start_score, crawford_played, cube, draw_points",
    'match.discipline: "chess" — недопустимое значение; допустимо: backgammon, '
    "backgammon_blitz, backgammon_doubles, sprintgammon, longgammon, longgammon_blitz",
    "match.length: 0 — вне допустимых пределов; допустимо 1..99",
    'players.right: "" — не имя (нужна непустая строка)',
    "time.delay: -1 — вне допустимых пределов; нужна длительность 0 или больше",
    'time.reserve: "abc" — не длительность; пишите, например, "12s", "2m30s", "2.5m", "1500ms"',
]
EN_LINES = [
    "match.colour: unknown key; allowed in [match]: discipline, length, crawford, start_score, "
    "crawford_played, cube, draw_points",
    'match.discipline: "chess" is not one of: backgammon, backgammon_blitz, backgammon_doubles, '
    "sprintgammon, longgammon, longgammon_blitz",
    "match.length: 0 is out of range; use 1..99",
    'players.right: "" is not a name (a non-empty string)',
    "time.delay: -1 is out of range; use a duration of 0 or more",
    'time.reserve: "abc" is not a duration; use e.g. "12s", "2m30s", "2.5m", "1500ms"',
]


def latin_words(line: str) -> set[str]:
    """Latin words of a Russian line but its key path, values as written ("…", [sections],
    `commands`, key lists after a colon of keys) and file names."""
    _, _, said = line.partition(": ")
    said = re.sub(r'"[^"]*"|\[[^\]]*\]|`[^`]*`|/\S+|\b[a-z_]+\.[a-z_.]+\b', "", said)
    said = re.sub(r"допустим[оы]:.*", "", said)            # the allowed keys or values, as named
    return set(re.findall(r"[A-Za-z]+", said)) - {"GPIO", "TOML", "USB"}



@pytest.fixture
def run(tmp_path: Path, capsys):
    def go(text: str, *args: str) -> tuple[int, str, str, Path]:
        path = tmp_path / "config.toml"
        path.write_text(text, encoding="utf-8")
        status = main(["check-config", *args, str(path)])
        out, err = capsys.readouterr()
        return status, out, err, path
    return go


def test_a_russian_files_problems_are_russian(run) -> None:
    status, _, err, path = run(BAD + RU)
    assert status == 2
    assert err.splitlines() == [f"{path}: {line}" for line in RU_LINES]
    for line in err.splitlines():
        assert not latin_words(line.removeprefix(f"{path}: ")), line


def test_an_english_files_problems_stay_english_and_the_language_can_be_given(run) -> None:
    status, _, err, path = run(BAD)
    assert status == 2 and err.splitlines() == [f"{path}: {line}" for line in EN_LINES]
    _, _, err, path = run(BAD, "--language", "ru")
    assert err.splitlines() == [f"{path}: {line}" for line in RU_LINES]
    _, _, err, path = run(BAD + RU, "--language", "en")
    assert err.splitlines() == [f"{path}: {line}" for line in EN_LINES]


def test_a_russian_combined_files_verdict_and_note(run) -> None:
    text = '[match]\nlength = 5\n[players]\nleft = "Анна"\nright = "Борис"\n[pins]\nleft = 5\n'
    status, out, _, path = run(text + RU)
    assert status == 0
    lines = out.splitlines()
    assert lines[0] == (f"{path}: годится как общий файл устройства и матча (вид определён по "
                        "разделам): для `simulate --config` и `run --config`")
    assert lines[1] == (
        "  как следующий матч он был бы отклонён: [pins] — раздел устройства (файл матча "
        "содержит только [match], [players], [time], [breaks], [event], [display]); "
        f"`check-config --as match {path}` проверит его так, как проверят часы")
    assert lines[2] == "дисциплина  бэкгаммон, матч до 5 очков, правило Кроуфорда"


def test_a_russian_device_configs_problems(run) -> None:
    text = ('[pins]\nleft = 5\nright = 5\n[buttons]\nhold_s = 9\n[journal]\nstate_dir = 3\n'
            '[hall]\nusername = "t1"\n' + RU)
    status, _, err, path = run(text)
    assert status == 2
    assert err.splitlines() == [
        f"{path}: buttons.hold_s: 9 — вне допустимых пределов; допустимо 0.5..5 (в секундах)",
        f"{path}: journal.state_dir: 3 — не путь к каталогу",
        f"{path}: pins.right: GPIO 5 уже занят: pins.left",
        f'{path}: hall.broker: обязательно в [hall]: адрес брокера, например '
        f'"mqtt://10.0.0.2:1883"; без зала уберите этот раздел']


def test_a_match_file_is_said_in_its_devices_language(tmp_path: Path, capsys) -> None:
    device = tmp_path / "device.toml"
    device.write_text('[table]\nid = "t1"\n' + RU, encoding="utf-8")
    match = tmp_path / "match.toml"
    match.write_text("[match]\nlength = 100\n", encoding="utf-8")
    assert main(["check-config", str(device), str(match)]) == 2
    assert capsys.readouterr().err.splitlines() == [
        f"{match}: match.length: 100 — вне допустимых пределов; допустимо 1..99"]


def test_a_problem_is_english_text_that_remembers_its_words() -> None:
    from gammonclock.config.problems import Problem

    problem = Problem("cfg.not_whole", value="1.5", low=1, high=99)
    assert problem == "1.5 is not a whole number; use 1..99"
    assert problem.said("ru") == "1.5 — не целое число; допустимо 1..99"
    with pytest.raises(ConfigError) as caught:
        parse_config("[match]\nlength = 1.5\n", "m.toml")
    assert str(caught.value) == "m.toml: match.length: 1.5 is not a whole number; use 1..99"
    assert caught.value.said("ru") == "m.toml: match.length: 1.5 — не целое число; допустимо 1..99"


def test_the_language_of_a_file_with_problems() -> None:
    from gammonclock.config.problems import language_in

    assert language_in('[display]\nlanguage = "ru"\n[match]\nlength = "x"\n') == "ru"
    assert language_in('[display]\nlanguage = "de"\n') is None
    assert language_in("not toml [") is None


def test_a_russian_device_configs_names_broker_and_panels(run) -> None:
    text = ('[table]\nid = "стол 1"\n[hall]\nbroker = "http://x"\nprefix = "a//b"\n'
            '[displays.left]\naddress = 0x3C\n[displays.right]\naddress = 0x3C\n' + RU)
    status, _, err, path = run(text)
    assert status == 2
    lines = err.splitlines()
    assert f'{path}: table.id: "стол 1" — не номер стола; допустимо 1–32 знака из A-Z a-z ' \
           "0-9 _ -" in lines
    assert f'{path}: hall.broker: "http://x" — не адрес брокера; пишите mqtt://HOST[:PORT] ' \
           'или mqtts://HOST[:PORT], например "mqtt://10.0.0.2:1883"' in lines
    assert f'{path}: hall.prefix: "a//b" — не префикс топиков; допустимо A-Z a-z 0-9 _ -, ' \
           "уровни через /" in lines
    assert f"{path}: displays.right.address: обе панели на адресе 0x3c шины 1; задайте им " \
           "разные адреса (hardware_docs/displays.md)" in lines
    _, _, english, _ = run(text, "--language", "en")
    assert "displays.right.address: both panels are at address 0x3c on bus 1; give them " \
           "different addresses (hardware_docs/displays.md)" in english

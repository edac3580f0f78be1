"""`gammonclock check-config` reads a Russian match back in Russian (SPEC §13.1, §15, issue 25):
the match's `[display] language` chooses, without any flag; the words are those of the Russian
rules, with plural forms and a decimal comma."""

from __future__ import annotations

from pathlib import Path

import pytest

from gammonclock.cli.main import main
from gammonclock.config.loading import parse_config, parse_device_config
from gammonclock.config.readback import device_readback, readback

RU = '[display]\nlanguage = "ru"\n'
M7 = '[match]\nlength = 7\n'


@pytest.mark.parametrize(("text", "label", "said"), [
    (M7, "дисциплина", "бэкгаммон, матч до 7 очков, правило Кроуфорда"),
    ('[match]\nlength = 21\ncrawford = false\n', "дисциплина",
     "бэкгаммон, матч до 21 очка, без правила Кроуфорда"),
    ('[match]\ndiscipline = "longgammon"\nlength = 1\n', "дисциплина",
     "лонггаммон, матч до 1 очка, без куба"),
    (M7 + "start_score = [6, 2]\n", "начало", "6-2, партия 1 — партия Кроуфорда"),
    ('[match]\ndiscipline = "longgammon"\nlength = 7\nstart_score = [1.5, 0]\n', "начало",
     "1,5-0"),
    (M7, "время", "14:00 каждому + задержка 12 с (простая); падение флажка — поражение в матче"),
    (M7 + '[time]\nmode = "fischer"\ndelay = 2.5\n', "время",
     "14:00 каждому + 2,5 с за ход (Фишер); падение флажка — поражение в матче"),
    (M7 + '[time]\nmode = "none"\n', "время",
     "14:00 каждому, без задержки; падение флажка — поражение в матче"),
    (M7 + '[time]\nreserve = "1h40m30.5s"\nflag_rule = "overtime"\novertime = "2m"\n', "время",
     "1:40:30,5 каждому + задержка 12 с (простая); первое падение флажка даёт 2:00 один раз, "
     "второе — поражение"),
    (M7, "перерывы", "1 каждому, по 5:00"),
    (M7 + "[breaks]\nper_player = 0\n", "перерывы", "нет"),
    ('[match]\ndiscipline = "sprintgammon"\nlength = 7\n', "перерывы",
     "1 на весь матч, общий, 5:00, не ранее 45:00"),
    ('[match]\ndiscipline = "longgammon"\nlength = 7\ndraw_points = "half"\n', "ничья",
     "по 0,5 очка каждому"),
    ('[match]\ndiscipline = "longgammon"\nlength = 7\ndraw_points = "one"\n', "ничья",
     "по 1 очко каждому"),
    (M7 + '[players]\nleft = "Анна"\nright = "Boris"\n', "игроки", "слева: Анна, справа: Boris"),
    (M7 + '[event]\nname = "Кубок Москвы"\nround = "3"\n', "турнир", "Кубок Москвы, 3"),
])
def test_a_russian_match_is_read_back_in_russian(text: str, label: str, said: str) -> None:
    config = parse_config(text + RU, "t.toml")
    assert dict(readback(config))[label] == said


def test_the_language_can_be_given_and_english_stays_as_it_was() -> None:
    ru = parse_config(M7 + RU, "t.toml")
    assert dict(readback(ru, "en"))["time"] == \
        "14:00 each + 12 s delay (simple); a flag loses the match"
    en = parse_config(M7, "t.toml")
    assert dict(readback(en))["time"] == "14:00 each + 12 s delay (simple); a flag loses the match"
    assert dict(readback(en, "ru"))["время"].startswith("14:00 каждому")


def test_check_config_prints_a_russian_match_in_russian(tmp_path: Path, capsys) -> None:
    path = tmp_path / "match.toml"
    path.write_text(M7 + '[players]\nleft = "Анна"\nright = "Борис"\n' + RU, encoding="utf-8")
    assert main(["check-config", "--as", "match", str(path)]) == 0
    out = capsys.readouterr().out
    assert "время       14:00 каждому + задержка 12 с (простая); " \
           "падение флажка — поражение в матче" in out
    assert "игроки      слева: Анна, справа: Борис" in out
    assert f"{path}: годится как файл матча: работающие часы его примут (new-match, " \
           "USB-флешка, зал, файл матча при включении)" in out
    assert "each" not in out and "good" not in out


def test_a_russian_device_config_is_read_back_in_russian() -> None:
    device = parse_device_config('[table]\nid = "t7"\n' + RU, "d.toml").device
    lines = dict(device_readback(device))
    assert lines["файл матча"] == "нет: часы ждут матча (ожидание)"
    assert lines["кнопки"].startswith("левая GPIO ")
    assert lines["судья"] == "сокет: группа службы, ПИН-кода для панелей нет"
    assert dict(device_readback(device, "en"))["dice reader"] == "none"

"""The next match's words in the table's language (issue 25, SPEC §13.2, §15): on a Russian
table what `new-match`, a stick, the hall and the arbiter's menu say about loading a match is
Russian, with no English word left but file names, config keys and the command language."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from PIL import Image

from gammonclock import words
from gammonclock.config.loading import parse_device_config
from gammonclock.core.reasons import Reason
from gammonclock.device.build import build_device
from gammonclock.hardware.screens import message_view, render
from gammonclock.hardware.texts import Text
from gammonclock.runtime.lifecycle import PanelRequests, load_next_match, match_words
from gammonclock.runtime.stick_handler import _load_text
from gammonclock.sides import Button
from lifecycle_helpers import DEVICE_TEXT, MATCH_TEXT, OTHER_MATCH, tap, uptime_clock

RU = '\n[display]\nlanguage = "ru"\n'
LATIN = re.compile(r"[A-Za-z][A-Za-z_.-]*")
# file names, the players' Latin names and the command language
KEPT = {"Boris", "Carla", "new-match", "--force", "match-", "jsonl", "table.match_file"}


def latin_words(text: str) -> set[str]:
    text = re.sub(r"match-[\w.-]+\.jsonl", "", text)
    return set(LATIN.findall(text.replace("--force", ""))) - KEPT


@pytest.fixture
def ru_device(tmp_path: Path):
    device = build_device(parse_device_config(DEVICE_TEXT + RU, str(tmp_path / "device.toml")),
                          tmp_path / "state", clock_ns=uptime_clock)
    device.service.present_all([])
    yield device
    device.close()


def test_a_russian_table_says_what_it_loaded_in_russian(ru_device) -> None:
    device = ru_device
    loaded = load_next_match(device.service, device.table, MATCH_TEXT, "match.toml")
    assert loaded.ok and loaded.lang == "ru"
    assert loaded.said[0] == "следующий матч загружен: Анна-Boris, 5 очков"
    assert re.fullmatch(r"журнал: match-.*\.jsonl", loaded.said[1])
    again = load_next_match(device.service, device.table, MATCH_TEXT, "match.toml")
    assert again.ok and again.said == ["следующий матч уже загружен: Анна-Boris, 5 очков"]
    tap(device, Button.LEFT)                               # game 1 is on
    refused = load_next_match(device.service, device.table, OTHER_MATCH, "next.toml")
    assert not refused.ok and refused.reason is Reason.MATCH_IN_PROGRESS
    assert refused.error == ("идёт матч (партия 1, счёт 0-0): следующий матч загрузится, когда "
                             "он закончится; `new-match --force` прерывает его сейчас, с записью "
                             "в протоколе")
    forced = load_next_match(device.service, device.table, OTHER_MATCH, "next.toml", force=True)
    assert forced.ok
    assert forced.said[0] == "arbiter: abandon"            # the command as given
    assert "матч прерван судьёй при счёте 0-0" in forced.said
    assert forced.said[-2] == "следующий матч загружен: Анна-Carla, 3 очка"
    for line in [*loaded.said, *again.said, refused.error or "", *forced.said[1:]]:
        assert not latin_words(line), line


def test_an_english_table_stays_english(tmp_path: Path) -> None:
    device = build_device(parse_device_config(DEVICE_TEXT, str(tmp_path / "device.toml")),
                          tmp_path / "state", clock_ns=uptime_clock)
    try:
        loaded = load_next_match(device.service, device.table, MATCH_TEXT, "match.toml")
        assert loaded.said[0] == "next match loaded: Анна-Boris, 5 points" and loaded.lang == "en"
    finally:
        device.close()


def test_the_menus_refusals_in_russian(ru_device, tmp_path: Path) -> None:
    none = PanelRequests(lambda: ru_device.service, ru_device.table, None).load()
    assert none.error == ("нет файла матча: в конфигурации устройства он не указан "
                          "(table.match_file)")
    missing = str(tmp_path / "gone.toml")
    unreadable = PanelRequests(lambda: ru_device.service, ru_device.table, missing).load()
    assert (unreadable.error or "").startswith(f"{missing}: файл матча не читается: ")


def test_match_words_count_points_in_russian() -> None:
    from gammonclock.config.loading import parse_config
    config = parse_config(MATCH_TEXT.replace("length = 5", "length = 1"), "m.toml")
    assert match_words(config) == "Анна-Boris, 1 point"
    assert match_words(config, "ru") == "Анна-Boris, 1 очко"


def test_a_sticks_refusal_on_the_russian_panels(tmp_path: Path) -> None:
    """The panels' screen for a stick whose next match the clock did not take: looked at."""
    text = _load_text(False, None, "ru")
    assert text.key == "stick.next_refused" and text.args["why"] == "часы не приняли его вовремя"
    image = render(message_view("USB STICK", [Text("stick.exported", n=2), text], lang="ru"))
    out = Path(os.environ.get("GAMMONCLOCK_SHOTS", tmp_path)) / "stick-refused-ru.png"
    image.convert("L").resize((image.width * 4, image.height * 4), Image.NEAREST).save(out)
    assert out.stat().st_size > 0


def test_the_tables_answer_to_the_hall_in_russian(running_ru, tmp_path: Path) -> None:
    """A forced match that no longer waits, and a busy clock: the table says so in its match's
    language, as it says what a command did."""
    import json

    from gammonclock.link.outbox import HallMemory
    from gammonclock.link.requests import HallRequests, _not_applied

    device, _ = running_ru
    (tmp_path / "hall").mkdir()
    hall = HallRequests(device.service, device.table, HallMemory(tmp_path / "hall"),
                        lambda *_: None, match_topic="gammonclock/table-1/match")
    gone = hall.answer(json.dumps({"id": "r1", "by": "director",
                                   "command": f"new-match --force --waiting {'ab' * 32}"}).encode())
    assert gone["ok"] is False and gone["code"] == "match_not_waiting"
    assert gone["reason"] == ("этот матч здесь больше не ждёт (его загрузили, заменили или "
                              "убрали); ничего не сделано")
    busy = _not_applied(words.say("hr.busy", "ru"), "ru")
    assert busy["reason"] == ("часы заняты (в очереди слишком много нажатий и команд): команда "
                              "НЕ применена; отправьте её ещё раз")

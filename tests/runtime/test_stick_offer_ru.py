"""A USB stick's continuation only offered, on a Russian table (SPEC §13.5, §14.1, §15, issue
31): what the reply and the panels say of the offer, the arbiter's menu item that takes it and
its confirmation, and the refusals, in the words of the Russian rules (матч, партия, судья,
флешка), with no English word left but file names, the players' Latin names, the table ids and
the command language."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from gammonclock.core.match import Phase
from gammonclock.core.match_state import MenuItem
from gammonclock.journal.reader import read_journal
from gammonclock.runtime.lifecycle import load_next_match
from gammonclock.sides import Button
from stick_offer_helpers import (
    FORGED_TABLE,
    PIN_DEVICE_TEXT,
    PUSHED_MATCH,
    RU,
    chord,
    enter_pin,
    forged_journal,
    panel,
    plug,
    press,
    stick_with,
    texts_of,
)
from venue_helpers import DEVICE_TEXT, Venue, tap

# file names, the players' Latin names, the table ids, the command language
KEPT = {"Anna", "Boris", "Carla", "Dan", "table", "SPARE", "gammonclock", "arbiter", "continue",
        "FROM", "force", "pin", "jsonl", "match"}


def latin_words(text: str) -> set[str]:
    text = re.sub(r"(/[\w.-]+)+|match-[\w.-]+\.jsonl", " ", text)
    return set(re.findall(r"[A-Za-z][A-Za-z0-9]*", text)) - KEPT


@pytest.fixture
def venue_ru() -> Iterator[Venue]:
    made = Venue(device_text=PIN_DEVICE_TEXT + RU)
    yield made
    for device in made.clocks:
        device.close()


def ready_spare(venue: Venue, tmp_path: Path):
    spare = venue.build(tmp_path, "SPARE", tmp_path / "spare", 50 * 3600, "boot-spare")
    assert load_next_match(spare.service, spare.table, PUSHED_MATCH, "pushed.toml").ok
    return spare


def test_the_offer_its_menu_item_and_its_confirmation_in_russian(venue_ru, tmp_path) -> None:
    forged = forged_journal(venue_ru, tmp_path)
    spare = ready_spare(venue_ru, tmp_path)
    answer = plug(spare, stick_with(tmp_path, forged, "SPARE"))
    assert answer["ok"], answer
    seq = read_journal(forged).last.seq
    copy = spare.table.state_dir / "continue-from-stick" / forged.name
    assert answer["said"][1:] == [
        f"на флешке предложен матч стола {FORGED_TABLE}: Anna-Boris, 7 очков, счёт 6-0, из "
        f"{forged.name} (запись {seq}); он НЕ загружен, здесь ничего не прервано",
        "судья берёт его на панелях этих часов: удержать три кнопки, ПИН-код, в меню — МАТЧ С "
        f"ФЛЕШКИ; или через сокет: gammonclock arbiter continue {copy}"]
    for line in answer["said"]:
        assert not latin_words(line), line
    offered = panel(spare)
    assert texts_of(offered) == ["МАТЧ НА ФЛЕШКЕ", f"{FORGED_TABLE}: Anna-Boris 6-0",
                                 "судья: 3 кнопки, ПИН,", "меню: МАТЧ С ФЛЕШКИ"]
    chord(venue_ru, spare)
    enter_pin(venue_ru, spare)
    press(venue_ru, spare, Button.RIGHT)
    assert spare.session.engine.match.panel.item is MenuItem.CONTINUE_STICK
    menu = panel(spare)
    assert (menu.title, menu.lines, menu.footer) == (
        "МАТЧ С ФЛЕШКИ", ((FORGED_TABLE, "6-0"), ("Anna-Boris", "")),
        "Л:назад К:выбор П:далее")
    press(venue_ru, spare, Button.CUBE)
    confirm = panel(spare)
    assert (confirm.title, confirm.lines, confirm.footer) == (
        "ПОДТВЕРДИТЬ?", (("продолжить", f"{FORGED_TABLE}?"), ("этот будет ПРЕРВАН", "")),
        "К:да  Л или П:нет")
    press(venue_ru, spare, Button.CUBE)
    venue_ru.wait(spare, 0.5)
    assert spare.session.engine.rules.names.left == "Anna"
    assert spare.session.engine.match.phase is Phase.PAUSED


def test_a_stick_refused_mid_match_in_russian(venue_ru, tmp_path) -> None:
    forged = forged_journal(venue_ru, tmp_path)
    spare = ready_spare(venue_ru, tmp_path)
    tap(venue_ru, spare, Button.LEFT)
    answer = plug(spare, stick_with(tmp_path, forged, "SPARE"))
    assert not answer["ok"]
    assert answer["said"][-1] == (
        "матч НЕ продолжен: здесь идёт матч (партия 1, счёт 0-0): флешка его не прерывает; "
        "матч с флешки судья продолжает через сокет с --force (gammonclock arbiter continue "
        "FROM --force)")
    assert not latin_words(answer["said"][-1])
    assert panel(spare).notice == "идёт матч: отказ; судья: сокет, --force"
    assert spare.session.engine.rules.names.left == "Carla"


def test_without_a_pin_in_russian(tmp_path) -> None:
    venue = Venue(device_text=DEVICE_TEXT + RU)
    try:
        forged = forged_journal(venue, tmp_path)
        spare = ready_spare(venue, tmp_path)
        answer = plug(spare, stick_with(tmp_path, forged, "SPARE"))
        copy = spare.table.state_dir / "continue-from-stick" / forged.name
        assert answer["said"][-1] == (
            "у этого стола нет ПИН-кода судьи ([arbiter] pin), на панелях его не взять: судья "
            f"берёт его через сокет: gammonclock arbiter continue {copy}")
        assert not latin_words(answer["said"][-1])
        assert texts_of(panel(spare))[2:4] == ["нужен ПИН-код судьи или", "сокет: continue FROM"]
    finally:
        for device in venue.clocks:
            device.close()

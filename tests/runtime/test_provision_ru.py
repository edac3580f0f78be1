"""A provisioning stick said in Russian (issue 32, SPEC §15): a clock whose panels speak Russian
says what it took, offered or refused in Russian, on its panels and in the reply; the file
names and keys as written. Whole devices on mock hardware (venue_helpers)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from gammonclock.runtime.lifecycle import load_next_match
from provision_helpers import clock_in, new_key, plug, stick_toml, write_stick
from stick_offer_helpers import PIN_DEVICE_TEXT, PUSHED_MATCH, RU, panel, texts_of
from venue_helpers import DEVICE_TEXT, Venue

URL = "mqtt://127.0.0.1:1883"


@pytest.fixture
def venue(venues: Callable[[str], Venue]) -> Venue:
    return venues(DEVICE_TEXT + RU)


def test_a_fresh_russian_clock_says_it_was_provisioned(venue: Venue, tmp_path: Path) -> None:
    clock = clock_in(venue, tmp_path)
    write_stick(tmp_path / "stick", None, "table-1", key=new_key())
    answer = plug(clock, tmp_path / "stick")
    assert answer["ok"], answer
    assert answer["said"][1:] == [
        f"настроено с флешки: стол table-1, зал {URL}, учётная запись table-1; связь с залом "
        "запущена с ними",
        "ключ устройства взят с флешки (эти часы ещё не запечатали ни одного журнала)"]
    assert texts_of(panel(clock))[:3] == ["НАСТРОЕН: table-1", "зал 127.0.0.1; ключ",
                                          "устройства с флешки"]


def test_a_hostile_stick_is_refused_in_russian(venue: Venue, tmp_path: Path) -> None:
    clock = clock_in(venue, tmp_path)
    text = stick_toml("table-1", URL) + '\n[arbiter]\npin = "LLLL"\n'
    write_stick(tmp_path / "stick", None, "table-1", text=text)
    answer = plug(clock, tmp_path / "stick")
    assert not answer["ok"]
    path = tmp_path / "stick" / "gammonclock" / "provision" / "device.toml"
    assert answer["said"][1:] == [
        f"НЕ настроено: {path}: arbiter: флешка настройки задаёт только [table], [hall]; "
        "ничего не принято"]
    assert texts_of(panel(clock))[0] == "ФЛЕШКА НЕ ПРИНЯТА"
    assert clock.table.table_id == "pi-3"


def test_a_russian_pin_clock_offers_it_in_russian(tmp_path: Path) -> None:
    venue = Venue(device_text=PIN_DEVICE_TEXT + RU)
    clock = clock_in(venue, tmp_path)
    try:
        match = PUSHED_MATCH + RU
        assert load_next_match(clock.service, clock.table, match, "pushed.toml").ok
        write_stick(tmp_path / "stick", None, "table-1", key=new_key())
        answer = plug(clock, tmp_path / "stick")
        assert answer["ok"], answer
        assert answer["said"][1:] == [
            f"флешка предлагает настройку, она НЕ принята: стол table-1, зал {URL}, учётная "
            "запись table-1",
            "судья принимает её на панелях: удержать три кнопки, ПИН-код, затем в меню СТОЛ С "
            "ФЛЕШКИ; или через сокет: gammonclock arbiter provision"]
        assert texts_of(panel(clock))[:4] == ["ФЛЕШКА НАСТРОЙКИ", "table-1: 127.0.0.1",
                                              "судья: три кнопки, ПИН,",
                                              "меню: СТОЛ С ФЛЕШКИ"]
    finally:
        clock.close()

"""`gammonclock check-hardware` in Russian (issue 25): the arbiter runs it at the table before an
event, so it speaks the device config's `[display] language` (`--language` overrides): every
line it prints, the card's verdict and figures (decimal comma), the panels' test screen, a
panel's hint and the pins' errors. Names stay as written: commands, paths, config keys, GPIO,
the system's calls (fsync, fdatasync), the driver and the pin factory's name."""

from __future__ import annotations

import errno
import re
import threading
from dataclasses import replace
from pathlib import Path

import pytest
from PIL import ImageChops

from gammonclock import words
from gammonclock.cli.main import main
from gammonclock.config.loading import DEFAULT_DEVICE, PIN_FACTORIES
from gammonclock.config.problems import said
from gammonclock.device import check as hardware_check
from gammonclock.device.build import dummy_panels
from gammonclock.device.check import check_hardware, check_screen
from gammonclock.hardware.buttons import ButtonBoard, make_pin_factory
from gammonclock.hardware.errors import HardwareError
from gammonclock.sides import Button, Side
from pin_helpers import FakeClock

S = 1_000_000_000
DEVICE = replace(DEFAULT_DEVICE, table_id="T12", language="ru")
PROMPT_RU = "Нажмите и отпустите каждую кнопку"

# Latin a Russian line may hold: names as written (a command, a path, a config key in
# backticks or brackets, GPIO, the system's calls, the pin factory's and the panel driver's
# names, the program's name, the key that stops the check).
NAMES = re.compile(r"`[^`]*`|\[[^\]]*\]|\([^()]*sudo[^()]*\)|\S*/\S*|sudo systemctl stop "
                   r"gammonclock|\bgammonclock\b|\bGPIO\b|\bfdatasync\b|\bfsync\b|\bmock\b|"
                   r"\blgpio\b|\bCtrl-C\b|\bI²C\b|\bssd1306\b|\benabled = false\b|"
                   r"\b0x[0-9a-f]+\b")
LATIN_WORD = re.compile(r"[A-Za-z]{2,}")


def latin_words(text: str) -> list[str]:
    """The Latin words of `text` that are not names as written."""
    return LATIN_WORD.findall(NAMES.sub(" ", text))


def english_words() -> set[str]:
    """The words of check-hardware's English texts ("hw.*") that its Russian ones do not hold."""
    found: set[str] = set()
    for key, entry in words.WORDS.items():
        if key.startswith("hw."):
            plain = re.sub(r"\{\w+\}", " ", entry.en)
            found |= {w for w in re.findall(r"[A-Za-z]{3,}", plain) if w not in entry.ru}
    return found


def no_english(text: str, table: str = "T12") -> None:
    text = text.replace(f"стол {table}", "стол")        # the table's id is a name
    assert latin_words(text) == [], f"English in the Russian check: {latin_words(text)}\n{text}"
    catalogue = english_words()
    assert not [w for w in re.findall(r"[A-Za-z]+", NAMES.sub(" ", text)) if w in catalogue]


class Table:
    """The terminal: at the Russian prompt the arbiter presses each button, then stops."""

    def __init__(self, factory, clock: FakeClock, stop: threading.Event,
                 prompt: str = PROMPT_RU) -> None:
        self.factory, self.clock, self.stop, self.prompt = factory, clock, stop, prompt
        self.text = ""

    def write(self, text: str) -> int:
        self.text += text
        if self.prompt in text and not self.stop.is_set():
            start = self.clock.ns
            for offset, button, pressed in [(0.0, Button.LEFT, True), (0.42, Button.LEFT, False),
                                            (1.0, Button.CUBE, True), (1.5, Button.CUBE, False)]:
                self.clock.ns = start + round(offset * S)
                pin = self.factory.pin(DEVICE.button_pins[button])
                pin.drive_low() if pressed else pin.drive_high()
            self.stop.set()
        return len(text)

    def flush(self) -> None:
        pass


def test_a_russian_device_is_checked_in_russian(factory, clock, tmp_path: Path) -> None:
    stop = threading.Event()
    out = Table(factory, clock, stop)
    status = check_hardware(DEVICE, out=out, seconds=None, stop=stop, panels=dummy_panels(),
                            factory=factory, clock_ns=clock, state_dir=tmp_path,
                            card_appends=5, card_gap_s=0.0, lang="ru")
    lines = out.text.splitlines()
    assert status == 1                         # RIGHT never pressed
    assert lines[0].startswith("Проверка оборудования gammonclock: стол T12")
    assert lines[1] == f"Карта памяти (папка состояния {tmp_path}):"
    assert lines[2].startswith(f"  5 дозаписей с fdatasync в заранее записанные нули (как пишет "
                               f"журнал) в {tmp_path}, через каждые 0 мс: fdatasync: медиана ")
    assert re.search(r"медиана \d+,\d мс, 99-й процентиль \d+,\d мс, максимум \d+,\d мс$",
                     lines[2]), lines[2]
    assert "  левая кнопка (GPIO 17): нажата" in lines
    assert "  левая кнопка (GPIO 17): отпущена через 0,42 с" in lines
    assert "  кнопка куба (GPIO 22): отпущена через 0,50 с" in lines
    assert "  левая кнопка (GPIO 17): 1 нажатие" in lines
    assert ("  правая кнопка: ни разу не нажата — проверьте её подключение: GPIO 27 (контакт 13 "
            "разъёма) на землю (hardware_docs/wiring.md)") in lines
    assert lines[-1] == "Не всё в порядке: правая кнопка (код выхода 1)."
    no_english(out.text)


@pytest.mark.parametrize(("p99_ms", "verdict", "says"), [
    (3.25, "ГОДНА", "годна (99-й процентиль не больше 20 мс)"),
    (31.0, "МЕДЛЕННАЯ", "медленная (99-й процентиль больше 20 мс, но не больше 50 мс): нажатия "
                        "иногда будут показаны с опозданием; лучше поставить более быструю карту "
                        "(карту класса A1 или A2 известного производителя)"),
    (80.0, "ЗАМЕНИТЬ", "ЗАМЕНИТЕ КАРТУ ПАМЯТИ (99-й процентиль больше 50 мс): нажатия будут "
                       "показаны с опозданием; запишите образ на новую карту до начала турнира "
                       "(карту класса A1 или A2 известного производителя)"),
])
def test_the_cards_verdict_in_russian(p99_ms: float, verdict: str, says: str) -> None:
    card = hardware_check.CardCheck("/var/lib/gammonclock", (round(p99_ms * 1e6),) * 3)
    assert card.says("ru") == says
    assert card.figures("ru") == (f"fdatasync: медиана {p99_ms:.1f} мс, 99-й процентиль "
                                  f"{p99_ms:.1f} мс, максимум {p99_ms:.1f} мс").replace(".", ",")
    assert words.say(f"hw.verdict.{card.verdict}", "ru") == verdict
    no_english(card.says("ru") + card.figures("ru"))


def test_a_card_that_cannot_be_measured_is_said_in_russian(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    state = tmp_path / "var" / "lib" / "gammonclock"
    _, where = hardware_check.card_folder(state, others=[home])
    assert said(where, "ru") == f"{home}, на той же файловой системе, что и {state}"
    assert where == f"{home}, on the same file system as {state}"      # the English unchanged
    _, where = hardware_check.card_folder(state, others=[])
    assert said(where, "ru") == (f"{state} не существует, и на её файловой системе нет папки, "
                                 f"доступной для записи: запустите проверку через sudo")


@pytest.mark.parametrize(("code", "hint"), [
    (errno.EREMOTEIO, "по адресу 0x3c на шине 1 никто не отвечает: проверьте провода VCC, GND, "
                      "SDA и SCL панели и её перемычку адреса, затем `i2cdetect -y 1` "
                      "(hardware_docs/displays.md)"),
    (errno.ENOENT, "/dev/i2c-1 не существует: I²C выключен (sudo raspi-config nonint do_i2c 0, "
                   "затем перезагрузка) или неверен `port` (hardware_docs/displays.md)"),
    (errno.EACCES, "нет прав на открытие /dev/i2c-1: добавьте пользователя в группу i2c (sudo "
                   "usermod -aG i2c $USER, затем войдите заново) или I²C выключен "
                   "(hardware_docs/displays.md)"),
    (errno.EINVAL, "см. hardware_docs/displays.md"),
])
def test_a_failed_panels_hint_in_russian(code: int, hint: str) -> None:
    config = DEVICE.panels[Side.LEFT]
    assert hardware_check.panel_hint(OSError(code, "x"), config, "ru") == hint


def test_the_panels_test_screen_speaks_the_devices_language() -> None:
    english = check_screen(Side.LEFT, "T12", "press each button")
    russian = check_screen(Side.LEFT, "T12", words.say("hw.screen.press", "ru"), "ru")
    assert ImageChops.difference(english, russian).getbbox() is not None
    assert words.say("hw.screen.big.left", "ru") == "ЛЕВАЯ"
    # the terminal names what the panel shows
    assert "ЛЕВАЯ или ПРАВАЯ" in words.say("hw.panels.look", "ru")


def test_the_pins_errors_in_russian_and_their_english_unchanged() -> None:
    with pytest.raises(HardwareError) as caught:
        make_pin_factory("bogus")
    assert str(caught.value) == "unknown pin factory 'bogus'; use one of: lgpio, rpigpio, mock"
    assert said(caught.value.args[0], "ru") == ("неизвестный способ доступа к выводам 'bogus'; "
                                                "возможны: lgpio, rpigpio, mock")
    from gpiozero.pins.mock import MockFactory
    with pytest.raises(HardwareError) as caught:
        ButtonBoard({Button.LEFT: 5, Button.RIGHT: 5, Button.CUBE: 6}, MockFactory(),
                    lambda edge: None)
    assert said(caught.value.args[0], "ru") == ("кнопки right и left обе на GPIO 5; дайте каждой "
                                                "кнопке свой вывод ([pins])")


@pytest.mark.parametrize("name", sorted(PIN_FACTORIES))
def test_the_pin_factories_hints_are_the_configs(name: str) -> None:
    backend = PIN_FACTORIES[name]
    assert words.say(f"hw.pins.hint.{name}", "en") == backend.hint
    if backend.running_hint:
        assert words.say(f"hw.pins.running_hint.{name}", "en") == backend.running_hint
    else:
        assert f"hw.pins.running_hint.{name}" not in words.WORDS


def mock_device_toml(tmp_path: Path, language: str) -> Path:
    text = (Path(__file__).resolve().parents[2] / "config" / "device.toml").read_text("utf-8")
    path = tmp_path / "device.toml"
    path.write_text(text.replace('pin_factory = "lgpio"', 'pin_factory = "mock"')
                    + f'\n[display]\nlanguage = "{language}"\n', "utf-8")
    return path


def test_the_command_speaks_the_device_configs_language(tmp_path: Path, capsys) -> None:
    state = tmp_path / "state"
    state.mkdir()
    device = mock_device_toml(tmp_path, "ru")
    assert main(["check-hardware", "--device", str(device), "--seconds", "0",
                 "--state-dir", str(state)]) == 1
    out = capsys.readouterr().out
    assert out.startswith("Проверка оборудования gammonclock: стол ")
    assert "Итог:\n  карта памяти: " in out
    no_english(out, table="vm")
    # --language overrides the config's, both ways
    assert main(["check-hardware", "--device", str(device), "--seconds", "0", "--no-card",
                 "--language", "en"]) == 1
    assert capsys.readouterr().out.startswith("gammonclock hardware check: table ")
    english = mock_device_toml(tmp_path, "en")
    assert main(["check-hardware", "--device", str(english), "--seconds", "0", "--no-card",
                 "--language", "ru"]) == 1
    no_english(capsys.readouterr().out, table="vm")


def test_a_russian_device_configs_problem_is_said_in_russian(tmp_path: Path, capsys) -> None:
    device = mock_device_toml(tmp_path, "ru")
    device.write_text(device.read_text("utf-8").replace("address = 0x3C", "address = 300"),
                      "utf-8")
    assert main(["check-hardware", "--device", str(device), "--seconds", "0"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"gammonclock: {device}: ")
    assert re.search("[а-я]", err), err

"""The panels' error screens in the table's language (issue 25, SPEC §15): a journal the clock
cannot read or a bad device key at start ("JOURNAL ERROR"), and a match file it refuses ("MATCH
REFUSED", its problems as the config checker words them) are Russian on a Russian device, the
file names, keys and values as written. Rendered on luma's dummy panels, compared with reference
images that were looked at (tests/hardware/reference/screens/ru-journal-error.png …)."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from PIL import Image

from device_helpers import MOCK_TEXT
from gammonclock.config.loading import ConfigError, parse_config, parse_device_config
from gammonclock.config.problems import message_of
from gammonclock.device.build import StartRefused, build_device, dummy_panels
from gammonclock.hardware.screens import config_error_view, render
from gammonclock.hardware.texts import Text
from gammonclock.runtime.lifecycle import load_next_match
from gammonclock.sides import Side
from journal_helpers import unknown_input_journal
from lifecycle_helpers import DEVICE_TEXT, MATCH_TEXT, uptime_clock
from screen_helpers import check_reference

RU = '\n[display]\nlanguage = "ru"\n'
MOCK_RU = MOCK_TEXT + RU
# Latin words a Russian screen may show: the folder and file it names
KEPT = {"gammonclock", "journals", "device", "key"}


def latin(lines: list[str]) -> set[str]:
    return set(re.findall(r"[A-Za-z]+", " ".join(lines))) - KEPT


def shown(panels, side: Side = Side.LEFT) -> Image.Image:
    image = panels[side].device.image
    assert image is not None
    return image.convert("1")


def look(image: Image.Image, name: str, tmp_path: Path) -> None:
    """The screen, four times its size, where a person looks at it (GAMMONCLOCK_SHOTS)."""
    out = Path(os.environ.get("GAMMONCLOCK_SHOTS", tmp_path)) / f"{name}.png"
    image.convert("L").resize((image.width * 4, image.height * 4), Image.NEAREST).save(out)


@pytest.mark.parametrize(("text", "lang", "reference"), [
    (MOCK_RU, "ru", "ru-journal-error"), (MOCK_TEXT, "en", "journal-error")])
def test_a_journal_it_cannot_read_is_said_in_the_devices_language(
        tmp_path: Path, text: str, lang: str, reference: str) -> None:
    state = tmp_path / "state"
    config = parse_config(text, "mock.toml")
    unknown_input_journal(state, config)
    panels = dummy_panels()
    with pytest.raises(StartRefused) as caught:
        build_device(config, state, panels=panels)
    caught.value.release()
    assert isinstance(caught.value.panel, Text) and caught.value.panel.key == "start.journal"
    view = config_error_view(caught.value.panel, "JOURNAL ERROR", lang)
    lines = [line for line, _ in view.lines]
    if lang == "ru":
        assert view.title == "ОШИБКА ЖУРНАЛА"
        assert " ".join(lines) == ("журнал матча не читается (причина в логе): уберите его из "
                                   "journals/ и перезапустите")
        assert not latin(lines), lines
    else:
        assert " ".join(lines) == ("a journal cannot be read (see the log): move it out of "
                                   "journals/, then restart")
    for side in Side:
        assert shown(panels, side).tobytes() == render(view).convert("1").tobytes()
    check_reference(reference, shown(panels))
    look(shown(panels), reference, tmp_path)


def test_a_bad_device_key_is_said_in_russian(tmp_path: Path) -> None:
    state = tmp_path / "state"
    state.mkdir()
    (state / "device.key").write_bytes(b"")
    panels = dummy_panels()
    with pytest.raises(StartRefused) as caught:
        build_device(parse_config(MOCK_RU, "mock.toml"), state, panels=panels)
    caught.value.release()
    assert "move device.key away" in caught.value.panel        # the log's English is kept
    view = config_error_view(caught.value.panel, "JOURNAL ERROR", "ru")
    lines = [line for line, _ in view.lines]
    assert " ".join(lines) == ("ключ устройства испорчен (причина в логе): уберите device.key "
                               "и перезапустите")
    assert shown(panels).tobytes() == render(view).convert("1").tobytes()
    check_reference("ru-key-error", shown(panels))
    look(shown(panels), "ru-key-error", tmp_path)


BAD_MATCH = MATCH_TEXT.replace("length = 5", 'length = 5\nstart_score = [7, 0]') + \
    '\n[time]\ndelay = "12x"\n'


def test_a_match_file_refused_at_boot_is_said_in_russian(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)                     # a short file name, as on the Pi's screen
    Path("m.toml").write_text(BAD_MATCH, encoding="utf-8")
    panels = dummy_panels()
    device = build_device(parse_device_config(DEVICE_TEXT + RU, str(tmp_path / "device.toml")),
                          tmp_path / "state", match_path="m.toml", panels=panels,
                          clock_ns=uptime_clock)
    try:
        assert device.problem is not None
        view = config_error_view(message_of(device.problem), "MATCH REFUSED", "ru")
        lines = [line for line, _ in view.lines]
        assert view.title == "МАТЧ НЕ ПРИНЯТ"
        assert lines[-1] == "(и ещё ошибок: 1)"
        said = " ".join(lines[:-1])
        assert said.startswith("m.toml: match.start_score: [7, 0]: каждый счёт должен"), \
            said
        assert not latin(lines[:-1]) - {"m", "toml", "match", "start", "score"}, lines
        assert shown(panels).tobytes() == render(view).convert("1").tobytes()
        check_reference("ru-match-refused", shown(panels))
        look(shown(panels), "ru-match-refused", tmp_path)
    finally:
        device.close()


def test_a_refused_next_match_is_answered_and_shown_in_russian(tmp_path: Path) -> None:
    device = build_device(parse_device_config(DEVICE_TEXT + RU, str(tmp_path / "device.toml")),
                          tmp_path / "state", clock_ns=uptime_clock)
    try:
        outcome = load_next_match(device.service, device.table, BAD_MATCH, "next.toml")
        assert not outcome.ok and outcome.lang == "ru"
        assert outcome.error is not None
        assert outcome.error.splitlines() == [
            "next.toml: match.start_score: [7, 0]: каждый счёт должен быть не меньше 0 и меньше "
            "длины матча (5)",
            'next.toml: time.delay: "12x" — не длительность; пишите, например, "12s", "2m30s", '
            '"2.5m", "1500ms"']
        with pytest.raises(ConfigError) as english:
            parse_config(BAD_MATCH, "next.toml")
        assert "is not a duration" in str(english.value)     # the English is kept as it was
    finally:
        device.close()


def test_a_match_file_too_large_is_refused_in_russian(tmp_path: Path) -> None:
    device = build_device(parse_device_config(DEVICE_TEXT + RU, str(tmp_path / "device.toml")),
                          tmp_path / "state", clock_ns=uptime_clock)
    try:
        outcome = load_next_match(device.service, device.table, "#" * 70_000, "big.toml")
        assert outcome.error == "big.toml: больше 64 КиБ: это не файл матча"
    finally:
        device.close()


def test_a_failed_loop_is_said_in_russian_on_both_panels(tmp_path: Path) -> None:
    """A bug in a step: the loop stops, and both panels say so in their language (the error as
    the program words it)."""
    import threading
    import time as real_time

    from gammonclock.core.engine import ButtonEdge
    from gammonclock.runtime.service import LoopFailed
    from gammonclock.sides import Button

    panels = dummy_panels()
    device = build_device(parse_config(MOCK_RU, "mock.toml"), tmp_path / "state",
                          panels=panels)
    assert device.session is not None

    def buggy_feed(event: object) -> object:
        raise KeyError("a bug")
    device.session.feed = buggy_feed  # type: ignore[method-assign]
    failed: list[BaseException] = []

    def run() -> None:
        try:
            device.service.run()
        except LoopFailed as exc:
            failed.append(exc)
    loop = threading.Thread(target=run, daemon=True)
    loop.start()
    try:
        device.service.submit(ButtonEdge(real_time.monotonic_ns(), Button.LEFT, True))
        loop.join(30)
        assert failed and not loop.is_alive()
        view = config_error_view(Text("fault.restarting", error="KeyError: 'a bug'"),
                                 "CLOCK FAILED", "ru")
        assert view.title == "СБОЙ ЧАСОВ"
        assert " ".join(line for line, _ in view.lines) == ("сбой часов, перезапуск: KeyError: "
                                                            "'a bug'")
        for side in Side:
            assert shown(panels, side).tobytes() == render(view).convert("1").tobytes()
        check_reference("ru-clock-failed", shown(panels))
        look(shown(panels), "ru-clock-failed", tmp_path)
    finally:
        device.close()

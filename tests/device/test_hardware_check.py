"""`check_hardware`: presses printed with their GPIO, panels that fail reported with a hint, the
test screen on the glass, and the exit status a script can rely on.

The buttons are gpiozero's MockFactory pins, driven while the check prints its prompt (an `out`
that acts on it), so every run is single-threaded and deterministic; the panels are luma's
`dummy` devices, or the real luma driver over a fake I²C bus (`smbus2.SMBus` replaced).
"""

from __future__ import annotations

import errno
import io
import os
import re
import threading
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import smbus2
from gpiozero.pins.mock import MockFactory, MockPin
from hypothesis import given, settings
from hypothesis import strategies as st
from PIL import Image, ImageChops

from gammonclock.config.loading import DEFAULT_DEVICE, DeviceConfig
from gammonclock.device import check as hardware_check
from gammonclock.device.build import dummy_panels
from gammonclock.device.check import check_hardware, check_screen, still_instant
from gammonclock.hardware.buttons import ButtonBoard
from gammonclock.hardware.errors import HardwareError
from gammonclock.hardware.panels import SHIFT_PERIOD_NS, Panel, shift_at
from gammonclock.hardware.screens import HEIGHT, WIDTH
from gammonclock.sides import Button, Pair, Side
from pin_helpers import FakeClock

S = 1_000_000_000
MS = 1_000_000
PROMPT = "Press and release each button"
DEVICE = replace(DEFAULT_DEVICE, table_id="T12")     # buttons 17, 27, 22; buzzer 18, off


# (seconds after the prompt, button, pressed)
Plan = list[tuple[float, Button, bool]]
ALL_PRESSED: Plan = [(0.0, Button.LEFT, True), (0.42, Button.LEFT, False),
                     (1.0, Button.CUBE, True), (1.2, Button.RIGHT, True),
                     (2.7, Button.RIGHT, False), (3.0, Button.CUBE, False)]


class Table(io.StringIO):
    """The terminal: when the check asks for presses, the director makes `plan`, then `then`."""

    def __init__(self, factory: MockFactory, clock: FakeClock, plan: Plan,
                 then: Callable[[], None]) -> None:
        super().__init__()
        self.factory, self.clock, self.plan, self.then = factory, clock, plan, then
        self.done = False

    def write(self, text: str) -> int:
        written = super().write(text)
        if PROMPT in text and not self.done:
            self.done = True
            start = self.clock.ns
            for offset, button, pressed in self.plan:
                self.clock.ns = start + round(offset * S)
                pin = self.factory.pin(DEVICE.button_pins[button])
                pin.drive_low() if pressed else pin.drive_high()   # buttons wire to ground
            self.then()
        return written


def run(factory: MockFactory, clock: FakeClock, plan: Plan, device: DeviceConfig = DEVICE,
        panels: Pair[Panel] | None = None, **card: Any) -> tuple[int, list[str]]:
    """The check with `plan` played at its prompt, then stopped: (exit status, printed lines).
    `card`: check_hardware's state_dir, card_appends, card_gap_s."""
    stop = threading.Event()
    out = Table(factory, clock, plan, stop.set)
    status = check_hardware(device, out=out, seconds=None, stop=stop, panels=panels,
                            factory=factory, clock_ns=clock, **card)
    return status, out.getvalue().splitlines()


def after_prompt(lines: list[str]) -> list[str]:
    start = next(i for i, line in enumerate(lines) if PROMPT in line)
    end = lines.index("Summary:")
    return lines[start + 1:end]


def dummy_device() -> Any:
    from luma.core.device import dummy  # type: ignore[import-untyped]
    return dummy(width=WIDTH, height=HEIGHT, mode="1")


def dummies() -> tuple[Pair[Any], Pair[Panel]]:
    """Two in-memory panels and their devices (whose `image` is the last picture drawn)."""
    devices = Pair(dummy_device(), dummy_device())
    return devices, Pair(*(Panel.for_device(devices[side], f"{side} panel") for side in Side))


def same(a: Image.Image, b: Image.Image) -> bool:
    return ImageChops.difference(a.convert("1"), b.convert("1")).getbbox() is None


# --- presses -----------------------------------------------------------------------------------

def test_presses_and_releases_are_printed_in_order_with_their_gpio(factory, clock):
    status, lines = run(factory, clock, ALL_PRESSED, panels=dummy_panels())
    assert after_prompt(lines) == [
        "  LEFT button (GPIO 17): down",
        "  LEFT button (GPIO 17): up after 0.42 s",
        "  CUBE button (GPIO 22): down",
        "  RIGHT button (GPIO 27): down",
        "  RIGHT button (GPIO 27): up after 1.50 s",
        "  CUBE button (GPIO 22): up after 2.00 s",
    ]
    assert status == 0
    assert lines[-1] == ("All good: both panels answered and every button was pressed "
                         "(exit status 0).")


def test_bounces_are_counted_as_presses_and_the_count_is_summarised(factory, clock):
    plan: Plan = [(0.0, Button.RIGHT, True), (0.001, Button.RIGHT, False),
                  (0.002, Button.RIGHT, True), (0.2, Button.RIGHT, False)]
    _, lines = run(factory, clock, plan, panels=dummy_panels())
    assert "  RIGHT button (GPIO 27): 2 presses" in lines
    assert "  RIGHT button (GPIO 27): up after 0.20 s" in lines   # from the last press


def test_the_panels_show_the_last_button_and_keep_their_side(factory, clock):
    devices, panels = dummies()
    run(factory, clock, ALL_PRESSED[:3], panels=panels)        # last: CUBE down
    for side in Side:
        expected = check_screen(side, "T12", "CUBE button down")
        assert same(devices[side].image, expected)


# --- exit status -------------------------------------------------------------------------------

@pytest.mark.parametrize(("plan", "missing", "status"), [
    (ALL_PRESSED, [], 0),
    ([(0.0, Button.LEFT, True), (0.1, Button.RIGHT, True)], [(Button.CUBE, 22, 15)], 1),
    ([], [(Button.LEFT, 17, 11), (Button.RIGHT, 27, 13), (Button.CUBE, 22, 15)], 1),
])
def test_every_button_must_be_pressed_for_exit_status_0(factory, clock, plan, missing, status):
    got, lines = run(factory, clock, plan, panels=dummy_panels())
    assert got == status
    for button, gpio, header in missing:
        assert (f"  {button.value.upper()} button: never pressed — check its wiring: "
                f"GPIO {gpio} (header pin {header}) to ground (hardware_docs/wiring.md)") in lines
    if missing:
        assert lines[-1].startswith("Not all good: ")
        assert lines[-1].endswith("(exit status 1).")


def test_seconds_end_the_check_by_itself(factory):
    out = io.StringIO()
    assert check_hardware(DEVICE, out=out, seconds=0, panels=dummy_panels(),
                          factory=factory) == 1
    assert "Summary:" in out.getvalue()


class CtrlC(threading.Event):
    """A stop that the director's Ctrl-C interrupts while the check waits."""

    def is_set(self) -> bool:
        raise KeyboardInterrupt


def test_ctrl_c_ends_with_the_summary_and_frees_the_pins(factory, clock):
    out = Table(factory, clock, ALL_PRESSED, lambda: None)
    status = check_hardware(DEVICE, out=out, seconds=None, stop=CtrlC(), panels=dummy_panels(),
                            factory=factory, clock_ns=clock)
    lines = out.getvalue().splitlines()
    assert "  (Ctrl-C)" in lines
    assert "  LEFT button (GPIO 17): up after 0.42 s" in lines
    assert status == 0
    ButtonBoard(DEVICE.button_pins, factory, lambda edge: None).close()   # the pins are free


# --- panels ------------------------------------------------------------------------------------

class FakeBus:
    """smbus2.SMBus on a bus where `errors[port]` fails the opening and nothing answers at the
    addresses in `silent` (an unacknowledged write: EREMOTEIO)."""

    errors: dict[int, OSError] = {}
    silent: set[int] = set()

    def __init__(self, port: int) -> None:
        if port in self.errors:
            raise self.errors[port]

    def write_i2c_block_data(self, address: int, register: int, data: list[int]) -> None:
        if address in self.silent:
            raise OSError(errno.EREMOTEIO, "Remote I/O error")

    def i2c_rdwr(self, *messages: Any) -> None:
        pass

    def close(self) -> None:
        pass


ON_BUS_3 = replace(DEVICE, panels=replace(DEVICE.panels, right=replace(DEVICE.panels.right,
                                                                          port=3)))


@pytest.mark.parametrize(("device", "errors", "silent", "said"), [
    (DEVICE, {}, {0x3D},
     ["right panel (ssd1306 on bus 1 at 0x3d): FAILED: DeviceNotFoundError: I2C device not "
      "found on address: 0x3D ([Errno 121] Remote I/O error)",
      "nothing answers at 0x3d on bus 1", "`i2cdetect -y 1`", "hardware_docs/displays.md"]),
    (ON_BUS_3, {3: PermissionError(errno.EACCES, "Permission denied", "/dev/i2c-3")}, set(),
     ["right panel (ssd1306 on bus 3 at 0x3d): FAILED: DevicePermissionError",
      "[Errno 13]", "no permission to open /dev/i2c-3: add the user to the i2c group"]),
    (ON_BUS_3, {3: FileNotFoundError(errno.ENOENT, "No such file or directory", "/dev/i2c-3")},
     set(),
     ["right panel (ssd1306 on bus 3 at 0x3d): FAILED: DeviceNotFoundError", "[Errno 2]",
      "/dev/i2c-3 does not exist: I²C is off"]),
], ids=["no-answer", "permission", "no-bus"])
def test_a_panel_that_fails_is_reported_with_a_hint(factory, clock, monkeypatch, device,
                                                    errors, silent, said):
    monkeypatch.setattr(FakeBus, "errors", errors)
    monkeypatch.setattr(FakeBus, "silent", silent)
    monkeypatch.setattr(smbus2, "SMBus", FakeBus)
    status, lines = run(factory, clock, ALL_PRESSED, device=device)
    text = "\n".join(lines)
    assert "  left panel (ssd1306 on bus 1 at 0x3c): OK" in lines
    for words in said:
        assert words in text
    assert "  right panel: FAILED" in lines                       # the summary
    assert status == 1                                            # every button was pressed
    assert lines[-1] == "Not all good: the right panel (exit status 1)."


def test_a_panel_that_comes_back_is_reported_and_counts(factory, clock):
    calls = []

    def flaky() -> Any:
        calls.append(1)
        if len(calls) == 1:
            raise OSError(errno.EREMOTEIO, "Remote I/O error")
        return dummy_device()

    panels = Pair(dummy_panels().left, Panel(flaky, "right panel"))
    status, lines = run(factory, clock, ALL_PRESSED, panels=panels)
    assert "  right panel (not from the config): FAILED: nothing drawn (the log above says why)" \
        in lines
    assert "  right panel: answers now" in lines       # at the first press after the back-off
    assert status == 0


# --- the pins ----------------------------------------------------------------------------------

def test_a_pin_factory_that_cannot_be_created_is_said_and_exits_1(monkeypatch):
    def refuse(name: str) -> None:
        raise HardwareError(f"pin factory {name!r} cannot be created: no lgpio")

    monkeypatch.setattr(hardware_check, "make_pin_factory", refuse)
    out = io.StringIO()
    assert check_hardware(DEVICE, out=out, seconds=0, panels=dummy_panels()) == 1
    assert "  pin factory 'lgpio' cannot be created: no lgpio" in out.getvalue().splitlines()
    assert "Summary:" not in out.getvalue()


def test_a_button_pin_in_use_names_it_and_the_service(factory):
    taken = ButtonBoard({Button.LEFT: 17}, factory, lambda edge: None)
    try:
        out = io.StringIO()
        assert check_hardware(DEVICE, out=out, seconds=0, panels=dummy_panels(),
                              factory=factory) == 1
    finally:
        taken.close()
    assert "GPIO 17" in out.getvalue()
    assert "sudo systemctl stop gammonclock" in out.getvalue()


class ShortedToGround(MockPin):
    """A pin wired straight to ground: its pull-up cannot raise it."""

    def drive_high(self) -> None:
        self.drive_low()


def test_a_button_low_at_the_start_is_pointed_out(factory, clock):
    factory.pin("GPIO22", pin_class=ShortedToGround)
    _, lines = run(factory, clock, [(0.0, Button.CUBE, False)], panels=dummy_panels())
    assert ("  CUBE button (GPIO 22): reads pressed already: held, or its pin is shorted to "
            "ground") in lines


@pytest.mark.parametrize(("enabled", "beeps"), [(True, 1), (False, 0)])
def test_the_buzzer_beeps_once_per_press_when_enabled(factory, clock, enabled, beeps):
    device = replace(DEVICE, buzzer_enabled=enabled)
    _, lines = run(factory, clock, [(0.0, Button.LEFT, True), (0.1, Button.LEFT, False)],
                   device=device, panels=dummy_panels())
    states = [s.state for s in factory.pin(DEVICE.buzzer_pin).states]
    assert sum(1 for before, now in zip(states, states[1:]) if now and not before) == beeps
    said = "  buzzer (GPIO 18): a beep per press" if enabled else "  buzzer: off"
    assert any(line.startswith(said) for line in lines)


# --- the test screen ----------------------------------------------------------------------------

def test_the_test_screen_is_drawn_with_its_side_and_a_frame_on_every_edge(factory, clock):
    devices, panels = dummies()
    run(factory, clock, [], panels=panels)
    images = [device.image.convert("1") for device in devices]
    left, right = images
    assert not same(left, right)                                       # LEFT is not RIGHT
    for image in images:
        assert image.getbbox() is not None                            # not blank
        edges = ([(x, 0) for x in range(WIDTH)] + [(x, HEIGHT - 1) for x in range(WIDTH)]
                 + [(0, y) for y in range(HEIGHT)] + [(WIDTH - 1, y) for y in range(HEIGHT)])
        assert all(image.getpixel(p) for p in edges)                  # the frame, unshifted
    for side, image in zip(Side, images, strict=True):
        assert same(image, check_screen(side, "T12", "press each button"))


def test_the_frame_stays_on_the_edge_however_long_the_check_runs(factory, clock):
    """The burn-in shift would push the frame off one edge after three minutes."""
    devices, panels = dummies()
    plan: Plan = [(200.0, Button.LEFT, True)]          # past the first burn-in move
    run(factory, clock, plan, panels=panels)
    assert same(devices.left.image, check_screen(Side.LEFT, "T12", "LEFT button down"))


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 10**15), st.integers(1, 10**12))
def test_still_instants_never_shift_and_always_grow(elapsed, later):
    assert shift_at(still_instant(elapsed)) == (0, 0)
    assert still_instant(elapsed + later) > still_instant(elapsed)
    assert still_instant(elapsed) >= elapsed           # the panels' back-off is never slowed


def test_still_instant_is_elapsed_time_within_the_first_period():
    assert still_instant(SHIFT_PERIOD_NS - 1) == SHIFT_PERIOD_NS - 1


# --- the state card ----------------------------------------------------------------------------

FIGURES = re.compile(r"fdatasync p50 \d+\.\d ms, p99 (\d+\.\d) ms, max \d+\.\d ms")


def slow_fsync(monkeypatch: pytest.MonkeyPatch, seconds: float) -> list[int]:
    """os.fsync and os.fdatasync each take `seconds` more (a worn card); the fds synced."""
    synced: list[int] = []
    for name in ("fsync", "fdatasync"):
        real = getattr(os, name)

        def slow(fd: int, real: Callable[[int], None] = real) -> None:
            time.sleep(seconds)
            real(fd)
            synced.append(fd)
        monkeypatch.setattr(os, name, slow)
    return synced


def test_a_card_with_slow_fsyncs_is_to_be_replaced_and_fails_the_check(factory, clock, tmp_path,
                                                                       monkeypatch):
    synced = slow_fsync(monkeypatch, 0.06)
    status, lines = run(factory, clock, ALL_PRESSED, panels=dummy_panels(),
                        state_dir=tmp_path, card_appends=5, card_gap_s=0.0)
    assert len(synced) == 1 + 5        # the zeros filled ahead, then each append
    text = "\n".join(lines)
    assert lines[1] == f"State card (the state folder {tmp_path}):"
    measured = FIGURES.search(text)
    assert measured is not None and float(measured.group(1)) >= 60.0, text
    assert "REPLACE THE CARD (p99 over 50 ms)" in text
    assert any(line.startswith("  state card: REPLACE (fdatasync p50") for line in lines), text
    assert status == 1                                 # panels and buttons were all good
    assert lines[-1] == "Not all good: the state card (replace it) (exit status 1)."
    assert list(tmp_path.iterdir()) == []              # the test file is gone


def test_the_real_disk_gives_a_figure_and_a_verdict(factory, clock, tmp_path):
    status, lines = run(factory, clock, ALL_PRESSED, panels=dummy_panels(),
                        state_dir=tmp_path, card_appends=10, card_gap_s=0.0)
    text = "\n".join(lines)
    assert (f"  10 appends + fdatasync into zeros filled ahead (as the journal) in {tmp_path}, "
            f"0 ms apart: fdatasync p50") in text, text
    measured = FIGURES.search(text)
    assert measured is not None, text
    verdict = hardware_check.card_verdict(round(float(measured.group(1)) * 1e6))
    assert any(line.startswith(f"  state card: {verdict.upper()} (fdatasync p50") for line in lines)
    assert status == (1 if verdict == "replace" else 0)
    assert list(tmp_path.iterdir()) == []


def test_measure_card_fsyncs_each_append_and_removes_its_file(tmp_path):
    check = hardware_check.measure_card(tmp_path, appends=8, gap_s=0.0)
    assert len(check.syncs_ns) == 8 and all(ns > 0 for ns in check.syncs_ns)
    assert 0 < check.p50_ns <= check.p99_ns <= check.max_ns
    assert check.verdict in ("fit", "slow", "replace")
    assert list(tmp_path.iterdir()) == []


def test_measure_card_spaces_its_appends_like_presses(tmp_path, monkeypatch):
    ticks = iter(range(0, 10**12, 1_000_000))          # every clock reading: 1 ms later
    pauses: list[float] = []
    check = hardware_check.measure_card(tmp_path, appends=4, gap_s=0.02,
                                        clock_ns=lambda: next(ticks), pause=pauses.append)
    assert pauses == [0.02, 0.02, 0.02]
    assert check.syncs_ns == (1_000_000,) * 4


@pytest.mark.parametrize(("p99_ms", "verdict"), [(0.3, "fit"), (20.0, "fit"), (20.1, "slow"),
                                                 (50.0, "slow"), (50.1, "replace"),
                                                 (400.0, "replace")])
def test_the_verdict_thresholds(p99_ms, verdict):
    assert hardware_check.card_verdict(round(p99_ms * 1e6)) == verdict
    assert (hardware_check.CARD_FIT_P99_MS, hardware_check.CARD_SLOW_P99_MS) == (20.0, 50.0)


def test_a_state_folder_not_yet_there_is_measured_on_its_file_system(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    state = tmp_path / "var" / "lib" / "gammonclock"
    folder, where = hardware_check.card_folder(state, others=[tmp_path / "absent", home])
    assert folder == home
    assert where == f"{home}, on the same file system as {state}"
    folder, where = hardware_check.card_folder(state, others=[])
    assert folder is None
    assert where.startswith(f"{state} does not exist") and "sudo" in where
    state.mkdir(parents=True)
    assert hardware_check.card_folder(state, others=[home]) == (state, str(state))


def mock_device_toml(tmp_path: Path) -> Path:
    text = (Path(__file__).resolve().parents[2] / "config" / "device.toml").read_text("utf-8")
    path = tmp_path / "device.toml"
    path.write_text(text.replace('pin_factory = "lgpio"', 'pin_factory = "mock"'), "utf-8")
    return path


def test_the_command_measures_the_state_folders_card_unless_told_not_to(tmp_path, capsys):
    from gammonclock.cli.main import main
    state = tmp_path / "state"
    state.mkdir()
    device = mock_device_toml(tmp_path)
    main(["check-hardware", "--device", str(device), "--seconds", "0", "--state-dir", str(state)])
    out = capsys.readouterr().out
    assert f"State card (the state folder {state}):" in out
    assert (f"  100 appends + fdatasync into zeros filled ahead (as the journal) in {state}, "
            f"20 ms apart: fdatasync p50") in out
    assert FIGURES.search(out) is not None
    main(["check-hardware", "--device", str(device), "--seconds", "0", "--no-card"])
    assert "State card" not in capsys.readouterr().out


@pytest.mark.parametrize(("stalls", "verdict"), [(0, "fit"), (1, "fit"), (2, "replace")])
def test_one_stall_in_a_hundred_fsyncs_does_not_condemn_a_card(tmp_path, monkeypatch, stalls,
                                                              verdict):
    """Of the default 100 appends, p99 is the second slowest: a single 150 ms stall of a card
    whose fsyncs take 2 ms leaves it fit; two make it one to replace."""
    now = [0]
    calls = [0]

    def fsync(fd: int) -> None:
        calls[0] += 1
        now[0] += (150 if calls[0] in (17, 60)[:stalls] else 2) * MS
    monkeypatch.setattr(os, "fdatasync", fsync)     # each append's, as the journal's
    check = hardware_check.measure_card(tmp_path, clock_ns=lambda: now[0], pause=lambda s: None)
    assert len(check.syncs_ns) == hardware_check.CARD_APPENDS == 100
    assert check.max_ns == (150 if stalls else 2) * MS
    assert check.verdict == verdict

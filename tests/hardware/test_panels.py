"""The luma shell of a panel (hardware/panels.py), on luma's `dummy` device: draw only what changed,
shift within the margin against burn-in, survive every device error, leave the picture at exit."""

from __future__ import annotations

import logging

import luma.core.error
import pytest
from luma.core.device import dummy
from PIL import Image, ImageChops

from gammonclock.config.loading import PanelConfig
from gammonclock.core.engine import ButtonEdge
from gammonclock.hardware import panels
from gammonclock.hardware.drawing import shifted
from gammonclock.hardware.panels import (
    FIRST_RETRY_NS,
    MAX_RETRY_NS,
    SHIFT_PERIOD_NS,
    SHIFTS,
    Panel,
    next_shift_at,
    shift_at,
)
from gammonclock.hardware.screens import HEIGHT, MARGIN, WIDTH, panel_view, render
from gammonclock.sides import Button, Pair, Side
from play_helpers import play

S = 10**9
NAMES = Pair("Anna", "Boris")


def same(a: Image.Image, b: Image.Image) -> bool:
    return a.size == b.size and ImageChops.difference(a.convert("1"), b.convert("1")).getbbox() \
        is None


class Counting(dummy):
    """luma's dummy that counts the frames it is given."""

    def __init__(self, **kwargs: object) -> None:
        super().__init__(width=WIDTH, height=HEIGHT, mode="1", **kwargs)
        self.frames = 0

    def display(self, image: Image.Image) -> None:
        self.frames += 1
        super().display(image)


class Flaky(Counting):
    """A panel on a bad I²C cable: every other frame fails with an OSError."""

    def display(self, image: Image.Image) -> None:
        self.frames += 1
        if self.frames % 2 == 0:
            raise OSError(121, "Remote I/O error")
        dummy.display(self, image)


def running_view(t: int, facing: Side = Side.RIGHT) -> Image.Image:
    match = play("0 tap left\n0 end", names=NAMES).match
    return render(panel_view(match, facing, t))


# --- drawing only what changed ----------------------------------------------------------------

def test_only_a_changed_image_is_drawn():
    device = Counting()
    panel = Panel.for_device(device)
    first, second = running_view(13 * S), running_view(14 * S)   # 13:59 and 13:58
    assert not same(first, second)
    assert panel.show(first, 0) and device.frames == 1
    assert panel.show(first, 1) and device.frames == 1       # the same picture: nothing sent
    assert panel.show(first.copy(), 2) and device.frames == 1
    assert panel.show(second, 3) and device.frames == 2
    assert same(device.image, second)
    assert panel.frames_drawn == 2


def test_a_new_burn_in_position_is_drawn_although_the_picture_is_the_same():
    device = Counting()
    panel = Panel.for_device(device)
    image = running_view(13 * S)
    panel.show(image, SHIFT_PERIOD_NS - 1)
    panel.show(image, SHIFT_PERIOD_NS)
    assert device.frames == 2
    assert same(device.image, shifted(image, SHIFTS[1]))


def test_a_device_in_another_mode_gets_the_picture_converted():
    device = dummy(width=WIDTH, height=HEIGHT, mode="RGB")    # as luma.emulator devices are
    panel = Panel.for_device(device)
    image = running_view(13 * S)
    assert panel.show(image, 0)
    assert device.image.mode == "RGB" and same(device.image, image)


# --- burn-in shift -----------------------------------------------------------------------------

def test_the_shift_stays_within_the_margin():
    assert all(abs(dx) <= MARGIN and abs(dy) <= MARGIN for dx, dy in SHIFTS)
    # The worst case: every pixel inside the margin lit. No shift may push one off the glass.
    full = Image.new("1", (WIDTH, HEIGHT), 0)
    full.paste(255, (MARGIN, MARGIN, WIDTH - MARGIN, HEIGHT - MARGIN))
    lit = full.histogram()[255]
    for offset in SHIFTS:
        assert shifted(full, offset).histogram()[255] == lit, offset
    # And on a real screen, on the device, over a whole cycle of positions.
    device = Counting()
    panel = Panel.for_device(device)
    image = running_view(13 * S)
    for k in range(len(SHIFTS)):
        panel.show(image, k * SHIFT_PERIOD_NS)
        assert device.image.histogram()[255] == image.histogram()[255]
    assert device.frames == len(SHIFTS)


def test_the_shift_is_deterministic_moves_every_few_minutes_one_pixel_at_a_time():
    assert shift_at(0) == (0, 0)
    assert shift_at(SHIFT_PERIOD_NS - 1) == (0, 0)
    assert shift_at(SHIFT_PERIOD_NS) == SHIFTS[1] != (0, 0)
    assert shift_at(len(SHIFTS) * SHIFT_PERIOD_NS) == (0, 0)        # the walk starts over
    assert len(set(SHIFTS)) == len(SHIFTS)
    assert next_shift_at(0) == SHIFT_PERIOD_NS
    assert next_shift_at(SHIFT_PERIOD_NS - 1) == SHIFT_PERIOD_NS
    assert next_shift_at(SHIFT_PERIOD_NS) == 2 * SHIFT_PERIOD_NS
    assert shift_at(next_shift_at(5 * S)) != shift_at(5 * S)
    cycle = SHIFTS + SHIFTS[:1]
    for (ax, ay), (bx, by) in zip(cycle, cycle[1:], strict=False):
        assert max(abs(ax - bx), abs(ay - by)) == 1


# --- device errors -----------------------------------------------------------------------------

def test_a_flaky_panel_never_stops_the_match_and_recovers(caplog):
    """A device failing every other frame: the match is played on through every error, and the
    panel comes back and shows the current picture."""
    caplog.set_level(logging.WARNING, logger=panels.__name__)
    device = Flaky()
    panel = Panel.for_device(device, name="right panel")
    engine = play("0 tap left\n0.2 end", names=NAMES).engine
    results = []
    # 60 s of play at 4 frames a second; every 10 s the running player presses their clock.
    for step in range(1, 240):
        t = step * S // 4
        engine, _ = engine.advance(t)
        press = Button.of(engine.match.running_side) if step and step % 40 == 0 else None
        if press:
            engine, _ = engine.feed(ButtonEdge(t, press, True))
        results.append(panel.show(render(panel_view(engine.match, Side.RIGHT, t)), t))
        if press:
            engine, _ = engine.feed(ButtonEdge(t + S // 10, press, False))
    assert False in results and panel.failures > 0
    assert any("Remote I/O error" in r.getMessage() for r in caplog.records)
    # The match went on exactly as without a display: five turns switched.
    taps = "".join(f"{10 * k} tap {'right' if k % 2 else 'left'}\n" for k in range(1, 6))
    reference = play("0 tap left\n" + taps + "59.75 end", names=NAMES)
    assert engine.state_json() == reference.state
    # And the panel recovers: a later frame is on the glass.
    t = 120 * S
    final = render(panel_view(engine.match, Side.RIGHT, t))
    while not panel.show(final, t):
        t += S // 4
    assert same(device.image, shifted(final, shift_at(t)))


def test_after_an_error_the_panel_waits_then_starts_afresh_and_redraws():
    made: list[Flaky] = []

    def factory() -> Flaky:
        made.append(Flaky())
        return made[-1]

    panel = Panel(factory, "left panel", contrast=200)
    image, other = running_view(13 * S), running_view(14 * S)
    assert panel.show(image, 0)                      # frame 1 on device 1
    assert not panel.show(other, S)                  # frame 2 fails: the device is dropped
    assert panel.device is None and len(made) == 1
    assert not panel.show(other, S + FIRST_RETRY_NS - 1)      # backing off: nothing touched
    assert len(made) == 1
    assert panel.show(other, S + FIRST_RETRY_NS)     # a fresh device, the picture drawn
    assert len(made) == 2 and same(made[1].image, other)
    assert made[1].persist


def test_the_back_off_doubles_up_to_a_limit_and_resets_after_a_success():
    attempts: list[int] = []
    now = [0]

    def absent() -> object:
        attempts.append(now[0])
        raise luma.core.error.DeviceNotFoundError("I2C device not found on address: 0x3C")

    panel = Panel(absent, "left panel")
    image = running_view(13 * S)
    for step in range(2400):                         # 10 minutes at 4 frames a second
        now[0] = step * S // 4
        assert panel.show(image, now[0]) is False
    gaps = [b - a for a, b in zip(attempts, attempts[1:], strict=False)]
    assert gaps[0] == FIRST_RETRY_NS
    assert gaps[1] == 2 * FIRST_RETRY_NS and gaps[2] == 4 * FIRST_RETRY_NS
    assert max(gaps) == MAX_RETRY_NS and gaps[-1] == MAX_RETRY_NS
    # Once the panel answers, a later failure starts the back-off from the beginning again.
    device = Flaky()
    panel = Panel.for_device(device)
    panel.show(image, 0)
    panel.show(running_view(14 * S), 1)              # fails
    assert panel.show(image, 1 + FIRST_RETRY_NS)     # back
    panel.show(running_view(14 * S), 2 * S)          # fails again
    assert panel.show(image, 2 * S + FIRST_RETRY_NS)


@pytest.mark.parametrize("error", [
    OSError(5, "Input/output error"),
    luma.core.error.DeviceNotFoundError("gone"),
    AssertionError("image mode mismatch"),
    RuntimeError("anything"),
])
def test_every_device_error_is_caught(error):
    class Broken(Counting):
        def display(self, image: Image.Image) -> None:
            raise error

    panel = Panel.for_device(Broken())
    assert panel.show(running_view(13 * S), 0) is False
    assert panel.failures == 1


# --- persist and close ----------------------------------------------------------------------

def test_persist_is_set_and_close_leaves_the_picture():
    device = Counting()
    assert device.persist is False                   # luma's default blanks the panel at exit
    panel = Panel.for_device(device, contrast=128)
    image = running_view(13 * S)
    panel.show(image, 0)
    assert device.persist is True
    panel.close()
    assert panel.device is None
    assert same(device.image, image)                 # cleanup did not clear it
    assert device.frames == 1


def test_the_real_driver_path_with_a_stand_in_bus(monkeypatch):
    """`from_config` builds the configured luma driver on an I²C interface; here the interface is
    luma's `noop`, so the real ssd1306/sh1106 code runs without a bus."""
    from luma.core.interface import serial

    opened = []

    def fake_i2c(port: int, address: int) -> serial.noop:
        opened.append((port, address))
        return serial.noop()

    monkeypatch.setattr(serial, "i2c", fake_i2c)
    for driver in ("ssd1306", "sh1106", "ssd1309"):
        panel = Panel.from_config(PanelConfig(driver, 1, 0x3D, 2, 200), "right panel")
        assert panel.show(running_view(13 * S), 0)
        assert panel.flush()                 # drawn on the bus's writer thread
        assert type(panel.device).__name__ == driver
        assert panel.device.persist and panel.device.rotate == 2
    assert opened == [(1, 0x3D)] * 3


def test_a_panel_that_is_not_there_does_not_stop_anything():
    # No I²C bus 7 on the machine running the tests: luma raises, the panel reports False.
    panel = Panel.from_config(PanelConfig("ssd1306", 7, 0x3C, 0, 255), "left panel")
    panel.show(running_view(13 * S), 0)              # handed to the bus's writer thread
    assert panel.flush() is False
    assert panel.show(running_view(13 * S), 1) is False
    assert panel.failures == 1


def test_a_config_the_screens_cannot_use_is_refused():
    with pytest.raises(ValueError, match="rotate"):
        Panel.from_config(PanelConfig("ssd1306", 1, 0x3C, 1, 255), "left panel")
    with pytest.raises(ValueError, match="driver"):
        Panel.from_config(PanelConfig("st7735", 1, 0x3C, 0, 255), "left panel")


# --- the benchmark ---------------------------------------------------------------------------

def test_the_display_benchmark_runs(capsys):
    """benchmarks/bench_display.py must keep working (its figures are not asserted)."""
    from bench_helpers import load_benchmark

    bench = load_benchmark("bench_display")
    assert bench.main(["--frames", "20"]) == 0
    out = capsys.readouterr().out
    assert out.count("fps") == 6 and "panel facing left" in out and "panel facing right" in out

"""Partial updates (hardware/partial.py) on a stand-in bus that keeps the controller's memory
(hardware/i2c_emulator.py): what the glass holds after every update is exactly the full frame."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from luma.oled import device as oled
from PIL import Image, ImageChops

from gammonclock.hardware import partial
from gammonclock.hardware.drawing import shifted
from gammonclock.hardware.i2c_emulator import (
    EmulatedBus,
    EmulatedI2C,
    SH1106Memory,
    image_of,
    memory_for,
    transaction_clocks,
)
from gammonclock.hardware.panels import REWRITE_PERIOD_NS, SHIFT_PERIOD_NS, Panel, shift_at
from gammonclock.hardware.screens import HEIGHT, WIDTH, panel_view, render
from gammonclock.sides import Pair, Side
from play_helpers import play

S = 10**9
DRIVERS = ("ssd1306", "sh1106", "ssd1309")


def same(a: Image.Image, b: Image.Image) -> bool:
    return ImageChops.difference(a.convert("1"), b.convert("1")).getbbox() is None


def on_bus(driver: str, rotate: int = 0, stock: bool = False) -> tuple[object, EmulatedI2C]:
    """A driver (ours, or luma's own with `stock`) on an emulated bus that only counts."""
    serial = EmulatedI2C(EmulatedBus(sleep=False), memory_for(driver))
    make = getattr(oled, driver) if stock else partial.DRIVERS[driver]
    return make(serial, width=WIDTH, height=HEIGHT, rotate=rotate), serial


def glass(serial: EmulatedI2C) -> Image.Image:
    return image_of(serial.memory.pages())


def running_view(t: int, facing: Side = Side.RIGHT) -> Image.Image:
    match = play("0 tap left\n0 end", names=Pair("Anna", "Boris")).match
    return render(panel_view(match, facing, t))


# --- what the glass holds ----------------------------------------------------------------------

@st.composite
def frame_sequences(draw: st.DrawFn) -> list[Image.Image]:
    """Frames as a clock makes them: a few changed spots, now and then a new screen."""
    rnd = random.Random(draw(st.integers(0, 2**32 - 1)))
    image = Image.new("1", (WIDTH, HEIGHT), 0)
    frames = []
    for _ in range(draw(st.integers(1, 12))):
        image = image.copy()
        pixels = image.load()
        kind = rnd.random()
        if kind < 0.15:                                  # a new screen
            image = Image.frombytes("1", (WIDTH, HEIGHT), rnd.randbytes(WIDTH * HEIGHT // 8))
        elif kind < 0.9:                                 # a few rectangles of digits change
            for _ in range(rnd.randint(1, 4)):
                x, y = rnd.randrange(WIDTH), rnd.randrange(HEIGHT)
                w, h = rnd.randint(1, 24), rnd.randint(1, 16)
                for dx in range(w):
                    for dy in range(h):
                        if x + dx < WIDTH and y + dy < HEIGHT:
                            pixels[x + dx, y + dy] = 255 * rnd.randrange(2)
        # else: the same frame again
        frames.append(image)
    return frames


@settings(max_examples=60, deadline=None)
@given(frames=frame_sequences(), driver=st.sampled_from(DRIVERS), rotate=st.sampled_from((0, 2)))
def test_after_every_update_the_controller_holds_the_full_frame(frames, driver, rotate):
    """The memory of a controller fed partial updates equals, after each frame, that of one fed
    luma's own full frames (and both show the frame, turned by `rotate`)."""
    ours, ours_bus = on_bus(driver, rotate)
    stock, stock_bus = on_bus(driver, rotate, stock=True)
    for frame in frames:
        ours.display(frame)
        stock.display(frame)
        assert ours_bus.memory.pages() == stock_bus.memory.pages()
        expected = frame if rotate == 0 else frame.rotate(180)
        assert same(glass(ours_bus), expected)
    assert ours_bus.data_bytes <= stock_bus.data_bytes


def test_page_bytes_match_luma_s_own_packing():
    rnd = random.Random(7)
    image = Image.frombytes("1", (WIDTH, HEIGHT), rnd.randbytes(WIDTH * HEIGHT // 8))
    stock, serial = on_bus("ssd1306", stock=True)
    stock.display(image)
    assert partial.page_bytes(image) == serial.memory.pages()


@pytest.mark.parametrize("driver", DRIVERS)
def test_a_running_clock_sends_only_the_changed_bytes(driver):
    device, serial = on_bus(driver)
    device.display(running_view(13 * S))
    assert device.full_frames == 1                       # the first frame after opening: whole
    before = serial.data_bytes
    device.display(running_view(14 * S))                 # 13:59 -> 13:58
    sent = serial.data_bytes - before
    assert device.partial_frames == 1 and 0 < sent < 128
    assert same(glass(serial), running_view(14 * S))
    before = serial.data_bytes
    device.display(running_view(14 * S))                 # nothing changed: nothing sent
    assert serial.data_bytes == before and device.partial_frames == 1


@pytest.mark.parametrize("driver", DRIVERS)
def test_full_frames_after_opening_after_invalidate_and_for_a_new_screen(driver):
    device, serial = on_bus(driver)
    assert device.full_frames == 0                       # luma's set-up clear is not counted
    clock = running_view(13 * S)
    device.display(clock)
    device.display(running_view(14 * S))
    device.invalidate()                                  # a burn-in move
    device.display(running_view(15 * S))
    assert (device.full_frames, device.partial_frames) == (2, 1)
    inverted = Image.eval(clock, lambda v: 255 - v).convert("1")   # a new screen: every byte
    device.display(inverted)
    assert device.full_frames == 3
    assert same(glass(serial), inverted)


def test_the_sh1106_is_addressed_from_its_column_offset():
    device, serial = on_bus("sh1106")
    assert isinstance(serial.memory, SH1106Memory)
    lit = Image.new("1", (WIDTH, HEIGHT), 1)
    device.display(lit)
    device.display(running_view(13 * S))
    ram = serial.memory.ram
    assert all(page[0] == page[1] == page[130] == page[131] == 0 for page in ram)
    assert same(glass(serial), running_view(13 * S))


def test_changed_runs_become_the_cheapest_windows():
    # Two runs far apart on one page stay apart; close ones are one run.
    assert partial.changed_runs(bytes(128), bytes(2) + b"\1" + bytes(120) + b"\1" + bytes(4),
                                12) == [(2, 2), (123, 123)]
    assert partial.changed_runs(bytes(10), b"\1" + bytes(5) + b"\1" + bytes(3), 12) == [(0, 6)]
    # Two pages with about the same columns changed: one window (one command), not two.
    runs = [[], [(10, 20)], [(10, 21)], [], [], [], [], []]
    assert partial.merged_windows(runs, 6) == [(1, 2, (10, 21))]
    # Far apart in pages or in columns: a window each.
    runs = [[(0, 3)], [], [], [], [], [], [], [(120, 127)]]
    assert partial.merged_windows(runs, 6) == [(0, 0, (0, 3)), (7, 7, (120, 127))]
    runs = [[(2, 7), (110, 125)], [(2, 7), (110, 125)], [], [], [], [], [], []]
    assert partial.merged_windows(runs, 6) == [(0, 1, (2, 7)), (0, 1, (110, 125))]


def test_a_transaction_costs_nine_clocks_a_byte_plus_its_overhead():
    bus = EmulatedBus(speed_hz=400_000, sleep=False)
    assert transaction_clocks(1024) == 9 * 1024 + 21
    bus.carry(0x3C, 1024)
    assert bus.busy_seconds() == pytest.approx((9 * 1024 + 21) / 400_000)
    assert bus.total_bytes() == 1026


# --- through a Panel ---------------------------------------------------------------------------

def panel_on_bus(driver: str = "ssd1306") -> tuple[Panel, EmulatedI2C]:
    serial = EmulatedI2C(EmulatedBus(sleep=False), memory_for(driver))
    return Panel(lambda: partial.DRIVERS[driver](serial, width=WIDTH, height=HEIGHT)), serial


def test_a_burn_in_move_sends_the_whole_frame():
    panel, serial = panel_on_bus()
    image = running_view(13 * S)
    panel.show(image, SHIFT_PERIOD_NS - 1)
    device = panel.device
    assert device.full_frames == 1
    panel.show(image, SHIFT_PERIOD_NS)
    assert device.full_frames == 2
    assert same(glass(serial), shifted(image, shift_at(SHIFT_PERIOD_NS)))


def test_a_glitch_on_the_glass_is_rewritten_within_the_rewrite_period():
    panel, serial = panel_on_bus("sh1106")
    image = running_view(13 * S)
    panel.show(image, 0)
    serial.memory.ram[3][40] ^= 0xFF                    # a byte the bus corrupted
    panel.show(image, REWRITE_PERIOD_NS - 1)
    assert not same(glass(serial), image)               # the same picture: nothing sent yet
    panel.show(image, REWRITE_PERIOD_NS)
    assert same(glass(serial), image)
    assert panel.device.full_frames == 1                # rewritten piece by piece, not as a frame


def test_the_frames_of_a_match_stay_exact_on_both_controllers():
    """Reference pictures of a running clock, second by second and into the tenths, through the
    partial drivers: the glass equals each picture."""
    for driver in ("ssd1306", "sh1106"):
        panel, serial = panel_on_bus(driver)
        for t in [*range(0, 40 * S, S), *range(700 * S, 702 * S, S // 10)]:
            image = running_view(t, Side.LEFT)
            panel.show(image, t)
            assert same(glass(serial), shifted(image, shift_at(t))), (driver, t)
        assert panel.device.partial_frames > 30

"""One-page windows in page addressing on the SSD1306/SSD1309 (hardware/partial.py): 3 command
bytes instead of 6, the mode switched at most once a frame, and the controller's memory (the
emulator's, which decodes both modes as the datasheet says) exactly the frame after each."""

from __future__ import annotations

import random

import pytest
from PIL import Image

from gammonclock.hardware import partial
from gammonclock.hardware.i2c_emulator import EmulatedBus, EmulatedI2C, SSD1306Memory
from gammonclock.hardware.screens import HEIGHT, WIDTH


class Recording(EmulatedI2C):
    """The emulated serial, keeping each command transaction's bytes."""

    def __init__(self) -> None:
        super().__init__(EmulatedBus(sleep=False), SSD1306Memory())
        self.sent: list[tuple[int, ...]] = []

    def command(self, *cmd: int) -> None:
        super().command(*cmd)
        self.sent.append(cmd)


def frame_with(pixels: list[tuple[int, int]]) -> Image.Image:
    image = Image.new("1", (WIDTH, HEIGHT), 0)
    for xy in pixels:
        image.putpixel(xy, 1)
    return image


@pytest.mark.parametrize("driver", ("ssd1306", "ssd1309"))
def test_a_one_page_change_costs_three_command_bytes_after_one_switch(driver):
    serial = Recording()
    device = partial.DRIVERS[driver](serial, width=WIDTH, height=HEIGHT)
    device.display(frame_with([]))
    serial.sent.clear()
    device.display(frame_with([(40, 20)]))             # page 2, column 40
    assert serial.sent == [(0x20, 0x02, 0xB2, 0x08, 0x12)]   # page mode, page 2, column 0x28
    serial.sent.clear()
    device.display(frame_with([(41, 20)]))             # columns 40-41, in page mode: 3 bytes
    assert serial.sent == [(0xB2, 0x08, 0x12)]
    serial.sent.clear()
    device.display(frame_with([(41, 20), (90, 30), (90, 33)]))   # pages 3 and 4: one window
    assert serial.sent == [(0x20, 0x00, 0x21, 90, 90, 0x22, 3, 4)]
    assert serial.memory.mode == 0


def test_the_mode_switches_once_a_frame_whatever_the_windows():
    serial = Recording()
    device = partial.DRIVERS["ssd1306"](serial, width=WIDTH, height=HEIGHT)
    device.display(frame_with([]))
    serial.sent.clear()
    # A one-page window at each end and a two-page one in the middle.
    device.display(frame_with([(0, 0), (60, 20), (60, 28), (127, 63)]))
    switches = [cmd for cmd in serial.sent if cmd[0] == 0x20]
    assert len(switches) == 1
    assert sum(len(cmd) for cmd in serial.sent) == 2 + 6 + 3 + 3


@pytest.mark.parametrize("seed", range(6))
def test_the_memory_is_the_frame_after_every_update_in_either_mode(seed):
    """Random frames of small and larger changes, now and then a full frame and the rewrite's
    pieces: the controller holds each frame, whichever mode it was left in."""
    rnd = random.Random(seed)
    serial = EmulatedI2C(EmulatedBus(sleep=False), SSD1306Memory())
    device = partial.DRIVERS["ssd1306"](serial, width=WIDTH, height=HEIGHT)
    image = Image.new("1", (WIDTH, HEIGHT), 0)
    for step in range(60):
        image = image.copy()
        for _ in range(rnd.randint(1, 3)):
            x, y = rnd.randrange(WIDTH - 8), rnd.randrange(HEIGHT - 12)
            for dx in range(rnd.randint(1, 8)):
                for dy in range(rnd.choice((1, 3, 12))):
                    image.putpixel((x + dx, y + dy), rnd.randrange(2))
        if step % 17 == 16:
            device.invalidate()
        device.display(image)
        if step % 23 == 22:
            device.stale_all()
            while device.rewrite_step():
                pass
        assert serial.memory.pages() == partial.page_bytes(image), step


def test_windows_are_merged_by_what_they_cost_in_their_mode():
    """Two staggered one-page changes on neighbouring pages: apart, 2 × (3 + 6) + 8 = 26 bytes;
    merged into a two-page window, 6 + 6 + 16 = 28. Counted as windows of 6 command bytes each
    (apart 32) they would be merged."""
    runs = [[], [(10, 13)], [(14, 17)], [], [], [], [], []]
    assert partial.merged_windows(runs, 6) == [(1, 2, (10, 17))]
    assert partial.merged_windows(runs, 6, 3) == [(1, 1, (10, 13)), (2, 2, (14, 17))]
    serial = Recording()
    device = partial.DRIVERS["ssd1306"](serial, width=WIDTH, height=HEIGHT)
    device.display(frame_with([]))
    serial.sent.clear()
    staggered = frame_with([*((x, 8) for x in range(10, 14)), *((x, 16) for x in range(14, 18))])
    device.display(staggered)
    assert serial.sent == [(0x20, 0x02, 0xB1, 0x0A, 0x10), (0xB2, 0x0E, 0x10)]
    assert serial.memory.pages() == partial.page_bytes(staggered)

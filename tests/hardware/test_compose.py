"""Frames composed from cached stroke masks (hardware/compose.py) are the frames `render` draws,
pixel for pixel, and reach the controllers exactly through one I2C_RDWR ioctl
(hardware/i2c_rdwr.py)."""

from __future__ import annotations

import ctypes
import random
from typing import Any

import pytest
import smbus2
from hypothesis import given, settings
from hypothesis import strategies as st
from PIL import Image

from bench_helpers import load_benchmark
from gammonclock.core.engine import Engine
from gammonclock.hardware import compose, i2c_rdwr, partial
from gammonclock.hardware.drawing import shifted
from gammonclock.hardware.i2c_emulator import ControllerMemory, memory_for
from gammonclock.hardware.panels import SHIFTS, Panel, shift_at
from gammonclock.hardware.presenters import PanelPresenter
from gammonclock.hardware.screens import (
    HEIGHT,
    WIDTH,
    PanelView,
    config_error_view,
    idle_view,
    message_view,
    panel_view,
    render,
)
from gammonclock.sides import Pair, Side
from i2c_helpers import decode_write, serials_on

S = 10**9


def match_views(seed: int, length: int, notices: bool) -> list[PanelView]:
    """Every distinct view a generated match shows on both panels (with `notices`, a notice laid
    over some of them, as a refusal or a hint would be)."""
    bench = load_benchmark("bench_match")
    match = bench.generate_match(seed, length, bounce=0.25)
    rnd = random.Random(seed)
    views: list[PanelView] = []
    engine = Engine.start(match.rules)
    for edge in match.inputs:
        engine, _ = engine.feed(edge)
        for side in Side:
            notice = "no double on the first turn" if notices and rnd.random() < 0.2 else None
            views.append(panel_view(engine.match, side, edge.t, notice))
    return list(dict.fromkeys(views))


def other_views() -> list[PanelView]:
    return [config_error_view('table.toml: time.delay: "12x" is not a duration; use e.g. "12s"'),
            idle_view("Table 5", "Spring open", ["192.168.1.20", "fe80::1"], "en"),
            idle_view("Стол 5", "Кубок", [], "ru"),
            message_view("MATCH LOADED", ["Anna v Boris, 7 points", "press to start"]),
            message_view("MATCH LOADED", ["Анна v Борис"], lang="ru")]


def reference(view: PanelView, shift: tuple[int, int]) -> bytes:
    return compose.frame_bytes(shifted(render(view), shift))


def test_composed_frames_equal_the_drawn_ones_pixel_for_pixel_in_every_state_and_shift() -> None:
    views = match_views(7, 5, notices=False) + match_views(8, 3, notices=True) + other_views()
    assert len(views) > 500
    compose._masks.clear()
    for i, view in enumerate(views):
        for shift in (SHIFTS[i % len(SHIFTS)], SHIFTS[(i * 5 + 3) % len(SHIFTS)]):
            assert compose.compose(view, shift) == reference(view, shift), (view, shift)
    # Again, every mask now from the cache (and the oldest dropped to stay bounded).
    assert 0 < len(compose._masks) <= compose.CACHED_STROKES
    for i, view in enumerate(views[-200:]):
        shift = SHIFTS[i % len(SHIFTS)]
        assert compose.compose(view, shift) == reference(view, shift)


def test_a_picture_is_drawn_once_and_composed_once_per_shift() -> None:
    view = other_views()[-1]
    picture = compose.Picture(view)
    assert picture.image() is picture.image()
    assert picture.image_at((1, 1)).tobytes() == shifted(render(view), (1, 1)).tobytes()
    pages = picture.pages_at((1, 0))
    assert picture.pages_at((1, 0)) is pages
    assert picture.pages_at((0, 0)) == reference(view, (0, 0))


def test_frame_bytes_are_the_drivers_pages() -> None:
    image = Image.frombytes("1", (WIDTH, HEIGHT), random.Random(1).randbytes(WIDTH * HEIGHT // 8))
    assert compose.frame_bytes(image) == b"".join(partial.page_bytes(image))


# --- the changed runs, all pages at once -------------------------------------------------------

@settings(max_examples=400, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), width=st.sampled_from((1, 3, 20, 128)),
       pages=st.integers(1, 8), gap=st.sampled_from((0, 1, 2, 9, 12)))
def test_changed_page_runs_are_each_page_s_changed_runs(seed: int, width: int, pages: int,
                                                        gap: int) -> None:
    rnd = random.Random(seed)
    old = [bytes(rnd.choice((0, 0, 0, 1, 255)) for _ in range(width)) for _ in range(pages)]
    new = [bytes(b if rnd.random() < 0.8 else rnd.choice((0, 7)) for b in page) for page in old]
    assert partial.changed_page_runs(old, new, gap) == [
        _changed_runs_before(a, b, gap) for a, b in zip(old, new, strict=True)]


def _changed_runs_before(old: bytes, new: bytes, gap: int) -> list[tuple[int, int]]:
    """`partial.changed_runs` as it was, a column at a time: the reference."""
    runs: list[tuple[int, int]] = []
    for column, (a, b) in enumerate(zip(old, new, strict=True)):
        if a == b:
            continue
        if runs and column - runs[-1][1] <= gap:
            runs[-1] = (runs[-1][0], column)
        else:
            runs.append((column, column))
    return runs


# --- one ioctl a frame, decoded as the controllers decode it -----------------------------------

class _KernelBus(smbus2.SMBus):  # type: ignore[misc]
    """smbus2's SMBus whose ioctls are decoded into controller memories, as the kernel would
    carry them: each message of an I2C_RDWR is a write transaction to its address."""

    def __init__(self, memories: dict[int, ControllerMemory]) -> None:
        super().__init__(None)
        self.memories = memories
        self.ioctls = 0
        self.messages = 0

    def write_i2c_block_data(self, address: int, register: int, data: list[int]) -> None:
        self.ioctls += 1
        self._decode(address, bytes([register, *data]))

    def i2c_rdwr(self, *messages: Any) -> None:
        assert len(messages) <= i2c_rdwr.MAX_MESSAGES
        self.ioctls += 1
        for message in messages:
            assert message.flags == 0
            self._decode(message.addr, ctypes.string_at(message.buf, message.len))

    def _decode(self, address: int, raw: bytes) -> None:
        self.messages += 1
        decode_write(self.memories[address], raw)

    def close(self) -> None:
        pass


@pytest.mark.parametrize("driver", ["ssd1306", "sh1106", "ssd1309"])
def test_a_match_s_frames_reach_both_controllers_exactly_one_ioctl_a_frame(driver: str) -> None:
    memories = {0x3C: memory_for(driver), 0x3D: memory_for(driver)}
    bus = _KernelBus(memories)
    serials = serials_on(bus)

    def panel(serial: Any, name: str) -> Panel:
        return Panel(lambda: partial.DRIVERS[driver](serial, width=WIDTH, height=HEIGHT), name)

    panels = Pair(panel(serials.left, "left panel"), panel(serials.right, "right panel"))
    presenter = PanelPresenter(panels)
    bench = load_benchmark("bench_match")
    match = bench.generate_match(11, 3, bounce=0.0)
    engine = Engine.start(match.rules)
    presenter.present(engine, 0, [])
    checked = 0
    for edge in match.inputs[:400]:
        engine, effects = engine.feed(edge)
        before = bus.ioctls
        frames = sum(p.frames_drawn for p in panels)
        rewrites = [p._rewrite_at for p in panels]
        presenter.present(engine, edge.t, effects)
        drawn = sum(p.frames_drawn for p in panels) - frames
        if rewrites == [p._rewrite_at for p in panels]:   # (a rewrite of the glass: pieces)
            assert bus.ioctls - before <= drawn       # one ioctl a frame (or none: no change)
        for side, address in ((Side.LEFT, 0x3C), (Side.RIGHT, 0x3D)):
            shown = presenter.shown(side)
            assert shown is not None
            expected = partial.page_bytes(shifted(render(shown[0]), shift_at(edge.t)))
            assert memories[address].pages() == expected, (side, edge)
            checked += 1
    assert checked == 2 * len(match.inputs[:400]) > 600 and bus.messages > bus.ioctls


def test_writes_beyond_luma_s_limits_go_through_its_own_calls() -> None:
    class Managed:
        _managed, _addr, _cmd_mode, _data_mode = True, 0x3C, 0x00, 0x40
        _bus = smbus2.SMBus(None)

    assert not i2c_rdwr.send_windows(Managed(), [(bytes(33), b"")])
    assert not i2c_rdwr.send_windows(Managed(), [(b"\x21", bytes(4096))])
    assert not i2c_rdwr.send_windows(object(), [(b"\x21", b"\x00")])


def test_many_scattered_runs_are_merged_per_page_before_the_greedy_search() -> None:
    stripes = [[(c, c) for c in range(0, 128, 14)] for _ in range(8)]   # 72 one-byte runs
    assert sum(map(len, stripes)) > partial.GREEDY_WINDOWS
    windows = partial.merged_windows(stripes, 6)
    covered = {(p, c) for first, last, (left, right) in windows
               for p in range(first, last + 1) for c in range(left, right + 1)}
    assert all((p, c) in covered for p, page in enumerate(stripes) for c, _ in page)
    assert len(windows) <= 8
    # A few runs: the greedy search as before (the cheapest windows).
    few = [[], [(10, 20)], [(10, 21)], [], [], [], [], []]
    assert partial.merged_windows(few, 6) == [(1, 2, (10, 21))]


def test_a_change_whose_bytes_alone_cost_more_than_half_a_frame_is_sent_whole() -> None:
    class Serial:
        def __init__(self) -> None:
            self.sent: list[int] = []

        def command(self, *cmd: int) -> None:
            pass

        def data(self, data: list[int]) -> None:
            self.sent.append(len(data))

    serial = Serial()
    device = partial.ssd1306(serial, width=WIDTH, height=HEIGHT)
    device.display_pages(bytes(1024))
    serial.sent.clear()
    changed = bytes([0x55] * 600) + bytes(424)
    device.display_pages(changed)
    assert serial.sent == [1024] and device.full_frames == 2


@pytest.mark.parametrize("driver", ["ssd1306", "sh1106", "ssd1309"])
@pytest.mark.parametrize("rotate", [0, 2])
def test_a_frame_given_as_bytes_lands_as_the_same_image_would_upright_or_upside_down(
        driver: str, rotate: int) -> None:
    from gammonclock.hardware.i2c_emulator import EmulatedBus, EmulatedI2C

    rnd = random.Random(rotate)
    as_image = EmulatedI2C(EmulatedBus(sleep=False), memory_for(driver))
    as_bytes = EmulatedI2C(EmulatedBus(sleep=False), memory_for(driver))
    by_image = partial.DRIVERS[driver](as_image, width=WIDTH, height=HEIGHT, rotate=rotate)
    by_bytes = partial.DRIVERS[driver](as_bytes, width=WIDTH, height=HEIGHT, rotate=rotate)
    image = Image.new("1", (WIDTH, HEIGHT))
    for _ in range(12):
        pixels = image.load()
        assert pixels is not None
        for _ in range(rnd.randint(1, 300)):
            pixels[rnd.randrange(WIDTH), rnd.randrange(HEIGHT)] = rnd.choice((0, 255))
        by_image.display(image)
        by_bytes.display_pages(compose.frame_bytes(image))
        assert as_bytes.memory.pages() == as_image.memory.pages()


def test_an_upside_down_panel_shows_the_composed_frame_rotated() -> None:
    from gammonclock.hardware.i2c_emulator import EmulatedBus, EmulatedI2C

    serial = EmulatedI2C(EmulatedBus(sleep=False), memory_for("ssd1306"))
    panel = Panel(lambda: partial.ssd1306(serial, width=WIDTH, height=HEIGHT, rotate=2), "panel")
    view = other_views()[-1]
    panel.show_picture(compose.Picture(view), 5 * S)
    expected = shifted(render(view), shift_at(5 * S)).rotate(180)
    assert serial.memory.pages() == partial.page_bytes(expected)

"""The cheap press path (issue 20) changes no pixel and no byte on the bus: frames composed from
cached parts and moved by the burn-in shift as integers are the frames `render` draws, a frame
diffed whole gives the runs a page at a time gave, and the messages packed into one buffer reach
the controllers exactly as smbus2's own `i2c_rdwr` carries them."""

from __future__ import annotations

import ctypes
import random
from collections.abc import Iterator
from typing import Any

import pytest
import smbus2
import smbus2.smbus2 as smbus2_module
from hypothesis import given, settings
from hypothesis import strategies as st
from PIL import Image

from bench_helpers import load_benchmark
from gammonclock.core.engine import Engine
from gammonclock.hardware import compose, partial
from gammonclock.hardware.drawing import parts, shifted
from gammonclock.hardware.i2c_emulator import ControllerMemory, memory_for
from gammonclock.hardware.panels import SHIFTS, Panel, shift_at
from gammonclock.hardware.presenters import PanelPresenter
from gammonclock.hardware.screens import HEIGHT, WIDTH, panel_view, render
from gammonclock.sides import Pair, Side
from i2c_helpers import decode_write, serials_on


def reference(view: Any, shift: tuple[int, int]) -> bytes:
    return compose.frame_bytes(shifted(render(view), shift))


# --- the burn-in shift on the integer -----------------------------------------------------------

@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), dx=st.integers(-2, 2), dy=st.integers(-2, 2))
def test_a_frame_moved_as_an_integer_is_the_picture_moved(seed: int, dx: int, dy: int) -> None:
    rnd = random.Random(seed)
    image = Image.new("1", (WIDTH, HEIGHT), 0)
    pixels = image.load()
    assert pixels is not None
    for _ in range(rnd.randint(1, 2000)):     # anywhere, the edges too: what leaves is lost
        pixels[rnd.randrange(WIDTH), rnd.randrange(HEIGHT)] = 255
    frame = int.from_bytes(compose.frame_bytes(image), "little")
    moved = compose.shifted_frame(frame, (dx, dy)).to_bytes(compose.FRAME_BYTES, "little")
    assert moved == compose.frame_bytes(shifted(image, (dx, dy)))


# --- frames composed from parts -----------------------------------------------------------------

def match_frames(seed: int, length: int, notices: bool) -> Iterator[tuple[Any, tuple[int, int]]]:
    """Every view of a generated match in the order the panels show them (press by press, both
    sides, a notice laid over some), each with a shift that changes now and then."""
    bench = load_benchmark("bench_match")
    match = bench.generate_match(seed, length, bounce=0.25)
    rnd = random.Random(seed)
    engine = Engine.start(match.rules)
    for i, edge in enumerate(match.inputs):
        engine, _ = engine.feed(edge)
        shift = SHIFTS[(i // 40) % len(SHIFTS)]
        for side in Side:
            notice = "no double on the first turn" if notices and rnd.random() < 0.1 else None
            yield panel_view(engine.match, side, edge.t, notice), shift


def test_frames_composed_from_cached_parts_equal_full_renders_press_by_press() -> None:
    compose._masks.clear()
    compose._parts.clear()
    checked = 0
    for seed, notices in ((21, False), (22, True)):
        for view, shift in match_frames(seed, 3, notices):
            assert compose.compose(view, shift) == reference(view, shift), (view, shift)
            checked += 1
    assert checked > 1000
    # The caches stay bounded, and what a press shows came from them.
    assert 0 < len(compose._parts) <= compose.CACHED_PARTS
    assert 0 < len(compose._masks) <= compose.CACHED_STROKES


def test_a_clock_press_finds_every_part_of_its_frames_already_made() -> None:
    views = [view for view, _ in match_frames(23, 3, notices=False)]
    compose._masks.clear()
    compose._parts.clear()
    for view in views[:200]:
        compose.compose(view, (0, 0))
    made = len(compose._parts)
    later = views[200:260]
    keys = [key for view in later for key, _ in parts(view)]
    missing = [key for key in keys if (key, (0, 0)) not in compose._parts]
    # Only new digits (a reserve that has not been shown yet) are drawn: most parts are kept.
    assert len(missing) < len(keys) // 3, missing
    assert made > 0


def test_equal_keys_draw_equal_parts() -> None:
    """A part's key holds all it draws: two views whose parts share a key draw it alike."""
    from gammonclock.hardware.drawing import _Canvas

    seen: dict[object, bytes] = {}
    for view, _ in match_frames(24, 3, notices=True):
        for key, draw in parts(view):
            if key is None:
                continue
            canvas = _Canvas()
            draw(canvas)
            drawn = canvas.image.tobytes()
            assert seen.setdefault(key, drawn) == drawn, key


# --- a frame diffed whole -----------------------------------------------------------------------

@settings(max_examples=200, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), width=st.sampled_from((1, 3, 20, 128)),
       pages=st.integers(1, 8), gap=st.sampled_from((0, 1, 2, 9, 12)),
       keep=st.sampled_from((0.5, 0.9, 0.99)))
def test_a_frame_diffed_whole_gives_each_page_s_runs(seed: int, width: int, pages: int, gap: int,
                                                     keep: float) -> None:
    rnd = random.Random(seed)
    old = bytes(rnd.choice((0, 0, 0, 1, 255)) for _ in range(width * pages))
    new = bytes(b if rnd.random() < keep else rnd.choice((0, 7, 255)) for b in old)
    split = [slice(p, p + width) for p in range(0, len(old), width)]
    assert partial.frame_runs(old, new, width, gap) == partial.changed_page_runs(
        [old[s] for s in split], [new[s] for s in split], gap)


def test_runs_across_a_page_s_end_stay_within_their_pages() -> None:
    old = bytes(256)
    new = bytes(126) + b"\1\1" + b"\1\1" + bytes(126)     # the end of page 0, the start of 1
    assert partial.frame_runs(old, new, 128, 12) == [[(126, 127)], [(0, 1)]]


# --- the messages, packed, reach the controllers as smbus2's own would carry them --------------

class _Kernel(smbus2.SMBus):  # type: ignore[misc]
    """smbus2's own SMBus (its `i2c_rdwr` not replaced) whose ioctls a fake kernel decodes
    into controller memories: each message of an I2C_RDWR a write transaction."""

    def __init__(self, memories: dict[int, ControllerMemory]) -> None:
        super().__init__(None)
        self.fd = self
        self.memories = memories
        self.ioctls = 0

    def carry(self, request: int, arg: Any) -> int:
        self.ioctls += 1
        if request == smbus2_module.I2C_RDWR:
            for i in range(arg.nmsgs):
                message = arg.msgs[i]
                assert message.flags == 0
                self._decode(message.addr, ctypes.string_at(message.buf, message.len))
        elif request == smbus2_module.I2C_SMBUS:     # luma's set-up: a block write
            block = arg.data.contents.block
            self._decode(self.address, bytes([arg.command, *block[1:block[0] + 1]]))
        return 0                                     # (I2C_SLAVE: the address, nothing sent)

    def _decode(self, address: int, raw: bytes) -> None:
        decode_write(self.memories[address], raw)

    def close(self) -> None:
        self.fd = None


class _Rdwr(_Kernel):
    """The same, its messages taken through smbus2's own `i2c_rdwr` instead (the path a bus
    with its own `i2c_rdwr` takes): the reference."""

    def i2c_rdwr(self, *messages: Any) -> None:
        data = smbus2_module.i2c_rdwr_ioctl_data.create(*messages)
        self.carry(smbus2_module.I2C_RDWR, data)


def _play(bus: _Kernel, driver: str, seed: int) -> list[tuple[bytes, bytes]]:
    serials = serials_on(bus)
    panels = Pair(*(Panel(lambda s=s: partial.DRIVERS[driver](s, width=WIDTH, height=HEIGHT),
                          f"{side} panel") for side, s in zip(Side, serials, strict=True)))
    presenter = PanelPresenter(panels)
    match = load_benchmark("bench_match").generate_match(seed, 3, bounce=0.0)
    engine = Engine.start(match.rules)
    presenter.present(engine, 0, [])
    glass = []
    for edge in match.inputs[:300]:
        engine, effects = engine.feed(edge)
        presenter.present(engine, edge.t, effects)
        memories = tuple(bus.memories[a].pages() for a in (0x3C, 0x3D))
        for side, held in zip(Side, memories, strict=True):
            shown = presenter.shown(side)
            assert shown is not None
            assert held == partial.page_bytes(shifted(render(shown[0]), shift_at(edge.t)))
        glass.append((b"".join(memories[0]), b"".join(memories[1])))
    return glass


@pytest.mark.parametrize("driver", ["ssd1306", "sh1106"])
def test_packed_messages_reach_the_controllers_as_smbus2_s_own_do(kernel: None,
                                                                  driver: str) -> None:
    fast = _Kernel({0x3C: memory_for(driver), 0x3D: memory_for(driver)})
    slow = _Rdwr({0x3C: memory_for(driver), 0x3D: memory_for(driver)})
    assert _play(fast, driver, 31) == _play(slow, driver, 31)
    assert fast.ioctls == slow.ioctls > 300     # one ioctl a frame, either way


# --- both panels' frames of a press in one ioctl ------------------------------------------------

class _Naks(_Kernel):
    """The fake kernel with `silent` addresses that do not acknowledge: an I2C_RDWR carrying a
    message to one fails whole (EREMOTEIO), as the i2c-bcm2835 driver fails it."""

    def __init__(self, memories: dict[int, ControllerMemory], silent: set[int]) -> None:
        super().__init__(memories)
        self.silent = silent
        self.rdwr_sizes: list[int] = []

    def carry(self, request: int, arg: Any) -> int:
        if request == smbus2_module.I2C_RDWR:
            addresses = {arg.msgs[i].addr for i in range(arg.nmsgs)}
            self.rdwr_sizes.append(arg.nmsgs)
            if addresses & self.silent:
                raise OSError(121, "Remote I/O error")
        return super().carry(request, arg)


def _rig(bus: _Kernel, writer: Any) -> tuple[PanelPresenter, Pair[Panel]]:
    serials = serials_on(bus)
    panels = Pair(*(Panel(lambda s=s: partial.DRIVERS["ssd1306"](s, width=WIDTH, height=HEIGHT),
                          f"{side} panel", writer=writer)
                    for side, s in zip(Side, serials, strict=True)))
    return PanelPresenter(panels), panels


def _presses(presenter: PanelPresenter, writer: Any, count: int,
             check: Any) -> None:
    """`count` presses of a generated match, each one's frames held and released together (as
    the loop does around the journal's sync), `check`ed once written."""
    match = load_benchmark("bench_match").generate_match(41, 3, bounce=0.0)
    engine = Engine.start(match.rules)
    presenter.present(engine, 0, [])
    presenter.flush()
    for edge in match.inputs[:count]:
        engine, effects = engine.feed(edge)
        writer.hold()
        presenter.present(engine, edge.t, effects)
        writer.release()
        presenter.flush()
        check(edge)


def test_both_panels_frames_of_a_press_leave_in_one_ioctl(kernel: None) -> None:
    from gammonclock.hardware.bus_writer import BusWriter

    bus = _Naks({0x3C: memory_for("ssd1306"), 0x3D: memory_for("ssd1306")}, set())
    writer = BusWriter("test bus")
    presenter, _ = _rig(bus, writer)
    together = 0                        # presses whose windows on both panels left in one ioctl

    def check(edge: Any) -> None:
        nonlocal together
        for side, address in ((Side.LEFT, 0x3C), (Side.RIGHT, 0x3D)):
            shown = presenter.shown(side)
            assert shown is not None
            assert bus.memories[address].pages() == partial.page_bytes(
                shifted(render(shown[0]), shift_at(edge.t))), (side, edge)
        together += len(bus.rdwr_sizes) == 1 and bus.rdwr_sizes[0] >= 8
        bus.rdwr_sizes.clear()

    _presses(presenter, writer, 150, check)
    presenter.close()
    assert together >= 40


def test_a_panel_that_does_not_answer_never_keeps_the_other_from_its_frames(
        kernel: None) -> None:
    from gammonclock.hardware.bus_writer import BusWriter

    bus = _Naks({0x3C: memory_for("ssd1306"), 0x3D: memory_for("ssd1306")}, set())
    writer = BusWriter("test bus")
    presenter, panels = _rig(bus, writer)

    def check(edge: Any) -> None:
        if edge.t > 20 * 10**9:
            bus.silent = {0x3D}         # the right panel unplugged mid-match
        shown = presenter.shown(Side.LEFT)
        assert shown is not None
        assert bus.memories[0x3C].pages() == partial.page_bytes(
            shifted(render(shown[0]), shift_at(edge.t))), edge

    _presses(presenter, writer, 150, check)
    assert panels.right.failures > 0 and panels.left.failures == 0
    assert not panels.right.flush() and panels.left.flush()
    presenter.close()

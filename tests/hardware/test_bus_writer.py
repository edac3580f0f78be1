"""The panels off the clock's thread (hardware/bus_writer.py, Panel with a writer), and a press
drawn once with its final content (hardware/redraw.settled)."""

from __future__ import annotations

import logging
import threading

from luma.core.device import dummy
from PIL import Image, ImageChops

from gammonclock.core.engine import ButtonEdge
from gammonclock.hardware import panels
from gammonclock.hardware.bus_writer import BusWriter
from gammonclock.hardware.panels import FIRST_RETRY_NS, Panel
from gammonclock.hardware.presenters import PanelPresenter
from gammonclock.hardware.screens import HEIGHT, WIDTH, panel_view, render
from gammonclock.sides import Button, Pair, Side
from play_helpers import play

S = 10**9
NAMES = Pair("Anna", "Boris")


def same(a: Image.Image, b: Image.Image) -> bool:
    return ImageChops.difference(a.convert("1"), b.convert("1")).getbbox() is None


def running_view(t: int) -> Image.Image:
    match = play("0 tap left\n0 end", names=NAMES).match
    return render(panel_view(match, Side.RIGHT, t))


class Recording(dummy):
    """luma's dummy that notes every frame it gets, can be held at a gate (a bus that hangs),
    fail on demand, and notices two writes at once."""

    def __init__(self) -> None:
        super().__init__(width=WIDTH, height=HEIGHT, mode="1")
        self.frames: list[bytes] = []
        self.gate = threading.Event()
        self.gate.set()
        self.entered = threading.Event()
        self.failing = False
        self.cleaned = False
        self.busy = False
        self.overlaps = 0

    def display(self, image: Image.Image) -> None:
        if self.busy:
            self.overlaps += 1
        self.busy = True
        self.entered.set()
        self.gate.wait(5)
        self.busy = False
        if self.failing:
            raise OSError(121, "Remote I/O error")
        super().display(image)
        self.frames.append(image.tobytes())

    def cleanup(self) -> None:
        self.cleaned = True
        super().cleanup()


def test_show_returns_at_once_while_the_bus_hangs_and_stale_frames_are_never_sent():
    device, writer = Recording(), BusWriter("test bus")
    panel = Panel.for_device(device, "left panel", writer=writer)
    frames = [running_view(k * S) for k in range(13, 18)]       # five different pictures
    device.gate.clear()                                          # the bus hangs
    assert panel.show(frames[0], 0)
    assert device.entered.wait(2)                                # the writer is stuck in it
    for k, frame in enumerate(frames[1:], start=1):
        assert panel.show(frame, k)                              # returned: nothing waited
    assert device.frames == []
    device.gate.set()
    assert panel.flush()
    # The first (already on the bus) and the newest; the three in between were superseded.
    assert device.frames == [frames[0].tobytes(), frames[-1].tobytes()]
    assert writer.dropped == 3
    assert same(device.image, frames[-1])
    panel.close()


def test_the_same_picture_is_not_handed_over_again():
    device, writer = Recording(), BusWriter("test bus")
    panel = Panel.for_device(device, writer=writer)
    image = running_view(13 * S)
    for t in range(5):
        panel.show(image, t)
    panel.flush()
    assert len(device.frames) == 1 and writer.written == 1
    panel.close()


def test_two_panels_on_one_bus_are_written_one_at_a_time():
    left, right, writer = Recording(), Recording(), BusWriter("test bus")
    pair = Pair(Panel.for_device(left, "left", writer=writer),
                Panel.for_device(right, "right", writer=writer))
    for k in range(20):
        for side in Side:
            pair[side].show(running_view((13 + k) * S), k)
    assert all(pair[side].flush() for side in Side)
    assert left.overlaps == right.overlaps == 0
    assert not (left.busy or right.busy)
    assert same(left.image, running_view(32 * S)) and same(right.image, running_view(32 * S))
    for side in Side:
        pair[side].close()


def test_a_failing_bus_is_handled_on_the_writer_with_the_same_back_off(caplog):
    caplog.set_level(logging.WARNING, logger=panels.__name__)
    made: list[Recording] = []

    def factory() -> Recording:
        made.append(Recording())
        made[-1].failing = len(made) == 1
        return made[-1]

    panel = Panel(factory, "right panel", writer=BusWriter("test bus"))
    image = running_view(13 * S)
    assert panel.show(image, 0)                          # handed over: not known to fail yet
    assert panel.flush() is False and panel.failures == 1
    assert panel.show(image, 1) is False                 # known now; backing off
    assert panel.flush() is False and len(made) == 1
    panel.show(image, FIRST_RETRY_NS)                    # a fresh device after the back-off
    assert panel.flush() is True and len(made) == 2
    assert same(made[1].image, image)
    assert any("Remote I/O error" in r.getMessage() for r in caplog.records)
    panel.close()


def test_close_writes_the_last_frame_first_and_keeps_the_picture():
    device, writer = Recording(), BusWriter("test bus")
    panel = Panel.for_device(device, writer=writer)
    device.gate.clear()
    panel.show(running_view(13 * S), 0)
    assert device.entered.wait(2)
    panel.show(running_view(14 * S), 1)                   # waiting behind the first
    threading.Timer(0.05, device.gate.set).start()
    panel.close()
    assert device.frames[-1] == running_view(14 * S).tobytes()
    assert device.cleaned and device.persist
    assert panel.device is None


def test_the_writer_thread_ends_when_its_last_panel_is_closed():
    writer = BusWriter("test bus")
    panel = Panel.for_device(Recording(), writer=writer)
    panel.show(running_view(13 * S), 0)
    panel.flush()
    thread = writer._thread
    assert thread is not None and thread.is_alive()
    panel.close()
    thread.join(2)
    assert not thread.is_alive()


# --- a press is drawn once ------------------------------------------------------------------

class Counting(dummy):
    def __init__(self) -> None:
        super().__init__(width=WIDTH, height=HEIGHT, mode="1")
        self.frames = 0

    def display(self, image: Image.Image) -> None:
        self.frames += 1
        super().display(image)


def test_a_press_draws_each_panel_once_with_its_final_content():
    """Each press: one frame per panel, already showing the new turn's delay as it stands after
    the press ("11", not "12" for a nanosecond), and the next redraw is the next real change."""
    devices = Pair(Counting(), Counting())
    presenter = PanelPresenter(Pair(*(Panel.for_device(devices[s], str(s)) for s in Side)))
    engine = play("0 tap left\n0.2 end", names=NAMES).engine      # right's clock runs from 0
    engine, effects = engine.advance(S)
    presenter.present(engine, S, effects)
    for k, t in enumerate((5 * S + 123, 9 * S + 7, 30 * S)):
        press = Button.of(engine.match.running_side)
        before = [devices[s].frames for s in Side]
        engine, effects = engine.feed(ButtonEdge(t, press, True))
        wake = presenter.present(engine, t, effects)
        assert [devices[s].frames for s in Side] == [n + 1 for n in before], k
        assert wake == t + S + 1                   # "11" turns "10" a second later
        for side in Side:                          # the frame is the one of the instant after
            assert same(devices[side].image, render(panel_view(engine.match, side, t + 1)))
        engine, effects = engine.feed(ButtonEdge(t + S // 10, press, False))
        presenter.present(engine, t + S // 10, effects)

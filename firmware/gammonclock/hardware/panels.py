"""One OLED panel through luma: draw only what changed, shift against burn-in, outlive the device.

A `Panel` wraps a luma device that it builds itself from a factory: the real one from a
`PanelConfig` (I²C + ssd1306/sh1106/ssd1309, as `partial.py`'s drivers that send only the changed
bytes), or an injected one (luma's `dummy`, a `luma.emulator` device) for tests and the simulator.
Every error the device raises — `OSError` from I²C, luma's own errors, anything — is caught and
logged: the panel is marked for a fresh start, which the next `show` tries after a back-off, and
the clock never stops for a display. The device's `persist` is set, so the last picture stays on
the glass when the program ends.

`show_picture` (what the presenter calls) takes a `compose.Picture`: the frame is composed in the
controller's bytes and compared as such, and drawn as a PIL image only for a device that takes
no such bytes (luma's `dummy`, an emulator).

A panel with a `BusWriter` (every real one: `from_config` gives it its bus's writer) draws on the
writer's thread: `show` hands the frame over and returns at once, so a slow or failing bus never
delays the clock; `flush` waits for the glass. A panel without one (luma's `dummy` in tests and
the simulator) draws inside `show`, so a test reads `panel.device.image` right after it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from PIL import Image

from gammonclock.backoff import Backoff
from gammonclock.config.loading import PANEL_DRIVERS, PanelConfig
from gammonclock.durations import NS_PER_S

from .bus_writer import BusWriter, writer_for_bus
from .compose import Picture
from .drawing import shifted
from .screens import HEIGHT, MARGIN, WIDTH

log = logging.getLogger(__name__)

LumaDevice = Any          # a luma.core.device.device (luma ships no type hints)
DeviceFactory = Callable[[], LumaDevice]

DRIVERS = tuple(PANEL_DRIVERS)   # the config's table: each a class of luma.oled.device

# Against burn-in the picture takes a new position every few minutes, walking one pixel at a time
# around its centre so that no move is a jump; `screens.MARGIN` keeps every lit pixel on the glass.
SHIFT_PERIOD_NS = 3 * 60 * NS_PER_S
SHIFTS: tuple[tuple[int, int], ...] = (
    (0, 0), (1, 0), (1, 1), (0, 1), (-1, 1), (-1, 0), (-1, -1), (0, -1), (1, -1))
assert all(abs(dx) <= MARGIN and abs(dy) <= MARGIN for dx, dy in SHIFTS)

FIRST_RETRY_NS = NS_PER_S // 2   # a panel that failed is started again after this, then
MAX_RETRY_NS = 30 * NS_PER_S     # twice as long each time it fails again, up to this

# A panel that sends only the changed bytes rewrites its whole glass at least this often (in small
# pieces while the bus is idle), so a byte a glitch on the bus corrupted stays at most a minute.
# It costs about 1.3 kB per panel a minute: 0.2 % of a 100 kHz bus.
REWRITE_PERIOD_NS = 60 * NS_PER_S
CLOSE_TIMEOUT_S = 1.0            # closing waits this long for the last frame to be written


def shift_at(t: int) -> tuple[int, int]:
    """The offset of the picture at instant `t` (deterministic: the same t, the same place)."""
    return SHIFTS[(t // SHIFT_PERIOD_NS) % len(SHIFTS)]


def next_shift_at(t: int) -> int:
    """The instant after `t` at which the picture moves: a service showing a still screen wakes
    then too, or the picture would never move."""
    return (t // SHIFT_PERIOD_NS + 1) * SHIFT_PERIOD_NS


def luma_device(config: PanelConfig) -> LumaDevice:
    """The real panel of `config` on its I²C bus; raises what luma raises when it is absent."""
    # Imported here: building a panel from a config is the only thing that needs the I²C stack.
    from luma.core.interface.serial import i2c  # type: ignore[import-untyped]

    from . import partial

    serial = i2c(port=config.port, address=config.address)
    return partial.DRIVERS[config.driver](serial, width=WIDTH, height=HEIGHT,
                                          rotate=config.rotate)


class _Frame:
    """A frame handed to the bus writer: a PIL image and its bytes, or a `Picture` and its
    controller bytes (`PICTURE` and its pages: never equal to an image's bytes)."""

    __slots__ = ("data", "image", "rewrite", "shift", "t")

    def __init__(self, image: Image.Image | Picture, data: bytes, t: int, rewrite: bool,
                 shift: tuple[int, int]) -> None:
        self.image, self.data, self.t, self.rewrite = image, data, t, rewrite
        self.shift = shift          # `shift_at(t)`: the burn-in offset it is drawn at


PICTURE = b"P"      # the bytes of a picture's frame start so; an image's are 1 024 bytes long


def _display(device: LumaDevice, job: _Frame, shift: tuple[int, int]) -> None:
    """The frame of `job` on `device`: a picture's controller bytes straight to a driver that
    takes them (`partial.py`'s, upright or upside down), else as a PIL image."""
    frame = job.image
    if isinstance(frame, Picture):
        if getattr(device, "rotate", None) in (0, 2) and hasattr(device, "display_pages"):
            device.display_pages(job.data[len(PICTURE):])
            return
        frame = frame.image_at(shift)
    device.display(frame if device.mode == frame.mode else frame.convert(device.mode))


class Panel:
    """One panel. `show` never raises; it returns whether the picture is (or, handed to a bus
    writer, is expected to be) on the glass: False while the panel is failing."""

    def __init__(self, factory: DeviceFactory, name: str = "panel",
                 contrast: int | None = None, writer: BusWriter | None = None) -> None:
        self.name = name
        self._factory = factory
        self._contrast = contrast
        self._writer = writer
        self._device: LumaDevice | None = None
        self._last: bytes | None = None     # the frame on the glass, as drawn
        self._shift: tuple[int, int] | None = None   # its burn-in offset
        self._retry = Backoff(FIRST_RETRY_NS, MAX_RETRY_NS)   # fresh starts after a failure
        self._rewrite_at: int | None = None  # the instant the whole glass is rewritten next
        self._handed: bytes | None = None    # the frame last handed to the writer
        self._failing = False                # the writer's last attempt failed
        self._last_t = 0
        self.frames_drawn = 0
        self.failures = 0

    @classmethod
    def from_config(cls, config: PanelConfig, name: str) -> Panel:
        """The real panel described by `config` (opened at the first `show`), drawn by the
        writer thread of its I²C bus."""
        if config.driver not in DRIVERS:
            raise ValueError(f"{name}: driver {config.driver!r} is not one of {', '.join(DRIVERS)}")
        if config.rotate not in (0, 2):
            raise ValueError(f"{name}: rotate {config.rotate}: the screens are 128x64 landscape; "
                             "use 0 or 2 (upside down)")
        return cls(lambda: luma_device(config), name, config.contrast,
                   writer_for_bus(config.port))

    @classmethod
    def for_device(cls, device: LumaDevice, name: str = "panel",
                   contrast: int | None = None, writer: BusWriter | None = None) -> Panel:
        """A panel on an existing device (luma's `dummy`, an emulator): a fresh start reuses it.
        Drawn inside `show` unless a `writer` is given."""
        return cls(lambda: device, name, contrast, writer)

    @property
    def device(self) -> LumaDevice | None:
        """The device while the panel is open (None while it waits for a fresh start)."""
        return self._device

    def show(self, image: Image.Image, t: int) -> bool:
        """Put `image` (128×64, mode "1") on the panel at instant `t`, shifted for `t`.

        Draws only when the frame differs from the one on the glass (or the glass is due for a
        rewrite). On a device error: logs, drops the device and returns False; a later call
        starts it again (after the back-off) and redraws. With a bus writer: hands the frame
        over and returns at once (the writer draws it, unless a newer frame replaces it first).
        """
        shift = shift_at(t)
        frame = shifted(image, shift)
        return self._show(frame, frame.tobytes(), t, shift)

    def show_picture(self, picture: Picture, t: int) -> bool:
        """`show` for a `Picture`: its frame is composed in the controller's bytes (no drawing)
        and compared as such; drawn as an image only for a device that takes no such bytes."""
        shift = shift_at(t)
        return self._show(picture, PICTURE + picture.pages_at(shift), t, shift)

    def _show(self, frame: Image.Image | Picture, data: bytes, t: int,
              shift: tuple[int, int]) -> bool:
        rewrite = self._rewrite_due(t)
        if self._writer is None:
            return self._draw(_Frame(frame, data, t, rewrite, shift))
        if data == self._handed and not self._failing and not rewrite:
            return True
        self._handed = data
        self._writer.submit(self, _Frame(frame, data, t, rewrite, shift))
        return not self._failing

    def flush(self, timeout: float = CLOSE_TIMEOUT_S) -> bool:
        """Wait (at most `timeout` s) until the frames handed over are written; whether the
        picture is on the glass. Immediate for a panel drawn inside `show`."""
        if self._writer is not None and not self._writer.flush(self, timeout):
            return False
        return self._device is not None and not self._failing

    def _rewrite_due(self, t: int) -> bool:
        if self._rewrite_at is None:
            self._rewrite_at = t + REWRITE_PERIOD_NS
        if t < self._rewrite_at:
            return False
        self._rewrite_at = t + REWRITE_PERIOD_NS
        return True

    # --- the drawing (on the writer's thread when there is one) --------------------------------

    def write(self, job: object) -> bool:
        """The writer's call: draw `job`; whether pieces of the glass wait to be rewritten."""
        assert isinstance(job, _Frame)
        self._failing = not self._draw(job)
        return self._rewriting()

    def write_failed(self, job: object, exc: Exception) -> None:
        """The writer's call: the frame `write` took left with the other panel's in one ioctl
        after it returned, and did not reach this panel's glass: a failed draw."""
        assert isinstance(job, _Frame)
        self.frames_drawn -= 1
        self._failed(job.t, "drawing", exc)
        self._failing = True

    def rewrite_step(self) -> bool:
        """The writer's call: rewrite one piece of the glass; whether more wait."""
        device = self._device
        if device is None or not self._rewriting():
            return False
        try:
            return bool(device.rewrite_step())
        except Exception as exc:   # noqa: BLE001 - any device error: the clock goes on
            self._failed(self._last_t, "rewriting", exc)
            self._failing = True
            return False

    def _rewriting(self) -> bool:
        return self._device is not None and bool(getattr(self._device, "rewriting", False))

    def _draw(self, job: _Frame) -> bool:
        t, shift = job.t, job.shift
        self._last_t = t
        if self._device is not None and job.data == self._last and not job.rewrite:
            return True
        if self._device is None and not self._open(t):
            return False
        device = self._device
        assert device is not None
        try:
            if shift != self._shift and hasattr(device, "invalidate"):
                device.invalidate()          # a burn-in move: every byte is sent again
            if job.data != self._last or shift != self._shift:
                _display(device, job, shift)
            if job.rewrite and hasattr(device, "stale_all"):
                device.stale_all()
                if self._writer is None:     # drawn inside `show`: no idle bus to wait for
                    while device.rewrite_step():
                        pass
        except Exception as exc:   # noqa: BLE001 - any device error: the clock goes on
            self._failed(t, "drawing", exc)
            return False
        self._last, self._shift = job.data, shift
        self._retry.succeeded()
        self.frames_drawn += 1
        return True

    def _open(self, t: int) -> bool:
        if not self._retry.ready(t):
            return False
        try:
            device = self._factory()
            device.persist = True        # luma blanks the panel at exit unless told not to
            if self._contrast is not None:
                device.contrast(self._contrast)
        except Exception as exc:   # noqa: BLE001 - absent, unplugged, not yet powered
            self._failed(t, "starting", exc)
            return False
        self._device, self._last, self._shift = device, None, None
        if self._writer is not None:
            self._writer.hold_at_exit()  # the last frames go out before luma closes the bus
        return True

    def _failed(self, t: int, doing: str, exc: Exception) -> None:
        self.failures += 1
        log.warning("%s: %s the display failed (%s: %s); next try in %.1f s",
                    self.name, doing, type(exc).__name__, exc, self._retry.next_delay / NS_PER_S)
        # The device may have half-taken a frame or lost its set-up: start it afresh.
        self._device, self._last = None, None
        self._retry.failed_at(t)

    def close(self) -> None:
        """Write the frame still waiting (bounded), release the device and leave its last
        picture on the glass (`persist`)."""
        if self._writer is not None:
            if not self._writer.flush(self, CLOSE_TIMEOUT_S):
                log.warning("%s: the last frame was not written within %.1f s", self.name,
                            CLOSE_TIMEOUT_S)
            if not self._writer.detach(self, CLOSE_TIMEOUT_S):
                return                       # the writer is stuck in a write to it: leave it
        device, self._device, self._last = self._device, None, None
        self._handed = None
        if device is None:
            return
        try:
            device.persist = True
            device.cleanup()
        except Exception as exc:   # noqa: BLE001 - closing must not fail the shutdown
            log.warning("%s: closing the display failed (%s: %s)", self.name,
                        type(exc).__name__, exc)

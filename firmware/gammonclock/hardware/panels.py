"""One OLED panel through luma: draw only what changed, shift against burn-in, outlive the device.

A `Panel` wraps a luma device that it builds itself from a factory: the real one from a
`PanelConfig` (I²C + ssd1306/sh1106/ssd1309), or an injected one (luma's `dummy`, a
`luma.emulator` device) for tests and the simulator. Every error the device raises — `OSError`
from I²C, luma's own errors, anything — is caught and logged: the panel is marked for a fresh
start, which the next `show` tries after a back-off, and the clock never stops for a display.
The device's `persist` is set, so the last picture stays on the glass when the program ends.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from PIL import Image

from ..backoff import Backoff
from ..config import PANEL_DRIVERS, PanelConfig
from ..durations import NS_PER_S
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


def shift_at(t: int) -> tuple[int, int]:
    """The offset of the picture at instant `t` (deterministic: the same t, the same place)."""
    return SHIFTS[(t // SHIFT_PERIOD_NS) % len(SHIFTS)]


def next_shift_at(t: int) -> int:
    """The instant after `t` at which the picture moves: a service showing a still screen wakes
    then too, or the picture would never move."""
    return (t // SHIFT_PERIOD_NS + 1) * SHIFT_PERIOD_NS


def shifted(image: Image.Image, offset: tuple[int, int]) -> Image.Image:
    """`image` moved by `offset`, on black; what leaves the frame is the blank margin."""
    if offset == (0, 0):
        return image
    frame = Image.new(image.mode, image.size, 0)
    frame.paste(image, offset)
    return frame


def luma_device(config: PanelConfig) -> LumaDevice:
    """The real panel of `config` on its I²C bus; raises what luma raises when it is absent."""
    # Imported here: building a panel from a config is the only thing that needs the I²C stack.
    from luma.core.interface.serial import i2c  # type: ignore[import-untyped]
    from luma.oled import device as oled  # type: ignore[import-untyped]

    serial = i2c(port=config.port, address=config.address)
    return getattr(oled, config.driver)(serial, width=WIDTH, height=HEIGHT, rotate=config.rotate)


class Panel:
    """One panel. `show` never raises; it returns whether the picture is on the glass."""

    def __init__(self, factory: DeviceFactory, name: str = "panel",
                 contrast: int | None = None) -> None:
        self.name = name
        self._factory = factory
        self._contrast = contrast
        self._device: LumaDevice | None = None
        self._last: bytes | None = None     # the frame on the glass, as drawn
        self._retry = Backoff(FIRST_RETRY_NS, MAX_RETRY_NS)   # fresh starts after a failure
        self.frames_drawn = 0
        self.failures = 0

    @classmethod
    def from_config(cls, config: PanelConfig, name: str) -> Panel:
        """The real panel described by `config` (opened at the first `show`)."""
        if config.driver not in DRIVERS:
            raise ValueError(f"{name}: driver {config.driver!r} is not one of {', '.join(DRIVERS)}")
        if config.rotate not in (0, 2):
            raise ValueError(f"{name}: rotate {config.rotate}: the screens are 128x64 landscape; "
                             "use 0 or 2 (upside down)")
        return cls(lambda: luma_device(config), name, config.contrast)

    @classmethod
    def for_device(cls, device: LumaDevice, name: str = "panel",
                   contrast: int | None = None) -> Panel:
        """A panel on an existing device (luma's `dummy`, an emulator): a fresh start reuses it."""
        return cls(lambda: device, name, contrast)

    @property
    def device(self) -> LumaDevice | None:
        """The device while the panel is open (None while it waits for a fresh start)."""
        return self._device

    def show(self, image: Image.Image, t: int) -> bool:
        """Put `image` (128×64, mode "1") on the panel at instant `t`, shifted for `t`.

        Draws only when the frame differs from the one on the glass. On a device error: logs,
        drops the device and returns False; a later call starts it again (after the back-off)
        and redraws.
        """
        frame = shifted(image, shift_at(t))
        data = frame.tobytes()
        if self._device is not None and data == self._last:
            return True
        if self._device is None and not self._open(t):
            return False
        device = self._device
        assert device is not None
        try:
            device.display(frame if device.mode == frame.mode else frame.convert(device.mode))
        except Exception as exc:   # noqa: BLE001 - any device error: the clock goes on
            self._failed(t, "drawing", exc)
            return False
        self._last = data
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
        self._device, self._last = device, None
        return True

    def _failed(self, t: int, doing: str, exc: Exception) -> None:
        self.failures += 1
        log.warning("%s: %s the display failed (%s: %s); next try in %.1f s",
                    self.name, doing, type(exc).__name__, exc, self._retry.next_delay / NS_PER_S)
        # The device may have half-taken a frame or lost its set-up: start it afresh.
        self._device, self._last = None, None
        self._retry.failed_at(t)

    def close(self) -> None:
        """Release the device and leave its last picture on the glass (`persist`)."""
        device, self._device, self._last = self._device, None, None
        if device is None:
            return
        try:
            device.persist = True
            device.cleanup()
        except Exception as exc:   # noqa: BLE001 - closing must not fail the shutdown
            log.warning("%s: closing the display failed (%s: %s)", self.name,
                        type(exc).__name__, exc)

"""The simulator people use: the real device with its buttons pressed from the keyboard.

`gammonclock simulate --config FILE` builds the very device `gammonclock run` builds, with
gpiozero's MockFactory pins and luma `dummy` panels. The keyboard drives the mock pins (so every
press goes through the same ButtonBoard callbacks, queue, service loop and engine as on the Pi)
and the panels' pictures are shown side by side:

- in a window (luma.emulator's pygame device) with real key-down and key-up, so a hold is a hold;
- in a terminal without a window, drawn in text, where a key is a tap and its capital a hold
  (terminals report no key releases).

For scripted runs, `FrameRecorder` keeps a PNG of each panel whenever it changes (`--frames`) and
an animated GIF of both (`--gif`).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from PIL import Image, ImageDraw

# pygame (under luma.emulator) greets on stdout, where `simulate --json` writes its state.
os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")

from .device import Device
from .effects import Effect
from .engine import Engine
from .hardware.glyphs import TINY
from .hardware.presenters import PanelPresenter
from .sides import Button, Pair, Side

GAP = 12                # pixels between the two panels in the composite
LABEL_H = 10            # a line of key help under them
KEYS_HELP = "A = left   SPACE = cube   L = right   ESC = quit"
TEXT_HELP = "a/l/space tap; A/L/C hold; q quit"


def compose(left: Image.Image, right: Image.Image, label: str = "") -> Image.Image:
    """Both panels as the players see them, left and right, with a label line under them."""
    width = left.width + GAP + right.width
    image = Image.new("1", (width, left.height + (LABEL_H if label else 0)))
    image.paste(left.convert("1"), (0, 0))
    image.paste(right.convert("1"), (left.width + GAP, 0))
    if label:
        ImageDraw.Draw(image).text((2, left.height + 1), label, font=TINY.font, fill=255)
    return image


def panel_images(device: Device) -> tuple[Image.Image, Image.Image]:
    """The last picture on each (dummy) panel of the device."""
    def image(panel: Any) -> Image.Image:
        dummy = panel.device
        if dummy is None or getattr(dummy, "image", None) is None:
            return Image.new("1", (128, 64))
        shown: Image.Image = dummy.image.copy()   # a copy: the service thread draws the next
        return shown
    return image(device.panels.left), image(device.panels.right)


class MockPresser:
    """Presses and releases the device's mock pins, as a finger would (buttons pull up: a press
    drives the pin low)."""

    def __init__(self, device: Device) -> None:
        self.pins = {b: device.factory.pin(gpio)
                     for b, gpio in device.config.button_pins.items()}
        self.hold_ns = device.config.hold_ns
        self._timers: list[threading.Timer] = []

    def set(self, button: Button, pressed: bool) -> None:
        pin = self.pins[button]
        if pressed:
            pin.drive_low()
        else:
            pin.drive_high()

    def press_for(self, button: Button, seconds: float) -> None:
        """Down now, up `seconds` later (the terminal's taps and holds)."""
        self.set(button, True)
        timer = threading.Timer(seconds, self.set, (button, False))
        timer.daemon = True
        timer.start()
        self._timers.append(timer)

    def tap(self, button: Button) -> None:
        self.press_for(button, 0.1)

    def hold(self, button: Button) -> None:
        self.press_for(button, self.hold_ns / 1e9 + 0.3)

    def close(self) -> None:
        for timer in self._timers:
            timer.cancel()


def window_available() -> bool:
    return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")
                or os.environ.get("SDL_VIDEODRIVER"))


def run_window(device: Device, stop: threading.Event, frame_rate: int = 30) -> None:
    """The window: both panels scaled up; keys press and release the buttons."""
    import pygame
    from luma.emulator.device import pygame as pygame_device  # type: ignore[import-untyped]

    left, right = panel_images(device)
    size = compose(left, right, KEYS_HELP).size
    window = pygame_device(width=size[0], height=size[1], mode="1", transform="identity",
                           scale=3, frame_rate=frame_rate)
    window._abort = lambda: False    # QUIT and ESC are handled here; luma's would sys.exit()
    pygame.display.set_caption("gammonclock simulator")
    presser = MockPresser(device)
    keys = {pygame.K_a: Button.LEFT, pygame.K_LEFT: Button.LEFT,
            pygame.K_l: Button.RIGHT, pygame.K_RIGHT: Button.RIGHT,
            pygame.K_SPACE: Button.CUBE, pygame.K_DOWN: Button.CUBE}
    try:
        while not stop.is_set():
            for event in pygame.event.get():
                if event.type == pygame.QUIT or (event.type == pygame.KEYDOWN
                                                 and event.key == pygame.K_ESCAPE):
                    return
                if event.type in (pygame.KEYDOWN, pygame.KEYUP) and event.key in keys:
                    presser.set(keys[event.key], event.type == pygame.KEYDOWN)
            window.display(compose(*panel_images(device), KEYS_HELP))   # paced at frame_rate
    finally:
        presser.close()
        pygame.quit()


# Quadrant blocks by (top-left, top-right, bottom-left, bottom-right) lit.
_QUADRANTS = " ▘▝▀▖▌▞▛▗▚▐▜▄▙▟█"


def text_frame(image: Image.Image, quadrants: bool = False) -> list[str]:
    """An image as text: two pixel rows per character with half blocks, or with `quadrants`
    two by two pixels per character (half as wide, for narrow terminals)."""
    mono = image.convert("1")

    def lit(x: int, y: int) -> int:
        return int(x < image.width and y < image.height and mono.getpixel((x, y)) != 0)

    rows = []
    for y in range(0, image.height, 2):
        if quadrants:
            row = [_QUADRANTS[lit(x, y) | lit(x + 1, y) << 1 | lit(x, y + 1) << 2
                              | lit(x + 1, y + 1) << 3] for x in range(0, image.width, 2)]
        else:
            row = ["█▀▄ "[(0 if lit(x, y) and lit(x, y + 1) else 1 if lit(x, y) else
                           2 if lit(x, y + 1) else 3)] for x in range(image.width)]
        rows.append("".join(row).rstrip())
    return rows


def half_size(image: Image.Image) -> Image.Image:
    """A panel at half its resolution, a pixel lit where any of the four it stands for is (a
    one-pixel stroke survives; the large digits stay legible, small print does not)."""
    grey = image.convert("1").convert("L")
    half = grey.resize((grey.width // 2, grey.height // 2), Image.Resampling.BOX)
    return half.point(lambda v: 255 if v else 0).convert("1")


COMPACT_GAP = 4         # columns between the two half-size panels


def _side_by_side(left: list[str], right: list[str], width: int, gap: int) -> list[str]:
    return [f"{a:<{width}}{' ' * gap}{b}".rstrip() for a, b in zip(left, right, strict=True)]


def compact_picture(left: Image.Image, right: Image.Image) -> list[str]:
    """Both panels at half size in quadrant blocks, side by side under their sides' names: 68
    columns by 17 rows for two 128×64 panels, so an 80×24 terminal holds them and the help."""
    width = left.width // 4
    panels = _side_by_side(text_frame(half_size(left), quadrants=True),
                           text_frame(half_size(right), quadrants=True), width, COMPACT_GAP)
    title = _side_by_side(["left (half size)"], ["right"], width, COMPACT_GAP)
    return title + panels


Layout = tuple[list[str], int]     # the lines, and the columns they take (a line may be shorter)


def layouts(left: Image.Image, right: Image.Image) -> list[Layout]:
    """The terminal pictures of both panels, largest first: side by side in half blocks, side by
    side in quadrant blocks, one above the other in quadrant blocks, then the compact one."""
    side_by_side = compose(left, right)
    half_width = (side_by_side.width + 1) // 2
    return [(text_frame(side_by_side), side_by_side.width),
            (text_frame(side_by_side, quadrants=True), half_width),
            (text_frame(left, quadrants=True) + [""] + text_frame(right, quadrants=True),
             (max(left.width, right.width) + 1) // 2),
            (compact_picture(left, right), left.width // 4 + COMPACT_GAP + right.width // 4)]


def size_of(layout: Layout) -> tuple[int, int]:
    """(columns, rows) a layout needs, with the help line under it."""
    picture, width = layout
    return max(width, len(TEXT_HELP)), len(picture) + 1


def terminal_picture(left: Image.Image, right: Image.Image, columns: int,
                     rows: int = 1000) -> list[str]:
    """Both panels in the largest layout that fits `columns` × `rows` (the help line included),
    or, where none fits, what size the terminal needs."""
    candidates = layouts(left, right)
    for layout in candidates:
        need_columns, need_rows = size_of(layout)
        if need_columns <= columns and need_rows <= rows:
            return layout[0]
    return too_small(columns, rows, size_of(candidates[-1]), size_of(candidates[1]))


def too_small(columns: int, rows: int, least: tuple[int, int],
              full: tuple[int, int]) -> list[str]:
    """What a terminal too small for any layout shows instead of the panels."""
    lines = [f"terminal {columns}x{rows} is too small:",
             f"the panels need {least[0]}x{least[1]} at half size,",
             f"{full[0]}x{full[1]} at full resolution."]
    return [line[:max(columns, 1)] for line in lines]


def run_terminal(device: Device, stop: threading.Event) -> None:
    """The terminal: the panels drawn in text; a key taps a button, its capital holds it."""
    import curses

    presser = MockPresser(device)
    taps = {"a": Button.LEFT, "l": Button.RIGHT, " ": Button.CUBE, "c": Button.CUBE}
    holds = {"A": Button.LEFT, "L": Button.RIGHT, "C": Button.CUBE}

    def loop(screen: Any) -> None:
        curses.curs_set(0)
        screen.timeout(100)          # redraw ten times a second; getch waits, it does not spin
        while not stop.is_set():
            screen.erase()
            rows, columns = screen.getmaxyx()
            picture = terminal_picture(*panel_images(device), columns, rows)
            for y, line in enumerate(picture + [TEXT_HELP]):
                try:
                    screen.addstr(y, 0, line)
                except curses.error:
                    pass             # the bottom-right cell, or a terminal of a line or two
            screen.refresh()
            key = screen.getch()
            if key < 0:
                continue
            char = chr(key) if key < 256 else ""
            if char in ("q", "\x1b"):
                return
            if char in taps:
                presser.tap(taps[char])
            elif char in holds:
                presser.hold(holds[char])

    try:
        curses.wrapper(loop)
    finally:
        presser.close()


def run_interactive(device: Device, text: bool | None = None) -> None:
    """Run the device's service on its own thread and the keyboard/screen here until quit."""
    stop = threading.Event()
    worker = threading.Thread(target=device.service.run, name="clock", daemon=True)
    worker.start()
    try:
        use_text = text if text is not None else not window_available()
        if not use_text:
            try:
                run_window(device, stop)
                return
            except Exception as exc:   # no usable display: fall back to text
                print(f"gammonclock: no window ({exc}); drawing in the terminal")
        run_terminal(device, stop)
    finally:
        stop.set()
        device.service.stop()
        worker.join(timeout=5)
        device.close()


def _shown_image(device: Any) -> Image.Image | None:
    """The picture a luma device last took (`capture` keeps it as `_last_image`)."""
    image = getattr(device, "_last_image", None)
    return image if image is not None else getattr(device, "image", None)


# --- recordings of scripted runs -------------------------------------------------------------

class FrameRecorder:
    """A presenter for scripted runs: the real panel presenter on luma devices that record.

    `frames`: a luma.emulator `capture` device per panel writes a PNG whenever its picture
    changes. `gif`: both panels composed into one animated GIF, each frame lasting as long as it
    stood in virtual time (divided by `speed`, capped, so a long think does not stall it).
    `language`: the panels' language as the device decides it (SPEC §15: the match's, else the
    device's), asked at each drawing as the device's presenter asks it; English without it.
    """

    def __init__(self, frames: Path | None = None, gif: Path | None = None,
                 speed: float = 10.0, longest_s: float = 2.0,
                 language: Callable[[], str] | None = None) -> None:
        from luma.core.device import dummy  # type: ignore[import-untyped]
        from luma.emulator.device import capture

        from .hardware.panels import Panel

        def device(side: Side) -> Any:
            if frames is None:
                return dummy(width=128, height=64, mode="1")
            frames.mkdir(parents=True, exist_ok=True)
            template = str(frames / f"{side.value}-{{0:06}}.png")
            return capture(width=128, height=64, mode="1", transform="identity", scale=1,
                           file_template=template)

        self.devices = Pair(device(Side.LEFT), device(Side.RIGHT))
        self.presenter = PanelPresenter(Pair(Panel.for_device(self.devices.left, "left"),
                                             Panel.for_device(self.devices.right, "right")),
                                        language=language)
        self.gif, self.speed, self.longest_s = gif, speed, longest_s
        self._frames: list[tuple[int, Image.Image]] = []

    def present(self, engine: Engine, t: int, effects: list[Effect]) -> int | None:
        wake = self.presenter.present(engine, t, effects)
        if self.gif is not None:
            images = [_shown_image(d) for d in self.devices]
            if images[0] is not None and images[1] is not None:
                frame = compose(images[0], images[1])
                if not self._frames or self._frames[-1][1].tobytes() != frame.tobytes():
                    self._frames.append((t, frame))
        return wake

    def close(self) -> None:
        if self.gif is None or not self._frames:
            return
        ends = [t for t, _ in self._frames[1:]] + [self._frames[-1][0] + 10**9]
        durations = [max(20, min(int((end - t) / 1e6 / self.speed), int(self.longest_s * 1000)))
                     for (t, _), end in zip(self._frames, ends, strict=True)]
        frames = [f.convert("L").resize((f.width * 2, f.height * 2), Image.Resampling.NEAREST)
                  for _, f in self._frames]
        frames[0].save(self.gif, save_all=True, append_images=frames[1:], duration=durations,
                       loop=0, format="GIF")

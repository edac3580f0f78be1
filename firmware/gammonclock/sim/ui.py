"""The simulator people use: the real device with its buttons pressed from the keyboard.

`gammonclock simulate --config FILE` builds the very device `gammonclock run` builds, with
gpiozero's MockFactory pins and luma `dummy` panels. The keyboard drives the mock pins (so every
press goes through the same ButtonBoard callbacks, queue, service loop and engine as on the Pi)
and the panels' pictures are shown side by side:

- in a window (luma.emulator's pygame device) with real key-down and key-up, so a hold is a hold;
- in a terminal without a window, drawn in text, where a key is a tap and its capital a hold
  (terminals report no key releases): the pictures in block characters where the terminal holds
  them (134×33 and up, or 64 columns by 68 rows), else what each panel shows written out as text
  from the same view its picture is drawn from (80×24 holds both side by side). The keys and the
  arbiter's control socket stay on the lines under the panels.

For scripted runs, `FrameRecorder` keeps a PNG of each panel whenever it changes (`--frames`) and
an animated GIF of both (`--gif`).
"""

from __future__ import annotations

import os
import textwrap
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from PIL import Image, ImageDraw

# pygame (under luma.emulator) greets on stdout, where `simulate --json` writes its state.
os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")

from gammonclock.core.effects import Effect
from gammonclock.core.engine import Engine
from gammonclock.device.build import Device
from gammonclock.hardware.glyphs import TINY
from gammonclock.hardware.presenters import PanelPresenter
from gammonclock.hardware.texts import say
from gammonclock.hardware.views import Clock, PanelView
from gammonclock.hardware.views import Layout as ViewLayout
from gammonclock.runtime.service import LoopFailed
from gammonclock.sides import Button, Pair, Side

GAP = 12                # pixels between the two panels in the composite
LABEL_H = 10            # a line of key help under them
KEYS_HELP = "A = left   SPACE = cube   L = right   ESC = quit"


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


def _side_by_side(left: list[str], right: list[str], width: int, gap: int) -> list[str]:
    return [f"{a:<{width}}{' ' * gap}{b}".rstrip() for a, b in zip(left, right, strict=True)]


Layout = tuple[list[str], int]     # the lines, and the columns they take (a line may be shorter)


def layouts(left: Image.Image, right: Image.Image) -> list[Layout]:
    """The terminal pictures of both panels, largest first: side by side in half blocks, side by
    side in quadrant blocks, one above the other in quadrant blocks."""
    side_by_side = compose(left, right)
    half_width = (side_by_side.width + 1) // 2
    return [(text_frame(side_by_side), side_by_side.width),
            (text_frame(side_by_side, quadrants=True), half_width),
            (text_frame(left, quadrants=True) + [""] + text_frame(right, quadrants=True),
             (max(left.width, right.width) + 1) // 2)]


def terminal_picture(left: Image.Image, right: Image.Image, columns: int,
                     rows: int = 1000) -> list[str] | None:
    """Both panels' pictures in the largest layout that fits `columns` × `rows`, or None."""
    for picture, width in layouts(left, right):
        if width <= columns and len(picture) <= rows:
            return picture
    return None


# --- the panels as text, for a terminal too small for their pictures ---------------------------
#
# Each panel's text is written from the very view its picture is drawn from (the presenter's
# `PanelView`, in the panel's language): the same name, score, reserves, delay, cube, dice,
# prompts, titles, menus and notices, in lines of text instead of pixels.

Shown = tuple[PanelView, str] | None     # a panel's view and its language; None before the first
MARKER = "▶"                   # the turn marker, as on the panel
DICE = "⚀⚁⚂⚃⚄⚅"               # a die shows its pips, never a number (as on the panel)
TEXT_WIDTH = (26, 40)          # the columns inside a panel's box: at least (a status line), at most
TEXT_ROWS = 9                  # lines inside a box at least, so it keeps its height as views change
TEXT_GAP = 2                   # columns between the two boxes side by side
KEYS_TEXT = "a/l: tap left/right  space: tap cube  A/L/C: hold (C: pause)  q: quit"


def _clip(text: str, width: int) -> str:
    return text if len(text) <= width else text[:max(width - 1, 0)].rstrip() + "…"


def _ends(left: str, right: str, width: int) -> str:
    """`left` at the start and `right` at the end of a line (`left` cut to make room)."""
    right = _clip(right, width)
    left = _clip(left, width - len(right) - (1 if right and left else 0))
    return left + " " * (width - len(left) - len(right)) + right


def _wrap(text: str, width: int) -> list[str]:
    return textwrap.wrap(text, width, break_on_hyphens=False) or [""]


def _dice(values: tuple[int, ...]) -> str:
    return " ".join(DICE[v - 1] if 1 <= v <= 6 else str(v) for v in values)


def _clock_extras(clock: Clock, lang: str) -> list[str]:
    """What the panel draws beside a reserve: the running delay, the cube, the dice."""
    extras = [say("tc.delay", lang, s=clock.delay)] if clock.delay else []
    if clock.cube:
        extras.append(f"{say('arbiter.cube', lang)} {clock.cube}")
    if clock.dice:
        extras.append(_dice(clock.dice))
    return extras


def _marker(clock: Clock) -> str:
    return MARKER if clock.running else " "


def view_text(view: PanelView, lang: str, width: int) -> list[str]:
    """The lines of text that say what `view` shows, each at most `width` columns: the top row
    (the facing player, the score), then the layout's own lines, then the notice."""
    lines = [_ends(view.header, view.header_right, width)]
    if view.layout is ViewLayout.CLOCK:
        if view.own is not None:
            own = view.own
            lines += ["", _ends(f"{_marker(own)} {own.reserve}",
                                "  ".join(_clock_extras(own, lang)), width)]
        if view.opening:
            lines.append(_clip("  ".join(f"{owner} {_dice((value,))}"
                                         for owner, value in view.opening), width))
        lines.append("")
        if view.opponent is not None:
            other = view.opponent
            name, extras = f"{_marker(other)} {other.name}", _clock_extras(other, lang)
            whole = "  ".join([*extras, other.reserve])
            if len(name) + 1 + len(whole) <= width or not extras:
                lines.append(_ends(name, whole, width))
            else:            # the name whole, the delay, cube and dice on a line of their own
                lines += [_ends(name, other.reserve, width), _ends("", "  ".join(extras), width)]
        for status in view.status:
            lines += _wrap(status, width)
    else:
        lines += ["", _clip(f"[ {view.title} ]", width).center(width).rstrip()]
        if view.layout is ViewLayout.COUNTDOWN:
            lines.append(view.big.center(width).rstrip())
        elif view.layout is ViewLayout.TEXT:
            lines += [part for line, _ in view.lines for part in _wrap(line, width)]
        else:
            lines += [_ends(left, right, width) for left, right in view.lines]
        if view.footer:
            lines.append(_clip(view.footer, width).center(width).rstrip())
    if view.notice:
        notice = _wrap(view.notice, width - 2)
        lines += ["", *(("» " if i == 0 else "  ") + part for i, part in enumerate(notice))]
    return [line.rstrip() for line in lines]


def _boxed(label: str, lines: list[str], width: int, height: int) -> list[str]:
    top = f"┌ {label} " + "─" * max(width - len(label) - 2, 0) + "┐"
    body = [f"│{line:<{width}}│" for line in lines + [""] * (height - len(lines))]
    return [top, *body, "└" + "─" * width + "┘"]


def text_layouts(left: Shown, right: Shown, columns: int) -> list[Layout]:
    """Both panels as text in boxes, as wide as `columns` allows: side by side, else one above
    the other; none where even one box of the least width does not fit."""
    def boxes(width: int) -> tuple[list[str], list[str]]:
        texts = [view_text(*shown, width) if shown is not None else [] for shown in (left, right)]
        height = max(TEXT_ROWS, *(len(text) for text in texts))
        return (_boxed("left", texts[0], width, height), _boxed("right", texts[1], width, height))

    least, most = TEXT_WIDTH
    found: list[Layout] = []
    width = min(most, (columns - TEXT_GAP) // 2 - 2)
    if width >= least:
        a, b = boxes(width)
        found.append((_side_by_side(a, b, width + 2, TEXT_GAP), 2 * (width + 2) + TEXT_GAP))
    width = min(most, columns - 2)
    if width >= least:
        a, b = boxes(width)
        found.append((a + b, width + 2))
    return found


def status_lines(columns: int, socket: Path | str | None) -> list[str]:
    """The keys, and the arbiter's control socket (its path is printed before the screen covers
    it: here it stays in view), on one line where they fit, else on lines of their own (a long
    path broken across lines, never cut)."""
    width = max(columns, 1)
    keys = textwrap.wrap(KEYS_TEXT, width)
    if socket is None:
        return keys
    where = f"arbiter socket: {socket}"
    if len(KEYS_TEXT) + 3 + len(where) <= columns:
        return [f"{KEYS_TEXT}   {where}"]
    return keys + [where[i:i + width] for i in range(0, len(where), width)]


def terminal_screen(images: tuple[Image.Image, Image.Image], views: tuple[Shown, Shown],
                    columns: int, rows: int, socket: Path | str | None = None) -> list[str]:
    """What the terminal shows: both panels' pictures where the terminal holds one of their
    layouts, else both panels as text (the same views), with the keys and the socket under
    them; where neither fits, what size the terminal needs."""
    status = status_lines(columns, socket)
    room = rows - len(status)
    picture = terminal_picture(*images, columns, room)
    if picture is not None:
        return picture + status
    for lines, width in text_layouts(*views, columns):
        if width <= columns and len(lines) <= room:
            return lines + status
    least_columns = TEXT_WIDTH[0] + 2
    least = text_layouts(*views, least_columns)[-1][0]
    picture, picture_columns = layouts(*images)[1]
    need = ((least_columns, len(least) + len(status_lines(least_columns, socket))),
            (picture_columns, len(picture) + len(status_lines(picture_columns, socket))))
    return too_small(columns, rows, *need) + status


def too_small(columns: int, rows: int, least: tuple[int, int],
              full: tuple[int, int]) -> list[str]:
    """What a terminal too small for any layout shows instead of the panels."""
    lines = [f"terminal {columns}x{rows} is too small:",
             f"the panels need {least[0]}x{least[1]} as text,",
             f"{full[0]}x{full[1]} as pictures."]
    return [line[:max(columns, 1)] for line in lines]


def panel_presenter(device: Device) -> PanelPresenter | None:
    """The device's panel presenter (whose views the terminal writes as text)."""
    return next((p for p in device.service.presenters if isinstance(p, PanelPresenter)), None)


def shown_views(device: Device) -> tuple[Shown, Shown]:
    presenter = panel_presenter(device)
    if presenter is None:
        return None, None
    return presenter.shown_both()       # both of one drawing, never one old and one new


def run_terminal(device: Device, stop: threading.Event, socket: Path | str | None = None) -> None:
    """The terminal: the panels drawn in text (their pictures in blocks where the terminal
    holds them, else what they show written out); a key taps a button, its capital holds it.
    The keys and the arbiter's `socket` stay on the lines under the panels."""
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
            screen_lines = terminal_screen(panel_images(device), shown_views(device),
                                           columns, rows, socket)
            for y, line in enumerate(screen_lines):
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


def run_interactive(device: Device, text: bool | None = None,
                    socket: Path | str | None = None) -> None:
    """Run the device's service on its own thread and the keyboard/screen here until quit
    (`socket`: the arbiter's, shown under the panels in a terminal). Raises LoopFailed when the
    clock's loop failed (the screen closes then)."""
    stop = threading.Event()

    def clock() -> None:
        try:
            device.service.run()
        except LoopFailed:          # logged and shown by the loop: the screen closes, and the
            stop.set()              # caller raises it (`device.service.failure`)
    worker = threading.Thread(target=clock, name="clock", daemon=True)
    worker.start()
    try:
        use_text = text if text is not None else not window_available()
        if not use_text:
            try:
                run_window(device, stop)
                return
            except Exception as exc:   # no usable display: fall back to text
                print(f"gammonclock: no window ({exc}); drawing in the terminal")
        run_terminal(device, stop, socket)
    finally:
        stop.set()
        device.service.stop()
        worker.join(timeout=5)
        device.close()
    if isinstance(device.service.failure, LoopFailed):
        raise device.service.failure


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

        from gammonclock.hardware.panels import Panel

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

"""The picture of a `PanelView`: a 128×64 1-bit PIL image in the bundled bitmap font.

`render` draws inside a blank margin that `panels.py` shifts the picture within (burn-in); equal
views render to equal images, so the presenter draws a view only when it changed.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from functools import lru_cache

from PIL import Image, ImageDraw

from . import glyphs
from .glyphs import BIG, MEDIUM, SMALL, TINY, Face
from .views import HEIGHT, INNER_H, INNER_W, MARGIN, WIDTH, Clock, Layout, PanelView

ON, OFF = 255, 0   # a "1" image stores a lit pixel as 255; drawing with 1 would store 1, which
                   # `tobytes` hides but `ImageChops.difference` against a loaded PNG does not


_PAD = 4       # room around a stamp for a glyph drawn outside its cell


@lru_cache(maxsize=2048)
def _stamp(text: str, face: Face) -> Image.Image:
    """`text` drawn once as a mask, each run of Latin or Cyrillic in the face's font for it (a
    run starts where the cells before it end: every face is monospaced, Cyrillic too). A panel
    draws the same few hundred strings again and again (names, labels, a reserve's digits), and
    PIL's text drawing was most of a frame's cost; a paste through a cached mask is a tenth."""
    stamp = Image.new("1", (face.span(text) + 2 * _PAD, face.height + 2 * _PAD), OFF)
    draw = ImageDraw.Draw(stamp)
    x = _PAD
    for font, run in face.runs(glyphs.printable(text, face)):
        draw.text((x, _PAD), run, font=font, fill=ON)
        x += face.span(run)
    return stamp


class _Canvas:
    """Drawing in the area inside the margin (x 0..INNER_W-1, y 0..INNER_H-1)."""

    def __init__(self) -> None:
        self.image = Image.new("1", (WIDTH, HEIGHT), OFF)
        self.draw = ImageDraw.Draw(self.image)

    def text(self, x: int, y: int, text: str, face: Face, fill: int = ON) -> None:
        """`text` from (x, y), stamped from its cached picture (`_stamp`)."""
        if text:
            self.image.paste(fill, (MARGIN + x - _PAD, MARGIN + y - _PAD), _stamp(text, face))

    def right(self, x_end: int, y: int, text: str, face: Face, fill: int = ON) -> int:
        """Text ending at `x_end`; returns where it starts."""
        x = x_end - face.span(text)
        self.text(x, y, text, face, fill)
        return x

    def centred(self, y: int, text: str, face: Face, fill: int = ON) -> None:
        text = glyphs.clip(text, face, INNER_W)
        self.text((INNER_W - face.span(text)) // 2, y, text, face, fill)

    def box(self, x0: int, y0: int, x1: int, y1: int, filled: bool = True) -> None:
        self.draw.rectangle((MARGIN + x0, MARGIN + y0, MARGIN + x1, MARGIN + y1),
                            fill=ON if filled else None, outline=ON)

    def marker(self, x: int, y_top: int, height: int) -> None:
        """The turn marker: a small solid arrow pointing right, `height` rows tall (odd)."""
        half = height // 2
        self.draw.polygon([(MARGIN + x, MARGIN + y_top), (MARGIN + x, MARGIN + y_top + 2 * half),
                           (MARGIN + x + half + 2, MARGIN + y_top + half)], fill=ON)

    def cube(self, x_end: int, y: int, size: int, text: str, face: Face) -> int:
        """The doubling cube: a square with rounded corners and a shadow on its right and bottom
        edges (a cube, not a box), its value centred in it; ends at `x_end`, returns its left
        edge."""
        width = max(size, face.span(text) + 6)
        x0, x1, y1 = x_end - width + 1, x_end - 1, y + size - 2
        self.draw.rounded_rectangle((MARGIN + x0, MARGIN + y, MARGIN + x1, MARGIN + y1),
                                    radius=2, outline=ON)
        self.draw.line((MARGIN + x0 + 2, MARGIN + y1 + 1, MARGIN + x_end, MARGIN + y1 + 1),
                       fill=ON)                                  # the shadow: bottom
        self.draw.line((MARGIN + x_end, MARGIN + y + 2, MARGIN + x_end, MARGIN + y1 + 1),
                       fill=ON)                                  # and right
        inner = size - 1
        self.text(x0 + (x1 - x0 + 1 - face.span(text)) // 2 + 1,
                  y + (inner - face.height) // 2 + (1 if face is SMALL else 0), text, face)
        return x0

    def die(self, x: int, y: int, value: int) -> None:
        """One die of a roll: a 9×9 face with rounded corners and its pips (never a number, so a
        roll is not read as the cube or the delay)."""
        self.draw.rounded_rectangle((MARGIN + x, MARGIN + y, MARGIN + x + DIE - 1,
                                     MARGIN + y + DIE - 1), radius=1, outline=ON)
        for px, py in PIPS.get(value, ()):
            self.draw.point((MARGIN + x + px, MARGIN + y + py), fill=ON)

    def dice(self, x_end: int, y: int, values: tuple[int, ...]) -> int:
        """The dice of a roll side by side, ending at `x_end`; returns their left edge."""
        x = x_end - len(values) * (DIE + DIE_GAP) + DIE_GAP
        for i, value in enumerate(values):
            self.die(x + i * (DIE + DIE_GAP), y, value)
        return x


DIE, DIE_GAP = 9, 2
# Pips by value on a 9×9 face (one pixel each, on a 3×3 grid inside the outline).
_L, _M, _R = 2, 4, 6
PIPS: dict[int, tuple[tuple[int, int], ...]] = {
    1: ((_M, _M),),
    2: ((_L, _L), (_R, _R)),
    3: ((_L, _L), (_M, _M), (_R, _R)),
    4: ((_L, _L), (_R, _L), (_L, _R), (_R, _R)),
    5: ((_L, _L), (_R, _L), (_M, _M), (_L, _R), (_R, _R)),
    6: ((_L, _L), (_L, _M), (_L, _R), (_R, _L), (_R, _M), (_R, _R)),
}

# The clock screen, laid out so that a press changes as few bytes on the bus as it can: what a
# press changes on a line (the turn marker and the running delay, side by side at its left end)
# sits in one narrow cell that lies within one 8-row page of the controller at the picture's
# home position; the reserve, the name and the cube never move when the turn passes.
RESERVE_X = 18          # the own reserve, after the running cell
RUN_CELL = 16           # the running cell's width: the marker (6) and two 5x8 digits
OWN_CELL_Y = 15         # the own running cell's rows: 15..21, beside the digits' middle
NAME_X = 19             # a name on the opponent's line, after its running cell
DICE_ROW_Y = 29         # the own roll, and the opening roll, under the own reserve


def _draw_header(c: _Canvas, header: str, header_right: str) -> None:
    right = glyphs.clip(header_right, TINY, INNER_W)
    c.right(INNER_W, 0, right, TINY)
    room = INNER_W - TINY.span(right) - (TINY.width if right else 0)
    c.text(0, 0, glyphs.clip(header, TINY, room), TINY)


def _draw_running(c: _Canvas, y_top: int, clock: Clock) -> None:
    """The running cell: the turn marker (7 rows) and the delay's whole seconds in 5x8 digits
    right of it. A thin arrow and small digits, no box: nothing like the cube."""
    if clock.running:
        c.marker(0, y_top, 7)
    if clock.delay:
        c.text(7, y_top - 1, clock.delay, TINY)


def _draw_own(c: _Canvas, clock: Clock) -> None:
    """The own clock but its running cell (a part of its own): the reserve, cube and dice."""
    if len(clock.reserve) <= 5:
        c.text(RESERVE_X, 3, clock.reserve, BIG)
    else:                       # H:MM:SS does not fit in the large digits
        c.text(RESERVE_X + 2, 8, clock.reserve, MEDIUM)   # clear of a two-digit delay
    if clock.cube:
        c.cube(INNER_W - 1, 10, 16, clock.cube, SMALL)
    if clock.dice:
        c.dice(INNER_W, DICE_ROW_Y, clock.dice)


def _line_cell_y(y: int, face: Face) -> int:
    """The top of the running cell of a line at `y` in `face`."""
    return y + (face.height - 7) // 2 + (1 if face is SMALL else 0)


def _draw_line(c: _Canvas, y: int, clock: Clock, face: Face) -> None:
    """The opponent's line but its running cell (a part of its own): the name, then from the
    right the reserve, the cube and the dice of their roll."""
    x = c.right(INNER_W, y, clock.reserve, face)
    if clock.cube:
        size = 14 if face is SMALL else 10
        x = c.cube(x - 3, y + (face.height - size) // 2, size, clock.cube, face)
    if clock.dice:
        x = c.dice(x - 3, y + (face.height - DIE) // 2 + (1 if face is SMALL else 0),
                   clock.dice)
    c.text(NAME_X, y, glyphs.clip(clock.name, face, x - 3 - NAME_X), face)


def _draw_opening(c: _Canvas, opening: tuple[tuple[str, int], ...]) -> None:
    """The opening roll under the own reserve: each die after the name (or colour) it is of."""
    room = INNER_W // max(1, len(opening))
    for i, (owner, value) in enumerate(opening):
        x = i * room
        label = glyphs.clip(owner, TINY, room - DIE - 8)
        c.text(x, DICE_ROW_Y + 1, label, TINY)
        c.die(x + TINY.span(label) + TINY.width - 1, DICE_ROW_Y + 1, value)


def _draw_notice(c: _Canvas, text: str) -> None:
    c.box(0, 38, INNER_W - 1, INNER_H - 1)
    lines = glyphs.wrap(glyphs.printable(text, TINY), TINY.chars(INNER_W - 4), 2)
    for i, line in enumerate(lines):
        c.centred((45 if len(lines) == 1 else 41 + 9 * i), line, TINY, fill=OFF)


def _draw_title(c: _Canvas, title: str) -> None:
    c.box(0, 10, INNER_W - 1, 22)
    c.centred(11, title, SMALL, fill=OFF)


def render(view: PanelView) -> Image.Image:
    """The 128×64 1-bit picture of `view`, drawn inside a blank margin of `MARGIN` pixels."""
    c = _Canvas()
    paint(c, view)
    return c.image


def paint(c: _Canvas, view: PanelView) -> None:
    """Draw `view` on `c` (a fresh canvas; `compose.py` passes one that records the strokes):
    its parts, in order."""
    for _, draw in parts(view):
        draw(c)


Part = tuple[Hashable | None, Callable[[_Canvas], None]]


def parts(view: PanelView) -> list[Part]:
    """What `paint` draws, in order, as parts: each drawn by its callable from nothing but what
    its key holds, so that equal keys draw equal pixels (`compose.py` keeps a part's pixels by
    its key: a press changes a clock's digits and the turn markers, and the other parts of
    the frame are the ones drawn before). A key of None: not kept (the screens other than the
    clock's, drawn whole as one part)."""
    out: list[Part] = [(("header", view.header, view.header_right),
                        lambda c: _draw_header(c, view.header, view.header_right))]
    if view.layout is Layout.CLOCK:
        own = view.own
        if own is not None:
            out.append(_running_part(OWN_CELL_Y, own))
            out.append((("own", own.reserve, own.cube, own.dice), lambda c: _draw_own(c, own)))
        opening = view.opening
        if opening:
            out.append((("opening", opening), lambda c: _draw_opening(c, opening)))
        if view.status:
            rows: list[Clock | str] = [view.opponent] if view.opponent else []
            rows += view.status
            for i, row in enumerate(rows[:2]):
                y = 41 + 10 * i
                if isinstance(row, Clock):
                    out += _line_parts(y, row, TINY)
                else:
                    out.append((("status", y, row), _status_line(y, row)))
        elif view.opponent is not None:
            out += _line_parts(44, view.opponent, SMALL)
    else:
        out.append((None, lambda c: _paint_screen(c, view)))
    notice = view.notice
    if notice:
        out.append((("notice", notice), lambda c: _draw_notice(c, notice)))
    return out


def _running_part(y_top: int, clock: Clock) -> Part:
    return (("running", y_top, clock.running, clock.delay),
            lambda c: _draw_running(c, y_top, clock))


def _line_parts(y: int, clock: Clock, face: Face) -> list[Part]:
    return [_running_part(_line_cell_y(y, face), clock),
            (("line", y, face.name, clock.reserve, clock.cube, clock.dice, clock.name),
             lambda c: _draw_line(c, y, clock, face))]


def _status_line(y: int, row: str) -> Callable[[_Canvas], None]:
    return lambda c: c.text(0, y, glyphs.clip(row, TINY, INNER_W), TINY)


def _paint_screen(c: _Canvas, view: PanelView) -> None:
    """The screens other than the clock's, under the header: a title band and what it says."""
    _draw_title(c, view.title)
    if view.layout is Layout.COUNTDOWN:
        text = glyphs.clip(view.big, BIG, INNER_W)
        c.text((INNER_W - BIG.span(text)) // 2, 25, text, BIG)
    elif view.layout is Layout.TEXT:
        for i, (line, _) in enumerate(view.lines[:4]):
            c.text(0, 25 + 9 * i, glyphs.clip(line, TINY, INNER_W), TINY)
    else:
        for i, (left, right) in enumerate(view.lines[:2]):
            y = 25 + 12 * i
            right = glyphs.clip(right, SMALL, INNER_W)
            x = c.right(INNER_W, y, right, SMALL)
            c.text(0, y, glyphs.clip(left, SMALL, x - (SMALL.width if right else 0)), SMALL)
        if view.footer and view.layout is Layout.MENU:
            c.centred(51, view.footer, TINY)     # what each button does: 24 characters
        elif view.footer:
            c.centred(48, view.footer, SMALL)


def shifted(image: Image.Image, offset: tuple[int, int]) -> Image.Image:
    """`image` moved by `offset`, on black; what leaves the frame is the blank margin."""
    if offset == (0, 0):
        return image
    frame = Image.new(image.mode, image.size, 0)
    frame.paste(image, offset)
    return frame

"""The picture of a `PanelView`: a 128×64 1-bit PIL image in the bundled bitmap font.

`render` draws inside a blank margin that `panels.py` shifts the picture within (burn-in); equal
views render to equal images, so the presenter draws a view only when it changed.
"""

from __future__ import annotations

from PIL import Image, ImageDraw

from . import glyphs
from .glyphs import BIG, MEDIUM, SMALL, TINY, Face
from .views import HEIGHT, INNER_H, INNER_W, MARGIN, WIDTH, Clock, Layout, PanelView

ON, OFF = 255, 0   # a "1" image stores a lit pixel as 255; drawing with 1 would store 1, which
                   # `tobytes` hides but `ImageChops.difference` against a loaded PNG does not


class _Canvas:
    """Drawing in the area inside the margin (x 0..INNER_W-1, y 0..INNER_H-1)."""

    def __init__(self) -> None:
        self.image = Image.new("1", (WIDTH, HEIGHT), OFF)
        self.draw = ImageDraw.Draw(self.image)

    def text(self, x: int, y: int, text: str, face: Face, fill: int = ON) -> None:
        """`text` from (x, y), each run of Latin or Cyrillic in the face's font for it; a run
        starts where the cells before it end (every face is monospaced, Cyrillic too)."""
        for font, run in face.runs(glyphs.printable(text, face)):
            self.draw.text((MARGIN + x, MARGIN + y), run, font=font, fill=fill)
            x += face.span(run)

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

    def triangle(self, x: int, y_mid: int, half: int) -> None:
        """The turn marker: a solid triangle pointing right at the running clock."""
        self.draw.polygon([(MARGIN + x, MARGIN + y_mid - half), (MARGIN + x, MARGIN + y_mid + half),
                           (MARGIN + x + half, MARGIN + y_mid)], fill=ON)

    def badge(self, x_end: int, y: int, text: str, face: Face, filled: bool) -> int:
        """A number in a box ending at `x_end` (filled: the delay; outlined: the cube);
        returns its left edge."""
        x0 = x_end - face.span(text) - 4
        self.box(x0, y, x_end - 1, y + face.height, filled)
        self.text(x0 + 2, y, text, face, fill=OFF if filled else ON)
        return x0


def _draw_header(c: _Canvas, view: PanelView) -> None:
    right = glyphs.clip(view.header_right, TINY, INNER_W)
    c.right(INNER_W, 0, right, TINY)
    room = INNER_W - TINY.span(right) - (TINY.width if right else 0)
    c.text(0, 0, glyphs.clip(view.header, TINY, room), TINY)


def _draw_own(c: _Canvas, clock: Clock) -> None:
    if clock.running:
        c.triangle(0, 20, 7)
    if len(clock.reserve) <= 5:
        c.text(10, 3, clock.reserve, BIG)
    else:                       # H:MM:SS does not fit in the large digits
        c.text(10, 8, clock.reserve, MEDIUM)
    if clock.delay:
        c.badge(INNER_W, 9, clock.delay, SMALL, filled=True)
    if clock.cube:
        c.badge(INNER_W, 23, clock.cube, SMALL, filled=False)


def _draw_line(c: _Canvas, y: int, clock: Clock, face: Face) -> None:
    """The opponent's line: marker, name, then cube, delay and reserve from the right."""
    half = (face.height - 4) // 2
    if clock.running:
        c.triangle(0, y + face.height // 2 - 1, half)
    x = c.right(INNER_W, y, clock.reserve, face)
    if clock.delay:
        x = c.badge(x - 3, y, clock.delay, face, filled=True)
    if clock.cube:
        x = c.badge(x - 3, y, clock.cube, face, filled=False)
    left = half + 3
    c.text(left, y, glyphs.clip(clock.name, face, x - 3 - left), face)


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
    _draw_header(c, view)
    if view.layout is Layout.CLOCK:
        if view.own is not None:
            _draw_own(c, view.own)
        if view.status:
            rows: list[Clock | str] = [view.opponent] if view.opponent else []
            rows += view.status
            for i, row in enumerate(rows[:2]):
                y = 41 + 10 * i
                if isinstance(row, Clock):
                    _draw_line(c, y, row, TINY)
                else:
                    c.text(0, y, glyphs.clip(row, TINY, INNER_W), TINY)
        elif view.opponent is not None:
            _draw_line(c, 44, view.opponent, SMALL)
    else:
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
            if view.footer:
                c.centred(48, view.footer, SMALL)
    if view.notice:
        _draw_notice(c, view.notice)
    return c.image

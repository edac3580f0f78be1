"""A panel's frame in the controller's bytes, composed from cached strokes instead of drawn anew.

`drawing.render` draws a view on a fresh PIL image; the panel then shifts it (burn-in), packs it
and the driver transposes it into the controller's pages and compares it with the glass — about
a third of a millisecond a panel here, most of a press's CPU. Yet a press changes two or three
strokes of a frame (the turn marker, a delay's digits), and every stroke is one of a few hundred.

So a `Picture` holds a view, and `Picture.pages_at(shift)` gives the frame as the controller
holds it (8 pages of 128 bytes, page-major, bit i of a byte = row 8·page + i) without drawing it:
`drawing.paint` runs on a canvas that only records its strokes (a text's paste, a rectangle, a
polygon, ...), and each stroke's mask — the pixels it sets, drawn alone on black and packed as
one integer of 8 192 bits — is drawn once and cached. Painting is sequential and every stroke
sets the pixels of its mask to one colour, whatever was under them: so the frame is the strokes
applied in order, `frame | mask` for a lit stroke and `frame & ~mask` for a dark one (a notice's
text on its box), exactly the picture `render` draws. A stroke of two colours (none today) makes
the picture fall back to `render`. `tests/hardware/test_compose.py` checks the equality pixel
for pixel.

A press changes a clock's digits and the turn markers and leaves the rest of the frame as it
was: so the strokes come in parts (`drawing.parts`: the header, each running cell, the own
clock, the opponent's line, a status line, a notice), each keyed by what it shows, and a part's
pixels are kept by its key — one mask when its strokes are all lit (ORed in, whatever was drawn
before it), else its masks in order. A press finds its parts already made (the delay's first
second and the marker of every turn, the reserves last shown) and composes a frame from about
eight integers. Masks are kept unshifted, parts per shift: a part missing at a new shift (one
every three minutes) is its masks moved as `drawing.shifted` moves a picture (`shifted_frame`:
a few operations on the integer), not drawn again.

`Picture.image_at(shift)` is the PIL picture for devices that take one (luma's `dummy`, the
emulator).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Any

from PIL import Image

from .drawing import OFF, ON, _Canvas, paint, parts, render, shifted
from .glyphs import Face
from .screens import HEIGHT, WIDTH, PanelView

FRAME_BYTES = WIDTH * HEIGHT // 8
CACHED_STROKES = 512         # masks kept (about 1.2 kB each): a match's strokes recur
CACHED_PARTS = 512           # parts' pixels kept (at most as much each)

Shift = tuple[int, int]
Pixels = int | tuple[tuple[int, int], ...]   # a part's: one lit mask, or (colour, mask) in order
Stroke = tuple[Any, ...]     # ("text", x, y, text, face's name, colour) or
                             # ("draw", method, args, kwargs' items)


def _frozen(args: tuple[Any, ...]) -> tuple[Any, ...]:
    """A drawing call's arguments hashable: a list (a polygon's points, each a tuple) as a
    tuple."""
    return tuple(tuple(a) if isinstance(a, list) else a for a in args)


def _xy(xy: Any) -> tuple[Any, ...]:
    """A drawing call's coordinates hashable (a list of points as a tuple)."""
    return xy if type(xy) is tuple else tuple(xy)


class _StrokeRecorder:
    """Stands in for `ImageDraw.Draw`: every call is recorded as a stroke, nothing drawn."""

    def __init__(self, strokes: list[Stroke]) -> None:
        self._strokes = strokes

    def __getattr__(self, method: str) -> Any:
        def record(*args: Any, **kwargs: Any) -> None:
            self._strokes.append(("draw", method, _frozen(args), tuple(kwargs.items())))
        return record

    # The calls `drawing.py` makes, recorded without a closure each.
    def rectangle(self, xy: Any, **kwargs: Any) -> None:
        self._strokes.append(("draw", "rectangle", (_xy(xy),), tuple(kwargs.items())))

    def rounded_rectangle(self, xy: Any, **kwargs: Any) -> None:
        self._strokes.append(("draw", "rounded_rectangle", (_xy(xy),), tuple(kwargs.items())))

    def line(self, xy: Any, **kwargs: Any) -> None:
        self._strokes.append(("draw", "line", (_xy(xy),), tuple(kwargs.items())))

    def point(self, xy: Any, **kwargs: Any) -> None:
        self._strokes.append(("draw", "point", (_xy(xy),), tuple(kwargs.items())))

    def polygon(self, xy: Any, **kwargs: Any) -> None:
        self._strokes.append(("draw", "polygon", (_xy(xy),), tuple(kwargs.items())))


class _Recorder(_Canvas):
    """A canvas recording what `paint` draws on it, in order."""

    def __init__(self) -> None:   # no image: nothing is drawn
        self.strokes: list[Stroke] = []
        self.draw = _StrokeRecorder(self.strokes)  # type: ignore[assignment]

    def text(self, x: int, y: int, text: str, face: Face, fill: int = ON) -> None:
        if text:      # the face by its name: a str hashes once, a dataclass at every lookup
            _faces.setdefault(face.name, face)
            self.strokes.append(("text", x, y, text, face.name, fill))


def strokes_of(view: PanelView) -> list[Stroke]:
    """The strokes `render(view)` draws, in order."""
    recorder = _Recorder()
    paint(recorder, view)
    return recorder.strokes


def _colour(stroke: Stroke) -> int | None:
    """The one colour a stroke sets its pixels to (None: two colours, or none)."""
    if stroke[0] == "text":
        return int(stroke[5])
    colours = {v for k, v in stroke[3] if k in ("fill", "outline") and v is not None}
    return colours.pop() if len(colours) == 1 else None


def _drawn_alone(stroke: Stroke) -> Image.Image:
    """The stroke's mask: it alone, lit, on a black canvas."""
    canvas = _Canvas()
    if stroke[0] == "text":
        _, x, y, text, face, _ = stroke
        canvas.text(x, y, text, _faces[face], ON)
    else:
        _, method, args, kwargs = stroke
        lit = {k: (ON if k in ("fill", "outline") and v is not None else v) for k, v in kwargs}
        getattr(canvas.draw, method)(*args, **lit)
    return canvas.image


def frame_bytes(image: Image.Image) -> bytes:
    """A 128×64 picture as the controller's pages, page-major (`partial.page_bytes` joined)."""
    pages = image.height // 8
    columns = image.transpose(Image.Transpose.TRANSPOSE).tobytes("raw", "1;R")
    return b"".join(columns[p::pages] for p in range(pages))


_faces: dict[str, Face] = {}
# The masks by stroke, unshifted, the least recently used dropped first when full (a dict keeps
# its order of insertion; a mask used is inserted again): what every press draws (the turn
# marker, the delay's first digits, the header) stays, the reserves' passing digits leave.
_masks: dict[Stroke, tuple[int, int]] = {}    # (colour, mask)
# The pixels of the parts of the frames (`drawing.parts`) by key and shift, likewise: a clock
# press changes the turn markers and a clock's digits, and finds every part it shows drawn.
_parts: dict[tuple[Hashable, Shift], Pixels] = {}


def _mask(stroke: Stroke) -> tuple[int, int] | None:
    """The stroke's colour and mask, unshifted (None: a stroke of two colours)."""
    known = _masks.pop(stroke, None)
    if known is not None:
        _masks[stroke] = known        # the newest again: what every press draws stays cached
        return known
    colour = _colour(stroke)
    if colour is None:
        return None
    known = (colour, int.from_bytes(frame_bytes(_drawn_alone(stroke)), "little"))
    if len(_masks) >= CACHED_STROKES:       # (another thread may have dropped it first)
        _masks.pop(next(iter(_masks)), None)
    _masks[stroke] = known
    return known


# A frame as one integer (`int.from_bytes(frame, "little")`): bit 8·(128·page + column) + i is
# row 8·page + i of the column. Moving it by a burn-in shift (`drawing.shifted`: a translation,
# what leaves the frame lost) is a few operations on it: within each byte and across to the
# same column of the next page for a row, a byte for a column.
_PAGE_BITS = 8 * WIDTH
_ALL = (1 << 8 * FRAME_BYTES) - 1
_BIT7 = int.from_bytes(b"\x80" * FRAME_BYTES, "little")
_BIT0 = int.from_bytes(b"\x01" * FRAME_BYTES, "little")
_FIRST_COLUMN = int.from_bytes((b"\xff" + bytes(WIDTH - 1)) * (HEIGHT // 8), "little")
_LAST_COLUMN = int.from_bytes((bytes(WIDTH - 1) + b"\xff") * (HEIGHT // 8), "little")


def shifted_frame(frame: int, shift: Shift) -> int:
    """`frame` (an integer, see above) moved by `shift` as `drawing.shifted` moves a picture:
    right by dx columns, down by dy rows."""
    dx, dy = shift
    for _ in range(dy):              # down a row: bit i to i + 1, bit 7 to the next page's 0
        frame = (((frame & ~_BIT7) << 1) | ((frame & _BIT7) >> 7 << _PAGE_BITS)) & _ALL
    for _ in range(-dy):             # up a row: bit i to i - 1, bit 0 to the page before's 7
        frame = ((frame & ~_BIT0) >> 1) | ((frame & _BIT0) << 7 >> _PAGE_BITS)
    for _ in range(dx):              # right a column: the last one leaves
        frame = (frame & ~_LAST_COLUMN) << 8
    for _ in range(-dx):             # left a column: the first one leaves
        frame = (frame & ~_FIRST_COLUMN) >> 8
    return frame


def compose(view: PanelView, shift: Shift) -> bytes:
    """The frame of `view` shifted by `shift`, as `frame_bytes(shifted(render(view), shift))`
    gives it: the cached pixels of its parts (`drawing.parts`) at `shift`, each made once from
    the cached masks of its strokes (unshifted, then moved by `shifted_frame`)."""
    frame = 0
    for key, draw in parts(view):
        cached = None if key is None else (key, shift)
        known = None if cached is None else _parts.pop(cached, None)
        if known is None:
            known = _part_pixels(draw, shift)
            if known is None:                    # a stroke not of one colour: the slow way
                return frame_bytes(shifted(render(view), shift))
            if cached is not None and len(_parts) >= CACHED_PARTS:
                _parts.pop(next(iter(_parts)), None)   # (another thread may have first)
        if cached is not None:
            _parts[cached] = known               # the newest again (least recently used out)
        if isinstance(known, int):
            frame |= known
        else:
            for colour, mask in known:
                frame = frame | mask if colour != OFF else frame & ~mask
    return frame.to_bytes(FRAME_BYTES, "little")


def _part_pixels(draw: Callable[[_Canvas], None], shift: Shift) -> Pixels | None:
    """A part's pixels at `shift`: one mask when all its strokes are lit (painted over any
    frame, it ORs that mask in, whatever was drawn before it), else its strokes' (colour, mask)
    in order; None for a stroke of two colours. Moving pixels by a shift keeps ORs and ANDs
    (what leaves the frame is lost from both sides alike), so parts moved alone compose the
    frame moved."""
    recorder = _Recorder()
    draw(recorder)
    masks = []
    for stroke in recorder.strokes:
        known = _mask(stroke)
        if known is None:
            return None
        masks.append(known)
    moved = shift != (0, 0)
    if any(colour == OFF for colour, _ in masks):
        return tuple((colour, shifted_frame(mask, shift) if moved else mask)
                     for colour, mask in masks)
    lit = 0
    for _, mask in masks:
        lit |= mask
    return shifted_frame(lit, shift) if moved else lit


class Picture:
    """A view to show: its frame in the controller's bytes per burn-in shift (composed), or
    its PIL picture (drawn), each made when first asked for."""

    __slots__ = ("_image", "_pages", "view")

    def __init__(self, view: PanelView) -> None:
        self.view = view
        self._image: Image.Image | None = None
        self._pages: tuple[Shift, bytes] | None = None

    def image(self) -> Image.Image:
        """The picture, unshifted (`drawing.render`)."""
        if self._image is None:
            self._image = render(self.view)
        return self._image

    def image_at(self, shift: Shift) -> Image.Image:

        return shifted(self.image(), shift)

    def pages_at(self, shift: Shift) -> bytes:
        """The frame shifted by `shift` in the controller's bytes (`compose`)."""
        if self._pages is None or self._pages[0] != shift:
            self._pages = (shift, compose(self.view, shift))
        return self._pages[1]

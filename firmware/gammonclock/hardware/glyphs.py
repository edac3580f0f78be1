"""The bundled bitmap fonts (Spleen with Cyrillic beside it, fonts/README.md) and text that fits.

Every face is monospaced, and its Cyrillic has the same cell, so fitting text is counting
characters, whatever the alphabet: a name is cut to the same number of characters in Latin or
Cyrillic letters. A face draws only the characters it has: `printable` maps the rest (an accent
dropped, another script as "?") before anything is measured or drawn, so a name from the config can
never break a screen. PIL is imported only when a font is loaded: the view model measures text with
these faces and imports no PIL.
"""

from __future__ import annotations

import struct
import unicodedata
from dataclasses import dataclass
from functools import cache, lru_cache
from itertools import groupby
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from PIL import ImageFont

FONT_DIR = Path(__file__).resolve().parent.parent / "fonts"


@dataclass(frozen=True)
class Face:
    name: str
    width: int      # the cell, in pixels
    height: int
    latin1: bool    # has the Latin-1 supplement (Spleen's 5x8 has printable ASCII only)
    cyrillic: str   # the font beside it with the Cyrillic block, in the same cell

    @property
    def font(self) -> ImageFont.ImageFont:
        return _load(self.name)

    def runs(self, text: str) -> list[tuple[ImageFont.ImageFont, str]]:
        """Printable `text` as runs, each to be drawn in one font: a PIL bitmap font holds 256
        glyphs, so Cyrillic letters are drawn from the Cyrillic font, as the bytes it indexes
        them by (U+0400 + i is glyph i)."""
        out: list[tuple[ImageFont.ImageFont, str]] = []
        for cyrillic, run in _split_runs(text):
            out.append((_load(self.cyrillic), "".join(chr(ord(ch) - CYRILLIC_BLOCK) for ch in run))
                       if cyrillic else (self.font, run))
        return out

    def chars(self, pixels: int) -> int:
        """How many characters fit in `pixels`."""
        return max(0, pixels // self.width)

    def span(self, text: str) -> int:
        return len(text) * self.width


TINY = Face("spleen-5x8", 5, 8, latin1=False, cyrillic="cyrillic-5x8")
SMALL = Face("spleen-6x12", 6, 12, latin1=True, cyrillic="cyrillic-6x12")
MEDIUM = Face("spleen-12x24", 12, 24, latin1=True, cyrillic="cyrillic-12x24")
BIG = Face("spleen-16x32", 16, 32, latin1=True, cyrillic="cyrillic-16x32")

CYRILLIC_BLOCK = 0x400          # U+0400..U+04FF, the whole block in one 256-glyph font


@cache
def _load(name: str) -> ImageFont.ImageFont:
    from PIL import ImageFont  # here, not at the top: see the module's docstring

    return ImageFont.load(str(FONT_DIR / f"{name}.pil"))


@cache
def _glyph_codes(name: str) -> frozenset[int]:
    """The codes a .pil font has a glyph for, read from its metrics table (256 entries of ten
    16-bit values after "DATA"; a missing glyph is all zeros), without PIL."""
    data = (FONT_DIR / f"{name}.pil").read_bytes()
    start = data.index(b"DATA\n") + len(b"DATA\n")
    metrics = struct.unpack(">2560h", data[start:start + 2 * 2560])
    return frozenset(i for i in range(256) if any(metrics[10 * i:10 * i + 10]))


def _is_cyrillic(ch: str) -> bool:
    return CYRILLIC_BLOCK <= ord(ch) < CYRILLIC_BLOCK + 256


def _has(face: Face, ch: str) -> bool:
    code = ord(ch)
    if _is_cyrillic(ch):
        return code - CYRILLIC_BLOCK in _glyph_codes(face.cyrillic)
    return 32 <= code < 127 or (face.latin1 and 160 <= code < 256)


def _split_runs(text: str) -> list[tuple[bool, str]]:
    """`text` cut where it changes between Cyrillic and the rest: (is Cyrillic, run)."""
    return [(cyrillic, "".join(run)) for cyrillic, run in groupby(text, _is_cyrillic)]


def _base_letter(ch: str, face: Face) -> str:
    """An accented letter as its base letter (`é` -> `e`), if that is all the accent adds."""
    decomposed = unicodedata.normalize("NFD", ch)
    base, marks = decomposed[:1], decomposed[1:]
    if base and _has(face, base) and all(unicodedata.combining(m) for m in marks):
        return base
    return "?"


@lru_cache(maxsize=4096)      # a panel asks for the same names and labels at every frame
def printable(text: str, face: Face) -> str:
    """`text` with every character `face` lacks replaced by what it has, one for one (composed
    first, so that a name typed as "И" + breve is "Й"): Latin and Cyrillic as written."""
    return "".join(ch if _has(face, ch) else _base_letter(ch, face)
                   for ch in unicodedata.normalize("NFC", text))


def clip(text: str, face: Face, pixels: int) -> str:
    """`text` made printable and cut to the characters that fit in `pixels`."""
    return printable(text, face)[:face.chars(pixels)]


def wrap(text: str, width: int, lines: int) -> list[str]:
    """`text` broken at spaces into at most `lines` lines of `width` characters; a word longer
    than a line is cut, and text that does not fit ends in ".."."""
    out: list[str] = []
    line = ""
    for word in text.split():
        while len(word) > width:      # a word longer than a line is cut across lines
            if line:
                out.append(line)
                line = ""
            out.append(word[:width])
            word = word[width:]
        if not line:
            line = word
        elif len(line) + 1 + len(word) <= width:
            line += " " + word
        else:
            out.append(line)
            line = word
    if line:
        out.append(line)
    if len(out) > lines:
        last = out[lines - 1]
        out = out[:lines - 1] + [(last[:width - 2] if len(last) > width - 2 else last) + ".."]
    return out

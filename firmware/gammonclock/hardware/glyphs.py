"""The bundled bitmap fonts (Spleen, fonts/README.md) and text that fits them.

Every face is monospaced, so fitting text is counting characters. A face draws only the characters
it has: `printable` maps the rest (a Cyrillic name is transliterated, an accent dropped) before
anything is measured or drawn, so a name from the config can never break a screen. PIL is imported
only when a font is loaded: the view model measures text with these faces and imports no PIL.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass
from functools import cache
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

    @property
    def font(self) -> ImageFont.ImageFont:
        return _load(self.name)

    def chars(self, pixels: int) -> int:
        """How many characters fit in `pixels`."""
        return max(0, pixels // self.width)

    def span(self, text: str) -> int:
        return len(text) * self.width


TINY = Face("spleen-5x8", 5, 8, latin1=False)
SMALL = Face("spleen-6x12", 6, 12, latin1=True)
MEDIUM = Face("spleen-12x24", 12, 24, latin1=True)
BIG = Face("spleen-16x32", 16, 32, latin1=True)


@cache
def _load(name: str) -> ImageFont.ImageFont:
    from PIL import ImageFont  # here, not at the top: see the module's docstring

    return ImageFont.load(str(FONT_DIR / f"{name}.pil"))


# Russian and Ukrainian Cyrillic, as on a passport (names at a nardy table often are Cyrillic).
_CYRILLIC = dict(zip(
    "абвгдеёжзийклмнопрстуфхцчшщъыьэюяіїєґ",
    ["a", "b", "v", "g", "d", "e", "e", "zh", "z", "i", "y", "k", "l", "m", "n", "o", "p", "r",
     "s", "t", "u", "f", "kh", "ts", "ch", "sh", "shch", "", "y", "", "e", "yu", "ya", "i", "yi",
     "ye", "g"], strict=True))


def _has(face: Face, ch: str) -> bool:
    code = ord(ch)
    return 32 <= code < 127 or (face.latin1 and 160 <= code < 256)


def _transliterate(ch: str) -> str:
    lower = ch.lower()
    if lower in _CYRILLIC:
        latin = _CYRILLIC[lower]
        return latin.capitalize() if ch != lower else latin
    return ch


def _base_letter(ch: str, face: Face) -> str:
    """An accented letter as its base letter (`é` -> `e`), if that is all the accent adds."""
    decomposed = unicodedata.normalize("NFD", ch)
    base, marks = decomposed[:1], decomposed[1:]
    if base and _has(face, base) and all(unicodedata.combining(m) for m in marks):
        return base
    return "?"


def printable(text: str, face: Face) -> str:
    """`text` with every character `face` lacks replaced by what it has."""
    out = []
    for ch in text:
        if _has(face, ch):
            out.append(ch)
            continue
        for sub in _transliterate(ch):
            if not _has(face, sub):
                sub = _base_letter(sub, face)
            out.append(sub)
    return "".join(out)


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

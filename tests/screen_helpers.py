"""The panels' screens checked pixel-exact against reference PNGs (in
tests/hardware/reference/screens/; `GAMMONCLOCK_UPDATE_REFERENCES=1` writes them, each one
written reported as a warning): a missing or different reference fails, and the actual image is
left in the temporary folder named in the failure. The English and the Russian screens' tests
use it."""

from __future__ import annotations

import os
import tempfile
import warnings
from pathlib import Path

import pytest
from PIL import Image, ImageChops

from gammonclock.hardware.screens import HEIGHT, MARGIN, WIDTH, PanelView, render

REFERENCES = Path(__file__).parent / "hardware" / "reference" / "screens"
UPDATE = os.environ.get("GAMMONCLOCK_UPDATE_REFERENCES") == "1"
ACTUAL = Path(tempfile.gettempdir()) / "gammonclock-screens"


def same_pixels(a: Image.Image, b: Image.Image) -> bool:
    return a.mode == b.mode and a.size == b.size and ImageChops.difference(a, b).getbbox() is None


def check_reference(name: str, image: Image.Image, folder: Path = REFERENCES,
                    update: bool = UPDATE, actual_folder: Path = ACTUAL) -> None:
    """`image` must equal folder/NAME.png pixel for pixel; with `update`, it becomes it."""
    path = folder / f"{name}.png"
    if update:
        folder.mkdir(parents=True, exist_ok=True)
        image.save(path)
        warnings.warn(f"reference written, not compared: {path}", stacklevel=2)
        return
    if not path.exists():
        pytest.fail(f"no reference image {path}; create it deliberately with "
                    f"GAMMONCLOCK_UPDATE_REFERENCES=1 and look at it")
    with Image.open(path) as stored:
        reference = stored.copy()
    if not same_pixels(reference, image):
        actual_folder.mkdir(parents=True, exist_ok=True)
        actual = actual_folder / f"{name}.png"
        image.save(actual)
        box = ImageChops.difference(reference.convert("1"), image).getbbox()
        pytest.fail(f"{name}: differs from {path} in {box}; the actual image is {actual}")


def lit_inside_margin(image: Image.Image) -> bool:
    """Every lit pixel lies inside the margin that the burn-in shift may eat."""
    box = image.getbbox()
    return box is None or (box[0] >= MARGIN and box[1] >= MARGIN
                           and box[2] <= WIDTH - MARGIN and box[3] <= HEIGHT - MARGIN)


def check_screen(name: str, view: PanelView) -> Image.Image:
    image = render(view)
    assert image.mode == "1" and image.size == (WIDTH, HEIGHT)
    assert image.getbbox() is not None, "a blank screen"
    assert lit_inside_margin(image)
    check_reference(name, image)
    return image


# Game 1 of a 7-point backgammon match (14:00 each, simple delay 12 s): left taps, so right
# (Boris) plays first; right's turn 0-40 s costs 28 s, left's 40-100 s costs 48 s.
OPENING = "0 tap left\n40 tap right\n100 tap left\n"

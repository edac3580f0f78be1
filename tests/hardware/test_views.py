"""The split of hardware/screens.py: the view model imports no PIL, and `screens` still hands out
every name it did (the drawing is the only part that needs PIL)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from gammonclock.hardware import drawing, glyphs, notices, redraw, screens, views

# Run in a fresh interpreter: this one has PIL loaded already by the other tests.
_LOADED_PIL = """
import importlib, sys
importlib.import_module(sys.argv[1])
print(sorted(name for name in sys.modules if name == "PIL" or name.startswith("PIL.")))
"""


def _pil_modules_after_importing(module: str) -> str:
    done = subprocess.run([sys.executable, "-c", _LOADED_PIL, module],
                          capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


@pytest.mark.parametrize("module, loads_pil", [
    ("gammonclock.hardware.views", False),
    ("gammonclock.hardware.notices", False),
    ("gammonclock.hardware.redraw", False),
    ("gammonclock.hardware.glyphs", False),     # measuring text loads no font
    ("gammonclock.hardware.drawing", True),     # the one part that draws (and the check can see it)
])
def test_only_the_drawing_imports_pil(module: str, loads_pil: bool) -> None:
    assert (_pil_modules_after_importing(module) != "[]") is loads_pil


# Every name other modules, tests and benchmarks import from `screens`, and where it lives now.
@pytest.mark.parametrize("name, home", [
    ("HEIGHT", views), ("WIDTH", views), ("MARGIN", views), ("INNER_W", views),
    ("INNER_H", views), ("TENTHS_BELOW_NS", views), ("INFO_PAGE", views),
    ("Clock", views), ("Layout", views), ("PanelView", views), ("panel_view", views),
    ("config_error_view", views), ("format_reserve", views), ("format_countdown", views),
    ("notice_for", notices), ("next_change_at", redraw),
    ("render", drawing), ("ON", drawing), ("OFF", drawing), ("glyphs", None),
])
def test_screens_still_exports_every_old_name(name: str, home: object) -> None:
    expected = glyphs if name == "glyphs" else getattr(home, name)
    assert getattr(screens, name) is expected
    assert name in screens.__all__

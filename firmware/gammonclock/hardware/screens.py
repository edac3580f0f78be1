"""What each panel shows, and the picture of it: the names the rest of the firmware imports.

The parts live in modules of their own, each named for what it holds:

- `views.py`: the view model — `panel_view` turns the match state at an instant into a
  `PanelView`, exactly what one panel shows (pure, no PIL);
- `notices.py`: `notice_for`, the transient text an effect lays over the screen (pure);
- `redraw.py`: `next_change_at`, when the digits a panel shows change next (pure);
- `drawing.py`: `render`, the 128×64 1-bit PIL picture of a `PanelView`;
- `texts.py`: every text in each language the panels speak (SPEC §15).

This module re-exports them so that callers keep importing from one place.
"""

from __future__ import annotations

from . import glyphs
from .drawing import OFF, ON, render
from .notices import notice_for
from .redraw import next_change_at
from .views import (
    HEIGHT,
    INFO_PAGE,
    INNER_H,
    INNER_W,
    MARGIN,
    TENTHS_BELOW_NS,
    WIDTH,
    Clock,
    Layout,
    PanelView,
    config_error_view,
    format_countdown,
    format_reserve,
    idle_view,
    in_language,
    message_view,
    next_match_view,
    panel_view,
)

__all__ = [
    "HEIGHT",
    "INFO_PAGE",
    "INNER_H",
    "INNER_W",
    "MARGIN",
    "OFF",
    "ON",
    "TENTHS_BELOW_NS",
    "WIDTH",
    "Clock",
    "Layout",
    "PanelView",
    "config_error_view",
    "format_countdown",
    "format_reserve",
    "glyphs",
    "idle_view",
    "in_language",
    "message_view",
    "next_change_at",
    "next_match_view",
    "notice_for",
    "panel_view",
    "render",
]

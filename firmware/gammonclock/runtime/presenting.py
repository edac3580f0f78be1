"""What shows the match (SPEC §15: the panels, the buzzer, the hall link's signal), as the loop
sees it: `present` at an instant, and frames held while the journal syncs and let go once the
records they show are on the card (a display fault never stops the clock)."""

from __future__ import annotations

import logging
from typing import Protocol

from gammonclock.core.effects import Effect
from gammonclock.core.engine import Engine

log = logging.getLogger(__name__)



class Presenter(Protocol):
    """Something that shows the match (the panels, the buzzer)."""

    def present(self, engine: Engine, t: int, effects: list[Effect]) -> int | None:
        """Show the match at engine instant `t`; return when to be called again, or None."""

    def close(self) -> None: ...

def hold_frames(presenter: Presenter) -> bool:
    """Have a presenter hold its frames until `release_frames` (False: it cannot, or failed to)."""
    hold = getattr(presenter, "hold", None)
    if hold is None:
        return False
    try:
        return bool(hold())
    except Exception:   # a display fault never stops the clock: drawn after the sync then
        log.exception("presenter %r cannot hold its frames", presenter)
        return False

def release_frames(presenter: Presenter) -> None:
    release = getattr(presenter, "release", None)
    try:
        if release is not None:
            release()
    except Exception:   # a display fault never stops the clock
        log.exception("presenter %r cannot release its frames", presenter)

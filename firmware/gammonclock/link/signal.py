"""The hall link's hook on the clock (SPEC §14), importable without paho-mqtt.

`HallSignal` is one of the service's presenters: on the clock's loop it only notes that
something changed and wakes the link's publisher. `start_hall_link` starts the link when paho is
installed; without it the table plays on and the log says what to install.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from gammonclock.config.loading import HallConfig
    from gammonclock.core.engine import Engine
    from gammonclock.runtime.lifecycle import Table
    from gammonclock.runtime.service import ClockService

log = logging.getLogger(__name__)


class HallSignal:
    """The link's presenter on the clock's loop: it only notes that something changed."""

    def __init__(self) -> None:
        self.wake = threading.Event()      # the publisher has something to look at
        self.changed = threading.Event()   # the state changed since it was last published
        self._rules: object = None
        self._idle = False

    def present(self, engine: Engine, t: int, effects: list[Any]) -> int | None:
        if effects or engine.match.rules is not self._rules:
            self._rules, self._idle = engine.match.rules, False
            self._signal()
        return None

    def present_idle(self, state: dict[str, object], t: int) -> int | None:
        if not self._idle:
            self._rules, self._idle = None, True
            self._signal()
        return None

    def _signal(self) -> None:
        self.changed.set()
        self.wake.set()

    def close(self) -> None:
        pass


def start_hall_link(service: ClockService, table: Table, hall: HallConfig,
                    state_dir: str | Path, signal: HallSignal) -> Callable[[], None]:
    """Start the link; return what stops it."""
    try:
        from .client import HallLink
    except ImportError as exc:
        log.error("hall: cannot connect to %s: %s; install paho-mqtt (pip install "
                  "'gammonclock[hall]'). The table plays on without the hall", hall.broker, exc)
        return lambda: None
    return HallLink(service, table, hall, state_dir, signal=signal).start().close

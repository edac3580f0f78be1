"""The hall link's hook on the clock (SPEC §14), importable without paho-mqtt.

`HallSignal` is one of the service's presenters: on the clock's loop it only notes that
something changed and wakes the link's publisher (`client.HallLink`, which the device starts
when paho is installed: `device.build`).
"""

from __future__ import annotations

import logging
import threading
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from gammonclock.core.engine import Engine

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


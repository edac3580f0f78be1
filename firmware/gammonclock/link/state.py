"""The table's `state` on the broker (SPEC §9 with the table's keys, hall/PROTOCOL.md): retained,
the newest wins, at most one not yet acknowledged by the broker at a time; published when the
loop signals a change, and every `state_every_s` while a clock runs.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from paho.mqtt.client import MQTTMessageInfo
from paho.mqtt.enums import MQTTErrorCode

from gammonclock.runtime.lifecycle import Table
from gammonclock.runtime.service import ClockService
from gammonclock.wire import iso_utc

from .connection import Connection, acknowledged
from .signal import HallSignal


class StatePublisher:
    """The table's state, published on the publisher's thread (client.py)."""

    def __init__(self, service: ClockService, table: Table, connection: Connection,
                 signal: HallSignal, wall_ns: Callable[[], int], state_every_s: float) -> None:
        self.service = service
        self.table = table
        self.connection = connection
        self.signal = signal
        self.wall_ns = wall_ns
        self.state_every_s = state_every_s
        self._state_info: MQTTMessageInfo | None = None
        self.next_at = 0.0          # (monotonic) the state again, while a clock runs

    def publish_if_due(self) -> None:
        if self._state_info is not None:
            acked = acknowledged(self._state_info)
            if acked is False:
                return                         # the newest state goes once this one is acked
            refused = self.connection.refusal(self._state_info.mid)
            if refused is not None:
                self.connection.say("state refused", logging.ERROR,
                                    "hall: the broker refuses %s/state: %s (the account must be "
                                    "the table id %r under the shipped ACL)",
                                    self.connection.topic, refused, self.table.table_id)
            self._state_info = None
        due = time.monotonic() >= self.next_at
        if not self.signal.changed.is_set() and not due:
            return
        self.signal.changed.clear()
        state = self.payload()
        info = self.connection.publish_json("state", state, retain=True)
        if info.rc == MQTTErrorCode.MQTT_ERR_SUCCESS:
            self._state_info = info
        running = state.get("running") is not None
        self.next_at = time.monotonic() + self.state_every_s if running else float("inf")

    def payload(self) -> dict[str, Any]:
        """The SPEC §9 state now, with the table's keys (hall/PROTOCOL.md)."""
        session = self.service.session
        state: dict[str, Any] = dict(self.service.status())
        state.pop("addresses", None)
        device = self.table.device.device
        extra: dict[str, Any] = {"table": self.table.table_id, "event": device.table_event,
                                 "players": None, "journal": None, "seq": None,
                                 "at": iso_utc(self.wall_ns()), "online": True}
        if session is not None:
            names = session.engine.rules.names
            extra["players"] = {"left": names.left, "right": names.right}
            journal = session.journal
            if journal is not None:
                extra["journal"] = Path(journal.path).name
                next_seq = getattr(getattr(journal, "writer", journal), "next_seq", None)
                extra["seq"] = next_seq - 1 if isinstance(next_seq, int) else None
        state.update(extra)
        return state

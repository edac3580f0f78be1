"""The hall's acknowledgements on the broker (the bookkeeping is delivery.py's): each table's
position moved by the events taken or refused and by the states seen, seeded by the hall's own
retained `P/T/ack` read back at a (re)start, and published retained, coalesced within
ACK_EVERY_S or at once.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Callable
from typing import Any

from gammonclock.wire import Ack, iso_utc

from .accounts import TABLE_ID
from .delivery import ACK_AT_ONCE, ACK_EVERY_S, ACK_GRACE_S, EventKey, TablePosition
from .mqtt import HallClient

log = logging.getLogger("gammonclock.hall")


class Acks:
    """Every table's position, and its ack published on the hall's client."""

    def __init__(self, prefix: str, client: HallClient, closing: Callable[[], bool]) -> None:
        self.prefix = prefix
        self.client = client
        self.closing = closing
        self.positions: dict[str, TablePosition] = {}
        self._ack_timers: dict[str, asyncio.TimerHandle] = {}
        self._acks_sent: dict[str, tuple[Any, ...]] = {}
        self._acks_from = 0.0        # (monotonic) "I hold nothing" waits for the read-back

    def start(self) -> None:
        """The hall starts: its retained acks come back within ACK_GRACE_S."""
        self._acks_from = time.monotonic() + ACK_GRACE_S

    def stop(self) -> None:
        for handle in self._ack_timers.values():
            handle.cancel()

    def position(self, table: str) -> TablePosition:
        position = self.positions.get(table)
        if position is None:
            position = self.positions[table] = TablePosition()
        return position

    def highest_seen(self, table: str) -> dict[str, int]:
        """What the hall had seen of the journals when this text came (taken now: a state
        that follows it must not make it look cut short)."""
        return dict(self.position(table).highest) if table in self.positions else {}

    def say_again(self, table: str) -> None:
        """The table lacks the ack: the next one is published even when nothing moved."""
        self._acks_sent.pop(table, None)

    def took(self, table: str, key: EventKey) -> None:
        position = self.position(table)
        held = key.journal in position.past or (key.journal == position.journal
                                                 and key.seq <= position.seq)
        if held:
            # The table sends what the hall holds: it has not got the ack (lost, or the broker's
            # retained copy rolled back). Say it again, though nothing moved.
            self._acks_sent.pop(table, None)
        position.take(key)
        self.ack_soon(table, at_once=position.waiting >= ACK_AT_ONCE)

    def state_seen(self, table: str, payload: bytes) -> None:
        """A state names its journal's last record (`journal`, `seq`): the hall has seen that
        much of the journal (a journal sent shorter is cut short)."""
        try:
            state = json.loads(payload, parse_constant=_no_constant)
        except (ValueError, RecursionError):
            return
        if not isinstance(state, dict):
            return
        journal, seq = state.get("journal"), state.get("seq")
        if isinstance(journal, str) and 0 < len(journal) <= 255 and type(seq) is int \
                and 0 <= seq < 2**53:
            self.position(table).seen(journal, seq)

    def rejected(self, table: str, key: EventKey) -> None:
        """An event the view refused is not acknowledged: the table sends it again. Refused
        again, it is acknowledged all the same (the view's refusal may be the hall's own fault,
        and a table must not stall for good on one event; the record is in its journal, which
        reaches the archive)."""
        if self.position(table).rejected_again(key):
            log.error("%s/%s/events: %s seq %d refused again by the hall's view; acknowledged "
                      "anyway so that the table goes on (the record is in its journal)",
                      self.prefix, table, key.journal, key.seq)
            self.took(table, key)
        else:
            log.warning("%s/%s/events: %s seq %d not acknowledged (the table sends it again)",
                        self.prefix, table, key.journal, key.seq)

    def read_back(self, table: str, payload: bytes, retained: bool) -> None:
        """The hall's own retained ack (at each subscription): where it stood before a restart.
        Its live acks come back too, not retained: ignored."""
        if not retained or not payload or TABLE_ID.fullmatch(table) is None:
            return
        try:
            ack = Ack.parse(payload)
        except ValueError as exc:
            log.warning("%s/%s/ack: %s; ignored", self.prefix, table, exc)
            return
        position = self.position(table)
        if position.seed(ack):
            self._acks_sent[table] = (ack.journal, ack.seq, tuple(position.archived))
            self.ack_soon(table)

    def ack_soon(self, table: str, at_once: bool = False) -> None:
        """Publish the table's ack within ACK_EVERY_S (coalesced), or now."""
        handle = self._ack_timers.get(table)
        if at_once:
            if handle is not None:
                handle.cancel()
            self._publish_ack(table)
        elif handle is None:
            self._ack_timers[table] = asyncio.get_running_loop().call_later(
                ACK_EVERY_S, self._publish_ack, table)

    def _publish_ack(self, table: str) -> None:
        self._ack_timers.pop(table, None)
        position = self.position(table)
        if not position.due or self.closing():
            return
        wait = self._acks_from - time.monotonic()
        if not position.known and wait > 0:      # its retained ack may still be coming
            self._ack_timers[table] = asyncio.get_running_loop().call_later(
                wait, self._publish_ack, table)
            return
        position.due, position.waiting = False, 0
        said = (position.journal, position.seq, tuple(position.archived))
        if self._acks_sent.get(table) == said:
            return                               # retained already: nothing new to say
        self._acks_sent[table] = said
        self.client.publish(f"{self.prefix}/{table}/ack", json.dumps(
            position.payload(iso_utc(time.time_ns())), ensure_ascii=False), retain=True)


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")

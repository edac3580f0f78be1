"""The outbox's publishing (the journal is the outbox, outbox.py): the journal's events, read
from the journal file from the position the hall acknowledged, at most WINDOW beyond it; the
position moved only by the hall's `ack` (never by the broker's PUBACK) and kept on the card;
every event not acknowledged published again at a reconnect, when paho gave up on one, or when
the hall's ack did not move within RESEND_MIN_S (doubling up to RESEND_MAX_S while it stays
silent); and a finished match's whole journal sent to `journal` until the ack lists it as
archived. All of it on the publisher's thread (client.py).
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from pathlib import Path

from paho.mqtt.client import MQTTMessageInfo
from paho.mqtt.enums import MQTTErrorCode
from paho.mqtt.reasoncodes import ReasonCode

from gammonclock.core.match import Phase
from gammonclock.journal.prealloc import written_bytes
from gammonclock.runtime.service import ClockService
from gammonclock.wire import Ack, Event

from .connection import WINDOW, Connection, acknowledged
from .outbox import HallMemory, JournalTail, journal_file, journals_in_order
from .signal import HallSignal

# The link's lines in the log keep the one name they have always had (the clock's log shows it).
log = logging.getLogger("gammonclock.link.client")

SAVE_EVERY_S = 1.0          # the acknowledged position is kept at least this often while it moves
REFUSED_RETRY_S = 30.0      # events the broker refused (its ACL) are tried again this much later
RESEND_MIN_S = 5.0          # no progress of the hall's ack this long after publishing: again
RESEND_MAX_S = 60.0         # ... the wait doubling while the hall stays silent, up to this


class Publisher:
    """The events and finished journals on their way to the hall, and its acks taken."""

    def __init__(self, service: ClockService, state_dir: Path, memory: HallMemory,
                 connection: Connection, signal: HallSignal, stop: threading.Event) -> None:
        self.service = service
        self.state_dir = state_dir
        self.memory = memory
        self.connection = connection
        self.signal = signal
        self._stop = stop
        self._inflight: deque[tuple[Event, MQTTMessageInfo]] = deque()
        self._retry_at = 0.0
        self._tail: JournalTail | None = None
        self._ack_beyond: tuple[str, int] | None = None   # an ack past the card, said once
        self.unsaved = False              # the acknowledged position moved since it was kept
        self._save_at = 0.0
        self._journal_info: tuple[str, MQTTMessageInfo] | None = None
        self._journal_resend_at = 0.0
        self._journal_resend_s = RESEND_MIN_S
        self._resend_s = RESEND_MIN_S       # the wait for the hall's ack (doubles while silent)
        self._resend_at = float("inf")
        self._hall_silent = False
        self._archived: frozenset[str] = frozenset()   # finished journals the hall archived
        self._read_failed: str | None = None

    def due(self) -> float:
        """(monotonic) When a resend falls due: of the events in flight, of a finished journal."""
        return min(self._resend_at if self._inflight else float("inf"),
                   self._journal_resend_at if self._journal_info else float("inf"))

    def collect_acks(self) -> None:
        """Move the acknowledged position to where the hall's ack says it holds the events, and
        keep it on the card; publish again from there at a reconnect, when paho gave up on a
        message, or when the hall's ack did not move within the wait (which doubles while the
        hall stays silent)."""
        if self._stop.is_set():                # closed: `close` keeps the position itself
            return
        if self.connection.reconnected.is_set():
            self.connection.reconnected.clear()
            self._again()
            self._journal_info = None          # published again now, if still not archived
        for _event, info in self._inflight:
            acked = acknowledged(info)
            if acked is None:                  # paho gave up on it: again from the position
                self._again()
                break
            refused = self.connection.refusal(info.mid) if acked else None
            if refused is not None:
                self._events_refused(refused)
                break
        ack = self.connection.take_ack()
        if ack is not None:
            self._apply_ack(ack)
        now = time.monotonic()
        if self._inflight and now >= self._resend_at:
            self._hall_is_silent(now)
        if self.unsaved and (not self._inflight or now >= self._save_at):
            self.save_position()

    def _again(self) -> None:
        """Publish again from the acknowledged position (nothing published counts)."""
        self._inflight.clear()
        self._tail = None

    def _hall_is_silent(self, now: float) -> None:
        first, last = self._inflight[0][0], self._inflight[-1][0]
        if not self._hall_silent:
            log.warning("hall: the hall has not acknowledged %s seq %d to %d within %.0f s; "
                        "publishing them again (then up to every %.0f s while it is silent)",
                        first.journal, first.seq, last.seq, self._resend_s, RESEND_MAX_S)
        self._hall_silent = True
        self._again()
        self._resend_s = min(self._resend_s * 2, RESEND_MAX_S)
        self._resend_at = now + self._resend_s

    def _apply_ack(self, ack: Ack) -> None:
        self._archived = ack.archived
        with self.memory.lock:
            journal, seq = self.memory.journal, self.memory.seq
        if journal is None:
            return
        if ack.journal == journal and ack.seq > seq:
            written = on_card(self.service, journal)
            if written is not None and self._inflight:
                written = max(written, self._inflight[-1][0].seq)     # sent: it was read
            if written is not None and ack.seq > written:
                # The hall cannot hold what the clock has not written: never skip events on it.
                if self._ack_beyond != (journal, ack.seq):
                    log.error("hall: the hall acknowledges %s up to seq %d, beyond the last "
                              "record on the card (%d); ignored, the events wait for an ack of "
                              "what was sent", journal, ack.seq, written)
                self._ack_beyond = (journal, ack.seq)
                return
            with self.memory.lock:
                self.memory.seq = ack.seq
            while self._inflight and self._inflight[0][0].seq <= ack.seq:
                self._inflight.popleft()
            if self._tail is not None and self._tail.last_event < ack.seq:
                self._tail = None              # the hall holds more than was read: go on there
            self.unsaved = True
            self._resend_s = RESEND_MIN_S
            self._resend_at = time.monotonic() + RESEND_MIN_S
            if self._hall_silent:
                log.info("hall: the hall acknowledges events again")
            self._hall_silent = False
            if self.connection.link_state == "events refused":
                self.connection.say("connected", logging.INFO,
                                    "hall: the broker takes the events again")
            return
        behind = ack.seq if ack.journal == journal else 0
        if behind >= seq:
            return
        # The hall holds less than it once acknowledged (its memory lost): what it lacks goes
        # again, from where it stands (or the journal's start when it is on another journal).
        log.warning("hall: the hall holds %s up to seq %d, not %s up to %d; publishing again "
                    "from seq %d", ack.journal, ack.seq, journal, seq, behind)
        with self.memory.lock:
            self.memory.seq = behind
        self._again()
        self.unsaved = True

    def save_position(self) -> None:
        """Keep the acknowledged position on the card: when the window is empty (at once, in
        play: an event a press), else at most every SAVE_EVERY_S (a backlog drains a window at
        a time; a position not kept costs a few events sent again, which the hall drops)."""
        with self.memory.lock:
            self.memory.save()
        self.unsaved = False
        self._save_at = time.monotonic() + SAVE_EVERY_S

    def _events_refused(self, reason: ReasonCode) -> None:
        """The broker would not take an event (its ACL): publish again from the acknowledged
        position later; nothing is lost, nothing moves."""
        self.connection.say("events refused", logging.ERROR,
                            "hall: the broker refuses %s/events: %s (the account %r must be the "
                            "table id %r under the shipped ACL); trying again every %d s",
                            self.connection.topic, reason, self.connection.hall.username,
                            self.connection.table_id, REFUSED_RETRY_S)
        self._again()
        self._retry_at = time.monotonic() + REFUSED_RETRY_S

    def publish_events(self) -> None:
        if self._stop.is_set() or time.monotonic() < self._retry_at \
                or len(self._inflight) >= WINDOW:
            return
        tail = self._current_tail()
        if tail is None:
            return
        try:
            events = tail.read(WINDOW - len(self._inflight), on_card(self.service, tail.path.name))
        except OSError as exc:
            if self._read_failed != str(exc):
                log.warning("hall: cannot read %s (%s); trying again", tail.path, exc)
            self._read_failed = str(exc)
            self._tail = None
            return
        self._read_failed = None
        for event in events:
            if self._stop.is_set():            # closed: a link built after this one goes on
                self._tail = None
                return
            info = self.connection.publish_json("events", event.payload())
            if info.rc != MQTTErrorCode.MQTT_ERR_SUCCESS:
                # The connection dropped since the check (paho may still send it after the
                # reconnect: the hall drops a duplicate), or paho's queue is full: either way
                # read again from the position the broker acknowledged, once connected.
                self._tail = None
                return
            if not self._inflight:
                self._resend_at = time.monotonic() + self._resend_s
            self._inflight.append((event, info))
        if not events and not self._inflight:
            self._journal_read_to_end(tail)

    def _current_tail(self) -> JournalTail | None:
        """The tail of the journal whose events go next (after the acknowledged position)."""
        with self.memory.lock:
            name, seq = self.memory.journal, self.memory.seq
        if name is None:
            name = current_journal(self.service)
            if name is None:
                return None                    # idle since the first start: nothing to send
            with self.memory.lock:
                self.memory.journal, self.memory.seq, self.memory.journal_sent = name, 0, False
                self.memory.save()
        if self._tail is None or self._tail.path.name != name:
            sent = max(seq, self._inflight[-1][0].seq if self._inflight else 0)
            self._tail = JournalTail(journal_file(self.state_dir, name), sent)
        return self._tail

    def _journal_read_to_end(self, tail: JournalTail) -> None:
        """Every event of this journal is acknowledged: once its match is over, its text goes
        to `journal`; once the clock plays another journal, go on with the next one."""
        name = tail.path.name
        current = current_journal(self.service)
        finished = name != current or self._match_over()
        with self.memory.lock:
            sent = self.memory.journal_sent
        if finished and not sent and not self._send_journal(tail.path):
            return
        if name == current:
            return
        following = self._journal_after(name)
        if following is None:
            return
        with self.memory.lock:
            self.memory.journal, self.memory.seq, self.memory.journal_sent = following, 0, False
            self.memory.save()
        self._tail = None
        self.signal.wake.set()                 # go on at once with the next journal

    def _match_over(self) -> bool:
        session = self.service.session
        return session is not None and session.engine.match.play_phase is Phase.MATCH_OVER

    def _send_journal(self, path: Path) -> bool:
        """Publish the whole journal until the hall's ack lists it as archived (written and
        checked, whatever its verdict: sending it again would not change it); True then.
        Published again when no such ack comes within the wait (doubling up to RESEND_MAX_S: a
        hall that cannot write is not flooded) and at each reconnect."""
        name = path.name
        now = time.monotonic()
        if name in self._archived:
            if self._journal_info is not None:
                self._journal_info = None
            log.info("hall: the hall archived the finished journal %s (its verdict is on the "
                     "hall's archive list)", name)
            self._journal_resend_s = RESEND_MIN_S
            with self.memory.lock:
                self.memory.journal_sent = True
                self.memory.save()
            return True
        if self._journal_info is not None and self._journal_info[0] == name:
            info = self._journal_info[1]
            acked = acknowledged(info)
            refused = self.connection.refusal(info.mid) if acked else None
            if refused is not None:
                self._journal_info = None
                self._events_refused(refused)
                return False
            if acked is not None and now < self._journal_resend_at:
                return False                   # waiting for the hall's ack
            if acked is not None:
                log.warning("hall: the hall has not archived %s within %.0f s; sending it "
                            "again", name, self._journal_resend_s)
                self._journal_resend_s = min(self._journal_resend_s * 2, RESEND_MAX_S)
        try:
            text = written_bytes(path).decode("utf-8", errors="replace")   # no zeros ahead
        except OSError as exc:
            log.warning("hall: cannot read %s to send it (%s); trying again", path, exc)
            return False
        info = self.connection.publish_json("journal", {"journal": name, "text": text})
        if info.rc != MQTTErrorCode.MQTT_ERR_SUCCESS:
            self._journal_info = None          # sent again at the next wake while connected
            return False
        self._journal_info = (name, info)
        self._journal_resend_at = now + self._journal_resend_s
        return False

    def _journal_after(self, name: str) -> str | None:
        """The journal played after `name`: the next in the clock's order, or, when `name` is
        not among them (gone, or continued in another after damage), the newest."""
        order = [path.name for path in journals_in_order(self.state_dir)]
        if name in order:
            i = order.index(name)
            return order[i + 1] if i + 1 < len(order) else None
        log.warning("hall: journal %s is no longer in %s; going on with the newest",
                    name, self.state_dir)
        return order[-1] if order and order[-1] != name else None


def on_card(service: ClockService, name: str) -> int | None:
    """The last seq of journal `name` its writer has on the card, when the clock is writing
    it (None: no bound, nothing more is written to it). The writer counts a record only
    once it is written and synced; a line in the file before that may still be cut back (a
    failed sync) or lost (a power cut), and must never reach the hall first."""
    session = service.session
    journal = session.journal if session is not None else None
    if journal is None or Path(journal.path).name != name:
        return None
    next_seq = getattr(getattr(journal, "writer", journal), "next_seq", None)
    return next_seq - 1 if isinstance(next_seq, int) else None


def current_journal(service: ClockService) -> str | None:
    """The name of the journal the clock is writing, if any."""
    session = service.session
    if session is None or session.journal is None:
        return None
    return Path(session.journal.path).name

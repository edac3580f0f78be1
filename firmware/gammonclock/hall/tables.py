"""What the hall keeps of one table (SPEC §14): its last state, recent events and replies, its
alerts (bounded: the oldest go, counted), the offset of its clock from the hall's, and the events
it has seen, per journal, so that a message sent twice is counted once (`SeenEvents`: a window of
seqs per journal, the least recently used journals forgotten)."""

from __future__ import annotations

from collections import OrderedDict, deque
from collections.abc import Iterable, Iterator
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from typing import Any

RECENT_EVENTS = 8            # shown on a card
REPLIES_KEPT = 20
REWIND_AFTER = 3             # live states in a row that look older: the card was the outlier
OFFSET_SAMPLES = 10          # live states kept for a table's clock offset
OFFSET_TOLERANCE_MS = 2_000  # a sample further below the median than this is an outlier
ALERTS_KEPT = 50             # per table; the rest are counted in `alerts_dropped`
JOURNALS_KEPT = 16           # per table, for de-duplicating events (least recently used go)
SEQ_WINDOW = 4096            # seqs remembered below a journal's highest
JOURNAL_ORDER_KEPT = 64      # journals whose order (by the table's states) is remembered

# What a table's card is sorted by: the lower, the sooner the director should look.
SEVERITY = {"flag": 0, "refused": 1, "overrun": 1, "pin": 1, "challenge": 2, "offline": 2,
            "bad": 2, "paused": 3, "notice": 3, "archive": 3}

# An alert as the page words it: its catalogue id, then its parameters in order.
AlertWords = tuple[str | int, ...]


@dataclass(frozen=True)
class Need:
    """Why a table needs the director. `key` names an alert the director can mark seen (None:
    it lasts as long as the state that causes it).

    `text` is the hall's English words; `say` says the same for the page, in the director's
    language: `(id, *parameters)`, the id a key of the page's catalogue (`alert.ID` in
    hall/static/texts.json, whose English is this text) and its parameters in the order the
    page's `SAY` names them: the hall's own words (a side, a reason's code, a count) or a
    table's text bounded as in `text`, which the page puts in as text. A player is named by
    side only (the page has the names in the card's state): an alert storm's card stays small."""

    kind: str
    text: str
    key: str | None = None
    journal: str | None = None     # the match (journal) a match's own alert is about
    match: str | None = None       # a match refused mid-match that waits: its sha256 (the page
                                   # offers to force it while the table's notice still says so)
    say: AlertWords = ()

    def as_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"kind": self.kind, "text": self.text, "key": self.key}
        if self.match is not None:
            data["match"] = self.match
        if self.say:
            data["say"] = list(self.say)
        return data

class SeqWindow:
    """The seqs of one journal seen so far: the highest, and a bitmap of the `SEQ_WINDOW` below
    it (bit i: `high - i`). Events come in seq order; a resend starts from an earlier position,
    within the window. A seq below the window counts as seen, unless `REWIND_AFTER` come in a
    row: then the highest was an outlier and the window starts again from there."""

    __slots__ = ("high", "mask", "strikes")

    def __init__(self) -> None:
        self.high = 0
        self.mask = 0
        self.strikes = 0

    def add(self, seq: int) -> bool:
        """Whether `seq` is new (and now seen)."""
        if seq > self.high:
            shift = seq - self.high
            self.mask = 1 if shift >= SEQ_WINDOW else ((self.mask << shift) | 1) & _FULL
            self.high, self.strikes = seq, 0
            return True
        back = self.high - seq
        if back >= SEQ_WINDOW:
            self.strikes += 1
            if self.strikes < REWIND_AFTER:
                return False
            self.high, self.mask, self.strikes = seq, 1, 0
            return True
        self.strikes = 0
        bit = 1 << back
        if self.mask & bit:
            return False
        self.mask |= bit
        return True

_FULL = (1 << SEQ_WINDOW) - 1

class SeenEvents(AbstractSet[tuple[str, int]]):
    """The events of a table seen so far, as a set of `(journal, seq)` (the benchmark compares
    it with what the clocks journaled), bounded: a `SeqWindow` for each of the last
    `JOURNALS_KEPT` journals used. Its `len` is every distinct event seen, also those it no
    longer holds (membership and iteration only know those it holds)."""

    def __init__(self) -> None:
        self.journals: OrderedDict[str, SeqWindow] = OrderedDict()
        self.count = 0

    def see(self, journal: str, seq: int) -> bool:
        """Whether event `(journal, seq)` is new (and now seen)."""
        window = self.journals.get(journal)
        if window is None:
            window = self.journals[journal] = SeqWindow()
            while len(self.journals) > JOURNALS_KEPT:
                self.journals.popitem(last=False)
        else:
            self.journals.move_to_end(journal)
        new = window.add(seq)
        self.count += new
        return new

    def size(self) -> int:
        """How many seqs it holds at most now (the bound of its memory: at most
        `JOURNALS_KEPT * SEQ_WINDOW`)."""
        return sum(w.mask.bit_length() for w in self.journals.values())

    def __contains__(self, key: object) -> bool:
        if not isinstance(key, tuple) or len(key) != 2:
            return False
        window = self.journals.get(key[0])
        if window is None or not isinstance(key[1], int):
            return False
        back = window.high - key[1]
        return 0 <= back < SEQ_WINDOW and bool(window.mask >> back & 1)

    def __iter__(self) -> Iterator[tuple[str, int]]:
        for journal, window in list(self.journals.items()):
            mask, back = window.mask, 0
            while mask:
                if mask & 1:
                    yield journal, window.high - back
                mask >>= 1
                back += 1

    def __len__(self) -> int:
        return self.count

    @classmethod
    def _from_iterable(cls, it: Iterable[Any]) -> set[Any]:
        return set(it)

@dataclass
class TableView:
    table: str
    online: bool | None = None                 # None: never heard from
    state: dict[str, Any] | None = None        # validated and normalised (`state_of`)
    state_at_ms: int | None = None             # the state's `at`, on the table's clock
    received_ms: int | None = None
    # The hall's clock when the table last said anything live (not a retained message, nor the
    # broker's "offline" will): the page's "offline since 14:03, 6 min ago".
    last_contact_ms: int | None = None
    older_in_a_row: int = 0                    # live states that looked older than the card's
    offsets: deque[int] = field(default_factory=lambda: deque(maxlen=OFFSET_SAMPLES))
    journal_order: OrderedDict[str, int] = field(default_factory=OrderedDict)
    journals_seen: int = 0
    seen: SeenEvents = field(default_factory=SeenEvents)
    events: int = 0                            # records with effects, each once
    carriers: int = 0                          # records that only carried lines: no event
    duplicates: int = 0
    recent: deque[dict[str, Any]] = field(default_factory=lambda: deque(maxlen=RECENT_EVENTS))
    alerts: dict[str, Need] = field(default_factory=dict)
    alerts_dropped: int = 0
    replies: deque[dict[str, Any]] = field(default_factory=lambda: deque(maxlen=REPLIES_KEPT))
    # The commands the hall sent this table whose reply has not come, by request id: a reply
    # shows the command it answers (the hall's own words, never the table's).
    sent: OrderedDict[str, str] = field(default_factory=OrderedDict)
    notice: dict[str, Any] | None = None
    alert_serial: int = 0
    bad_messages: int = 0
    bad_key: str | None = None                 # the alert that shows them
    bad_shown_ms: int | None = None
    # The alerts' keys by severity, oldest first, for the cap (keys of alerts marked seen since
    # linger until they reach the front or the queue is compacted): evicting is O(1), not a scan
    # of every alert for every effect of a flood.
    alert_queues: dict[int, deque[str]] = field(default_factory=dict)
    health: dict[str, Any] | None = None       # the last good `health` (health.health_of)
    health_received_ms: int | None = None

    def offset_ms(self) -> int:
        """The table's clock offset (`hall - table`): the smallest sample near the median."""
        if not self.offsets:
            return 0
        ordered = sorted(self.offsets)
        median = ordered[(len(ordered) - 1) // 2]
        return min(s for s in ordered if s >= median - OFFSET_TOLERANCE_MS)

    def add_alert(self, kind: str, text: str, journal: str | None = None,
                  match: str | None = None, say: AlertWords = ()) -> str:
        self.alert_serial += 1
        key = f"{kind}-{self.alert_serial}"
        self.alerts[key] = Need(kind, text, key, journal, match, say)
        queue = self.alert_queues.setdefault(SEVERITY.get(kind, 9), deque())
        queue.append(key)
        if len(queue) > 4 * ALERTS_KEPT:          # mostly keys marked seen: compact
            self.alert_queues[SEVERITY.get(kind, 9)] = deque(k for k in queue
                                                             if k in self.alerts)
        if len(self.alerts) > ALERTS_KEPT:
            self._drop_one_alert()
        return key

    def _drop_one_alert(self) -> None:
        """The least urgent alert goes first, then the oldest."""
        for severity in sorted(self.alert_queues, reverse=True):
            queue = self.alert_queues[severity]
            while queue:
                victim = queue.popleft()
                if self.alerts.pop(victim, None) is not None:
                    self.alerts_dropped += 1
                    return

    def journal_rank(self, journal: str) -> int:
        """The order of a journal among the table's states (a journal never seen is newest)."""
        rank = self.journal_order.get(journal)
        if rank is None:
            self.journals_seen += 1
            rank = self.journal_order[journal] = self.journals_seen
            while len(self.journal_order) > JOURNAL_ORDER_KEPT:
                self.journal_order.popitem(last=False)
        return rank

"""What the hall link keeps on the card (SPEC §14): how far the HALL has acknowledged the
journal's events (its retained `P/T/ack`, never the broker's PUBACK), and the journal records
still to publish, read from the journal files.

The journal is the outbox: nothing waits in memory for the broker. `HallMemory` is
`STATE/hall-acked.json`, written atomically (a temporary file, fsync, rename, fsync of the
folder), so a power cut leaves the old position or the new one, never half of one. It holds the
last acknowledged event `(journal, seq)`, whether that journal's whole text went to `journal`,
the digest of the last retained `match` loaded, and the answers to the last `cmd` ids.

`JournalTail` reads one journal's records after a sequence number, in the file's order, as whole
JSON lines (a half-written last line waits for its end, and the zeros a live journal holds after
its records are no line: journal/prealloc.py); it relies on the `seq`, `kind`, `wall` and `data`
keys only.
"""

from __future__ import annotations

import json
import logging
import threading
from collections import OrderedDict
from pathlib import Path
from typing import Any

from gammonclock.journal.durable import write_atomically
from gammonclock.journal.files import journal_heads, journal_order
from gammonclock.journal.records import JOURNALS_DIR
from gammonclock.wire import MAX_EVENT_RECORDS_BYTES, Event

log = logging.getLogger(__name__)

MEMORY_FILE = "hall-acked.json"
REMEMBERED_IDS = 256          # `cmd` request ids whose answers are kept (a redelivery is answered)
EVENT_KINDS = ("input", "tick")


# --- the memory -------------------------------------------------------------------------------

class HallMemory:
    """The link's position and recent answers, in the state folder; any thread (one lock)."""

    def __init__(self, state_dir: str | Path) -> None:
        self.path = Path(state_dir) / MEMORY_FILE
        self.lock = threading.Lock()
        self.journal: str | None = None      # the journal of the last acknowledged event
        self.seq = 0                         # ... its seq (0: none of that journal yet)
        self.journal_sent = False            # that journal's text went to `journal`
        self.match: str | None = None        # sha256 of the last retained `match` handled
        self.answers: OrderedDict[str, dict[str, Any]] = OrderedDict()
        self.found = self._load()
        self._save_failed = False

    def _load(self) -> bool:
        """Read the file; False when there is none (a first start with the hall)."""
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return False
        except (OSError, ValueError) as exc:
            log.warning("%s: cannot read the hall's position (%s); starting again from the "
                        "current match's journal (the director de-duplicates)", self.path, exc)
            return False
        if not isinstance(data, dict):
            log.warning("%s: not a JSON object; starting again from the current match's "
                        "journal", self.path)
            return False
        journal, seq = data.get("journal"), data.get("seq")
        self.journal = journal if isinstance(journal, str) else None
        self.seq = seq if type(seq) is int and seq >= 0 else 0
        self.journal_sent = data.get("journal_sent") is True
        match = data.get("match")
        self.match = match if isinstance(match, str) else None
        answers = data.get("answers")
        if isinstance(answers, list):
            for item in answers[-REMEMBERED_IDS:]:
                if isinstance(item, dict) and isinstance(item.get("id"), str):
                    self.answers[item["id"]] = item
        return self.journal is not None

    def remember_answer(self, answer: dict[str, Any]) -> None:
        """Keep a `cmd` answer under its id (the caller holds `lock`, then calls `save`)."""
        self.answers[answer["id"]] = answer
        self.answers.move_to_end(answer["id"])
        while len(self.answers) > REMEMBERED_IDS:
            self.answers.popitem(last=False)

    def save(self) -> None:
        """Write the file atomically (the caller holds `lock`). A card that cannot be written
        costs at most re-publishing after a restart: logged once, never raised."""
        data = {"journal": self.journal, "seq": self.seq, "journal_sent": self.journal_sent,
                "match": self.match, "answers": list(self.answers.values())}
        try:
            write_atomically(self.path, json.dumps(data, ensure_ascii=False,
                                                    separators=(",", ":")).encode("utf-8"))
        except OSError as exc:
            if not self._save_failed:
                log.error("%s: cannot keep the hall's position (%s); after a restart events "
                          "already acknowledged may be published again", self.path,
                          exc.strerror or exc)
            self._save_failed = True
            return
        if self._save_failed:
            log.warning("%s: the hall's position is kept again", self.path)
        self._save_failed = False


# --- the journal, read as it grows ------------------------------------------------------------


class JournalTail:
    """One journal's event records after `after_seq`, read in order as the file grows."""

    def __init__(self, path: Path, after_seq: int) -> None:
        self.path = path
        self.after_seq = after_seq
        self.last_seq = after_seq     # the last record read (any kind)
        self.last_event = after_seq   # the last event read (`after` of the next one)
        self._offset = 0
        self._lines: list[str] = []   # the sealed lines since the last event (`Event.records`)
        self._lines_bytes = 0
        self._cut = False
        self._zeros_at = -1           # where the zeros filled ahead were found to run to the end

    def read(self, limit: int, upto: int | None = None) -> list[Event]:
        """Up to `limit` event records not yet read, none past seq `upto` (the last record the
        journal's writer has on the card: a line written and not yet synced may still be cut
        back, and what the hall holds must always be the journal's). Raises OSError when the
        file cannot be read (the caller tries again later). Reads line by line: a clock behind
        by a whole outage reads a window at a time, never its backlog again at each
        acknowledgement."""
        events: list[Event] = []
        with open(self.path, "rb") as f:
            f.seek(self._offset)
            while len(events) < limit:
                if self._offset == self._zeros_at and f.peek(1)[:1] == b"\0":
                    return events                     # nothing written over the zeros yet
                line = f.readline()
                if not line.endswith(b"\n"):
                    if line and not line.strip(b"\0"):
                        self._zeros_at = self._offset     # read them once, not at every poll
                    return events                     # the end, or a line still being written
                record = _record(line[:-1])
                seq = record.get("seq") if record is not None else None
                if upto is not None and type(seq) is int and seq > upto:
                    return events                     # not on the card yet: read it again
                self._offset += len(line)
                event = self._event(record, line)
                if event is not None:
                    events.append(event)
        return events

    def _event(self, record: dict[str, Any] | None, line: bytes = b"") -> Event | None:
        if record is None:
            return None       # a torn line (a power cut), acknowledged by a `torn` record
        seq, kind, data, wall = (record.get("seq"), record.get("kind"), record.get("data"),
                                 record.get("wall"))
        if type(seq) is not int or seq < self.after_seq or (seq == self.after_seq
                                                            and seq != 0):
            return None
        self._keep(line)
        if seq == 0:
            return None       # the header: it goes with the journal's first event
        self.last_seq = max(self.last_seq, seq)
        effects = data.get("effects") if isinstance(data, dict) else None
        if kind not in EVENT_KINDS or not isinstance(effects, list) or not effects:
            if self._lines_bytes <= MAX_EVENT_RECORDS_BYTES:
                return None
            effects = []      # the lines carried would outgrow a message: they go now
        event = Event(self.path.name, seq, wall if type(wall) is int else 0, effects,
                      self.last_event, tuple(self._lines), self._cut)
        self._lines, self._lines_bytes, self._cut = [], 0, False
        self.last_event = seq
        return event

    def _keep(self, line: bytes) -> None:
        """Keep a record's sealed line for the next event; one too long for a message is left
        out, and the event says so (the hall's copy then has a gap)."""
        text = line.decode("utf-8", "replace").rstrip("\n")
        if len(line) > MAX_EVENT_RECORDS_BYTES:
            self._cut = True
            return
        self._lines.append(text)
        self._lines_bytes += len(line)


def _record(line: bytes) -> dict[str, Any] | None:
    try:
        record = json.loads(line)
    except (ValueError, RecursionError):
        return None
    return record if isinstance(record, dict) else None


def journals_in_order(state_dir: str | Path) -> list[Path]:
    """Every journal of the state folder, oldest first (the order a resumed clock uses)."""
    return [head.path for head in journal_order(journal_heads(state_dir))]


def journal_file(state_dir: str | Path, name: str) -> Path:
    return Path(state_dir) / JOURNALS_DIR / name

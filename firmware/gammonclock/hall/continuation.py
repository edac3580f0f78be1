"""The hall's copy of each table's journal, and "move table-7's match to table-spare" (SPEC §13.5,
§14; issue 24).

Every `P/T/events` message carries the journal's sealed lines since the event before it (the
header with a journal's first event: the table's `JournalTail`), so the hall holds each table's
journal as the table wrote it, up to its last event. `LiveCopies` keeps them, table by table,
bounded (`MAX_TABLE_BYTES` a table, its newest `JOURNALS_KEPT` journals), every line checked
before it is kept: its checksum, its record's schema, its seq within the event's `(after, seq]`,
and its journal the event's. A line that fails is dropped (and the copy has a gap there).

`journal_text` gives a table's newest journal, as its lines from the header on, only when the
hall holds them without a gap (else an error that names the first record missing). `Hall.move`
sends it to the spare table as a `cmd` (`continue FROM-TABLE JOURNAL [--force]`, the journal's
text in `text`), which only the director's account may publish (hall/acl); the spare verifies it
as it would a journal from a stick (`continuation.hall_request`).

The copies are kept in memory and in the archive's `.live/` folder (not a table's: the archive's
lists pass it by), read back when the hall starts again.
"""

from __future__ import annotations

import contextlib
import logging
from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gammonclock.errors import GammonclockError
from gammonclock.journal.records import Damaged, RecordError, parse_record, split_line

from .accounts import TABLE_ID
from .archive import ArchiveError, check_name
from .messages import strict_json

log = logging.getLogger("gammonclock.hall")

CUT_MARK = "#cut "               # a line of a copy on disk: the table left lines out here
LIVE_DIR = ".live"              # in the archive folder: the copies on disk
MAX_TABLE_BYTES = 32 << 20      # the lines kept of one table (a 25-point match: a few MiB)
JOURNALS_KEPT = 2               # per table: the match in play and the one before
MAX_LINE = 64 * 1024
MAX_LINES_PER_EVENT = 4096


class Refused(GammonclockError, ValueError):
    """A director's action the hall refused: the message says why in English, its `code` and
    `fields` say it for the page, which words it in its language (static/texts.json,
    `error.CODE`)."""

    def __init__(self, message: str, code: str, **fields: object) -> None:
        super().__init__(message)
        self.code, self.fields = code, fields


class NoWholeCopy(Refused):
    """The hall holds no whole copy of that table's journal; the message says what is
    missing."""


@dataclass
class _Copy:
    lines: dict[int, str] = field(default_factory=dict)      # seq -> sealed line
    bytes: int = 0
    cut: int | None = None      # the seq of an event whose lines were left out by the table


@dataclass
class LiveCopies:
    """Each table's journals, line by line, as its events brought them; with `folder` (the
    archive's `.live/`), on disk too, one file per journal (`TABLE/JOURNAL`, the lines in the
    order they came), so that a hall restarted keeps them (`load`). The files are written, not
    synced: a power cut of the director's machine may cost the last lines (the copy then says
    what it lacks)."""

    folder: Path | None = None
    tables: dict[str, OrderedDict[str, _Copy]] = field(default_factory=dict)
    dropped: int = 0            # lines refused
    _write_failed: bool = False

    def load(self) -> None:
        """The copies a hall before this one kept on disk (each line checked again)."""
        if self.folder is None or not self.folder.is_dir():
            return
        for table_dir in sorted(p for p in self.folder.iterdir() if p.is_dir()):
            if TABLE_ID.fullmatch(table_dir.name) is None:
                continue
            files = sorted(table_dir.glob("*.jsonl"), key=lambda p: p.stat().st_mtime_ns)
            copies = self.tables.setdefault(table_dir.name, OrderedDict())
            for path in files[-JOURNALS_KEPT:]:
                copy = copies[path.name] = _Copy()
                try:
                    with path.open(encoding="utf-8", errors="replace") as f:
                        for line in f:
                            if line.startswith(CUT_MARK):      # the table left lines out
                                copy.cut = 0
                                continue
                            self._keep(table_dir.name, copy, path.name, line.rstrip("\n"))
                except OSError as exc:
                    log.warning("%s: cannot read the hall's copy: %s", path, exc.strerror)
            self._bound(table_dir.name, copies)

    def take(self, table: str, payload: bytes) -> None:
        """The lines an event the hall accepted carries (any other payload: nothing)."""
        try:
            data = strict_json(payload)
        except (ValueError, RecursionError):
            return
        if not isinstance(data, dict):
            return
        journal, seq, after = data.get("journal"), data.get("seq"), data.get("after")
        records = data.get("records")
        if not isinstance(journal, str) or type(seq) is not int or type(after) is not int:
            return
        try:
            check_name(table, journal)
        except ArchiveError:
            return
        if records is None and data.get("records_cut") is not True:
            return
        copies = self.tables.setdefault(table, OrderedDict())
        copy = copies.get(journal)
        if copy is None:
            copy = copies[journal] = _Copy()
            while len(copies) > JOURNALS_KEPT:
                self._forget(table, copies.popitem(last=False)[0])
        copies.move_to_end(journal)
        if data.get("records_cut") is True:
            copy.cut = seq if copy.cut is None else min(copy.cut, seq)
            self._write(table, journal, [f"{CUT_MARK}{seq}"])
        if not isinstance(records, list) or len(records) > MAX_LINES_PER_EVENT:
            return
        kept = [line for line in records if self._keep(table, copy, journal, line, after, seq)]
        self._bound(table, copies)
        if kept and journal in copies:
            self._write(table, journal, kept)

    def _write(self, table: str, journal: str, lines: list[Any]) -> None:
        if self.folder is None:
            return
        try:
            (self.folder / table).mkdir(parents=True, exist_ok=True)
            with (self.folder / table / journal).open("a", encoding="utf-8") as f:
                f.write("".join(f"{line}\n" for line in lines))
        except OSError as exc:
            if not self._write_failed:
                log.warning("%s: cannot keep the table's journal on disk (%s); kept in memory",
                            self.folder / table / journal, exc.strerror)
            self._write_failed = True
            return
        self._write_failed = False

    def _forget(self, table: str, journal: str) -> None:
        if self.folder is not None:
            with contextlib.suppress(OSError):
                (self.folder / table / journal).unlink()

    def _keep(self, table: str, copy: _Copy, journal: str, line: object,
              after: int | None = None, seq: int | None = None) -> bool:
        """Whether `line` was kept now (a whole record, within the event's bounds, new)."""
        if not isinstance(line, str) or len(line) > MAX_LINE:
            self.dropped += 1
            return False
        try:
            raw, mac = split_line(line.encode("utf-8"))
            record = parse_record(raw, mac)
        except (Damaged, RecordError, UnicodeEncodeError):
            self.dropped += 1
            log.warning("%s: a record line of %s in its events is not whole; dropped", table,
                        journal)
            return False
        if after is not None and seq is not None \
                and not (after < record.seq <= seq or record.seq == 0 == after):
            self.dropped += 1
            return False
        if record.seq in copy.lines:
            return False
        copy.lines[record.seq] = line
        copy.bytes += len(line) + 1
        return True

    def _bound(self, table: str, copies: OrderedDict[str, _Copy]) -> None:
        while len(copies) > 1 and sum(c.bytes for c in copies.values()) > MAX_TABLE_BYTES:
            self._forget(table, copies.popitem(last=False)[0])
        if not copies:
            return
        newest = next(reversed(copies.values()))
        if newest.bytes > MAX_TABLE_BYTES:
            log.warning("%s: its journal is longer than the hall keeps (%d MiB); no whole copy",
                        table, MAX_TABLE_BYTES >> 20)
            newest.cut = 0
            newest.lines.clear()
            newest.bytes = 0

    def journal_text(self, table: str, journal: str | None = None) -> tuple[str, str]:
        """The table's newest journal (or `journal`), as `(name, text)`; NoWholeCopy when the
        hall does not hold it whole from its header on."""
        copies = self.tables.get(table)
        if not copies:           # TABLE as the request gave it: shown cut
            raise NoWholeCopy(f"the hall holds no journal of table {table[:40]!r} (no events "
                              "with their records since the hall started)", "no_copy",
                              table=table[:40])
        name = journal if journal is not None else next(reversed(copies))
        copy = copies.get(name)
        if copy is None:
            raise NoWholeCopy(f"the hall holds no copy of {name} of table {table!r}",
                              "no_copy_of", table=table, journal=name)
        if copy.cut is not None:
            raise NoWholeCopy(f"the hall's copy of {table}'s {name} is not whole: the table "
                              "left records out of its events (too long for a message)",
                              "copy_cut", table=table, journal=name)
        last = max(copy.lines, default=-1)
        missing = next((seq for seq in range(last + 1) if seq not in copy.lines), None)
        if missing is not None or last < 1:
            record = missing if missing is not None else 1
            raise NoWholeCopy(f"the hall's copy of {table}'s {name} lacks record {record} "
                              "(events missed since the hall started): the match cannot be "
                              "moved from the hall's copy; continue it from the clock's card or "
                              "a stick", "copy_gap", table=table, journal=name, record=record)
        return name, "".join(copy.lines[seq] + "\n" for seq in range(last + 1))

    def held(self, table: str) -> dict[str, Any] | None:
        """What the hall holds of a table's newest journal (for the page)."""
        copies = self.tables.get(table)
        if not copies:
            return None
        name = next(reversed(copies))
        copy = copies[name]
        return {"journal": name, "records": len(copy.lines),
                "last_seq": max(copy.lines, default=None), "whole": copy.cut is None}


def move_command(from_table: str, journal: str, force: bool) -> str:
    """The `cmd` a spare table gets to continue `from_table`'s match."""
    return f"continue {from_table} {journal}" + (" --force" if force else "")

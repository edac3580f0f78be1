"""The hall's copy of each table's journal, and "move table-7's match to table-spare" (SPEC §13.5,
§14, §14.1; issues 24 and 31).

Every `P/T/events` message carries the journal's sealed lines since the event before it (the
header with a journal's first event: the table's `JournalTail`), so the hall holds each table's
journal as the table wrote it, up to its last event. `LiveCopies` keeps them, table by table,
bounded (`MAX_TABLE_BYTES` a table, its newest `JOURNALS_KEPT` journals).

A table's account speaks only for that table, and only with what its journal proves (§14.1): a
line is kept only when it **verifies with that table's own device key** (`--keys-dir`
KEYS/TABLE.key, `archive.read_table_key`; the seal check is the journal's own,
`records.seal_holds`) and **follows the records held around it** (its `prev` is the mac of the
record before it, the header's is the genesis, the record after it names its mac; one seq is one
record), besides its checksum, its record's schema and its seq within the event's `(after,
seq]`. A line that fails is dropped, counted, logged once for its journal, and the copy of that
journal can no longer be moved (`CopyFault`: the page says why); the refusal is marked in the
copy on disk too, so a restarted hall still refuses it. With no key for the table, nothing is
kept (the hall keeps nothing it cannot verify) and a move from it is refused saying so: the
match is then continued from the clock's card or a stick.

`whole_copy` gives a table's newest journal, as its lines from the header on, only when the
hall holds them without a gap and they verify as one journal with the table's key
(`verify.verify_text`, the reader `gammonclock verify` uses); else a `Refused` that names what
is wrong. `Hall.move` sends it to the spare table as a `cmd` (`continue FROM-TABLE JOURNAL
[--force]`, the journal's text in `text`), which only the director's account may publish
(hall/acl); the spare verifies it as it would a journal from a stick (`continuation.hall_request`).

The copies are kept in memory and in the archive's `.live/` folder (not a table's: the archive's
lists pass it by), read back and checked line by line again when the hall starts.
"""

from __future__ import annotations

import contextlib
import logging
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import Any

from gammonclock.errors import GammonclockError
from gammonclock.journal.records import (
    GENESIS,
    Damaged,
    JournalError,
    RecordError,
    parse_record,
    seal_holds,
    split_line,
)
from gammonclock.journal.verify import verify_text

from .accounts import TABLE_ID
from .archive import ArchiveError, check_name, read_table_key
from .messages import strict_json

log = logging.getLogger("gammonclock.hall")

CUT_MARK = "#cut "               # a line of a copy on disk: the table left lines out here
REFUSED_MARK = "#refused "       # a line of a copy on disk: a line refused (`CopyFault`, seq)
LIVE_DIR = ".live"              # in the archive folder: the copies on disk
MAX_TABLE_BYTES = 32 << 20      # the lines kept of one table (a 25-point match: a few MiB)
JOURNALS_KEPT = 2               # per table: the match in play and the one before
MAX_LINE = 64 * 1024
MAX_LINES_PER_EVENT = 4096
COPY_ADVICE = "continue it from the clock's card or a stick"


class Refused(GammonclockError, ValueError):
    """A director's action the hall refused: the message says why in English, its `code` and
    `fields` say it for the page, which words it in its language (static/texts.json,
    `error.CODE`); `status`, the HTTP status the page's API answers it with."""

    status = 400

    def __init__(self, message: str, code: str, **fields: object) -> None:
        super().__init__(message)
        self.code, self.fields = code, fields


class NoWholeCopy(Refused):
    """The hall holds no whole, verified copy of that table's journal; the message says what
    is missing or wrong."""


class CopyFault(Enum):
    """Why a line of a table's events was refused (the first one makes its copy unmovable)."""

    SEAL = "seal"            # not sealed with the table's own key
    CHAIN = "chain"          # does not follow the records held around it (or a second record
                             # of one seq)
    BOUNDS = "bounds"        # its seq is not within its event's (after, seq]
    DAMAGED = "damaged"      # not a whole record (checksum, schema, too long)


@dataclass(frozen=True)
class Refusal:
    """The first line refused of a copy: why, and its record's seq when it could be read."""

    fault: CopyFault
    seq: int | None


@dataclass(frozen=True)
class WholeCopy:
    """A table's journal as the hall holds it, whole and verified: its name, its text (every
    line from the header on) and its last record's seq."""

    journal: str
    text: str
    last_seq: int


@dataclass(frozen=True)
class ToVerify:
    """A copy's text as the hall holds it, and its table's key: what `verified_copy` checks."""

    table: str
    journal: str
    text: str
    last_seq: int
    key: bytes


def verified_copy(copy: ToVerify) -> WholeCopy:
    """COPY verified as one journal with its table's key (up to 32 MiB of seals: `Actions.move`
    runs it in a worker thread); NoWholeCopy when it does not verify whole."""
    table, name, text, last = copy.table, copy.journal, copy.text, copy.last_seq
    try:
        verdict = verify_text(text.encode("utf-8"), copy.key, name)
    except (JournalError, RecordError) as exc:
        verdict_words = str(exc)
    else:
        if verdict.intact and verdict.sealed and verdict.records == last + 1:
            return WholeCopy(name, text, last)
        verdict_words = verdict.words
    raise NoWholeCopy(f"the hall's copy of {table}'s {name} does not verify with the "
                      f"table's key ({verdict_words}): the match cannot be moved from "
                      f"the hall's copy; {COPY_ADVICE}", "copy_not_verified",
                      table=table, journal=name, verdict=verdict_words[:300])


@dataclass
class _Copy:
    lines: dict[int, str] = field(default_factory=dict)      # seq -> sealed line
    links: dict[int, tuple[str, str]] = field(default_factory=dict)   # seq -> (prev, mac)
    bytes: int = 0
    top: int = -1               # the highest seq held (-1: none)
    cut: int | None = None      # the seq of an event whose lines were left out by the table
    refused: Refusal | None = None      # the first line refused: the copy cannot be moved
    refused_lines: int = 0
    unkeyed: int = 0            # lines not kept: the hall held no key of the table for them


@dataclass(frozen=True)
class TableKey:
    """A table's device key as the hall holds it (`key` None: `problem` says why not)."""

    key: bytes | None
    problem: str | None = None
    code: str = "no_key"         # no_key (no KEYS/TABLE.key, or not a key), no_keys_dir
    path: str = ""


@dataclass
class TableKeys:
    """The tables' keys in `folder` (`--keys-dir`), read again when a key file changes (the
    director may add one during the event)."""

    folder: Path | None
    _read: dict[str, tuple[int | None, TableKey]] = field(default_factory=dict)

    def of(self, table: str) -> TableKey:
        if self.folder is None:
            return TableKey(None, "the hall was started without --keys-dir", "no_keys_dir")
        path = self.folder / f"{table}.key"
        try:
            stamp: int | None = path.stat().st_mtime_ns
        except OSError:
            stamp = None
        held = self._read.get(table)
        if held is not None and held[0] == stamp:
            return held[1]
        found: TableKey
        try:
            key = read_table_key(self.folder, table)
            found = TableKey(key, None if key is not None else f"there is no {path}",
                             path=str(path))
        except ArchiveError as exc:
            found = TableKey(None, str(exc), path=str(path))
        self._read[table] = (stamp, found)
        return found


class _Outcome(Enum):
    KEPT = "kept"
    NOT_KEPT = "not kept"        # a line held already, or one the hall cannot verify (no key)
    REFUSED = "refused"


OnRefused = Callable[[str, str, Refusal], None]


@dataclass
class LiveCopies:
    """Each table's journals, line by line, as its events brought them and its key verified
    them; with `folder` (the archive's `.live/`), on disk too, one file per journal
    (`TABLE/JOURNAL`, the lines kept in the order they came, and the marks of what was refused
    or left out), so that a hall restarted keeps them (`load`, which checks every line again).
    The files are written, not synced: a power cut of the director's machine may cost the last
    lines (the copy then says what it lacks). `on_refused(table, journal, refusal)` hears of
    the first line refused of each copy (the table's card says so)."""

    folder: Path | None = None
    keys_dir: Path | None = None
    on_refused: OnRefused | None = None
    tables: dict[str, OrderedDict[str, _Copy]] = field(default_factory=dict)
    dropped: int = 0            # lines refused
    unverified: int = 0         # lines not kept for want of the table's key
    _write_failed: bool = False
    _keys: TableKeys = field(init=False)
    _said_no_key: set[str] = field(default_factory=set)

    def __post_init__(self) -> None:
        self._keys = TableKeys(self.keys_dir)

    def key_of(self, table: str) -> TableKey:
        return self._keys.of(table)

    def load(self) -> None:
        """The copies a hall before this one kept on disk, each line checked again as if it
        came now (a line that does not verify is refused, and the copy with it)."""
        if self.folder is None or not self.folder.is_dir():
            return
        for table_dir in sorted(p for p in self.folder.iterdir() if p.is_dir()):
            if TABLE_ID.fullmatch(table_dir.name) is None:
                continue
            table = table_dir.name
            files = sorted(table_dir.glob("*.jsonl"), key=lambda p: p.stat().st_mtime_ns)
            copies = self.tables.setdefault(table, OrderedDict())
            key = self.key_of(table)
            for path in files[-JOURNALS_KEPT:]:
                copy = copies[path.name] = _Copy()
                try:
                    with path.open(encoding="utf-8", errors="replace") as f:
                        for line in f:
                            self._read_back(table, copy, path.name, line.rstrip("\n"), key)
                except OSError as exc:
                    log.warning("%s: cannot read the hall's copy: %s", path, exc.strerror)
            self._bound(table, copies)

    def _read_back(self, table: str, copy: _Copy, journal: str, line: str,
                   key: TableKey) -> None:
        if line.startswith(CUT_MARK):            # the table left lines out
            copy.cut = 0
        elif line.startswith(REFUSED_MARK):      # a line refused when it came
            fault, _, seq = line[len(REFUSED_MARK):].partition(" ")
            with contextlib.suppress(ValueError):
                if copy.refused is None:
                    copy.refused = Refusal(CopyFault(fault), int(seq) if seq.isdigit()
                                           else None)
                    self._said_refused(table, journal, copy.refused)
        else:
            self._keep(table, copy, journal, line, key)

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
        written: list[str] = []
        if data.get("records_cut") is True:
            copy.cut = seq if copy.cut is None else min(copy.cut, seq)
            written.append(f"{CUT_MARK}{seq}")
        if isinstance(records, list) and len(records) <= MAX_LINES_PER_EVENT:
            key = self.key_of(table)
            refused_before = copy.refused
            for line in records:
                if self._keep(table, copy, journal, line, key, after, seq) is _Outcome.KEPT:
                    assert isinstance(line, str)
                    written.append(line)
            if refused_before is None and copy.refused is not None:
                seq_text = "-" if copy.refused.seq is None else str(copy.refused.seq)
                written.append(f"{REFUSED_MARK}{copy.refused.fault.value} {seq_text}")
        self._bound(table, copies)
        if written and journal in copies:
            self._write(table, journal, written)

    def _write(self, table: str, journal: str, lines: list[str]) -> None:
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

    def _keep(self, table: str, copy: _Copy, journal: str, line: object, key: TableKey,
              after: int | None = None, seq: int | None = None) -> _Outcome:
        """Keep `line` when it is a whole record of the event, sealed with the table's key
        and following the records held around it; else refuse it (or, with no key, keep
        nothing: `unkeyed`)."""
        if not isinstance(line, str) or len(line) > MAX_LINE:
            return self._refuse(table, copy, journal, Refusal(CopyFault.DAMAGED, None))
        try:
            raw, mac = split_line(line.encode("utf-8"))
            record = parse_record(raw, mac)
        except (Damaged, RecordError, UnicodeEncodeError):
            return self._refuse(table, copy, journal, Refusal(CopyFault.DAMAGED, None))
        if key.key is None:
            copy.unkeyed += 1
            self.unverified += 1
            if table not in self._said_no_key:
                self._said_no_key.add(table)
                log.warning("%s: its journal's lines are not kept for a continuation: %s (the "
                            "hall keeps nothing it cannot verify)", table, key.problem)
            return _Outcome.NOT_KEPT
        if not seal_holds(key.key, raw, mac):
            return self._refuse(table, copy, journal, Refusal(CopyFault.SEAL, record.seq))
        if after is not None and seq is not None \
                and not (after < record.seq <= seq or record.seq == 0 == after):
            return self._refuse(table, copy, journal, Refusal(CopyFault.BOUNDS, record.seq))
        held = copy.lines.get(record.seq)
        if held is not None:
            return _Outcome.NOT_KEPT if held == line else self._refuse(
                table, copy, journal, Refusal(CopyFault.CHAIN, record.seq))
        before = copy.links.get(record.seq - 1)
        next_one = copy.links.get(record.seq + 1)
        if (record.seq == 0 and record.prev != GENESIS) \
                or (before is not None and record.prev != before[1]) \
                or (next_one is not None and next_one[0] != mac):
            return self._refuse(table, copy, journal, Refusal(CopyFault.CHAIN, record.seq))
        copy.lines[record.seq] = line
        copy.links[record.seq] = (record.prev, mac)
        copy.bytes += len(line) + 1
        copy.top = max(copy.top, record.seq)
        return _Outcome.KEPT

    def _refuse(self, table: str, copy: _Copy, journal: str, refusal: Refusal) -> _Outcome:
        self.dropped += 1
        copy.refused_lines += 1
        if copy.refused is None:
            copy.refused = refusal
            self._said_refused(table, journal, refusal)
        return _Outcome.REFUSED

    def _said_refused(self, table: str, journal: str, refusal: Refusal) -> None:
        log.warning("%s: a line of %s in its events refused (%s, record %s): the hall keeps no "
                    "such line, and this copy cannot be moved", table, journal,
                    refusal.fault.value, "?" if refusal.seq is None else refusal.seq)
        if self.on_refused is not None:
            self.on_refused(table, journal, refusal)

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
            newest.links.clear()
            newest.bytes, newest.top = 0, -1

    # --- what the hall holds ---------------------------------------------------------------

    def newest(self, table: str) -> str | None:
        """The name of the table's newest journal the hall has a copy of."""
        copies = self.tables.get(table)
        return next(reversed(copies)) if copies else None

    def problem(self, table: str, journal: str | None = None) -> NoWholeCopy | None:
        """Why the table's newest journal (or `journal`) cannot be moved from the hall's copy,
        as far as the copy tells without verifying it whole; None when nothing is wrong."""
        copies = self.tables.get(table)
        if not copies:           # TABLE as the request gave it: shown cut
            return NoWholeCopy(f"the hall holds no journal of table {table[:40]!r} (no events "
                               "with their records since the hall started)", "no_copy",
                               table=table[:40])
        name = journal if journal is not None else next(reversed(copies))
        copy = copies.get(name)
        if copy is None:
            return NoWholeCopy(f"the hall holds no copy of {name} of table {table!r}",
                               "no_copy_of", table=table, journal=name)
        if copy.refused is not None:
            return refusal_problem(table, name, copy.refused)
        if copy.unkeyed:
            return _no_key(table, self.key_of(table))
        if copy.cut is not None:
            return NoWholeCopy(f"the hall's copy of {table}'s {name} is not whole: the table "
                               "left records out of its events (too long for a message)",
                               "copy_cut", table=table, journal=name)
        last = copy.top
        missing = None
        if len(copy.lines) != last + 1:
            missing = next((seq for seq in range(last + 1) if seq not in copy.lines), None)
        if missing is not None or last < 1:
            record = missing if missing is not None else 1
            return NoWholeCopy(f"the hall's copy of {table}'s {name} lacks record {record} "
                               "(events missed since the hall started): the match cannot be "
                               f"moved from the hall's copy; {COPY_ADVICE}", "copy_gap",
                               table=table, journal=name, record=record)
        return None

    def whole_copy(self, table: str, journal: str | None = None) -> WholeCopy:
        """The table's newest journal (or `journal`), whole and verified with the table's key
        as one journal; NoWholeCopy (a Refused, with a code) when the hall does not hold it so.
        (`Actions.move` verifies it off the loop: `to_verify`, then `verified_copy`.)"""
        return verified_copy(self.to_verify(table, journal))

    def to_verify(self, table: str, journal: str | None = None) -> ToVerify:
        """The text of the table's newest journal (or `journal`) and the key to verify it with,
        taken now (on the loop, where the lines come); NoWholeCopy when the hall does not hold
        it whole."""
        problem = self.problem(table, journal)
        if problem is not None:
            raise problem
        copies = self.tables[table]
        name = journal if journal is not None else next(reversed(copies))
        copy = copies[name]
        last = copy.top
        key = self.key_of(table)
        if key.key is None:                      # the key file went since the lines came
            raise _no_key(table, key)
        return ToVerify(table, name, "".join(copy.lines[seq] + "\n" for seq in range(last + 1)),
                        last, key.key)

    def journal_text(self, table: str, journal: str | None = None) -> tuple[str, str]:
        """`whole_copy` as `(name, text)`."""
        whole = self.whole_copy(table, journal)
        return whole.journal, whole.text

    def held(self, table: str) -> dict[str, Any] | None:
        """What the hall holds of a table's newest journal, and whether it can be moved (for
        the page: why not, as a code and its fields, and in English)."""
        copies = self.tables.get(table)
        if not copies:
            return None
        name = next(reversed(copies))
        copy = copies[name]
        problem = self.problem(table)
        held: dict[str, Any] = {"journal": name, "records": len(copy.lines),
                                "last_seq": copy.top if copy.top >= 0 else None,
                                "whole": copy.cut is None, "movable": problem is None,
                                "refused_lines": copy.refused_lines}
        if problem is not None:
            held.update(code=problem.code, fields=problem.fields, error=str(problem))
        return held


def refusal_problem(table: str, journal: str, refusal: Refusal) -> NoWholeCopy:
    """Why a copy with REFUSAL cannot be moved (the page says it: `error.copy_FAULT`)."""
    record = "?" if refusal.seq is None else refusal.seq
    said = {
        CopyFault.SEAL: f"{table} sent lines of {journal} that its own key did not seal "
                        f"(record {record})",
        CopyFault.CHAIN: f"{table} sent a line of {journal} that does not follow the records "
                         f"the hall holds (record {record})",
        CopyFault.BOUNDS: f"{table} sent a line of {journal} outside the event that carried it "
                          f"(record {record})",
        CopyFault.DAMAGED: f"{table} sent a line of {journal} that is not a whole record",
    }[refusal.fault]
    return NoWholeCopy(f"{said}: the hall kept no such line, and this match cannot be moved "
                       f"from the hall's copy; {COPY_ADVICE}", f"copy_{refusal.fault.value}",
                       table=table, journal=journal, record=record)


def _no_key(table: str, key: TableKey) -> NoWholeCopy:
    if key.code == "no_keys_dir":
        return NoWholeCopy(f"the hall was started without --keys-dir: it keeps no journal line "
                           f"it cannot verify, so it holds nothing of {table}'s journal to "
                           f"move; {COPY_ADVICE}", "no_keys_dir", table=table)
    shown = key.path or f"KEYS/{table}.key"
    return NoWholeCopy(f"the hall holds no key of {table} ({shown}): it keeps no journal line "
                       f"it cannot verify, so it holds nothing of {table}'s journal to move; "
                       f"{COPY_ADVICE}", "no_key", table=table, key=shown)


def move_command(from_table: str, journal: str, force: bool) -> str:
    """The `cmd` a spare table gets to continue `from_table`'s match."""
    return f"continue {from_table} {journal}" + (" --force" if force else "")

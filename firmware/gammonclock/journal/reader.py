"""Reading a journal (SPEC §11): whole records in order, past a torn last line, stopping at damage
in the middle and saying where; from its last snapshot (what recovery needs), or its header
alone. The zeros a live journal holds after its logical end (`prealloc`) are not read: a
journal's `size` is its logical end."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO, Protocol

from gammonclock.config.problems import Problem, message_of

from .prealloc import logical_end
from .records import (
    SNAPSHOT_KIND,
    Damaged,
    JournalError,
    Record,
    RecordError,
    decode,
    in_file,
    split_line,
)


@dataclass(frozen=True)
class Torn:
    offset: int
    length: int

Line = tuple[int, int, bytes, bool]     # (line number, byte offset, bytes, ends in a newline)

@dataclass
class JournalRead:
    """What a journal holds, all at once: the whole records, and why reading stopped early if it
    did (for tests and small journals; `JournalStream` reads a journal in constant memory)."""

    path: str
    records: list[Record]
    torn: Torn | None = None          # a half-written last line, dropped
    stopped: str | None = None        # a damaged record in the middle: replay stops before it
    size: int = 0

    @property
    def header(self) -> Record:
        return self.records[0]

    @property
    def last(self) -> Record:
        return self.records[-1]

    @property
    def count(self) -> int:
        """The whole records read, the header included."""
        return len(self.records)

    def each(self) -> Iterator[Record]:
        """The records after the header, in order."""
        return iter(self.records[1:])

    def from_start(self) -> Iterator[Record]:
        """Every record, the header first."""
        return iter(self.records)

    def line_of(self, record: Record) -> int:
        return record.line

    def problems(self) -> list[str]:
        return _problems(self.path, self.torn, self.stopped)

def _problems(path: str, torn: Torn | None, stopped: str | None) -> list[str]:
    notes: list[str] = []
    if torn:
        notes.append(Problem("jr.torn", path=path, length=torn.length, offset=torn.offset))
    if stopped:
        notes.append(Problem("jr.stopped", path=path, stopped=stopped))
    return notes

def _file_lines(f: BinaryIO, offset: int, number: int) -> Iterator[Line]:
    """Each line of `f` from `offset` (line `number`; 0: not known), one at a time. The zeros
    after the last line (filled ahead, `prealloc`) are no line, nor part of a torn one."""
    for piece in f:
        whole = piece.endswith(b"\n")
        body = piece[:-1] if whole else piece.rstrip(b"\0")
        if body or whole:
            yield number, offset, body, whole
        offset += len(piece)
        number += 1 if number else 0

def _with_next(lines: Iterator[Line]) -> Iterator[tuple[Line, Line | None]]:
    """Each line with the one after it (None for the last): a damaged line is judged by it."""
    current = next(lines, None)
    while current is not None:
        after = next(lines, None)
        yield current, after
        current = after

class JournalStream:
    """A journal read record by record in constant memory, for replay, export and recovery.

    `start` is the record reading goes on from: the header, or (`open_from_snapshot`) the last
    snapshot, found from the end of the file without parsing the records before it. `each()`
    yields the whole records after it; `last`, `torn` and `stopped` then say where reading
    ended, as `JournalRead` does for the whole file."""

    def __init__(self, path: str | Path, header: Record, start: Record, start_end: int,
                 size: int) -> None:
        self.path = str(path)
        self.header, self.start = header, start
        self.size = size
        self._start_end = start_end          # the byte after the start record's line
        self.last = start
        self.torn: Torn | None = None
        self.stopped: str | None = None

    @staticmethod
    def open(path: str | Path) -> JournalStream:
        """A journal read from its header on."""
        header, end, size = _read_first(path)
        return JournalStream(path, header, header, end, size)

    @property
    def count(self) -> int:
        """The whole records up to the last one read, the header included."""
        return self.last.seq + 1

    def problems(self) -> list[str]:
        return _problems(self.path, self.torn, self.stopped)

    def each(self) -> Iterator[Record]:
        """The whole records after `start`, in order, to the first damaged one."""
        self.last, self.torn, self.stopped = self.start, None, None
        known_lines = self.start.line > 0
        try:
            with Path(self.path).open("rb") as f:
                f.seek(self._start_end)
                lines = _file_lines(f, self._start_end, self.start.line + 1 if known_lines else 0)
                for (number, offset, piece, whole), after in _with_next(lines):
                    try:
                        if not whole:
                            raise Damaged(Problem("jd.cut_short"))
                        record = self._decode(piece, number, offset)
                        if record.seq != self.last.seq + 1:
                            raise Damaged(Problem("jd.seq", seq=record.seq,
                                                  due=self.last.seq + 1))
                    except Damaged as exc:
                        if after is None:
                            self.torn = Torn(offset, self.size - offset)
                            return
                        if _acknowledged(after, offset) is not None:
                            continue    # a torn line that the `torn` record after it owns
                        number = number or self.line_at(offset)
                        self.stopped = Problem("jr.damaged", line=number, byte=offset,
                                               why=message_of(exc))
                        return
                    self.last = record
                    yield record
        except OSError as exc:
            raise JournalError(f"{self.path}: cannot read the journal: {exc.strerror}") from None

    def from_start(self) -> Iterator[Record]:
        """Every whole record from the header on (a continuation copies them all)."""
        whole = JournalStream.open(self.path)
        yield whole.header
        for record in whole.each():
            yield record
            if record.seq >= self.last.seq:
                return

    @property
    def records(self) -> list[Record]:
        """Every whole record at once (for tests and small journals)."""
        return list(self.from_start())

    def _decode(self, piece: bytes, number: int, offset: int) -> Record:
        try:
            return decode(piece, number, offset)[0]
        except RecordError as exc:
            problem = message_of(exc)
        if number == 0:      # read from a snapshot on: name the line all the same
            try:
                decode(piece, self.line_at(offset), offset)
            except RecordError as named:
                problem = message_of(named)
        raise RecordError(in_file(self.path, problem))

    def line_of(self, record: Record) -> int:
        return record.line or self.line_at(record.offset)

    def line_at(self, offset: int) -> int:
        """The line number at byte `offset` (counted only for a message: a read from a snapshot
        on does not know it)."""
        try:
            with Path(self.path).open("rb") as f:
                count, left = 1, offset
                while left > 0:
                    chunk = f.read(min(left, 1 << 20))
                    if not chunk:
                        break
                    count += chunk.count(b"\n")
                    left -= len(chunk)
                return count
        except OSError:
            return 0

def _read_first(path: str | Path, limit: int = -1) -> tuple[Record, int, int]:
    """The header of a journal, the offset after its line and the file's logical end (its size
    less the zeros after it). Only the first line is read, up to `limit` bytes (-1: all of it),
    and the file's end."""
    try:
        with Path(path).open("rb") as f:
            size = logical_end(f)
            f.seek(0)
            line = f.readline(limit)
    except OSError as exc:
        raise JournalError(f"{path}: cannot read the journal: {exc.strerror}") from None
    try:
        if not line.endswith(b"\n"):
            raise Damaged("no end of line")
        record, _ = decode(line[:-1], 1, 0)
    except Damaged:
        raise JournalError(f"{path}: no header record; not a gammonclock journal") from None
    except RecordError as exc:
        raise RecordError(in_file(path, message_of(exc))) from None
    if record.kind != "header":
        raise JournalError(f"{path}: the first record is not a header")
    return record, len(line), size

SNAPSHOT_MARK = b'"kind":"state"'     # in a snapshot's canonical line, and in no other's

_SCAN_FIRST = 1 << 16                    # bytes read from the end first, then 4 times more

def open_from_snapshot(path: str | Path) -> JournalStream:
    """A journal read from its last snapshot on (from its header when it has none). The file is
    searched from its end for the last whole snapshot line; the records before it are not read.
    A snapshot line that is damaged is passed over for an earlier one."""
    header, header_end, size = _read_first(path)
    try:
        with Path(path).open("rb") as f:
            found = _last_snapshot(f, header_end, size)
    except OSError as exc:
        raise JournalError(f"{path}: cannot read the journal: {exc.strerror}") from None
    if found is None:
        return JournalStream(path, header, header, header_end, size)
    record, end = found
    return JournalStream(path, header, record, end, size)

def _last_snapshot(f: BinaryIO, floor: int, size: int) -> tuple[Record, int] | None:
    """The last snapshot record whose line is whole and good, and the offset after it."""
    window = _SCAN_FIRST
    while True:
        start = max(floor, size - window)
        f.seek(start)
        blob = f.read(size - start)
        limit = len(blob)
        while (mark := blob.rfind(SNAPSHOT_MARK, 0, limit)) >= 0:
            begin = blob.rfind(b"\n", 0, mark) + 1
            if begin == 0 and start > floor:
                break                      # the line starts before the window: read more
            end = blob.find(b"\n", mark)
            limit = begin
            if end < 0:
                continue                   # a torn last line
            try:
                record, _ = decode(blob[begin:end], 0, start + begin)
            except (Damaged, RecordError):
                continue
            if record.kind == SNAPSHOT_KIND:
                return record, start + end + 1
        if start == floor:
            return None
        window *= 4

class JournalSource(Protocol):
    """A journal as replay, recovery and export read it: `JournalRead` (all at once) or
    `JournalStream` (record by record)."""

    @property
    def path(self) -> str: ...

    @property
    def header(self) -> Record: ...

    @property
    def last(self) -> Record: ...

    @property
    def torn(self) -> Torn | None: ...

    @property
    def stopped(self) -> str | None: ...

    @property
    def size(self) -> int: ...

    @property
    def count(self) -> int: ...

    def each(self) -> Iterator[Record]: ...

    def from_start(self) -> Iterator[Record]: ...

    def line_of(self, record: Record) -> int: ...

    def problems(self) -> list[str]: ...

def read_journal(path: str | Path) -> JournalRead:
    """Every whole record of a journal, in order, at once (checksums only; no key needed)."""
    stream = JournalStream.open(path)
    records = [stream.header, *stream.each()]
    return JournalRead(stream.path, records, stream.torn, stream.stopped, stream.size)

MAX_HEADER_BYTES = 1 << 20

def read_header(path: str | Path) -> Record:
    """The header of a journal alone, checked like any record: cheap (the first line only, up to
    MAX_HEADER_BYTES), for choosing among many journals."""
    return _read_first(path, MAX_HEADER_BYTES)[0]

def header_data_unchecked(path: str | Path) -> dict[str, Any]:
    """The data of a journal's first line when its checksum holds, without the schema (to tell
    which match a journal this firmware cannot understand belongs to); {} when there is none."""
    try:
        with Path(path).open("rb") as f:
            raw, _ = split_line(f.readline(MAX_HEADER_BYTES).rstrip(b"\n"))
        data = json.loads(raw).get("data")
    except (OSError, Damaged, ValueError, RecursionError, AttributeError):
        return {}
    return data if isinstance(data, dict) else {}

def _acknowledged(next_line: Line, offset: int) -> Record | None:
    """The `torn` record right after a damaged line that names that line, if there is one."""
    number, next_offset, piece, _ = next_line
    try:
        record, _ = decode(piece, number, next_offset)
    except (Damaged, RecordError):
        return None
    if record.kind == "torn" and record.data.get("offset") == offset:
        return record
    return None

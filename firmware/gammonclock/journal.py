"""The journal (SPEC §11): an append-only file per match, the source of truth.

One JSON record per line, written and fsynced before anything shows its effect (a record with no
effect to show, a tap's release, may be written first and fsynced with the next: `write`):

    {"boot": "<boot id>", "data": {...}, "kind": "input", "mono": <host monotonic ns>,
     "prev": "<mac of record 6>", "seq": 7, "t": <engine ns>, "wall": <ns since the epoch>,
     "sum": "<sha256 of the body>", "mac": "<HMAC-SHA256 of the body with the device key>"}

The body is the record in canonical JSON (sorted keys, no spaces) without `sum` and `mac`, which
follow it and cover exactly its bytes.

- `header` (seq 0) holds the config text, so a journal replays on its own; `input` holds one input
  and every effect it caused; `tick` holds a timer's effects or is a checkpoint while a clock runs;
  `torn` acknowledges a half-written line left by a power cut, which is then skipped; `state`
  (a snapshot, `snapshot.py`) holds the engine's state every so many records, so that recovery
  reads the last one and the records after it (`open_from_snapshot`).
- `sum` finds a damaged line without the key; `prev` chains each record to the one before; `mac`
  seals it with the device key. A record altered, removed, inserted or moved breaks the seals.

Reading (`JournalStream`, a record at a time in constant memory; `read_journal`, all at once)
keeps every whole record up to the first damaged one: a torn last line is dropped and
reported; a damaged line in the middle stops the replay there. The file itself is never rewritten.
A whole record (its checksum holds) is checked against the schema below; one this firmware cannot
understand (a field missing or of the wrong type, an unknown kind, a newer format) is a
RecordError naming the file, the record and its line, never skipped and never a crash.

The device key (`device.key`: 64 hex digits and a newline, mode 0600) is made atomically and an
empty, short or malformed one is refused (KeyRefused), never used to seal or verify.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import hmac
import json
import os
import re
import secrets
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO, Protocol, TypeGuard

from . import __version__
from .backoff import Backoff
from .errors import GammonclockError
from .fsync_times import FSYNC_TIMES, FsyncTimes

FORMAT = 1
SECRET_FILE = "device.key"
JOURNALS_DIR = "journals"
GENESIS = "0" * 64          # the `prev` of the header
SNAPSHOT_KIND = "state"     # the kind of a snapshot record (the engine's state, snapshot.py)


class JournalError(GammonclockError):
    """A journal that cannot be read or written; the message says which file and why."""


# --- the device key --------------------------------------------------------------------------

KEY_BYTES = 32                 # at least this many random bytes; the file holds them as hex
_KEY_FILE_LIMIT = 4096         # a key file longer than this is not one of ours
_KEY_ADVICE = ("it is never used to seal or verify. Move it away to make a new one; journals "
               "sealed with the old key will then not verify")


class KeyRefused(JournalError):
    """A device key file that is there but unusable (empty, short, not hex): it is never used,
    and it is not replaced behind anyone's back either."""


def load_or_create_key(state_dir: str | Path) -> bytes:
    """The per-device key in `state_dir`, created (mode 0600) on first use."""
    path = Path(state_dir) / SECRET_FILE
    if not os.path.lexists(path):
        _create_key(path)
    return read_key(state_dir)


def _create_key(path: Path) -> None:
    """Write a new key under a temporary name, fsync it, then link it into place: a crash or a
    full disk leaves no key or a whole one, never an empty or partial `device.key`."""
    text = (secrets.token_hex(KEY_BYTES) + "\n").encode()
    temporary = path.with_name(f".{path.name}.new-{os.getpid()}-{secrets.token_hex(4)}")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            _write_all(fd, text)
            os.fsync(fd)
        finally:
            os.close(fd)
        try:
            os.link(temporary, path)      # never replaces a key that is already there
        except FileExistsError:
            pass                          # another process made one first: that one is the key
        except OSError as exc:
            if exc.errno not in (errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP, errno.ENOSYS):
                raise
            # A file system without hard links (FAT, exFAT): rename, which replaces, after a
            # last look (the folder's lock keeps a second clock out meanwhile).
            if not path.exists():
                os.rename(temporary, path)
        fsync_dir(path.parent)
    except OSError as exc:
        raise JournalError(f"{path}: cannot create the device key: "
                           f"{exc.strerror or exc}") from None
    finally:
        with contextlib.suppress(OSError):
            os.unlink(temporary)


def _write_all(fd: int, data: bytes) -> None:
    while data:
        data = data[os.write(fd, data):]


def read_key(state_dir: str | Path) -> bytes:
    """The device key; KeyRefused for a file that is not a whole key."""
    path = Path(state_dir) / SECRET_FILE
    try:
        return key_in_file(path)
    except OSError as exc:
        raise JournalError(f"{path}: cannot read the device key: {exc.strerror}") from None


def key_in_file(path: Path, advice: str = _KEY_ADVICE) -> bytes:
    """The key a key file holds (a state folder's `device.key`, or a copy of one). OSError when
    the file cannot be read; KeyRefused, ending with `advice`, when it holds no whole key."""
    with path.open("rb") as f:
        blob = f.read(_KEY_FILE_LIMIT + 1)
    problem = _key_problem(blob)
    if problem is not None:
        raise KeyRefused(f"{path}: the device key {problem}; {advice}")
    return bytes.fromhex(blob.strip().decode())


def _key_problem(blob: bytes) -> str | None:
    text = blob.strip()
    if not blob:
        return "is empty (0 bytes)"
    if len(blob) > _KEY_FILE_LIMIT:
        return f"is longer than {_KEY_FILE_LIMIT} bytes"
    if re.fullmatch(rb"[0-9a-fA-F]*", text) is None or len(text) % 2:
        return f"is not hex text (a key is {2 * KEY_BYTES} hex digits and a newline)"
    if len(text) // 2 < KEY_BYTES:
        return f"holds {len(text) // 2} bytes; a device key has at least {KEY_BYTES}"
    return None


def check_key(key: bytes) -> None:
    """Refuse a key too short to seal with (an empty key would let anyone forge a journal)."""
    if len(key) < KEY_BYTES:
        raise KeyRefused(f"a device key of {len(key)} bytes is refused; at least {KEY_BYTES} "
                         f"random bytes are needed to seal or verify")


def key_id(key: bytes) -> str:
    """A short public name of a key, kept in the header, to tell keys apart."""
    return hashlib.sha256(b"gammonclock key id:" + key).hexdigest()[:16]


# --- records ---------------------------------------------------------------------------------

@dataclass(frozen=True)
class Stamp:
    """Where a record stands in the real world: host monotonic time, boot, wall clock."""

    mono: int
    boot: str
    wall: int


@dataclass(frozen=True)
class Record:
    seq: int
    kind: str
    t: int
    mono: int
    boot: str
    wall: int
    data: dict[str, Any]
    prev: str
    mac: str
    line: int = field(default=0, compare=False)     # 1-based line in the file
    offset: int = field(default=0, compare=False)   # byte offset of the line


# One encoder for every record: `json.dumps` with options builds a new one at each call.
_CANONICAL = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=True)


def _canonical(obj: dict[str, Any]) -> bytes:
    return _CANONICAL.encode(obj).encode()


def _body(seq: int, kind: str, t: int, stamp: Stamp, data: dict[str, Any],
          prev: str) -> dict[str, Any]:
    return {"seq": seq, "kind": kind, "t": t, "mono": stamp.mono, "boot": stamp.boot,
            "wall": stamp.wall, "data": data, "prev": prev}


def _seal(key: bytes, body: bytes) -> str:
    return hmac.digest(key, body, "sha256").hex()     # one-shot: hmac.new's value, faster


_TAIL = re.compile(rb',"sum":"([0-9a-f]{16})","mac":"([0-9a-f]{64})"\}$')


def encode(key: bytes, body: dict[str, Any]) -> bytes:
    """One line: the canonical body, then its checksum and its seal over exactly those bytes."""
    raw = _canonical(body)
    checksum = hashlib.sha256(raw).hexdigest()[:16]
    return raw[:-1] + f',"sum":"{checksum}","mac":"{_seal(key, raw)}"}}\n'.encode()


class Damaged(GammonclockError, ValueError):
    """A line that is not a whole record (torn, flipped bytes, not ours)."""


class RecordError(JournalError):
    """A whole record (its checksum matches) that this firmware cannot understand: a field
    missing or of the wrong type, an unknown kind, a newer format. Never skipped silently."""


MAX_NS = 2**63 - 1       # every instant fits an int64, as the host's clocks do
MAX_SEQ = 2**53          # far beyond any match, and exact in every JSON reader
NEWER = ("is unknown to this firmware (version {version}); the journal may come from a newer "
         "version")


def decode(line: bytes, line_no: int = 0, offset: int = 0) -> tuple[Record, bytes]:
    """The record of a line and the bytes its checksum and seal cover. Raises Damaged for bytes
    that are not a whole record, RecordError for a whole one that is not understood."""
    raw, mac = split_line(line)
    return parse_record(raw, mac, line_no, offset), raw


def split_line(line: bytes) -> tuple[bytes, str]:
    """The body of a line and its seal, once its checksum matches; raises Damaged."""
    tail = _TAIL.search(line)
    if tail is None:
        raise Damaged("no checksum and seal at its end")
    raw = line[:tail.start()] + b"}"
    if hashlib.sha256(raw).hexdigest()[:16] != tail.group(1).decode():
        raise Damaged("checksum does not match")
    return raw, tail.group(2).decode()


def parse_record(raw: bytes, mac: str, line_no: int = 0, offset: int = 0) -> Record:
    """A checksummed body checked against the record schema; raises RecordError naming the
    record and its line."""
    try:
        obj = json.loads(raw)
    except (ValueError, RecursionError):
        raise RecordError(f"line {line_no}: the record is not JSON text") from None
    if not isinstance(obj, dict):
        raise RecordError(f"line {line_no}: the record is not a JSON object")
    seq = obj.get("seq")
    if not _is_int(seq, 0, MAX_SEQ):
        raise RecordError(f"line {line_no}: the record has no sequence number "
                          f"(seq is {_show(seq)}; a whole number from 0 is due)")
    problem = _field_problem(obj)
    if problem is None:
        problem = _DATA_CHECKS[obj["kind"]](obj["data"], seq)
    if problem is not None:
        raise RecordError(f"record {seq} (line {line_no}): {problem}")
    return Record(seq, obj["kind"], obj["t"], obj["mono"], obj["boot"], obj["wall"],
                  obj["data"], obj["prev"], mac, line_no, offset)


def _is_int(value: object, low: int, high: int) -> TypeGuard[int]:
    return type(value) is int and low <= value <= high


def _is_hex64(value: object) -> bool:
    return isinstance(value, str) and re.fullmatch(r"[0-9a-f]{64}", value) is not None


def _show(value: object) -> str:
    """A value in an error message, cut short."""
    try:
        text = json.dumps(value)
    except (ValueError, TypeError, RecursionError):
        text = type(value).__name__
    return text if len(text) <= 40 else text[:37] + "..."


_NS = f"a whole number of ns from 0 to {MAX_NS}"
_FIELDS: tuple[tuple[str, Callable[[Any], bool], str], ...] = (
    ("kind", lambda v: isinstance(v, str), "text"),
    ("t", lambda v: _is_int(v, 0, MAX_NS), _NS),
    ("mono", lambda v: _is_int(v, 0, MAX_NS), _NS),
    ("boot", lambda v: isinstance(v, str) and len(v) <= 200, "text of up to 200 characters"),
    ("wall", lambda v: _is_int(v, 0, MAX_NS), _NS),
    ("data", lambda v: isinstance(v, dict), "an object"),
    ("prev", _is_hex64, "64 hex digits"),
)


def _field_problem(obj: dict[str, Any]) -> str | None:
    for name, valid, allowed in _FIELDS:
        if name not in obj:
            return f"the field {name!r} is missing"
        if not valid(obj[name]):
            return f"the field {name!r} is {_show(obj[name])}; it must be {allowed}"
    if obj["kind"] not in _DATA_CHECKS:     # the kinds this firmware writes
        return f"kind {_show(obj['kind'])} " + NEWER.format(version=__version__)
    return None


def _header_problem(data: dict[str, Any], seq: int) -> str | None:
    fmt = data.get("format")
    if seq != 0:
        return "a header record after the first record"
    if not _is_int(fmt, 1, MAX_SEQ):
        return f"the header's format is {_show(fmt)}; a whole number from 1 is due"
    if fmt > FORMAT:
        return (f"journal format {fmt} is newer than this firmware's ({FORMAT}, version "
                f"{__version__}); the journal comes from a newer version")
    if not isinstance(data.get("config"), str):
        return f"the header's config is {_show(data.get('config'))}; the config text is due"
    if "match_no" in data and not _is_int(data["match_no"], 0, MAX_SEQ):
        return f"the header's match_no is {_show(data['match_no'])}; a whole number is due"
    continues = data.get("continues")
    if continues is not None and not (isinstance(continues, dict)
                                      and isinstance(continues.get("file"), str)):
        return f"the header's continues is {_show(continues)}; an object naming a file is due"
    return None


def _effects_problem(data: dict[str, Any]) -> str | None:
    effects = data.get("effects")
    if not isinstance(effects, list) or not all(isinstance(e, dict) for e in effects):
        return f"the effects are {_show(effects)}; a list of objects is due"
    return None


def _input_problem(data: dict[str, Any], seq: int) -> str | None:
    event = data.get("input")
    if not isinstance(event, dict) or not isinstance(event.get("type"), str):
        return f"the input is {_show(event)}; an object with a type is due"
    return _effects_problem(data)


def _torn_problem(data: dict[str, Any], seq: int) -> str | None:
    for name in ("offset", "length"):
        if not _is_int(data.get(name), 0, MAX_NS):
            return f"the torn record's {name} is {_show(data.get(name))}; a byte count is due"
    return None


SNAPSHOT_FORMAT = 1      # the engine's encoding in a snapshot (snapshot.py)
_SNAPSHOT_PARTS = (("match", dict), ("buttons", dict), ("history", list), ("trimmed", bool),
                   ("serials", int), ("seq", int))


def snapshot_problem(data: dict[str, Any], seq: int = 0) -> str | None:
    """Why a snapshot record's data is not one this firmware reads; None when its outline is
    right (its values are checked as they are decoded, `snapshot.engine_from`)."""
    fmt = data.get("format")
    if not _is_int(fmt, 1, MAX_SEQ):
        return f"the snapshot's format is {_show(fmt)}; a whole number from 1 is due"
    if fmt > SNAPSHOT_FORMAT:
        return (f"snapshot format {fmt} is newer than this firmware's ({SNAPSHOT_FORMAT}, "
                f"version {__version__}); the journal comes from a newer version")
    for name, kind in _SNAPSHOT_PARTS:
        if type(data.get(name)) is not kind:
            return (f"the snapshot's {name} is {_show(data.get(name))}; "
                    f"{'an' if kind is int else 'a'} {kind.__name__} is due")
    return None


_DATA_CHECKS: dict[str, Callable[[dict[str, Any], int], str | None]] = {
    "header": _header_problem,
    "state": snapshot_problem,
    "input": _input_problem,
    "tick": lambda data, seq: _effects_problem(data),
    "torn": _torn_problem,
}


# --- reading ---------------------------------------------------------------------------------

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
    notes = []
    if torn:
        notes.append(f"{path}: a torn last record ({torn.length} bytes at byte "
                     f"{torn.offset}) was dropped")
    if stopped:
        notes.append(f"{path}: {stopped}; replay stops before it")
    return notes


def _file_lines(f: BinaryIO, offset: int, number: int) -> Iterator[Line]:
    """Each line of `f` from `offset` (line `number`; 0: not known), one at a time."""
    for piece in f:
        whole = piece.endswith(b"\n")
        body = piece[:-1] if whole else piece
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
                            raise Damaged("no end of line: the write was cut short")
                        record = self._decode(piece, number, offset)
                        if record.seq != self.last.seq + 1:
                            raise Damaged(f"sequence number {record.seq} where "
                                          f"{self.last.seq + 1} was due")
                    except Damaged as exc:
                        if after is None:
                            self.torn = Torn(offset, self.size - offset)
                            return
                        if _acknowledged(after, offset) is not None:
                            continue    # a torn line that the `torn` record after it owns
                        number = number or self.line_at(offset)
                        self.stopped = f"record at line {number} (byte {offset}) is damaged: {exc}"
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
            problem = str(exc)
        if number == 0:      # read from a snapshot on: name the line all the same
            try:
                decode(piece, self.line_at(offset), offset)
            except RecordError as named:
                problem = str(named)
        raise RecordError(f"{self.path}: {problem}")

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
    """The header of a journal, the offset after its line and the file's size. Only the first
    line is read, up to `limit` bytes (-1: all of it)."""
    try:
        with Path(path).open("rb") as f:
            size = os.fstat(f.fileno()).st_size
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
        raise RecordError(f"{path}: {exc}") from None
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


# --- writing ---------------------------------------------------------------------------------

BUFFER_BYTES = 1 << 18     # a writer without fsync writes in chunks this large


class JournalWriter:
    """Appends sealed records; each append is written and synced before it returns. Without
    `fsync` (a copy made in one go, a run in virtual time) records are written in chunks, and
    `sync` or `close` writes the rest: nothing there has a power cut to survive.

    With `fsync`, a record may also be `write`n without a sync of its own (a quiet edge: a
    button let go, which changes nothing shown): it is in the file at once (a write that fails
    says so at once) and made durable by the next sync, which covers every line written before
    it (one sync for a whole group: `append_batch`). `next_seq` counts only what a sync has
    covered: the hall link reads `next_seq - 1` as the last record on the card. When a write or
    a sync fails, the file is cut back to the end of the last sync, every unsynced record with
    it (`next_seq` unchanged), so the caller writes them all again and the chain stays whole."""

    sync_times: FsyncTimes = FSYNC_TIMES      # every writer of the process, unless a test's own

    def __init__(self, path: Path, key: bytes, fd: int, next_seq: int, prev: str,
                 fsync: bool = True) -> None:
        check_key(key)
        self.path, self.key, self.fd = path, key, fd
        self.next_seq, self.prev = next_seq, prev      # after the last record synced
        self.fsync = fsync
        self.last_t: int | None = None
        self._buffer: list[bytes] = []
        self._buffered = 0
        self._unsynced: list[Record] = []      # written, not yet covered by a sync
        self._synced_end: int | None = None    # the file's size after the last sync

    @staticmethod
    def create(path: str | Path, key: bytes, header: dict[str, Any], t: int, stamp: Stamp,
               fsync: bool = True) -> JournalWriter:
        """A new journal holding only its header (refuses to touch an existing file)."""
        path = Path(path)
        check_key(key)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_APPEND, 0o640)
        except OSError as exc:
            raise JournalError(f"{path}: cannot create the journal: {exc.strerror}") from None
        writer = JournalWriter(path, key, fd, 0, GENESIS, fsync)
        try:
            writer.append("header", t, {"format": FORMAT, "key_id": key_id(key), **header},
                          stamp)
        except JournalError:
            writer.discard()     # an empty file would stand in the way of the next try
            raise
        if fsync:
            fsync_dir(path.parent)
        return writer

    @staticmethod
    def reopen(read: JournalSource, key: bytes, t: int, stamp: Stamp,
               fsync: bool = True) -> JournalWriter:
        """Go on appending to a journal after its last whole record. A torn last line stays in
        the file; a `torn` record written after it tells readers to skip it."""
        if read.stopped:
            raise JournalError(f"{read.path}: damaged in the middle; it is kept as it is and a "
                               f"new journal must continue the match")
        path = Path(read.path)
        try:
            fd = os.open(path, os.O_WRONLY | os.O_APPEND)
        except OSError as exc:
            raise JournalError(f"{path}: cannot open the journal: {exc.strerror}") from None
        try:
            writer = JournalWriter(path, key, fd, read.count, read.last.mac, fsync)
            writer.last_t = read.last.t
            if not _ends_with_newline(path):
                _write_all(fd, b"\n")    # end the torn line, so the next record starts afresh
        except OSError as exc:
            os.close(fd)
            raise JournalError(f"{path}: cannot end its torn last line: {exc.strerror}") from None
        except JournalError:
            os.close(fd)
            raise
        if read.torn is not None:
            try:
                writer.append("torn", t, {"offset": read.torn.offset,
                                          "length": read.torn.length}, stamp)
            except JournalError:
                writer.close()
                raise
        return writer

    @property
    def unsynced(self) -> int:
        """Records written and not yet covered by a sync."""
        return len(self._unsynced)

    def append(self, kind: str, t: int, data: dict[str, Any], stamp: Stamp) -> Record:
        """Write one record and sync it (with every record written before it). On failure the
        file is cut back to its last sync, so a later append (the disk came back) continues a
        whole, unbroken chain."""
        return self.append_batch([(kind, t, data, stamp)])[0]

    def write(self, kind: str, t: int, data: dict[str, Any], stamp: Stamp) -> Record:
        """Write one record without a sync of its own: the next `append` or `append_batch`
        (or `sync`, `close`) makes it durable. JournalError as `append` (every unsynced record
        is then gone from the file)."""
        seq, prev = self._head()
        record, line = self._sealed(seq, prev, kind, t, data, stamp)
        if not self.fsync:
            self._buffered_write(line)
            self.next_seq, self.prev = seq + 1, record.mac
        else:
            self._flush()
            self._guarded(lambda: self._write(line))
            self._unsynced.append(record)
        self.last_t = t
        return record

    def append_batch(self, items: list[tuple[str, int, dict[str, Any], Stamp]]
                     ) -> list[Record]:
        """Write several records and make them durable, with every record written before
        them, by one sync (a group commit: the edges queued behind a press, the timers of one
        wake). All or nothing, as `append`."""
        records: list[Record] = []
        lines: list[bytes] = []
        seq, prev = self._head()
        for kind, t, data, stamp in items:
            record, line = self._sealed(seq, prev, kind, t, data, stamp)
            records.append(record)
            lines.append(line)
            seq, prev = seq + 1, record.mac
        if not records:
            return records
        if not self.fsync:
            for line in lines:
                self._buffered_write(line)
            self.next_seq, self.prev = seq, prev
        else:
            self._flush()                # what waited before fsync was asked for goes first

            def write_and_sync() -> None:
                for line in lines:       # one write each: a fault names its own record
                    self._write(line)
                self._sync_data()
            self._guarded(write_and_sync)
            self._unsynced.extend(records)
            self._settle()
        self.last_t = records[-1].t
        return records

    def _head(self) -> tuple[int, str]:
        """The seq and the `prev` of the next record written."""
        if self._unsynced:
            last = self._unsynced[-1]
            return last.seq + 1, last.mac
        return self.next_seq, self.prev

    def _sealed(self, seq: int, prev: str, kind: str, t: int, data: dict[str, Any],
                stamp: Stamp) -> tuple[Record, bytes]:
        line = encode(self.key, _body(seq, kind, t, stamp, data, prev))
        return Record(seq, kind, t, stamp.mono, stamp.boot, stamp.wall, data, prev,
                      line[-67:-3].decode()), line

    def _guarded(self, action: Callable[[], None]) -> None:
        """Run a write or a sync; when it fails, cut the file back to its last sync and forget
        every unsynced record (JournalError naming the first of them)."""
        if self._synced_end is None:
            try:
                self._synced_end = os.lseek(self.fd, 0, os.SEEK_END)
            except OSError as exc:
                raise JournalError(f"{self.path}: cannot append record {self.next_seq}: "
                                   f"{exc.strerror}") from None
        try:
            action()
        except (JournalError, OSError) as exc:
            with contextlib.suppress(OSError):
                os.ftruncate(self.fd, self._synced_end)   # only ever our own records
            self._unsynced = []
            if isinstance(exc, JournalError):
                raise
            raise JournalError(f"{self.path}: cannot append record {self.next_seq}: "
                               f"{exc.strerror}") from None

    def _settle(self) -> None:
        """A sync returned: what was written is durable."""
        if self._unsynced:
            last = self._unsynced[-1]
            self.next_seq, self.prev = last.seq + 1, last.mac
            self._unsynced = []
        self._synced_end = None          # read again at the next write

    def _sync_data(self) -> None:
        """Make what was written durable (the data, and the size it needs to be read back).
        Its duration goes to `sync_times` (the card's health: the fsync p99 of the hour)."""
        started = time.monotonic_ns()
        os.fsync(self.fd)
        self.sync_times.add(time.monotonic_ns() - started)

    def _buffered_write(self, line: bytes) -> None:
        self._buffer.append(line)
        self._buffered += len(line)
        if self._buffered >= BUFFER_BYTES:
            self._flush()

    def _flush(self) -> None:
        if self._buffer:
            data = b"".join(self._buffer)
            self._buffer, self._buffered = [], 0
            self._write(data)

    def _write(self, line: bytes) -> None:
        """Write LINE at the end, without a sync (the caller's `sync` makes it durable); a
        half-written line is cut back."""
        size = None
        try:
            size = os.lseek(self.fd, 0, os.SEEK_END)
            written = os.write(self.fd, line)
            if written != len(line):
                raise OSError(0, f"short write ({written} of {len(line)} bytes)")
        except OSError as exc:
            if size is not None:
                try:
                    os.ftruncate(self.fd, size)   # only ever our own half-written record
                except OSError:
                    pass
            raise JournalError(f"{self.path}: cannot append record {self.next_seq}: "
                               f"{exc.strerror}") from None

    def close(self) -> None:
        """Close the file, after writing what waits in the buffer and syncing what was written
        without a sync (JournalError if that fails: the file is closed all the same)."""
        if self.fd >= 0:
            try:
                self._flush()
                if self._unsynced:
                    self._guarded(self._sync_data)
                    self._settle()
            finally:
                os.close(self.fd)
                self.fd = -1

    def sync(self) -> None:
        """Write and sync what was appended or written without it (a copy written in one go)."""
        self._flush()
        try:
            self._guarded(self._sync_data)
        except JournalError as exc:
            raise JournalError(f"{self.path}: cannot sync the journal: {exc}") from None
        self._settle()

    def discard(self) -> None:
        """Close and remove a journal this writer created that holds nothing whole yet."""
        self._buffer, self._buffered = [], 0
        self._unsynced = []
        with contextlib.suppress(JournalError):
            self.close()
        with contextlib.suppress(OSError):
            self.path.unlink()


class JournalSink(Protocol):
    """What a session writes to: a `JournalWriter`, or a `DeferredJournal` not yet on disk."""

    @property
    def path(self) -> Path: ...

    @property
    def last_t(self) -> int | None: ...

    def append(self, kind: str, t: int, data: dict[str, Any], stamp: Stamp) -> Record: ...

    def append_batch(self, items: list[tuple[str, int, dict[str, Any], Stamp]]
                     ) -> list[Record]: ...

    def close(self) -> None: ...


class DeferredJournal:
    """A journal that could not be created or opened at start (a read-only or full SD card):
    the clock runs all the same. Each append first tries to open it again and fails like a full
    disk until that works, so the session keeps its records in order meanwhile; once it opens,
    its header (or its `torn` record) is on disk before the records that waited."""

    def __init__(self, path: Path, opener: Callable[[], JournalWriter], last_t: int | None,
                 why: str, retry_ns: int = 0,
                 clock_ns: Callable[[], int] = time.monotonic_ns) -> None:
        self._planned, self._open, self._last_t, self._why = path, opener, last_t, why
        self.writer: JournalWriter | None = None
        # An opener that copies a whole journal (a match continued after damage) is not tried
        # again at every press, on the clock's loop, but at most every `retry_ns`.
        self.clock_ns = clock_ns
        self._backoff = Backoff(retry_ns, retry_ns)
        self._backoff.failed_at(clock_ns())

    def retry_now(self) -> None:
        """The next append tries to open it whatever the wait (the clock is stopping)."""
        self._backoff.ready_at = None

    @property
    def path(self) -> Path:
        return self.writer.path if self.writer is not None else self._planned

    @property
    def last_t(self) -> int | None:
        return self.writer.last_t if self.writer is not None else self._last_t

    def append(self, kind: str, t: int, data: dict[str, Any], stamp: Stamp) -> Record:
        return self._opened().append(kind, t, data, stamp)

    def append_batch(self, items: list[tuple[str, int, dict[str, Any], Stamp]]
                     ) -> list[Record]:
        return self._opened().append_batch(items)

    def _opened(self) -> JournalWriter:
        """The writer, opened now if it was not yet (JournalError while it cannot be)."""
        if self.writer is None:
            now = self.clock_ns()
            if not self._backoff.ready(now):
                raise JournalError(f"{self._planned}: {self._why} (tried again every "
                                   f"{self._backoff.initial / 1e9:g} s)")
            try:
                self.writer = self._open()
            except JournalError as exc:
                self._why = str(exc)
                self._backoff.failed_at(now)
                raise
        return self.writer

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()


def open_or_defer(path: Path, opener: Callable[[], JournalWriter], last_t: int | None,
                  retry_ns: int = 0) -> tuple[JournalSink, str | None]:
    """The journal `opener` opens, or, when it cannot be opened now, one that will be opened
    on a later append; and why not, for the displays."""
    try:
        return opener(), None
    except KeyRefused:
        raise                 # a bad key is not a full disk: it is refused, not retried
    except JournalError as exc:
        return DeferredJournal(path, opener, last_t, str(exc), retry_ns), str(exc)


def _ends_with_newline(path: Path) -> bool:
    with path.open("rb") as f:
        f.seek(0, os.SEEK_END)
        if f.tell() == 0:
            return True
        f.seek(-1, os.SEEK_END)
        return f.read(1) == b"\n"


def write_atomically(path: Path, data: bytes) -> None:
    """PATH holds DATA, whole, or what it held before: written beside it, synced, renamed over
    it, and the rename synced (a small state file: the hall link's position, the hall's rounds)."""
    tmp = path.with_name(path.name + ".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o640)
    try:
        written = 0
        while written < len(data):
            written += os.write(fd, data[written:])
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(tmp, path)
    fsync_dir(path.parent)                  # the rename itself survives a power cut


def fsync_dir(directory: Path) -> None:
    """Make a new file's directory entry durable too."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


# --- verification ----------------------------------------------------------------------------

# What a verdict could say of the seals (`Verdict.seal`).
SEAL_CHECKED = "checked"                   # with the key that sealed the journal
SEAL_OTHER_DEVICE = "another device"       # the header names another device's key
SEAL_NOT_CHECKED = "not checked"           # no key given
NO_KEY_GIVEN = "no device key given"


@dataclass(frozen=True)
class Verdict:
    """The one verdict on a journal, which `gammonclock verify`, the export and the hall's
    archive all print in the same words (`words`): intact; TAMPERED; sealed by another device
    (naming its key id); seal not checked (no key). The chain (checksums, links, sequence) is
    checked in every case; `intact` is False only for a journal that is tampered with (exit 1),
    and True when the chain holds, whether or not the seals could be checked (exit 0)."""

    intact: bool
    records: int
    message: str                   # "intact: N records", or what is wrong (without "TAMPERED")
    seal: str = SEAL_CHECKED       # SEAL_CHECKED, SEAL_OTHER_DEVICE or SEAL_NOT_CHECKED
    sealed_by: str | None = None   # another device: the key id its header names
    this_key: str | None = None    # the key id of the key given, if any
    no_key: str = NO_KEY_GIVEN     # no key: why there is none

    @property
    def sealed(self) -> bool:
        """Whether the seals were checked (with the key that made them)."""
        return self.seal == SEAL_CHECKED

    @property
    def words(self) -> str:
        """The verdict in the one vocabulary every reader prints."""
        if not self.intact:
            return f"TAMPERED: {self.message}"
        if self.seal == SEAL_CHECKED:
            return self.message
        if self.seal == SEAL_OTHER_DEVICE:
            return (f"sealed by another device (key id {self.sealed_by}; this device's key id "
                    f"{self.this_key}): seal not checked; chain {self.message}")
        return f"seal not checked: {self.no_key}; chain {self.message}"


def verify(path: str | Path, key: bytes | None,
           observe: Callable[[Record], None] | None = None, *,
           no_key: str = NO_KEY_GIVEN) -> Verdict:
    """Check every checksum, link and sequence number, and every seal when `key` made them;
    name the first record altered, removed, inserted or moved. One walk through the file, a
    line at a time: `observe` sees each record whose seal (if checked) and link hold, in order
    (the replay that `gammonclock verify` summarises, in the same pass); a RecordError it raises
    counts as a record not understood, and it sees no more.

    The seals are checked when `key` seals the header. When it does not and the header names
    another key id, the journal was sealed by another device: its chain is checked, not its
    seals (unless the record after the header is sealed with `key`: then the header was
    altered). Without a key (`no_key` says why) only the chain is checked.

    The chain and seals come first: a journal that fails them is TAMPERED whatever else is wrong
    with it. A journal that holds but has a record this firmware cannot understand raises
    RecordError naming that record."""
    if key is not None:
        check_key(key)
    walk = _SealWalk(key, observe, no_key)
    try:
        with Path(path).open("rb") as f:
            verdict = walk.run(_with_next(_file_lines(f, 0, 1)))
    except OSError as exc:
        raise JournalError(f"{path}: cannot read the journal: {exc.strerror}") from None
    if verdict is not None:
        return verdict
    if walk.not_understood is not None:
        raise RecordError(f"{path}: {walk.not_understood}")
    if walk.expected == 0:
        return walk.verdict(False, 0, "no records")
    return walk.verdict(True, walk.expected, f"intact: {walk.expected} records{walk.torn_note}")


class _SealWalk:
    """The state of `verify`'s walk: the next sequence number and the seal it must follow."""

    def __init__(self, key: bytes | None, observe: Callable[[Record], None] | None,
                 no_key: str = NO_KEY_GIVEN) -> None:
        self.key, self.observe, self.no_key = key, observe, no_key
        self.prev, self.expected, self.torn_note = GENESIS, 0, ""
        self.not_understood: RecordError | None = None
        self.seal = SEAL_NOT_CHECKED if key is None else SEAL_CHECKED
        self.sealed_by: str | None = None
        self.header_line = 1

    def verdict(self, intact: bool, records: int, message: str) -> Verdict:
        return Verdict(intact, records, message, self.seal, self.sealed_by,
                       None if self.key is None else key_id(self.key), self.no_key)

    def run(self, lines: Iterator[tuple[Line, Line | None]]) -> Verdict | None:
        """The verdict of the first record that fails, or None when every one holds."""
        for (number, offset, piece, whole), after in lines:
            try:
                if not whole:
                    raise Damaged("no end of line")
                raw, mac = split_line(piece)
            except Damaged as exc:
                if after is not None and _acknowledged(after, offset) is not None:
                    continue
                if after is None and not whole:
                    self.torn_note = f"; a torn last line of {len(piece)} bytes was dropped"
                    return None
                return self.verdict(False, self.expected, f"line {number}: record "
                                                          f"{self.expected} was altered ({exc})")
            failed = self.check(number, offset, raw, mac)
            if failed is not None:
                return failed
        return None

    def seal_fails(self, number: int, raw: bytes, mac: str) -> Verdict | None:
        """Why this record's seal fails, when the seals are checked; None when it holds."""
        expected, key = self.expected, self.key
        if key is None or self.seal == SEAL_NOT_CHECKED:
            return None
        holds = hmac.compare_digest(mac, _seal(key, raw))
        if self.seal == SEAL_OTHER_DEVICE:
            if expected == 1 and holds:      # ours after all: the header's key id was changed
                self.seal, self.sealed_by = SEAL_CHECKED, None
                return self.verdict(False, 0, f"line {self.header_line}: record 0 was altered "
                                              f"(it names another device's key; the records "
                                              f"after it are sealed with this one)")
            return None
        if holds:
            return None
        if expected == 0:
            other = _loose_key_id(raw)
            if isinstance(other, str) and other != key_id(key):
                self.seal, self.sealed_by, self.header_line = SEAL_OTHER_DEVICE, other, number
                return None
        return self.verdict(False, expected, f"line {number}: record {expected} was altered "
                                             f"(its seal does not match)")

    def check(self, number: int, offset: int, raw: bytes, mac: str) -> Verdict | None:
        expected = self.expected
        failed = self.seal_fails(number, raw, mac)
        if failed is not None:
            return failed
        try:
            record = parse_record(raw, mac, number, offset)
        except RecordError as exc:
            # Sealed, so not tampered with as far as the seal tells; the chain check of the
            # next record still holds it in place.
            self.not_understood = self.not_understood or exc
            self.prev, self.expected = mac, expected + 1
            return None
        if record.seq > expected:
            return self.verdict(False, expected, f"line {number}: record"
                                + (f"s {expected}-{record.seq - 1} were"
                                   if record.seq - expected > 1 else f" {expected} was")
                                + " removed")
        if record.seq < expected:
            return self.verdict(False, expected, f"line {number}: record {record.seq} was "
                                                 f"inserted or moved here (record {expected} "
                                                 f"was due)")
        if record.prev != self.prev:
            return self.verdict(False, expected, f"line {number}: record {record.seq} does not "
                                                 f"follow the record before it (inserted, or "
                                                 f"one removed)")
        self.prev, self.expected = record.mac, expected + 1
        if self.observe is not None and self.not_understood is None:
            try:
                self.observe(record)
            except RecordError as exc:
                self.not_understood = exc
        return None


def _loose_key_id(raw: bytes) -> object:
    """The key id a header names, read without the schema (to explain a seal that fails)."""
    try:
        found = json.loads(raw)["data"].get("key_id")
        return found if isinstance(found, str) else None
    except (ValueError, RecursionError, KeyError, TypeError, AttributeError):
        return None

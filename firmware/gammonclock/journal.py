"""The journal (SPEC §11): an append-only file per match, the source of truth.

One JSON record per line, written and fsynced before anything shows its effect:

    {"boot": "<boot id>", "data": {...}, "kind": "input", "mono": <host monotonic ns>,
     "prev": "<mac of record 6>", "seq": 7, "t": <engine ns>, "wall": <ns since the epoch>,
     "sum": "<sha256 of the body>", "mac": "<HMAC-SHA256 of the body with the device key>"}

The body is the record in canonical JSON (sorted keys, no spaces) without `sum` and `mac`, which
follow it and cover exactly its bytes.

- `header` (seq 0) holds the config text, so a journal replays on its own; `input` holds one input
  and every effect it caused; `tick` holds a timer's effects or is a checkpoint while a clock runs;
  `torn` acknowledges a half-written line left by a power cut, which is then skipped.
- `sum` finds a damaged line without the key; `prev` chains each record to the one before; `mac`
  seals it with the device key. A record altered, removed, inserted or moved breaks the seals.

Reading keeps every whole record up to the first damaged one: a torn last line is dropped and
reported; a damaged line in the middle stops the replay there. The file itself is never rewritten.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import re
import secrets
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

FORMAT = 1
SECRET_FILE = "device.key"
JOURNALS_DIR = "journals"
GENESIS = "0" * 64          # the `prev` of the header


class JournalError(Exception):
    """A journal that cannot be read or written; the message says which file and why."""


# --- the device key --------------------------------------------------------------------------

def load_or_create_key(state_dir: str | Path) -> bytes:
    """The per-device key in `state_dir`, created (mode 0600) on first use."""
    path = Path(state_dir) / SECRET_FILE
    try:
        Path(state_dir).mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return read_key(state_dir)
    except OSError as exc:
        raise JournalError(f"{path}: cannot create the device key: {exc.strerror}") from None
    key = secrets.token_hex(32)
    with os.fdopen(fd, "w") as out:
        out.write(key + "\n")
        out.flush()
        os.fsync(out.fileno())
    return bytes.fromhex(key)


def read_key(state_dir: str | Path) -> bytes:
    path = Path(state_dir) / SECRET_FILE
    try:
        return bytes.fromhex(path.read_text().strip())
    except OSError as exc:
        raise JournalError(f"{path}: cannot read the device key: {exc.strerror}") from None
    except ValueError:
        raise JournalError(f"{path}: the device key is not hex text") from None


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


def _canonical(obj: dict[str, Any]) -> bytes:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=True).encode()


def _body(seq: int, kind: str, t: int, stamp: Stamp, data: dict[str, Any],
          prev: str) -> dict[str, Any]:
    return {"seq": seq, "kind": kind, "t": t, "mono": stamp.mono, "boot": stamp.boot,
            "wall": stamp.wall, "data": data, "prev": prev}


def _seal(key: bytes, body: bytes) -> str:
    return hmac.new(key, body, hashlib.sha256).hexdigest()


_TAIL = re.compile(rb',"sum":"([0-9a-f]{16})","mac":"([0-9a-f]{64})"\}$')


def encode(key: bytes, body: dict[str, Any]) -> bytes:
    """One line: the canonical body, then its checksum and its seal over exactly those bytes."""
    raw = _canonical(body)
    checksum = hashlib.sha256(raw).hexdigest()[:16]
    return raw[:-1] + f',"sum":"{checksum}","mac":"{_seal(key, raw)}"}}\n'.encode()


class Damaged(ValueError):
    """A line that is not a whole record (torn, flipped bytes, not ours)."""


def decode(line: bytes, line_no: int = 0, offset: int = 0) -> tuple[Record, bytes]:
    """The record of a line and the bytes its checksum and seal cover; raises Damaged."""
    tail = _TAIL.search(line)
    if tail is None:
        raise Damaged("no checksum and seal at its end")
    raw = line[:tail.start()] + b"}"
    if hashlib.sha256(raw).hexdigest()[:16] != tail.group(1).decode():
        raise Damaged("checksum does not match")
    try:
        obj = json.loads(raw)
        record = Record(obj["seq"], obj["kind"], obj["t"], obj["mono"], obj["boot"], obj["wall"],
                        obj["data"], obj["prev"], tail.group(2).decode(), line_no, offset)
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise Damaged(f"not a record ({type(exc).__name__})") from None
    return record, raw


# --- reading ---------------------------------------------------------------------------------

@dataclass(frozen=True)
class Torn:
    offset: int
    length: int


@dataclass
class JournalRead:
    """What a journal holds: the whole records, and why reading stopped early if it did."""

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

    def problems(self) -> list[str]:
        notes = []
        if self.torn:
            notes.append(f"{self.path}: a torn last record ({self.torn.length} bytes at byte "
                         f"{self.torn.offset}) was dropped")
        if self.stopped:
            notes.append(f"{self.path}: {self.stopped}; replay stops before it")
        return notes


def _lines(blob: bytes) -> list[tuple[int, int, bytes, bool]]:
    """(line number, offset, bytes, whole) for each line; `whole` when it ends in a newline."""
    out, offset = [], 0
    for number, piece in enumerate(blob.split(b"\n"), start=1):
        end = offset + len(piece)
        whole = end < len(blob)
        if piece or whole:
            out.append((number, offset, piece, whole))
        offset = end + 1
    return out


def read_journal(path: str | Path) -> JournalRead:
    """Every whole record of a journal, in order, for replay (checksums only; no key needed)."""
    try:
        blob = Path(path).read_bytes()
    except OSError as exc:
        raise JournalError(f"{path}: cannot read the journal: {exc.strerror}") from None
    result = JournalRead(str(path), [], size=len(blob))
    lines = _lines(blob)
    for index, (number, offset, piece, whole) in enumerate(lines):
        try:
            if not whole:
                raise Damaged("no end of line: the write was cut short")
            record, _ = decode(piece, number, offset)
            if record.seq != len(result.records):
                raise Damaged(f"sequence number {record.seq} where {len(result.records)} was due")
        except Damaged as exc:
            if index == len(lines) - 1:
                result.torn = Torn(offset, len(blob) - offset)
                break
            if _acknowledged(lines[index + 1], offset) is not None:
                continue        # a torn line that the `torn` record after it owns: skip it
            result.stopped = f"record at line {number} (byte {offset}) is damaged: {exc}"
            break
        result.records.append(record)
    if not result.records:
        raise JournalError(f"{path}: no header record; not a gammonclock journal")
    if result.header.kind != "header":
        raise JournalError(f"{path}: the first record is not a header")
    return result


def _acknowledged(next_line: tuple[int, int, bytes, bool], offset: int) -> Record | None:
    """The `torn` record right after a damaged line that names that line, if there is one."""
    number, next_offset, piece, _ = next_line
    try:
        record, _ = decode(piece, number, next_offset)
    except Damaged:
        return None
    if record.kind == "torn" and record.data.get("offset") == offset:
        return record
    return None


# --- writing ---------------------------------------------------------------------------------

class JournalWriter:
    """Appends sealed records; each append is written and fsynced before it returns."""

    def __init__(self, path: Path, key: bytes, fd: int, next_seq: int, prev: str,
                 fsync: bool = True) -> None:
        self.path, self.key, self.fd = path, key, fd
        self.next_seq, self.prev = next_seq, prev
        self.fsync = fsync
        self.last_t: int | None = None

    @staticmethod
    def create(path: str | Path, key: bytes, header: dict[str, Any], t: int, stamp: Stamp,
               fsync: bool = True) -> JournalWriter:
        """A new journal holding only its header (refuses to touch an existing file)."""
        path = Path(path)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_APPEND, 0o640)
        except OSError as exc:
            raise JournalError(f"{path}: cannot create the journal: {exc.strerror}") from None
        writer = JournalWriter(path, key, fd, 0, GENESIS, fsync)
        writer.append("header", t, {"format": FORMAT, "key_id": key_id(key), **header}, stamp)
        if fsync:
            _fsync_dir(path.parent)
        return writer

    @staticmethod
    def reopen(read: JournalRead, key: bytes, t: int, stamp: Stamp,
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
        writer = JournalWriter(path, key, fd, len(read.records), read.last.mac, fsync)
        writer.last_t = read.last.t
        if not _ends_with_newline(path):
            os.write(fd, b"\n")       # end the torn line, so the next record starts afresh
        if read.torn is not None:
            writer.append("torn", t, {"offset": read.torn.offset,
                                      "length": read.torn.length}, stamp)
        return writer

    def append(self, kind: str, t: int, data: dict[str, Any], stamp: Stamp) -> Record:
        """Write one record and fsync it. On failure the file is cut back to where it was, so a
        later append (the disk came back) continues a whole, unbroken chain."""
        body = _body(self.next_seq, kind, t, stamp, data, self.prev)
        line = encode(self.key, body)
        size = None
        try:
            size = os.lseek(self.fd, 0, os.SEEK_END)
            written = os.write(self.fd, line)
            if written != len(line):
                raise OSError(0, f"short write ({written} of {len(line)} bytes)")
            if self.fsync:
                os.fsync(self.fd)
        except OSError as exc:
            if size is not None:
                try:
                    os.ftruncate(self.fd, size)   # only ever our own half-written record
                except OSError:
                    pass
            raise JournalError(f"{self.path}: cannot append record {self.next_seq}: "
                               f"{exc.strerror}") from None
        record = Record(self.next_seq, kind, t, stamp.mono, stamp.boot, stamp.wall, data,
                        self.prev, line[-67:-3].decode())
        self.next_seq += 1
        self.prev = record.mac
        self.last_t = t
        return record

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1


def _ends_with_newline(path: Path) -> bool:
    with path.open("rb") as f:
        f.seek(0, os.SEEK_END)
        if f.tell() == 0:
            return True
        f.seek(-1, os.SEEK_END)
        return f.read(1) == b"\n"


def _fsync_dir(directory: Path) -> None:
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

@dataclass(frozen=True)
class Verdict:
    intact: bool
    records: int
    message: str


def verify(path: str | Path, key: bytes) -> Verdict:
    """Check every seal and link; name the first record altered, removed, inserted or moved."""
    try:
        blob = Path(path).read_bytes()
    except OSError as exc:
        raise JournalError(f"{path}: cannot read the journal: {exc.strerror}") from None
    lines = _lines(blob)
    prev, expected, torn_note = GENESIS, 0, ""
    for index, (number, offset, piece, whole) in enumerate(lines):
        last = index == len(lines) - 1
        try:
            if not whole:
                raise Damaged("no end of line")
            record, raw = decode(piece, number, offset)
        except Damaged as exc:
            if index + 1 < len(lines) and _acknowledged(lines[index + 1], offset) is not None:
                continue
            if last and not whole:
                torn_note = f"; a torn last line of {len(piece)} bytes was dropped"
                break
            return Verdict(False, expected, f"line {number}: record {expected} was altered "
                                            f"({exc})")
        if not hmac.compare_digest(record.mac, _seal(key, raw)):
            if record.seq == 0 and record.data.get("key_id") not in (None, key_id(key)):
                return Verdict(False, 0, f"sealed with another device key "
                                         f"(key id {record.data.get('key_id')}, this key "
                                         f"{key_id(key)})")
            return Verdict(False, expected, f"line {number}: record {record.seq} was altered "
                                            f"(its seal does not match)")
        if record.seq > expected:
            return Verdict(False, expected, f"line {number}: record"
                           + (f"s {expected}-{record.seq - 1} were" if record.seq - expected > 1
                              else f" {expected} was") + " removed")
        if record.seq < expected:
            return Verdict(False, expected, f"line {number}: record {record.seq} was inserted or "
                                            f"moved here (record {expected} was due)")
        if record.prev != prev:
            return Verdict(False, expected, f"line {number}: record {record.seq} does not follow "
                                            f"the record before it (inserted, or one removed)")
        prev, expected = record.mac, expected + 1
    if expected == 0:
        return Verdict(False, 0, "no records")
    return Verdict(True, expected, f"intact: {expected} records{torn_note}")

"""Writing a journal (SPEC §11): `JournalWriter` appends sealed records and syncs them (one sync
per step under group commit); `DeferredJournal` keeps a match going when the card cannot be
written, its records waiting in order; atomic writes of small files beside it."""

from __future__ import annotations

import contextlib
import logging
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

from gammonclock.backoff import Backoff

from .durable import fsync_dir, write_all
from .fsync_times import SYNC_TIMES, SyncTimes
from .key import KeyRefused, check_key, key_id
from .prealloc import LOW_BYTES, fill_target, fill_zeros, written_end
from .reader import JournalSource
from .records import FORMAT, GENESIS, JournalError, Record, Stamp, _body, encode

BUFFER_BYTES = 1 << 18     # a writer without fsync writes in chunks this large

log = logging.getLogger(__name__)

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
    it (`next_seq` unchanged), so the caller writes them all again and the chain stays whole.

    Records go at the journal's logical end (the file's offset, kept there), and a sync is an
    `fdatasync`. With `fill_ahead` (the clock's loop, when idle) the file holds written,
    fsynced zeros after it (`prealloc`): an append there changes neither the size nor the
    blocks, so its sync writes the data alone. `trim` and `close` cut the zeros off."""

    sync_times: SyncTimes = SYNC_TIMES        # every writer of the process, unless a test's own

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
        self._synced_end: int | None = None    # the logical end after the last sync
        self.ahead = fsync                     # zeros may lie after the logical end
        self._fill_failed_at: int | None = None   # the logical end when a fill last failed

    @staticmethod
    def create(path: str | Path, key: bytes, header: dict[str, Any], t: int, stamp: Stamp,
               fsync: bool = True) -> JournalWriter:
        """A new journal holding only its header (refuses to touch an existing file)."""
        path = Path(path)
        check_key(key)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o640)
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
        """Go on appending to a journal after its last whole record, at its logical end (the
        zeros a crash left after it are written over). A torn last line stays in the file; a
        `torn` record written after it tells readers to skip it."""
        if read.stopped:
            raise JournalError(f"{read.path}: damaged in the middle; it is kept as it is and a "
                               f"new journal must continue the match")
        path = Path(read.path)
        try:
            fd = os.open(path, os.O_WRONLY)
        except OSError as exc:
            raise JournalError(f"{path}: cannot open the journal: {exc.strerror}") from None
        try:
            writer = JournalWriter(path, key, fd, read.count, read.last.mac, fsync)
            writer.last_t = read.last.t
            end = written_end(path)
            os.lseek(fd, end, os.SEEK_SET)
            if not _ends_with_newline(path, end):
                write_all(fd, b"\n")    # end the torn line, so the next record starts afresh
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
                self._synced_end = os.lseek(self.fd, 0, os.SEEK_CUR)
            except OSError as exc:
                raise JournalError(f"{self.path}: cannot append record {self.next_seq}: "
                                   f"{exc.strerror}") from None
        try:
            action()
        except (JournalError, OSError) as exc:
            with contextlib.suppress(OSError):
                os.ftruncate(self.fd, self._synced_end)   # only ever our own records
                os.lseek(self.fd, self._synced_end, os.SEEK_SET)
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
        """Make what was written durable (the data, and the size it needs to be read back when
        it grew: `fdatasync` writes no other metadata, and none at all into the zeros filled
        ahead). Its duration goes to `sync_times` (the card's health: the sync p99 of the
        hour)."""
        started = time.monotonic_ns()
        os.fdatasync(self.fd)
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
        """Write LINE at the logical end, without a sync (the caller's `sync` makes it
        durable); a half-written line is cut back (the zeros after it with it)."""
        size = None
        try:
            size = os.lseek(self.fd, 0, os.SEEK_CUR)
            written = os.write(self.fd, line)
            if written != len(line):
                raise OSError(0, f"short write ({written} of {len(line)} bytes)")
        except OSError as exc:
            if size is not None:
                try:
                    os.ftruncate(self.fd, size)   # only ever our own half-written record
                    os.lseek(self.fd, size, os.SEEK_SET)
                except OSError:
                    pass
            raise JournalError(f"{self.path}: cannot append record {self.next_seq}: "
                               f"{exc.strerror}") from None

    def close(self) -> None:
        """Close the file, after writing what waits in the buffer and syncing what was written
        without a sync, its zeros ahead cut off (JournalError if that fails: the file is closed
        all the same)."""
        if self.fd >= 0:
            try:
                self._flush()
                if self._unsynced:
                    self._guarded(self._sync_data)
                    self._settle()
                self.trim()
            finally:
                os.close(self.fd)
                self.fd = -1

    def fill_ahead(self) -> bool:
        """Fill zeros ahead of the logical end when fewer than `prealloc.LOW_BYTES` are left:
        written and fsynced, so that the appends' `fdatasync`s need no metadata. Off the press
        path: the clock's loop calls it when idle (`keep_ahead`), whether a quiet record waits
        for its sync or not (the zeros go after it; a failed sync cuts them off with it). True
        when it filled. A fill that fails (a full card) is logged, and tried again once the
        journal has grown by LOW_BYTES: the appends go on all the same, each sync then writing
        the size too."""
        if not (self.fsync and self.fd >= 0) or self._buffer:
            return False
        end = 0
        try:
            end = os.lseek(self.fd, 0, os.SEEK_CUR)
            size = os.fstat(self.fd).st_size
            if size - end >= LOW_BYTES or (self._fill_failed_at is not None
                                            and end < self._fill_failed_at + LOW_BYTES):
                return False
            started = time.monotonic_ns()
            fill_zeros(self.fd, max(size, end), fill_target(end))
        except OSError as exc:
            self._fill_failed_at = end
            log.warning("%s: cannot fill the journal ahead with zeros (%s); each sync writes "
                        "its size meanwhile", self.path, exc.strerror or exc)
            return False
        self._fill_failed_at, self.ahead = None, True
        log.debug("%s: zeros filled ahead to byte %d in %.1f ms", self.path,
                  fill_target(end), (time.monotonic_ns() - started) / 1e6)
        return True

    def trim(self) -> None:
        """Cut the zeros after the logical end off (the match is over, or the clock stops). A
        trim that fails leaves zeros every reader passes over: logged only."""
        self.ahead = False
        if self.fd < 0:
            return
        try:
            end = os.lseek(self.fd, 0, os.SEEK_CUR)
            if os.fstat(self.fd).st_size > end:
                os.ftruncate(self.fd, end)
                os.fsync(self.fd)
        except OSError as exc:
            log.warning("%s: cannot cut the zeros after the journal's end off (%s); every "
                        "reader passes over them", self.path, exc.strerror or exc)

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

def keep_ahead(journal: JournalSink, match_over: bool) -> None:
    """The journal's zeros, when the clock's loop is idle: filled ahead while the match goes on,
    cut off once it is over (a journal not opened yet: nothing)."""
    writer = journal.writer if isinstance(journal, DeferredJournal) else journal
    if isinstance(writer, JournalWriter):
        if match_over:
            if writer.ahead:
                writer.trim()
        else:
            writer.fill_ahead()

def _ends_with_newline(path: Path, end: int) -> bool:
    """Whether the byte before `end` (the logical end) ends a line (or the file is empty)."""
    if end == 0:
        return True
    with path.open("rb") as f:
        f.seek(end - 1)
        return f.read(1) == b"\n"



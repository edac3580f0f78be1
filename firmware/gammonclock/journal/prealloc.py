"""A journal filled ahead with zeros (issue 20): a press's sync is an `fdatasync` that finds the
file's size and blocks already on the card, so it writes the record's data and no metadata.

The zeros are *written* (not `fallocate`d: ext4 keeps a fallocated extent "unwritten", and the
first write into it changes the extent tree, a metadata commit at the very press) and fsynced,
off the press path (`JournalWriter.fill_ahead`, from the clock's loop when it is idle). Records
go at the journal's *logical end*: the byte after the last one that is not zero (no record holds
a zero byte: JSON escapes it). The zeros after it are not part of the journal; every reader
stops there, and a finished match's journal is cut to it (`JournalWriter.trim`).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import BinaryIO

AHEAD_BYTES = 1 << 17        # the zeros kept ahead of the logical end once filled (128 KiB)
LOW_BYTES = AHEAD_BYTES // 2  # fewer zeros left than this: filled again when the loop is idle
PAGE = 4096                  # a fill ends on a page's end
MOST_AHEAD = AHEAD_BYTES + PAGE   # the most zeros a journal holds after its logical end
_SCAN = 1 << 16              # bytes read at a time from the end, looking for the last non-zero
_ZEROS = bytes(_SCAN)


def logical_end(f: BinaryIO, size: int | None = None) -> int:
    """The offset after the last byte of `f` that is not zero (0 for a file of zeros), looked
    for from its end (`size`: the file's size, when known); the file's position moves."""
    end = os.fstat(f.fileno()).st_size if size is None else size
    window = PAGE                   # a journal without zeros: its last page alone is read
    while end > 0:
        start = max(0, end - window)
        window = _SCAN
        f.seek(start)
        blob = f.read(end - start)
        if len(blob) < end - start:     # the file shrank meanwhile: look again from its end
            end = start + len(blob)
            continue
        kept = len(blob.rstrip(b"\0"))
        if kept:
            return start + kept
        end = start
    return 0


def written_end(path: str | Path) -> int:
    """The logical end of the journal at `path` (OSError when it cannot be read)."""
    with Path(path).open("rb") as f:
        return logical_end(f)


def written_within(f: BinaryIO, cap: int) -> int | None:
    """The logical end of `f`, an untrusted file (a stick's) that is refused when more than
    `cap` bytes are written in it; None, read not at all, when the file is larger than `cap`
    plus the most zeros a journal holds after its end (`MOST_AHEAD`): its written part is over
    the cap, or it is no journal. Else at most that many bytes are read, from the end, 64 KiB
    at a time. OSError as the OS gives; the file's position moves."""
    size = os.fstat(f.fileno()).st_size
    if size > cap + MOST_AHEAD:
        return None
    return logical_end(f, size)


def written_bytes(path: str | Path) -> bytes:
    """What a journal holds, its zeros ahead left out: what a copy of it takes (the stick, a
    whole journal sent to the hall). OSError when it cannot be read."""
    with Path(path).open("rb") as f:
        end = logical_end(f)
        f.seek(0)
        return f.read(end)


def fill_zeros(fd: int, start: int, end: int) -> None:
    """Write zeros over [start, end) of `fd` and fsync it (the file's new size and blocks on
    the card: later syncs of data written there need no metadata). OSError as the OS gives."""
    offset = start
    while offset < end:
        written = os.pwrite(fd, _ZEROS[:min(_SCAN, end - offset)], offset)
        if written <= 0:
            raise OSError(0, f"short write of zeros at byte {offset}")
        offset += written
    os.fsync(fd)


def fill_target(end: int) -> int:
    """The size a fill brings a journal whose logical end is `end` to: AHEAD_BYTES of zeros
    after it, to a page's end."""
    return -(-(end + AHEAD_BYTES) // PAGE) * PAGE

"""`gammonclock verify` (SPEC §11): every record's chain and, with the key that made them, every
seal; the verdict says intact, tampered (naming the first record that is not), sealed by another
device, or seal not checked."""

from __future__ import annotations

import io
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from gammonclock.config.problems import Problem, message_of

from .key import check_key, key_id
from .reader import Line, _acknowledged, _file_lines, _with_next
from .records import (
    GENESIS,
    Damaged,
    JournalError,
    Record,
    RecordError,
    in_file,
    parse_record,
    seal_holds,
    split_line,
)

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
    return _walked(walk, verdict, path)


def verify_text(text: bytes, key: bytes, name: str) -> Verdict:
    """`verify` of a journal held in memory (the hall's copy of a table's journal, built from
    its events), NAME standing for its path in what it says."""
    check_key(key)
    walk = _SealWalk(key, None, NO_KEY_GIVEN)
    return _walked(walk, walk.run(_with_next(_file_lines(io.BytesIO(text), 0, 1))), name)


def _walked(walk: _SealWalk, verdict: Verdict | None, path: str | Path) -> Verdict:
    if verdict is not None:
        return verdict
    if walk.not_understood is not None:
        raise RecordError(in_file(path, message_of(walk.not_understood)))
    if walk.expected == 0:
        return walk.verdict(False, 0, Problem("jv.no_records"))
    return walk.verdict(True, walk.expected, Problem("jv.intact", n=walk.expected,
                                                     torn=walk.torn_note))

class _SealWalk:
    """The state of `verify`'s walk: the next sequence number and the seal it must follow."""

    def __init__(self, key: bytes | None, observe: Callable[[Record], None] | None,
                 no_key: str = NO_KEY_GIVEN) -> None:
        self.key, self.observe, self.no_key = key, observe, no_key
        self.prev, self.expected = GENESIS, 0
        self.torn_note: str = ""
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
                    raise Damaged(Problem("jd.no_eol"))
                raw, mac = split_line(piece)
            except Damaged as exc:
                if after is not None and _acknowledged(after, offset) is not None:
                    continue
                if after is None and not whole:
                    self.torn_note = Problem("jv.torn", n=len(piece))
                    return None
                return self.verdict(False, self.expected, Problem(
                    "jv.altered", line=number, record=self.expected, why=message_of(exc)))
            failed = self.check(number, offset, raw, mac)
            if failed is not None:
                return failed
        return None

    def seal_fails(self, number: int, raw: bytes, mac: str) -> Verdict | None:
        """Why this record's seal fails, when the seals are checked; None when it holds."""
        expected, key = self.expected, self.key
        if key is None or self.seal == SEAL_NOT_CHECKED:
            return None
        holds = seal_holds(key, raw, mac)
        if self.seal == SEAL_OTHER_DEVICE:
            if expected == 1 and holds:      # ours after all: the header's key id was changed
                self.seal, self.sealed_by = SEAL_CHECKED, None
                return self.verdict(False, 0, Problem("jv.header_other_key",
                                                      line=self.header_line))
            return None
        if holds:
            return None
        if expected == 0:
            other = _loose_key_id(raw)
            if isinstance(other, str) and other != key_id(key):
                self.seal, self.sealed_by, self.header_line = SEAL_OTHER_DEVICE, other, number
                return None
        return self.verdict(False, expected, Problem("jv.seal", line=number, record=expected))

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
            return self.verdict(False, expected, Problem(
                "jv.removed_many", line=number, first=expected, last=record.seq - 1)
                if record.seq - expected > 1 else Problem("jv.removed", line=number,
                                                          record=expected))
        if record.seq < expected:
            return self.verdict(False, expected, Problem("jv.inserted", line=number,
                                                         record=record.seq, due=expected))
        if record.prev != self.prev:
            return self.verdict(False, expected, Problem("jv.not_following", line=number,
                                                         record=record.seq))
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

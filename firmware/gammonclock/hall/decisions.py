"""The hall's own journal (SPEC §14.1): what the director decided on the page, with who and when,
kept in `ARCHIVE/hall-decisions.jsonl` before it counts.

A result the hall holds (it cannot verify it, or it matches no pairing) counts only once the
director accepts it; a match moved onto another table is the director's word that the spare's
journal continues it. Both are decisions of the director's account, and both must survive a
restart of the hall and be shown to whoever asks later why a result counted. So each one is a
line appended to this file and synced (fsync) before the page is told it was done: a power cut
keeps it or leaves no trace of it, never half of one (a torn last line is skipped on reading).

Each line is one JSON object: `kind` (`accepted`, `moved`), `by` (the page's user, or `hall`),
`at_ms` (the hall's wall clock) and the decision's own fields (all strings or integers). Every
line also carries `prev`, the SHA-256 of the line before it (`""` for the first), so that a line
altered, removed or moved by hand afterwards shows: `load` names the first that does not follow.
The file is the director's machine's (no table or page writes it directly); the chain says
whether it was edited, not who edited it, and it shows an edit in the line after the one edited
(the last line's edit shows only against a copy).
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import time
from dataclasses import dataclass, field
from pathlib import Path

from gammonclock.errors import GammonclockError
from gammonclock.journal.durable import fsync_dir, write_all

log = logging.getLogger("gammonclock.hall")

DECISIONS_FILE = "hall-decisions.jsonl"      # in the archive folder (the archive lists folders)
KINDS = ("accepted", "moved")
MAX_DECISIONS = 100_000        # lines read back; a venue makes a few hundred
MAX_LINE = 4096
MAX_FIELD = 300                # a field's text, cut
MAX_BY = 64

Field = str | int


@dataclass(frozen=True)
class Decision:
    """One decision of the director: its kind, who, when, and what (`fields`)."""

    kind: str
    by: str
    at_ms: int
    fields: dict[str, Field] = field(default_factory=dict)

    def get(self, name: str) -> str:
        """A field as text ("" when absent)."""
        value = self.fields.get(name)
        return "" if value is None else str(value)

    def as_json(self) -> dict[str, Field]:
        return {"kind": self.kind, "by": self.by, "at_ms": self.at_ms, **self.fields}


class DecisionError(GammonclockError, ValueError):
    """A decision that cannot be recorded as given (a kind or a field out of bounds)."""


def _digest(line: bytes) -> str:
    return hashlib.sha256(line).hexdigest()


def _clean(name: str, value: object) -> Field:
    if type(value) is int:
        return value
    if isinstance(value, str):
        return " ".join(value.split())[:MAX_FIELD]
    raise DecisionError(f"field {name!r} must be text or an integer")


@dataclass
class HallDecisions:
    """The decisions held in memory and in the file (`path` None: in memory only, for a hall
    with no archive folder). `problem` says why the file could not be read back, if so."""

    path: Path | None
    decisions: list[Decision] = field(default_factory=list)
    problem: str | None = None
    _last: str = ""             # the digest of the last line written or read

    @classmethod
    def in_archive(cls, archive: Path | None) -> HallDecisions:
        return cls(None if archive is None else archive / DECISIONS_FILE)

    def load(self) -> str | None:
        """Read the decisions a hall before this one recorded; what is wrong with the file, if
        anything (a line that does not follow the one before is named, and reading stops there:
        nothing after an edited line is trusted)."""
        self.decisions, self._last, self.problem = [], "", None
        if self.path is None:
            return None
        try:
            with self.path.open("rb") as f:
                whole = 0                              # bytes of the whole lines read
                for number, line in enumerate(f, start=1):
                    if not line.endswith(b"\n"):
                        # Torn by a power cut: never recorded. Cut off, so that the next
                        # decision starts a line of its own (appended to the torn bytes, it
                        # would not read back).
                        os.truncate(self.path, whole)
                        log.warning("hall decisions: %s: a torn last line (%d bytes, never "
                                    "recorded) cut off", self.path, len(line))
                        break
                    whole += len(line)
                    problem = self._take(line.rstrip(b"\n"), number)
                    if problem is not None:
                        self.problem = f"{self.path}: {problem}"
                        log.warning("hall decisions: %s", self.problem)
                        return self.problem
                    if len(self.decisions) >= MAX_DECISIONS:
                        self.problem = f"{self.path}: more than {MAX_DECISIONS} decisions"
                        return self.problem
        except FileNotFoundError:
            return None
        except OSError as exc:
            self.problem = f"{self.path}: cannot read it: {exc.strerror}"
            return self.problem
        return None

    def _take(self, line: bytes, number: int) -> str | None:
        if len(line) > MAX_LINE:
            return f"line {number} is longer than {MAX_LINE} bytes"
        try:
            data = json.loads(line)
        except (ValueError, RecursionError):
            return f"line {number} is not JSON"
        if not isinstance(data, dict) or data.get("prev") != self._last:
            return f"line {number} does not follow the line before it (edited by hand?)"
        kind, by, at = data.pop("kind", None), data.pop("by", None), data.pop("at_ms", None)
        data.pop("prev")
        if kind not in KINDS or not isinstance(by, str) or type(at) is not int:
            return f"line {number} is not a decision"
        try:
            fields = {str(k): _clean(str(k), v) for k, v in data.items()}
        except DecisionError as exc:
            return f"line {number}: {exc}"
        self.decisions.append(Decision(kind, by[:MAX_BY], at, fields))
        self._last = _digest(line)
        return None

    def record(self, kind: str, by: str, **fields: object) -> Decision:
        """Append a decision and sync it; it is held (and returned) only once it is on disk.
        OSError when the disk refuses (nothing is held then: the page says it failed);
        DecisionError for a kind or field out of bounds."""
        if self.problem is not None:
            # What is appended after a line that does not read back would not read back either:
            # nothing more is recorded (so nothing counts) until the file is set right.
            raise DecisionError(f"the director's decisions cannot be recorded: {self.problem}; "
                                "set the file right or move it aside, then restart the hall")
        if kind not in KINDS:
            raise DecisionError(f"kind {kind!r} is not one of {', '.join(KINDS)}")
        clean = {name: _clean(name, value) for name, value in fields.items()}
        if {"kind", "by", "at_ms", "prev"} & clean.keys():
            raise DecisionError("a field may not be named kind, by, at_ms or prev")
        decision = Decision(kind, " ".join(by.split())[:MAX_BY] or "hall",
                            time.time_ns() // 1_000_000, clean)
        line = json.dumps({**decision.as_json(), "prev": self._last},
                          ensure_ascii=False, separators=(",", ":")).encode("utf-8")
        if len(line) > MAX_LINE:
            raise DecisionError(f"a decision is at most {MAX_LINE} bytes")
        if self.path is not None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            new = not self.path.exists()
            fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o640)
            try:
                write_all(fd, line + b"\n")
                os.fsync(fd)
            finally:
                os.close(fd)
            if new:
                fsync_dir(self.path.parent)
        self.decisions.append(decision)
        self._last = _digest(line)
        return decision

    def of_kind(self, kind: str) -> list[Decision]:
        return [d for d in self.decisions if d.kind == kind]

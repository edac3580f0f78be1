"""The journal's records (SPEC §11): the format of an append-only file per match, the source of
truth, and the checks every record read must pass.

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

Reading (`reader.JournalStream`, a record at a time in constant memory; `read_journal`, all at
once) keeps every whole record up to the first damaged one: a torn last line is dropped and
reported; a damaged line in the middle stops the replay there. The file itself is never rewritten.
A whole record (its checksum holds) is checked against the schema below; one this firmware cannot
understand (a field missing or of the wrong type, an unknown kind, a newer format) is a
RecordError naming the file, the record and its line, never skipped and never a crash.

The device key (`key.py`: `device.key`, 64 hex digits and a newline, mode 0600) is made
atomically and an empty, short or malformed one is refused (KeyRefused), never used to seal or
verify. Writing is `writer.py`, verification `verify.py`.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeGuard

from gammonclock import __version__
from gammonclock.config.problems import Problem, Told, said
from gammonclock.errors import GammonclockError

FORMAT = 1
JOURNALS_DIR = "journals"
GENESIS = "0" * 64          # the `prev` of the header
SNAPSHOT_KIND = "state"     # the kind of a snapshot record (the engine's state, snapshot.py)


class JournalError(GammonclockError):
    """A journal that cannot be read or written; the message says which file and why."""


# --- the device key --------------------------------------------------------------------------


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


def seal_holds(key: bytes, body: bytes, mac: str) -> bool:
    """Whether `mac` is `key`'s seal of exactly these bytes (`split_line`'s body), compared in
    constant time: the one seal check of every reader (verify, the hall's live copies)."""
    return hmac.compare_digest(mac, _seal(key, body))


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


def in_file(path: str | Path, problem: object) -> Told:
    """"PATH: PROBLEM", the problem (a RecordError's message, or its words) said in any
    language, the path as it is."""
    english = f"{path}: {problem}"
    return Told(english, lambda lang: f"{path}: {said(problem, lang)}")


MAX_NS = 2**63 - 1       # every instant fits an int64, as the host's clocks do
MAX_SEQ = 2**53          # far beyond any match, and exact in every JSON reader


def decode(line: bytes, line_no: int = 0, offset: int = 0) -> tuple[Record, bytes]:
    """The record of a line and the bytes its checksum and seal cover. Raises Damaged for bytes
    that are not a whole record, RecordError for a whole one that is not understood."""
    raw, mac = split_line(line)
    return parse_record(raw, mac, line_no, offset), raw


def split_line(line: bytes) -> tuple[bytes, str]:
    """The body of a line and its seal, once its checksum matches; raises Damaged."""
    tail = _TAIL.search(line)
    if tail is None:
        raise Damaged(Problem("jd.no_tail"))
    raw = line[:tail.start()] + b"}"
    if hashlib.sha256(raw).hexdigest()[:16] != tail.group(1).decode():
        raise Damaged(Problem("jd.checksum"))
    return raw, tail.group(2).decode()


def parse_record(raw: bytes, mac: str, line_no: int = 0, offset: int = 0) -> Record:
    """A checksummed body checked against the record schema; raises RecordError naming the
    record and its line."""
    try:
        obj = json.loads(raw)
    except (ValueError, RecursionError):
        raise RecordError(Problem("jf.not_json", line=line_no)) from None
    if not isinstance(obj, dict):
        raise RecordError(Problem("jf.not_object", line=line_no))
    seq = obj.get("seq")
    if not _is_int(seq, 0, MAX_SEQ):
        raise RecordError(Problem("jf.no_seq", line=line_no, value=_show(seq)))
    problem = _field_problem(obj)
    if problem is None:
        problem = _DATA_CHECKS[obj["kind"]](obj["data"], seq)
    if problem is not None:
        raise RecordError(Problem("jf.record", seq=seq, line=line_no, problem=problem))
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


# Each field: its check, and what it must be ("jf.allowed.*"; the ns bound as an argument).
_FIELDS: tuple[tuple[str, Callable[[Any], bool], str], ...] = (
    ("kind", lambda v: isinstance(v, str), "text"),
    ("t", lambda v: _is_int(v, 0, MAX_NS), "ns"),
    ("mono", lambda v: _is_int(v, 0, MAX_NS), "ns"),
    ("boot", lambda v: isinstance(v, str) and len(v) <= 200, "boot"),
    ("wall", lambda v: _is_int(v, 0, MAX_NS), "ns"),
    ("data", lambda v: isinstance(v, dict), "object"),
    ("prev", _is_hex64, "hex"),
)


def _field_problem(obj: dict[str, Any]) -> str | None:
    for name, valid, allowed in _FIELDS:
        if name not in obj:
            return Problem("jf.field_missing", name=repr(name))
        if not valid(obj[name]):
            return Problem("jf.field_bad", name=repr(name), value=_show(obj[name]),
                           allowed=Problem(f"jf.allowed.{allowed}", max=MAX_NS))
    if obj["kind"] not in _DATA_CHECKS:     # the kinds this firmware writes
        return Problem("jf.kind_newer", kind=_show(obj["kind"]), version=__version__)
    return None


def _header_problem(data: dict[str, Any], seq: int) -> str | None:
    fmt = data.get("format")
    if seq != 0:
        return Problem("jf.header_late")
    if not _is_int(fmt, 1, MAX_SEQ):
        return Problem("jf.header_format", value=_show(fmt))
    if fmt > FORMAT:
        return Problem("jf.format_newer", fmt=fmt, format=FORMAT, version=__version__)
    if not isinstance(data.get("config"), str):
        return Problem("jf.header_config", value=_show(data.get("config")))
    if "match_no" in data and not _is_int(data["match_no"], 0, MAX_SEQ):
        return Problem("jf.header_match_no", value=_show(data["match_no"]))
    continues = data.get("continues")
    if continues is not None and not (isinstance(continues, dict)
                                      and isinstance(continues.get("file"), str)):
        return Problem("jf.header_continues", value=_show(continues))
    return None


def _effects_problem(data: dict[str, Any]) -> str | None:
    effects = data.get("effects")
    if not isinstance(effects, list) or not all(isinstance(e, dict) for e in effects):
        return Problem("jf.effects", value=_show(effects))
    return None


def _input_problem(data: dict[str, Any], seq: int) -> str | None:
    event = data.get("input")
    if not isinstance(event, dict) or not isinstance(event.get("type"), str):
        return Problem("jf.input", value=_show(event))
    return _effects_problem(data)


def _torn_problem(data: dict[str, Any], seq: int) -> str | None:
    for name in ("offset", "length"):
        if not _is_int(data.get(name), 0, MAX_NS):
            return Problem("jf.torn", name=name, value=_show(data.get(name)))
    return None


SNAPSHOT_FORMAT = 1      # the engine's encoding in a snapshot (snapshot.py)
_SNAPSHOT_PARTS = (("match", dict), ("buttons", dict), ("history", list), ("trimmed", bool),
                   ("serials", int), ("seq", int))


def snapshot_problem(data: dict[str, Any], seq: int = 0) -> str | None:
    """Why a snapshot record's data is not one this firmware reads; None when its outline is
    right (its values are checked as they are decoded, `snapshot.engine_from`)."""
    fmt = data.get("format")
    if not _is_int(fmt, 1, MAX_SEQ):
        return Problem("jf.snapshot_format", value=_show(fmt))
    if fmt > SNAPSHOT_FORMAT:
        return Problem("jf.snapshot_newer", fmt=fmt, format=SNAPSHOT_FORMAT, version=__version__)
    for name, kind in _SNAPSHOT_PARTS:
        if type(data.get(name)) is not kind:
            return Problem("jf.snapshot_part", name=name, value=_show(data.get(name)),
                           kind=Problem(f"jf.type.{kind.__name__}"))
    return None


_DATA_CHECKS: dict[str, Callable[[dict[str, Any], int], str | None]] = {
    "header": _header_problem,
    "state": snapshot_problem,
    "input": _input_problem,
    "tick": lambda data, seq: _effects_problem(data),
    "torn": _torn_problem,
}


# --- reading ---------------------------------------------------------------------------------


# --- writing ---------------------------------------------------------------------------------


# --- verification ----------------------------------------------------------------------------



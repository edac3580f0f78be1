"""What a table sends, read as untrusted (SPEC §14, hall/PROTOCOL.md): strict, bounded JSON (no NaN,
no huge numbers, no deep nesting), and each field of a state, notice or reply checked and
clipped by its own rule, naming the field when it is wrong (`BadMessage`). The hall's view and
its health checks both read through these; a hostile table spoils only its own card."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from datetime import datetime
from typing import Any

from gammonclock.durations import MAX_CUBE, MAX_POINTS
from gammonclock.errors import GammonclockError

from .accounts import TABLE_ID

MAX_PAYLOAD = 64 * 1024      # bytes of a state, an event, a notice or a reply

MAX_HEALTH = 4096            # bytes of a `health` (an honest one is ~600: health.py)

MAX_ONLINE = 16              # bytes of an `online`

MAX_DEPTH = 8                # nesting of objects and arrays (a state needs 3)

MAX_INT_DIGITS = 16          # |n| < 10**16: any integer a clock sends is far below

MAX_SEQ = 10**9

MAX_EFFECTS = 256            # per event

MAX_NAME = 64                # a player's name (the config allows 24)

MAX_TEXT = 200               # a reason, an error, a said line, an alert's detail

MAX_SHORT = 64               # codes, ids, outcomes, `at`

MAX_JOURNAL = 200            # a journal's file name

MAX_EVENT_NAME = 120         # the table's event

MAX_SAID = 10                # lines of a `said`

MAX_RESERVE_MS = 10 * 86_400_000     # ten days either way

MAX_GAME = 10_000

MAX_BREAKS = 99

MAX_SCORE = MAX_POINTS + 3 * MAX_CUBE    # a backgammon on the highest cube, from length - 1

SIDES = ("left", "right")

PHASES = frozenset({"between_games", "running", "cube_offered", "paused", "result_entry",
                    "break", "match_over", "arbiter", "idle", "ready"})

LIFECYCLES = frozenset({"idle", "ready", "in_progress", "match_over"})

class BadMessage(GammonclockError, ValueError):
    """What is wrong with a message, naming the field."""

def strict_json(payload: bytes, limit: int = MAX_PAYLOAD) -> Any:
    """A payload as JSON, strictly: at most `limit` bytes, nested at most `MAX_DEPTH` deep,
    integers of at most `MAX_INT_DIGITS` digits, finite numbers only (NaN and Infinity are not
    JSON, and `1e999` is not a finite float). BadMessage (a ValueError) otherwise.

    Parsed first and its depth measured after: the parser is linear in the payload, where a
    pre-scan of its strings by a regular expression took seconds for one table's 32 KB of
    escaped quotes, on the loop every table shares."""
    if len(payload) > limit:
        raise BadMessage(f"the payload is {len(payload)} bytes, more than {limit}")
    try:
        data = json.loads(payload, parse_constant=_no_constant, parse_float=_finite,
                          parse_int=_bounded_int)
    except RecursionError:
        raise BadMessage(f"the payload is nested more than {MAX_DEPTH} deep") from None
    _check_depth(data)
    return data

def _check_depth(data: Any) -> None:
    containers: list[tuple[Any, int]] = [(data, 1)]
    while containers:
        value, depth = containers.pop()
        if not isinstance(value, dict | list):
            continue
        if depth > MAX_DEPTH:
            raise BadMessage(f"the payload is nested more than {MAX_DEPTH} deep")
        items = value.values() if isinstance(value, dict) else value
        containers.extend((item, depth + 1) for item in items if isinstance(item, dict | list))

def _no_constant(name: str) -> Any:
    raise BadMessage(f"{name} is not JSON")

def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise BadMessage(f"{clip(text, 20)} is not a finite number")
    return value

def _bounded_int(text: str) -> int:
    if len(text.lstrip("-")) > MAX_INT_DIGITS:
        raise BadMessage(f"an integer of {len(text)} digits")
    return int(text)

def shown(value: object) -> str:
    """A value for an error message, short."""
    return clip(repr(value), 40)

def clip(text: object, limit: int) -> str:
    """Text as a card shows it: a string of at most `limit` characters, valid Unicode."""
    value = text if isinstance(text, str) else "" if text is None else str(text)
    if len(value) > limit:
        value = value[:limit - 1] + "…"
    return value.encode("utf-8", "replace").decode("utf-8")

def text_of(where: str, value: object, limit: int, cut: bool = True) -> str | None:
    """A string or null; longer than `limit`: cut (or refused)."""
    if value is None:
        return None
    if not isinstance(value, str):
        raise BadMessage(f"{where}: {shown(value)} is not a string")
    if len(value) > limit and not cut:
        raise BadMessage(f"{where}: longer than {limit} characters")
    return clip(value, limit)

def int_of(where: str, value: object, low: int, high: int) -> int | None:
    """An integer from `low` to `high`, or null."""
    if value is None:
        return None
    if not isinstance(value, int) or isinstance(value, bool):
        raise BadMessage(f"{where}: {shown(value)} is not an integer")
    if not low <= value <= high:
        raise BadMessage(f"{where}: {value} is not from {low} to {high}")
    return value

def bool_of(where: str, value: object) -> bool | None:
    if value is None or isinstance(value, bool):
        return value
    raise BadMessage(f"{where}: {shown(value)} is not true or false")

def side_of(where: str, value: object) -> str | None:
    if value is None:
        return None
    if isinstance(value, str) and value in SIDES:
        return value
    raise BadMessage(f"{where}: {shown(value)} is not \"left\", \"right\" or null")

def one_of(choices: frozenset[str]) -> Callable[[str, object], str | None]:
    def check(where: str, value: object) -> str | None:
        if value is None or (isinstance(value, str) and value in choices):
            return value
        raise BadMessage(f"{where}: {shown(value)} is not one of {', '.join(sorted(choices))}")
    return check

def points_of(where: str, value: object) -> int | float | None:
    """A score: whole or half points, 0 to `MAX_SCORE`."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise BadMessage(f"{where}: {shown(value)} is not a number of points")
    if not (math.isfinite(value) and 0 <= value <= MAX_SCORE and float(value * 2).is_integer()):
        raise BadMessage(f"{where}: {shown(value)} is not whole or half points "
                         f"from 0 to {MAX_SCORE}")
    return int(value) if float(value).is_integer() else float(value)

def iso_of(where: str, value: object) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or len(value) > MAX_SHORT or iso_ms(value) is None:
        raise BadMessage(f"{where}: {shown(value)} is not an ISO 8601 instant")
    return value

def pair_of(check: Callable[[str, object], Any]) -> Callable[[str, object], Any]:
    """`{"left": …, "right": …}` (or null), each side checked."""
    def pair(where: str, value: object) -> dict[str, Any] | None:
        if value is None:
            return None
        if not isinstance(value, dict):
            raise BadMessage(f"{where}: {shown(value)} is not an object")
        return {side: check(f"{where}.{side}", value.get(side)) for side in SIDES}
    return pair

def _cube(where: str, value: object) -> dict[str, Any] | None:
    if value is None:
        return None
    if not isinstance(value, dict):
        raise BadMessage(f"{where}: {shown(value)} is not an object")
    number = int_of(f"{where}.value", value.get("value"), 1, MAX_CUBE)
    if number is not None and number & (number - 1):
        raise BadMessage(f"{where}.value: {number} is not a power of two")
    return {"value": number, "owner": side_of(f"{where}.owner", value.get("owner")),
            "enabled": bool_of(f"{where}.enabled", value.get("enabled"))}

def _reserve(where: str, value: object) -> dict[str, Any] | None:
    if value is None:
        return None
    if not isinstance(value, dict):
        raise BadMessage(f"{where}: {shown(value)} is not an object")
    out = {"reserve_ms": int_of(f"{where}.reserve_ms", value.get("reserve_ms"),
                                -MAX_RESERVE_MS, MAX_RESERVE_MS)}
    if "delay_ms" in value:
        out["delay_ms"] = int_of(f"{where}.delay_ms", value["delay_ms"], 0, MAX_RESERVE_MS)
    return out

def _name(where: str, value: object) -> str | None:
    return text_of(where, value, MAX_NAME)



def _table_id(where: str, value: object) -> str | None:
    """A table id (where a match moved to went, SPEC §13.5), or null."""
    if value is None:
        return None
    if not isinstance(value, str) or TABLE_ID.fullmatch(value) is None:
        raise BadMessage(f"{where}: {shown(value)} is not a table id")
    return value

# Every key of a state the hall keeps (PROTOCOL.md `state`), and how it is checked; any other
# key is dropped. Only `phase` is required (an idle clock sends little).
STATE_KEYS: dict[str, Callable[[str, object], Any]] = {
    "phase": one_of(PHASES),
    "lifecycle": one_of(LIFECYCLES),
    "game": lambda w, v: int_of(w, v, 0, MAX_GAME),
    "match_length": lambda w, v: int_of(w, v, 1, MAX_POINTS),
    "score": pair_of(points_of),
    "crawford_game": bool_of,
    "cube": _cube,
    "running": side_of,
    "clock": pair_of(_reserve),
    "breaks_left": pair_of(lambda w, v: int_of(w, v, 0, MAX_BREAKS)),
    "winner": side_of,
    "end_reason": lambda w, v: text_of(w, v, MAX_SHORT),
    "moved_to": _table_id,          # ended as moved: where it went (SPEC §13.5)
    "flag": side_of,
    "table": lambda w, v: text_of(w, v, MAX_SHORT),
    "event": lambda w, v: text_of(w, v, MAX_EVENT_NAME),
    "players": pair_of(_name),
    "journal": lambda w, v: text_of(w, v, MAX_JOURNAL, cut=False),
    "seq": lambda w, v: int_of(w, v, 0, MAX_SEQ),
    "at": iso_of,
    "online": bool_of,
}

def state_of(data: dict[str, Any]) -> dict[str, Any]:
    """A table's state, checked and normalised (STATE_KEYS); BadMessage naming the field."""
    if not isinstance(data.get("phase"), str):
        raise BadMessage(f"state.phase: {shown(data.get('phase'))} is not a phase")
    return {key: check(f"state.{key}", data[key]) for key, check in STATE_KEYS.items()
            if key in data}

def said_of(where: str, value: object) -> str | list[str] | None:
    """A `said`: a line or a list of lines, each cut, at most `MAX_SAID`."""
    if isinstance(value, list):
        return [text_of(f"{where}[{i}]", line, MAX_TEXT) or ""
                for i, line in enumerate(value[:MAX_SAID])]
    return text_of(where, value, MAX_TEXT)

def _answer_of(what: str, data: dict[str, Any], keys: dict[str, Callable[[str, object], Any]]
               ) -> dict[str, Any]:
    if not isinstance(data.get("ok"), bool):
        raise BadMessage(f"{what}.ok: {shown(data.get('ok'))} is not true or false")
    return {key: check(f"{what}.{key}", data[key]) for key, check in keys.items()
            if key in data}

def _short(where: str, value: object) -> str | None:
    return text_of(where, value, MAX_SHORT)

def _text(where: str, value: object) -> str | None:
    return text_of(where, value, MAX_TEXT)

NOTICE_KEYS: dict[str, Callable[[str, object], Any]] = {
    "ok": bool_of, "said": said_of, "error": _text, "code": _short, "pending": bool_of,
    "match": _short, "at": _short,
}

def _reply_state(where: str, value: object) -> dict[str, Any] | None:
    """The state a `status` reply carries, checked as a `state` is."""
    if value is None:
        return None
    if not isinstance(value, dict):
        raise BadMessage(f"{where}: {shown(value)} is not an object")
    return state_of(value)

REPLY_KEYS: dict[str, Callable[[str, object], Any]] = {
    "id": _short, "ok": bool_of, "outcome": _short, "reason": _text, "code": _short,
    "said": said_of, "repeated": bool_of, "at": _short, "state": _reply_state,
}

def notice_of(data: dict[str, Any]) -> dict[str, Any]:
    """A `notice` (the answer to a `match`), its known keys checked and cut."""
    return _answer_of("notice", data, NOTICE_KEYS)

def reply_of(data: dict[str, Any]) -> dict[str, Any]:
    """A `cmd/reply`, its known keys checked and cut (the page shows no more)."""
    return _answer_of("cmd/reply", data, REPLY_KEYS)

def natural_key(name: str) -> list[Any]:
    """table-2 before table-10."""
    return [(0, int(p), "") if p.isdigit() else (1, 0, p) for p in re.split(r"(\d+)", name)]


def iso_ms(text: object) -> int | None:
    """Milliseconds since the epoch of an ISO 8601 instant (`Z` or an offset), else None."""
    if not isinstance(text, str) or len(text) > MAX_SHORT:
        return None
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    if moment.tzinfo is None:
        return None
    try:
        return int(moment.timestamp() * 1000)
    except (OverflowError, ValueError):
        return None

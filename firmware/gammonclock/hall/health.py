"""A table's `health` at the hall (issue 24; hall/PROTOCOL.md `health`): checked as untrusted (SPEC
§14: a hostile table spoils only its own card), kept normalised, and marked where the director
should look before the clock fails mid-match.

Marks the hall decides from one message (`marks`):

- `supply`: under-voltage now or since boot (a supply that sagged once will again, under load);
- `hot`: throttled, frequency capped or at the soft temperature limit now;
- `card_full`: less than `CARD_FREE_PCT` (10 %) of the state card free, or less than
  `CARD_FREE_BYTES` (200 MB) whatever its size: a journal is small, but the system's logs and
  updates share the card, and a card nearly full writes slower and wears faster;
- `slow`: the journal's sync p99 over the last hour (`fsync_p99_ms`: the clock's fdatasyncs,
  the key named from before) above `SLOW_FSYNC_MS` (50 ms): a press waits for its sync before
  the panels show it, and 50 ms is where a tap starts to feel late (a healthy card syncs in
  1–10 ms);
- `clock`: the wall clock is not synchronised (unknown is not marked: a clock off a Pi or without
  timesyncd/chrony says so in words).

Two more the page decides, as they depend on the time and on the other tables: `stale` (no
health for more than 3 minutes, `STALE_MS`) and `version` (a version other than the one most
tables run, when one does).
"""

from __future__ import annotations

import math
from typing import Any

from .messages import MAX_HEALTH, BadMessage, bool_of, int_of, iso_of, shown, text_of

__all__ = ["MAX_HEALTH", "health_of", "marks"]
MAX_BYTES = 1 << 50         # a card of a petabyte: anything larger is not a card
MAX_UPTIME_S = 10 * 365 * 86_400
MAX_RECORDS = 10**9
MAX_JOURNALS = 100_000
MAX_FSYNC_MS = 3_600_000.0
MAX_FSYNCS = 10**9

CARD_FREE_PCT = 10
CARD_FREE_BYTES = 200_000_000
SLOW_FSYNC_MS = 50.0
STALE_MS = 180_000           # the page's: a health older than this is marked stale

THROTTLE_NAMES = ("under_voltage", "freq_capped", "throttled", "soft_temp_limit")
MARKS = ("supply", "hot", "card_full", "slow", "clock")


def _number(where: str, value: object, low: float, high: float) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) \
            or not math.isfinite(value) or not low <= value <= high:
        raise BadMessage(f"{where}: {shown(value)} is not a number from {low:g} to {high:g}")
    return float(value)


def _object(where: str, value: object) -> dict[str, Any] | None:
    if value is None:
        return None
    if not isinstance(value, dict):
        raise BadMessage(f"{where}: {shown(value)} is not an object")
    return value


def _throttled(value: object) -> dict[str, Any] | None:
    data = _object("health.throttled", value)
    if data is None:
        return None
    raw = text_of("health.throttled.raw", data.get("raw"), 10, cut=False)
    out: dict[str, Any] = {"raw": raw}
    for name in THROTTLE_NAMES:
        for key in (name, f"{name}_since_boot"):
            out[key] = bool_of(f"health.throttled.{key}", data.get(key)) is True
    return out


def health_of(data: dict[str, Any]) -> dict[str, Any]:
    """A table's `health`, checked and normalised; BadMessage naming the field. Unknown keys are
    dropped; every figure may be null (not read on this hardware)."""
    disk = _object("health.disk", data.get("disk"))
    if disk is not None:
        free = int_of("health.disk.free_bytes", disk.get("free_bytes"), 0, MAX_BYTES)
        total = int_of("health.disk.total_bytes", disk.get("total_bytes"), 0, MAX_BYTES)
        if free is None or total is None or free > total:
            raise BadMessage("health.disk: free_bytes and total_bytes, free at most total")
        disk = {"free_bytes": free, "total_bytes": total}
    clock = _object("health.clock", data.get("clock")) or {}
    backlog = _object("health.hall_backlog", data.get("hall_backlog"))
    if backlog is not None:
        backlog = {"records": int_of("health.hall_backlog.records", backlog.get("records"),
                                     0, MAX_RECORDS),
                   "journals": int_of("health.hall_backlog.journals", backlog.get("journals"),
                                      0, MAX_JOURNALS)}
    return {
        "at": iso_of("health.at", data.get("at")),
        "pi": text_of("health.pi", data.get("pi"), 80),
        "throttled": _throttled(data.get("throttled")),
        "cpu_temp_c": _number("health.cpu_temp_c", data.get("cpu_temp_c"), -50, 150),
        "disk": disk,
        "fsync_p99_ms": _number("health.fsync_p99_ms", data.get("fsync_p99_ms"), 0,
                                MAX_FSYNC_MS),
        "fsyncs_in_hour": int_of("health.fsyncs_in_hour", data.get("fsyncs_in_hour"), 0,
                                 MAX_FSYNCS),
        "clock": {"synchronized": bool_of("health.clock.synchronized",
                                          clock.get("synchronized")),
                  "source": text_of("health.clock.source", clock.get("source"), 80)},
        "uptime_s": int_of("health.uptime_s", data.get("uptime_s"), 0, MAX_UPTIME_S),
        "version": text_of("health.version", data.get("version"), 40, cut=False),
        "hall_backlog": backlog,
    }


def marks(health: dict[str, Any]) -> list[str]:
    """What the director should look at, from one normalised health (module doc), in MARKS'
    order."""
    out: list[str] = []
    throttled = health.get("throttled") or {}
    if throttled.get("under_voltage") or throttled.get("under_voltage_since_boot"):
        out.append("supply")
    if any(throttled.get(n) for n in ("freq_capped", "throttled", "soft_temp_limit")):
        out.append("hot")
    disk = health.get("disk")
    if disk is not None and disk["total_bytes"] > 0 and (
            disk["free_bytes"] * 100 < CARD_FREE_PCT * disk["total_bytes"]
            or disk["free_bytes"] < CARD_FREE_BYTES):
        out.append("card_full")
    p99 = health.get("fsync_p99_ms")
    if p99 is not None and p99 > SLOW_FSYNC_MS:
        out.append("slow")
    if (health.get("clock") or {}).get("synchronized") is False:
        out.append("clock")
    return out

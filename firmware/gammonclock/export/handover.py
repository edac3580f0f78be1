"""The hand-over of a match continued on another clock (SPEC §13.5), as the export marks it.

A continued journal's header names the journal it goes on from (`continues`, with `handover`:
`continuation.py`); the records up to its `records` are the old clock's (their own stamps), the
rest this clock's. This clock's first records are the hand-over of the arbiter at its panels
(issue 31: its PIN from then on, no incident of the match) and the `Recover` that paused the
match at the old journal's last instant: between the old clock's last wall stamp and that one's,
the match was on no clock (the two clocks' wall clocks may disagree: a Pi has no real-time
clock)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .model import Incident

HANDOVER = "handover"


@dataclass(frozen=True)
class Handover:
    file: str                 # the old clock's journal
    table: str | None         # the old clock's table (None: its journal did not say)
    seq: int                  # its last record
    last_mac: str
    via: str                  # "journal", "hall" or "stick"
    verdict: str              # the verifier's words on the old journal
    forced: bool              # continued though it failed verification
    t: int                    # the engine instant of the hand-over (the old last record's)
    last_wall: int            # the old clock's last record, on its wall clock
    first_wall: int | None    # this clock's first record, on its wall clock

    @property
    def off_clock_ns(self) -> int | None:
        """The time the match was on no clock (None: not known)."""
        return None if self.first_wall is None else self.first_wall - self.last_wall

    def text(self, table: str | None) -> str:
        gap = self.off_clock_ns
        gap_words = "not known" if gap is None else _duration(gap)
        return (f"hand-over: continued on {table or 'this clock'} from "
                f"{self.table or 'another clock'} ({self.file}, record {self.seq}, via "
                f"{self.via}{'; NOT VERIFIED' if self.forced else ''}); on no clock for "
                f"{gap_words}")

    def as_json(self) -> dict[str, Any]:
        return {"file": self.file, "table": self.table, "seq": self.seq,
                "last_mac": self.last_mac, "via": self.via, "verdict": self.verdict,
                "forced": self.forced, "t_ns": self.t, "off_clock_ns": self.off_clock_ns}


def _duration(ns: int) -> str:
    sign, ns = ("-" if ns < 0 else ""), abs(ns)
    seconds = ns // 1_000_000_000
    return f"{sign}{seconds // 60}:{seconds % 60:02d} (min:s)"


def handover_of(header: dict[str, Any]) -> Handover | None:
    """The hand-over a journal's header names (None: not a continuation of another clock's)."""
    c = header.get("continues")
    if not isinstance(c, dict) or c.get("handover") is not True:
        return None
    try:
        return Handover(str(c["file"]), c.get("table") if isinstance(c.get("table"), str)
                        else None, int(c["seq"]), str(c["last_mac"]), str(c.get("via", "")),
                        str(c.get("verdict", "")), c.get("forced") is True, int(c["last_t"]),
                        int(c["last_wall"]), None)
    except (KeyError, TypeError, ValueError):
        return None


def mark(handover: Handover | None, incidents: list[Incident], table: str | None
         ) -> Handover | None:
    """The hand-over with this clock's first wall stamp, its incident marked in `incidents`
    (the `recovered` at its instant becomes the hand-over)."""
    if handover is None:
        return None
    for i, incident in enumerate(incidents):
        if incident.kind == "recovered" and incident.t == handover.t:
            done = Handover(**{**handover.__dict__, "first_wall": incident.wall})
            incidents[i] = Incident(incident.t, incident.wall, HANDOVER, done.text(table))
            return done
    return handover

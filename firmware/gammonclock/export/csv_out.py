"""The turns as CSV: one row per turn that stands (retracted turns are not in the record).

Durations are seconds written exactly from the journal's nanoseconds ("14", "12.5",
"0.000000001"). `turn` counts the clock turns of a game from 1 (a cube decision is a turn of its
own); 0 marks a late return from a break, when the late player's reserve ran between games. A turn
still running when the journal ends has `end` = "open" and no think time or reserve after.
"""

from __future__ import annotations

import csv
import io

from .model import MatchRecord, Turn
from .text import iso_utc, seconds

COLUMNS = ("game", "turn", "side", "player", "start_utc", "match_time_s", "think_s",
           "delay_used_s", "charged_s", "reserve_after_s", "end", "cube", "dice")


def dice_text(turn: Turn) -> str:
    """The dice of a turn: "opening 3-5", "6-6", "3-4 (early)"; void throws are left out."""
    parts = [f"opening {turn.opening.text()}"] if turn.opening is not None else []
    parts += [r.text() + (" (early)" if r.early else "") for r in turn.rolls if not r.voided]
    return " ".join(parts)


def row(match: MatchRecord, turn: Turn) -> dict[str, str]:
    return {
        "game": str(turn.game),
        "turn": str(turn.number),
        "side": turn.side.value,
        "player": match.name(turn.side),
        "start_utc": iso_utc(turn.start_wall),
        "match_time_s": seconds(turn.start_t - match.origin_t),
        "think_s": seconds(turn.span),
        "delay_used_s": seconds(turn.delay_used),
        "charged_s": seconds(turn.charged),
        "reserve_after_s": seconds(turn.reserve_after),
        "end": turn.reason or "open",
        "cube": turn.cube,
        "dice": dice_text(turn),
    }


def render_csv(match: MatchRecord) -> str:
    out = io.StringIO()
    writer = csv.DictWriter(out, COLUMNS, lineterminator="\n")
    writer.writeheader()
    for turn in match.turns:
        writer.writerow(row(match, turn))
    return out.getvalue()

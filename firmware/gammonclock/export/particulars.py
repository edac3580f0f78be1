"""The match's particulars, as a report's head gives them: the event, the table, the players,
what was played and when, and whether the device's wall clock could be trusted.

They come from the journal's header (`table`, `wall_clock_synchronized`, the match config's
`[event]`) and from the replay. A journal older than a key says so ("not recorded", "not known")
rather than leaving a blank a reader could take for "none".
"""

from __future__ import annotations

from dataclasses import dataclass

from ..readback import readback
from ..rules import format_score
from .model import MatchRecord

NOT_RECORDED = "not recorded"
NOT_KNOWN = "not known"
SYNCHRONISED_WORDS = {
    True: "yes",
    False: "NO — times may be wrong (no time source at the venue)",
    None: NOT_KNOWN,
}


@dataclass(frozen=True)
class Particulars:
    event: str                   # the `[event]` name; "" when the match file gives none
    round: str
    table: str | None            # None: the journal does not say (older, or a simulation)
    left: str
    right: str
    discipline: str              # "backgammon, Crawford rule"
    length: str                  # "7 points", "11 points from 2-0"
    time_control: str            # the read-back's words: "14:00 each + 12 s delay (simple); …"
    breaks: str
    started_wall: int            # the journal's header
    ended_wall: int              # the match's end, else the journal's last record
    finished: bool               # whether the match ended (else the journal just stops)
    wall_clock_synchronized: bool | None     # None: the device could not tell, or an older journal

    @property
    def synchronised_text(self) -> str:
        return SYNCHRONISED_WORDS[self.wall_clock_synchronized]

    @property
    def table_text(self) -> str:
        return self.table if self.table else NOT_RECORDED


def _synchronized(value: object) -> bool | None:
    return value if isinstance(value, bool) else None


def _end_wall(match: MatchRecord) -> int:
    if match.result is not None:
        for item in reversed(match.effects):
            if item.effect is match.result:
                return item.wall
    return match.end_wall


def particulars(match: MatchRecord) -> Particulars:
    config, rules, header = match.config, match.rules, match.read.header.data
    words = dict(readback(config))
    table = header.get("table")
    cube = ("no cube" if not rules.cube
            else "Crawford rule" if rules.crawford else "no Crawford rule")
    start = rules.start_score
    length = f"{rules.length} point{'s' if rules.length != 1 else ''}"
    if any(start):
        length += f" from {format_score(start.left)}-{format_score(start.right)}"
    return Particulars(
        event=config.event.name, round=config.event.round,
        table=table if isinstance(table, str) and table else None,
        left=rules.names.left, right=rules.names.right,
        discipline=f"{rules.discipline.name}, {cube}", length=length,
        time_control=words["time"], breaks=words["breaks"],
        started_wall=match.read.header.wall, ended_wall=_end_wall(match),
        finished=match.result is not None,
        wall_clock_synchronized=_synchronized(header.get("wall_clock_synchronized")))

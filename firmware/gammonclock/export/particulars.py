"""The match's particulars, as a report's head gives them: the event, the table, the players,
what was played and when, and whether the device's wall clock could be trusted.

They come from the journal's header (`table`, `wall_clock_synchronized`, the match config's
`[event]`) and from the replay. A journal older than a key says so ("not recorded", "not known")
rather than leaving a blank a reader could take for "none".
"""

from __future__ import annotations

from dataclasses import dataclass

from gammonclock.config.readback import readback

from .. import words
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
    synchronised_text: str       # that, in words ("yes", "NO — times may be wrong …")
    table_text: str              # the table, or "not recorded"


def _synchronized(value: object) -> bool | None:
    return value if isinstance(value, bool) else None


def _end_wall(match: MatchRecord) -> int:
    if match.result is not None:
        for item in reversed(match.effects):
            if item.effect is match.result:
                return item.wall
    return match.end_wall


def particulars(match: MatchRecord, lang: str | None = None) -> Particulars:
    """The particulars in `lang` (None: the match's `[display] language`)."""
    lang = words.language(lang or match.config.device.language)
    config, rules, header = match.config, match.rules, match.read.header.data
    said = dict(readback(config, lang))
    table = header.get("table")
    cube = words.say("rb.no_cube" if not rules.cube
                     else "rb.crawford" if rules.crawford else "rb.no_crawford", lang)
    start = rules.start_score
    length = words.counted("points", rules.length, lang)
    if any(start):
        length = words.say("r.points_from", lang, length=length,
                           left=words.number(start.left, lang),
                           right=words.number(start.right, lang))
    discipline = words.word_or_self("discipline", rules.discipline.name, lang)
    synchronized = _synchronized(header.get("wall_clock_synchronized"))
    return Particulars(
        event=config.event.name, round=config.event.round,
        table=table if isinstance(table, str) and table else None,
        left=rules.names.left, right=rules.names.right,
        discipline=f"{discipline}, {cube}", length=length,
        time_control=said[words.say("rb.time", lang)],
        breaks=said[words.say("rb.breaks", lang)],
        started_wall=match.read.header.wall, ended_wall=_end_wall(match),
        finished=match.result is not None,
        wall_clock_synchronized=synchronized,
        synchronised_text=_synchronised_words(synchronized, lang),
        table_text=table if isinstance(table, str) and table
        else words.say("r.not_recorded", lang))


def _synchronised_words(value: bool | None, lang: str) -> str:
    if value is None:
        return words.say("r.not_known", lang)
    return words.say("r.sync_yes" if value else "r.sync_no", lang)

"""The turns as CSV: one row per turn that stands (retracted turns are not in the record).

Durations are seconds written exactly from the journal's nanoseconds ("14", "12.5",
"0.000000001"). `turn` counts the clock turns of a game from 1 (a cube decision is a turn of its
own); 0 marks a late return from a break, when the late player's reserve ran between games. A turn
still running when the journal ends has `end` = "open" and no think time or reserve after.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator

from gammonclock.journal.verify import Verdict
from gammonclock.words import language, say, word_or_self

from .model import MatchRecord, Turn
from .text import Standing, integrity_text, iso_utc, seconds, standing

COLUMNS = ("game", "turn", "side", "player", "start_utc", "match_time_s", "think_s",
           "delay_used_s", "charged_s", "reserve_after_s", "end", "cube", "dice")


def dice_text(turn: Turn, lang: str = "en") -> str:
    """The dice of a turn: "opening 3-5", "6-6", "3-4 (early)"; void throws are left out."""
    parts = ([say("tn.opening", lang, dice=turn.opening.text())] if turn.opening is not None
             else [])
    parts += [r.text() + (say("tn.early", lang) if r.early else "")
              for r in turn.rolls if not r.voided]
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


def header(lang: str = "en") -> tuple[str, ...]:
    """The columns' names in `lang`: `COLUMNS` in English, their words in Russian; the order
    and the number of columns are the same in every language."""
    return tuple(say(f"csv.{column}", lang) for column in COLUMNS)


def render_csv(match: MatchRecord, lang: str | None = None,
               verdict: Verdict | None = None) -> str:
    """The CSV of turns; `lang` (None: the match's `[display] language`) names the columns.
    English: as it always was (a machine's file: `COLUMNS`, "." decimals, no BOM). Russian, for
    a Russian spreadsheet: a UTF-8 byte order mark (else Excel reads the Cyrillic as cp1251),
    the header in Russian, ";" between fields and a decimal comma, as a Russian Excel or
    LibreOffice opens a CSV by a double click, and the words in the cells (side, end, cube,
    dice) in Russian; the instants stay ISO 8601 UTC.

    A journal whose `verdict` is TAMPERED (exported only when allowed, SPEC §14.1) is marked
    where no reader can miss it and every reader still reads it: a first column, `verdict`,
    holding the verdict in words in every row (and in one row of its own when no turn stands),
    so that a row copied, sorted or filtered anywhere still says it. An intact journal's CSV
    has no such column."""
    lang = language(lang or match.config.device.language)
    russian = lang == "ru"
    mark = (integrity_text(verdict, lang=lang)
            if standing(verdict) is Standing.TAMPERED else None)
    out = io.StringIO()
    if russian:
        out.write("\ufeff")
    writer = csv.writer(out, delimiter=";" if russian else ",", lineterminator="\n")
    if mark is not None:
        writer.writerow((say("csv.verdict", lang), *header(lang)))
        if not match.turns:
            writer.writerow((mark, *("" for _ in COLUMNS)))
        writer.writerows((mark, *row) for row in _rows(match, lang))
        return out.getvalue()
    writer.writerow(header(lang))
    writer.writerows(_rows(match, lang))
    return out.getvalue()


def _rows(match: MatchRecord, lang: str) -> Iterator[tuple[str, ...]]:
    """Each turn's cells, in `COLUMNS` order, in `lang`."""
    russian = lang == "ru"
    for turn in match.turns:
        values = row(match, turn)
        if russian:
            values = {k: v.replace(".", ",") if k in DECIMAL else v for k, v in values.items()}
            values.update(side=say(f"side.{turn.side.value}", lang),
                          end=word_or_self("reason", turn.reason, lang) if turn.reason
                          else say("tn.open", lang),
                          cube=cube_text(turn.cube, lang), dice=dice_text(turn, lang))
        yield tuple(values[c] for c in COLUMNS)


# The columns that hold numbers with a decimal point (seconds).
DECIMAL = frozenset(c for c in COLUMNS if c.endswith("_s"))


def cube_text(cube: str, lang: str) -> str:
    """A turn's cube action ("doubled to 2", "took 2", "passed") in `lang`."""
    if not cube or language(lang) == "en":
        return cube
    head, _, value = cube.rpartition(" ")
    if head == "doubled to":
        return say("cube.doubled", lang, n=value)
    if head == "took":
        return say("cube.took", lang, n=value)
    return word_or_self("cube", cube, lang)

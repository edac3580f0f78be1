"""What the hall tells the director's page about its archive and a round's pairings, as a code
and its fields (issue 25, SPEC §15): the page words them in its own language (static/
texts.json, `archive.say.CODE`, `round.error.CODE`), the English `message`/`error` beside them
for the log and for older pages. A field that is a table's or a system's own text (what a
tampered record is, an OS error) is put in as it is. A `detail` that is the journal's own
words (what verify found, the reader's problems, why it cannot be read) comes in every language
the page speaks beside it, `details` (words.py's catalogue: "jv.*", "jr.*", "jd.*"), the file
names and numbers in it as they are.

    {"code": "unchecked", "records": 41, "key": "keys/table-1.key"}
    {"code": "tampered", "detail": "line 5: record 4 was altered (…)",
     "details": {"en": "line 5: record 4 was altered (…)", "ru": "строка 5: запись 4 …"}}
"""

from __future__ import annotations

from typing import Any

from gammonclock.config.problems import Problem, said
from gammonclock.journal.verify import SEAL_CHECKED, SEAL_OTHER_DEVICE, Verdict
from gammonclock.words import LANGUAGES

Say = dict[str, Any]


def details(text: str) -> dict[str, str]:
    """`text` in each language the page speaks (a Problem in the catalogue's words, any other
    text as it is)."""
    return {lang: said(text, lang) for lang in LANGUAGES}


def with_detail(say: Say, text: str) -> Say:
    """`say` with its `detail` (English) and the same in every language (`details`)."""
    return {**say, "detail": str(text), "details": details(text)}


def verdict_say(verdict: Verdict) -> Say:
    """A journal's verdict (journal.Verdict.words) as a code and its fields; an intact
    journal's torn last line as its `detail`."""
    if not verdict.intact:
        return with_detail({"code": "tampered"}, verdict.message)
    torn = verdict.message.args.get("torn") if isinstance(verdict.message, Problem) else None
    if verdict.seal == SEAL_CHECKED:
        say: Say = {"code": "intact", "records": verdict.records}
    elif verdict.seal == SEAL_OTHER_DEVICE:
        say = {"code": "other_device", "records": verdict.records,
               "sealed_by": verdict.sealed_by or "", "this_key": verdict.this_key or ""}
    else:
        say = {"code": "not_checked", "records": verdict.records, "why": verdict.no_key}
    return with_detail(say, torn) if isinstance(torn, str) and torn else say


def other_key_say(verdict: Verdict, table: str) -> Say:
    """A journal sent from TABLE's account but sealed by another device's key: TAMPERED at the
    hall (the chain holds: `records` whole records)."""
    return {"code": "other_key", "table": table, "records": verdict.records,
            "sealed_by": verdict.sealed_by or "", "this_key": verdict.this_key or ""}


def unchecked_say(records: int, key_file: str | None, problems: list[str]) -> Say:
    """A journal read without the table's key: its seal not checked, and its problems."""
    say: Say = {"code": "unchecked" if key_file else "unchecked_no_keys", "records": records}
    if key_file:
        say["key"] = key_file
    if problems:
        say["detail"] = "; ".join(problems)
        say["details"] = {lang: "; ".join(said(p, lang) for p in problems)
                          for lang in LANGUAGES}
    return say


def summary_say(discipline: str, length: int, left: str, right: str, score: dict[str, Any],
                phase: str) -> Say:
    """What an archived journal holds, in fields: "backgammon to 7, Anna v Boris, 3-2, …"."""
    return {"discipline": discipline, "length": length, "left": left, "right": right,
            "score_left": score.get("left"), "score_right": score.get("right"), "phase": phase}

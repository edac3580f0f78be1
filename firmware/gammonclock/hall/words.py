"""What the hall tells the director's page about its archive and a round's pairings, as a code
and its fields (issue 25, SPEC §15): the page words them in its own language (static/
texts.json, `archive.say.CODE`, `round.error.CODE`), the English `message`/`error` beside them
for the log and for older pages. A field that is a table's or a system's own text (what a
tampered record is, an OS error) is put in as it is.

    {"code": "unchecked", "records": 41, "key": "keys/table-1.key"}
"""

from __future__ import annotations

from typing import Any

from gammonclock.journal.verify import SEAL_CHECKED, SEAL_OTHER_DEVICE, Verdict

Say = dict[str, Any]


def verdict_say(verdict: Verdict) -> Say:
    """A journal's verdict (journal.Verdict.words) as a code and its fields."""
    if not verdict.intact:
        return {"code": "tampered", "detail": verdict.message}
    if verdict.seal == SEAL_CHECKED:
        return {"code": "intact", "records": verdict.records}
    if verdict.seal == SEAL_OTHER_DEVICE:
        return {"code": "other_device", "records": verdict.records,
                "sealed_by": verdict.sealed_by or "", "this_key": verdict.this_key or ""}
    return {"code": "not_checked", "records": verdict.records, "why": verdict.no_key}


def unchecked_say(records: int, key_file: str | None, problems: list[str]) -> Say:
    """A journal read without the table's key: its seal not checked, and its problems."""
    say: Say = {"code": "unchecked" if key_file else "unchecked_no_keys", "records": records}
    if key_file:
        say["key"] = key_file
    if problems:
        say["detail"] = "; ".join(problems)
    return say


def summary_say(discipline: str, length: int, left: str, right: str, score: dict[str, Any],
                phase: str) -> Say:
    """What an archived journal holds, in fields: "backgammon to 7, Anna v Boris, 3-2, …"."""
    return {"discipline": discipline, "length": length, "left": left, "right": right,
            "score_left": score.get("left"), "score_right": score.get("right"), "phase": phase}

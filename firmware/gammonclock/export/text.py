"""Exact text of instants and durations for the export files, and the seal check in words."""

from __future__ import annotations

import time
from enum import Enum

from gammonclock.config.problems import Problem, said
from gammonclock.core.rules import json_points
from gammonclock.durations import NS_PER_S, format_seconds
from gammonclock.journal.verify import NO_KEY_GIVEN as _NO_KEY_GIVEN
from gammonclock.journal.verify import SEAL_CHECKED, SEAL_OTHER_DEVICE, Verdict

from .. import words


def iso_utc(wall_ns: int) -> str:
    """ISO 8601 UTC to the millisecond: 2024-05-01T12:34:56.789Z."""
    seconds, ns = divmod(wall_ns, NS_PER_S)
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds)) + f".{ns // 1_000_000:03d}Z"


def seconds(ns: int | None) -> str:
    """Seconds, exactly, with the digits they need ("14", "12.5", "0.000000001"); "" for None."""
    return "" if ns is None else format_seconds(ns)


# A score or a number of points as JSON has it (the one definition is the rules').
points = json_points


# Why the seals were not checked, when the export was given no device key.
NO_KEY_GIVEN = _NO_KEY_GIVEN


def integrity_text(verdict: Verdict | None, no_check: str = NO_KEY_GIVEN,
                   lang: str = "en") -> str:
    """The verdict in the words `gammonclock verify` prints (`Verdict.words`); without one (a
    match rendered without its journal walked), plainly that the seals were not checked and
    why. In Russian, the catalogue's words (what is wrong with a tampered journal, and a torn
    journal's note, are `verify`'s Problems, said in the catalogue's words too)."""
    if words.language(lang) == "en":
        return f"seal not checked: {no_check}" if verdict is None else verdict.words

    def no_key(why: str) -> str:        # (why there is no key may be a Problem: keys.py)
        return words.say("v.no_key", lang) if why == NO_KEY_GIVEN else said(why, lang)

    if verdict is None:
        return words.say("v.unchecked", lang, why=no_key(no_check))
    if not verdict.intact:
        return words.say("v.tampered", lang, message=said(verdict.message, lang))
    torn = verdict.message.args.get("torn", "") if isinstance(verdict.message, Problem) else ""
    records = words.counted("records", verdict.records, lang) + said(torn, lang)
    if verdict.seal == SEAL_CHECKED:
        return words.say("v.sealed", lang, records=records)
    if verdict.seal == SEAL_OTHER_DEVICE:
        return words.say("v.other_device", lang, sealed_by=verdict.sealed_by,
                         this_key=verdict.this_key, records=records)
    return words.say("v.not_checked", lang, why=no_key(verdict.no_key), records=records)


class Standing(str, Enum):
    """What a journal's verdict makes of an export (SPEC §14.1), said first in every format."""

    INTACT = "intact"                       # chain and seals hold (the key that made them)
    NOT_CHECKED = "seal not checked"        # the chain holds; no key to check the seals with
    OTHER_DEVICE = "another device"         # the chain holds; sealed by another device's key
    TAMPERED = "TAMPERED"                   # it does not verify: written only when allowed


def standing(verdict: Verdict | None) -> Standing:
    """The verdict's standing (None: the seals were not checked, the chain not walked)."""
    if verdict is None:
        return Standing.NOT_CHECKED
    if not verdict.intact:
        return Standing.TAMPERED
    if verdict.seal == SEAL_CHECKED:
        return Standing.INTACT
    return Standing.OTHER_DEVICE if verdict.seal == SEAL_OTHER_DEVICE else Standing.NOT_CHECKED

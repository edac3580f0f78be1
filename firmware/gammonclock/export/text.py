"""Exact text of instants and durations for the export files, and the seal check in words."""

from __future__ import annotations

import time

from ..durations import NS_PER_S, format_seconds
from ..journal import NO_KEY_GIVEN as _NO_KEY_GIVEN
from ..journal import Verdict
from ..rules import json_points


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


def integrity_text(verdict: Verdict | None, no_check: str = NO_KEY_GIVEN) -> str:
    """The verdict in the words `gammonclock verify` prints (`Verdict.words`); without one (a
    match rendered without its journal walked), plainly that the seals were not checked and
    why."""
    if verdict is None:
        return f"seal not checked: {no_check}"
    return verdict.words

"""A table's events in words for the director's page (issue 32): each event's effects, as
`P/T/events` carries them (the journal's own `kind` and fields, `Effect.as_dict`), read back
into the engine's effects and said in every language the page speaks by the catalogue the
arbiter's replies are said in (words.describe): "arbiter: score set to 3-2",
"судья: предупреждение игроку слева: …". The page shows the one of its language.

A table's effects are untrusted: each field is read by its declared type (a side, a whole
number within bounds, a text cut to a card's bound, an enum's value) and an effect that does
not read is said as "other event (KIND)", its kind cut short; what is said is cut to a bound.
Nothing here is markup: the page puts it in as text.
"""

from __future__ import annotations

import types
from dataclasses import MISSING, fields
from enum import Enum
from fractions import Fraction
from typing import Any, Union, get_args, get_origin, get_type_hints

from gammonclock import words
from gammonclock.core import effects as fx
from gammonclock.core.rules import GameResult, ResultKind
from gammonclock.errors import GammonclockError
from gammonclock.sides import Pair, Side

from .messages import MAX_TEXT, clip

MAX_WORDED = 8               # effects of one event said; more are counted ("… and 3 more")
MAX_SAID_TEXT = 300          # an event's words, at most (a card keeps 8 events, each in 2)
MAX_KIND_SHOWN = 40          # an unknown kind, as "other event (…)" shows it
MAX_NUMBER = 10**15          # a whole number a field may hold (ns spans fit)
MAX_ITEMS = 16               # items of a list field (dice, facts)

EFFECTS: dict[str, type[fx.Effect]] = {cls.kind: cls for cls in get_args(fx.AnyEffect)}


class Unread(GammonclockError, ValueError):
    """A field of an effect that is not what its type says."""


HINTS: dict[str, dict[str, Any]] = {kind: get_type_hints(cls, vars(fx))
                                    for kind, cls in EFFECTS.items()}


def effect_of(data: object) -> fx.Effect | None:
    """The effect an event's effect object holds, or None when it is not one this hall knows
    (a kind it does not know, a field missing or not of its type)."""
    if not isinstance(data, dict):
        return None
    kind = data.get("kind")
    cls = EFFECTS.get(kind) if isinstance(kind, str) else None
    if cls is None or not isinstance(kind, str):
        return None
    hints = HINTS[kind]
    given: dict[str, Any] = {}
    try:
        for f in fields(cls):
            if f.name not in data:
                if f.name == "t":
                    given["t"] = 0            # the instant: the card does not say it
                    continue
                if f.default is MISSING:
                    return None
                continue
            given[f.name] = _read(hints[f.name], data[f.name])
        return cls(**given)
    except (Unread, ValueError, TypeError):
        return None


def _read(hint: Any, value: object) -> Any:
    """VALUE read as type HINT (an effect field's), bounded; Unread when it is not one."""
    origin, args = get_origin(hint), get_args(hint)
    if origin in (Union, types.UnionType):
        if value is None and type(None) in args:
            return None
        for arg in (a for a in args if a is not type(None)):
            try:
                return _read(arg, value)
            except Unread:
                continue
        raise Unread(hint)
    if hint is bool:
        if type(value) is bool:
            return value
    elif hint is int:
        if type(value) is int and abs(value) <= MAX_NUMBER:
            return value
    elif hint is str:
        if isinstance(value, str):
            return clip(value, MAX_TEXT)
    elif hint is Fraction:
        if isinstance(value, int | float) and not isinstance(value, bool) and \
                abs(value) <= MAX_NUMBER:
            return Fraction(value).limit_denominator(2)     # whole, or a half (longgammon)
    elif isinstance(hint, type) and issubclass(hint, Enum):
        if isinstance(value, str | int) and not isinstance(value, bool):
            try:
                return hint(value)
            except ValueError:
                pass
    elif origin is Pair:
        if isinstance(value, dict):
            return Pair(_read(args[0], value.get("left")), _read(args[0], value.get("right")))
    elif hint is GameResult:
        if isinstance(value, dict):
            return GameResult(_read(Side | None, value.get("winner")),
                              _read(ResultKind, value.get("kind")),
                              _read(Fraction, value.get("points")))
    elif origin is tuple:
        if isinstance(value, list) and len(value) <= MAX_ITEMS:
            if len(args) == 2 and args[1] is Ellipsis:
                return tuple(_read(args[0], v) for v in value)
            if len(value) == len(args):
                return tuple(_read(a, v) for a, v in zip(args, value, strict=True))
    raise Unread(hint)


def _runs(parts: list[tuple[str, int]]) -> list[str]:
    """Each (words, times) once, the same words in a row said once and counted: "left's flag
    falls ×20"."""
    out: list[tuple[str, int]] = []
    for part, times in parts:
        if out and out[-1][0] == part:
            out[-1] = (part, out[-1][1] + times)
        else:
            out.append((part, times))
    return [part if n == 1 else f"{part} ×{n}" for part, n in out]


def event_words(effects: list[Any]) -> dict[str, str]:
    """What an event did, in each language the page speaks: its effects said one after the
    other (the same again and again once, "×N"; at most `MAX_WORDED`, the rest counted); an
    arbiter's command as "arbiter: " before what it did (its own words when it did nothing
    else); an effect this hall cannot read as "other event (KIND)"."""
    runs: list[list[Any]] = []                   # [effect object, times in a row]
    more = 0
    for i, data in enumerate(effects):
        if runs and runs[-1][0] == data:
            runs[-1][1] += 1
        elif len(runs) == MAX_WORDED:
            more = len(effects) - i
            break
        else:
            runs.append([data, 1])
    read = [(data, times, effect_of(data)) for data, times in runs]
    out: dict[str, str] = {}
    for lang in words.LANGUAGES:
        parts: list[tuple[str, int]] = []
        command: fx.ArbiterCommand | None = None
        for data, times, effect in read:
            if isinstance(effect, fx.ArbiterCommand):
                command = command or effect
            elif effect is not None:
                parts.append((words.describe(effect, lang, rounded=True), times))
            else:
                kind = data.get("kind") if isinstance(data, dict) else None
                parts.append((words.say("ev.other", lang, kind=clip(
                    kind if isinstance(kind, str) else "?", MAX_KIND_SHOWN)), times))
        if more > 0:
            parts.append((words.say("ev.more", lang, n=more), 1))
        text = "; ".join(_runs(parts))
        if command is not None:
            text = words.say("ev.arbiter", lang, what=text or command.text)
        out[lang] = clip(text, MAX_SAID_TEXT)
    return out

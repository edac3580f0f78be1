"""Exact durations: decimal text to integer nanoseconds, and back to text for people.

Binary floating point never touches a duration: "31.9" is 31 900 000 000 ns exactly. The config
(TOML floats are read as `Decimal`), the simulation script and the arbiter commands all parse here.
"""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation
from fractions import Fraction

NS_PER_MS = 1_000_000
NS_PER_S = 1_000_000_000
NS_PER_MIN = 60 * NS_PER_S

_UNIT_NS = {"h": 3600 * NS_PER_S, "m": NS_PER_MIN, "s": NS_PER_S, "ms": NS_PER_MS}
# ASCII digits only: a bare `\d` also takes other scripts' digits ("٣s"), which `Decimal` reads.
_GROUP = re.compile(r"(\d+(?:\.\d+)?|\.\d+)(ms|h|m|s)", re.ASCII)
_NUMBER = re.compile(r"[+-]?(\d+(\.\d*)?|\.\d+)", re.ASCII)

DURATION_HINT = 'use e.g. "12s", "2m30s", "2.5m", "1500ms"'


class DurationError(ValueError):
    """Text that is not a duration; the message says what is wrong and what would do."""


def decimal_to_ns(value: Decimal | int, scale_ns: int = NS_PER_S) -> int:
    """`value` units of `scale_ns` nanoseconds, exactly; a fraction of a nanosecond is an error.

    The product is taken as a `Fraction`: `Decimal` arithmetic rounds to 28 digits, and TOML's
    `inf` and `nan` reach here as Decimals too.
    """
    number = Decimal(value)
    if not number.is_finite():
        raise DurationError(f"{value} is not a finite number")
    ns = Fraction(number) * scale_ns
    if ns.denominator != 1:
        raise DurationError(f"{value} is finer than a nanosecond")
    return int(ns)


def seconds_to_ns(text: str) -> int:
    """A plain decimal number of seconds ("12", "12.5", "+3", "-0.25") as nanoseconds."""
    if not _NUMBER.fullmatch(text):
        raise DurationError(f"{text!r} is not a number of seconds")
    try:
        return decimal_to_ns(Decimal(text))
    except InvalidOperation as exc:  # pragma: no cover - the regex already rejects these
        raise DurationError(f"{text!r} is not a number of seconds") from exc


def parse_duration(text: str, *, bare_seconds: bool = False) -> int:
    """Nanoseconds of a duration string such as "2m30s", "2.5m", "1500ms".

    Groups of number-unit (units h, m, s, ms) add up. A string without a unit is an error unless
    `bare_seconds` (script and arbiter text, where "30" can only mean seconds). No sign allowed.
    """
    stripped = text.strip()
    if bare_seconds and _NUMBER.fullmatch(stripped) and stripped[0] not in "+-":
        return seconds_to_ns(stripped)
    pos, total = 0, 0
    for match in _GROUP.finditer(stripped):
        if match.start() != pos:
            break
        total += decimal_to_ns(Decimal(match.group(1)), _UNIT_NS[match.group(2)])
        pos = match.end()
    if pos == 0 or pos != len(stripped):
        raise DurationError(f"{text!r} is not a duration; {DURATION_HINT}")
    return total


def parse_signed_duration(text: str) -> int:
    """A duration with an optional sign: "+30s", "-1m", "45s" (no sign adds)."""
    stripped = text.strip()
    sign = -1 if stripped.startswith("-") else 1
    body = stripped[1:] if stripped[:1] in "+-" else stripped
    return sign * parse_duration(body, bare_seconds=True)


def format_clock(ns: int) -> str:
    """A reserve as a clock face shows it to people: H:MM:SS.t / M:SS.t, tenths rounded down."""
    sign = "-" if ns < 0 else ""
    tenths = abs(ns) // (NS_PER_S // 10)
    seconds, tenth = divmod(tenths, 10)
    minutes, sec = divmod(seconds, 60)
    hours, minute = divmod(minutes, 60)
    if hours:
        return f"{sign}{hours}:{minute:02d}:{sec:02d}.{tenth}"
    return f"{sign}{minutes}:{sec:02d}.{tenth}"


def format_seconds(ns: int) -> str:
    """An instant or span in seconds with the digits it needs ("12", "12.5", "0.000001")."""
    sign = "-" if ns < 0 else ""
    whole, frac = divmod(abs(ns), NS_PER_S)
    if not frac:
        return f"{sign}{whole}"
    return f"{sign}{whole}.{frac:09d}".rstrip("0")

"""Exact durations: decimal text to integer nanoseconds, and back to text for people.

Binary floating point never touches a duration: "31.9" is 31 900 000 000 ns exactly. The config
(TOML floats are read as `Decimal`), the simulation script and the arbiter commands all parse here.

The bounds on every number and text from outside (config, script, arbiter words, `--speed`) are
here too, in one place: each is checked before any arithmetic, so that no input can freeze the
clock (`Fraction(Decimal("1e999999999"))` computes 10**999999999) or flood its memory.
"""

from __future__ import annotations

import re
import unicodedata
from decimal import Decimal, InvalidOperation
from enum import Enum
from fractions import Fraction

from gammonclock.errors import GammonclockError

NS_PER_MS = 1_000_000
NS_PER_S = 1_000_000_000
NS_PER_MIN = 60 * NS_PER_S
NS_PER_H = 60 * NS_PER_MIN

# --- bounds on what comes from outside: far beyond any match, small enough to be harmless ----
MAX_DURATION_NS = 1000 * NS_PER_H   # any duration, script TIME, `+SECONDS`, adjustment: 1 000 h
MAX_DIGITS = 30                     # digits of a number's text (and its exponent's reach) at most
MAX_POINTS = 99                     # scores and forfeited points: the longest match length
MAX_CUBE = 4096                     # 2**12: the highest cube value a command may set
MAX_TEXT_LENGTH = 200               # an arbiter's warning
MIN_SPEED = 0.01                    # `simulate --speed`: times faster than real time; slower,
MAX_SPEED = 10_000                  # a 1 000 h script's waits would overflow `time.sleep`
SHOWN_LENGTH = 40                   # a value quoted in a message is cut to this many characters

_UNIT_NS = {"h": 3600 * NS_PER_S, "m": NS_PER_MIN, "s": NS_PER_S, "ms": NS_PER_MS}
# ASCII digits only: a bare `\d` also takes other scripts' digits ("٣s"), which `Decimal` reads.
_GROUP = re.compile(r"(\d+(?:\.\d+)?|\.\d+)(ms|h|m|s)", re.ASCII)
_NUMBER = re.compile(r"[+-]?(\d+(\.\d*)?|\.\d+)", re.ASCII)

DURATION_HINT = 'use e.g. "12s", "2m30s", "2.5m", "1500ms"'
_TOO_MANY_DIGITS = f"has too many digits; at most {MAX_DIGITS}"


class DurationError(GammonclockError, ValueError):
    """Text that is not a duration; the message says what is wrong and what would do, `code`
    the same for a caller that words it in another language ("not_duration", "not_seconds",
    "not_finite", "finer_than_ns"; a range error's below), `shown` the value as quoted."""

    def __init__(self, message: str, code: str = "other", shown: str = "") -> None:
        super().__init__(message)
        self.code, self.shown = code, shown


class DurationRangeError(DurationError):
    """A well-formed number beyond the bounds: `reason` says which ("is too long; …"), `code`
    the same for a caller that words it in another language: "too_long" (at most
    `MAX_DURATION_TEXT`) or "too_many_digits" (at most `MAX_DIGITS`)."""

    def __init__(self, shown: str, reason: str) -> None:
        self.reason = reason
        super().__init__(f"{shown} {reason}",
                         "too_many_digits" if reason == _TOO_MANY_DIGITS else "too_long", shown)


class PointsProblem(Enum):
    NEGATIVE = "below 0"
    OVER = "over the bound"
    NOT_HALVES = "not whole or half points"


class PointsError(GammonclockError, ValueError):
    """Points that `bounded_points` refuses; `problem` says why, each caller words its message
    (a config key, an arbiter word)."""

    def __init__(self, problem: PointsProblem) -> None:
        self.problem = problem
        super().__init__(problem.value)


class LineFault(Enum):
    TOO_LONG = "too long"
    CONTROL = "a control character"


def shorten(text: str, limit: int = SHOWN_LENGTH) -> str:
    """`text` cut to `limit` characters for a message: a 5 000-digit number is not repeated."""
    return text if len(text) <= limit else text[:limit - 1] + "…"


def quoted(word: str) -> str:
    """A word from outside as a message quotes it: in quotes, escaped, cut short."""
    return shorten(repr(word))


def escaped(text: str) -> str:
    """`text` with every control character written as an escape (`\\u0000`): a message stays
    one line, and shows what is there."""
    return "".join(f"\\u{ord(c):04x}" if _is_control(c) else c for c in text)


def _is_control(char: str) -> bool:
    return unicodedata.category(char).startswith("C")


def has_control_characters(text: str) -> bool:
    """True when `text` holds a control, format or unassigned character (Unicode category C*):
    NUL, a newline, an escape sequence or a direction override has no place on a panel or in
    a log line."""
    return any(map(_is_control, text))


def line_fault(text: str, max_length: int) -> LineFault | None:
    """What keeps `text` from being one printable line of at most `max_length` characters (a
    name, a warning: they go to the panels and the log as they are), or None."""
    if len(text) > max_length:
        return LineFault.TOO_LONG
    if has_control_characters(text):
        return LineFault.CONTROL
    return None


def has_too_many_digits(value: object) -> bool:
    """An int too long for a message or for arithmetic, judged from its bits (about 4 a digit):
    `str()` of it may itself fail (over 4 300 digits)."""
    return isinstance(value, int) and value.bit_length() > 4 * MAX_DIGITS


def is_small_decimal(number: Decimal) -> bool:
    """A finite number of at most `MAX_DIGITS` digits whose exponent stays within `MAX_DIGITS`:
    exact arithmetic on it (a `Fraction`) is cheap. Checked from its digits, not its value."""
    if not number.is_finite():
        return False
    _, digits, exponent = number.as_tuple()
    assert isinstance(exponent, int)   # finite
    return len(digits) <= MAX_DIGITS and -MAX_DIGITS <= exponent <= MAX_DIGITS


def shown_number(value: object) -> str:
    """A number as a message shows it, cut short; a huge int is not written out."""
    if has_too_many_digits(value):
        return "a number with too many digits"
    return shorten(str(value))


def bounded_points(number: Decimal | int, high: int, *, high_allowed: bool = True) -> Fraction:
    """`number` as exact whole or half points from 0 to `high` (below it unless `high_allowed`).

    The bounds are compared first (cheap however many zeros the number means), its digits
    checked before any arithmetic: `Fraction(Decimal("1e999999999"))` computes 10**999999999.
    Raises PointsError naming the problem; `number` is finite (the caller checked).
    """
    if number > high or (number == high and not high_allowed):
        raise PointsError(PointsProblem.OVER)
    if number < 0:
        raise PointsError(PointsProblem.NEGATIVE)
    exact = Decimal(number)
    if not is_small_decimal(exact) or (Fraction(exact) * 2).denominator != 1:
        raise PointsError(PointsProblem.NOT_HALVES)
    return Fraction(exact)


def decimal_to_ns(value: Decimal | int, scale_ns: int = NS_PER_S, *,
                  shown: str | None = None) -> int:
    """`value` units of `scale_ns` nanoseconds, exactly; a fraction of a nanosecond is an error,
    and so is more than `MAX_DURATION_NS` either way.

    The product is taken as a `Fraction`: `Decimal` arithmetic rounds to 28 digits, and TOML's
    `inf` and `nan` reach here as Decimals too. The size is checked from the digits first.
    `shown` is how messages quote the value (the text it came from).
    """
    shown = shown or shown_number(value)
    if has_too_many_digits(value):
        raise DurationRangeError(shown, _TOO_LONG)
    number = Decimal(value)
    if not number.is_finite():
        raise DurationError(f"{shown} is not a finite number", "not_finite", shown)
    if number and number.adjusted() > MAX_DIGITS:
        raise DurationRangeError(shown, _TOO_LONG)
    if not is_small_decimal(number):
        raise DurationRangeError(shown, _TOO_MANY_DIGITS)
    ns = Fraction(number) * scale_ns
    if ns.denominator != 1:
        raise DurationError(f"{shown} is finer than a nanosecond", "finer_than_ns", shown)
    if abs(ns) > MAX_DURATION_NS:
        raise DurationRangeError(shown, _TOO_LONG)
    return int(ns)


def _decimal(text: str, what: str) -> Decimal:
    """The Decimal of a number's text already matched by a pattern, its length checked first."""
    if sum(c.isdigit() for c in text) > MAX_DIGITS:
        raise DurationRangeError(quoted(text), _TOO_MANY_DIGITS)
    try:
        return Decimal(text)
    except InvalidOperation as exc:  # pragma: no cover - the patterns already reject these
        raise DurationError(f"{quoted(text)} is not {what}") from exc


def seconds_to_ns(text: str) -> int:
    """A plain decimal number of seconds ("12", "12.5", "+3", "-0.25") as nanoseconds."""
    if not _NUMBER.fullmatch(text):
        raise DurationError(f"{quoted(text)} is not a number of seconds", "not_seconds",
                            quoted(text))
    return decimal_to_ns(_decimal(text, "a number of seconds"), shown=quoted(text))


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
        total += decimal_to_ns(_decimal(match.group(1), "a duration"), _UNIT_NS[match.group(2)],
                               shown=quoted(text))
        if total > MAX_DURATION_NS:   # "999h999h…": each group is bounded, so is their sum
            raise DurationRangeError(quoted(text), _TOO_LONG)
        pos = match.end()
    if pos == 0 or pos != len(stripped):
        raise DurationError(f"{quoted(text)} is not a duration; {DURATION_HINT}", "not_duration",
                            quoted(text))
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


def duration_text(ns: int) -> str:
    """A duration as the config writes it, in the largest unit that holds it whole ("5m")."""
    for unit, scale in (("h", NS_PER_H), ("m", NS_PER_MIN), ("s", NS_PER_S), ("ms", NS_PER_MS)):
        if ns and ns % scale == 0:
            return f"{ns // scale}{unit}"
    return f"{format_seconds(ns)}s"


MAX_DURATION_TEXT = duration_text(MAX_DURATION_NS)   # "1000h": the bound as messages say it
_TOO_LONG = f"is too long; at most {MAX_DURATION_TEXT}"

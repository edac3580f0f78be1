"""The config's value types: each `Converter` checks a value, says what is wrong with it (a
`Problem`, in the config's language) and what it allows; and how values are shown in messages.
The table of keys that uses them is schema.py."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction
from typing import Any
from urllib.parse import urlsplit

from gammonclock.core.pin import PinCheck, PinHashError
from gammonclock.core.rules import (
    DISCIPLINES,
    Family,
)
from gammonclock.durations import (
    MAX_DIGITS,
    MAX_DURATION_TEXT,
    MAX_POINTS,
    NS_PER_S,
    DurationError,
    DurationRangeError,
    LineFault,
    PointsError,
    PointsProblem,
    bounded_points,
    decimal_to_ns,
    duration_text,
    escaped,
    format_seconds,
    has_control_characters,
    line_fault,
    parse_duration,
    shorten,
    shown_number,
)
from gammonclock.sides import Pair
from gammonclock.words import WORDS

from .problems import Problem

Values = Mapping[str, Any]   # the values read so far, by key path

MAX_NAME_LENGTH = 24
MAX_FREE_TEXT = 60           # an event's name, a round, a table's event: one line of a panel


# --- how values are shown in messages ---------------------------------------------------------

def shown(value: Any) -> str:
    """`value` as written in TOML, cut short: a message never repeats a 5 000-digit number."""
    return shorten(_written(value, depth=0))


def _written(value: Any, depth: int) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return '"' + shorten(escaped(value)) + '"'
    if isinstance(value, list):   # as written in TOML, not as Python's repr of Decimals
        if depth > 2 or len(value) > 8:
            return "[…]"
        return "[" + ", ".join(_written(v, depth + 1) for v in value) + "]"
    if isinstance(value, dict):
        return "a table"
    return shown_number(value)   # a number, or a TOML date as str() writes it


def is_number(value: Any) -> bool:
    """An int or a finite TOML float (`inf` and `nan` are not numbers of anything here)."""
    if isinstance(value, Decimal):
        return value.is_finite()
    return isinstance(value, int) and not isinstance(value, bool)


def _toml(value: Any) -> str:
    """A default as a TOML literal, for the docs."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return f'"{value}"'
    if isinstance(value, Pair):
        return f"[{', '.join(str(v) for v in value)}]"
    return str(value)


# --- the types --------------------------------------------------------------------------------

class Converter:
    """A key's type: `check` takes the raw TOML value and returns the typed one, or raises
    ValueError with the message (the value as written, what is wrong, what is allowed)."""

    @property
    def allowed(self) -> str:
        """What the docs say is allowed (markdown)."""
        raise NotImplementedError

    def check(self, value: Any) -> Any:
        raise NotImplementedError

    def convert(self, value: Any, read: Values) -> Any:
        """The typed value; `read` holds the keys read before this one (a start score needs
        the match length)."""
        return self.check(value)

    def written(self, default: Any) -> str:
        """The default as the docs write it (a TOML literal)."""
        return _toml(default)


class Boolean(Converter):
    allowed = "`true` / `false`"

    def check(self, value: Any) -> bool:
        if not isinstance(value, bool):
            raise ValueError(Problem("cfg.not_bool", value=shown(value)))
        return value


@dataclass(frozen=True)
class Integer(Converter):
    low: int
    high: int
    unit: str = ""
    hex: bool = False    # the docs write the range and the default in hexadecimal

    @property
    def allowed(self) -> str:
        bounds = (f"{self.written(self.low)}..{self.written(self.high)}" if self.hex
                  else f"{self.low}..{self.high}")
        return f"{bounds} {self.unit}".rstrip()

    def check(self, value: Any) -> int:
        if not isinstance(value, int) or isinstance(value, bool):
            raise ValueError(Problem("cfg.not_whole", value=shown(value), low=self.low,
                                     high=self.high))
        if not self.low <= value <= self.high:
            raise ValueError(Problem("cfg.out_of_range", value=shown(value), low=self.low,
                                     high=self.high))
        return value

    def written(self, default: Any) -> str:
        return f"0x{default:02X}" if self.hex else str(default)


@dataclass(frozen=True)
class Choice(Converter):
    """One of `options` (strings or whole numbers), exactly as written."""

    options: tuple[str | int, ...]

    @property
    def allowed(self) -> str:
        return ", ".join(f"`{o}`" for o in self.options)

    def check(self, value: Any) -> Any:
        if type(value) not in {type(o) for o in self.options} or value not in self.options:
            raise ValueError(Problem("cfg.not_one_of", value=shown(value),
                                     options=", ".join(map(str, self.options))))
        return value


def _check_line(value: str, max_length: int, printable: str) -> None:
    """Text for the panels and the log: one printable line of at most `max_length` characters;
    `printable` is the advice after a control character."""
    fault = line_fault(value, max_length)
    if fault is LineFault.TOO_LONG:
        raise ValueError(Problem("cfg.too_long_text", value=shown(value), n=max_length))
    if fault is LineFault.CONTROL:
        raise ValueError(Problem("cfg.control", value=shown(value), advice=printable))


class Name(Converter):
    allowed = f"a name, 1–{MAX_NAME_LENGTH} characters"

    def check(self, value: Any) -> str:
        if not isinstance(value, str) or not value.strip():
            raise ValueError(Problem("cfg.not_name", value=shown(value)))
        _check_line(value, MAX_NAME_LENGTH, Problem("cfg.printable_name"))
        return value.strip()


@dataclass(frozen=True)
class Duration(Converter):
    """A number of seconds or a string like "2m30s"; above zero unless `allow_zero`."""

    allow_zero: bool = False
    at_most_ns: int | None = None

    @property
    def allowed(self) -> str:
        text = "a duration, 0 or more" if self.allow_zero else "a duration above 0"
        if self.at_most_ns is not None:
            text += f", at most {duration_text(self.at_most_ns)}"
        return text

    def check(self, value: Any) -> int:
        if is_number(value):
            try:
                ns = decimal_to_ns(value, shown=shown(value))
            except DurationRangeError as exc:
                raise ValueError(_range_problem(exc, shown(value))) from None
        elif isinstance(value, str):
            try:
                ns = parse_duration(value)
            except DurationRangeError as exc:   # well formed, but too long or too many digits
                raise ValueError(_range_problem(exc, shown(value))) from None
            except DurationError:
                raise ValueError(Problem("cfg.not_duration", value=shown(value))) from None
        else:
            raise ValueError(Problem("cfg.not_duration", value=shown(value)))
        if ns < 0 or (ns == 0 and not self.allow_zero):
            raise ValueError(Problem("cfg.duration_0_or_more" if self.allow_zero
                                     else "cfg.duration_above_0", value=shown(value)))
        if self.at_most_ns is not None and ns > self.at_most_ns:
            raise ValueError(Problem("cfg.duration_too_long", value=shown(value),
                                     max=format_seconds(self.at_most_ns)))
        return ns

    def written(self, default: Any) -> str:
        return f'"{duration_text(default)}"'


@dataclass(frozen=True)
class NumberNs(Converter):
    """A number of `unit`s (seconds, milliseconds) from `low` to `high`, in nanoseconds."""

    low: Decimal
    high: Decimal
    scale_ns: int
    unit: str

    @property
    def allowed(self) -> str:
        return f"{self.low}..{self.high} {self.unit}"

    def check(self, value: Any) -> int:
        if not is_number(value):
            raise ValueError(Problem("cfg.not_number", value=shown(value), low=self.low,
                                     high=self.high, unit=self._unit()))
        if not self.low <= value <= self.high:
            raise ValueError(Problem("cfg.number_range", value=shown(value), low=self.low,
                                     high=self.high, unit=self._unit()))
        return decimal_to_ns(value, self.scale_ns, shown=shown(value))

    def written(self, default: Any) -> str:
        return format_seconds(default * NS_PER_S // self.scale_ns)

    def _unit(self) -> str:
        key = f"cfg.unit.{self.unit}"
        return Problem(key) if key in WORDS else self.unit


class StartScore(Converter):
    """[left, right], each below the match length; halves only in longgammon."""

    allowed = "`[left, right]`, each below the length; halves only in longgammon"

    def convert(self, value: Any, read: Values) -> Pair[Fraction]:
        # The length is 0 when missing or invalid: the bound is then the longest match length.
        length: int = read["match.length"]
        halves = DISCIPLINES[read["match.discipline"]].family is Family.LONGGAMMON
        if not isinstance(value, list) or len(value) != 2 or not all(map(is_number, value)):
            raise ValueError(Problem("cfg.not_score", value=shown(value)))
        score: list[Fraction] = []
        problems: set[PointsProblem] = set()
        for v in value:
            try:
                score.append(bounded_points(v, length or MAX_POINTS, high_allowed=False))
            except PointsError as exc:
                problems.add(exc.problem)
        # Out of range is told before finer than halves, whichever score holds which.
        if problems - {PointsProblem.NOT_HALVES}:
            raise ValueError(Problem("cfg.score_below_length", value=shown(value),
                                     length=length) if length
                             else Problem("cfg.score_below_longest", value=shown(value),
                                          longest=MAX_POINTS))
        if problems or (not halves and any(v.denominator != 1 for v in score)):
            raise ValueError(Problem("cfg.score_halves" if halves
                                     else "cfg.score_half_longgammon", value=shown(value)))
        return Pair(score[0], score[1])


class Port(Converter):
    """A device path or URL; empty (or blank) is none."""

    allowed = "a device path or a pyserial URL (`loop://`, `socket://host:port`)"

    def check(self, value: Any) -> str | None:
        if not isinstance(value, str):
            raise ValueError(Problem("cfg.not_string", value=shown(value)))
        return value.strip() or None


@dataclass(frozen=True)
class FilePath(Converter):
    what: str = "file"   # "file" or "directory"

    @property
    def allowed(self) -> str:
        return f"a {self.what} path"

    def check(self, value: Any) -> str:
        if not isinstance(value, str) or not value.strip():
            raise ValueError(Problem(f"cfg.not_{self.what}_path", value=shown(value)))
        return value


@dataclass(frozen=True)
class FreeText(Converter):
    """Text for people (an event's name): one line, printable, short; blank is none."""

    max_length: int = MAX_FREE_TEXT

    @property
    def allowed(self) -> str:
        return f"text, at most {self.max_length} characters"

    def check(self, value: Any) -> str:
        if not isinstance(value, str):
            raise ValueError(Problem("cfg.not_text", value=shown(value)))
        _check_line(value, self.max_length, Problem("cfg.printable"))
        return value.strip()


@dataclass(frozen=True)
class Pattern(Converter):
    """A string matching `regex` whole; `what` names it and `use` says what to write."""

    regex: str
    what: str
    use: str
    max_length: int = 64
    said: str = ""           # its problem's catalogue id ("cfg.pattern.SAID"), if it has one

    @property
    def allowed(self) -> str:
        return self.use

    def check(self, value: Any) -> str:
        if (not isinstance(value, str) or len(value) > self.max_length
                or not re.fullmatch(self.regex, value, re.ASCII)):
            if self.said:
                raise ValueError(Problem(f"cfg.pattern.{self.said}", value=shown(value)))
            raise ValueError(f"{shown(value)} is not {self.what}; use {self.use}")
        return value


def _range_problem(exc: DurationRangeError, value: str) -> Problem:
    """A duration beyond the bounds, said as a Problem (durations.py words no language)."""
    return Problem(f"dur.{exc.code}", value=value, max=MAX_DURATION_TEXT,
                   digits=MAX_DIGITS)


class PinHash(Converter):
    """The arbiter's PIN as its hash (pin.py): what the journals keep instead of the PIN."""

    allowed = "a hash as `python -m gammonclock.pin PIN` prints it"

    def check(self, value: Any) -> PinCheck:
        if not isinstance(value, str):
            raise ValueError(Problem("cfg.pin_hash", value=shown(value),
                                     why=Problem("cfg.pin_hash.form")))
        try:
            return PinCheck.parse(value)
        except PinHashError as exc:
            fields = {name: Problem(f"cfg.pin_hash.part.{part}") if name == "what" else part
                      for name, part in exc.fields.items()}
            if "name" in exc.fields:                # a parameter: what it is, in words
                fields["param"] = Problem(f"cfg.pin_hash.param.{exc.fields['name']}")
            raise ValueError(Problem("cfg.pin_hash", value=shown(value), why=Problem(
                f"cfg.pin_hash.{exc.code}", **fields))) from None


_HOST = re.compile(r"[A-Za-z0-9._-]+|\[[0-9A-Fa-f:.]+\]", re.ASCII)


class BrokerUrl(Converter):
    """An MQTT broker: mqtt:// or mqtts://, a host and an optional port; nothing else (the
    account is `username` and `password_file`)."""

    allowed = "`mqtt://HOST[:PORT]` or `mqtts://HOST[:PORT]`"

    def check(self, value: Any) -> str:
        if not isinstance(value, str) or not self._is_broker(value):
            raise ValueError(Problem("cfg.not_broker", value=shown(value)))
        return value

    @staticmethod
    def _is_broker(text: str) -> bool:
        if len(text) > 200 or has_control_characters(text) or text != text.strip():
            return False
        try:
            parts = urlsplit(text)
            port = parts.port          # ValueError for a port that is not 0..65535
        except ValueError:
            return False
        host = parts.netloc.rsplit(":", 1)[0] if port is not None else parts.netloc
        return (parts.scheme in ("mqtt", "mqtts") and bool(parts.hostname)
                and _HOST.fullmatch(host) is not None and port != 0
                and parts.path in ("", "/") and "?" not in text and "#" not in text)


def broker_is_tls(url: str) -> bool:
    return urlsplit(url).scheme == "mqtts"

"""The one table of config keys (SPEC §10, §13.1, §14, §15).

Every key the config may hold is one `Field` of `FIELDS`: its key path, its type (a `Converter`,
which checks a value, says what is wrong with it and what it allows), its default (a value, or a
`Rule` when it follows from other keys through rules.py) and a line saying what it is. From this
table come the unknown-key check (`SCHEMA`), the reads with their defaults and range checks
(config.py), the device defaults (`config.DEFAULT_DEVICE`) and the key tables of the docs:

    python -m gammonclock.config.schema --markdown match|device   # print a table
    python -m gammonclock.config.schema --update README.md hardware_docs/config.md

`--update` rewrites the tables between `<!-- config-keys KIND … -->` and
`<!-- end config-keys KIND -->` in place; a test fails when the docs are not in step.
"""

from __future__ import annotations

import argparse
import re
import socket
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from gammonclock.core.pin import PinCheck, PinHashError
from gammonclock.core.rules import (
    DEFAULT_DEBOUNCE_NS,
    DEFAULT_HOLD_NS,
    DEFAULT_OVERTIME_NS,
    DISCIPLINES,
    MAX_BREAK_NS,
    Family,
    break_allowance,
)
from gammonclock.core.timecontrol import FlagRule, TimeMode
from gammonclock.durations import (
    MAX_DIGITS,
    MAX_DURATION_TEXT,
    MAX_POINTS,
    NS_PER_MS,
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

MATCH, DEVICE = "match", "device"   # SPEC §13.1: the two kinds of settings

MAX_NAME_LENGTH = 24
MAX_FREE_TEXT = 60           # an event's name, a round, a table's event: one line of a panel
TABLE_ID_LENGTH = 32
DEFAULT_TABLE_ID = "gammonclock"   # for a host whose name has none of the allowed characters


# --- the pairs: a name in the config and what goes with it ------------------------------------

@dataclass(frozen=True)
class PinFactory:
    """A gpiozero backend: its factory class, and what to do when it cannot be created."""

    factory: str         # "module.Class"
    hint: str            # when it cannot be imported: how to install it
    running_hint: str = ""   # when it is there but fails to start: what usually causes that


PIN_FACTORIES: dict[str, PinFactory] = {
    "lgpio": PinFactory(
        "gpiozero.pins.lgpio.LGPIOFactory",
        "install lgpio (Raspberry Pi OS: sudo apt install python3-lgpio; pip: gammonclock[pi]) "
        "and run on a Raspberry Pi with /dev/gpiochip* readable",
        "lgpio makes its notification pipe in the working directory (or in $LG_WD): start the "
        "clock from a folder its user can write, as the unit does (WorkingDirectory= and LG_WD= "
        "/run/gammonclock); its user must be in the gpio group to open /dev/gpiochip*"),
    "rpigpio": PinFactory(
        "gpiozero.pins.rpigpio.RPiGPIOFactory",
        "install RPi.GPIO (or rpi-lgpio on a Pi 5, where RPi.GPIO does not work) and run on a "
        "Raspberry Pi; lgpio is the recommended backend"),
    "mock": PinFactory(
        "gpiozero.pins.mock.MockFactory",
        "gpiozero's MockFactory should always load; check the gpiozero installation"),
}

# The panel drivers: each name is a class of `luma.oled.device`, all of them 128x64
# (SSD1306: 0.96" modules, SH1106: 1.3", SSD1309: 2.42").
PANEL_DRIVERS: tuple[str, ...] = ("ssd1306", "sh1106", "ssd1309")

BAUDRATES = (1200, 2400, 4800, 9600, 19200, 38400, 57600, 115200)
LANGUAGES = ("en", "ru")


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


def table_id_from_host(hostname: str) -> str:
    """The host's short name, kept to the allowed characters of a table id."""
    short = hostname.split(".", 1)[0]
    return re.sub(r"[^A-Za-z0-9_-]", "", short)[:TABLE_ID_LENGTH] or DEFAULT_TABLE_ID


# Host names that name no table: an image's default, which every card flashed from it and every
# clone of one card share (Raspberry Pi OS and its Imager, Ubuntu, Debian, DietPi), and ours.
STOCK_HOST_NAMES = frozenset({"raspberrypi", "ubuntu", "debian", "dietpi", "localhost",
                              DEFAULT_TABLE_ID})
SYSTEM_ROOT = Path("/")            # where the machine's files are read (tests: a made-up root)
SERIAL_FILES = ("sys/firmware/devicetree/base/serial-number", "proc/cpuinfo")
MACHINE_ID_FILE = "etc/machine-id"
MACHINE_DIGITS = 8                 # of a serial number or machine id, in a table id


def machine_serial(root: Path) -> str | None:
    """The board's serial number, lower-case (a Pi's: 16 hex digits, in its device tree and in
    /proc/cpuinfo's `Serial` line); None without one, or all zeros."""
    for name in SERIAL_FILES:
        try:
            text = (root / name).read_text(encoding="ascii", errors="replace")
        except OSError:
            continue
        if name.endswith("cpuinfo"):
            found = re.search(r"^Serial\s*:\s*(\S+)", text, re.MULTILINE)
            text = found.group(1) if found else ""
        serial = re.sub(r"[^a-z0-9]", "", text.lower())
        if len(serial) >= MACHINE_DIGITS and serial.strip("0"):
            return serial
    return None


def machine_id(root: Path) -> str | None:
    """systemd's machine id (32 hex digits, made at the first boot of an image); None without
    one. A card cloned after its first boot has its original's."""
    try:
        text = (root / MACHINE_ID_FILE).read_text(encoding="ascii").strip().lower()
    except (OSError, UnicodeDecodeError):
        return None
    return text if re.fullmatch(r"[0-9a-f]{32}", text) and text.strip("0") else None


def default_table_id(hostname: str, root: Path = SYSTEM_ROOT) -> str:
    """The table id when the device config sets none: the host's short name (SPEC §13.1), but
    for a stock host name, which every clone of one card shares: `pi-` and the last 8 digits of
    the Pi's serial number (e.g. `pi-1a2b3c4d`), elsewhere `host-` and the first 8 of the
    machine id; the host name only when the machine has neither."""
    from_host = table_id_from_host(hostname)
    if from_host.lower() not in STOCK_HOST_NAMES:
        return from_host
    serial = machine_serial(root)
    if serial is not None:
        return f"pi-{serial[-MACHINE_DIGITS:]}"
    identity = machine_id(root)
    if identity is not None:
        return f"host-{identity[:MACHINE_DIGITS]}"
    return from_host


def _default_table_id(read: Values) -> str:
    return default_table_id(socket.gethostname(), SYSTEM_ROOT)


# --- the table --------------------------------------------------------------------------------

@dataclass(frozen=True)
class Rule:
    """A default that follows from other keys (rules.py); `text` says how, for the docs."""

    text: str
    compute: Callable[[Values], Any]


@dataclass(frozen=True)
class Field:
    key: str                 # the key path: "time.delay", "displays.left.address"
    type: Converter
    default: Any             # a value, or a Rule
    doc: str                 # one line for the docs
    required: str = ""       # the problem when the key is absent ("" = optional)
    shown_default: str = ""  # the docs' default when the value is not the story ("the host name")

    @property
    def section(self) -> str:
        return self.key.rsplit(".", 1)[0]

    @property
    def name(self) -> str:
        return self.key.rsplit(".", 1)[1]

    def default_in(self, read: Values) -> Any:
        return self.default.compute(read) if isinstance(self.default, Rule) else self.default

    def default_text(self) -> str:
        """The default as the docs show it (markdown)."""
        if self.required:
            return "required"
        if self.shown_default:
            return self.shown_default
        if isinstance(self.default, Rule):
            return self.default.text
        if self.default is None or self.default == "":
            return "none"
        return f"`{self.type.written(self.default)}`"


def _discipline(read: Values) -> Any:
    return DISCIPLINES[read["match.discipline"]]



def _panel(side: str, address: int) -> list[Field]:
    key = f"displays.{side}"
    return [
        Field(f"{key}.driver", Choice(tuple(PANEL_DRIVERS)), "ssd1306",
              f"the {side} panel's controller (all 128×64)"),
        Field(f"{key}.port", Integer(0, 31), 1, "its I²C bus"),
        Field(f"{key}.address", Integer(0x03, 0x77, hex=True), address,
              "its I²C address; the panels need different ones on one bus"),
        Field(f"{key}.rotate", Choice((0, 2)), 0, "2 for a panel mounted upside down"),
        Field(f"{key}.contrast", Integer(0, 255), 255, "its brightness"),
    ]


FIELDS: tuple[Field, ...] = (
    # --- the match (SPEC §10) ---
    Field("match.discipline", Choice(tuple(DISCIPLINES)), "backgammon",
          "the discipline (SPEC §1): the defaults of the cube, the time and the breaks"),
    Field("match.length", Integer(1, MAX_POINTS, "points"), 0, "the match length",
          required=Problem("cfg.length_required", max=MAX_POINTS)),
    Field("match.crawford", Boolean(), True, "the Crawford rule (acts only with a cube)"),
    Field("match.start_score", StartScore(), Pair(Fraction(0), Fraction(0)),
          "the score when the match starts on this clock"),
    Field("match.crawford_played", Boolean(), False,
          "with a start score at length − 1: the Crawford game was played"),
    Field("match.cube", Boolean(), Rule("by discipline", lambda r: _discipline(r).cube),
          "a doubling cube"),
    Field("match.draw_points", Choice(("half", "one")), "half", "longgammon: what a draw scores"),
    Field("players.left", Name(), "Left", "the left player's name, on the panels"),
    Field("players.right", Name(), "Right", "the right player's name"),
    Field("time.mode", Choice(tuple(m.value for m in TimeMode)), "delay",
          "the time control (SPEC §2)"),
    Field("time.per_point", Duration(),
          Rule("by discipline", lambda r: _discipline(r).per_point_ns),
          "the reserve per point of the match length"),
    Field("time.delay", Duration(allow_zero=True),
          Rule("by discipline", lambda r: _discipline(r).delay_ns),
          "the delay, or the increment"),
    Field("time.reserve", Duration(), None, "each player's reserve; wins over per_point",
          shown_default="per_point × length"),
    Field("time.flag_rule", Choice(tuple(f.value for f in FlagRule)), "match_loss",
          "what a flag fall does"),
    Field("time.overtime", Duration(), DEFAULT_OVERTIME_NS,
          "added once per side on the first flag, with `overtime`"),
    Field("breaks.per_player", Integer(0, 10),
          Rule("by length (SPEC §5)",
               lambda r: break_allowance(_discipline(r), r["match.length"] or 1)),
          "breaks per player; an error in blitz disciplines"),
    Field("breaks.length", Duration(at_most_ns=MAX_BREAK_NS), MAX_BREAK_NS, "a break's length"),
    Field("event.round", FreeText(), "", "the round, for the export and the hall"),
    Field("event.name", FreeText(), "", "the event, for the export and the hall"),
    # --- the device (SPEC §13.1; hardware_docs/ has the reference build these describe) ---
    Field("buttons.hold_s", NumberNs(Decimal("0.5"), Decimal(5), NS_PER_S, "seconds"),
          DEFAULT_HOLD_NS, "a press this long is a hold"),
    Field("buttons.debounce_ms", NumberNs(Decimal(0), Decimal(50), NS_PER_MS, "milliseconds"),
          DEFAULT_DEBOUNCE_NS, "an edge this close to the last one is bounce"),
    Field("display.language", Choice(LANGUAGES), "en",
          "the language of the panels (SPEC §15; in the device or the match config)"),
    Field("hardware.pin_factory", Choice(tuple(PIN_FACTORIES)), "lgpio",
          "the gpiozero backend; `mock`: no GPIO, in-memory displays"),
    Field("pins.left", Integer(2, 27), 17, "the left button's GPIO (BCM number)"),
    Field("pins.right", Integer(2, 27), 27, "the right button's GPIO"),
    Field("pins.cube", Integer(2, 27), 22, "the cube button's GPIO"),
    Field("pins.buzzer", Integer(2, 27), 18, "the buzzer's GPIO; all four pins different"),
    Field("buzzer.enabled", Boolean(), False, "a tone at low time and at a flag"),
    Field("buzzer.low_time", Duration(), 30 * NS_PER_S,
          "the warning when the running reserve drops below it"),
    *_panel("left", 0x3C),
    *_panel("right", 0x3D),
    Field("dice.port", Port(), None, "the dice reader's port; none: no reader"),
    Field("dice.baudrate", Choice(BAUDRATES), 9600, "the dice reader's speed"),
    Field("journal.state_dir", FilePath("directory"), "/var/lib/gammonclock",
          "where the journals and the device key live"),
    Field("journal.checkpoint_s", NumberNs(Decimal("0.1"), Decimal(60), NS_PER_S, "seconds"),
          5 * NS_PER_S, "how often a running clock's reserves are journaled"),
    Field("table.id", Pattern(r"[A-Za-z0-9_-]{1,32}", "a table id",
                              "1–32 characters of A-Z a-z 0-9 _ -", said="table_id"),
          Rule("the host name", _default_table_id), "the table, in journal names and the hall",
          shown_default="the host name (a stock one: `pi-` and the serial)"),
    Field("table.event", FreeText(), "", "the event the table is at, on the idle panels"),
    Field("table.match_file", FilePath(), None,
          "the match loaded at boot when no match is unfinished (SPEC §13.2); none: idle"),
    Field("arbiter.pin", Pattern(r"[LRC]{4,8}", "a PIN",
                                 '4–8 button names of L, R, C, e.g. "LRCLR"', said="pin"), None,
          "opens the arbiter's menu at the panels (SPEC §13.4); none: the chord does nothing. "
          "Journals keep only its hash"),
    Field("arbiter.pin_hash", PinHash(), None,
          "the PIN as its salted hash, keyed by the device key (`python -m gammonclock.pin PIN "
          "--key STATE_DIR/device.key`), instead of `pin`"),
    Field("arbiter.chord_s", NumberNs(Decimal(1), Decimal(10), NS_PER_S, "seconds"),
          3 * NS_PER_S, "how long all three buttons are held to ask for the PIN"),
    Field("arbiter.socket_group", Pattern(r"[A-Za-z_][A-Za-z0-9_.-]{0,31}", "a group name",
                                          "1–32 characters of A-Z a-z 0-9 _ . -, "
                                          "a letter or _ first", said="group"), None,
          "the group allowed to use the arbiter's control socket"),
    Field("hall.broker", BrokerUrl(), None,
          "the hall's MQTT broker (SPEC §14); required in `[hall]`, no `[hall]`: no hall"),
    Field("hall.username", Pattern(r"[!-9;-~]{1,64}", "a user name",
                                   "1–64 printable ASCII characters, no space or :",
                                   said="user"),
          Rule("the table id", lambda r: r["table.id"]),
          "the table's account on the broker (the shipped ACL expects the table id)"),
    Field("hall.password_file", FilePath(), None, "the file holding that account's password"),
    Field("hall.ca_file", FilePath(), None,
          "the CA certificate that signs the broker's (only with `mqtts://`)"),
    Field("hall.prefix", Pattern(r"[A-Za-z0-9_-]+(/[A-Za-z0-9_-]+)*", "a topic prefix",
                                 "A-Z a-z 0-9 _ -, levels separated by /", said="prefix"),
          "gammonclock",
          "topics are PREFIX/TABLE/…"),
)

# The kind of each section, in the order the docs list them.
SECTIONS: dict[str, str] = {
    "match": MATCH, "players": MATCH, "time": MATCH, "breaks": MATCH, "event": MATCH,
    "buttons": DEVICE, "display": DEVICE, "hardware": DEVICE, "pins": DEVICE, "buzzer": DEVICE,
    "displays.left": DEVICE, "displays.right": DEVICE, "dice": DEVICE, "journal": DEVICE,
    "table": DEVICE, "arbiter": DEVICE, "hall": DEVICE,
}

# What a match file may hold (SPEC §13.1): the match's sections, and the panels' language
# (SPEC §15: in the device or the match config). Anything else of the device is refused in it.
MATCH_FILE_SECTIONS = tuple(s for s in SECTIONS if SECTIONS[s] == MATCH) + ("display",)


def kind_of_section(name: str) -> str | None:
    """MATCH or DEVICE for a top-level section name (`displays` holds device tables), None for
    one the config does not know."""
    if name in SECTIONS:
        return SECTIONS[name]
    return DEVICE if any(s.startswith(name + ".") for s in SECTIONS) else None


def _schema() -> dict[str, tuple[str, ...]]:
    schema: dict[str, list[str]] = {}
    for f in FIELDS:
        schema.setdefault(f.section, []).append(f.name)
    return {section: tuple(keys) for section, keys in schema.items()}


# Every key the file may hold, by table (dotted for nested tables). Anything else is an error.
SCHEMA: dict[str, tuple[str, ...]] = _schema()


def fields_of(kind: str) -> list[Field]:
    """The fields of the match (`MATCH`) or the device (`DEVICE`) settings, in the docs' order."""
    return [f for section in SECTIONS if SECTIONS[section] == kind
            for f in FIELDS if f.section == section]


# --- the docs ---------------------------------------------------------------------------------

def markdown(kind: str) -> str:
    """The docs' key table of `kind` (`match` or `device`)."""
    rows = ["| key | default | allowed | what it is |", "|---|---|---|---|"]
    rows += [f"| `{f.key}` | {f.default_text()} | {_cell(f.type.allowed)} | {_cell(f.doc)} |"
             for f in fields_of(kind)]
    return "\n".join(rows) + "\n"


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


_BLOCK = re.compile(r"(<!-- config-keys (\w+)\b[^>]*-->\n)(.*?)(<!-- end config-keys \2 -->)",
                    re.DOTALL)


def update_docs(text: str) -> str:
    """`text` with every marked key table regenerated from the table."""
    return _BLOCK.sub(lambda m: m.group(1) + markdown(m.group(2)) + m.group(4), text)


def marked_kinds(text: str) -> list[str]:
    """The kinds of the marked key tables in `text`."""
    return [m.group(2) for m in _BLOCK.finditer(text)]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m gammonclock.config.schema",
                                     description="The config's key tables for the docs.")
    what = parser.add_mutually_exclusive_group(required=True)
    what.add_argument("--markdown", choices=(MATCH, DEVICE), help="print the key table")
    what.add_argument("--update", nargs="+", metavar="FILE",
                      help="rewrite the marked key tables in FILE in place")
    args = parser.parse_args(argv)
    if args.markdown:
        sys.stdout.write(markdown(args.markdown))
        return 0
    for name in args.update:
        path = Path(name)
        text = path.read_text(encoding="utf-8")
        if not marked_kinds(text):
            print(f"{name}: no <!-- config-keys KIND --> table", file=sys.stderr)
            return 2
        path.write_text(update_docs(text), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())

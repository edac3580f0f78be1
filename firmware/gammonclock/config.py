"""The match config (SPEC §10): one TOML file per table, loaded into `MatchRules`.

Every problem in the file is reported at once, each naming the file, the key path and what is
allowed; a file with any problem configures nothing. TOML floats are read as `Decimal`, so a
duration such as `hold_s = 2.1` is exact to the nanosecond.
"""

from __future__ import annotations

import tomllib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction
from pathlib import Path
from typing import Any, TypeVar

from .durations import (
    DURATION_HINT,
    MAX_DIGITS,
    MAX_POINTS,
    NS_PER_MS,
    NS_PER_S,
    SHOWN_LENGTH,
    DurationError,
    DurationRangeError,
    decimal_to_ns,
    escaped,
    format_seconds,
    has_control_characters,
    is_small_decimal,
    parse_duration,
    shorten,
)
from .rules import (
    DEFAULT_DEBOUNCE_NS,
    DEFAULT_HOLD_NS,
    DEFAULT_OVERTIME_NS,
    DISCIPLINES,
    MAX_BREAK_NS,
    Family,
    MatchRules,
    break_allowance,
    initial_reserve_ns,
)
from .sides import Button, Pair
from .timecontrol import FlagRule, TimeControl, TimeMode

T = TypeVar("T")

PANEL_KEYS = ("driver", "port", "address", "rotate", "contrast")

# Every key the file may hold, by table (dotted for nested tables). Anything else is an error.
SCHEMA: dict[str, tuple[str, ...]] = {
    "match": ("discipline", "length", "crawford", "start_score", "crawford_played", "cube",
              "draw_points"),
    "players": ("left", "right"),
    "time": ("mode", "per_point", "delay", "reserve", "flag_rule", "overtime"),
    "breaks": ("per_player", "length"),
    "buttons": ("hold_s", "debounce_ms"),
    # The device (hardware_docs/ has the reference build these defaults describe).
    "hardware": ("pin_factory",),
    "pins": ("left", "right", "cube", "buzzer"),
    "buzzer": ("enabled", "low_time"),
    "displays.left": PANEL_KEYS,
    "displays.right": PANEL_KEYS,
    "dice": ("port", "baudrate"),
    "journal": ("state_dir", "checkpoint_s"),
}

MAX_NAME_LENGTH = 24


class ConfigError(ValueError):
    """A config file that cannot configure a match; `problems` lists every one found."""

    def __init__(self, path: str, problems: list[str]) -> None:
        self.path = path
        self.problems = problems
        # One line per problem, each naming the file and the key path: "file: key: what".
        super().__init__("\n".join(f"{path}: {p}" for p in problems))


@dataclass(frozen=True)
class PanelConfig:
    driver: str          # ssd1306 | sh1106 | ssd1309 (128x64)
    port: int            # I2C bus
    address: int         # I2C address
    rotate: int          # 0, or 2 for a panel mounted upside down (the screens are landscape)
    contrast: int        # 0..255


@dataclass(frozen=True)
class DeviceConfig:
    """The device around the engine; defaults describe the reference build (hardware_docs/)."""

    pin_factory: str                 # lgpio | rpigpio | mock, never a silent fallback
    button_pins: dict[Button, int]   # BCM numbers
    buzzer_pin: int
    buzzer_enabled: bool
    low_time_ns: int                 # the buzzer warns when the running reserve drops below
    panels: Pair[PanelConfig]        # the panel facing each player
    dice_port: str | None            # a device path or a pyserial URL; None: no reader
    dice_baudrate: int
    state_dir: str
    checkpoint_ns: int


DEFAULT_DEVICE = DeviceConfig(
    pin_factory="lgpio",
    button_pins={Button.LEFT: 17, Button.RIGHT: 27, Button.CUBE: 22}, buzzer_pin=18,
    buzzer_enabled=False, low_time_ns=30 * NS_PER_S,
    panels=Pair(PanelConfig("ssd1306", 1, 0x3C, 0, 255), PanelConfig("ssd1306", 1, 0x3D, 0, 255)),
    dice_port=None, dice_baudrate=9600,
    state_dir="/var/lib/gammonclock", checkpoint_ns=5 * NS_PER_S)

PIN_FACTORIES = ("lgpio", "rpigpio", "mock")
PANEL_DRIVERS = ("ssd1306", "sh1106", "ssd1309")
BAUDRATES = (1200, 2400, 4800, 9600, 19200, 38400, 57600, 115200)


@dataclass(frozen=True)
class Config:
    path: str
    rules: MatchRules
    device: DeviceConfig = DEFAULT_DEVICE
    text: str = ""          # the file as written: a journal's header keeps it


class _Missing:
    pass


MISSING = _Missing()


class _Reader:
    """Reads typed values by key path and collects every problem instead of stopping."""

    def __init__(self, data: dict[str, Any]) -> None:
        self.data = data
        self.problems: list[str] = []

    def problem(self, key: str, message: str) -> None:
        # The key as written may be any TOML string ("a\nb" = 1): one line, cut short.
        self.problems.append(f"{shorten(escaped(key), 2 * SHOWN_LENGTH)}: {message}")

    def check_keys(self, table: dict[str, Any] | None = None, prefix: str = "") -> None:
        table = self.data if table is None else table
        for name, value in table.items():
            path = prefix + name
            parents = {k.rsplit(".", 1)[0] for k in SCHEMA if "." in k}
            if path in SCHEMA or path in parents:
                if not isinstance(value, dict):
                    self.problem(path, f"must be a table ([{path}])")
                elif path in SCHEMA:
                    for key in value:
                        if key not in SCHEMA[path]:
                            self.problem(f"{path}.{key}", "unknown key; allowed in "
                                         f"[{path}]: {', '.join(SCHEMA[path])}")
                else:
                    self.check_keys(value, path + ".")
            else:
                siblings = sorted({k.split(".")[len(prefix.split(".")) - 1] for k in SCHEMA
                                   if k.startswith(prefix)})
                self.problem(path, f"unknown {'table' if prefix else 'section'}; "
                                   f"allowed: {', '.join(siblings)}")

    def raw(self, key: str) -> Any:
        value: Any = self.data
        for name in key.split("."):
            if not isinstance(value, dict) or name not in value:
                return MISSING
            value = value[name]
        return value

    def get(self, key: str, default: T, convert: Callable[[Any], T]) -> T:
        """The converted value at `key`, or `default` when absent or wrong (a problem noted)."""
        value = self.raw(key)
        if value is MISSING:
            return default
        try:
            return convert(value)
        except ValueError as exc:
            self.problem(key, str(exc))
            return default


def _shown(value: Any) -> str:
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
    if isinstance(value, int) and value.bit_length() > 4 * MAX_DIGITS:
        return "a number with too many digits"   # str() itself fails over 4 300 digits
    return shorten(str(value))


def _boolean(value: Any) -> bool:
    if not isinstance(value, bool):
        raise ValueError(f"{_shown(value)} is not true or false")
    return value


def _is_number(value: Any) -> bool:
    """An int or a finite TOML float (`inf` and `nan` are not numbers of anything here)."""
    if isinstance(value, Decimal):
        return value.is_finite()
    return isinstance(value, int) and not isinstance(value, bool)


def _integer(low: int, high: int) -> Callable[[Any], int]:
    def convert(value: Any) -> int:
        if not isinstance(value, int) or isinstance(value, bool):
            raise ValueError(f"{_shown(value)} is not a whole number; use {low}..{high}")
        if not low <= value <= high:
            raise ValueError(f"{_shown(value)} is out of range; use {low}..{high}")
        return value
    return convert


def _choice(options: Sequence[T]) -> Callable[[Any], T]:
    """One of `options` (strings or whole numbers), exactly as written."""
    def convert(value: Any) -> T:
        if type(value) not in {type(o) for o in options} or value not in options:
            raise ValueError(f"{_shown(value)} is not one of: {', '.join(map(str, options))}")
        return value  # type: ignore[no-any-return]
    return convert


def _name(value: Any) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"{_shown(value)} is not a name (a non-empty string)")
    if len(value) > MAX_NAME_LENGTH:
        raise ValueError(f"{_shown(value)} is longer than {MAX_NAME_LENGTH} characters")
    if has_control_characters(value):
        raise ValueError(f"{_shown(value)} holds a control character (NUL, newline, tab, "
                         "escape, …); a name is printable characters only")
    return value.strip()


def _duration(*, allow_zero: bool = False, at_most_ns: int | None = None) -> Callable[[Any], int]:
    """A number of seconds or a string like "2m30s"; above zero unless `allow_zero`."""
    def convert(value: Any) -> int:
        if _is_number(value):
            ns = decimal_to_ns(value, shown=_shown(value))
        elif isinstance(value, str):
            try:
                ns = parse_duration(value)
            except DurationRangeError as exc:   # well formed, but too long or too many digits
                raise ValueError(f"{_shown(value)} {exc.reason}") from None
            except DurationError:
                raise ValueError(f"{_shown(value)} is not a duration; {DURATION_HINT}") from None
        else:
            raise ValueError(f"{_shown(value)} is not a duration; {DURATION_HINT}")
        if ns < 0 or (ns == 0 and not allow_zero):
            raise ValueError(f"{_shown(value)} is out of range; use a duration "
                             + ("of 0 or more" if allow_zero else "above 0"))
        if at_most_ns is not None and ns > at_most_ns:
            raise ValueError(f"{_shown(value)} is too long; at most {format_seconds(at_most_ns)} s")
        return ns
    return convert


def _number_ns(low: Decimal, high: Decimal, scale_ns: int, unit: str) -> Callable[[Any], int]:
    def convert(value: Any) -> int:
        if not _is_number(value):
            raise ValueError(f"{_shown(value)} is not a number; use {low}..{high} ({unit})")
        if not low <= value <= high:
            raise ValueError(f"{_shown(value)} is out of range; use {low}..{high} ({unit})")
        return decimal_to_ns(value, scale_ns, shown=_shown(value))
    return convert


def _start_score(length: int, halves: bool) -> Callable[[Any], Pair[Fraction]]:
    """`length` 0 (missing or invalid): the upper bound is the longest match length."""
    def convert(value: Any) -> Pair[Fraction]:
        if not isinstance(value, list) or len(value) != 2 or not all(map(_is_number, value)):
            raise ValueError(f"{_shown(value)} is not a score; use [left, right], e.g. [0, 0]")
        # Bounds first, by comparison: `Fraction(Decimal("1e999999999"))` computes 10**999999999.
        for v in value:
            if v < 0 or v >= (length or MAX_POINTS):
                raise ValueError(f"{_shown(value)}: each score must be 0 or more and below the "
                                 + (f"match length {length}" if length
                                    else f"longest match length, {MAX_POINTS}"))
        if not all(is_small_decimal(Decimal(v)) for v in value):
            raise ValueError(f"{_shown(value)}: "
                             + ("scores are whole or half points" if halves
                                else "half points exist only in longgammon"))
        score = Pair(Fraction(value[0]), Fraction(value[1]))
        for v in score:
            if v.denominator != 1 and not (halves and v.denominator == 2):
                raise ValueError(f"{_shown(value)}: "
                                 + ("scores are whole or half points" if halves
                                    else "half points exist only in longgammon"))
        return score
    return convert


def parse_config(text: str, path: str = "<config>") -> Config:
    """The match config in `text`; `path` names it in errors. Raises ConfigError."""
    try:
        data = tomllib.loads(text, parse_float=Decimal)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(path, [f"not valid TOML: {exc}"]) from None
    except ValueError:   # tomllib lets int() refuse a number over 4 300 digits
        raise ConfigError(path, ["not valid TOML: a number with too many digits"]) from None
    except RecursionError:   # arrays or inline tables nested thousands deep
        raise ConfigError(path, ["not valid TOML: arrays or tables nested too deeply"]) from None
    r = _Reader(data)
    r.check_keys()

    discipline = DISCIPLINES[r.get("match.discipline", "backgammon", _choice(list(DISCIPLINES)))]
    length = 0
    if r.raw("match.length") is MISSING:
        r.problem("match.length", "required: the match length in points, 1..99")
    else:
        length = r.get("match.length", 0, _integer(1, 99))
    longgammon = discipline.family is Family.LONGGAMMON
    cube = r.get("match.cube", discipline.cube, _boolean)
    crawford = r.get("match.crawford", True, _boolean)
    zero = Pair(Fraction(0), Fraction(0))
    start_score = r.get("match.start_score", zero, _start_score(length, longgammon))
    crawford_played = r.get("match.crawford_played", False, _boolean)
    draw_points = r.get("match.draw_points", "half", _choice(["half", "one"]))

    names = Pair(r.get("players.left", "Left", _name), r.get("players.right", "Right", _name))

    mode = TimeMode(r.get("time.mode", "delay", _choice([m.value for m in TimeMode])))
    per_point = r.get("time.per_point", discipline.per_point_ns, _duration())
    delay = r.get("time.delay", discipline.delay_ns, _duration(allow_zero=True))
    reserve = r.get("time.reserve", None, _duration())
    flag_rule = FlagRule(r.get("time.flag_rule", "match_loss",
                               _choice([f.value for f in FlagRule])))
    overtime = r.get("time.overtime", DEFAULT_OVERTIME_NS, _duration())

    if r.raw("breaks.per_player") is not MISSING and discipline.blitz:
        r.problem("breaks.per_player", f"{discipline.name} has no breaks, ever; remove the key")
    breaks = r.get("breaks.per_player", break_allowance(discipline, length or 1),
                   _integer(0, 10))
    break_ns = r.get("breaks.length", MAX_BREAK_NS, _duration(at_most_ns=MAX_BREAK_NS))

    hold_ns = r.get("buttons.hold_s", DEFAULT_HOLD_NS,
                    _number_ns(Decimal("0.5"), Decimal(5), NS_PER_S, "seconds"))
    debounce_ns = r.get("buttons.debounce_ms", DEFAULT_DEBOUNCE_NS,
                        _number_ns(Decimal(0), Decimal(50), NS_PER_MS, "milliseconds"))

    device = _device(r)
    if r.problems:
        raise ConfigError(path, r.problems)
    return Config(path, text=text, device=device, rules=MatchRules(
        discipline=discipline, length=length, cube=cube, crawford=crawford,
        start_score=start_score, crawford_played=crawford_played,
        draw_points=Fraction(1, 2) if draw_points == "half" else Fraction(1),
        time=TimeControl(mode, delay, flag_rule, overtime),
        reserve_ns=reserve if reserve is not None else initial_reserve_ns(per_point, length,
                                                                          start_score),
        breaks_per_player=breaks, break_ns=break_ns, hold_ns=hold_ns, debounce_ns=debounce_ns,
        names=names))


def _text(value: Any) -> str:
    if not isinstance(value, str):
        raise ValueError(f"{_shown(value)} is not a string")
    return value


def _device(r: _Reader) -> DeviceConfig:
    d = DEFAULT_DEVICE
    pins = {b: r.get(f"pins.{b.value}", d.button_pins[b], _integer(2, 27)) for b in Button}
    buzzer_pin = r.get("pins.buzzer", d.buzzer_pin, _integer(2, 27))
    used: dict[int, str] = {}
    for name, pin in [*((b.value, p) for b, p in pins.items()), ("buzzer", buzzer_pin)]:
        if pin in used:
            r.problem(f"pins.{name}", f"GPIO {pin} is already pins.{used[pin]}")
        used.setdefault(pin, name)

    def panel(side: str, default: PanelConfig) -> PanelConfig:
        key = f"displays.{side}"
        return PanelConfig(r.get(f"{key}.driver", default.driver, _choice(list(PANEL_DRIVERS))),
                           r.get(f"{key}.port", default.port, _integer(0, 31)),
                           r.get(f"{key}.address", default.address, _integer(0x03, 0x77)),
                           r.get(f"{key}.rotate", default.rotate, _choice((0, 2))),
                           r.get(f"{key}.contrast", default.contrast, _integer(0, 255)))

    panels = Pair(panel("left", d.panels.left), panel("right", d.panels.right))
    if (panels.left.port, panels.left.address) == (panels.right.port, panels.right.address):
        r.problem("displays.right.address", f"both panels are at address "
                  f"{panels.left.address:#04x} on bus {panels.left.port}; give them different "
                  "addresses (hardware_docs/displays.md)")
    port = r.get("dice.port", "", _text).strip()
    return DeviceConfig(
        pin_factory=r.get("hardware.pin_factory", d.pin_factory, _choice(list(PIN_FACTORIES))),
        button_pins=pins, buzzer_pin=buzzer_pin,
        buzzer_enabled=r.get("buzzer.enabled", d.buzzer_enabled, _boolean),
        low_time_ns=r.get("buzzer.low_time", d.low_time_ns, _duration()),
        panels=panels, dice_port=port or None,
        dice_baudrate=r.get("dice.baudrate", d.dice_baudrate, _choice(BAUDRATES)),
        state_dir=r.get("journal.state_dir", d.state_dir, _path),
        checkpoint_ns=r.get("journal.checkpoint_s", d.checkpoint_ns,
                            _number_ns(Decimal("0.1"), Decimal(60), NS_PER_S, "seconds")))


def _path(value: Any) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"{_shown(value)} is not a directory path")
    return value


def load_config(path: str | Path) -> Config:
    """Read and check the config file at `path`. Raises ConfigError naming the file."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(str(path), [f"cannot read the file: {exc.strerror or exc}"]) from None
    except UnicodeDecodeError:
        raise ConfigError(str(path), ["not a UTF-8 text file"]) from None
    return parse_config(text, str(path))

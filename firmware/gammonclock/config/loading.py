"""The match config (SPEC §10, §13.1): one TOML file per table, loaded into `MatchRules` and
a `DeviceConfig`.

Every key is a field of the one table in `config_schema.py` (its type, default, range and doc);
here the fields are read in that table's order, then the checks across keys run. Every problem
in the file is reported at once, each naming the file, the key path and what is allowed; a file
with any problem configures nothing. TOML floats are read as `Decimal`, so a duration such as
`hold_s = 2.1` is exact to the nanosecond.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass, replace
from decimal import Decimal
from fractions import Fraction
from pathlib import Path
from typing import Any

from gammonclock.core.pin import PinCheck, RedactError, clear_pin, hash_pin, redact_pin
from gammonclock.core.rules import DISCIPLINES, MatchRules, initial_reserve_ns
from gammonclock.core.timecontrol import FlagRule, TimeControl, TimeMode
from gammonclock.durations import (
    MAX_DURATION_NS,
    MAX_DURATION_TEXT,
    SHOWN_LENGTH,
    duration_text,
    escaped,
    shorten,
)
from gammonclock.errors import GammonclockError
from gammonclock.sides import Button, Pair

from .converters import MAX_NAME_LENGTH, broker_is_tls
from .problems import Counted, Line, Problem, error_lines, message_of, toml_problem
from .schema import (
    BAUDRATES,
    DEVICE,
    FIELDS,
    MATCH,
    MATCH_FILE_SECTIONS,
    PANEL_DRIVERS,
    PIN_FACTORIES,
    SCHEMA,
    Field,
    fields_of,
    kind_of_section,
)

__all__ = ["BAUDRATES", "DEFAULT_DEVICE", "MAX_NAME_LENGTH", "PANEL_DRIVERS", "PIN_FACTORIES",
           "SCHEMA", "Config", "ConfigError", "DeviceConfig", "EventConfig", "HallConfig",
           "DeviceFile", "PanelConfig", "config_of_header", "device_part", "device_pin",
           "file_kind",
           "keyed_config",
           "load_config", "load_device_config", "load_match_config", "parse_config",
           "parse_device_config", "parse_match_config", "provision_problems", "provisioned",
           "refused_in_a_match_file", "with_provisioned"]


class ConfigError(GammonclockError, ValueError):
    """A config file that cannot configure a match; `problems` lists every one found."""

    def __init__(self, path: str, problems: list[str]) -> None:
        self.path = path
        self.problems = problems
        # One line per problem, each naming the file and the key path: "file: key: what".
        super().__init__("\n".join(f"{path}: {p}" for p in problems))

    def said(self, lang: str) -> str:
        """Every problem in `lang` (the file names, key paths and values as written)."""
        return error_lines(self.path, self.problems, lang)


@dataclass(frozen=True)
class PanelConfig:
    driver: str          # ssd1306 | sh1106 | ssd1309 (128x64)
    port: int            # I2C bus
    address: int         # I2C address
    rotate: int          # 0, or 2 for a panel mounted upside down (the screens are landscape)
    contrast: int        # 0..255


@dataclass(frozen=True)
class HallConfig:
    """The hall's MQTT broker (SPEC §14); a device without a `[hall]` section has none."""

    broker: str                  # mqtt://HOST[:PORT] or mqtts://HOST[:PORT]
    username: str | None
    password_file: str | None
    ca_file: str | None          # only with mqtts://
    prefix: str                  # topics are PREFIX/TABLE/...


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
    debounce_ns: int                 # the buttons' (the match's rules carry them too)
    hold_ns: int
    # SPEC §13.1 (read and checked; nothing uses them yet)
    table_id: str                    # 1-32 of A-Z a-z 0-9 _ -; default: the host name
    table_event: str                 # "" when not set
    match_file: str | None           # loaded at boot when no match is unfinished (SPEC §13.2)
    # SPEC §13.4: the PIN's hash (from `pin` or `pin_hash`; the clear PIN is kept nowhere);
    # None: the chord does nothing
    arbiter_pin: PinCheck | None
    arbiter_chord_ns: int
    arbiter_socket_group: str | None
    hall: HallConfig | None          # None: no [hall] section
    language: str                    # en | ru (SPEC §15)


@dataclass(frozen=True)
class EventConfig:
    """The match's `[event]` (SPEC §13.1): free text for the export and the hall."""

    round: str = ""
    name: str = ""


class _Missing:
    pass


MISSING = _Missing()


class _Reader:
    """Reads the fields of the table by key path and collects every problem instead of
    stopping."""

    def __init__(self, data: dict[str, Any]) -> None:
        self.data = data
        self.problems: list[str] = []

    def problem(self, key: str, message: str) -> None:
        # The key as written may be any TOML string ("a\nb" = 1): one line, cut short.
        self.problems.append(Line(shorten(escaped(key), 2 * SHOWN_LENGTH), message))

    def check_keys(self, table: dict[str, Any] | None = None, prefix: str = "") -> None:
        table = self.data if table is None else table
        for name, value in table.items():
            path = prefix + name
            parents = {k.rsplit(".", 1)[0] for k in SCHEMA if "." in k}
            if path in SCHEMA or path in parents:
                if not isinstance(value, dict):
                    self.problem(path, Problem("cfg.not_table", path=path))
                elif path in SCHEMA:
                    for key in value:
                        if key not in SCHEMA[path]:
                            self.problem(f"{path}.{key}", Problem(
                                "cfg.unknown_key", path=path, keys=", ".join(SCHEMA[path])))
                else:
                    self.check_keys(value, path + ".")
            else:
                siblings = sorted({k.split(".")[len(prefix.split(".")) - 1] for k in SCHEMA
                                   if k.startswith(prefix)})
                self.problem(path, Problem("cfg.unknown_table" if prefix
                                           else "cfg.unknown_section",
                                           names=", ".join(siblings)))

    def raw(self, key: str) -> Any:
        value: Any = self.data
        for name in key.split("."):
            if not isinstance(value, dict) or name not in value:
                return MISSING
            value = value[name]
        return value

    def read(self, fields: Sequence[Field]) -> dict[str, Any]:
        """Every field's value by key path: as converted, or its default when absent or wrong
        (a problem noted). A field's default and type may use the fields read before it."""
        values: dict[str, Any] = {}
        for f in fields:
            raw = self.raw(f.key)
            values[f.key] = f.default_in(values)
            if raw is MISSING:
                if f.required:
                    self.problem(f.key, f.required)
                continue
            try:
                values[f.key] = f.type.convert(raw, values)
            except ValueError as exc:
                self.problem(f.key, message_of(exc))
        return values


def _toml(text: str, path: str) -> dict[str, Any]:
    """The TOML document in `text`; ConfigError naming `path` when it is not one."""
    try:
        return tomllib.loads(text, parse_float=Decimal)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(path, [toml_problem(exc)]) from None
    except ValueError:   # tomllib lets int() refuse a number over 4 300 digits
        raise ConfigError(path, [Problem("cfg.toml_digits")]) from None
    except RecursionError:   # arrays or inline tables nested thousands deep
        raise ConfigError(path, [Problem("cfg.toml_nested")]) from None


def file_kind(text: str, path: str = "<config>") -> str:
    """What a config file holds by its sections: MATCH, DEVICE, or "both" (also for a file with
    no known section: it is checked as one file holding both). Raises ConfigError for a file
    that is not TOML."""
    kinds = {kind for name in _toml(text, path) if (kind := kind_of_section(name)) is not None}
    return kinds.pop() if len(kinds) == 1 else "both"


def refused_in_a_match_file(text: str, path: str = "<config>") -> list[str]:
    """The device sections of `text` that a match file may not hold (SPEC §13.1), in the file's
    order: a match file with any is refused by every route to a running clock. Raises
    ConfigError for a file that is not TOML."""
    return [name for name in _toml(text, path) if _refused_in_match_file(name)]


def _refused_in_match_file(name: str) -> bool:
    return kind_of_section(name) == DEVICE and name not in MATCH_FILE_SECTIONS


def parse_config(text: str, path: str = "<config>", *, header: bool = False) -> Config:
    """The config in `text`, one file holding the match and the device (either may be left to
    its defaults); `path` names it in errors. Raises ConfigError. `header`: the text comes from
    a journal's header, whose clear PIN (an old journal's) is not judged again."""
    return _config(_Reader(_toml(text, path)), path, text, judge_pin=not header)


def parse_match_config(text: str, path: str = "<match>", device: DeviceFile | None = None
                       ) -> Config:
    """A match file (SPEC §13.1) on the device `device` (None: the reference build): only the
    match's sections; a device section in it is an error naming it, and nothing changes. The
    device's `[buttons]` and `[display]` count, and `[display]` in the match file wins."""
    data = _toml(text, path)
    r = _Reader(_merged(device.data if device else {}, data))
    for name in data:
        if _refused_in_match_file(name):
            r.problem(name, Problem("cfg.device_section", sections=", ".join(
                f"[{s}]" for s in MATCH_FILE_SECTIONS)))
    return _config(r, path, text, device.text if device else None)


def parse_device_config(text: str, path: str = "<device>") -> DeviceFile:
    """A device config (SPEC §13.1): only the device's sections; a match section in it is an
    error naming it. Raises ConfigError."""
    data = _toml(text, path)
    r = _Reader(data)
    for name in data:
        if kind_of_section(name) == MATCH:
            r.problem(name, Problem("cfg.match_section"))
    return _device_file(r, path, text)


def device_part(text: str, path: str, *, header: bool = False) -> DeviceFile:
    """The device settings of a file that may hold a match too (`run --config` with one file;
    a journal's header, `header`): its match sections are set aside. Raises ConfigError."""
    data = _toml(text, path)
    return _device_file(_Reader({name: value for name, value in data.items()
                                 if kind_of_section(name) != MATCH}), path, text,
                        judge_pin=not header)


def _device_file(r: _Reader, path: str, text: str, judge_pin: bool = True) -> DeviceFile:
    r.check_keys()
    values = r.read(fields_of(DEVICE))
    _check_device(r, values, text if judge_pin else None)
    if r.problems:
        raise ConfigError(path, r.problems)
    return DeviceFile(path, text, _device(values), r.data)


def _merged(device: dict[str, Any], match: dict[str, Any]) -> dict[str, Any]:
    """The device's tables with the match file's laid over them (a key in both: the match's)."""
    merged = dict(device)
    for name, value in match.items():
        under = merged.get(name)
        merged[name] = ({**under, **value} if isinstance(under, dict) and isinstance(value, dict)
                        else value)
    return merged


def _config(r: _Reader, path: str, text: str, device_text: str | None = None,
            judge_pin: bool = True) -> Config:
    r.check_keys()
    values = r.read(FIELDS)
    # A match file's text holds no [arbiter]: the device file's was checked when it was read.
    _check_device(r, values, text if device_text is None and judge_pin else None)
    _check_match(r, values)
    if r.problems:
        raise ConfigError(path, r.problems)
    return Config(path, text=text, device=_device(values), rules=_rules(values),
                  event=EventConfig(values["event.round"], values["event.name"]),
                  device_text=device_text)


def _check_match(r: _Reader, v: dict[str, Any]) -> None:
    """The checks across the match's keys, after each key was read on its own."""
    discipline = DISCIPLINES[v["match.discipline"]]
    if r.raw("breaks.per_player") is not MISSING and discipline.blitz:
        r.problem("breaks.per_player", Problem("cfg.no_breaks", discipline=Problem(
            f"discipline.{discipline.name}")))
    _check_reserve(r, v)


def _check_device(r: _Reader, v: dict[str, Any], text: str | None = None) -> None:
    """The checks across the device's keys; `text`: the file as written (its clear PIN must be
    one the journals can be written without)."""
    if v["arbiter.pin"] is not None and v["arbiter.pin_hash"] is not None:
        r.problem("arbiter.pin_hash", Problem("cfg.pin_and_hash"))
        v["arbiter.pin_hash"] = None
    elif v["arbiter.pin"] is not None and text is not None:
        try:
            redact_pin(text)
        except RedactError as exc:
            r.problem("arbiter.pin", str(exc))
    used: dict[int, str] = {}
    for name in ("left", "right", "cube", "buzzer"):
        pin = v[f"pins.{name}"]
        if pin in used:
            r.problem(f"pins.{name}", Problem("cfg.gpio_taken", pin=pin, other=used[pin]))
        used.setdefault(pin, name)
    left, right = (_panel(v, side) for side in ("left", "right"))
    if (left.port, left.address) == (right.port, right.address):
        r.problem("displays.right.address", Problem("cfg.panels_same_address",
                                                    address=f"{left.address:#04x}",
                                                    port=left.port))
    if isinstance(r.raw("hall"), dict) and r.raw("hall.broker") is MISSING:
        r.problem("hall.broker", Problem("cfg.broker_required"))
    if (v["hall.ca_file"] is not None and v["hall.broker"] is not None
            and not broker_is_tls(v["hall.broker"])):
        r.problem("hall.ca_file", Problem("cfg.ca_only_mqtts"))


def _check_reserve(r: _Reader, v: dict[str, Any]) -> None:
    """A reserve computed from per_point has the bound of any duration: each key is bounded, but
    "1000h" × 99 points would be 99 000 h."""
    if v["time.reserve"] is not None:
        return                       # the reserve as written wins, and was bounded as it was read
    reserve = _reserve(v)
    if reserve > MAX_DURATION_NS:
        points = v["match.length"] - sum(v["match.start_score"]) / 2
        r.problem("time.per_point", Problem(
            "cfg.reserve_too_long", per_point=duration_text(v["time.per_point"]),
            points=Counted("points", Fraction(points)), reserve=duration_text(reserve),
            max=MAX_DURATION_TEXT))


def _reserve(v: dict[str, Any]) -> int:
    """Each player's reserve at the start: `time.reserve`, else per_point × the length left."""
    reserve: int | None = v["time.reserve"]
    if reserve is not None:
        return reserve
    return initial_reserve_ns(v["time.per_point"], v["match.length"], v["match.start_score"])


def _rules(v: dict[str, Any]) -> MatchRules:
    length: int = v["match.length"]
    start_score: Pair[Fraction] = v["match.start_score"]
    return MatchRules(
        discipline=DISCIPLINES[v["match.discipline"]], length=length, cube=v["match.cube"],
        crawford=v["match.crawford"], start_score=start_score,
        crawford_played=v["match.crawford_played"],
        draw_points=Fraction(1, 2) if v["match.draw_points"] == "half" else Fraction(1),
        time=TimeControl(TimeMode(v["time.mode"]), v["time.delay"],
                         FlagRule(v["time.flag_rule"]), v["time.overtime"]),
        reserve_ns=_reserve(v),
        breaks_per_player=v["breaks.per_player"], break_ns=v["breaks.length"],
        hold_ns=v["buttons.hold_s"], debounce_ns=v["buttons.debounce_ms"],
        names=Pair(v["players.left"], v["players.right"]),
        arbiter_pin=_pin_check(v), chord_ns=v["arbiter.chord_s"])


def _pin_check(v: dict[str, Any]) -> PinCheck | None:
    """The PIN's check: the hash given, or the clear PIN's (hashed once per process)."""
    if v["arbiter.pin"] is not None:
        return hash_pin(v["arbiter.pin"])
    check: PinCheck | None = v["arbiter.pin_hash"]
    return check


def _panel(v: dict[str, Any], side: str) -> PanelConfig:
    key = f"displays.{side}"
    return PanelConfig(v[f"{key}.driver"], v[f"{key}.port"], v[f"{key}.address"],
                       v[f"{key}.rotate"], v[f"{key}.contrast"])


def _device(v: dict[str, Any]) -> DeviceConfig:
    hall = None
    if v["hall.broker"] is not None:
        hall = HallConfig(v["hall.broker"], v["hall.username"], v["hall.password_file"],
                          v["hall.ca_file"], v["hall.prefix"])
    return DeviceConfig(
        pin_factory=v["hardware.pin_factory"],
        button_pins={b: v[f"pins.{b.value}"] for b in Button}, buzzer_pin=v["pins.buzzer"],
        buzzer_enabled=v["buzzer.enabled"], low_time_ns=v["buzzer.low_time"],
        panels=Pair(_panel(v, "left"), _panel(v, "right")),
        dice_port=v["dice.port"], dice_baudrate=v["dice.baudrate"],
        state_dir=v["journal.state_dir"], checkpoint_ns=v["journal.checkpoint_s"],
        debounce_ns=v["buttons.debounce_ms"], hold_ns=v["buttons.hold_s"],
        table_id=v["table.id"], table_event=v["table.event"], match_file=v["table.match_file"],
        arbiter_pin=_pin_check(v), arbiter_chord_ns=v["arbiter.chord_s"],
        arbiter_socket_group=v["arbiter.socket_group"], hall=hall,
        language=v["display.language"])


# The device of a file that sets none of its keys: the reference build (hardware_docs/).
DEFAULT_DEVICE = _device(_Reader({}).read(FIELDS))


@dataclass(frozen=True)
class DeviceFile:
    """A device config as read: its settings, its text (a journal's header keeps it) and its
    tables (a match file's are laid over them)."""

    path: str
    text: str
    device: DeviceConfig
    data: dict[str, Any]


@dataclass(frozen=True)
class Config:
    path: str
    rules: MatchRules
    device: DeviceConfig = DEFAULT_DEVICE
    text: str = ""          # the file as written: a journal's header keeps it
    event: EventConfig = EventConfig()
    device_text: str | None = None   # a match file's: the device config it was read on


def keyed_config(config: Config, pepper: bytes | None) -> Config:
    """`config` as the clock with the device key plays it (SPEC §13.4): a clear PIN hashed
    keyed with `pepper` (`pin.pepper_of` the device key; the very hash `header_text` with the
    same pepper writes into the journal), a keyed pin_hash given the pepper to judge entries, an
    unkeyed pin_hash as it is. No pepper: `config` as it is."""
    check = config.rules.arbiter_pin
    if pepper is None or check is None or check.legacy_pin is not None:
        return config
    text = config.device_text if config.device_text is not None else config.text
    pin = clear_pin(_toml(text, config.path)) if text else None
    keyed = hash_pin(pin, pepper) if pin is not None else check.with_key(pepper)
    if keyed is check:
        return config
    return replace(config, rules=replace(config.rules, arbiter_pin=keyed),
                   device=replace(config.device, arbiter_pin=keyed))


def device_pin(device: DeviceFile, pepper: bytes | None) -> PinCheck | None:
    """The device's own arbiter's PIN as its clock judges it (SPEC §13.4, §14.1): `[arbiter]
    pin` hashed keyed with `pepper` (the very hash a match started on this device holds), or
    `pin_hash` given the pepper; unkeyed without one. None: the device has no PIN."""
    check = device.device.arbiter_pin
    if check is None or pepper is None:
        return check
    pin = clear_pin(device.data)
    return hash_pin(pin, pepper) if pin is not None else check.with_key(pepper)


# Every journal's header says that a chord during a PIN lockout is undone (SPEC §13.4, issue
# 31); one written before says nothing: its chord's presses stood as presses, and its arbiter's
# menu had no "match moved" (both replay as they were played).
LOCKOUT_CHORD = "lockout_chord"
LOCKOUT_CHORD_UNDONE = "undone"


def config_of_header(header: dict[str, Any], name: str, pepper: bytes | None = None) -> Config:
    """The config a journal's header holds: one file, or a match file and its device config.
    Raises ConfigError naming `name` (the journal). `pepper` (`pin.pepper_of` the device key,
    on the clock that wrote the journal) lets a keyed PIN hash judge new entries; a replay
    without it judges the journaled digests all the same.

    A header written before the PIN was hashed (SPEC §13.4) holds `[arbiter] pin` in clear, and
    its journal the PIN's taps as button edges: its rules then carry that PIN
    (`PinCheck.legacy_pin`), so that it replays exactly as it was played. One written before a
    chord during a lockout was undone (no `lockout_chord`) replays its presses as presses
    (`PinCheck.locked_chord_stands`), on the menu it had then (`PinCheck.menu_without_moved`)."""
    device_text = header.get("device")
    if isinstance(device_text, str):
        device = device_part(device_text, Problem("cfg.in_header_device", name=name),
                             header=True)
        config = parse_match_config(header["config"], Problem("cfg.in_header", name=name),
                                    device)
        pin = clear_pin(device.data)
    else:
        config = parse_config(header["config"], Problem("cfg.in_header", name=name),
                              header=True)
        pin = clear_pin(_toml(header["config"], name))
    rules = config.rules
    if rules.arbiter_pin is not None and header.get(LOCKOUT_CHORD) != LOCKOUT_CHORD_UNDONE:
        rules = replace(rules, arbiter_pin=replace(rules.arbiter_pin, locked_chord_stands=True,
                                                   menu_without_moved=True))
        config = replace(config, rules=rules)
    if pin is not None and rules.arbiter_pin is not None:
        config = replace(config, rules=replace(
            rules, arbiter_pin=replace(rules.arbiter_pin, legacy_pin=pin)))
    elif rules.arbiter_pin is not None and pepper is not None:
        config = replace(config, rules=replace(
            rules, arbiter_pin=rules.arbiter_pin.with_key(pepper)))
    return config


def load_config(path: str | Path) -> Config:
    """Read and check the config file at `path`. Raises ConfigError naming the file."""
    return parse_config(read_config_text(path), str(path))


def read_config_text(path: str | Path) -> str:
    """The text of a config file; ConfigError naming it when it cannot be read."""
    try:
        return Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(str(path), [f"cannot read the file: {exc.strerror or exc}"]) from None
    except UnicodeDecodeError:
        raise ConfigError(str(path), ["not a UTF-8 text file"]) from None


def load_device_config(path: str | Path) -> DeviceFile:
    return parse_device_config(read_config_text(path), str(path))


def load_match_config(path: str | Path, device: DeviceFile | None = None) -> Config:
    return parse_match_config(read_config_text(path), str(path), device)


# --- a provisioned table (issue 32: `gammonclock hall provision`, runtime/provision.py) ----------

PROVISIONED = "provisioned"       # STATE/provisioned: a link to the folder the last stick gave
PROVISIONED_FILE = "device.toml"
# What a provisioning stick's device.toml may set (SPEC §14.1: the stick carries files, not
# authority): the table it is and the hall it joins, nothing of the hardware, the PIN or a path
# the clock would read. The password and the CA are file names next to it.
PROVISION_KEYS: dict[str, tuple[str, ...]] = {
    "table": ("id", "event"),
    "hall": ("broker", "username", "password_file", "ca_file", "prefix"),
}
PROVISION_NAME = r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}"   # a file next to device.toml, nothing else
# The names the provision folders use themselves (on the stick and in the state folder).
PROVISION_OWN_NAMES = frozenset({PROVISIONED_FILE, "device.key", "provision.json", "return-key",
                                 "returned.key", "returned.table"})


def provision_problems(data: dict[str, Any]) -> list[str]:
    """Why a provisioning device.toml's tables may not be taken: a section or key other than
    PROVISION_KEYS', a file name that is not a plain name in its own folder, or no table id or
    broker. Empty: its sections are the ones allowed (their values are checked as a device
    config's)."""
    problems: list[str] = []
    for name, value in data.items():
        keys = PROVISION_KEYS.get(name)
        if keys is None:
            problems.append(Line(shorten(escaped(name), SHOWN_LENGTH), Problem(
                "prov.section", sections="[table], [hall]")))
            continue
        if not isinstance(value, dict):
            problems.append(Line(name, Problem("cfg.not_table", path=name)))
            continue
        for key in value:
            if key not in keys:
                problems.append(Line(f"{name}.{shorten(escaped(key), SHOWN_LENGTH)}", Problem(
                    "prov.key", section=name, keys=", ".join(keys))))
    hall = data.get("hall")
    names = []
    for key in ("password_file", "ca_file"):
        value = hall.get(key) if isinstance(hall, dict) else None
        if value is not None and (not isinstance(value, str)
                                  or re.fullmatch(PROVISION_NAME, value) is None
                                  or value in PROVISION_OWN_NAMES or value in names):
            problems.append(Line(f"hall.{key}", Problem("prov.file_name",
                                                        value=shorten(escaped(str(value)),
                                                                      SHOWN_LENGTH))))
        names.append(value)
    table = data.get("table")
    if not isinstance(table, dict) or "id" not in table:
        problems.append(Line("table.id", Problem("prov.required")))
    if not isinstance(hall, dict) or "broker" not in hall:
        problems.append(Line("hall.broker", Problem("prov.required")))
    return problems


def provisioned(text: str, path: str, folder: Path) -> dict[str, Any]:
    """The `[table]` and `[hall]` of a provisioning device.toml (`text`, named `path`), their
    file names made paths in `folder` (where the file and its password and CA are). Raises
    ConfigError naming the file and the key for anything else, or a value a device config may
    not hold."""
    data = _toml(text, path)
    problems = provision_problems(data)
    if problems:
        raise ConfigError(path, problems)
    hall = dict(data["hall"])
    for key in ("password_file", "ca_file"):
        if key in hall:
            hall[key] = str(folder / hall[key])
    tables = {"table": dict(data["table"]), "hall": hall}
    r = _Reader(tables)
    values = r.read(fields_of(DEVICE))
    _check_device(r, values)
    if r.problems:
        raise ConfigError(path, r.problems)
    return tables


def with_provisioned(device: DeviceFile, state_dir: str | Path) -> DeviceFile:
    """`device` with the provisioned `[table]` and `[hall]` of STATE/provisioned laid over it
    (issue 32): the table's id and event over device.toml's `[table]` (its match_file stays),
    the hall whole in place of device.toml's `[hall]`. `device` itself when the clock was never
    provisioned. Raises ConfigError naming the file when the provisioned set cannot be read (the
    caller keeps `device`, and says so)."""
    folder = Path(state_dir) / PROVISIONED
    path = folder / PROVISIONED_FILE
    if not path.exists():
        return device
    tables = provisioned(read_config_text(path), str(path), folder.resolve())
    data = dict(device.data)
    data["table"] = {**(data.get("table") or {}), **tables["table"]}
    data["hall"] = tables["hall"]
    merged = _device_file(_Reader(data), device.path, device.text, judge_pin=False)
    # The PIN is device.toml's alone, judged when device.toml was read; its text is the journal
    # header's device text (a provisioned table's id is in the header's `table`).
    return replace(merged, device=replace(merged.device, arbiter_pin=device.device.arbiter_pin))

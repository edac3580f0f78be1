"""A match config read back in words (SPEC §13.1): what an arbiter reads to the players before
the clock starts, so that a wrong length, time control or name is caught at the table.

    discipline   backgammon, a match to 7 points, Crawford rule
    start        0-0
    time         14:00 each, + 12 s delay (simple); a flag loses the match
    breaks       1 per player, 5:00 each
    players      left: Anna, right: Boris
"""

from __future__ import annotations

from . import match
from .config import (
    Config,
    DeviceConfig,
    DeviceFile,
    file_kind,
    parse_config,
    parse_device_config,
    parse_match_config,
    read_config_text,
)
from .config_schema import DEVICE, MATCH
from .durations import NS_PER_S, format_seconds
from .rules import SPRINT_BREAK_AFTER_NS, Family, format_points, format_score
from .timecontrol import FlagRule, TimeMode


def minutes_seconds(ns: int) -> str:
    """A span as a clock shows it, hours when there are some: 14:00, 1:40:00, 0:30.5."""
    whole, rest = divmod(ns, NS_PER_S)
    hours, left = divmod(whole, 3600)
    minutes, seconds = divmod(left, 60)
    text = f"{hours}:{minutes:02d}:{seconds:02d}" if hours else f"{minutes}:{seconds:02d}"
    return text + (format_seconds(rest)[1:] if rest else "")


def readback(config: Config) -> list[tuple[str, str]]:
    """(label, words) lines of the match a config sets up."""
    rules = config.rules
    d = rules.discipline
    cube = ("no cube" if not rules.cube
            else "Crawford rule" if rules.crawford else "no Crawford rule")
    lines = [("discipline", f"{d.name}, a match to {rules.length} point"
                            f"{'s' if rules.length != 1 else ''}, {cube}")]
    start, first = rules.start_score, match.start(rules)   # the engine's own decision
    crawford = (", game 1 is the Crawford game" if first.crawford_game
                else ", Crawford game already played" if first.crawford_done
                and rules.crawford_active else "")
    lines.append(("start", f"{format_score(start.left)}-{format_score(start.right)}{crawford}"))
    lines.append(("time", _time_words(config)))
    lines.append(("breaks", _break_words(config)))
    if d.family is Family.LONGGAMMON:
        lines.append(("draws", f"{format_points(rules.draw_points)} each"))
    lines.append(("players", f"left: {rules.names.left}, right: {rules.names.right}"))
    if config.event.name or config.event.round:
        lines.append(("event", ", ".join(p for p in (config.event.name, config.event.round) if p)))
    return lines


def _time_words(config: Config) -> str:
    rules, tc = config.rules, config.rules.time
    delay = f"{format_seconds(tc.delay_ns)} s"
    extra = {TimeMode.DELAY: f" + {delay} delay (simple)",
             TimeMode.BRONSTEIN: f" + {delay} delay (Bronstein)",
             TimeMode.FISCHER: f" + {delay} a move (Fischer)",
             TimeMode.NONE: ", no delay"}[tc.mode]
    if tc.mode is not TimeMode.NONE and tc.delay_ns == 0:
        extra = ", no delay"
    flag = ("a flag loses the match" if tc.flag_rule is FlagRule.MATCH_LOSS
            else f"a first flag gives {minutes_seconds(tc.overtime_ns)} once, a second loses")
    return f"{minutes_seconds(rules.reserve_ns)} each{extra}; {flag}"


def _break_words(config: Config) -> str:
    rules = config.rules
    if rules.breaks_per_player == 0:
        return "none"
    length = minutes_seconds(rules.break_ns)
    if rules.discipline.shared_break:
        return (f"{rules.breaks_per_player} in the whole match, shared, {length}, from "
                f"{minutes_seconds(SPRINT_BREAK_AFTER_NS)}")
    return f"{rules.breaks_per_player} per player, {length} each"


def readback_text(config: Config) -> str:
    return _lines_text(readback(config))


def device_readback(device: DeviceConfig) -> list[tuple[str, str]]:
    """(label, words) lines of a device config: what a director checks on a table's Pi."""
    pins = device.button_pins
    lines = [("table", device.table_id + (f", {device.table_event}" if device.table_event
                                          else "")),
             ("match file", device.match_file or "none: the clock waits for a match (idle)"),
             ("buttons", ", ".join(f"{b.value} GPIO {pin}" for b, pin in pins.items())),
             ("panels", "; ".join(f"{side} {p.driver} on bus {p.port} at {p.address:#04x}"
                                  for side, p in zip(("left", "right"), device.panels,
                                                     strict=True))),
             ("dice reader", device.dice_port or "none"),
             ("journals", device.state_dir),
             ("arbiter", (f"socket group {device.arbiter_socket_group}"
                          if device.arbiter_socket_group else "socket: the service's group")
              + (", panel PIN set" if device.arbiter_pin else ", no panel PIN")),
             ("hall", device.hall.broker if device.hall else "none")]
    return lines


def _lines_text(lines: list[tuple[str, str]]) -> str:
    width = max(len(label) for label, _ in lines)
    return "\n".join(f"{label:<{width}}  {words}" for label, words in lines)


def check_file(path: str, device: DeviceFile | None) -> tuple[str, DeviceFile | None]:
    """`gammonclock check-config` for one file: its read-back, and the device config that the
    files after it are read on (after a device file, every file is checked as a match file).
    Raises ConfigError with every problem."""
    text = read_config_text(path)
    kind = file_kind(text, path)
    if kind == DEVICE and device is None:
        checked = parse_device_config(text, path)
        return _lines_text(device_readback(checked.device)), checked
    if kind == MATCH or device is not None:
        # After a device config every file is a match file: a device section in one is the
        # error the clock would give when loading it.
        config = parse_match_config(text, path, device)
        return readback_text(config), device
    return readback_text(parse_config(text, path)), device

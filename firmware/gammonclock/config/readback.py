"""A match config read back in words (SPEC §13.1): what an arbiter reads to the players before
the clock starts, so that a wrong length, time control or name is caught at the table.

    discipline   backgammon, a match to 7 points, Crawford rule
    start        0-0
    time         14:00 each, + 12 s delay (simple); a flag loses the match
    breaks       1 per player, 5:00 each
    players      left: Anna, right: Boris
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from functools import partial

from gammonclock import words
from gammonclock.core import match
from gammonclock.core.rules import SPRINT_BREAK_AFTER_NS, Family
from gammonclock.core.timecontrol import FlagRule, TimeMode
from gammonclock.durations import NS_PER_S, format_seconds

from .loading import (
    Config,
    ConfigError,
    DeviceConfig,
    DeviceFile,
    file_kind,
    parse_config,
    parse_device_config,
    parse_match_config,
    read_config_text,
    refused_in_a_match_file,
)
from .problems import language_in
from .schema import DEVICE, MATCH, MATCH_FILE_SECTIONS, kind_of_section


def minutes_seconds(ns: int) -> str:
    """A span as a clock shows it, hours when there are some: 14:00, 1:40:00, 0:30.5."""
    whole, rest = divmod(ns, NS_PER_S)
    hours, left = divmod(whole, 3600)
    minutes, seconds = divmod(left, 60)
    text = f"{hours}:{minutes:02d}:{seconds:02d}" if hours else f"{minutes}:{seconds:02d}"
    return text + (format_seconds(rest)[1:] if rest else "")


def readback(config: Config, lang: str | None = None) -> list[tuple[str, str]]:
    """(label, words) lines of the match a config sets up, in `lang` (None: the match's
    `[display] language`, SPEC §15)."""
    lang = words.language(lang or config.device.language)
    say = partial(words.say, lang=lang)
    rules = config.rules
    d = rules.discipline
    cube = say("rb.no_cube" if not rules.cube
               else "rb.crawford" if rules.crawford else "rb.no_crawford")
    lines = [(say("rb.discipline"),
              say("rb.discipline_line", discipline=words.word_or_self("discipline", d.name, lang),
                  length=words.match_length(rules.length, lang), cube=cube))]
    start, first = rules.start_score, match.start(rules)   # the engine's own decision
    crawford = (say("rb.crawford_first") if first.crawford_game
                else say("rb.crawford_done") if first.crawford_done
                and rules.crawford_active else "")
    lines.append((say("rb.start"), f"{words.number(start.left, lang)}-"
                                   f"{words.number(start.right, lang)}{crawford}"))
    lines.append((say("rb.time"), _time_words(config, lang)))
    lines.append((say("rb.breaks"), _break_words(config, lang)))
    if d.family is Family.LONGGAMMON:
        lines.append((say("rb.draws"), say("rb.draws_each", points=words.counted(
            "points", rules.draw_points, lang))))
    lines.append((say("rb.players"), say("rb.players_line", left=rules.names.left,
                                         right=rules.names.right)))
    if config.event.name or config.event.round:
        lines.append((say("rb.event"),
                      ", ".join(p for p in (config.event.name, config.event.round) if p)))
    return lines


def _time_words(config: Config, lang: str = words.DEFAULT) -> str:
    rules, tc = config.rules, config.rules.time
    say = partial(words.say, lang=lang)
    delay = words.seconds(format_seconds(tc.delay_ns), lang)
    extra = {TimeMode.DELAY: say("rb.delay", delay=delay),
             TimeMode.BRONSTEIN: say("rb.bronstein", delay=delay),
             TimeMode.FISCHER: say("rb.fischer", delay=delay),
             TimeMode.NONE: say("rb.no_delay")}[tc.mode]
    if tc.mode is not TimeMode.NONE and tc.delay_ns == 0:
        extra = say("rb.no_delay")
    flag = (say("rb.flag_loses") if tc.flag_rule is FlagRule.MATCH_LOSS
            else say("rb.flag_overtime", time=words.number(minutes_seconds(tc.overtime_ns),
                                                            lang)))
    return say("rb.each", time=words.number(minutes_seconds(rules.reserve_ns), lang),
               extra=extra, flag=flag)


def _break_words(config: Config, lang: str = words.DEFAULT) -> str:
    rules = config.rules
    say = partial(words.say, lang=lang)
    if rules.breaks_per_player == 0:
        return say("rb.breaks_none")
    length = words.number(minutes_seconds(rules.break_ns), lang)
    if rules.discipline.shared_break:
        return say("rb.breaks_shared", n=rules.breaks_per_player, length=length,
                   after=minutes_seconds(SPRINT_BREAK_AFTER_NS))
    return say("rb.breaks_each", n=rules.breaks_per_player, length=length)


def readback_text(config: Config, lang: str | None = None) -> str:
    """The read-back as `check-config` prints it, in `lang` (None: the match's language)."""
    return _lines_text(readback(config, lang))


def device_readback(device: DeviceConfig, lang: str | None = None) -> list[tuple[str, str]]:
    """(label, words) lines of a device config: what a director checks on a table's Pi, in
    `lang` (None: the device's `[display] language`)."""
    lang = words.language(lang or device.language)
    say = partial(words.say, lang=lang)
    pins = device.button_pins
    lines = [(say("dev.table"), device.table_id + (f", {device.table_event}"
                                                   if device.table_event else "")),
             (say("dev.match_file"), device.match_file or say("dev.no_match_file")),
             (say("dev.buttons"), ", ".join(
                 say("dev.button", button=words.word_or_self("button", b.value, lang), pin=pin)
                 for b, pin in pins.items())),
             (say("dev.panels"), "; ".join(
                 say("dev.panel", side=words.side(side, lang), driver=p.driver, port=p.port,
                     address=f"{p.address:#04x}")
                 for side, p in zip(("left", "right"), device.panels, strict=True))),
             (say("dev.dice_reader"), device.dice_port or say("dev.none")),
             (say("dev.journals"), device.state_dir),
             (say("dev.arbiter"), (say("dev.socket_group", group=device.arbiter_socket_group)
                                   if device.arbiter_socket_group
                                   else say("dev.socket_service"))
              + say("dev.pin_set" if device.arbiter_pin else "dev.no_pin")),
             (say("dev.hall"), device.hall.broker if device.hall else say("dev.none"))]
    return lines


def _lines_text(lines: list[tuple[str, str]]) -> str:
    width = max(len(label) for label, _ in lines)
    return "\n".join(f"{label:<{width}}  {words}" for label, words in lines)


# What `check-config --as KIND` checks a file as (SPEC §13.1). Without `--as`, the file's
# sections decide, and the verdict says which it was judged to be.
AS_MATCH, AS_DEVICE, AS_COMBINED = "match", "device", "combined"
KINDS = (AS_MATCH, AS_DEVICE, AS_COMBINED)


@dataclass(frozen=True)
class Checked:
    """One file checked: what it was checked as, the verdict's words, its read-back, and the
    device config the files after it are read on."""

    kind: str
    verdict: str
    notes: list[str]
    words: str
    device: DeviceFile | None


def judged_kind(text: str, path: str, device: DeviceFile | None) -> str:
    """What a file is checked as without `--as`: after a device config, a match file (read on
    that device, as the clock reads it); else by its sections: only device sections, a device
    config; no device section a match file may not hold, a match file; both, a combined file
    (also a file with no known section). Raises ConfigError for a file that is not TOML."""
    if device is not None:
        return AS_MATCH
    kind = file_kind(text, path)
    if kind == DEVICE:
        return AS_DEVICE
    if kind == MATCH or (_has_match_section(text, path)
                         and not refused_in_a_match_file(text, path)):
        return AS_MATCH                      # a match file with its own [display]
    return AS_COMBINED


def _has_match_section(text: str, path: str) -> bool:
    return any(kind_of_section(name) == MATCH for name in tomllib.loads(text))


def check_file(path: str, device: DeviceFile | None, as_kind: str | None = None,
               lang: str | None = None) -> Checked:
    """`gammonclock check-config` for one file, checked as `as_kind` (None: as its sections
    say, `judged_kind`), said in `lang` (None: the file's own `[display] language`, else its
    device's: `check_language`). A match file is read on `device` (the device config given
    before it) when it was judged so, on the reference build when asked `--as match`. Raises
    ConfigError with every problem: for a match file, the very errors the clock gives when
    loading it (`ConfigError.said` says them in the language)."""
    text = read_config_text(path)
    lang = lang or check_language(text, device)
    say = partial(words.say, lang=lang)
    kind = as_kind or judged_kind(text, path, device)
    why = "" if as_kind else say("cc.judged")
    if kind == AS_DEVICE:
        checked = parse_device_config(text, path)
        return Checked(kind, say("cc.good_device", why=why), [],
                       _lines_text(device_readback(checked.device, lang)), checked)
    if kind == AS_MATCH:
        # A device section in it is the error the clock would give when loading it.
        config = parse_match_config(text, path, None if as_kind else device)
        return Checked(kind, say("cc.good_match", why=why), [], readback_text(config, lang),
                       device)
    config = parse_config(text, path)
    notes = []
    refused = refused_in_a_match_file(text, path)
    if refused:
        sections = ", ".join(f"[{name}]" for name in refused)
        allowed = ", ".join(f"[{name}]" for name in MATCH_FILE_SECTIONS)
        notes = [say("cc.refused_as_match", sections=sections, allowed=allowed, path=path,
                     are=say("cc.is_device_section" if len(refused) == 1
                             else "cc.are_device_sections"))]
    return Checked(kind, say("cc.good_combined", why=why), notes, readback_text(config, lang),
                   device)


def check_language(text: str, device: DeviceFile | None) -> str:
    """The language `check-config` says a file in: its own `[display] language` as far as it
    can be read (a file with problems too), else the device's it is read on, else English."""
    own = language_in(text)
    if own is not None:
        return own
    return words.language(device.device.language if device is not None else None)


def file_language(path: str, device: DeviceFile | None) -> str:
    """`check_language` of the file at `path` (English for a file that cannot be read)."""
    try:
        text = read_config_text(path)
    except ConfigError:
        return words.language(device.device.language if device is not None else None)
    return check_language(text, device)

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
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction
from pathlib import Path
from typing import Any

from gammonclock.core.rules import (
    CHORD_NS_RANGE,
    DEFAULT_DEBOUNCE_NS,
    DEFAULT_HOLD_NS,
    DEFAULT_OVERTIME_NS,
    DISCIPLINES,
    MAX_BREAK_NS,
    break_allowance,
)
from gammonclock.core.timecontrol import FlagRule, TimeMode
from gammonclock.durations import (
    MAX_POINTS,
    NS_PER_MS,
    NS_PER_S,
)
from gammonclock.sides import Pair

from . import table_id
from .converters import (
    Boolean,
    BrokerUrl,
    Choice,
    Converter,
    Duration,
    FilePath,
    FreeText,
    Integer,
    Name,
    NumberNs,
    Pattern,
    PinHash,
    Port,
    StartScore,
    Values,
)
from .problems import Problem
from .table_id import default_table_id

MATCH, DEVICE = "match", "device"   # SPEC §13.1: the two kinds of settings



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


def _default_table_id(read: Values) -> str:
    return default_table_id(socket.gethostname(), table_id.SYSTEM_ROOT)


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
    Field("arbiter.chord_s", NumberNs(Decimal(CHORD_NS_RANGE[0] // NS_PER_S),
                                      Decimal(CHORD_NS_RANGE[1] // NS_PER_S), NS_PER_S,
                                      "seconds"),
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

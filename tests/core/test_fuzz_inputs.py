"""Fuzzing the parsers of text from outside (issue 7): config, script, arbiter words, dice lines.

No input may raise anything but the parser's own error (no traceback), freeze the process
(huge exponents, digits, nesting) or get past the bounds: what parses is within them, and every
message is one short line. The inputs mix plain garbage with near-misses of the real grammar,
where the interesting values (1e999999999, 4 400 digits, control characters) hide.
"""

from __future__ import annotations

from datetime import timedelta

import pytest
from hypothesis import HealthCheck, event, given
from hypothesis import strategies as st

from gammonclock.config.loading import SCHEMA, ConfigError, parse_config
from gammonclock.core.arbiter import (
    USAGE,
    AddTime,
    Adjust,
    ArbiterSyntaxError,
    Command,
    Deduct,
    Forfeit,
    SetCube,
    SetScore,
    Warn,
    parse_command,
)
from gammonclock.core.dice import DiceSyntaxError, parse_line, parse_words
from gammonclock.core.engine import ButtonEdge, Engine
from gammonclock.core.rules import MatchRules
from gammonclock.durations import (
    MAX_CUBE,
    MAX_DURATION_NS,
    MAX_POINTS,
    MAX_TEXT_LENGTH,
    has_control_characters,
)
from gammonclock.sides import Button
from gammonclock.sim.script import ACTIONS, ScriptError, parse_script
from property_helpers import property_settings

MS = 1_000_000
MAX_MESSAGE = 400
HOLD_NS = 2_000_000_000

# Deterministic by default; GAMMONCLOCK_PROPERTY_EXAMPLES=5000 explores (property_helpers.py).
FUZZ = property_settings(200, deadline=timedelta(seconds=2),
                         suppress_health_check=[HealthCheck.too_slow])


def short_lines(message: str) -> None:
    for line in message.split("\n"):
        assert len(line) < MAX_MESSAGE, line[:200]


# --- the pieces inputs are made of ----------------------------------------------------------

HUGE = st.integers(min_value=30, max_value=5000).map(lambda n: "9" * n)
EXPONENT = st.builds("{}e{}".format, st.sampled_from(["1", "0", "2.5", "-1"]),
                     st.sampled_from(["999999999", "-999999999", "5000", "30", "-30", "1"]))
NUMBER = st.one_of(
    st.integers(min_value=-10, max_value=10 ** 20).map(str),
    st.decimals(allow_nan=False, allow_infinity=False, places=3).map(str),
    st.sampled_from(["0", "0.5", "99", "100", "4096", "8192", "3600000", "3600000.5", ".5",
                     "1.", "inf", "nan", "-0", "+3", "٣", "²", "1_000"]),
    EXPONENT, HUGE,
)
UNIT = st.sampled_from(["", "s", "ms", "m", "h", "x"])
DURATION = st.one_of(st.builds("{}{}".format, NUMBER, UNIT),
                     st.builds("{}{}{}".format, st.sampled_from(["+", "-", "", "++"]), NUMBER,
                               UNIT),
                     st.sampled_from(["999h999h", "1000h", "1000h1ms", "2m30s", "0s"]))
CONTROL = st.sampled_from(["\x00", "\n", "\r", "\t", "\x1b[2J", "\x7f", "\x85", "\u202e",
                           "\u200b", "\ufeff"])
TEXT = st.one_of(st.text(max_size=20), st.builds("{}{}{}".format, st.text(max_size=5), CONTROL,
                                                  st.text(max_size=5)),
                 st.integers(min_value=190, max_value=400).map(lambda n: "x" * n))
WORD = st.one_of(NUMBER, DURATION, TEXT.filter(lambda t: t.split() == [t]),
                 st.sampled_from(["left", "right", "cube", "middle", "upheld", "rejected",
                                  "L", "R", "ROLL", "VOID", "1", "6", "7"]),
                 st.integers(min_value=0, max_value=13000).map(lambda n: str(2 ** n)))


# --- arbiter words ---------------------------------------------------------------------------

SIDE = st.sampled_from(["left", "right", "LEFT", "Right", "left", "right", "middle"])
SIGN = st.sampled_from(["", "", "", "+", "-"])
SMALL_DURATION = st.builds("{}{}{}".format, SIGN, st.one_of(
    st.integers(min_value=0, max_value=4000).map(str),
    st.decimals(min_value=0, max_value=4000, places=9).map(str),
    st.sampled_from(["0.000000001", "0.0000000001", "3600000", "3600000.000000001", "999",
                     "1000"])), st.sampled_from(["", "s", "ms", "m", "h"]))
POINTS = st.one_of(st.integers(min_value=0, max_value=MAX_POINTS + 2).map(str),
                   st.integers(min_value=0, max_value=2 * MAX_POINTS + 2).map(lambda n: str(n / 2)),
                   NUMBER)
PRINTABLE = st.characters(categories=["L", "M", "N", "P", "S"])
TEXT_WORD = st.one_of(st.text(PRINTABLE, min_size=1, max_size=12).filter(
                          lambda t: t.split() == [t]),
                      TEXT.filter(lambda t: t.split() == [t]),
                      st.builds("{}{}{}".format, st.text("ab", max_size=3), CONTROL,
                                st.text("cd", max_size=3)),
                      st.integers(min_value=1, max_value=MAX_TEXT_LENGTH + 5).map(
                          lambda n: "x" * n))
# Words near each command's grammar, so that the bounds of what parses are reached: without them
# nearly every drawn list fails on its first argument and only pause, resume and undo parse.
NEARLY_VALID_WORDS = st.one_of(
    st.tuples(st.just("score"), POINTS, POINTS),
    st.builds(lambda n, owner: ["cube", str(2 ** n), *owner],
              st.integers(min_value=0, max_value=14),
              st.sampled_from([[], ["left"], ["right"], ["middle"]])),
    *(st.tuples(st.just(name), SIDE, st.one_of(SMALL_DURATION, SMALL_DURATION, DURATION))
      for name in ("add", "deduct", "adjust")),
    st.builds(lambda side, points: ["forfeit", side, *points], SIDE,
              st.one_of(st.just([]), st.lists(POINTS, min_size=1, max_size=1))),
    st.builds(lambda side, words: ["warn", side, *words], SIDE,
              st.lists(TEXT_WORD, min_size=1, max_size=4)),
).map(list)
ARBITER_WORDS = st.one_of(
    st.lists(st.text(max_size=12), max_size=5),
    st.builds(lambda name, args: [name, *args], st.sampled_from(list(USAGE)),
              st.lists(WORD, max_size=4)),
    NEARLY_VALID_WORDS,
)
# The types the nearly valid words must reach, and one example of each shape.
SHAPES = [
    (["score", "3", "2.5"], SetScore), (["cube", "4096", "left"], SetCube),
    (["cube", "1"], SetCube), (["add", "right", "30s"], AddTime),
    (["deduct", "Left", "0.000000001"], Deduct), (["adjust", "left", "-1.5m"], Adjust),
    (["adjust", "right", "+1000h"], Adjust), (["forfeit", "left", "99"], Forfeit),
    (["forfeit", "right"], Forfeit), (["warn", "left", "slow", "play"], Warn),
]


@FUZZ
@given(ARBITER_WORDS)
def test_arbiter_words_parse_within_the_bounds_or_fail_clearly(words):
    try:
        command = parse_command(words)
    except ArbiterSyntaxError as exc:
        event("ArbiterSyntaxError")
        short_lines(str(exc))
        assert "\n" not in str(exc)
        return
    event(type(command).__name__)
    if isinstance(command, Adjust):
        assert abs(command.delta_ns) <= MAX_DURATION_NS
    if isinstance(command, (Deduct, AddTime)):
        assert 0 < command.amount_ns <= MAX_DURATION_NS
    if isinstance(command, SetScore):
        assert 0 <= command.left <= MAX_POINTS and 0 <= command.right <= MAX_POINTS
    if isinstance(command, SetCube):
        assert 1 <= command.value <= MAX_CUBE
    if isinstance(command, Forfeit) and command.points is not None:
        assert 1 <= command.points <= MAX_POINTS
    if isinstance(command, Warn):
        assert len(command.text) <= MAX_TEXT_LENGTH and not has_control_characters(command.text)
    assert parse_command(command.describe().split()) == command   # the log's words parse back


@pytest.mark.parametrize("words, kind", SHAPES, ids=[" ".join(w) for w, _ in SHAPES])
def test_each_nearly_valid_shape_can_parse_to_its_command(words, kind):
    assert type(parse_command(words)) is kind


def test_the_nearly_valid_words_reach_every_bounded_command():
    """The fuzz above checks the bounds of a command only if some drawn words parse to it."""
    reached: set[type[Command]] = set()

    @FUZZ
    @given(NEARLY_VALID_WORDS)
    def draw(words: list[str]) -> None:
        try:
            reached.add(type(parse_command(words)))
        except ArbiterSyntaxError:
            pass

    draw()
    assert {kind for _, kind in SHAPES} <= reached, reached


# --- dice lines ------------------------------------------------------------------------------

DICE_LINES = st.one_of(
    st.text(max_size=30), st.binary(max_size=30),
    st.builds(" ".join, st.lists(st.one_of(WORD, st.sampled_from(["ROLL", "roll", "L", "r"])),
                                 max_size=5)),
)


@FUZZ
@given(DICE_LINES)
def test_a_dice_line_parses_or_is_garbage(line):
    try:
        message = parse_line(line)
    except DiceSyntaxError as exc:
        short_lines(str(exc))
        return
    assert parse_line(message.to_line()) == message


@FUZZ
@given(st.lists(st.one_of(WORD, st.text(max_size=8)), max_size=5))
def test_dice_words_parse_or_are_garbage(words):
    try:
        parse_words(words)
    except DiceSyntaxError as exc:
        short_lines(str(exc))


# --- scripts ---------------------------------------------------------------------------------

PLAUSIBLE_TIME = st.sampled_from(["+0", "+0.01", "+0.03", "+0.1", "+1", "+2.5"])
TIME = st.one_of(PLAUSIBLE_TIME, PLAUSIBLE_TIME, st.builds("+{}".format, NUMBER), NUMBER)
PLAUSIBLE_LINE = st.builds("{} {}".format, PLAUSIBLE_TIME, st.sampled_from([
    "tap left", "tap right", "tap cube", "hold left", "hold right 0.02", "down left", "up left",
    "down right", "up right", "roll 3 1", "void", "arbiter pause", "arbiter resume",
    "arbiter add left 30s", "arbiter score 3 2", "arbiter cube 4096 left", "end"]))
LINE = st.one_of(
    PLAUSIBLE_LINE, PLAUSIBLE_LINE, PLAUSIBLE_LINE,
    st.text(max_size=30),
    st.builds(lambda t, action, args: " ".join([t, action, *args]), TIME,
              st.sampled_from([*ACTIONS, "frob"]), st.lists(WORD, max_size=3)),
    st.builds(lambda t, args: " ".join([t, "arbiter", *args]), TIME, ARBITER_WORDS.filter(
        lambda words: all(w.split() == [w] for w in words))),
    st.builds(lambda t, edge, button: f"{t} {edge} {button}", TIME, st.sampled_from(["down", "up"]),
              st.sampled_from(["left", "right", "cube"])),
)


# Presses and releases a few milliseconds apart: bounces the engine ignores, around the debounce.
EDGE_LINE = st.builds("{} {} {}".format,
                      st.sampled_from(["+0", "+0.001", "+0.01", "+0.02", "+0.029", "+0.03",
                                       "+0.049", "+0.05", "+0.1"]),
                      st.sampled_from(["down", "up", "down", "up", "tap", "hold"]),
                      st.sampled_from(["left", "left", "right", "cube"]))


@FUZZ
@given(st.one_of(st.lists(LINE, max_size=8), st.lists(EDGE_LINE, max_size=8)).map("\n".join),
       st.sampled_from([0, 1, 30 * MS, 50 * MS]))
def test_a_script_parses_within_the_bounds_or_names_its_line(text, debounce_ns):
    try:
        script = parse_script(text, HOLD_NS, "fuzz.script", debounce_ns=debounce_ns)
    except ScriptError as exc:
        short_lines(str(exc))
        # One line per bad line of the script, each naming the file and the line.
        lines = str(exc).split("\n")
        assert len(lines) == len(exc.problems)
        assert all(line.startswith("fuzz.script:") for line in lines)
        return
    assert 0 <= script.end <= MAX_DURATION_NS
    assert all(0 <= i.t <= script.end for i in script.inputs)
    # The edges through an engine with that debounce: a release the script made that the engine
    # lost as a bounce (the button left down) is one parse_script named, line and all.
    edges = [i for i in script.inputs if isinstance(i, ButtonEdge)]
    engine = Engine.start(MatchRules.defaults(hold_ns=HOLD_NS, debounce_ns=debounce_ns))
    for edge in edges:
        engine, _ = engine.feed(edge)
    released = {edge.button: not edge.pressed for edge in edges}
    event("edges" if edges else "no edges")
    left_down = [b for b in Button if released.get(b) and engine.button(b).down]
    named = " ".join(script.bounces)
    for button in left_down:
        assert f"the release of {button} " in named, (button, text, script.bounces)
    assert all(note.startswith("fuzz.script:") for note in script.bounces)


# --- config files ----------------------------------------------------------------------------

def _toml_string(text: str) -> str:
    """A TOML basic string holding `text` (control characters escaped as TOML allows)."""
    out = []
    for c in text:
        if c in '"\\':
            out.append("\\" + c)
        elif ord(c) < 0x20 or ord(c) == 0x7F:
            out.append(f"\\u{ord(c):04x}")
        else:
            out.append(c)
    return '"' + "".join(out) + '"'


SCALAR = st.one_of(
    NUMBER.filter(lambda n: n not in ("٣", "²", ".5", "1.", "+3", "-0", "1_000")),
    st.builds("0x{}".format, st.integers(min_value=1, max_value=6000).map(lambda n: "f" * n)),
    DURATION.map(_toml_string), TEXT.map(_toml_string), st.sampled_from(["true", "false"]),
    st.sampled_from(["inf", "-inf", "nan", "1e5000", "1e999999999", "1e-999999999"]),
)
VALUE = st.recursive(SCALAR, lambda inner: st.lists(inner, max_size=3).map(
    lambda items: "[" + ", ".join(items) + "]"), max_leaves=6)
# Values each key takes, so that some drawn files pass and the bounds of what passes are checked.
DURATIONS = ['"2m"', "90", "12", '"1000h"', "3600000", '"999h59m59.999999999s"', '"5m"']
FITTING = {"discipline": ['"backgammon"', '"longgammon"'], "crawford": ["true"],
           "start_score": ["[0, 0]", "[6, 5]", "[98, 0]"], "cube": ["true"],
           "crawford_played": ["false"], "draw_points": ['"one"'],
           "left": ['"Anna"', '"A' + "n" * 23 + '"', "17"], "right": ['"Boris"', "27"],
           "mode": ['"fischer"'], "per_point": DURATIONS, "delay": DURATIONS,
           "reserve": DURATIONS, "flag_rule": ['"overtime"'], "overtime": DURATIONS,
           "per_player": ["2"], "length": DURATIONS, "hold_s": ["2.0", "5"],
           "debounce_ms": ["0", "12.5"], "low_time": DURATIONS, "enabled": ["true"]}


def value_for(key: str) -> st.SearchStrategy[str]:
    return st.one_of(st.sampled_from(FITTING.get(key, ["1"])), VALUE)


TABLES = ["match", *(t for t in SCHEMA if t != "match")]
MATCH_KEYS = [k for k in SCHEMA["match"] if k != "length"]


@st.composite
def config_texts(draw: st.DrawFn) -> str:
    """A config near the schema: every table and key real, the values anything."""
    length = draw(st.sampled_from(["7", "7", "7", "1", "99", "0", "1e999999999",
                                   "0x" + "f" * 5000]))
    lines = ["[match]", f"length = {length}"]
    lines += [f"{key} = {draw(value_for(key))}"
              for key in draw(st.lists(st.sampled_from(MATCH_KEYS), max_size=3,
                                       unique=True))]
    for table in draw(st.lists(st.sampled_from(TABLES[1:]), max_size=4, unique=True)):
        lines.append(f"[{table}]")
        lines += [f"{key} = {draw(value_for(key))}"
                  for key in draw(st.lists(st.sampled_from(SCHEMA[table]), max_size=3,
                                           unique=True))]
    if draw(st.booleans()):
        lines.append(draw(st.sampled_from(["xyz = 1", '"a\\nb" = 1', "[[match]]",
                                           "left = " + "[" * 3000 + "]" * 3000,
                                           "reserve = " + "9" * 4400])))
    return "\n".join(lines) + "\n"


@FUZZ
@given(st.one_of(config_texts(), st.text(max_size=60)))
def test_a_config_parses_within_the_bounds_or_names_every_problem(text):
    try:
        config = parse_config(text, "fuzz.toml")
    except ConfigError as exc:
        assert exc.problems
        assert all(line.startswith("fuzz.toml: ") for line in str(exc).split("\n"))
        short_lines(str(exc))
        return
    rules = config.rules
    for ns in (rules.time.delay_ns, rules.time.overtime_ns, rules.break_ns,
               config.device.low_time_ns):
        assert 0 <= ns <= MAX_DURATION_NS
    assert 0 < rules.reserve_ns <= MAX_DURATION_NS                # per_point × length too
    assert not any(has_control_characters(name) for name in rules.names)

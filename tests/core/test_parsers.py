"""The small parsers: arbiter command words (SPEC §7), dice-reader lines (SPEC §8) and exact
durations (SPEC §2, §10: integer nanoseconds, never binary floats)."""

from __future__ import annotations

from decimal import Decimal
from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gammonclock.core.arbiter import (
    AddTime,
    Adjust,
    ArbiterSyntaxError,
    Challenge,
    Deduct,
    Disqualify,
    Forfeit,
    Pause,
    PointPenalty,
    Resume,
    SetCube,
    SetScore,
    Undo,
    Warn,
    parse_command,
)
from gammonclock.core.dice import DiceSyntaxError, Roll, Void, parse_line, parse_words
from gammonclock.durations import (
    NS_PER_MS,
    DurationError,
    decimal_to_ns,
    format_clock,
    format_seconds,
    parse_duration,
    parse_signed_duration,
    seconds_to_ns,
)
from gammonclock.sides import Side

S = 1_000_000_000
MIN = 60 * S
L, R = Side.LEFT, Side.RIGHT


def ids(rows) -> list[str]:
    return [row[0] if isinstance(row[0], str) else " ".join(row[0]) or "<empty>" for row in rows]


# --- arbiter commands (SPEC §7, fine point 11) ----------------------------------------------

COMMANDS = [
    # (words, command)
    ("pause", Pause()),
    ("resume", Resume()),
    ("undo", Undo()),
    ("adjust left +30s", Adjust(L, 30 * S)),
    ("adjust right -1m", Adjust(R, -MIN)),
    ("adjust left 45", Adjust(L, 45 * S)),            # no sign adds; bare number is seconds
    ("adjust left 45s", Adjust(L, 45 * S)),
    ("adjust right -0.5", Adjust(R, -S // 2)),
    ("adjust left +2m30s", Adjust(L, 150 * S)),
    ("adjust left 0", Adjust(L, 0)),
    ("deduct left 10m", Deduct(L, 10 * MIN)),
    ("deduct right 30", Deduct(R, 30 * S)),
    ("deduct left 31.9s", Deduct(L, 31_900_000_000)),
    ("add right 1m", AddTime(R, MIN)),
    ("add left 1500ms", AddTime(L, 1_500_000_000)),
    ("point right", PointPenalty(R)),
    ("forfeit left", Forfeit(L, None)),                 # default: the cube value
    ("forfeit right 3", Forfeit(R, 3)),
    ("disqualify right", Disqualify(R)),
    ("warn left slow play", Warn(L, "slow play")),
    ("warn right x", Warn(R, "x")),
    ("challenge left upheld", Challenge(L, True)),
    ("challenge right rejected", Challenge(R, False)),
    ("score 3 2", SetScore(Fraction(3), Fraction(2))),
    ("score 0 0", SetScore(Fraction(0), Fraction(0))),
    ("score 2.5 0", SetScore(Fraction(5, 2), Fraction(0))),   # halves: longgammon draws
    ("cube 1", SetCube(1, None)),
    ("cube 2 left", SetCube(2, L)),
    ("cube 4", SetCube(4, None)),                              # owner left to the engine
    ("cube 128 right", SetCube(128, R)),                       # no upper limit (§4)
]


@pytest.mark.parametrize("text, command", COMMANDS, ids=ids(COMMANDS))
def test_an_arbiter_command(text, command):
    assert parse_command(text.split()) == command


@pytest.mark.parametrize("text, command", COMMANDS, ids=ids(COMMANDS))
def test_a_command_as_logged_parses_back_to_itself(text, command):
    # Every action is logged with its arguments (§7): the log's words are the command again.
    assert parse_command(command.describe().split()) == command


BAD_COMMANDS = [
    # (words, fragment of the message)
    ("", "no command"),
    ("frob", "unknown arbiter command"),
    ("pause now", "usage: pause"),
    ("undo 2", "usage: undo"),
    ("adjust left", "usage: adjust SIDE"),
    ("adjust middle 30s", "side"),
    ("adjust left 30x", "duration"),
    ("adjust left ++30s", "duration"),
    ("adjust left +-30s", "duration"),
    ("adjust left 30s 10s", "usage: adjust SIDE"),
    ("adjust left 0.0000000001", "nanosecond"),
    ("deduct left", "usage: deduct SIDE DURATION"),
    ("deduct left 0", "above zero"),
    ("deduct left 0s", "above zero"),
    ("deduct left -30s", "duration"),
    ("deduct left +30s", "duration"),
    ("deduct left 30s extra", "usage: deduct"),
    ("deduct 30s left", "side"),
    ("add left 0", "above zero"),
    ("add right -1m", "duration"),
    ("point", "usage: point SIDE"),
    ("point left 1", "usage: point SIDE"),
    ("point both", "side"),
    ("forfeit", "usage: forfeit"),
    ("forfeit left 0", "points"),
    ("forfeit left -1", "points"),
    ("forfeit left 1.5", "points"),
    ("forfeit left two", "points"),
    ("forfeit left ²", "points"),                  # str.isdigit says yes, int() says no
    ("forfeit left 1 2", "usage: forfeit"),
    ("disqualify", "usage: disqualify SIDE"),
    ("warn left", "usage: warn SIDE TEXT"),
    ("warn", "usage: warn"),
    ("challenge left", "usage: challenge"),
    ("challenge left maybe", "upheld or rejected"),
    ("challenge nobody upheld", "side"),
    ("score 1", "usage: score"),
    ("score 1 2 3", "usage: score"),
    ("score -1 0", "not negative"),
    ("score 0.25 0", "half points"),
    ("score x 0", "not a score"),
    ("score inf 0", "not a score"),
    ("score nan 0", "not a score"),
    ("score ٣ 0", "not a score"),
    ("cube", "usage: cube"),
    ("cube 0", "cube value"),
    ("cube 3", "cube value"),
    ("cube 6 left", "cube value"),
    ("cube -2", "cube value"),
    ("cube two", "cube value"),
    ("cube ²", "cube value"),
    ("cube ٤", "cube value"),
    ("cube 1 left", "no owner"),                    # fine point 11: value 1 has no owner
    ("cube 2 middle", "side"),
    ("cube 2 left right", "usage: cube"),
]


@pytest.mark.parametrize("text, fragment", BAD_COMMANDS, ids=ids(BAD_COMMANDS))
def test_a_bad_arbiter_command(text, fragment):
    with pytest.raises(ArbiterSyntaxError) as info:
        parse_command(text.split())
    assert fragment in str(info.value)


# --- dice-reader lines (SPEC §8) ------------------------------------------------------------

DICE_LINES = [
    # (line, message)
    ("ROLL 3 1", Roll((3, 1))),
    ("ROLL 6 6", Roll((6, 6))),
    ("ROLL 1 2", Roll((1, 2))),
    ("ROLL 4", Roll((4,))),                        # one die of the opening roll
    ("ROLL L 2 5", Roll((2, 5), L)),
    ("ROLL R 1 1", Roll((1, 1), R)),
    ("VOID", Void()),
    ("ROLL 3 1\n", Roll((3, 1))),
    ("ROLL 3 1\r\n", Roll((3, 1))),
    ("VOID\r\n", Void()),
    (b"ROLL 5 2\n", Roll((5, 2))),
    (b"ROLL R 6 4\r\n", Roll((6, 4), R)),
    (b"VOID\n", Void()),
]


@pytest.mark.parametrize("line, message", DICE_LINES, ids=[repr(row[0]) for row in DICE_LINES])
def test_a_dice_line(line, message):
    assert parse_line(line) == message


GARBAGE = [
    "", "\n", "\r\n", "   ",
    "ROLL", "ROLL 7 1", "ROLL 0 1", "ROLL 3 9", "ROLL -1 3", "ROLL 3.0 1", "ROLL 33",
    "ROLL 3 1 2", "ROLL L 3", "ROLL L", "ROLL R 3 1 2", "ROLL X 3 1", "ROLL L R 3 1",
    "ROLL 3 1 L", "ROLL 3 x", "ROLL３ 1", "ROLL ３ 1", "ROLL ½ 1", "ROLL 3 1\x00",
    "ROLLL 3 1", "ROLL3 1", "3 1", "VOID 3", "VOIDED", "VOID VOID", "HELLO", "ERR 42",
    b"\xff\xfe", b"ROLL \xb3 1\n", b"\x00\x00\x00",
]


@pytest.mark.parametrize("line", GARBAGE, ids=[repr(g) for g in GARBAGE])
def test_garbage_on_the_dice_line(line):
    with pytest.raises(DiceSyntaxError):
        parse_line(line)


@pytest.mark.parametrize("words, message", [
    (["ROLL", "R", "3", "1"], Roll((3, 1), R)),
    (["ROLL", "2"], Roll((2,))),
    (["VOID"], Void()),
], ids=["roll-R", "roll-one", "void"])
def test_dice_words(words, message):
    assert parse_words(words) == message


@pytest.mark.parametrize("words", [[], ["ROLL"], ["ROLL", "L", "1"], ["VOID", "1"]],
                         ids=["empty", "roll-alone", "side-one-die", "void-extra"])
def test_bad_dice_words(words):
    with pytest.raises(DiceSyntaxError):
        parse_words(words)


# --- durations ------------------------------------------------------------------------------

DURATIONS = [
    # (text, nanoseconds)
    ("12s", 12 * S),
    ("2m30s", 150 * S),
    ("2.5m", 150 * S),
    ("1500ms", 1_500_000_000),
    ("1h", 3600 * S),
    ("1h30m", 5400 * S),
    ("0.5s", S // 2),
    (".5s", S // 2),
    ("31.9s", 31_900_000_000),
    ("0.1s", 100_000_000),
    ("0.000000001s", 1),
    ("0.001ms", 1000),
    ("1m0.5s", 60_500_000_000),
    ("0s", 0),
    ("30s2m", 150 * S),                                          # groups add up
    ("3599999.999999999s", 3_599_999_999_999_999),       # exact just below the 1 000 h bound
]


@pytest.mark.parametrize("text, ns", DURATIONS, ids=[row[0] for row in DURATIONS])
def test_parse_duration(text, ns):
    assert parse_duration(text) == ns


BAD_DURATIONS = [
    "12",            # a string without a unit (fine point 15)
    "", "s", "ms", "12x", "12 s", "2m 30s", "-12s", "+12s", "12S", "1.5.5s", "m30", "12s30",
    "1e3s", "inf", "nan", "0.0000000001s", "0.0000001ms", "٣s", "１２s", "1,5s",
]


@pytest.mark.parametrize("text", BAD_DURATIONS, ids=[repr(t) for t in BAD_DURATIONS])
def test_bad_duration(text):
    with pytest.raises(DurationError):
        parse_duration(text)


@pytest.mark.parametrize("text, ns", [
    ("12", 12 * S), ("12.5", 12_500_000_000), ("0.1", 100_000_000), ("12s", 12 * S),
    ("2m30s", 150 * S),
], ids=["12", "12.5", "0.1", "12s", "2m30s"])
def test_parse_duration_with_bare_seconds(text, ns):
    assert parse_duration(text, bare_seconds=True) == ns


@pytest.mark.parametrize("text", ["-12", "+12", "", "12x", "0.0000000001"],
                         ids=["minus", "plus", "empty", "unit", "sub-ns"])
def test_bad_duration_with_bare_seconds(text):
    with pytest.raises(DurationError):
        parse_duration(text, bare_seconds=True)


SIGNED = [
    ("+30s", 30 * S), ("-1m", -MIN), ("45s", 45 * S), ("45", 45 * S), ("-0.5", -S // 2),
    ("+2m30s", 150 * S), ("-31.9", -31_900_000_000), ("+0", 0), ("-0s", 0),
]


@pytest.mark.parametrize("text, ns", SIGNED, ids=[row[0] for row in SIGNED])
def test_parse_signed_duration(text, ns):
    assert parse_signed_duration(text) == ns


@pytest.mark.parametrize("text", ["--1m", "+-1m", "-+1m", "-", "+", "", "1x", "-0.0000000001"],
                         ids=["--", "+-", "-+", "minus", "plus", "empty", "unit", "sub-ns"])
def test_bad_signed_duration(text):
    with pytest.raises(DurationError):
        parse_signed_duration(text)


SECONDS = [
    ("12", 12 * S), ("12.5", 12_500_000_000), ("+3", 3 * S), ("-0.25", -250_000_000),
    ("0.1", 100_000_000), ("31.9", 31_900_000_000), (".5", S // 2), ("12.", 12 * S),
    ("0", 0), ("0.000000001", 1), ("86400", 86400 * S),
]


@pytest.mark.parametrize("text, ns", SECONDS, ids=[row[0] for row in SECONDS])
def test_seconds_to_ns(text, ns):
    assert seconds_to_ns(text) == ns


@pytest.mark.parametrize("text", ["", "1e3", "12s", "abc", "1.2.3", "0.0000000001", "٣", "nan",
                                  "inf", "1_000", " 12", "+-1", "."],
                         ids=repr)
def test_bad_seconds(text):
    with pytest.raises(DurationError):
        seconds_to_ns(text)


@pytest.mark.parametrize("value, scale, ns", [
    (Decimal("2.1"), S, 2_100_000_000),
    (Decimal("12.5"), NS_PER_MS, 12_500_000),
    (7, S, 7 * S),
    (Decimal("31.9"), S, 31_900_000_000),
], ids=["2.1s", "12.5ms", "int", "31.9s"])
def test_decimal_to_ns(value, scale, ns):
    assert decimal_to_ns(value, scale) == ns


@pytest.mark.parametrize("value", [Decimal("inf"), Decimal("-inf"), Decimal("nan"),
                                   Decimal("1E-10")], ids=["inf", "-inf", "nan", "sub-ns"])
def test_decimal_to_ns_refuses(value):
    with pytest.raises(DurationError):
        decimal_to_ns(value)


@given(st.integers(min_value=-10**15, max_value=10**15))
def test_format_seconds_parses_back_exactly(ns):
    assert seconds_to_ns(format_seconds(ns)) == ns
    assert parse_signed_duration(format_seconds(ns) + "s") == ns


CLOCK_FACES = [
    (0, "0:00.0"),
    (1, "0:00.0"),
    (99_999_999, "0:00.0"),              # tenths rounded down
    (100_000_000, "0:00.1"),
    (59_990_000_000, "0:59.9"),
    (61_050_000_000, "1:01.0"),
    (14 * MIN, "14:00.0"),
    (839 * S + 500_000_000, "13:59.5"),
    (3600 * S, "1:00:00.0"),
    (3725 * S + 500_000_000, "1:02:05.5"),
    (-1_500_000_000, "-0:01.5"),
]


@pytest.mark.parametrize("ns, face", CLOCK_FACES, ids=[f for _, f in CLOCK_FACES])
def test_format_clock(ns, face):
    assert format_clock(ns) == face


SECONDS_TEXT = [
    (0, "0"), (12 * S, "12"), (12_500_000_000, "12.5"), (1, "0.000000001"),
    (1_050_000_000, "1.05"), (-1_500_000_000, "-1.5"), (31_900_000_000, "31.9"),
]


@pytest.mark.parametrize("ns, text", SECONDS_TEXT, ids=[t for _, t in SECONDS_TEXT])
def test_format_seconds(ns, text):
    assert format_seconds(ns) == text

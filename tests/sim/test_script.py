"""The simulation script format (SPEC §9, fine point 13): times, actions, ordering, `end`, errors.

Inputs are compared as plain tuples, `(seconds, what, …)`, with the seconds written as decimal
strings so that the expected instants are exact nanoseconds, not binary floats.
"""

from __future__ import annotations

import textwrap
from decimal import Decimal

import pytest

from gammonclock.core.arbiter import Adjust, Deduct, Pause, Resume, SetScore, Undo, Warn
from gammonclock.core.dice import Roll, Void
from gammonclock.core.engine import ButtonEdge
from gammonclock.core.match import ArbiterAction, DiceEvent
from gammonclock.sides import Side
from gammonclock.sim.script import ScriptError, load_script, parse_script

S = 1_000_000_000
HOLD_NS = 2 * S        # the default hold_s
PATH = "match.script"


def ns(seconds: str) -> int:
    return int(Decimal(seconds) * S)


def parse(text: str, hold_ns: int = HOLD_NS):
    return parse_script(textwrap.dedent(text), hold_ns, PATH)


def plain(item) -> tuple:
    """An input as a readable tuple: ("1.5", "down", "left"), ("2", "arbiter", Pause()), …"""
    t = format((Decimal(item.t) / S).normalize(), "f")
    if isinstance(item, ButtonEdge):
        return (t, "down" if item.pressed else "up", item.button.value)
    if isinstance(item, DiceEvent):
        return (t, item.message)
    assert isinstance(item, ArbiterAction)
    return (t, "arbiter", item.command)


def inputs(text: str, hold_ns: int = HOLD_NS) -> list[tuple]:
    return [plain(i) for i in parse(text, hold_ns).inputs]


def error(text: str) -> ScriptError:
    with pytest.raises(ScriptError) as info:
        parse(text)
    return info.value


# --- times ----------------------------------------------------------------------------------

TIMES = [
    # (id, script, inputs)
    ("absolute", "1 down left\n2.5 up left",
     [("1", "down", "left"), ("2.5", "up", "left")]),
    ("relative", "1 down left\n+1.5 up left",
     [("1", "down", "left"), ("2.5", "up", "left")]),
    ("relative-from-zero", "+2 down cube\n+0 up cube",
     [("2", "down", "cube"), ("2", "up", "cube")]),
    ("relative-chain", "1 down left\n+1 up left\n+1 down right\n+0.25 up right",
     [("1", "down", "left"), ("2", "up", "left"), ("3", "down", "right"),
      ("3.25", "up", "right")]),
    ("same-time-again", "3 down left\n3 up left", [("3", "down", "left"), ("3", "up", "left")]),
    ("exact-decimals", "0.1 down left\n+0.2 up left",
     [("0.1", "down", "left"), ("0.3", "up", "left")]),   # 0.1 + 0.2 is 0.3 here
    ("leading-dot", ".5 down left", [("0.5", "down", "left")]),
    ("nanosecond", "0.000000001 down left", [("0.000000001", "down", "left")]),
    ("relative-after-a-tap", "0 tap left\n+1 tap right\n5 end",   # +1 from the TIME, not the up
     [("0", "down", "left"), ("0.1", "up", "left"), ("1", "down", "right"),
      ("1.1", "up", "right")]),
]


@pytest.mark.parametrize("text, expected", [r[1:] for r in TIMES], ids=[r[0] for r in TIMES])
def test_times(text, expected):
    assert inputs(text) == expected


def test_times_are_exact_nanoseconds():
    script = parse("31.9 down left\n+0.1 up left\n+0.000000001 end")
    assert [i.t for i in script.inputs] == [31_900_000_000, 32_000_000_000]
    assert script.end == 32_000_000_001


@pytest.mark.parametrize("text", [
    "# a comment\n\n1 down left\n",
    "   \n\t\n1 down left   # the left player starts\n# the end\n",
    "1 down left\r\n\r\n# windows line ends\r\n",
    "1    down\tleft",
], ids=["comment-and-blank", "inline-comment", "crlf", "spaces-and-tabs"])
def test_comments_and_blank_lines_are_skipped(text):
    assert inputs(text) == [("1", "down", "left")]


@pytest.mark.parametrize("text", ["", "\n\n", "# nothing but comments\n  # more\n"],
                         ids=["empty", "blank", "comments"])
def test_an_empty_script(text):
    script = parse(text)
    assert (script.inputs, script.end) == ((), 0)


# --- tap and hold ---------------------------------------------------------------------------

PRESSES = [
    # (id, script, hold_s in ns, inputs)
    ("tap", "5 tap left", HOLD_NS, [("5", "down", "left"), ("5.1", "up", "left")]),
    ("tap-cube", "5 tap cube", HOLD_NS, [("5", "down", "cube"), ("5.1", "up", "cube")]),
    ("hold-default", "5 hold right", HOLD_NS, [("5", "down", "right"), ("7.5", "up", "right")]),
    ("hold-default-short-hold_s", "5 hold right", ns("0.75"),
     [("5", "down", "right"), ("6.25", "up", "right")]),
    ("hold-default-hold_s-5", "5 hold cube", 5 * S,
     [("5", "down", "cube"), ("10.5", "up", "cube")]),
    ("hold-seconds", "5 hold left 3", HOLD_NS, [("5", "down", "left"), ("8", "up", "left")]),
    ("hold-fraction", "5 hold cube 0.25", HOLD_NS, [("5", "down", "cube"), ("5.25", "up", "cube")]),
]


@pytest.mark.parametrize("text, hold_ns, expected", [r[1:] for r in PRESSES],
                         ids=[r[0] for r in PRESSES])
def test_tap_and_hold(text, hold_ns, expected):
    assert inputs(text + "\n20 end", hold_ns) == expected


# --- order at the same instant --------------------------------------------------------------

ORDER = [
    # (id, script, inputs in the order the engine takes them)
    ("release-before-a-later-line", "0 tap left\n0.1 down right\n0.2 up right",
     [("0", "down", "left"), ("0.1", "up", "left"), ("0.1", "down", "right"),
      ("0.2", "up", "right")]),
    ("release-before-the-same-button", "0 tap left\n0.1 down left\n1 up left",
     [("0", "down", "left"), ("0.1", "up", "left"), ("0.1", "down", "left"),
      ("1", "up", "left")]),
    ("hold-release-before-an-arbiter-line", "0 hold left 2\n2 arbiter pause",
     [("0", "down", "left"), ("2", "up", "left"), ("2", "arbiter", Pause())]),
    ("same-instant-keeps-order", "5 arbiter pause\n5 arbiter resume\n5 arbiter undo",
     [("5", "arbiter", Pause()), ("5", "arbiter", Resume()), ("5", "arbiter", Undo())]),
    ("same-instant-buttons-keep-order", "5 down right\n5 down left\n5 down cube",
     [("5", "down", "right"), ("5", "down", "left"), ("5", "down", "cube")]),
    ("releases-of-two-lines-keep-order", "0 hold right 1\n0.5 hold left 0.5",
     [("0", "down", "right"), ("0.5", "down", "left"), ("1", "up", "right"),
      ("1", "up", "left")]),
    ("later-line-before-an-earlier-release", "0 hold left 3\n1 tap right",
     [("0", "down", "left"), ("1", "down", "right"), ("1.1", "up", "right"),
      ("3", "up", "left")]),
]


@pytest.mark.parametrize("text, expected", [r[1:] for r in ORDER], ids=[r[0] for r in ORDER])
def test_order_of_inputs(text, expected):
    assert inputs(text + "\n10 end") == expected


# --- end (fine point 13) --------------------------------------------------------------------

ENDS = [
    # (id, script, inputs, end instant)
    ("end-line", "0 tap left\n5 end", [("0", "down", "left"), ("0.1", "up", "left")], "5"),
    ("relative-end", "1 tap left\n+4 end", [("1", "down", "left"), ("1.1", "up", "left")], "5"),
    ("no-end-stops-at-last-line", "0 tap left\n3 down right",
     [("0", "down", "left"), ("0.1", "up", "left"), ("3", "down", "right")], "3"),
    ("end-drops-a-tap-release", "0 tap left\n0.05 end", [("0", "down", "left")], "0.05"),
    ("release-at-the-end-instant-happens", "0 tap left\n0.1 end",
     [("0", "down", "left"), ("0.1", "up", "left")], "0.1"),
    ("end-drops-a-hold-release", "0 hold left\n1 end", [("0", "down", "left")], "1"),
    ("last-line-tap-has-no-release", "0 tap right\n10 tap left",
     [("0", "down", "right"), ("0.1", "up", "right"), ("10", "down", "left")], "10"),
    ("last-line-hold-has-no-release", "0 tap right\n10 hold left",
     [("0", "down", "right"), ("0.1", "up", "right"), ("10", "down", "left")], "10"),
    ("comments-after-end", "0 tap left\n1 end\n# that is all\n\n",
     [("0", "down", "left"), ("0.1", "up", "left")], "1"),
]


@pytest.mark.parametrize("text, expected, end", [r[1:] for r in ENDS], ids=[r[0] for r in ENDS])
def test_end(text, expected, end):
    script = parse(text)
    assert [plain(i) for i in script.inputs] == expected
    assert script.end == ns(end)


# --- dice and arbiter lines -----------------------------------------------------------------

LINES = [
    # (id, line, what it becomes)
    ("roll-two", "1 roll 3 1", (1, Roll((3, 1)))),
    ("roll-doubles", "1 roll 6 6", (1, Roll((6, 6)))),
    ("roll-one-die", "1 roll 5", (1, Roll((5,)))),
    ("roll-L", "1 roll L 2 4", (1, Roll((2, 4), Side.LEFT))),
    ("roll-R", "1 roll R 1 2", (1, Roll((1, 2), Side.RIGHT))),
    ("roll-left-word", "1 roll left 2 4", (1, Roll((2, 4), Side.LEFT))),
    ("roll-right-word", "1 roll right 5 3", (1, Roll((5, 3), Side.RIGHT))),
    ("void", "1 void", (1, Void())),
    ("arbiter-pause", "1 arbiter pause", (1, Pause())),
    ("arbiter-deduct", "1 arbiter deduct left 30s", (1, Deduct(Side.LEFT, 30 * S))),
    ("arbiter-adjust", "1 arbiter adjust right -1m", (1, Adjust(Side.RIGHT, -60 * S))),
    ("arbiter-warn", "1 arbiter warn right slow  play", (1, Warn(Side.RIGHT, "slow play"))),
    ("arbiter-score", "1 arbiter score 3 2", (1, SetScore(3, 2))),
]


@pytest.mark.parametrize("line, expected", [r[1:] for r in LINES], ids=[r[0] for r in LINES])
def test_dice_and_arbiter_lines(line, expected):
    (item,) = parse(line).inputs
    seconds, value = expected
    assert item.t == seconds * S
    assert (item.message if isinstance(item, DiceEvent) else item.command) == value


# --- malformed lines: the error names the file and the line ---------------------------------

MALFORMED = [
    # (id, script, line of the error, fragment)
    ("unknown-action", "0 tap left\n1 frob left", 2, "frob"),
    ("no-action", "0 tap left\n1", 2, "action"),
    ("time-not-a-number", "abc tap left", 1, "TIME"),
    ("time-with-unit", "1s tap left", 1, "TIME"),
    ("time-exponent", "1e3 tap left", 1, "TIME"),
    ("time-negative", "-1 tap left", 1, "negative"),
    ("time-two-dots", "1.2.3 tap left", 1, "TIME"),
    ("time-sub-ns", "0.0000000001 tap left", 1, "nanosecond"),
    ("time-plus-alone", "+ tap left", 1, "TIME"),
    ("time-double-plus", "++1 tap left", 1, "TIME"),
    ("time-plus-minus", "5 tap left\n+-1 tap right", 2, "TIME"),
    ("time-backwards", "5 tap left\n4 tap right", 2, "backwards"),
    ("time-backwards-after-relative", "1 tap left\n+5 tap right\n5.5 tap left", 3, "backwards"),
    ("down-no-button", "1 down", 1, "button"),
    ("down-bad-button", "1 down middle", 1, "middle"),
    ("down-two-buttons", "1 down left right", 1, "one button"),
    ("up-no-button", "1 up", 1, "button"),
    ("tap-no-button", "1 tap", 1, "button"),
    ("tap-extra", "1 tap left 3", 1, "tap"),
    ("hold-bad-button", "1 hold pedal", 1, "pedal"),
    ("hold-zero", "1 hold left 0", 1, "more than 0"),
    ("hold-negative", "1 hold left -1", 1, "duration"),
    ("hold-not-seconds", "1 hold left long", 1, "duration"),
    ("hold-extra", "1 hold left 3 4", 1, "hold"),
    ("roll-nothing", "1 roll", 1, "dice"),
    ("roll-seven", "1 roll 7 1", 1, "1-6"),
    ("roll-zero", "1 roll 0 3", 1, "1-6"),
    ("roll-three-dice", "1 roll 1 2 3", 1, "dice"),
    ("roll-side-one-die", "1 roll L 3", 1, "two dice"),
    ("roll-bad-side", "1 roll X 3 1", 1, "dice"),
    ("void-extra", "1 void 3", 1, "void"),
    ("arbiter-nothing", "1 arbiter", 1, "command"),
    ("arbiter-unknown", "1 arbiter frob", 1, "frob"),
    ("arbiter-missing-duration", "1 arbiter deduct left", 1, "usage"),
    ("arbiter-bad-side", "1 arbiter deduct middle 30s", 1, "side"),
    ("arbiter-bad-duration", "1 arbiter deduct left 30x", 1, "duration"),
    ("end-extra", "1 end now", 1, "end"),
    ("counts-comments-and-blanks", "# c\n\n0 tap left\n\n# c\n1 bogus", 6, "bogus"),
    ("counts-a-form-feed-line", "0 tap left\n\x0c\n1 bogus", 3, "bogus"),
    ("counts-crlf-lines", "0 tap left\r\n\r\n1 bogus\r\n", 3, "bogus"),
]


@pytest.mark.parametrize("text, line, fragment", [r[1:] for r in MALFORMED],
                         ids=[r[0] for r in MALFORMED])
def test_a_malformed_line_names_file_and_line(text, line, fragment):
    exc = error(text)
    assert (exc.path, exc.line) == (PATH, line)
    assert str(exc).startswith(f"{PATH}:{line}: ")
    assert fragment in str(exc)


def test_load_script_reads_a_file(tmp_path):
    path = tmp_path / "s.txt"
    path.write_text("0 tap left\n2 end\n", encoding="utf-8")
    script = load_script(path, HOLD_NS)
    assert (len(script.inputs), script.end) == (2, 2 * S)


def test_load_script_on_a_missing_file(tmp_path):
    path = tmp_path / "nope.txt"
    with pytest.raises(ScriptError) as info:
        load_script(path, HOLD_NS)
    assert str(info.value).startswith(f"{path}: ")


@pytest.mark.parametrize("after", ["2 tap right", "1 tap right", "0.5 tap right", "2 bogus"],
                         ids=["later", "same-instant", "earlier", "malformed"])
def test_lines_after_end_are_not_run(after):
    # docs/decisions.md: the run stops at `end`; what follows it is not read (SPEC is silent).
    script = parse_script(f"0 tap left\n1 end\n{after}\n", HOLD_NS, PATH)
    assert script.end == 1 * S
    assert [(i.t, i.button.value) for i in script.inputs] == [(0, "left"), (S // 10, "left")]


def test_a_script_with_several_bad_lines_reports_them_all():
    text = "0 tap left\n5 tapp right\n3 tap left\n10 hold\n12 tap right\nx tap left\n"
    with pytest.raises(ScriptError) as caught:
        parse_script(text, 2 * S, "bad.script")
    assert [line for line, _ in caught.value.problems] == [2, 3, 4, 6]
    message = str(caught.value).splitlines()
    assert message[0].startswith("bad.script:2: unknown action 'tapp'")
    assert message[1] == "bad.script:3: time goes backwards (3 is before the previous line)"
    assert message[2].startswith("bad.script:4: hold needs a button")
    assert message[3].startswith("bad.script:6: bad TIME")
    assert caught.value.line == 2

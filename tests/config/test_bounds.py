"""Bounds on every number and text from outside (issue 7, items 2, 10 and 11).

Each row is an input that froze the clock (`Fraction(Decimal("1e999999999"))` computes
10**999999999 holding the GIL), raised a traceback, or was accepted without a sane upper bound.
Now each is a clear error naming what is wrong and what is allowed, in one short line.
"""

from __future__ import annotations

import json
from decimal import Decimal
from fractions import Fraction

import pytest

from gammonclock.cli.main import main
from gammonclock.config.converters import Duration
from gammonclock.config.loading import ConfigError, parse_config
from gammonclock.config.schema import FIELDS
from gammonclock.core.arbiter import (
    Adjust,
    ArbiterSyntaxError,
    Forfeit,
    SetCube,
    SetScore,
    Warn,
    parse_command,
)
from gammonclock.durations import (
    MAX_DURATION_NS,
    DurationError,
    decimal_to_ns,
    parse_duration,
    seconds_to_ns,
)
from gammonclock.sides import Side
from gammonclock.sim.script import ScriptError, parse_script

S = 1_000_000_000
MS = 1_000_000
HOLD_NS = 2 * S
DEBOUNCE_NS = 30 * MS      # the default debounce_ms
HUGE = "9" * 4400          # more digits than int() takes from text (4 300)
DEEP = "[" * 5000 + "]" * 5000
MAX_MESSAGE = 300          # no message repeats a huge value: each line stays short


def one_short_line(message: str) -> None:
    assert "\n" not in message and len(message) < MAX_MESSAGE, message


# --- the config (TOML) ----------------------------------------------------------------------

M = "[match]\nlength = 7\n"
DURATION_KEYS = [f.key for f in FIELDS if isinstance(f.type, Duration)]


def toml_of(key: str, value: str) -> str:
    """`[match] length = 7` and `key = value` in its section."""
    section, name = key.rsplit(".", 1)
    return M + f"[{section}]\n{name} = {value}"


CONFIGS = [
    # (id, TOML, the problem's start (key path), fragment)
    *((f"{key}-1e999999999", toml_of(key, "1e999999999"), key, "at most 1000h")
      for key in DURATION_KEYS),
    ("delay-1e-999999999", M + "[time]\ndelay = 1e-999999999", "time.delay", "too many digits"),
    ("start_score-1e999999999", M + "start_score = [1e999999999, 0]", "match.start_score",
     "below the match length 7"),
    ("start_score-1e-999999999", M + "start_score = [0, 1e-999999999]", "match.start_score",
     "half points"),
    ("reserve-1e5000", M + "[time]\nreserve = 1e5000", "time.reserve", "at most 1000h"),
    ("reserve-1e30", M + "[time]\nreserve = 1e30", "time.reserve", "at most 1000h"),
    ("reserve-1001h", M + '[time]\nreserve = "1001h"', "time.reserve", "at most 1000h"),
    ("reserve-20-digit-hours", M + '[time]\nreserve = "99999999999999999999h"', "time.reserve",
     "at most 1000h"),
    ("reserve-hours-that-add-up", M + '[time]\nreserve = "999h999h"', "time.reserve",
     "at most 1000h"),
    ("reserve-4400-digit-string", M + f'[time]\nreserve = "{HUGE}s"', "time.reserve",
     "too many digits"),
    ("reserve-hex-of-5000-digits", M + "[time]\nreserve = 0x" + "f" * 5000, "time.reserve",
     "at most 1000h"),
    ("length-hex-of-5000-digits", "[match]\nlength = 0x" + "f" * 5000, "match.length", "1..99"),
    ("hold_s-5000-digits", M + "[buttons]\nhold_s = 2." + "0" * 5000, "buttons.hold_s",
     "too many digits"),
    ("reserve-4400-digit-int", M + f"[time]\nreserve = {HUGE}", "not valid TOML",
     "too many digits"),
    ("array-5000-deep", M + f"[players]\nleft = {DEEP}", "not valid TOML", "nested too deeply"),
    ("name-nul", M + '[players]\nleft = "An\\u0000na"', "players.left", "control character"),
    ("name-newline", M + '[players]\nright = "Bo\\nris"', "players.right", "control character"),
    ("name-escape", M + '[players]\nleft = "\\u001b[2JAnna"', "players.left",
     "control character"),
    ("name-direction-override", M + '[players]\nleft = "\\u202eanna"', "players.left",
     "control character"),
    # The reserve per_point × length has the bound of any duration, not 99 times it.
    ("per_point-times-99-over-1000h", "[match]\nlength = 99\n[time]\nper_point = \"1000h\"",
     "time.per_point", "99000h; a reserve is at most 1000h"),
    ("per_point-times-length-less-the-start-score", "[match]\nlength = 99\n"
     "start_score = [2, 2]\n[time]\nper_point = \"10h25m\"", "time.per_point",
     "× 97 points is a reserve of"),
]


def test_every_duration_key_of_issue_7_has_its_1e999999999_row():
    # The rows follow the schema; a key that stopped being a Duration would silently drop one.
    assert {"time.reserve", "time.per_point", "time.delay", "time.overtime", "breaks.length",
            "buzzer.low_time"} <= set(DURATION_KEYS)


@pytest.mark.parametrize("toml, key, fragment", [r[1:] for r in CONFIGS],
                         ids=[r[0] for r in CONFIGS])
def test_a_config_value_beyond_the_bounds(toml, key, fragment):
    with pytest.raises(ConfigError) as info:
        parse_config(toml + "\n", "table.toml")
    [problem] = info.value.problems
    assert problem.startswith(key) and fragment in problem, problem
    one_short_line(str(info.value))


@pytest.mark.parametrize("toml, reserve_h", [
    ("[match]\nlength = 99\n[time]\nper_point = \"10h\"", 990),
    ("[match]\nlength = 99\n[time]\nper_point = \"1000h\"\nreserve = \"1000h\"", 1000),
    ("[match]\nlength = 99\nstart_score = [2, 2]\n[time]\nper_point = \"10h18m\"", 999.1),
], ids=["per_point-10h-times-99", "reserve-wins-over-per_point", "start-score-brings-it-under"])
def test_a_reserve_from_per_point_within_the_bound_is_taken(toml, reserve_h):
    rules = parse_config(toml + "\n", "table.toml").rules
    assert rules.reserve_ns == round(reserve_h * 3600 * S) <= MAX_DURATION_NS


# --- the simulation script -------------------------------------------------------------------

SCRIPTS = [
    # (id, script, line, fragment)
    ("adjust-4400-digit-hours", f"0 arbiter adjust left +{HUGE}h", 1, "too many digits"),
    ("add-20-digit-hours", "0 arbiter add left 99999999999999999999h", 1, "at most 1000h"),
    ("score-1e999999999", "0 arbiter score 1e999999999 0", 1, "at most 99"),
    ("cube-2-to-13000", f"0 arbiter cube {2 ** 13000}", 1, "from 1 to 4096"),
    ("time-over-1000h", "3600000.000000001 tap left", 1, "1000h"),
    ("relative-time-over-1000h", "0.5 tap left\n+3600000 tap right", 2, "1000h"),
    ("time-4400-digits", f"{HUGE} tap left", 1, "too many digits"),
    ("hold-over-1000h", "0 hold left 3600001", 1, "at most 1000h"),
]

BOUNCES = [
    # (id, script, the line named, fragment): run as the device runs them, each bounce said
    ("down-up-at-the-same-instant", "5 down left\n5 up left\n9 end", 2,
     "stays down (a press of no length: no button makes one)"),
    ("relative-zero-press", "+2 down cube\n+0 up cube", 2, "debounce_ms (30 ms)"),
    ("press-shorter-than-debounce", "5 down right\n5.029 up right\n9 tap left", 2,
     "29 ms after its press (line 1)"),
    ("lost-release-then-a-new-press", "5 down left\n5.01 up left\n8 down left\n8.5 up left",
     2, "stays down"),
    # Its release, in the script, is ignored as the engine would: the button stays down.
    ("hold-shorter-than-debounce", "0 tap right\n5 hold left 0.01\n9 end", 2,
     "10 ms after its press (line 2), less than debounce_ms (30 ms): ignored as a bounce (SPEC "
     "fine point 3), the button stays down"),
]


@pytest.mark.parametrize("text, line, fragment", [r[1:] for r in BOUNCES],
                         ids=[r[0] for r in BOUNCES])
def test_a_bounce_in_a_script_is_run_as_the_device_runs_it_and_named(text, line, fragment):
    """Issue 19: a script that models contact bounce is the simulator's to show, not to refuse:
    every edge is kept (the engine ignores the bounce, fine point 3) and the line is named."""
    script = parse_script(text + "\n", HOLD_NS, "match.script", debounce_ns=DEBOUNCE_NS)
    assert len(script.bounces) == 1, script.bounces
    note = script.bounces[0]
    assert note.startswith(f"match.script:{line}: bounce: ") and fragment in note, note
    one_short_line(note)
    assert script.inputs == parse_script(text + "\n", HOLD_NS, "match.script").inputs


@pytest.mark.parametrize("text, line, fragment", [r[1:] for r in SCRIPTS],
                         ids=[r[0] for r in SCRIPTS])
def test_a_script_line_beyond_the_bounds(text, line, fragment):
    with pytest.raises(ScriptError) as info:
        parse_script(text + "\n", HOLD_NS, "match.script", debounce_ns=DEBOUNCE_NS)
    assert info.value.line == line and fragment in str(info.value), str(info.value)
    one_short_line(str(info.value))


STILL_VALID = [
    # (id, script): presses the engine sees as written, or bounces scripted on purpose
    ("press-of-exactly-debounce", "5 down left\n5.03 up left"),
    ("a-chattering-press", "5 down left\n5.01 up left\n5.02 down left\n5.1 up left"),
    ("chatter-that-ends-down", "5 down left\n5.01 up left\n5.02 down left"),
    ("a-press-cut-by-the-end", "5 down left\n5.01 end\n5.02 up left"),
    ("a-tap-then-a-lost-down", "0 tap left\n0.1 down left\n1 up left"),
    ("time-of-exactly-1000h", "3600000 tap left"),
    ("hold-of-exactly-debounce", "0 hold left 0.03"),
    ("a-short-hold-cut-by-the-end", "5 hold left 0.01\n5.005 end"),
]


@pytest.mark.parametrize("text", [r[1] for r in STILL_VALID], ids=[r[0] for r in STILL_VALID])
def test_a_script_within_the_bounds_is_valid(text):
    assert parse_script(text + "\n", HOLD_NS, "match.script",
                        debounce_ns=DEBOUNCE_NS).bounces == ()


def test_without_the_debounce_a_zero_length_press_parses_as_before():
    # Existing callers (tests that script bounces on purpose) pass no debounce: nothing checked.
    assert len(parse_script("3 down left\n3 up left\n", HOLD_NS).inputs) == 2


# --- arbiter words (a script, the control socket, `gammonclock arbiter`) --------------------

COMMANDS = [
    # (id, words, fragment)
    ("score-1e999999999", ["score", "1e999999999", "0"], "at most 99"),
    ("score-1e-999999999", ["score", "0", "1e-999999999"], "whole or half points"),
    ("score-100", ["score", "100", "0"], "at most 99"),
    ("score-4400-digits", ["score", HUGE, "0"], "not a score"),
    ("forfeit-100", ["forfeit", "left", "100"], "1 to 99"),
    ("forfeit-4400-digits", ["forfeit", "left", HUGE], "1 to 99"),
    ("cube-8192", ["cube", "8192"], "a power of two from 1 to 4096"),
    ("cube-2-to-13000", ["cube", str(2 ** 13000)], "a power of two from 1 to 4096"),
    ("cube-4400-digits", ["cube", HUGE, "left"], "a power of two from 1 to 4096"),
    ("add-20-digit-hours", ["add", "left", "99999999999999999999h"], "at most 1000h"),
    ("adjust-4400-digit-hours", ["adjust", "left", f"+{HUGE}h"], "too many digits"),
    ("adjust-minus-over-1000h", ["adjust", "right", "-1000h1s"], "at most 1000h"),
    ("deduct-hours-that-add-up", ["deduct", "left", "600h600h"], "at most 1000h"),
    ("warn-nul", ["warn", "left", "slow\x00play"], "control character"),
    ("warn-newline", ["warn", "left", "slow\nplay"], "control character"),
    ("warn-escape", ["warn", "right", "\x1b[2J"], "control character"),
    ("warn-201-characters", ["warn", "left", "x" * 201], "at most 200"),
]


@pytest.mark.parametrize("words, fragment", [r[1:] for r in COMMANDS],
                         ids=[r[0] for r in COMMANDS])
def test_an_arbiter_word_beyond_the_bounds(words, fragment):
    with pytest.raises(ArbiterSyntaxError) as info:
        parse_command(words)
    assert fragment in str(info.value), str(info.value)
    one_short_line(str(info.value))


@pytest.mark.parametrize("words, command", [
    (["score", "98.5", "0"], SetScore(Fraction(197, 2), Fraction(0))),
    (["cube", "4096", "left"], SetCube(4096, Side.LEFT)),
    (["cube", "0004"], SetCube(4, None)),
    (["forfeit", "right", "99"], Forfeit(Side.RIGHT, 99)),
    (["adjust", "left", "-1000h"], Adjust(Side.LEFT, -MAX_DURATION_NS)),
    (["warn", "left", "x" * 200], Warn(Side.LEFT, "x" * 200)),
], ids=["score-98.5", "cube-4096", "cube-leading-zeros", "forfeit-99", "adjust-minus-1000h",
        "warn-200-characters"])
def test_an_arbiter_word_at_the_bounds(words, command):
    assert parse_command(words) == command


# --- durations, directly --------------------------------------------------------------------

@pytest.mark.parametrize("call", [
    lambda: decimal_to_ns(Decimal("1e999999999")),
    lambda: decimal_to_ns(Decimal("-1e999999999")),
    lambda: decimal_to_ns(Decimal("1e-999999999")),
    lambda: decimal_to_ns(Decimal("0e999999999")),
    lambda: decimal_to_ns(10 ** 5000),
    lambda: decimal_to_ns(MAX_DURATION_NS + 1, 1),
    lambda: seconds_to_ns("1" * 40),
    lambda: parse_duration("1000h1ms"),
], ids=["1e999999999", "minus-1e999999999", "1e-999999999", "0e999999999", "10**5000",
        "one-ns-over", "40-digits", "1000h1ms"])
def test_a_duration_beyond_the_bounds(call):
    with pytest.raises(DurationError) as info:
        call()
    one_short_line(str(info.value))


def test_the_duration_bound_itself_is_allowed():
    assert parse_duration("1000h") == MAX_DURATION_NS == decimal_to_ns(MAX_DURATION_NS, 1)


# --- through the command line: exit 2 with one clear line ------------------------------------

GOOD_CONFIG = "[match]\nlength = 7\n"
GOOD_SCRIPT = "0 tap left\n1 end\n"

CLI = [
    # (id, config, script, fragment of the one line on stderr)
    ("config-reserve-1e999999999", GOOD_CONFIG + "[time]\nreserve = 1e999999999\n", GOOD_SCRIPT,
     "table.toml: time.reserve: "),
    ("config-4400-digit-int", GOOD_CONFIG + f"[time]\nreserve = {HUGE}\n", GOOD_SCRIPT,
     "table.toml: not valid TOML: a number with too many digits"),
    ("config-5000-deep-array", GOOD_CONFIG + f"[players]\nleft = {DEEP}\n", GOOD_SCRIPT,
     "nested too deeply"),
    ("config-name-with-newline", GOOD_CONFIG + '[players]\nleft = "A\\nB"\n', GOOD_SCRIPT,
     "players.left: \"A\\u000aB\" holds a control character"),
    ("script-adjust-4400-digits", GOOD_CONFIG, f"0 arbiter adjust left +{HUGE}h\n",
     "match.script:1: "),
    ("script-score-1e999999999", GOOD_CONFIG, "0 arbiter score 1e999999999 0\n",
     "match.script:1: "),
]

SIMULATED_BOUNCES = [
    # (id, config, script, what stderr says): exit 0, the state as the device would have it
    ("script-phantom-hold", GOOD_CONFIG, "0 tap right\n5 down left\n5 up left\n9 end\n",
     "match.script:3: bounce: the release of left at 5 s"),
    ("script-phantom-with-the-configs-debounce", GOOD_CONFIG + "[buttons]\ndebounce_ms = 10\n",
     "0 tap right\n5 down left\n5.009 up left\n9 end\n", "less than debounce_ms (10 ms)"),
]


@pytest.mark.parametrize("config, script, fragment", [r[1:] for r in SIMULATED_BOUNCES],
                         ids=[r[0] for r in SIMULATED_BOUNCES])
def test_simulate_runs_a_scripted_bounce_as_the_device_and_says_so(tmp_path, capsys, config,
                                                                     script, fragment):
    """Issue 19: exit 0, the bounce line named on stderr, and the match as the device has it:
    left's release was a bounce, so left's press became a hold 2 s later (result entry)."""
    (tmp_path / "table.toml").write_text(config, encoding="utf-8")
    (tmp_path / "match.script").write_text(script, encoding="utf-8")
    code = main(["simulate", "--config", str(tmp_path / "table.toml"),
                 "--script", str(tmp_path / "match.script"), "--json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert fragment in err and err.count("\n") == 1, err
    assert json.loads(out)["phase"] == "result_entry"


@pytest.mark.parametrize("config, script, fragment", [r[1:] for r in CLI],
                         ids=[r[0] for r in CLI])
def test_simulate_refuses_with_exit_2_and_one_line(tmp_path, capsys, config, script, fragment):
    (tmp_path / "table.toml").write_text(config, encoding="utf-8")
    (tmp_path / "match.script").write_text(script, encoding="utf-8")
    code = main(["simulate", "--config", str(tmp_path / "table.toml"),
                 "--script", str(tmp_path / "match.script"), "--json"])
    out, err = capsys.readouterr()
    assert (code, out) == (2, "")
    assert err.startswith("gammonclock: ") and fragment in err, err
    one_short_line(err.rstrip("\n").replace(str(tmp_path), ""))


def test_the_phantom_check_keeps_a_bounce_under_the_configs_debounce(tmp_path, capsys):
    # debounce_ms = 0: a release at the instant of its press is taken, so it is no phantom.
    (tmp_path / "table.toml").write_text(GOOD_CONFIG + "[buttons]\ndebounce_ms = 0\n")
    (tmp_path / "match.script").write_text("0 tap right\n5 down left\n5 up left\n9 end\n")
    code = main(["simulate", "--config", str(tmp_path / "table.toml"),
                 "--script", str(tmp_path / "match.script"), "--json"])
    assert code == 0 and capsys.readouterr().err == ""


@pytest.mark.parametrize("speed", ["-1", "0", "nan", "inf", "-inf", "1e999", "10001", "fast",
                                   "1e-300"])
def test_a_speed_beyond_the_bounds_is_an_argument_error(tmp_path, capsys, speed):
    (tmp_path / "table.toml").write_text(GOOD_CONFIG)
    (tmp_path / "match.script").write_text(GOOD_SCRIPT)
    with pytest.raises(SystemExit) as info:
        main(["simulate", "--config", str(tmp_path / "table.toml"),
              "--script", str(tmp_path / "match.script"), f"--speed={speed}", "--json"])
    assert info.value.code == 2
    assert f"argument --speed: '{speed}' is not a speed; use a number from 0.01 to 10000" \
        in capsys.readouterr().err


@pytest.mark.parametrize("speed", ["0.01", "0.5", "10000"])
def test_a_speed_within_the_bounds_is_taken(speed):
    from gammonclock.cli.main import build_parser
    args = build_parser().parse_args(["simulate", "--config", "x", "--speed", speed])
    assert args.speed == float(speed)

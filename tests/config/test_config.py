"""The match config (SPEC §10, §1, §5, fine points 6, 7 and 15): every key, passing and failing.

Configs are built from raw TOML literals per key, on top of a minimal valid file
(`[match] length = 7`), so each row changes exactly one thing.
"""

from __future__ import annotations

from fractions import Fraction

import pytest

from gammonclock.config.loading import ConfigError, load_config, parse_config
from gammonclock.core.rules import MatchRules
from gammonclock.core.timecontrol import FlagRule, TimeMode
from gammonclock.sides import Pair

S = 1_000_000_000
MS = 1_000_000
MIN = 60 * S
PATH = "table7.toml"


def toml(keys: dict[str, str | None], base: dict[str, str] | None = None) -> str:
    """TOML text from {"section.key": raw TOML literal}; `base` first, `keys` override it, and a
    None literal leaves the key out."""
    merged = {"match.length": "7", **(base or {}), **keys}
    sections: dict[str, list[str]] = {}
    for path, literal in merged.items():
        if literal is None:
            continue
        section, key = path.split(".")
        sections.setdefault(section, []).append(f"{key} = {literal}")
    return "".join(f"[{s}]\n" + "\n".join(lines) + "\n" for s, lines in sections.items())


def rules(keys: dict[str, str] | None = None, **base: str) -> MatchRules:
    """The rules of a config with `keys` set; keyword `base` values use "_" for "."."""
    return parse_config(toml(keys or {}, {k.replace("_", ".", 1): v for k, v in base.items()}),
                        PATH).rules


def problems(text: str) -> list[str]:
    """The problems of a config that must fail; checks the error names the file on every line."""
    with pytest.raises(ConfigError) as info:
        parse_config(text, PATH)
    err = info.value
    assert err.path == PATH
    lines = str(err).splitlines()
    assert len(lines) == len(err.problems) >= 1
    for line, problem in zip(lines, err.problems):
        assert line.startswith(f"{PATH}: ") and problem in line
    return err.problems


def the_problem(keys: dict[str, str], **base: str) -> str:
    """The single problem of a config with `keys` set."""
    found = problems(toml(keys, {k.replace("_", ".", 1): v for k, v in base.items()}))
    assert len(found) == 1, found
    return found[0]


# --- values that pass -----------------------------------------------------------------------

def _score(left, right) -> Pair[Fraction]:
    return Pair(Fraction(left), Fraction(right))


PASSING = [
    # (key, TOML literal, what to read from the rules, expected)
    ("match.discipline", '"backgammon"', lambda r: r.discipline.name, "backgammon"),
    ("match.discipline", '"longgammon"', lambda r: r.discipline.name, "longgammon"),
    ("match.discipline", '"sprintgammon"', lambda r: r.discipline.name, "sprintgammon"),
    ("match.length", "1", lambda r: r.length, 1),
    ("match.length", "99", lambda r: r.length, 99),
    ("match.crawford", "false", lambda r: r.crawford, False),
    ("match.crawford", "true", lambda r: r.crawford, True),
    ("match.start_score", "[0, 0]", lambda r: r.start_score, _score(0, 0)),
    ("match.start_score", "[6, 3]", lambda r: r.start_score, _score(6, 3)),   # length − 1 is ok
    ("match.crawford_played", "true", lambda r: r.crawford_played, True),
    ("match.cube", "false", lambda r: r.cube, False),
    ("match.draw_points", '"one"', lambda r: r.draw_points, Fraction(1)),
    ("match.draw_points", '"half"', lambda r: r.draw_points, Fraction(1, 2)),
    ("players.left", '"Anna"', lambda r: r.names.left, "Anna"),
    ("players.right", '"Boris"', lambda r: r.names.right, "Boris"),
    ("players.left", f'"{"A" * 24}"', lambda r: r.names.left, "A" * 24),   # docs/decisions.md
    ("time.mode", '"delay"', lambda r: r.time.mode, TimeMode.DELAY),
    ("time.mode", '"bronstein"', lambda r: r.time.mode, TimeMode.BRONSTEIN),
    ("time.mode", '"fischer"', lambda r: r.time.mode, TimeMode.FISCHER),
    ("time.mode", '"none"', lambda r: r.time.mode, TimeMode.NONE),
    ("time.per_point", '"3m"', lambda r: r.reserve_ns, 21 * MIN),
    ("time.per_point", "90", lambda r: r.reserve_ns, 7 * 90 * S),           # bare number: seconds
    ("time.delay", '"15s"', lambda r: r.time.delay_ns, 15 * S),
    ("time.delay", "0", lambda r: r.time.delay_ns, 0),                      # no delay at all
    ("time.delay", '"0s"', lambda r: r.time.delay_ns, 0),
    ("time.reserve", '"14m"', lambda r: r.reserve_ns, 14 * MIN),
    ("time.reserve", "600", lambda r: r.reserve_ns, 600 * S),
    ("time.flag_rule", '"match_loss"', lambda r: r.time.flag_rule, FlagRule.MATCH_LOSS),
    ("time.flag_rule", '"overtime"', lambda r: r.time.flag_rule, FlagRule.OVERTIME),
    ("time.overtime", '"2m"', lambda r: r.time.overtime_ns, 2 * MIN),
    ("breaks.per_player", "2", lambda r: r.breaks_per_player, 2),
    ("breaks.per_player", "0", lambda r: r.breaks_per_player, 0),
    ("breaks.length", '"5m"', lambda r: r.break_ns, 5 * MIN),               # the maximum
    ("breaks.length", '"4m30s"', lambda r: r.break_ns, 270 * S),
    ("breaks.length", "300", lambda r: r.break_ns, 300 * S),
    ("buttons.hold_s", "0.5", lambda r: r.hold_ns, S // 2),
    ("buttons.hold_s", "5", lambda r: r.hold_ns, 5 * S),
    ("buttons.hold_s", "5.0", lambda r: r.hold_ns, 5 * S),
    ("buttons.hold_s", "2.1", lambda r: r.hold_ns, 2_100_000_000),
    ("buttons.debounce_ms", "0", lambda r: r.debounce_ns, 0),
    ("buttons.debounce_ms", "50", lambda r: r.debounce_ns, 50 * MS),
    ("buttons.debounce_ms", "12.5", lambda r: r.debounce_ns, 12_500_000),
]


@pytest.mark.parametrize("key, literal, read, expected", PASSING,
                         ids=[f"{k}={v}" for k, v, _, _ in PASSING])
def test_a_valid_value_is_taken(key, literal, read, expected):
    assert read(rules({key: literal})) == expected


def test_the_defaults_of_a_minimal_file():
    r = rules()
    assert (r.discipline.name, r.length, r.crawford, r.crawford_played) == ("backgammon", 7, True,
                                                                             False)
    assert r.start_score == _score(0, 0) and r.cube is True
    assert r.draw_points == Fraction(1, 2)
    assert (r.time.mode, r.time.flag_rule, r.time.overtime_ns) == (TimeMode.DELAY,
                                                                   FlagRule.MATCH_LOSS, MIN)
    assert (r.break_ns, r.hold_ns, r.debounce_ns) == (5 * MIN, 2 * S, 30 * MS)


def test_the_example_file_of_spec_10_is_valid():
    text = """
        [match]
        discipline = "backgammon"
        length = 7
        crawford = true
        start_score = [0, 0]
        crawford_played = false
        cube = true
        draw_points = "half"

        [players]
        left = "Anna"
        right = "Boris"

        [time]
        mode = "delay"
        per_point = "2m"
        delay = "12s"
        flag_rule = "match_loss"
        overtime = "1m"

        [breaks]
        length = "5m"

        [buttons]
        hold_s = 2.0
        debounce_ms = 30
    """
    r = parse_config("\n".join(line.strip() for line in text.splitlines()), PATH).rules
    assert r.names == Pair("Anna", "Boris")
    assert (r.reserve_ns, r.time.delay_ns, r.hold_ns) == (14 * MIN, 12 * S, 2 * S)


# --- values that fail -----------------------------------------------------------------------

FAILING = [
    # (id, key, TOML literal, fragment of the problem that says what is allowed)
    ("discipline-unknown", "match.discipline", '"nardy"', "longgammon_blitz"),
    ("discipline-number", "match.discipline", "1", "backgammon"),
    ("discipline-case", "match.discipline", '"Backgammon"', "backgammon"),
    ("length-0", "match.length", "0", "1..99"),
    ("length-100", "match.length", "100", "1..99"),
    ("length-negative", "match.length", "-7", "1..99"),
    ("length-string", "match.length", '"7"', "1..99"),
    ("length-float", "match.length", "7.0", "1..99"),
    ("length-bool", "match.length", "true", "1..99"),
    ("crawford-int", "match.crawford", "1", "true or false"),
    ("crawford-string", "match.crawford", '"yes"', "true or false"),
    ("crawford_played-string", "match.crawford_played", '"no"', "true or false"),
    ("cube-int", "match.cube", "0", "true or false"),
    ("draw_points-unknown", "match.draw_points", '"two"', "half, one"),
    ("draw_points-number", "match.draw_points", "0.5", "half, one"),
    ("left-number", "players.left", "5", "name"),
    ("left-empty", "players.left", '""', "name"),
    ("right-blank", "players.right", '"   "', "name"),
    ("right-bool", "players.right", "false", "name"),
    ("left-too-long", "players.left", f'"{"A" * 25}"', "24 characters"),   # docs/decisions.md
    ("mode-unknown", "time.mode", '"simple"', "delay, bronstein, fischer, none"),
    ("mode-case", "time.mode", '"Fischer"', "delay, bronstein, fischer, none"),
    ("mode-bool", "time.mode", "true", "delay, bronstein, fischer, none"),
    ("per_point-no-unit", "time.per_point", '"2"', "2m30s"),
    ("per_point-bad-unit", "time.per_point", '"2x"', "2m30s"),
    ("per_point-space", "time.per_point", '"2m 30s"', "2m30s"),
    ("per_point-zero", "time.per_point", "0", "above 0"),
    ("per_point-zero-string", "time.per_point", '"0m"', "above 0"),
    ("per_point-negative", "time.per_point", "-60", "above 0"),
    ("per_point-bool", "time.per_point", "true", "2m30s"),
    ("per_point-empty", "time.per_point", '""', "2m30s"),
    ("delay-no-unit", "time.delay", '"12"', "2m30s"),
    ("delay-bad-unit", "time.delay", '"12x"', "2m30s"),
    ("delay-negative", "time.delay", "-1", "0 or more"),
    ("delay-signed-string", "time.delay", '"-12s"', "2m30s"),
    ("delay-bool", "time.delay", "false", "2m30s"),
    ("delay-sub-ns", "time.delay", "0.0000000001", "nanosecond"),
    ("delay-inf", "time.delay", "inf", "2m30s"),
    ("delay-nan", "time.delay", "nan", "2m30s"),
    ("per_point-minus-inf", "time.per_point", "-inf", "2m30s"),
    ("reserve-no-unit", "time.reserve", '"14"', "2m30s"),
    ("reserve-zero", "time.reserve", "0", "above 0"),
    ("flag_rule-unknown", "time.flag_rule", '"sudden_death"', "match_loss, overtime"),
    ("overtime-no-unit", "time.overtime", '"1"', "2m30s"),
    ("overtime-zero", "time.overtime", '"0s"', "above 0"),
    ("per_player-negative", "breaks.per_player", "-1", "0..10"),
    ("per_player-float", "breaks.per_player", "1.5", "0..10"),
    ("per_player-bool", "breaks.per_player", "true", "0..10"),
    ("per_player-string", "breaks.per_player", '"1"', "0..10"),
    ("break-length-over-5m", "breaks.length", '"5m1s"', "300"),
    ("break-length-6m", "breaks.length", '"6m"', "300"),
    ("break-length-301", "breaks.length", "301", "300"),
    ("break-length-no-unit", "breaks.length", '"5"', "2m30s"),
    ("break-length-zero", "breaks.length", "0", "above 0"),
    ("hold_s-below", "buttons.hold_s", "0.49", "0.5..5"),
    ("hold_s-above", "buttons.hold_s", "5.01", "0.5..5"),
    ("hold_s-zero", "buttons.hold_s", "0", "0.5..5"),
    ("hold_s-string", "buttons.hold_s", '"2s"', "0.5..5"),
    ("hold_s-bool", "buttons.hold_s", "true", "0.5..5"),
    ("hold_s-nan", "buttons.hold_s", "nan", "0.5..5"),
    ("hold_s-inf", "buttons.hold_s", "inf", "0.5..5"),
    ("debounce-negative", "buttons.debounce_ms", "-1", "0..50"),
    ("debounce-51", "buttons.debounce_ms", "51", "0..50"),
    ("debounce-50.5", "buttons.debounce_ms", "50.5", "0..50"),
    ("debounce-string", "buttons.debounce_ms", '"30ms"', "0..50"),
    ("debounce-bool", "buttons.debounce_ms", "false", "0..50"),
]


@pytest.mark.parametrize("key, literal, allowed", [row[1:] for row in FAILING],
                         ids=[row[0] for row in FAILING])
def test_a_bad_value_names_the_key_and_what_is_allowed(key, literal, allowed):
    problem = the_problem({key: literal})
    assert problem.startswith(f"{key}: ")
    assert allowed in problem


def test_the_message_of_spec_10_for_a_bad_duration():
    problem = the_problem({"time.delay": '"12x"'})
    spec = 'time.delay: "12x" is not a duration; use e.g. "12s", "2m30s", "2.5m"'
    assert problem.startswith(spec)


START_SCORE_FAILING = [
    # (id, discipline, start_score literal, fragment)
    ("at-the-length", "backgammon", "[7, 0]", "below the match length 7"),
    ("over-the-length", "backgammon", "[0, 9]", "below the match length 7"),
    ("negative", "backgammon", "[-1, 0]", "0 or more"),
    ("half-in-backgammon", "backgammon", "[1.5, 0]", "longgammon"),
    ("half-in-sprintgammon", "sprintgammon", "[0, 0.5]", "longgammon"),
    ("quarter-in-longgammon", "longgammon", "[0.25, 0]", "half points"),
    ("at-the-length-longgammon", "longgammon", "[7, 0]", "below the match length 7"),
    ("one-number", "backgammon", "[0]", "[left, right]"),
    ("three-numbers", "backgammon", "[0, 0, 0]", "[left, right]"),
    ("a-string", "backgammon", '"0-0"', "[left, right]"),
    ("strings-inside", "backgammon", '["1", 0]', "[left, right]"),
    ("bools-inside", "backgammon", "[true, 0]", "[left, right]"),
    ("a-table", "backgammon", "{left = 1, right = 0}", "[left, right]"),
]


@pytest.mark.parametrize("discipline, literal, fragment", [r[1:] for r in START_SCORE_FAILING],
                         ids=[r[0] for r in START_SCORE_FAILING])
def test_a_bad_start_score(discipline, literal, fragment):
    problem = the_problem({"match.start_score": literal}, match_discipline=f'"{discipline}"')
    assert problem.startswith("match.start_score: ") and fragment in problem
    assert "Decimal" not in problem   # values shown as written in TOML, not as Python reprs


@pytest.mark.parametrize("literal, expected", [
    ("[0.5, 0]", _score(Fraction(1, 2), 0)),
    ("[6.5, 6]", _score(Fraction(13, 2), 6)),
    ("[3, 2.5]", _score(3, Fraction(5, 2))),
], ids=["half", "six-and-a-half", "right-half"])
def test_halves_in_a_longgammon_start_score(literal, expected):
    r = rules({"match.start_score": literal}, match_discipline='"longgammon"')
    assert r.start_score == expected


# --- unknown keys, sections and structure ---------------------------------------------------

STRUCTURE = [
    # (id, TOML text, key path the problem names, fragment)
    ("unknown-key", "[match]\nlength = 7\nlenght = 7\n", "match.lenght", "unknown key"),
    ("unknown-time-key", "[match]\nlength = 7\n[time]\nincrement = \"2s\"\n", "time.increment",
     "per_point"),
    ("unknown-section", "[match]\nlength = 7\n[clock]\nmode = \"delay\"\n", "clock",
     "unknown section"),
    ("top-level-key", "length = 7\n[match]\nlength = 7\n", "length", "unknown section"),
    ("section-not-a-table", "match = 7\n", "match", "table"),
    ("missing-length", "[match]\ndiscipline = \"backgammon\"\n", "match.length", "required"),
    ("missing-match", "[players]\nleft = \"Anna\"\n", "match.length", "required"),
    ("empty-file", "", "match.length", "required"),
]


@pytest.mark.parametrize("text, key, fragment", [r[1:] for r in STRUCTURE],
                         ids=[r[0] for r in STRUCTURE])
def test_structure_problems(text, key, fragment):
    found = problems(text)
    assert any(p.startswith(f"{key}: ") and fragment in p for p in found), found


def test_every_problem_is_reported_at_once():
    text = toml({
        "match.length": "100",
        "match.crawford": '"yes"',
        "players.left": "5",
        "time.delay": '"12"',
        "time.mode": '"simple"',
        "breaks.length": '"6m"',
        "buttons.hold_s": "9",
        "buttons.debounce_ms": "-1",
        "time.colour": '"red"',
    })
    found = problems(text)
    keys = [p.split(": ", 1)[0] for p in found]
    assert sorted(keys) == sorted([
        "match.length", "match.crawford", "players.left", "time.delay", "time.mode",
        "breaks.length", "buttons.hold_s", "buttons.debounce_ms", "time.colour"])


def test_a_bad_length_does_not_hide_a_bad_start_score():
    found = problems(toml({"match.length": "0", "match.start_score": '"x"'}))
    assert [p.split(": ", 1)[0] for p in found] == ["match.length", "match.start_score"]


def test_invalid_toml():
    found = problems("[match]\nlength = = 7\n")
    assert len(found) == 1 and "TOML" in found[0]


# --- durations: exact decimals, strings with units ------------------------------------------

DURATIONS = [
    # (TOML literal of time.delay, nanoseconds)
    ("31.9", 31_900_000_000),          # a binary float would give 31.899999999999998578…
    ("0.1", 100_000_000),
    ("12", 12 * S),                    # a bare number is seconds
    ("0.000000001", 1),                # one nanosecond is still exact
    ('"31.9s"', 31_900_000_000),
    ('"2m30s"', 150 * S),
    ('"2.5m"', 150 * S),
    ('"1500ms"', 1_500_000_000),
    ('"1h"', 3600 * S),
    ('"1m0.5s"', 60_500_000_000),
    ('"0.001ms"', 1000),
]


@pytest.mark.parametrize("literal, ns", DURATIONS, ids=[d[0] for d in DURATIONS])
def test_durations_are_exact(literal, ns):
    assert rules({"time.delay": literal}).time.delay_ns == ns


# --- discipline defaults (SPEC §1, §5) ------------------------------------------------------

DISCIPLINE_DEFAULTS = [
    # (discipline, per point, delay, cube, break allowance at length 7)
    ("backgammon", 2 * MIN, 12 * S, True, 1),
    ("backgammon_blitz", 1 * MIN, 8 * S, True, 0),
    ("backgammon_doubles", 150 * S, 18 * S, True, 1),
    ("sprintgammon", 1 * MIN, 8 * S, True, 1),
    ("longgammon", 2 * MIN, 8 * S, False, 1),
    ("longgammon_blitz", 1 * MIN, 5 * S, False, 0),
]


@pytest.mark.parametrize("discipline, per_point, delay, cube, breaks", DISCIPLINE_DEFAULTS,
                         ids=[d[0] for d in DISCIPLINE_DEFAULTS])
def test_discipline_defaults(discipline, per_point, delay, cube, breaks):
    r = rules(match_discipline=f'"{discipline}"')
    assert r.reserve_ns == per_point * 7
    assert r.time.delay_ns == delay
    assert r.time.mode is TimeMode.DELAY   # simple delay everywhere by default
    assert r.cube is cube
    assert r.breaks_per_player == breaks


@pytest.mark.parametrize("discipline, cube, crawford", [
    ("backgammon", "true", True),
    ("backgammon", "false", False),
    ("longgammon", None, False),        # no cube by default, so no Crawford game
    ("longgammon", "true", True),       # "only if cube enabled"
    ("longgammon_blitz", "true", True),
], ids=["bg", "bg-no-cube", "lg", "lg-cube", "lg-blitz-cube"])
def test_crawford_acts_only_with_a_cube(discipline, cube, crawford):
    r = rules({"match.cube": cube}, match_discipline=f'"{discipline}"')
    assert r.crawford_active is crawford


def test_the_discipline_defaults_can_be_overridden():
    r = rules({"time.per_point": '"3m"', "time.delay": '"10s"', "match.cube": "true"},
              match_discipline='"longgammon"')
    assert (r.reserve_ns, r.time.delay_ns, r.cube) == (21 * MIN, 10 * S, True)


BREAK_ALLOWANCE = [
    # (discipline, length, breaks per player) — SPEC §5
    ("backgammon", 1, 0), ("backgammon", 5, 0), ("backgammon", 6, 0),
    ("backgammon", 7, 1), ("backgammon", 8, 1), ("backgammon", 9, 1), ("backgammon", 10, 1),
    ("backgammon", 11, 2), ("backgammon", 13, 2), ("backgammon", 14, 2),
    ("backgammon", 15, 3), ("backgammon", 25, 3), ("backgammon", 99, 3),
    ("backgammon_doubles", 11, 2), ("longgammon", 15, 3), ("longgammon", 6, 0),
    ("backgammon_blitz", 15, 0), ("longgammon_blitz", 25, 0),
    ("sprintgammon", 7, 1), ("sprintgammon", 25, 1),   # one break in the whole match
]


@pytest.mark.parametrize("discipline, length, breaks", BREAK_ALLOWANCE,
                         ids=[f"{d}-{n}" for d, n, _ in BREAK_ALLOWANCE])
def test_break_allowance_by_length(discipline, length, breaks):
    r = rules({"match.length": str(length)}, match_discipline=f'"{discipline}"')
    assert r.breaks_per_player == breaks


@pytest.mark.parametrize("discipline, per_player", [
    ("backgammon_blitz", "1"), ("backgammon_blitz", "0"), ("longgammon_blitz", "2"),
], ids=["bg-blitz-1", "bg-blitz-0", "lg-blitz-2"])
def test_breaks_per_player_is_an_error_in_blitz(discipline, per_player):
    problem = the_problem({"breaks.per_player": per_player},
                          match_discipline=f'"{discipline}"')
    assert problem.startswith("breaks.per_player: ") and "no breaks" in problem


# --- the reserve (SPEC §1) ------------------------------------------------------------------

RESERVES = [
    # (id, keys, reserve)
    ("per-point-times-length", {"match.length": "11"}, 22 * MIN),
    ("per-point-in-seconds", {"match.length": "5", "time.per_point": "90"}, 450 * S),
    ("doubles-length-5", {"match.discipline": '"backgammon_doubles"', "match.length": "5"},
     750 * S),
    ("us-rule", {"match.start_score": "[2, 4]"}, 2 * MIN * (7 - 3)),
    ("us-rule-odd-sum", {"match.start_score": "[1, 0]"}, 13 * MIN),
    ("us-rule-at-match-point", {"match.start_score": "[6, 6]"}, 2 * MIN),
    ("us-rule-longgammon-half", {"match.discipline": '"longgammon"',
                                 "match.start_score": "[0.5, 0]"}, 13 * MIN + 30 * S),
    ("us-rule-own-per-point", {"match.start_score": "[3, 1]", "time.per_point": '"3m"'},
     15 * MIN),
    ("explicit-wins-over-per-point", {"time.per_point": '"3m"', "time.reserve": '"10m"'},
     10 * MIN),
    ("explicit-wins-over-us-rule", {"match.start_score": "[2, 4]", "time.reserve": '"10m"'},
     10 * MIN),
]


@pytest.mark.parametrize("keys, reserve", [r[1:] for r in RESERVES], ids=[r[0] for r in RESERVES])
def test_the_reserve(keys, reserve):
    assert rules(keys).reserve_ns == reserve


# --- load_config ----------------------------------------------------------------------------

def test_load_config_reads_a_file(tmp_path):
    path = tmp_path / "table.toml"
    path.write_text('[match]\nlength = 5\n[players]\nleft = "Anna"\n', encoding="utf-8")
    config = load_config(path)
    assert config.path == str(path)
    assert (config.rules.length, config.rules.names.left) == (5, "Anna")


@pytest.mark.parametrize("content, fragment", [
    (None, "cannot read"),                          # no such file
    ("[match\nlength = 7\n", "TOML"),
    ("[match]\nlength = 7\nlength = 8\n", "TOML"),  # a key defined twice
    (b"[match]\nlength = 7\n# \xff\n", "UTF-8"),
], ids=["missing", "unclosed-table", "duplicate-key", "not-utf8"])
def test_load_config_failures_name_the_file(tmp_path, content, fragment):
    path = tmp_path / "bad.toml"
    if isinstance(content, str):
        path.write_text(content, encoding="utf-8")
    elif isinstance(content, bytes):
        path.write_bytes(content)
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert str(info.value).startswith(f"{path}: ")
    assert any(fragment in p for p in info.value.problems), info.value.problems


def test_load_config_names_the_file_and_key_of_a_bad_value(tmp_path):
    path = tmp_path / "table.toml"
    path.write_text('[match]\nlength = 7\n[time]\ndelay = "12"\n', encoding="utf-8")
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert str(info.value).startswith(f'{path}: time.delay: "12" is not a duration')

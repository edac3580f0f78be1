"""Table-driven tests of the compact match-rules module (`gammonclock.rules`) against SPEC §1, §3–§6
and the fine points. Every expected value here is derived from the SPEC text, not from the code.
"""

from __future__ import annotations

from fractions import Fraction

import pytest

from gammonclock.core.rules import (
    DISCIPLINES,
    Family,
    GameResult,
    MatchRules,
    ResultKind,
    add_result,
    award_match,
    break_allowance,
    crawford_due,
    double_refusal,
    game_result,
    initial_reserve_ns,
    next_game_is_crawford,
    proposal_cycle,
    winner_by_score,
)
from gammonclock.core.timecontrol import FlagRule, TimeMode
from gammonclock.sides import Pair, Side

S = 1_000_000_000
MIN = 60 * S
L, R = Side.LEFT, Side.RIGHT
F = Fraction
HALF = Fraction(1, 2)


def score(left, right) -> Pair[Fraction]:
    return Pair(F(left), F(right))


# --- §1: the table of disciplines ------------------------------------------------------------

# discipline: (family, cube, blitz, shared break, per point, delay) — SPEC §1, row by row.
SPEC_TABLE = {
    "backgammon":         (Family.BACKGAMMON, True,  False, False, 2 * MIN,      12 * S),
    "backgammon_blitz":   (Family.BACKGAMMON, True,  True,  False, 1 * MIN,      8 * S),
    "backgammon_doubles": (Family.BACKGAMMON, True,  False, False, 150 * S,      18 * S),
    "sprintgammon":       (Family.BACKGAMMON, True,  False, True,  1 * MIN,      8 * S),
    "longgammon":         (Family.LONGGAMMON, False, False, False, 2 * MIN,      8 * S),
    "longgammon_blitz":   (Family.LONGGAMMON, False, True,  False, 1 * MIN,      5 * S),
}


def test_the_table_has_exactly_the_six_disciplines_of_spec_1():
    assert set(DISCIPLINES) == set(SPEC_TABLE)


@pytest.mark.parametrize("name", list(SPEC_TABLE), ids=list(SPEC_TABLE))
def test_discipline_row(name):
    family, cube, blitz, shared, per_point, delay = SPEC_TABLE[name]
    d = DISCIPLINES[name]
    assert d.name == name
    assert d.family is family
    assert d.cube is cube
    assert d.blitz is blitz
    assert d.shared_break is shared
    assert d.per_point_ns == per_point
    assert d.delay_ns == delay
    assert d.breaks_allowed is (not blitz)   # "none, ever" for the blitz rows


@pytest.mark.parametrize("name", list(SPEC_TABLE), ids=list(SPEC_TABLE))
def test_match_defaults_follow_the_row(name):
    """`MatchRules.defaults` applies the row: simple delay of the row, reserve per_point × length,
    cube as the row says, and the SPEC's other defaults (IBF flag rule, 1 min overtime, 5 min
    breaks, hold 2 s, debounce 30 ms)."""
    family, cube, blitz, shared, per_point, delay = SPEC_TABLE[name]
    rules = MatchRules.defaults(name, 11)
    assert rules.cube is cube
    assert rules.time.mode is TimeMode.DELAY
    assert rules.time.delay_ns == delay
    assert rules.time.flag_rule is FlagRule.MATCH_LOSS
    assert rules.time.overtime_ns == 1 * MIN
    assert rules.reserve_ns == per_point * 11
    assert rules.break_ns == 5 * MIN
    assert rules.hold_ns == 2 * S
    assert rules.debounce_ns == 30_000_000
    assert rules.draw_points == HALF
    assert rules.family is family


@pytest.mark.parametrize("name, cube_override, crawford_acts", [
    ("backgammon", None, True),
    ("backgammon_blitz", None, True),
    ("backgammon_doubles", None, True),
    ("sprintgammon", None, True),
    ("longgammon", None, False),          # no cube: no Crawford
    ("longgammon_blitz", None, False),
    ("longgammon", True, True),           # "only if cube enabled"
    ("longgammon_blitz", True, True),
    ("backgammon", False, False),         # a cube switched off by config: no Crawford either
], ids=lambda v: str(v))
def test_crawford_column(name, cube_override, crawford_acts):
    overrides = {} if cube_override is None else {"cube": cube_override}
    assert MatchRules.defaults(name, 7, **overrides).crawford_active is crawford_acts


def test_crawford_false_in_config_turns_the_rule_off():
    assert MatchRules.defaults("backgammon", 7, crawford=False).crawford_active is False


# --- §5: break allowance, every length 1..20 in every discipline -----------------------------

def spec_breaks(name: str, length: int) -> int:
    """SPEC §5: L ≤ 6 none; 7–10 one; 11–14 two; ≥ 15 three; blitz none whatever the length;
    sprintgammon one break in the whole match, shared."""
    if name.endswith("_blitz"):
        return 0
    if name == "sprintgammon":
        return 1
    if length <= 6:
        return 0
    if length <= 10:
        return 1
    if length <= 14:
        return 2
    return 3


BREAK_CASES = [(name, n) for name in SPEC_TABLE for n in range(1, 21)]


@pytest.mark.parametrize("name, length", BREAK_CASES, ids=[f"{d}-L{n}" for d, n in BREAK_CASES])
def test_break_allowance(name, length):
    assert break_allowance(DISCIPLINES[name], length) == spec_breaks(name, length)


@pytest.mark.parametrize("length, expected", [(6, 0), (7, 1), (10, 1), (11, 2), (14, 2),
                                              (15, 3), (25, 3), (99, 3)],
                         ids=lambda v: str(v))
def test_break_allowance_boundaries_reach_match_defaults(length, expected):
    assert MatchRules.defaults("backgammon", length).breaks_per_player == expected


# --- §1: the initial reserve -----------------------------------------------------------------

@pytest.mark.parametrize("per_point, length, start, expected", [
    (2 * MIN, 7, (0, 0), 14 * MIN),
    (2 * MIN, 25, (0, 0), 50 * MIN),
    (1 * MIN, 1, (0, 0), 1 * MIN),
    (150 * S, 7, (0, 0), 1050 * S),                        # 2.5 min × 7 = 17.5 min
    # the US rule: per_point × (length − (a + b) / 2)
    (2 * MIN, 7, (2, 3), 9 * MIN),                         # 2 × (7 − 2.5)
    (2 * MIN, 7, (3, 0), 11 * MIN),                        # 2 × (7 − 1.5)
    (2 * MIN, 5, (1, 0), 9 * MIN),                         # 2 × 4.5
    (2 * MIN, 11, (10, 10), 2 * MIN),                      # 2 × (11 − 10)
    (150 * S, 7, (1, 0), 975 * S),                         # 2.5 × 6.5 = 16.25 min
    (1 * MIN, 9, (0, 5), 390 * S),                         # 1 × 6.5 min
    # halves (longgammon draws)
    (2 * MIN, 5, (HALF, HALF), 9 * MIN),                   # 2 × (5 − 0.5)
    (2 * MIN, 5, (F(3, 2), 0), 510 * S),                   # 2 × (5 − 0.75) = 8.5 min
    (8 * S, 3, (HALF, 0), 22 * S),                         # 8 s × 2.75
], ids=["bg7", "bg25", "L1", "doubles7", "us-2-3", "us-3-0", "us-1-0-L5", "us-10-10-L11",
        "doubles-1-0", "blitz-0-5", "half-half", "three-halves", "8s-quarter"])
def test_initial_reserve(per_point, length, start, expected):
    got = initial_reserve_ns(per_point, length, score(*start))
    assert got == expected
    assert isinstance(got, int)


def test_default_rules_reserve_is_per_point_times_length():
    assert MatchRules.defaults("backgammon", 25).reserve_ns == 50 * MIN
    assert MatchRules.defaults("backgammon_doubles", 9).reserve_ns == 1350 * S   # 22.5 min


# --- §4: legality of a double ----------------------------------------------------------------

LEGAL = dict(cube_in_play=True, crawford_game=False, owner=None, doubler=L, first_turn=False,
             family=Family.BACKGAMMON, rolled_this_turn=False)


@pytest.mark.parametrize("changes", [
    {},                                                     # cube in the middle, mid-game
    {"owner": L},                                           # the doubler owns the cube
    {"doubler": R, "owner": R},
    {"doubler": R},
    {"first_turn": True, "family": Family.LONGGAMMON},      # white rolls afresh: allowed
    {"family": Family.LONGGAMMON, "owner": L},
], ids=["centred", "owned-by-doubler", "right-owns-right-doubles", "right-centred",
        "longgammon-first-turn", "longgammon-owned"])
def test_legal_double(changes):
    assert double_refusal(**{**LEGAL, **changes}) is None


@pytest.mark.parametrize("changes", [
    {"cube_in_play": False},                                # the discipline has no cube
    {"cube_in_play": False, "family": Family.LONGGAMMON},
    {"crawford_game": True},                                # no doubling in the Crawford game
    {"crawford_game": True, "owner": L},
    {"owner": R},                                           # the opponent owns the cube
    {"owner": L, "doubler": R},
    {"first_turn": True},                                   # backgammon: opening roll is played
    {"first_turn": True, "owner": L},
    {"rolled_this_turn": True},                             # dice reader: already rolled
    {"rolled_this_turn": True, "family": Family.LONGGAMMON},
    {"rolled_this_turn": True, "first_turn": True, "family": Family.LONGGAMMON},
], ids=["no-cube", "no-cube-longgammon", "crawford", "crawford-owned", "opponent-owns",
        "opponent-owns-right", "first-turn-backgammon", "first-turn-owned",
        "already-rolled", "already-rolled-longgammon", "longgammon-first-turn-rolled"])
def test_illegal_double(changes):
    why = double_refusal(**{**LEGAL, **changes})
    assert isinstance(why, str) and why.strip()


def test_refusal_reasons_differ_by_condition():
    """The display shows the reason (§3): each condition gives its own."""
    reasons = {double_refusal(**{**LEGAL, **c}) for c in (
        {"cube_in_play": False}, {"crawford_game": True}, {"owner": R}, {"first_turn": True},
        {"rolled_this_turn": True})}
    assert len(reasons) == 5


# --- §3, fine point 5: result proposals -------------------------------------------------------

def results(*rows) -> tuple[tuple[Side | None, ResultKind, Fraction], ...]:
    return tuple((w, k, F(p)) for w, k, p in rows)


def as_rows(cycle) -> tuple:
    return tuple((r.winner, r.kind, r.points) for r in cycle)


SG, GM, BG = ResultKind.SINGLE, ResultKind.GAMMON, ResultKind.BACKGAMMON
OIN, MARS, DRAW, PASS = ResultKind.OIN, ResultKind.MARS, ResultKind.DRAW, ResultKind.PASS


@pytest.mark.parametrize("family, holder, cube, draw, passed_by, expected", [
    (Family.BACKGAMMON, L, 1, HALF, None,
     results((L, SG, 1), (L, GM, 2), (L, BG, 3), (R, SG, 1), (R, GM, 2), (R, BG, 3))),
    (Family.BACKGAMMON, R, 4, HALF, None,
     results((R, SG, 4), (R, GM, 8), (R, BG, 12), (L, SG, 4), (L, GM, 8), (L, BG, 12))),
    (Family.LONGGAMMON, L, 1, HALF, None,
     results((L, OIN, 1), (L, MARS, 2), (R, OIN, 1), (R, MARS, 2), (None, DRAW, HALF))),
    (Family.LONGGAMMON, R, 1, F(1), None,
     results((R, OIN, 1), (R, MARS, 2), (L, OIN, 1), (L, MARS, 2), (None, DRAW, 1))),
    # longgammon with a cube: oin and mars times the cube, the draw not multiplied
    (Family.LONGGAMMON, L, 2, HALF, None,
     results((L, OIN, 2), (L, MARS, 4), (R, OIN, 2), (R, MARS, 4), (None, DRAW, HALF))),
    # a pass (fine point 5): the holder passed R's double from 2 to 4; the doubler wins 2, then
    # holder single/gammon/backgammon, then doubler's, all at the value before the double (2)
    (Family.BACKGAMMON, L, 2, HALF, L,
     results((R, PASS, 2), (L, SG, 2), (L, GM, 4), (L, BG, 6), (R, SG, 2), (R, GM, 4),
             (R, BG, 6))),
    (Family.BACKGAMMON, R, 1, HALF, R,
     results((L, PASS, 1), (R, SG, 1), (R, GM, 2), (R, BG, 3), (L, SG, 1), (L, GM, 2),
             (L, BG, 3))),
    (Family.LONGGAMMON, R, 4, HALF, R,
     results((L, PASS, 4), (R, OIN, 4), (R, MARS, 8), (L, OIN, 4), (L, MARS, 8),
             (None, DRAW, HALF))),
], ids=["bg-left-cube1", "bg-right-cube4", "lg-left", "lg-right-draw-one", "lg-cube2",
        "bg-pass-left-cube2", "bg-pass-right-cube1", "lg-pass-right-cube4"])
def test_proposal_cycle(family, holder, cube, draw, passed_by, expected):
    cycle = proposal_cycle(family, holder, cube, draw, passed_by=passed_by)
    assert as_rows(cycle) == expected


# --- §3, §6: points of a result ---------------------------------------------------------------

@pytest.mark.parametrize("kind, cube, expected", [
    (SG, 1, 1), (GM, 1, 2), (BG, 1, 3),
    (SG, 2, 2), (GM, 2, 4), (BG, 2, 6),
    (SG, 8, 8), (GM, 4, 8), (BG, 8, 24),
    (GM, 128, 256),                     # no upper limit on the cube (§4)
    (OIN, 1, 1), (MARS, 1, 2),
    (OIN, 4, 4), (MARS, 2, 4), (MARS, 8, 16),
], ids=lambda v: getattr(v, "value", str(v)))
def test_game_result_points(kind, cube, expected):
    result = game_result(R, kind, cube, HALF)
    assert result == GameResult(R, kind, F(expected))


@pytest.mark.parametrize("cube, draw_points, expected", [
    (1, HALF, HALF), (4, HALF, HALF), (1, F(1), F(1)), (8, F(1), F(1)),
], ids=["half-cube1", "half-cube4", "one-cube1", "one-cube8"])
def test_draw_is_not_multiplied(cube, draw_points, expected):
    result = game_result(None, DRAW, cube, draw_points)
    assert result.winner is None and result.kind is DRAW and result.points == expected


@pytest.mark.parametrize("before, result, after", [
    ((0, 0), GameResult(L, SG, F(1)), (1, 0)),
    ((3, 5), GameResult(R, GM, F(4)), (3, 9)),
    ((2, 2), GameResult(None, DRAW, HALF), (F(5, 2), F(5, 2))),     # a draw scores both
    ((F(1, 2), 1), GameResult(None, DRAW, F(1)), (F(3, 2), 2)),
], ids=["single", "gammon-on-2", "draw-half", "draw-one"])
def test_add_result(before, result, after):
    assert add_result(score(*before), result) == score(*after)


# --- §5, fine point 6: the Crawford game ------------------------------------------------------

@pytest.mark.parametrize("length, s, due", [
    (7, (6, 0), True), (7, (0, 6), True), (7, (6, 6), True), (7, (6, 5), True),
    (7, (5, 5), False), (7, (0, 0), False), (7, (7, 3), False),   # over: no next game
    (5, (F(9, 2), 0), True),                                        # longgammon half: past 4
    (5, (F(7, 2), 0), False),
    (1, (0, 0), True),                                              # L − 1 = 0
    (2, (1, 0), True), (25, (24, 23), True), (25, (23, 23), False),
], ids=lambda v: str(v))
def test_crawford_due(length, s, due):
    assert crawford_due(score(*s), length) is due


@pytest.mark.parametrize("rule_active, done, was_crawford, s, length, expected", [
    (True, False, False, (6, 3), 7, True),      # left just reached length − 1
    (True, False, False, (2, 6), 7, True),      # right did
    (True, False, False, (6, 6), 7, True),
    (True, False, False, (5, 4), 7, False),     # nobody at match point
    (True, False, True, (6, 4), 7, False),      # the Crawford game was just played: post-Crawford
    (True, True, False, (6, 5), 7, False),      # at most once per match
    (True, True, False, (6, 6), 7, False),
    (False, False, False, (6, 3), 7, False),    # rule off (crawford = false, or no cube)
    (True, False, False, (24, 0), 25, True),
    (True, False, False, (F(9, 2), 1), 5, True),
], ids=["left-reaches", "right-reaches", "both", "none", "post-crawford", "once-only",
        "once-only-both", "rule-off", "L25", "half-score"])
def test_next_game_is_crawford(rule_active, done, was_crawford, s, length, expected):
    assert next_game_is_crawford(rule_active=rule_active, crawford_done=done,
                                 game_was_crawford=was_crawford, score=score(*s),
                                 match_length=length) is expected


def test_crawford_sequence_over_a_match():
    """7-point match: 4-5, 6-5 (Crawford next), Crawford game, 6-6 post-Crawford, ..."""
    done = False
    seq = []
    was = False
    for s in [(4, 5), (6, 5), (6, 6)]:
        nxt = next_game_is_crawford(rule_active=True, crawford_done=done, game_was_crawford=was,
                                    score=score(*s), match_length=7)
        done = done or was
        seq.append(nxt)
        was = nxt
    assert seq == [False, True, False]


# --- §6, fine point 10: the end of the match by score -----------------------------------------

@pytest.mark.parametrize("s, length, expected", [
    ((7, 3), 7, (True, L)),
    ((3, 7), 7, (True, R)),
    ((8, 5), 7, (True, L)),                      # a gammon past the length
    ((6, 12), 7, (True, R)),
    ((6, 6), 7, (False, None)),
    ((0, 0), 1, (False, None)),
    ((1, 0), 1, (True, L)),
    ((7, 7), 7, (True, None)),                   # a draw took both to the length: tie
    ((F(15, 2), F(15, 2)), 7, (True, None)),
    ((F(15, 2), 7), 7, (True, L)),               # draw "one" from 6.5–6: higher score wins
    ((F(13, 2), 7), 7, (True, R)),
    ((F(13, 2), F(13, 2)), 7, (False, None)),
], ids=lambda v: str(v))
def test_winner_by_score(s, length, expected):
    assert winner_by_score(score(*s), length) == expected


@pytest.mark.parametrize("loser, s, length, expected", [
    (L, (3, 5), 7, (3, 7)),
    (R, (6, 2), 7, (7, 2)),
    (L, (0, 0), 25, (0, 25)),
    (R, (F(9, 2), F(7, 2)), 5, (5, F(7, 2))),
    (L, (6, 6), 7, (6, 7)),
], ids=["left-loses", "right-loses", "at-start", "halves", "at-6-6"])
def test_award_match(loser, s, length, expected):
    new = award_match(loser, score(*s), length)
    assert new == score(*expected)
    assert winner_by_score(new, length) == (True, loser.other)

"""Whole-match behaviour: Crawford, breaks, longgammon colours and draws, flags, time modes, dice
(SPEC §2, §4–§6, §8 and fine points 6–10, 14)."""

from __future__ import annotations

from fractions import Fraction

import pytest

from gammonclock.core.effects import (
    BreakOverrun,
    DiceRolled,
    GameStarted,
    Ignored,
    OvertimeGiven,
    Refused,
    RollVoided,
    TurnEnded,
)
from gammonclock.core.rules import MatchRules
from gammonclock.core.timecontrol import FlagRule, TimeControl, TimeMode
from gammonclock.sides import Pair
from play_helpers import play

S = 10**9


def game(start: float, winner: str, proposal_taps: int = 0) -> str:
    """A short game from `start`: left taps (right to play), two moves, then `winner` enters a
    result, cycles `proposal_taps` times and the other side confirms."""
    loser = "right" if winner == "left" else "left"
    lines = [f"{start} tap left", f"{start + 5} tap right", f"{start + 10} tap left",
             f"{start + 15} hold {winner}"]
    lines += [f"{start + 20 + i} tap cube" for i in range(proposal_taps)]
    lines.append(f"{start + 30} tap {loser}")
    return "\n".join(lines) + "\n"


# --- Crawford (§5, fine points 6 and 14) ----------------------------------------------------

def test_the_game_after_reaching_match_point_is_crawford_and_the_next_is_post_crawford():
    # 3-point match: left wins a gammon (2 points): 2-0, match point -> game 2 is Crawford.
    p = play(game(0, "left", 1) + "100 end", length=3)
    assert p.state["crawford_game"] is True
    assert p.state["cube"]["enabled"] is False
    # In the Crawford game a double is refused.
    p = play(game(0, "left", 1) + game(100, "right") + "200 end", length=3)
    assert p.state["score"] == {"left": 2, "right": 1}
    assert p.state["crawford_game"] is False           # post-Crawford
    assert p.state["cube"]["enabled"] is True


def test_no_double_in_the_crawford_game():
    p = play(game(0, "left", 1) + "100 tap left\n105 tap right\n110 tap cube\n111 end", length=3)
    assert "Crawford" in p.surviving(Refused)[0].why
    assert p.state["phase"] == "running"


def test_crawford_happens_at_most_once():
    # 3-point: 2-0 (Crawford next), right wins Crawford game 2-1, right wins again: 2-2.
    script = game(0, "left", 1) + game(100, "right") + game(200, "right") + "300 end"
    p = play(script, length=3)
    assert p.state["score"] == {"left": 2, "right": 2}
    assert p.state["crawford_game"] is False


def test_crawford_rule_off():
    p = play(game(0, "left", 1) + "100 end", length=3, crawford=False)
    assert p.state["crawford_game"] is False


def test_start_score_at_match_point_makes_game_one_crawford_unless_already_played():
    start = Pair(Fraction(4), Fraction(1))
    assert play("0 end", length=5, start_score=start).state["crawford_game"] is True
    played = play("0 end", length=5, start_score=start, crawford_played=True)
    assert played.state["crawford_game"] is False


def test_after_the_match_crawford_is_false_and_the_cube_is_reset():
    p = play("0 tap left\n5 tap right\n10 tap left\n15 tap cube\n20 tap left\n25 hold left\n"
             "30 tap right\n31 end", length=2)
    assert p.state["phase"] == "match_over"
    assert p.state["score"] == {"left": 2, "right": 0}
    assert p.state["crawford_game"] is False
    assert p.state["cube"] == {"value": 1, "owner": None, "enabled": True}
    assert p.state["game"] == 1


# --- breaks (§5, fine point 7) ---------------------------------------------------------------

@pytest.mark.parametrize("length, allowance", [(5, 0), (6, 0), (7, 1), (10, 1), (11, 2),
                                               (14, 2), (15, 3), (25, 3)])
def test_break_allowance_by_length(length, allowance):
    assert play("0 end", length=length).state["breaks_left"] == {"left": allowance,
                                                                  "right": allowance}


def test_a_break_that_runs_over_charges_the_late_player_without_delay():
    # 5-minute break asked at 100 s (down edge); over at 400 s; right comes back at 430 s.
    p = play(game(0, "left") + "100 hold right\n430 tap right\n431 end")
    assert p.state["phase"] == "between_games"
    assert p.reserve_ms("right") == 14 * 60_000 - 30_000
    assert p.surviving(BreakOverrun)[0].t == 400 * S


def test_during_an_overrun_the_late_players_reserve_runs_and_the_other_is_ignored():
    p = play(game(0, "left") + "100 hold right\n410 tap left\n420 end")
    assert p.state["phase"] == "break"
    assert p.state["running"] == "right"
    assert p.reserve_ms("right") == 14 * 60_000 - 20_000
    assert any(isinstance(e, Ignored) for e in p.surviving())


def test_the_late_players_flag_can_fall_in_an_overrun():
    p = play(game(0, "left") + "100 hold right\n500 end", reserve_ns=60 * S)
    assert p.state["phase"] == "match_over"
    assert p.state["flag"] == "right"


def test_no_breaks_left_is_refused():
    p = play(game(0, "left") + "100 hold right\n110 tap right\n" + game(200, "left")
             + "300 hold right\n310 end")
    assert p.state["phase"] == "between_games"
    assert "no breaks left" in p.surviving(Refused)[0].why


@pytest.mark.parametrize("discipline", ["backgammon_blitz", "longgammon_blitz"])
def test_no_breaks_in_blitz(discipline):
    p = play(game(0, "left") + "100 hold right\n110 end", discipline=discipline, length=15)
    assert p.state["breaks_left"] == {"left": 0, "right": 0}
    assert "blitz" in p.surviving(Refused)[0].why


def test_sprintgammon_shares_one_break_from_45_minutes_of_match_time():
    # Game 1 starts at 0; a break is allowed from exactly 2700 s (45:00).
    early = play(game(0, "left") + "2699 hold right\n2705 end", discipline="sprintgammon")
    assert "45:00" in early.surviving(Refused)[0].why
    on_time = play(game(0, "left") + "2700 hold right\n2705 end", discipline="sprintgammon")
    assert on_time.state["phase"] == "break"
    assert on_time.state["breaks_left"] == {"left": 0, "right": 0}
    other = play(game(0, "left") + "2700 hold right\n2710 tap right\n2720 hold left\n2725 end",
                 discipline="sprintgammon")
    assert other.state["phase"] == "between_games"
    assert "taken" in other.surviving(Refused)[0].why


# --- longgammon (§6) -------------------------------------------------------------------------

def test_longgammon_colours_alternate_and_the_starters_tap_is_ignored():
    # Game 1: left taps, so right is white and starts. Game 2 is started by game 1's black
    # (left): left's turn starts when right taps; left's own tap is ignored with a hint.
    script = game(0, "left") + "100 tap left\n101 end"
    p = play(script, discipline="longgammon")
    assert p.surviving(GameStarted)[0].white.value == "right"
    assert p.state["phase"] == "between_games"
    assert "right presses" in p.surviving(Ignored)[-1].why
    p = play(game(0, "left") + "100 tap right\n101 end", discipline="longgammon")
    assert p.state["running"] == "left"
    assert p.surviving(GameStarted)[1].white.value == "left"


def test_longgammon_results_cycle_oin_mars_and_draw():
    # proposals: holder oin, holder mars, other oin, other mars, draw
    p = play(game(0, "left", 4) + "100 end", discipline="longgammon")
    assert p.state["score"] == {"left": 0.5, "right": 0.5}
    p = play(game(0, "left", 1) + "100 end", discipline="longgammon")
    assert p.state["score"] == {"left": 2, "right": 0}


def test_longgammon_draw_worth_one_each():
    p = play(game(0, "left", 4) + "100 end", discipline="longgammon", draw_points=Fraction(1))
    assert p.state["score"] == {"left": 1, "right": 1}


def test_a_draw_that_takes_both_to_the_length_with_a_tie_has_no_winner():
    start = Pair(Fraction(9, 2), Fraction(9, 2))
    p = play(game(0, "left", 4) + "100 end", discipline="longgammon", length=5,
             start_score=start)
    assert p.state["phase"] == "match_over"
    assert p.state["end_reason"] == "score"
    assert p.state["winner"] is None


def test_longgammon_has_no_cube_unless_enabled():
    p = play("0 tap left\n5 tap cube\n6 end", discipline="longgammon")
    assert p.state["cube"]["enabled"] is False
    assert p.surviving(Refused)
    # With the cube enabled, white may double on the first turn (white rolls afresh).
    p = play("0 tap left\n5 tap cube\n6 end", discipline="longgammon", cube=True)
    assert p.state["phase"] == "cube_offered"


# --- flags (§2) ------------------------------------------------------------------------------

def test_flag_loses_the_match_and_freezes_both_clocks():
    # right's turn from 0 with 10 s reserve + 12 s delay: flag at 22 s.
    p = play("0 tap left\n30 end", length=7, reserve_ns=10 * S)
    assert p.state["phase"] == "match_over"
    assert (p.state["flag"], p.state["winner"], p.state["end_reason"]) == ("right", "left", "flag")
    assert p.state["score"] == {"left": 7, "right": 0}
    assert p.reserve_ms("right") == 0
    assert p.reserve_ms("left") == 10_000
    assert p.state["running"] is None


def test_overtime_adds_time_once_and_the_second_fall_loses():
    rules = MatchRules.defaults(reserve_ns=10 * S, time=TimeControl(
        TimeMode.DELAY, 12 * S, FlagRule.OVERTIME, 60 * S))
    first = play("0 tap left\n30 end", rules=rules)
    assert first.state["phase"] == "running"
    assert first.surviving(OvertimeGiven)[0].t == 22 * S
    assert first.reserve_ms("right") == 52_000
    second = play("0 tap left\n90 end", rules=rules)
    assert second.state["flag"] == "right"
    assert [e.t for e in second.effects if type(e).__name__ == "FlagFell"] == [82 * S]


# --- time modes end to end (§2) --------------------------------------------------------------

@pytest.mark.parametrize("mode, right_after_ms", [
    (TimeMode.DELAY, 60_000 - 3_000),        # 15 s turn, 12 s free
    (TimeMode.BRONSTEIN, 60_000 - 3_000),    # 15 s charged, 12 s given back
    (TimeMode.FISCHER, 60_000 - 3_000),      # 15 s charged, 12 s added
    (TimeMode.NONE, 60_000 - 15_000),
])
def test_each_time_mode_charges_a_turn(mode, right_after_ms):
    rules = MatchRules.defaults(reserve_ns=60 * S, time=TimeControl(
        mode, 12 * S, FlagRule.MATCH_LOSS, 60 * S))
    p = play("0 tap left\n15 tap right\n16 end", rules=rules)
    assert p.reserve_ms("right") == right_after_ms


def test_bronstein_refund_is_not_lost_when_the_turn_ends_the_game():
    rules = MatchRules.defaults(reserve_ns=60 * S, time=TimeControl(
        TimeMode.BRONSTEIN, 12 * S, FlagRule.MATCH_LOSS, 60 * S))
    p = play("0 tap left\n5 hold right\n10 tap left\n11 end", rules=rules)
    # right ran 0..5 s (the hold stopped it at its down edge) and got the 5 s back.
    assert p.reserve_ms("right") == 60_000
    ended = [e for e in p.surviving(TurnEnded) if e.side.value == "right"]
    assert ended[-1].refund == 5 * S


def test_between_games_both_clocks_are_stopped():
    p = play(game(0, "left") + "1000 end")
    assert p.state["running"] is None


# --- dice (§8) -------------------------------------------------------------------------------

def test_a_double_after_ones_own_roll_is_refused_and_void_allows_it_again():
    script = "0 tap left\n5 tap right\n10 tap left\n12 roll 3 1\n14 tap cube\n"
    p = play(script + "15 end")
    assert "rolled" in p.surviving(Refused)[0].why
    p = play(script + "15 void\n16 tap cube\n17 end")
    assert p.state["phase"] == "cube_offered"
    assert p.surviving(RollVoided)


def test_a_roll_by_the_side_whose_clock_is_not_running_is_an_early_roll():
    p = play("0 tap left\n5 roll L 6 5\n6 tap cube\n7 end")
    rolled = p.surviving(DiceRolled)[0]
    assert rolled.early and rolled.side.value == "left"


def test_opening_roll_dice_are_recorded_between_games():
    p = play("0 roll 6\n1 roll 3\n2 tap left\n3 end")
    opening = p.surviving(DiceRolled)
    assert [(e.dice, e.turn) for e in opening] == [((6,), 0), ((3,), 0)]


def test_a_void_after_a_turn_switch_strikes_nothing_of_the_new_turn():
    # left rolled and moved; right's turn starts; a VOID now has no roll of this turn to strike.
    p = play("0 tap left\n5 tap right\n8 roll 3 1\n10 tap left\n11 void\n12 end")
    assert any("no roll to void" in e.why for e in p.surviving(Ignored))


def test_crawford_played_counts_only_with_a_start_at_match_point():
    # 3-point match from 0-0 with crawford_played: the Crawford game is still to come.
    p = play(game(0, "left", 1) + "100 end", length=3, crawford_played=True)
    assert p.state["score"] == {"left": 2, "right": 0}
    assert p.state["crawford_game"] is True

"""Every arbiter action of SPEC §7 with fine points 9, 11 and 12, through scripted runs."""

from __future__ import annotations

import pytest

from gammonclock.core.effects import ArbiterCommand, Refused, Undone, Warned
from play_helpers import play

R14 = 14 * 60_000
OPENING = """
0 tap left
+10 tap right
+10 tap left
"""   # right's clock runs from 20 s (12 s delay)


def refused(p) -> list[str]:
    return [e.why for e in p.surviving(Refused)]


# --- pause / resume --------------------------------------------------------------------------

def test_pause_and_resume_freeze_the_running_turn():
    p = play(OPENING + "30 arbiter pause\n90 arbiter resume\n100 end")
    # right ran 20..30 and 90..100: 20 s, 12 s delay -> 8 s charged.
    assert p.state["phase"] == "running" and p.state["running"] == "right"
    assert p.reserve_ms("right") == R14 - 8_000


@pytest.mark.parametrize("script, command", [
    ("0 end\n", "pause"),                  # between games: no clock runs
    (OPENING, "resume"),                   # not paused
])
def test_pause_or_resume_where_it_means_nothing_is_refused(script, command):
    p = play(script.replace("0 end\n", "") + f"30 arbiter {command}\n31 end")
    assert refused(p)


def test_every_arbiter_action_is_logged_with_its_arguments():
    p = play(OPENING + "30 arbiter deduct left 45s\n31 arbiter warn right slow play\n32 end")
    said = [e.text for e in p.effects if isinstance(e, ArbiterCommand)]
    assert said == ["deduct left 45s", "warn right slow play"]


# --- adjust / deduct / add -------------------------------------------------------------------

@pytest.mark.parametrize("arg, expected_ms", [
    ("+30s", R14 + 30_000), ("30s", R14 + 30_000), ("-1m", R14 - 60_000),
    ("-20m", 0),                                   # clamped at zero (fine point 11)
])
def test_adjust_adds_or_removes_reserve(arg, expected_ms):
    p = play(OPENING + f"30 arbiter adjust left {arg}\n31 end")
    assert p.reserve_ms("left") == expected_ms


def test_adjust_of_the_running_side_changes_the_reserve_shown_now():
    # right at 40 s has run 20 s: 8 s charged; -1m takes it to R14 - 68 s.
    p = play(OPENING + "40 arbiter adjust right -1m\n41 end")
    assert p.reserve_ms("right") == R14 - 8_000 - 60_000 - 1_000


@pytest.mark.parametrize("amount, allowed", [("7m", True), ("7m0.001s", False), ("1m", True)])
def test_deduct_is_refused_over_half_the_remaining_reserve(amount, allowed):
    p = play(OPENING + f"30 arbiter deduct left {amount}\n31 end")
    if allowed:
        assert not refused(p)
    else:
        assert "more than half" in refused(p)[0]
        assert p.reserve_ms("left") == R14


def test_deduct_compares_with_the_reserve_shown_at_that_instant():
    # right at 40 s shows 14:00 - 8 s = 13:52; half of it is 6:56.
    ok = play(OPENING + "40 arbiter deduct right 6m56s\n40 end")
    too_much = play(OPENING + "40 arbiter deduct right 6m56.001s\n40 end")
    assert not refused(ok) and ok.reserve_ms("right") == (R14 - 8_000) // 2
    assert refused(too_much)


def test_add_gives_time_to_the_side_named():
    p = play(OPENING + "30 arbiter add left 2m\n31 end")
    assert p.reserve_ms("left") == R14 + 120_000


# --- point / forfeit / disqualify / warn / challenge -----------------------------------------

def test_point_takes_one_match_point_and_not_below_zero():
    p = play(OPENING + "30 hold left\n35 tap right\n40 arbiter point left\n41 arbiter point left\n"
             "42 end")
    assert p.state["score"] == {"left": 0, "right": 0}


@pytest.mark.parametrize(("lang", "said"), [
    ("en", "penalty point: one point taken from left; score 2-2"),
    ("ru", "штрафное очко: снято одно очко (левый); счёт 2-2"),
])
def test_a_penalty_point_says_it_is_one_not_a_correction(lang, said):
    # After `score 3 2`, `point left` answered "score set to 2-2": nothing said a penalty was
    # given (issue 32). A correction still says it is one.
    from gammonclock import words
    from gammonclock.core.effects import ScoreChanged
    from gammonclock.sides import Side

    p = play("5 arbiter score 3 2\n6 arbiter point left\n7 end")
    correction, penalty = [e for e in p.effects if isinstance(e, ScoreChanged)]
    assert (correction.penalty, penalty.penalty) == (None, Side.LEFT)
    assert words.said(penalty, lang) == said
    assert words.said(correction, lang) == {"en": "score set to 3-2",
                                           "ru": "счёт изменён на 3-2"}[lang]
    assert penalty.as_dict()["penalty"] == "left"


def test_forfeit_in_a_game_scores_the_cube_value_for_the_opponent():
    p = play(OPENING + "30 tap cube\n35 tap left\n40 arbiter forfeit left\n41 end")
    assert p.state["phase"] == "between_games"
    assert p.state["score"] == {"left": 0, "right": 2}
    assert p.state["cube"] == {"value": 1, "owner": None, "enabled": True}
    assert p.state["game"] == 2


def test_forfeit_with_points_scores_those_points():
    p = play(OPENING + "40 arbiter forfeit right 3\n41 end")
    assert p.state["score"] == {"left": 3, "right": 0}


def test_forfeit_ends_the_running_turn_by_the_normal_rule():
    # right's turn 20..40 s: 20 s with a 12 s delay -> 8 s charged.
    p = play(OPENING + "40 arbiter forfeit right\n41 end")
    assert p.reserve_ms("right") == R14 - 8_000


def test_forfeit_between_games_forfeits_the_next_game_which_counts_as_played():
    p = play("5 arbiter forfeit left\n6 end")
    assert p.state["score"] == {"left": 0, "right": 1}
    assert p.state["game"] == 2


def test_forfeit_during_a_break_is_refused():
    p = play(OPENING + "30 hold left\n35 tap right\n40 hold right\n60 arbiter forfeit left\n"
             "61 end")
    assert p.state["phase"] == "break"
    assert "break" in refused(p)[0]


def test_forfeit_that_ends_the_match_ends_it_by_score():
    p = play(OPENING + "40 arbiter forfeit right 7\n41 end")
    assert p.state["phase"] == "match_over"
    assert (p.state["winner"], p.state["end_reason"]) == ("left", "score")


def test_disqualify_ends_the_match_against_the_side():
    p = play(OPENING + "40 arbiter disqualify right\n41 end")
    assert p.state["phase"] == "match_over"
    assert p.state["winner"] == "left"
    assert p.state["end_reason"] == "disqualified"
    assert p.state["score"]["left"] == 7
    assert p.state["running"] is None
    # The running turn ended by the normal end-of-turn rule (fine point 9).
    assert p.reserve_ms("right") == R14 - 8_000


def test_warn_is_logged_and_changes_nothing():
    before = play(OPENING + "40 end").state
    p = play(OPENING + "35 arbiter warn left touching the dice\n40 end")
    assert p.state == before
    assert p.surviving(Warned)[0].text == "touching the dice"


def test_the_third_rejected_challenge_loses_the_match():
    script = OPENING + "".join(f"{30 + i} arbiter challenge left {o}\n"
                               for i, o in enumerate(["rejected", "upheld", "rejected"]))
    two = play(script + "40 end")
    assert two.state["phase"] == "running"
    three = play(script + "39 arbiter challenge left rejected\n40 end")
    assert three.state["phase"] == "match_over"
    assert (three.state["winner"], three.state["end_reason"]) == ("right", "challenges")
    assert three.state["score"]["right"] == 7


# --- score and cube corrections --------------------------------------------------------------

def test_score_correction_sets_the_score():
    p = play("5 arbiter score 3 2\n6 end")
    assert p.state["score"] == {"left": 3, "right": 2}


@pytest.mark.parametrize("score", ["7 0", "0 9", "2.5 1"])
def test_score_correction_must_stay_below_the_length_in_whole_points(score):
    p = play(f"5 arbiter score {score}\n6 end")
    assert p.state["score"] == {"left": 0, "right": 0}
    assert refused(p)


def test_score_correction_between_games_decides_the_crawford_game():
    p = play("5 arbiter score 6 2\n6 end")
    assert p.state["crawford_game"] is True
    back = play("5 arbiter score 6 2\n6 arbiter score 5 2\n7 end")
    assert back.state["crawford_game"] is False


def test_a_penalty_point_never_creates_or_cancels_the_crawford_game():
    p = play("5 arbiter score 6 2\n6 arbiter point left\n7 end")
    assert p.state["score"] == {"left": 5, "right": 2}
    assert p.state["crawford_game"] is True


@pytest.mark.parametrize("command, cube", [
    ("cube 4 left", {"value": 4, "owner": "left", "enabled": True}),
    ("cube 1", {"value": 1, "owner": None, "enabled": True}),
])
def test_cube_correction(command, cube):
    p = play(OPENING + f"40 arbiter {command}\n41 end")
    assert p.state["cube"] == cube


def test_cube_correction_above_one_needs_an_owner_when_the_cube_is_in_the_middle():
    p = play(OPENING + "40 arbiter cube 4\n41 end")
    assert p.state["cube"]["value"] == 1
    assert "owner" in refused(p)[0]


# --- undo (fine point 12) --------------------------------------------------------------------

def test_undo_of_a_turn_switch_charges_the_time_since_to_who_was_running_before():
    # right switched at 30 s (10 s, inside the delay); undone at 50 s: right ran 20..50 = 30 s.
    p = play(OPENING + "30 tap right\n50 arbiter undo\n51 end")
    assert p.state["running"] == "right"
    assert p.reserve_ms("right") == R14 - 18_000 - 1_000
    assert p.reserve_ms("left") == R14
    assert "right's turn switch" in p.surviving(Undone)[0].what


def test_undo_repeats_to_go_further_back():
    p = play(OPENING + "30 tap right\n50 arbiter undo\n50 arbiter undo\n51 end")
    # The second undo takes back left's switch at 20 s: left's turn runs from 10 s.
    assert p.state["running"] == "left"
    assert p.reserve_ms("left") == R14 - 29_000


def test_undo_drops_inputs_that_had_no_effect_since():
    # After right's switch at 30 s, right's out-of-turn tap at 35 s did nothing. Undone with the
    # switch, it must not come back as a switch of right's own turn.
    p = play(OPENING + "30 tap right\n35 tap right\n50 arbiter undo\n51 end")
    assert p.state["running"] == "right"


def test_undo_of_a_double_and_of_a_take():
    doubled = play(OPENING + "30 tap cube\n40 arbiter undo\n41 end")
    assert doubled.state["phase"] == "running" and doubled.state["running"] == "right"
    taken = play(OPENING + "30 tap cube\n35 tap left\n40 arbiter undo\n41 end")
    assert taken.state["phase"] == "cube_offered" and taken.state["cube"]["value"] == 1


def test_undo_of_a_game_start():
    p = play("0 tap left\n10 arbiter undo\n11 end")
    assert p.state["phase"] == "between_games"
    assert p.reserve_ms("right") == R14


def test_undo_of_a_confirmed_result_returns_to_the_result_entry():
    p = play(OPENING + "30 hold left\n35 tap right\n40 arbiter undo\n41 end")
    assert p.state["phase"] == "result_entry"
    assert p.state["score"] == {"left": 0, "right": 0}


def test_undo_after_a_match_won_on_score_returns_to_the_result_entry():
    p = play(OPENING + "30 hold left\n35 tap right\n40 arbiter undo\n41 end", length=1)
    assert p.state["phase"] == "result_entry"
    assert p.state["winner"] is None


@pytest.mark.parametrize("ending", ["arbiter disqualify left", "arbiter challenge left rejected"])
def test_undo_is_refused_after_a_match_lost_other_than_by_score(ending):
    challenges = "30 arbiter challenge left rejected\n31 arbiter challenge left rejected\n"
    p = play(OPENING + challenges + f"32 {ending}\n40 arbiter undo\n41 end")
    assert p.state["phase"] == "match_over"
    assert refused(p)


def test_undo_is_refused_after_a_flag():
    p = play(OPENING + "60 arbiter undo\n61 end", reserve_ns=10**9)
    assert p.state["end_reason"] == "flag"
    assert refused(p)


def test_undo_with_nothing_to_undo_is_refused():
    p = play("5 arbiter undo\n6 end")
    assert "nothing to undo" in refused(p)[0]


def test_undo_judges_later_presses_again_in_the_world_without_the_action():
    # Game 1: right enters a result at 5 s; left confirms at 10 s (undone later). left holds at
    # 15 s (a break) and holds again at 20 s for 3 s: in the break a hold means nothing, so that
    # press ended the break. Without the confirmation, the press at 15 s is a tap of the
    # non-holder (it confirms) and the press at 20 s is a hold between games: a break.
    script = "0 tap left\n5 hold right\n{confirm}15 hold left\n20 hold left 3\n{undo}31 end"
    undone = play(script.format(confirm="10 tap left\n", undo="30 arbiter undo\n"))
    reference = play(script.format(confirm="", undo=""))
    assert reference.state["phase"] == "break"
    assert undone.state == reference.state
    assert undone.match == reference.match


def test_undo_takes_back_a_confirmation_given_with_a_long_press():
    # right confirms left's result with a 3 s press: in result_entry a hold means nothing, so
    # the press is the confirmation, and undo must take it back like a short one.
    p = play(OPENING + "30 hold left\n35 hold right 3\n40 arbiter undo\n41 end")
    assert p.state["phase"] == "result_entry"
    assert p.state["score"] == {"left": 0, "right": 0}


# --- corrections while a result is entered, a double is offered, a break runs ----------------

def test_a_cube_correction_during_result_entry_sets_what_the_result_is_worth():
    p = play(OPENING + "30 hold right\n34 arbiter cube 4 left\n36 tap left\n37 end")
    assert p.state["score"] == {"left": 0, "right": 4}


def test_a_cube_correction_is_refused_while_a_double_is_on_offer_even_when_paused():
    p = play(OPENING + "30 tap cube\n32 arbiter pause\n33 arbiter cube 4 right\n34 arbiter resume\n"
             "35 tap left\n36 end")
    assert "double is offered" in refused(p)[0]
    assert p.state["cube"] == {"value": 2, "owner": "left", "enabled": True}


def test_a_score_correction_during_a_break_decides_the_crawford_game():
    p = play("0 tap left\n5 hold right\n8 tap left\n10 hold left\n20 arbiter score 6 1\n21 end")
    assert p.state["phase"] == "break"
    assert p.state["crawford_game"] is True
    assert p.state["cube"]["enabled"] is False


@pytest.mark.parametrize("ending", ["arbiter disqualify left", "arbiter forfeit left 7"])
def test_game_is_the_last_game_played_when_the_match_ends_between_games(ending):
    # Game 1 ends at 8 s; the match then ends before game 2 starts.
    p = play(f"0 tap left\n5 hold right\n8 tap left\n20 {ending}\n21 end")
    assert p.state["phase"] == "match_over"
    expected = 1 if "disqualify" in ending else 2   # a forfeit between games plays game 2
    assert p.state["game"] == expected


def test_game_after_a_flag_in_a_break_overrun_is_the_last_game_played():
    p = play("0 tap left\n5 hold right\n8 tap left\n10 hold left\n400 end", reserve_ns=60 * 10**9)
    assert (p.state["end_reason"], p.state["flag"], p.state["game"]) == ("flag", "left", 1)

"""Every row of SPEC §3's gesture table, and fine points 1–4 and 13, through real button edges."""

from __future__ import annotations

import pytest

from gammonclock.core.effects import (
    BreakStarted,
    DoubleOffered,
    GameStarted,
    Ignored,
    Paused,
    Refused,
    ResultEntryStarted,
    Resumed,
    Rewound,
    Shown,
    TurnEnded,
)
from gammonclock.core.rules import ResultKind
from play_helpers import play

R14 = 14 * 60_000          # a 7-point backgammon reserve, ms
# A game under way: right won the opening roll (left taps), right moved, left moved; right's
# clock has run since 20 s.
OPENING = """
0 tap left
+10 tap right
+10 tap left
"""


def row(phase_script: str, action: str) -> str:
    return phase_script + action


# --- between_games ---------------------------------------------------------------------------

@pytest.mark.parametrize("tapper, starter", [("left", "right"), ("right", "left")])
def test_between_games_tap_starts_the_game_with_the_other_sides_turn(tapper, starter):
    p = play(f"0 tap {tapper}\n5 end")
    assert p.state["phase"] == "running"
    assert p.state["running"] == starter
    assert p.surviving(GameStarted)[0].starter.value == starter
    # The starter's first 5 s are inside the 12 s delay: nothing charged yet.
    assert p.reserve_ms(starter) == R14


def test_between_games_hold_asks_for_a_break_and_is_refused_before_game_one_ended():
    p = play("0 hold left\n5 end")
    assert p.state["phase"] == "between_games"
    assert p.state["running"] is None
    refusal = p.surviving(Refused)
    assert refusal and "after the first game" in refusal[0].why
    # The game start its down edge caused was undone (the hold means something here).
    assert not p.surviving(GameStarted)


def test_between_games_tap_cube_shows_the_info_page_and_changes_nothing():
    before = play("0 end").state
    p = play("0 tap cube\n1 end")
    assert p.state == before
    assert any("score 0-0" in e.text for e in p.surviving(Shown))


# --- running ---------------------------------------------------------------------------------

def test_running_tap_by_the_side_on_turn_switches():
    p = play(OPENING + "+15 tap right\n+1 end")
    assert p.state["running"] == "left"
    # right's turn ran 15 s with a 12 s delay: 3 s charged.
    assert p.reserve_ms("right") == R14 - 3_000


def test_running_tap_by_the_other_side_is_ignored_and_logged():
    p = play(OPENING + "+5 tap left\n+1 end")
    assert p.state["running"] == "right"
    assert any("out of turn" in e.why for e in p.surviving(Ignored))


def test_running_tap_cube_doubles_when_legal():
    p = play(OPENING + "+5 tap cube\n+1 end")
    assert p.state["phase"] == "cube_offered"
    assert p.state["running"] == "left"          # the taker decides on their own clock
    assert p.surviving(DoubleOffered)[0].value == 2
    assert p.state["cube"]["value"] == 1          # the value doubles only on a take


def test_running_tap_cube_on_the_opening_turn_is_refused_and_changes_nothing():
    p = play("0 tap left\n+5 tap cube\n+1 end")
    assert p.state["phase"] == "running" and p.state["running"] == "right"
    assert "first turn" in p.surviving(Refused)[0].why


@pytest.mark.parametrize("holder", ["left", "right"])
def test_running_hold_enters_the_result_with_clocks_stopped_at_the_down_edge(holder):
    # right's clock runs from 20 s; the hold goes down at 40 s (20 s run: 8 s charged).
    p = play(OPENING + f"40 hold {holder}\n60 end")
    assert p.state["phase"] == "result_entry"
    assert p.state["running"] is None
    assert p.reserve_ms("right") == R14 - 8_000
    assert p.reserve_ms("left") == R14
    proposal = p.surviving(ResultEntryStarted)[0].proposal
    assert (proposal.winner.value, proposal.kind, proposal.points) == (holder, ResultKind.SINGLE, 1)


@pytest.mark.parametrize("setup", [OPENING, OPENING + "+5 tap cube\n"],
                         ids=["running", "cube_offered"])
def test_hold_cube_pauses_at_the_down_edge(setup):
    p = play(setup + "40 hold cube\n60 end")
    assert p.state["phase"] == "paused"
    assert p.state["running"] is None
    assert p.surviving(Paused)[0].t == 40 * 10**9


def test_paused_hold_cube_resumes_the_turn_with_what_it_had_left():
    # right's turn: 20 s..25 s run (5 s of delay used), paused 25..40, resumed at the down edge
    # of the hold at 40 s: 7 s of delay left, then 10 s charged by 57 s.
    p = play(OPENING + "25 hold cube\n40 hold cube\n57 end")
    assert p.state["phase"] == "running"
    assert p.state["running"] == "right"
    assert p.surviving(Resumed)[0].t == 40 * 10**9
    assert p.reserve_ms("right") == R14 - 10_000


# --- cube_offered ----------------------------------------------------------------------------

DOUBLED = OPENING + "30 tap cube\n"    # right doubles at 30 s; left decides


def test_cube_offered_tap_by_taker_takes():
    p = play(DOUBLED + "35 tap left\n36 end")
    assert p.state["phase"] == "running"
    assert p.state["running"] == "right"           # the doubler's turn, fresh delay
    assert p.state["cube"] == {"value": 2, "owner": "left", "enabled": True}


def test_cube_offered_hold_by_taker_passes():
    p = play(DOUBLED + "35 hold left\n40 end")
    assert p.state["phase"] == "result_entry"
    assert p.state["running"] is None
    entry = p.surviving(ResultEntryStarted)[0]
    assert entry.passed
    assert (entry.proposal.winner.value, entry.proposal.kind, entry.proposal.points) == \
        ("right", ResultKind.PASS, 1)
    assert p.state["cube"]["value"] == 1


@pytest.mark.parametrize("action, shown", [("tap cube", True), ("tap right", False),
                                           ("hold right", False)])
def test_cube_offered_anything_else_is_ignored(action, shown):
    p = play(DOUBLED + f"35 {action}\n40 end")
    assert p.state["phase"] == "cube_offered"
    assert p.state["running"] == "left"
    if shown:
        assert any("take: press your clock" in e.text for e in p.surviving(Shown))


# --- result_entry ----------------------------------------------------------------------------

ENTRY = OPENING + "30 hold left\n"     # left enters the result at 30 s: left wins single


def test_result_entry_tap_cube_cycles_the_proposals():
    p = play(ENTRY + "35 tap cube\n36 tap cube\n37 tap cube\n38 end")
    assert p.match.entry.proposal.describe() == "right wins single (1 point)"


def test_result_entry_tap_cube_wraps_around_the_cycle():
    taps = "".join(f"{35 + i} tap cube\n" for i in range(6))
    p = play(ENTRY + taps + "45 end")
    assert p.match.entry.proposal.describe() == "left wins single (1 point)"


def test_result_entry_tap_by_the_other_side_confirms():
    p = play(ENTRY + "35 tap cube\n36 tap right\n37 end")
    assert p.state["phase"] == "between_games"
    assert p.state["score"] == {"left": 2, "right": 0}
    assert p.state["game"] == 2


def test_result_entry_tap_by_the_holder_cancels_and_the_turn_runs_on():
    # right's clock ran 20..30 s (delay), stopped for the entry, runs again from 40 s.
    p = play(ENTRY + "40 tap left\n50 end")
    assert p.state["phase"] == "running"
    assert p.state["running"] == "right"
    # 10 s before the entry + 10 s after the cancel = 20 s, 12 s delay: 8 s charged.
    assert p.reserve_ms("right") == R14 - 8_000


# --- break -----------------------------------------------------------------------------------

# left wins game 1 (a 7-point match: one break each)
GAME_ONE_OVER = OPENING + "30 hold left\n35 tap right\n"


def test_break_tap_by_the_side_that_asked_ends_it_early():
    p = play(GAME_ONE_OVER + "40 hold right\n100 tap right\n101 end")
    assert p.state["phase"] == "between_games"
    assert p.state["breaks_left"] == {"left": 1, "right": 0}


def test_break_tap_by_the_other_side_is_ignored():
    p = play(GAME_ONE_OVER + "40 hold right\n100 tap left\n101 end")
    assert p.state["phase"] == "break"
    assert p.surviving(BreakStarted)[0].side.value == "right"


# --- match_over ------------------------------------------------------------------------------

@pytest.mark.parametrize("action", ["tap left", "tap right", "tap cube", "hold left", "hold cube"])
def test_match_over_ignores_everything(action):
    script = OPENING + "30 hold right\n35 tap left\n"  # right wins a 1-point match
    over = play(script + "40 end", length=1).state
    assert over["phase"] == "match_over" and over["winner"] == "right"
    p = play(script + f"40 {action}\n50 end", length=1)
    assert p.state == over


# --- fine point 1: a hold undoes its tap only where the hold means something ----------------

def test_hold_of_the_running_side_undoes_its_switch_exactly():
    p = play(OPENING + "40 hold right\n50 end")
    # The down edge at 40 s switched to left; the hold undid it: left was never charged.
    assert p.state["phase"] == "result_entry"
    assert p.reserve_ms("left") == R14
    assert any(isinstance(e, Rewound) for e in p.effects)
    assert not [e for e in p.surviving(TurnEnded) if e.t == 40 * 10**9]


def test_doublers_hold_in_cube_offered_means_nothing_so_nothing_is_undone():
    p = play(DOUBLED + "35 hold right\n40 end")
    assert p.state["phase"] == "cube_offered"
    assert not any(isinstance(e, Rewound) for e in p.effects)


def test_confirming_with_a_long_press_stands():
    # In result_entry a hold means nothing: the confirmation at the down edge stands, and the
    # press does not turn into a break request once the phase is between_games.
    p = play(ENTRY + "35 hold right\n40 end")
    assert p.state["phase"] == "between_games"
    assert p.state["score"] == {"left": 1, "right": 0}
    assert p.state["breaks_left"] == {"left": 1, "right": 1}


def test_breaks_ending_tap_held_long_stands():
    p = play(GAME_ONE_OVER + "40 hold right\n100 hold right\n105 end")
    assert p.state["phase"] == "between_games"


# --- fine point 2: inputs inside a hold window are applied again after the hold --------------

def test_opponents_tap_inside_the_hold_window_becomes_the_confirmation():
    # left's hold goes down at 40 s; right taps at 41 s (out of turn then) ; at 42 s the hold is
    # recognised: result entry from 40 s, and right's tap confirms left's single win.
    p = play(OPENING + "40 down left\n41 tap right\n43 up left\n44 end")
    assert p.state["phase"] == "between_games"
    assert p.state["score"] == {"left": 1, "right": 0}


def test_arbiter_command_inside_the_hold_window_is_applied_again():
    p = play(OPENING + "40 down left\n41 arbiter add right 30s\n43 up left\n44 end")
    assert p.state["phase"] == "result_entry"
    assert p.reserve_ms("right") == R14 - 8_000 + 30_000


# --- fine point 3: debounce ------------------------------------------------------------------

@pytest.mark.parametrize("gap_ms, released", [(29, False), (30, True), (31, True)])
def test_an_edge_closer_than_debounce_to_the_last_accepted_edge_is_ignored(gap_ms, released):
    # right presses at 40 s; the release comes gap_ms later. Closer than 30 ms it is a bounce:
    # the button stays down, and at 42 s the press is a hold (result entry).
    p = play(OPENING + f"40 down right\n{40 + gap_ms / 1000:.3f} up right\n45 end")
    if released:
        assert p.state["phase"] == "running" and p.state["running"] == "left"
    else:
        assert p.state["phase"] == "result_entry"


def test_a_bounced_press_does_not_switch_twice():
    # The switch chatters: down, up 10 ms later, down 10 ms after that. Only the first counts.
    p = play(OPENING + "40 down right\n40.010 up right\n40.020 down right\n40.1 up right\n45 end")
    assert p.state["running"] == "left"
    assert len([e for e in p.surviving(TurnEnded) if e.t >= 40 * 10**9]) == 1


def test_an_edge_that_does_not_change_the_buttons_state_is_ignored():
    p = play(OPENING + "40 down right\n40.5 down right\n41 up right\n42 end")
    assert p.state["running"] == "left"


# --- fine point 4: same instant --------------------------------------------------------------

def test_a_tap_at_exactly_the_flag_instant_is_too_late():
    # 1-second reserve, 12 s delay: right's turn from 20 s flags at 33 s exactly.
    p = play(OPENING + "33 tap right\n34 end", reserve_ns=10**9)
    assert p.state["phase"] == "match_over"
    assert p.state["flag"] == "right"


def test_a_tap_one_nanosecond_before_the_flag_is_in_time():
    p = play(OPENING + "32.999999999 tap right\n34 end", reserve_ns=10**9)
    assert p.state["phase"] == "running"
    assert p.reserve_ms("right") == 0


def test_a_hold_release_at_exactly_hold_s_is_a_hold():
    p = play(OPENING + "40 hold left 2\n43 end")
    assert p.state["phase"] == "result_entry"


def test_a_release_just_before_hold_s_is_a_tap():
    p = play(OPENING + "40 hold left 1.999\n43 end")
    assert p.state["phase"] == "running"


# --- fine point 13: the run end --------------------------------------------------------------

def test_a_hold_on_the_last_line_is_never_recognised():
    p = play(OPENING + "40 hold left")
    assert p.state["phase"] == "running"


def test_a_hold_before_end_is_recognised():
    p = play(OPENING + "40 hold left\n45 end")
    assert p.state["phase"] == "result_entry"

"""The panels' screens (hardware/screens.py): what each panel shows in every phase, pixel-exact
against reference PNGs, and when the shown digits change.

Every state here comes from the real engine driven through inputs (`play`). The reference PNGs live
in tests/hardware/reference/screens/; a changed look is accepted deliberately, never silently:

    GAMMONCLOCK_UPDATE_REFERENCES=1 python -m pytest tests/hardware/test_screens.py

writes them (each one written is reported as a warning, and nothing is compared in that run);
look at the PNGs before committing them. A missing or different reference fails, and the actual
image is left in the temporary folder named in the failure, for a look.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from PIL import Image

from arbiter_helpers import PIN, WRONG_PIN_TAPS, chord, entry
from gammonclock.core.effects import (
    ChallengeDecided,
    DiceRolled,
    Ignored,
    OvertimeGiven,
    Recovered,
    Refused,
    Shown,
    Warned,
)
from gammonclock.core.match import Phase, Recover
from gammonclock.core.pin import hash_pin
from gammonclock.core.timecontrol import FlagRule, TimeControl, TimeMode
from gammonclock.hardware import glyphs, screens
from gammonclock.hardware.screens import (
    HEIGHT,
    INFO_PAGE,
    WIDTH,
    Clock,
    Layout,
    config_error_view,
    format_countdown,
    format_reserve,
    next_change_at,
    notice_for,
    panel_view,
    render,
)
from gammonclock.sides import Pair, Side
from play_helpers import play
from property_helpers import property_settings
from screen_helpers import (
    OPENING,
    REFERENCES,
    check_reference,
    check_screen,
    same_pixels,
)

S = 10**9
MS = 10**6
LEFT, RIGHT = Side.LEFT, Side.RIGHT
NAMES = Pair("Anna", "Boris")
def views(script: str, notice: str | None = None, **overrides) -> tuple[object, Pair]:
    p = play(script, names=NAMES, **overrides)
    m = p.match
    return p, Pair(panel_view(m, LEFT, m.now, notice), panel_view(m, RIGHT, m.now, notice))


# --- the clock screen ------------------------------------------------------------------------

def test_running_shows_own_reserve_large_the_opponent_below_and_the_delay():
    p, v = views(OPENING + "105.5 end")
    left, right = v.left, v.right
    assert left.layout is Layout.CLOCK
    assert (left.header, left.header_right) == ("Anna", "0-0 to 7")
    assert left.own == Clock("13:12")                      # stopped: no marker, no delay
    assert left.opponent == Clock("13:32", running=True, delay="6", name="Boris")
    assert right.own == Clock("13:32", running=True, delay="6")
    assert right.opponent == Clock("13:12", name="Anna")
    assert right.header_right == "0-0 to 7" and right.status == ()
    check_screen("running-left", left)
    check_screen("running-right", right)


def test_reserve_below_20_seconds_shows_tenths_on_the_players_own_clock():
    # 25 s each: right's first turn has run 20.05 s, 12 s of it delay: 25 - 8.05 = 16.95 s.
    played, v = views("0 tap left\n20.05 end", reserve_ns=25 * S)
    assert v.right.own == Clock("16.9", running=True)
    # The line below shows whole seconds: the waiting player's panel changes once a second, not
    # ten times (a 100 kHz bus stays under 5 % busy: benchmarks/bench_bus.py).
    assert v.left.opponent == Clock("0:16", running=True, name="Boris")
    match = played.match
    assert next_change_at(match, RIGHT, match.now) == match.now + S // 20 + 1       # 16.9
    assert next_change_at(match, LEFT, match.now) == match.now + S // 20 * 19 + 1   # 0:16
    check_screen("running-tenths-right", v.right)
    check_screen("running-tenths-left", v.left)


def test_an_hour_or_more_shows_hours_in_smaller_digits():
    _, v = views("0 tap left\n1 end", reserve_ns=2 * 3600 * S + 5 * 60 * S)
    assert v.right.own == Clock("2:05:00", running=True, delay="11")
    check_screen("running-hours-right", v.right)


def test_cube_owned_shows_beside_its_owner():
    # Right doubles at 130 s, left takes at 140 s: the cube is 2, left owns it, right's turn runs.
    _, v = views(OPENING + "130 tap cube\n140 tap left\n150 end")
    assert v.left.own.cube == "2" and v.left.opponent.cube == ""
    assert v.right.own.cube == "" and v.right.opponent.cube == "2"
    assert v.right.own.running and v.right.own.delay == "2"
    check_screen("cube-owned-left", v.left)
    check_screen("cube-owned-right", v.right)


def test_crawford_game_is_marked_in_the_header():
    # 3-point match: left wins a gammon (2-0), so game 2 is the Crawford game.
    _, v = views("0 tap left\n5 tap right\n10 tap left\n15 hold left\n18 tap cube\n"
                 "20 tap right\n30 end", length=3)
    assert v.left.header_right == "CRAWFORD 2-0 to 3"
    assert v.right.header_right == "CRAWFORD 0-2 to 3"
    check_screen("crawford-left", v.left)


# --- the dice (SPEC §8, §15) -----------------------------------------------------------------

def test_the_running_players_roll_is_shown_on_their_line():
    # Right's turn runs from 100 s with its delay; right rolls 5-3 at 101 s.
    p, v = views(OPENING + "101 roll 5 3\n105.5 end")
    assert p.match.last_roll is not None and p.match.last_roll.counted
    assert v.right.own.dice == (5, 3) and v.right.opponent.dice == ()
    assert v.left.opponent.dice == (5, 3) and v.left.own.dice == ()
    check_screen("dice-running-left", v.left)
    check_screen("dice-running-right", v.right)


def test_the_opening_roll_says_whose_die_is_whose():
    # Backgammon: the clock does not know who plays white, so each die says its colour.
    m = play("1 roll 5\n2 roll 3\n3 end", names=NAMES).match
    view = panel_view(m, LEFT, m.now, opening=(5, 3))
    assert view.opening == (("white", 5), ("black", 3))
    check_screen("dice-opening-left", view)



def test_before_the_first_game():
    p, v = views("1 end")
    assert p.match.phase is Phase.BETWEEN_GAMES
    assert v.left.own == Clock("14:00") and v.left.opponent == Clock("14:00", name="Boris")
    # Ready (SPEC §13.2): the time control is on the panels before the first game.
    assert v.left.status == ("12s delay: tap to start",)
    check_screen("between-games-left", v.left)
    check_screen("between-games-right", v.right)


@pytest.mark.parametrize("mode, delay_s, words", [
    (TimeMode.DELAY, 12, "12s delay: tap to start"),
    (TimeMode.BRONSTEIN, 8, "8s Bronst: tap to start"),
    (TimeMode.FISCHER, 5, "+5s/move: tap to start"),
    (TimeMode.NONE, 12, "no delay: tap to start"),
    (TimeMode.DELAY, 0, "no delay: tap to start"),
])
def test_the_ready_screen_says_the_time_control_and_game_2_does_not(mode, delay_s, words):
    time = TimeControl(mode, delay_s * S, FlagRule.MATCH_LOSS, 60 * S)
    _, v = views("1 end", time=time)
    assert v.left.status == (words,) and v.right.status == (words,)
    _, later = views("0 tap left\n5 tap right\n10 hold left\n13 tap right\n20 end", time=time)
    assert later.left.status == ("game 2: tap to start",)


def test_longgammon_next_game_names_who_plays_white():
    # Game 1: left taps, right plays white; after it the previous black (left) starts as white.
    p, v = views("0 tap left\n5 tap right\n10 hold left\n13 tap right\n20 end",
                 discipline="longgammon")
    assert p.match.must_start is LEFT
    assert v.left.status == ("game 2: you're white",)
    assert v.right.status == ("game 2: tap to start",)
    check_screen("longgammon-white-left", v.left)
    check_screen("longgammon-white-right", v.right)


def test_cube_tap_between_games_shows_the_info_page():
    p = play("0 tap left\n5 hold left\n8 tap right\n20 tap cube\n21 end", names=NAMES)
    notice = notice_for(p.surviving(Shown)[-1])
    assert notice == INFO_PAGE
    m = p.match
    view = panel_view(m, RIGHT, m.now, notice)
    assert view.layout is Layout.MESSAGE and view.title == "GAME 2 NEXT"
    assert view.lines == (("Boris", "14:00"), ("Anna", "14:00"))
    assert view.footer == "breaks left 1-1" and view.notice is None
    check_screen("info-page-right", view)
    # Once play starts the info page lapses: the clock screen returns.
    started = play("0 tap left\n5 hold left\n8 tap right\n20 tap cube\n22 tap left\n23 end",
                   names=NAMES).match
    assert panel_view(started, RIGHT, started.now, notice).layout is Layout.CLOCK


# --- the cube --------------------------------------------------------------------------------

def test_double_offered_tells_the_taker_what_to_do_and_the_doubler_who_decides():
    p, v = views(OPENING + "130 tap cube\n133.5 end")
    assert p.match.phase is Phase.CUBE_OFFERED
    taker, doubler = v.left, v.right
    assert taker.own == Clock("13:12", running=True, delay="8")
    assert taker.opponent is None
    assert taker.status == ("Boris doubles to 2", "tap=take  hold=pass")
    assert doubler.own == Clock("13:14")    # right's turn 100-130 s cost 18 s
    assert doubler.opponent == Clock("13:12", running=True, delay="8", name="Anna")
    assert doubler.status == ("you double to 2",)
    check_screen("cube-offered-left", taker)
    check_screen("cube-offered-right", doubler)


# --- result entry ----------------------------------------------------------------------------

def test_result_entry_shows_the_proposal_and_how_to_confirm_cycle_or_cancel():
    # Left holds at 100 s (their turn) and cycles once: "left wins gammon".
    _, v = views("0 tap left\n40 tap right\n100 hold left\n103 tap cube\n104 end")
    holder, other = v.left, v.right
    assert holder.layout is Layout.MESSAGE and holder.title == "RESULT?"
    assert holder.lines == (("Anna wins", "gammon"), ("", "2 points"))
    assert holder.footer == "cube=next tap=cancel"
    assert other.lines == holder.lines and other.footer == "cube=next tap=OK"
    check_screen("result-entry-left", holder)
    check_screen("result-entry-right", other)


def test_result_entry_after_a_pass_proposes_the_pass():
    _, v = views(OPENING + "130 tap cube\n140 hold left\n145 end")
    assert v.right.lines == (("Boris wins", "pass"), ("", "1 point"))
    assert v.left.footer == "cube=next tap=cancel"
    check_screen("result-pass-right", v.right)


def test_longgammon_draw_proposal():
    _, v = views("0 tap left\n40 tap right\n100 hold left\n" + "".join(
        f"{101 + i} tap cube\n" for i in range(4)) + "106 end", discipline="longgammon")
    assert v.left.lines == (("draw", ""), ("", "0.5 points each"))
    check_screen("result-draw-left", v.left)


# --- breaks ----------------------------------------------------------------------------------

GAME_THEN_BREAK = "0 tap left\n5 tap right\n10 tap left\n15 hold left\n20 tap right\n30 hold left\n"


def test_break_countdown():
    p, v = views(GAME_THEN_BREAK + "40.5 end")
    assert p.match.phase is Phase.BREAK and p.match.brk.ends_at == 330 * S
    assert v.left.layout is Layout.COUNTDOWN
    assert (v.left.title, v.left.big) == ("BREAK: tap to end", "4:49")
    assert (v.right.title, v.right.big) == ("BREAK: Anna", "4:49")
    check_screen("break-left", v.left)
    check_screen("break-right", v.right)


def test_break_overrun_runs_the_late_players_reserve():
    p, v = views(GAME_THEN_BREAK + "345.2 end")
    assert p.match.brk.overrun and p.match.running_side is LEFT
    late, other = v.left, v.right
    assert late.own == Clock("13:44", running=True)       # 15.2 s late, no delay
    assert late.status == ("break over: press clock",)
    assert other.opponent == Clock("13:44", running=True, name="Anna")
    assert other.status == ("Anna is late",)
    check_screen("break-overrun-left", late)
    check_screen("break-overrun-right", other)


# --- pause and recovery ----------------------------------------------------------------------

def test_paused_shows_both_reserves_and_how_to_resume():
    p, v = views(OPENING + "110 hold cube\n115 end")
    assert p.match.phase is Phase.PAUSED
    assert v.left.title == "PAUSED" and v.left.footer == "hold cube to resume"
    assert v.left.lines == (("Anna", "13:12"), ("Boris", "13:32"))
    check_screen("paused-left", v.left)


def test_recovered_after_an_outage():
    p = play(OPENING + "105.5 end", names=NAMES)
    engine, effects = p.engine.feed(Recover(p.engine.now))
    recovered = [e for e in effects if isinstance(e, Recovered)]
    assert recovered and recovered[0].paused
    notice = notice_for(recovered[0])
    assert notice == "recovered: paused, hold cube to resume"
    m = engine.match
    view = panel_view(m, RIGHT, m.now, notice)
    assert view.title == "PAUSED" and view.notice == notice
    check_screen("recovered-right", view)
    assert notice_for(Recovered(0, paused=False)) == "recovered after an outage"


# --- the end ---------------------------------------------------------------------------------

def test_flag_fallen():
    p, v = views("0 tap left\n100 end", reserve_ns=30 * S)   # right's flag falls at 42 s
    assert p.match.flag is RIGHT
    assert v.left.title == "FLAG"
    assert v.left.lines == (("Boris: time up", "0.0"), ("Anna wins", "7-0"))
    assert v.left.header_right == "7-0 to 7"
    check_screen("flag-left", v.left)
    check_screen("flag-right", v.right)


def test_match_over_by_score():
    _, v = views("0 tap left\n5 hold left\n8 tap right\n10 end", length=1)
    assert v.right.title == "MATCH OVER"
    assert v.right.lines == (("Anna wins", "1-0"), ("by score", ""))
    assert v.right.header_right == "0-1 to 1"
    check_screen("match-over-left", v.left)
    check_screen("match-over-right", v.right)


def test_match_over_by_disqualification():
    _, v = views("0 tap left\n5 arbiter disqualify right\n6 end")
    assert v.left.lines == (("Anna wins", "7-0"), ("Boris disqualified", ""))
    check_screen("disqualified-left", v.left)


def test_config_error_screen():
    view = config_error_view('table.toml: time.delay: "12x" is not a duration; use e.g. "12s"\n'
                             "table.toml: match.length: required")
    assert view.title == "CONFIG ERROR"
    assert [line for line, _ in view.lines] == [
        "table.toml: time.delay:", '"12x" is not a duration;', 'use e.g. "12s"',
        "(+1 more problem)"]
    check_screen("config-error", view)


# --- notices ---------------------------------------------------------------------------------

def test_refused_double_shows_its_reason():
    p = play("0 tap left\n5 tap cube\n6 end", names=NAMES)
    notice = notice_for(p.surviving(Refused)[-1])
    assert notice == "no double on the first turn"
    m = p.match
    view = panel_view(m, RIGHT, m.now, notice)
    assert view.notice == notice and view.own.running      # the clock screen stays under it
    check_screen("notice-refused-right", view)


def test_out_of_turn_tap_hint():
    p = play("0 tap left\n5 tap left\n6 end", names=NAMES)
    notice = notice_for(p.surviving(Ignored)[-1])
    assert notice == "out of turn: not your clock"
    check_screen("notice-out-of-turn-left", panel_view(p.match, LEFT, p.match.now, notice))


def test_take_hint():
    p = play(OPENING + "130 tap cube\n132 tap cube\n133 end", names=NAMES)
    notice = notice_for(p.surviving(Shown)[-1])
    assert notice == "take: press your clock"
    check_screen("notice-take-left", panel_view(p.match, LEFT, p.match.now, notice))


def test_notices_for_the_other_effects_players_need_told():
    p = play("0 hold left\n3 end", names=NAMES)
    assert notice_for(p.surviving(Refused)[-1]) == "breaks only after the first game"
    p = play("0 tap left\n5 tap right\n10 hold cube\n15 tap left\n16 end", names=NAMES)
    assert notice_for(p.surviving(Ignored)[-1]) == "paused: hold cube to resume"
    p = play("0 tap left\n5 tap right\n10 hold left\n13 tap right\n20 tap left\n21 end",
             names=NAMES, discipline="longgammon")
    assert notice_for(p.surviving(Ignored)[-1]) == "white starts: black presses"
    # Refusals of the arbiter's commands are for the arbiter's console, not the players.
    p = play("0 arbiter resume\n1 end", names=NAMES)
    assert p.surviving(Refused) and notice_for(p.surviving(Refused)[-1]) is None


def test_notices_for_arbiter_and_dice_effects():
    assert notice_for(OvertimeGiven(0, LEFT, 60 * S)) == "flag: overtime +1:00"
    # The opening roll is drawn as dice, each with whose it is (test_glance.py): no notice.
    assert notice_for(DiceRolled(0, None, (5,), 1, 0, False)) is None
    assert notice_for(DiceRolled(0, LEFT, (6, 1), 1, 0, False)) is None
    assert notice_for(DiceRolled(0, RIGHT, (3, 3), 1, 4, True)) == "early roll: logged"
    assert notice_for(DiceRolled(0, RIGHT, (3, 3), 1, 4, False)) is None
    assert notice_for(Warned(0, LEFT, "slow play")) == "warning: slow play"
    assert notice_for(ChallengeDecided(0, LEFT, False, 2)) == "challenge rejected (2)"
    assert notice_for(Ignored(0, "tap left", "the match is over")) is None


def test_long_reasons_are_cut_to_fit():
    reason = "break allowed from 45:00 of match time (now 12:34.5)"
    expected = "break allowed from 45:00 of match time"
    assert notice_for(Refused(0, "left's break", reason)) == expected


# --- rounding down ---------------------------------------------------------------------------

@pytest.mark.parametrize(("ns", "shown"), [
    (14 * 60 * S, "14:00"),
    (14 * 60 * S - 1, "13:59"),
    (60 * S - 1, "0:59"),
    (20 * S, "0:20"),
    (20 * S - 1, "19.9"),
    (10 * S + 99 * MS, "10.0"),
    (99 * MS, "0.0"),
    (0, "0.0"),
    (-5 * S, "0.0"),
    (3600 * S, "1:00:00"),
    (3600 * S - 1, "59:59"),
    (10 * 3600 * S + 59 * S + 999 * MS, "10:00:59"),
])
def test_reserve_rounds_down(ns, shown):
    assert format_reserve(ns) == shown


def test_countdown_rounds_down():
    assert format_countdown(300 * S) == "5:00"
    assert format_countdown(300 * S - 1) == "4:59"
    assert format_countdown(999 * MS) == "0:00"


def test_a_running_reserve_shows_what_is_left_rounded_down():
    m = play("0 tap left\n1 end", names=NAMES).match     # right runs from 0 with 14:00, 12 s delay
    at = 12 * S + 250 * MS                                # 0.25 s charged
    assert panel_view(m, RIGHT, at).own.reserve == "13:59"
    assert panel_view(m, RIGHT, 12 * S).own == Clock("14:00", running=True)
    assert panel_view(m, RIGHT, 11 * S + 1).own.delay == "0"   # under a second of delay left
    assert panel_view(m, RIGHT, S).own.delay == "11"


# --- next_change_at --------------------------------------------------------------------------

def running_from_zero(**overrides):
    """Right's first turn, from 0 s with 14:00 and a 12 s delay (unless overridden)."""
    return play("0 tap left\n0 end", names=NAMES, **overrides).match


def test_next_change_counts_the_delay_down_then_the_reserve():
    m = running_from_zero()
    assert next_change_at(m, RIGHT, 3_300 * MS) == 4 * S + 1       # delay 8.7 -> shows 8 then 7
    assert next_change_at(m, RIGHT, 11_500 * MS) == 12 * S         # the last 0.5 s: delay goes
    assert next_change_at(m, RIGHT, 12 * S) == 12 * S + 1          # 14:00 -> 13:59
    assert next_change_at(m, RIGHT, 12 * S + 250 * MS) == 13 * S + 1
    # The left panel shows the same running clock on its opponent's line.
    assert next_change_at(m, LEFT, 3_300 * MS) == 4 * S + 1


def test_next_change_without_a_delay_is_the_next_whole_second_of_the_reserve():
    from gammonclock.core.timecontrol import FlagRule, TimeControl, TimeMode
    tc = TimeControl(TimeMode.FISCHER, 5 * S, FlagRule.MATCH_LOSS, 60 * S)
    m = running_from_zero(time=tc)
    assert next_change_at(m, RIGHT, 0) == 1                      # 14:00 shows for an instant
    assert next_change_at(m, RIGHT, 400 * MS) == S + 1


def test_next_change_below_20_seconds_is_the_next_tenth():
    m = running_from_zero(reserve_ns=25 * S)
    # After the delay the reserve runs: 20 s left at 17 s.
    assert next_change_at(m, RIGHT, 16_700 * MS) == 17 * S + 1        # 0:20 -> 19.9
    assert next_change_at(m, RIGHT, 17 * S + 1) == 17 * S + 100 * MS + 1
    assert next_change_at(m, RIGHT, 17_050 * MS) == 17 * S + 100 * MS + 1


def test_next_change_of_a_break_countdown():
    m = play(GAME_THEN_BREAK + "33 end", names=NAMES).match       # the break started at 30 s
    assert next_change_at(m, LEFT, 33 * S) == 33 * S + 1              # 4:57 -> 4:56
    assert next_change_at(m, RIGHT, 33 * S) == 33 * S + 1
    assert next_change_at(m, RIGHT, 33_400 * MS) == 34 * S + 1


@pytest.mark.parametrize(("script", "length"), [
    ("1 end", 7),                                               # between games
    (OPENING + "110 hold cube\n115 end", 7),                    # paused
    ("0 tap left\n40 tap right\n100 hold left\n104 end", 7),    # result entry
    ("0 tap left\n5 hold left\n8 tap right\n10 end", 1),        # match over
])
def test_nothing_changes_with_time_when_no_clock_runs(script, length):
    m = play(script, names=NAMES, length=length).match
    assert m.turn is None or not m.turn.running
    assert next_change_at(m, LEFT, m.now) is None
    assert next_change_at(m, RIGHT, m.now) is None


def test_the_taker_runs_on_both_panels_during_a_double():
    m = play(OPENING + "130 tap cube\n133.5 end", names=NAMES).match
    assert next_change_at(m, LEFT, m.now) == 134 * S + 1   # the taker's delay 8.5 -> 7
    assert next_change_at(m, RIGHT, m.now) == 134 * S + 1


@property_settings(200)
@given(st.integers(min_value=0, max_value=60 * S), st.sampled_from([LEFT, RIGHT]),
       st.sampled_from([25 * S, 14 * 60 * S]))
def test_the_view_holds_until_next_change_and_changes_then(offset, facing, reserve):
    """What the panel shows is the same from t to the instant before next_change_at and differs
    at it: the service can sleep until then and miss nothing."""
    m = _running[reserve]
    t = m.now + offset
    due = next_change_at(m, facing, t)
    if due is None:                        # the reserve is at zero: the flag is the engine's
        assert panel_view(m, facing, t) == panel_view(m, facing, t + S)
        return
    assert due > t
    before = panel_view(m, facing, t)
    assert panel_view(m, facing, due - 1) == before
    assert panel_view(m, facing, due) != before


_running = {r: play("0 tap left\n0.5 end", names=NAMES, reserve_ns=r).match
            for r in (25 * S, 14 * 60 * S)}


# --- the reference mechanism -----------------------------------------------------------------

def test_a_missing_reference_fails_instead_of_being_written(tmp_path):
    image = render(config_error_view("x"))
    with pytest.raises(pytest.fail.Exception, match="GAMMONCLOCK_UPDATE_REFERENCES"):
        check_reference("absent", image, folder=tmp_path, update=False)
    assert not (tmp_path / "absent.png").exists()


def test_a_different_reference_fails_and_leaves_the_actual_image(tmp_path):
    image = render(config_error_view("x"))
    Image.new("1", (WIDTH, HEIGHT), 0).save(tmp_path / "other.png")
    with pytest.raises(pytest.fail.Exception, match="differs"):
        check_reference("other", image, folder=tmp_path, update=False,
                        actual_folder=tmp_path / "actual")
    assert same_pixels(Image.open(tmp_path / "actual" / "other.png"), image)


def test_every_reference_has_a_test():
    """A reference whose test was renamed or removed would be checked by nobody."""
    if not REFERENCES.exists():
        pytest.fail("no reference folder")
    # The Russian screens' references are checked in test_russian.py, the error screens a
    # device shows at start (in either language) in device/test_panel_errors_ru.py, a match
    # moved to another clock in test_moved_screens.py.
    source = (Path(__file__).read_text() + Path(__file__).with_name("test_russian.py").read_text()
              + Path(__file__).with_name("test_moved_screens.py").read_text()
              + (Path(__file__).parents[1] / "device" / "test_panel_errors_ru.py").read_text())
    stale = [p.stem for p in REFERENCES.glob("*.png") if f'"{p.stem}"' not in source]
    assert stale == []


def test_render_is_deterministic_and_uses_the_bundled_font():
    view = panel_view(running_from_zero(), RIGHT, 3 * S)
    image = render(view)
    assert same_pixels(image, render(view))
    # A lit pixel is stored as 255, as in a loaded PNG (drawing with 1 stores 1: `tobytes` hides
    # that, `ImageChops.difference` against the reference does not).
    histogram = image.histogram()
    assert histogram[255] > 0 and histogram[0] + histogram[255] == WIDTH * HEIGHT
    assert screens.glyphs.FONT_DIR.joinpath("spleen-16x32.pil").exists()


# --- names in Latin or Cyrillic, and what the fonts do not have ------------------------------

def test_names_are_drawn_as_written_and_the_rest_mapped_to_what_each_font_has():
    assert glyphs.printable("Борис Ёлкин", glyphs.TINY) == "Борис Ёлкин"    # SPEC §15
    assert glyphs.printable("Щукин", glyphs.SMALL) == "Щукин"
    assert glyphs.printable("Jürgen", glyphs.SMALL) == "Jürgen"      # 6x12 has Latin-1
    assert glyphs.printable("Jürgen", glyphs.TINY) == "Jurgen"       # 5x8 is ASCII only
    assert glyphs.printable("½ ★ 李", glyphs.TINY) == "? ? ?"
    assert glyphs.clip("Alexandra", glyphs.SMALL, 30) == "Alexa"


def test_wrap():
    assert glyphs.wrap("take: press your clock", 24, 2) == ["take: press your clock"]
    assert glyphs.wrap("no double on the first turn", 24, 2) == ["no double on the first",
                                                                  "turn"]
    assert glyphs.wrap("a b c d e f", 3, 2) == ["a b", "c.."]
    assert glyphs.wrap("abcdefgh", 3, 3) == ["abc", "def", "gh"]


def test_long_and_cyrillic_names_fit_the_screen():
    names = Pair("Александра Васильевна", "Jürgen Müller-Lüdenscheidt")
    m = play(OPENING + "105.5 end", names=names).match
    left = panel_view(m, LEFT, m.now)
    assert left.header == "Александра Васильевна"       # the view keeps the name; render cuts it
    check_screen("long-names-left", left)
    check_screen("long-names-right", panel_view(m, RIGHT, m.now))


# --- the arbiter at the panels (SPEC §13.4) ----------------------------------------------------

def _arbiter(presses: tuple[str, ...] = (), pin: tuple[str, ...] = ("left", "right", "cube",
                                                                   "left"),
             before: str = OPENING, chord_held: bool = False) -> tuple[object, Pair]:
    """The arbiter's mode after `before` (left's clock runs from 100 s): the chord at 130 s,
    the PIN's taps from 140 s, then `presses` one a second from 150 s."""
    script = before + "130 down cube\n130.1 down left\n130.2 down right\n"
    if chord_held:
        return views(script + "134 end\n", arbiter_pin=hash_pin("LRCL"))
    script += "133.7 up cube\n133.7 up left\n133.7 up right\n"
    script += "".join(f"{140 + 0.5 * i} tap {b}\n" for i, b in enumerate(pin))
    if len(pin) == 4:                        # the whole PIN: the cube held ends the entry
        script += "142 hold cube\n"
    script += "".join(f"{150 + i} tap {b}\n" for i, b in enumerate(presses))
    return views(script + f"{151 + len(presses)} end\n", arbiter_pin=hash_pin("LRCL"))


R_, L_, C_ = "right", "left", "cube"
# (reference name, presses in the menu, the PIN's taps)
ARBITER_SCREENS = [
    ("arbiter-pin", (), ("left", "right")),
    ("arbiter-menu", (), ("left", "right", "cube", "left")),
    ("arbiter-menu-clock", (R_,), ("left", "right", "cube", "left")),
    ("arbiter-edit-clock", (R_, C_, L_, L_, L_), ("left", "right", "cube", "left")),
    ("arbiter-confirm-clock", (R_, C_, L_, L_, L_, C_), ("left", "right", "cube", "left")),
    ("arbiter-edit-score", (R_, R_, R_, R_, C_, R_), ("left", "right", "cube", "left")),
    ("arbiter-edit-cube", (R_, R_, R_, R_, R_, C_, R_, R_, R_), ("left", "right", "cube",
                                                                 "left")),
    ("arbiter-confirm-undo", (R_, R_, R_, C_), ("left", "right", "cube", "left")),
    ("arbiter-menu-next-match", (L_, L_), ("left", "right", "cube", "left")),
    ("arbiter-menu-refused", (R_, R_, R_, R_, R_, R_, C_, C_), ("left", "right", "cube",
                                                                "left")),
]


@pytest.mark.parametrize(("name", "presses", "pin"), ARBITER_SCREENS,
                         ids=[row[0] for row in ARBITER_SCREENS])
def test_the_arbiters_screens(name, presses, pin):
    _, v = _arbiter(presses, pin)
    assert v.left == v.right                 # the arbiter reads either panel
    assert v.left.layout in (Layout.MENU, Layout.TEXT)
    check_screen(name, v.left)


def test_the_arbiters_first_screen_while_the_chord_is_held():
    _, v = _arbiter(chord_held=True)
    assert v.left.title == "ARBITER" and v.left.lines[0] == ("release the buttons", "")
    check_screen("arbiter-held", v.left)


def test_the_arbiters_info_page_shows_the_table():
    from gammonclock.hardware.views import TableInfo

    p, _ = _arbiter((L_, C_))
    info = TableInfo("T12", ("192.168.1.20",), "0.9.0",
                     "match-20261201-101500-T12-Anna-Boris.jsonl")
    view = panel_view(p.match, LEFT, p.match.now, info=info)
    check_screen("arbiter-info", view)


def test_a_failed_pin_is_said_to_the_players():
    p, v = _arbiter(pin=("left", "left", "left", "left"))
    assert p.state["phase"] == "running"
    [refused] = [e for e in p.surviving(Refused)]
    notice = notice_for(refused)
    assert notice == "wrong PIN: play goes on"
    check_screen("notice-pin-wrong-left", panel_view(p.match, LEFT, p.match.now, notice))


def test_a_chord_in_a_lockout_is_said_to_the_players_with_the_time_left():
    # Three wrong PINs lock the chord until 409.5 s; a chord recognised at 153.2 s is undone.
    failures = "".join(chord(t) + entry(t + 5, WRONG_PIN_TAPS) for t in (20, 60, 100))
    p = play("1 tap left\n" + failures + chord(150) + "153.7 end\n", names=NAMES,
             arbiter_pin=hash_pin(PIN))
    assert p.state["phase"] == "running"
    notice = notice_for(p.surviving(Shown)[-1])
    assert notice == "arbiter mode locked for 4:17 more"
    check_screen("notice-chord-locked-left", panel_view(p.match, LEFT, p.match.now, notice))


def test_every_arbiters_screen_says_what_the_buttons_do():
    for _, presses, pin in ARBITER_SCREENS:
        _, v = _arbiter(presses, pin)
        if v.left.layout is Layout.MENU:
            assert v.left.footer, presses
            assert len(v.left.footer) <= glyphs.TINY.chars(screens.INNER_W)

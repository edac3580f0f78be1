"""The arbiter at the panels, SPEC §13.4: the chord and the PIN, through scripts' `down`/`up`
lines (the engine, as `simulate --script` runs it) and with charging exact to the nanosecond."""

from __future__ import annotations

import textwrap

import pytest
from hypothesis import given
from hypothesis import strategies as st

from arbiter_helpers import (
    OPENING,
    PIN,
    RIGHT_PIN_TAPS,
    WRONG_PIN_TAPS,
    S,
    chord,
    entry,
    reserve_ns,
    run,
    taps,
)
from gammonclock.core.effects import (
    ArbiterCommand,
    Ignored,
    Refused,
    Shown,
    TurnEnded,
    TurnEndReason,
)
from gammonclock.core.engine import ButtonEdge, Engine, PinKey
from gammonclock.core.match import Recover
from gammonclock.core.match_state import PanelStage
from gammonclock.core.pin import hash_pin
from gammonclock.core.reasons import Reason
from gammonclock.core.rules import MatchRules
from gammonclock.hardware.screens import Layout, PanelView, panel_view
from gammonclock.journal.snapshot import engine_data, engine_from
from gammonclock.sides import Button, Side
from gammonclock.sim.script import parse_script
from play_helpers import Played
from property_helpers import property_settings


def same_clock(a: Played, b: Played) -> bool:
    """The running turn of both at the same instant: the same side, reserve and flag, to the
    nanosecond."""
    ta, tb, t = a.match.turn, b.match.turn, a.match.now
    assert ta is not None and tb is not None and t == b.match.now
    return (ta.side, ta.reserve_at(t), ta.delay_left_at(t), ta.flag_at()) == \
        (tb.side, tb.reserve_at(t), tb.delay_left_at(t), tb.flag_at())


def reasons(played: Played, kind: type) -> list[Reason | None]:
    return [e.reason for e in played.surviving(kind)]


# --- the chord ------------------------------------------------------------------------------------

@pytest.mark.parametrize(("before", "back_to", "frozen"), [
    (OPENING, "running", True),                                   # right's clock runs
    ("", "between_games", False),                                 # before game 1
    (OPENING + "10 tap right\n12 tap cube\n", "cube_offered", True),   # left doubled at 12
    (OPENING + "10 hold cube\n", "paused", False),                # already paused by a hold
    (OPENING + "10 hold right\n", "result_entry", False),         # right entering a result
])
def test_the_chord_stops_play_as_of_its_earliest_down_edge(before, back_to, frozen):
    with_chord = run(before + chord(30) + "40 end\n")
    without = run(before + "30 end\n")          # the match as it stood at the earliest edge
    state = with_chord.state
    assert (state["phase"], state["running"]) == ("arbiter", None)
    panel = with_chord.match.panel
    assert panel is not None
    assert (panel.back_to.value, panel.froze_turn, panel.since) == (back_to, frozen, 30 * S)
    assert panel.stage is PanelStage.PIN
    assert panel.deadline == 63_700_000_000              # 30 s after the release at 33.7 s
    for side in Side:                            # the clocks as they were at 30 s, exactly
        assert reserve_ns(with_chord, side) == reserve_ns(without, side)


def test_what_the_chords_down_edges_and_holds_did_is_undone():
    # Right's clock runs; right presses (a turn switch), then cube (left doubles!) and left:
    # right's press is a hold by 32 s (result entry), the cube's a pause by 32.1 s.
    script = OPENING + chord(30, order=("right", "cube", "left")) + "40 end\n"
    played = run(script)
    assert played.state["phase"] == "arbiter"
    assert played.match.panel is not None and played.match.panel.back_to.value == "running"
    assert played.match.turn is not None and played.match.turn.side is Side.RIGHT
    assert played.state["cube"] == {"value": 1, "owner": None, "enabled": True}
    assert reserve_ns(played, Side.RIGHT) == reserve_ns(run(OPENING + "30 end\n"), Side.RIGHT)


def test_without_a_pin_the_chord_means_nothing_special():
    script = OPENING + chord(30) + "40 end\n"
    played = run(script, pin=None)
    # The presses are what they always were: right's tap at 30.2 s switched to left, the cube
    # press (a double at 30 s, before that: right's clock ran) ... every hold acted as usual.
    assert played.state["phase"] != "arbiter"
    assert Reason.PIN_ENTRY not in reasons(played, Shown)
    assert played.match.panel is None


@pytest.mark.parametrize("script", [
    # two players pressing at once, released before chord_s: nothing special
    OPENING + "30 down right\n30.05 down left\n30.1 down cube\n30.3 up right\n30.3 up left\n"
              "30.3 up cube\n",
    # all three held, one released 0.1 s short of chord_s
    OPENING + "30 down cube\n30.1 down left\n30.2 down right\n33.1 up right\n33.3 up left\n"
              "33.3 up cube\n",
    # a long press of two, the third never comes
    OPENING + "30 down cube\n30.1 down left\n40 up cube\n40 up left\n",
])
def test_presses_that_are_not_a_whole_chord_act_as_without_a_pin(script):
    with_pin = run(script + "60 end\n")
    without = run(script + "60 end\n", pin=None)
    assert with_pin.state == without.state
    assert [e.describe() for e in with_pin.surviving()] == \
        [e.describe() for e in without.surviving()]


def test_a_tap_before_the_chord_is_released_is_ignored():
    played = run(OPENING + "30 down cube\n30.1 down left\n30.2 down right\n34 up left\n"
                           "34.5 tap left\n35 up cube\n35 up right\n40 end\n")
    assert Reason.CHORD_HELD in reasons(played, Ignored)
    panel = played.match.panel
    assert panel is not None and panel.stage is PanelStage.PIN and panel.entered == ()
    assert panel.deadline == 65 * S                  # 30 s after the last button went up


# --- the PIN ----------------------------------------------------------------------------------

def test_each_pin_tap_shows_a_dot_never_the_button():
    played = run(OPENING + chord(30) + taps(40, ("left", "right", "cube")) + "45 end\n")
    dots = [e.text for e in played.surviving(Shown) if e.reason is Reason.PIN_DOT]
    assert dots == ["PIN *", "PIN **", "PIN ***"]
    other = run(OPENING + chord(30) + taps(40, ("cube", "cube", "right")) + "45 end\n")
    assert [e.text for e in other.surviving(Shown) if e.reason is Reason.PIN_DOT] == dots


def test_the_panels_show_a_dot_for_each_pin_tap_and_never_the_button():
    def views(pin_taps: tuple[str, ...]) -> list[PanelView]:
        played = run(OPENING + chord(30) + taps(40, pin_taps) + "45 end\n")
        return [panel_view(played.match, side, played.match.now, lang=lang)
                for side in Side for lang in ("en", "ru")]

    two = views(("left", "right"))
    assert two == views(("cube", "cube")) == views(("right", "left"))
    assert two != views(("left",)) and two[0].lines[0] == ("PIN", "**")
    assert all(view.layout is Layout.MENU for view in two)


def test_the_right_pin_opens_the_menu_and_charges_nobody():
    played = run(OPENING + chord(30) + entry(40, RIGHT_PIN_TAPS) + "100 end\n")
    panel = played.match.panel
    assert panel is not None and panel.stage is PanelStage.MENU
    assert played.state["phase"] == "arbiter" and played.state["running"] is None
    assert reserve_ns(played, Side.RIGHT) == reserve_ns(run(OPENING + "30 end\n"), Side.RIGHT)
    assert played.match.pin_failures == 0


# A failed attempt: play resumes and the whole span since the chord's first edge is the running
# side's, exactly as if nobody had pressed anything (the same instant, no chord at all).
FAILURES = [
    ("wrong", entry(40, WRONG_PIN_TAPS), 44.5, Reason.PIN_WRONG),
    ("too few, then nothing", taps(40, ("left", "right")), 63.7, Reason.PIN_TIMEOUT),
    ("nothing", "", 63.7, Reason.PIN_TIMEOUT),          # the release at 33.7 s + 30 s
]


@pytest.mark.parametrize(("name", "pin_taps", "failed_at", "reason"), FAILURES)
def test_a_failed_pin_resumes_play_and_charges_the_whole_span(name, pin_taps, failed_at,
                                                              reason):
    played = run(OPENING + chord(30) + pin_taps + f"{failed_at} end\n")
    nobody_pressed = run(OPENING + f"{failed_at} end\n")
    assert played.state == nobody_pressed.state
    assert same_clock(played, nobody_pressed)                # to the nanosecond
    assert reasons(played, Refused) == [reason]
    assert played.match.pin_failures == 1
    later = run(OPENING + chord(30) + pin_taps + "200 end\n")
    assert later.state == run(OPENING + "200 end\n").state


# Left's break from 10 s to 310 s (5 minutes) after game 1; left's reserve is 14:00.
GAME_THEN_BREAK = "0 tap left\n5 hold left\n8 tap right\n10 hold left\n"
BREAK_ENDS = 310


def late_reserve_ns(at: float) -> int:
    """Left's reserve at `at` when left has been late since the break's end."""
    return int((14 * 60 - (at - BREAK_ENDS)) * S)


# A failed attempt over a break: the break's time never stops, and the late player's overrun
# counts from the break's end whatever the chord did (SPEC §5; a failed attempt is never free).
BREAK_FAILURES = [
    ("the break ends in the PIN's wait", chord(300), 400.0),
    ("a wrong PIN after the break's end", chord(305) + entry(312, WRONG_PIN_TAPS), 400.0),
    ("the chord held past the end for 10 min", chord(300, release_after=600), 1000.0),
    ("the chord in the overrun", chord(320), 400.0),
    ("a wrong PIN before the break's end", chord(290) + entry(295, WRONG_PIN_TAPS), 400.0),
]


@pytest.mark.parametrize(("name", "presses", "end"), BREAK_FAILURES)
def test_a_failed_pin_over_a_break_gives_the_late_player_no_time(name, presses, end):
    played = run(GAME_THEN_BREAK + presses + f"{end} end\n")
    nobody_pressed = run(GAME_THEN_BREAK + f"{end} end\n")
    assert played.state == nobody_pressed.state
    assert (played.state["phase"], played.state["running"]) == ("break", "left")
    assert reserve_ns(played, Side.LEFT) == late_reserve_ns(end)
    assert played.match.turn is not None and played.match.turn.flag_at() == \
        nobody_pressed.match.turn.flag_at() == (BREAK_ENDS + 14 * 60) * S


def test_a_failed_pin_over_a_break_drops_the_late_players_flag_where_it_fell():
    # Left is late from 310 s; its 14:00 is out at 1150 s, inside a chord held until 1200 s.
    played = run(GAME_THEN_BREAK + chord(300, release_after=900) + "1300 end\n")
    state = played.state
    assert (state["phase"], state["end_reason"], state["flag"]) == ("match_over", "flag", "left")
    ended = [e for e in played.surviving(TurnEnded) if e.side is Side.LEFT][-1]
    assert (ended.reason, ended.span, ended.charged) == (TurnEndReason.FLAG, 840 * S, 840 * S)


def test_a_failed_pin_during_a_double_charges_the_taker():
    before = OPENING + "10 tap right\n12 tap cube\n"           # left doubled: right decides
    played = run(before + chord(30) + entry(40, WRONG_PIN_TAPS) + "45 end\n")
    assert played.state["phase"] == "cube_offered"
    assert same_clock(played, run(before + "45 end\n"))


def test_a_failed_pin_that_runs_the_reserve_out_drops_the_flag():
    # Right has 40 s (reserve 28 s after its 12 s delay): the chord at 30 s and a PIN timeout
    # at 63.7 s are more than that.
    played = run(OPENING + chord(30) + "70 end\n", reserve_ns=28 * S)
    state = played.state
    assert (state["phase"], state["end_reason"], state["flag"]) == ("match_over", "flag", "right")
    assert state["clock"]["right"]["reserve_ms"] == 0


def test_three_failures_in_a_row_lock_the_chord_for_five_minutes():
    script = OPENING
    for start in (20, 60, 100):                             # three wrong PINs
        script += chord(start) + entry(start + 5, WRONG_PIN_TAPS)
    locked = script + chord(150) + "160 end\n"       # locked: undone (test_locked_chord.py)
    played = run(locked)
    assert Reason.CHORD_LOCKED in reasons(played, Shown)
    assert played.state["phase"] != "arbiter"
    lockout_ends = 109 * S + S // 2 + 300 * S              # the third failure + 5 minutes
    assert played.match.chord_locked_until == lockout_ends
    opened = run(script + chord(410) + "420 end\n")        # after the lockout: it works again
    assert opened.state["phase"] == "arbiter"


def test_a_right_pin_resets_the_count_of_failures():
    script = (OPENING + chord(20) + entry(25, WRONG_PIN_TAPS) + chord(60)
              + entry(65, WRONG_PIN_TAPS) + chord(100) + entry(105, RIGHT_PIN_TAPS)
              + "110 hold cube\n" + chord(150) + entry(155, WRONG_PIN_TAPS)
              + chord(200) + "205 end\n")
    played = run(script)
    assert played.state["phase"] == "arbiter"                # not locked: one failure since
    assert played.match.pin_failures == 1


# --- replay, snapshot, undo -----------------------------------------------------------------

def test_an_engine_in_the_arbiters_mode_snapshots_and_restores_exactly():
    played = run(OPENING + chord(30) + taps(40, ("left", "right")) + "42 end\n")
    engine = played.engine
    data = engine_data(engine)
    # Never the PIN's buttons: dots only, and the pad without its buttons.
    assert data["match"]["f"]["panel"]["f"]["entered"] == {"$t": []}
    assert data["match"]["f"]["panel"]["f"]["dots"] == 2
    assert data["pin_pad"] == {"$d": "engine.PadHold", "f": {"down": 0,
                                                             "last_edge_at": 40_600_000_000}}
    restored, _ = engine_from(data, engine.rules)
    assert restored.match == engine.match and restored.buttons == engine.buttons
    assert restored.pad == engine.pad
    # And it goes on the same way, the rest of the PIN as the journal says it (the buttons
    # entered before the snapshot are the live pad's only: a recovery lets go of them).
    rest = [ButtonEdge(43 * S, Button.CUBE, True), ButtonEdge(43 * S + 10**8, Button.CUBE, False),
            ButtonEdge(44 * S, Button.LEFT, True), ButtonEdge(44 * S + 10**8, Button.LEFT, False),
            ButtonEdge(45 * S, Button.CUBE, True), ButtonEdge(48 * S, Button.CUBE, False)]
    a, b = engine, restored
    for edge in rest:
        a, _ = a.feed(edge)
        assert isinstance(a.recorded, PinKey)
        b, _ = b.feed(a.recorded)
    assert a.match == b.match and a.match.panel is not None
    assert a.match.panel.stage is PanelStage.MENU


def test_a_snapshot_written_before_the_arbiters_mode_still_reads():
    engine = run(OPENING + "5 end\n").engine
    data = engine_data(engine)
    for name in ("panel", "pin_failures", "chord_locked_until"):
        del data["match"]["f"][name]
    restored, _ = engine_from(data, engine.rules)
    assert restored.match == engine.match


def test_undo_after_a_failed_pin_takes_back_the_last_turn_switch():
    # Right switches at 10 s (left's clock runs); a chord and a wrong PIN; the arbiter's undo
    # gives the switch back: right's clock has run since 1 s, charged all of it.
    script = (OPENING + "10 tap right\n" + chord(30) + entry(40, WRONG_PIN_TAPS)
              + "50 arbiter undo\n60 end\n")
    played = run(script)
    assert played.state["running"] == "right"
    assert played.state == run(OPENING + "60 end\n").state


def test_undo_across_an_arbiters_session_keeps_the_session():
    # The arbiter opens the menu and resumes; then the socket's undo of right's switch at
    # 10 s: the menu's pause (30 s to 45 s) is still nobody's.
    script = (OPENING + "10 tap right\n" + chord(30) + entry(40, RIGHT_PIN_TAPS)
              + "45 hold cube\n" + "60 arbiter undo\n70 end\n")
    played = run(script)
    assert played.state["running"] == "right"
    paused = 45 * S - 30 * S
    # Right ran from 1 s to 70 s less the pause: 69 s - 15 s, of which 12 s of delay.
    expected = 14 * 60 * S - (69 * S - paused - 12 * S)
    assert reserve_ns(played, Side.RIGHT) == expected


def test_a_script_plays_the_chord_like_the_engine_fed_the_same_edges():
    text = OPENING + chord(30) + entry(40, WRONG_PIN_TAPS) + "50 end\n"
    rules = MatchRules.defaults(arbiter_pin=hash_pin(PIN))
    parsed = parse_script(textwrap.dedent(text), rules.hold_ns)
    engine = Engine.start(rules)
    for event in parsed.inputs:
        engine, _ = engine.feed(event)
    assert engine.advance(parsed.end)[0].match == run(text).match


def test_the_menus_resume_is_an_arbiter_action_from_the_panel():
    played = run(OPENING + chord(30) + entry(40, RIGHT_PIN_TAPS) + "45 tap cube\n50 end\n")
    said = played.surviving(ArbiterCommand)
    assert [(e.text, e.source) for e in said] == [("resume", "panel")]
    assert played.state["running"] == "right"
    # Nobody was charged from 30 s to 45 s.
    assert reserve_ns(played, Side.RIGHT) == reserve_ns(run(OPENING + "35 end\n"), Side.RIGHT)


def test_a_long_pin_press_of_left_or_right_is_a_dot_all_the_same():
    script = OPENING + chord(30) + "40 hold left 2.5\n43 end\n"
    played = run(script)
    panel = played.match.panel
    assert panel is not None and panel.stage is PanelStage.PIN
    assert panel.dots == 1 and panel.entered == ()


def recovered(script: str, at: float, **overrides: object) -> Engine:
    """The engine after `script` and an outage: the restart's `Recover` at `at` (the last
    record's instant)."""
    engine, _ = run(script + f"{at} end\n", **overrides).engine.feed(Recover(int(at * S)))
    return engine


# An outage before the PIN is in: a failed attempt, the running side charged up to the outage
# (the outage itself is nobody's), then the match is paused as after any outage (SPEC §11).
OUTAGES_BEFORE_THE_PIN = [
    ("the chord still held", "30 down cube\n30.1 down left\n30.2 down right\n", 34.0),
    ("released, nothing typed", chord(30), 40.0),
    ("one PIN tap", chord(30) + "35 tap left\n", 36.0),
    ("all but the last tap", chord(30) + taps(35, RIGHT_PIN_TAPS[:-1]), 37.0),
]


@pytest.mark.parametrize(("name", "presses", "outage"), OUTAGES_BEFORE_THE_PIN)
def test_an_outage_before_the_pin_is_a_failed_attempt_and_leaves_the_match_paused(
        name, presses, outage):
    engine = recovered(OPENING + presses, outage)
    nobody_pressed = recovered(OPENING, outage)
    assert engine.match.panel is None and all(not state.down for _, state in engine.buttons)
    assert engine.match.pin_failures == 1
    assert engine.state_json() == nobody_pressed.state_json()
    assert engine.state_json()["phase"] == "paused"
    assert engine.match.resume_phase is not None and engine.match.resume_phase.value == "running"
    # Charged from 1 s to the outage, to the nanosecond; and no clock starts by itself.
    later = engine.advance(500 * S)[0]
    assert later.state_json()["running"] is None
    assert later.match.reserve_at(Side.RIGHT) == \
        run(OPENING + f"{outage} end\n").match.reserve_at(Side.RIGHT)


def test_an_outage_in_the_pin_wait_is_journaled_as_a_failed_attempt():
    played = run(OPENING + chord(30) + "35 tap left\n36 end\n")
    engine, effects = played.engine.feed(Recover(36 * S))
    kinds = [type(e).__name__ for e in effects]
    assert kinds == ["Refused", "Resumed", "Paused", "Recovered"]
    refusal = effects[0]
    assert isinstance(refusal, Refused) and refusal.reason is Reason.PIN_TIMEOUT
    assert "the power went before the PIN (1 of 3 before a lockout)" in refusal.describe()


def test_a_third_failure_by_an_outage_locks_the_chord():
    failures = "".join(chord(start) + entry(start + 5, WRONG_PIN_TAPS) for start in (20, 60))
    engine = recovered(OPENING + failures + chord(100), 110.0)
    assert engine.match.chord_locked_until == 410 * S and engine.match.pin_failures == 0


def test_the_socket_may_act_while_the_arbiters_mode_holds_the_panels():
    played = run(OPENING + chord(30) + "35 arbiter deduct right 10s\n36 arbiter pause\n"
                           "37 end\n")
    assert played.state["phase"] == "arbiter"
    assert reserve_ns(played, Side.RIGHT) == reserve_ns(run(OPENING + "30 end\n"),
                                                        Side.RIGHT) - 10 * S
    assert [e.reason for e in played.surviving(Refused)] == [Reason.NO_CLOCK_RUNNING]
    resumed = run(OPENING + chord(30) + "35 arbiter resume\n40 end\n")
    assert resumed.state["running"] == "right"
    assert resumed.match.pin_failures == 0                   # the socket's arbiter is no attempt


# --- fuzzing: any edges, with a PIN and a short chord -------------------------------------------

# Random edges and socket commands, and whole chords and PINs among them (random edges alone
# seldom release a chord or tap a right PIN). Gaps up to 1.5 s: holds (0.5 s), chords (1 s).
STEPS = st.lists(st.one_of(
    st.tuples(st.integers(1, 1_500), st.sampled_from(list(Button)), st.booleans(),
              st.sampled_from([None, "undo", "resume", "pause", "adjust left 5s"])),
    st.sampled_from(["chord", "pin", "wrong pin"])), max_size=60)
CHORD_EDGES = [(0, Button.CUBE, True), (50, Button.LEFT, True), (50, Button.RIGHT, True),
               (1_200, Button.CUBE, False), (0, Button.LEFT, False), (0, Button.RIGHT, False)]


def _pin_edges(buttons: tuple[Button, ...]) -> list[tuple[int, Button, bool]]:
    return [edge for b in buttons for edge in ((300, b, True), (100, b, False))]


CUBE_HOLD = [(300, Button.CUBE, True), (600, Button.CUBE, False)]   # hold_ns is 0.5 s
MACROS = {"chord": CHORD_EDGES,
          "pin": _pin_edges((Button.LEFT, Button.RIGHT, Button.CUBE, Button.LEFT)) + CUBE_HOLD,
          "wrong pin": _pin_edges((Button.CUBE, Button.CUBE, Button.CUBE)) + CUBE_HOLD}
reached: set[PanelStage | None] = set()


@property_settings(300)
@given(STEPS)
def test_any_edges_with_a_pin_keep_the_engine_whole(steps):
    from gammonclock.core.arbiter import parse_command
    from gammonclock.core.match import ArbiterAction

    rules = MatchRules.defaults(arbiter_pin=hash_pin("LRCL"), hold_ns=500_000_000, chord_ns=S,
                                reserve_ns=60 * S)
    engine, t = Engine.start(rules), 0
    for step in steps:
        if isinstance(step, str):
            items = [(gap, button, pressed, None) for gap, button, pressed in MACROS[step]]
        else:
            items = [step]
        for gap_ms, button, pressed, command in items:
            t += gap_ms * 1_000_000
            if command is not None and gap_ms % 7 == 0:
                engine, _ = engine.feed(ArbiterAction(t, parse_command(command.split()),
                                                      "socket"))
            else:
                engine, _ = engine.feed(ButtonEdge(t, button, pressed))
            assert engine.match.now == t
            assert (engine.match.phase.value == "arbiter") == (engine.match.panel is not None)
            reached.add(engine.match.panel.stage if engine.match.panel is not None else None)
    engine, _ = engine.advance(t + 200 * S)
    restored, _ = engine_from(engine_data(engine), engine.rules)
    assert restored.match == engine.match


def test_the_fuzzing_reached_the_pin_and_the_menu():
    """The steps above do reach the PIN and the menu (a check on the fuzzing itself)."""
    test_any_edges_with_a_pin_keep_the_engine_whole()
    assert {PanelStage.HELD, PanelStage.PIN, PanelStage.MENU} <= reached

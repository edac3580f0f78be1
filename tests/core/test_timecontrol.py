"""Table-driven tests of one turn's clock (`gammonclock.timecontrol`) against SPEC §2.

For a turn of side S started at t0 with reserve R0 and delay/increment D, at e = t − t0 (pauses
excluded):

    mode       reserve shown at t     at the end of the turn     flag falls at
    delay      R0 − max(0, e − D)     nothing added              t0 + D + R0
    bronstein  R0 − e                 min(e, D) added back       t0 + R0
    fischer    R0 − e                 D added                    t0 + R0
    none       R0 − e                 nothing                    t0 + R0

The expected values below are computed from this table by `spec_*` helpers, never by the module.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gammonclock.core.timecontrol import TimeMode, Turn, TurnEnd
from gammonclock.sides import Side

S = 1_000_000_000
MS = 1_000_000
T0 = 1_234 * S + 567_891          # a start instant that is not zero and not round
R0 = 60 * S
D = 12 * S
MODES = list(TimeMode)


def spec_shown(mode: TimeMode, r0: int, d: int, e: int) -> int:
    if mode is TimeMode.DELAY:
        return r0 - max(0, e - d)
    return r0 - e


def spec_after(mode: TimeMode, r0: int, d: int, e: int) -> int:
    """The reserve after the end-of-turn rule."""
    if mode is TimeMode.DELAY:
        return r0 - max(0, e - d)
    if mode is TimeMode.BRONSTEIN:
        return r0 - e + min(e, d)
    if mode is TimeMode.FISCHER:
        return r0 - e + d
    return r0 - e


def spec_flag(mode: TimeMode, t0: int, r0: int, d: int) -> int:
    return t0 + d + r0 if mode is TimeMode.DELAY else t0 + r0


def begin(mode: TimeMode, t0: int = T0, r0: int = R0, d: int = D, side: Side = Side.LEFT) -> Turn:
    return Turn.begin(side, t0, r0, mode, d)


# e values around the delay: 0, inside, exactly D, 1 ns either side, well past it
E_VALUES = [0, 1, 5 * S, D - 1, D, D + 1, 20 * S, 45 * S + 123]
E_IDS = ["e=0", "e=1ns", "e=5s", "e=D-1ns", "e=D", "e=D+1ns", "e=20s", "e=45s+123ns"]
ROWS = [(mode, e) for mode in MODES for e in E_VALUES]
ROW_IDS = [f"{mode.value}-{eid}" for mode in MODES for eid in E_IDS]


# --- every row of the table, in every mode -----------------------------------------------------

@pytest.mark.parametrize("mode, e", ROWS, ids=ROW_IDS)
def test_reserve_shown(mode, e):
    assert begin(mode).reserve_at(T0 + e) == spec_shown(mode, R0, D, e)


@pytest.mark.parametrize("mode, e", ROWS, ids=ROW_IDS)
def test_end_of_turn(mode, e):
    end = begin(mode).end(T0 + e)
    assert end.span == e
    assert end.reserve_after == spec_after(mode, R0, D, e)
    assert end.span == end.delay_used + end.charged
    assert end.reserve_after == R0 - end.charged + end.refund
    for value in (end.span, end.delay_used, end.charged, end.refund, end.reserve_after):
        assert type(value) is int


@pytest.mark.parametrize("mode, e, delay_used, charged, refund", [
    (TimeMode.DELAY, 5 * S, 5 * S, 0, 0),
    (TimeMode.DELAY, D, D, 0, 0),
    (TimeMode.DELAY, 20 * S, D, 8 * S, 0),
    (TimeMode.DELAY, D + 1, D, 1, 0),
    (TimeMode.BRONSTEIN, 5 * S, 0, 5 * S, 5 * S),       # min(e, D) = e: the whole turn back
    (TimeMode.BRONSTEIN, 20 * S, 0, 20 * S, D),         # min(e, D) = D
    (TimeMode.BRONSTEIN, D - 1, 0, D - 1, D - 1),
    (TimeMode.FISCHER, 5 * S, 0, 5 * S, D),             # D added whatever e
    (TimeMode.FISCHER, 20 * S, 0, 20 * S, D),
    (TimeMode.FISCHER, 0, 0, 0, D),
    (TimeMode.NONE, 5 * S, 0, 5 * S, 0),
    (TimeMode.NONE, 20 * S, 0, 20 * S, 0),
], ids=["delay-inside", "delay-exactly-D", "delay-past", "delay-1ns-past",
        "bronstein-short", "bronstein-long", "bronstein-D-1ns", "fischer-short", "fischer-long",
        "fischer-instant", "none-short", "none-long"])
def test_end_of_turn_parts(mode, e, delay_used, charged, refund):
    end = begin(mode).end(T0 + e)
    assert (end.delay_used, end.charged, end.refund) == (delay_used, charged, refund)


@pytest.mark.parametrize("mode, e, net", [
    (TimeMode.BRONSTEIN, 5 * S, 0),            # a turn inside D costs nothing net
    (TimeMode.BRONSTEIN, 20 * S, -8 * S),
    (TimeMode.FISCHER, 5 * S, 7 * S),          # a quick turn gains time
    (TimeMode.FISCHER, 20 * S, -8 * S),
    (TimeMode.DELAY, 5 * S, 0),
    (TimeMode.DELAY, 20 * S, -8 * S),
    (TimeMode.NONE, 5 * S, -5 * S),
], ids=["bronstein-refund-e", "bronstein-refund-D", "fischer-gain", "fischer-loss",
        "delay-free", "delay-charged", "none"])
def test_net_change_of_a_turn(mode, e, net):
    assert begin(mode).end(T0 + e).reserve_after - R0 == net


@pytest.mark.parametrize("mode", MODES, ids=[m.value for m in MODES])
def test_flag_instant(mode):
    turn = begin(mode)
    flag = turn.flag_at()
    assert flag == spec_flag(mode, T0, R0, D)
    assert turn.reserve_at(flag) == 0
    assert turn.reserve_at(flag - 1) == 1          # exactly that instant, to the nanosecond


@pytest.mark.parametrize("mode, r0, expected", [
    (TimeMode.DELAY, 0, T0 + D),               # an empty reserve still has the turn's delay
    (TimeMode.BRONSTEIN, 0, T0),
    (TimeMode.FISCHER, 0, T0),
    (TimeMode.NONE, 0, T0),
    (TimeMode.DELAY, 1, T0 + D + 1),
    (TimeMode.NONE, 7 * S + 3, T0 + 7 * S + 3),
], ids=["delay-empty", "bronstein-empty", "fischer-empty", "none-empty", "delay-1ns",
        "none-odd"])
def test_flag_instant_small_reserves(mode, r0, expected):
    assert begin(mode, r0=r0).flag_at() == expected


@pytest.mark.parametrize("mode", MODES, ids=[m.value for m in MODES])
def test_flag_end_freezes_at_zero(mode):
    """At the flag the clock freezes at zero: nothing is added back, not even in Bronstein or
    Fischer (§2: both clocks freeze; fine point 9: a flag freezes that clock at 0)."""
    turn = begin(mode)
    flag = spec_flag(mode, T0, R0, D)
    end = turn.flag_end(flag)
    assert end.reserve_after == 0
    assert end.refund == 0
    assert end.span == flag - T0
    assert end.span == end.delay_used + end.charged
    assert end.charged == R0
    assert end.delay_used == (D if mode is TimeMode.DELAY else 0)


# --- a new turn, a fresh delay ----------------------------------------------------------------

def test_begin_is_a_fresh_running_turn():
    turn = Turn.begin(Side.RIGHT, T0, R0, TimeMode.DELAY, D)
    assert turn.side is Side.RIGHT
    assert turn.started_at == T0
    assert turn.start_reserve == R0
    assert turn.running
    assert turn.delay_left_at(T0) == D
    assert turn.reserve_at(T0) == R0


@pytest.mark.parametrize("mode", MODES, ids=[m.value for m in MODES])
def test_each_turn_starts_with_a_fresh_delay(mode):
    first = begin(mode)
    t1 = T0 + 20 * S
    r1 = first.end(t1).reserve_after
    second = Turn.begin(Side.RIGHT, t1, R0, mode, D)      # the opponent's turn
    t2 = t1 + 7 * S
    r2 = second.end(t2).reserve_after
    third = Turn.begin(Side.LEFT, t2, r1, mode, D)        # left again: its delay is whole again
    assert third.reserve_at(t2 + 10 * S) == spec_shown(mode, r1, D, 10 * S)
    assert third.end(t2 + 10 * S).reserve_after == spec_after(mode, r1, D, 10 * S)
    assert third.flag_at() == spec_flag(mode, t2, r1, D)
    assert r2 == spec_after(mode, R0, D, 7 * S)


def test_unused_delay_does_not_carry_over():
    """Simple delay: a 3 s turn leaves 9 s unused; the next turn still gets 12 s, not 21 s."""
    first = begin(TimeMode.DELAY)
    r1 = first.end(T0 + 3 * S).reserve_after
    assert r1 == R0
    nxt = Turn.begin(Side.LEFT, T0 + 10 * S, r1, TimeMode.DELAY, D)
    assert nxt.reserve_at(T0 + 10 * S + 13 * S) == R0 - 1 * S


# --- pauses -----------------------------------------------------------------------------------

PAUSE_CASES = [(mode, before) for mode in MODES for before in (0, 5 * S, D, 20 * S)]
PAUSE_IDS = [f"{mode.value}-paused-at-{b // S}s" for mode, b in PAUSE_CASES]


@pytest.mark.parametrize("mode, before", PAUSE_CASES, ids=PAUSE_IDS)
def test_pause_freezes_e(mode, before):
    t_pause = T0 + before
    frozen = begin(mode).frozen(t_pause)
    assert not frozen.running
    assert frozen.flag_at() is None                  # no flag while frozen
    shown = spec_shown(mode, R0, D, before)
    for later in (0, 1, 3 * S, 600 * S):
        assert frozen.reserve_at(t_pause + later) == shown
    # ending a frozen turn (a confirmed result) ends it at the frozen time, whenever it happens
    end = frozen.end(t_pause + 90 * S)
    assert end.span == before
    assert end.reserve_after == spec_after(mode, R0, D, before)


@pytest.mark.parametrize("mode, before", PAUSE_CASES, ids=PAUSE_IDS)
def test_resume_continues_with_what_was_left(mode, before):
    t_pause = T0 + before
    t_resume = t_pause + 300 * S + 17
    turn = begin(mode).frozen(t_pause).resumed(t_resume)
    assert turn.running
    for after in (0, 1, 4 * S, D, 30 * S):
        e = before + after                           # pauses excluded
        assert turn.reserve_at(t_resume + after) == spec_shown(mode, R0, D, e)
    flag = turn.flag_at()
    assert flag == spec_flag(mode, T0, R0, D) + (t_resume - t_pause)
    assert turn.reserve_at(flag) == 0 and turn.reserve_at(flag - 1) == 1
    end = turn.end(t_resume + 7 * S)
    assert end.span == before + 7 * S
    assert end.reserve_after == spec_after(mode, R0, D, before + 7 * S)


def test_pause_keeps_the_remaining_delay():
    """Paused 5 s into a 12 s delay: after the resume 7 s of delay are left, no more, no less."""
    t_pause, t_resume = T0 + 5 * S, T0 + 500 * S
    turn = begin(TimeMode.DELAY).frozen(t_pause)
    assert turn.delay_left_at(t_pause + 100 * S) == 7 * S
    turn = turn.resumed(t_resume)
    assert turn.delay_left_at(t_resume) == 7 * S
    assert turn.reserve_at(t_resume + 7 * S) == R0
    assert turn.reserve_at(t_resume + 7 * S + 1) == R0 - 1
    assert turn.flag_at() == t_resume + 7 * S + R0


def test_several_pauses_add_up():
    t = T0
    turn = begin(TimeMode.DELAY)
    runs = [3 * S, 4 * S, 10 * S + 1]                 # 17 s + 1 ns of running time
    for i, run in enumerate(runs):
        t += run
        turn = turn.frozen(t)
        if i < len(runs) - 1:
            t += 60 * S * (i + 1)                     # paused, costs nothing
            turn = turn.resumed(t)
    end = turn.end(t + 1000 * S)
    assert end.span == sum(runs)
    assert end.charged == sum(runs) - D
    assert end.reserve_after == R0 - (sum(runs) - D)


def test_frozen_and_resumed_are_idempotent():
    turn = begin(TimeMode.DELAY)
    frozen = turn.frozen(T0 + 3 * S)
    assert frozen.frozen(T0 + 50 * S) == frozen       # freezing again changes nothing
    resumed = frozen.resumed(T0 + 60 * S)
    assert resumed.resumed(T0 + 70 * S) == resumed    # resuming a running turn changes nothing
    assert turn.resumed(T0 + 5 * S) == turn


# --- exactness in integer nanoseconds ---------------------------------------------------------

@pytest.mark.parametrize("mode", MODES, ids=[m.value for m in MODES])
def test_odd_nanoseconds_are_exact(mode):
    t0 = 98_765_432_109_876
    r0 = 3_000 * S + 999_999_999
    d = 8 * S + 1
    e = 31_900_000_007
    turn = Turn.begin(Side.LEFT, t0, r0, mode, d)
    assert turn.reserve_at(t0 + e) == spec_shown(mode, r0, d, e)
    end = turn.end(t0 + e)
    assert end.reserve_after == spec_after(mode, r0, d, e)
    assert turn.flag_at() == spec_flag(mode, t0, r0, d)


turn_lengths = st.lists(st.integers(min_value=0, max_value=200 * S), min_size=1, max_size=60)


@given(spans=turn_lengths, mode=st.sampled_from(MODES),
       delay=st.integers(min_value=0, max_value=30 * S))
def test_a_chain_of_turns_charges_exactly(spans, mode, delay):
    """Any sequence of turns of one side: the final reserve is the table's end rule applied turn
    by turn, exactly; and Σ charged + Σ delay_used = Σ spans (SPEC §12)."""
    reserve = expected = 10 ** 15
    t = 7
    charged = delay_used = 0
    for span in spans:
        end = Turn.begin(Side.LEFT, t, reserve, mode, delay).end(t + span)
        expected = spec_after(mode, expected, delay, span)
        reserve = end.reserve_after
        charged += end.charged
        delay_used += end.delay_used
        t += span + 5 * S
        assert reserve == expected
    assert charged + delay_used == sum(spans)


@given(runs=st.lists(st.integers(min_value=0, max_value=40 * S), min_size=1, max_size=8),
       gaps=st.lists(st.integers(min_value=0, max_value=10 ** 12), min_size=8, max_size=8),
       mode=st.sampled_from(MODES))
def test_pauses_never_charge(runs, gaps, mode):
    t = T0
    turn = begin(mode)
    for run, gap in zip(runs, gaps):
        t += run
        turn = turn.frozen(t)
        t += gap
        turn = turn.resumed(t)
    e = sum(runs)
    assert turn.reserve_at(t) == spec_shown(mode, R0, D, e)
    assert turn.end(t).reserve_after == spec_after(mode, R0, D, e)
    assert turn.flag_at() == t + (spec_flag(mode, T0, R0, D) - (T0 + e))


# --- reserve changes during a turn (arbiter adjust / deduct / add) ----------------------------

@pytest.mark.parametrize("mode, e, delta, applied", [
    (TimeMode.DELAY, 20 * S, 30 * S, 30 * S),
    (TimeMode.DELAY, 20 * S, -30 * S, -30 * S),
    (TimeMode.DELAY, 20 * S, -52 * S, -52 * S),       # shown 52 s: down to exactly zero
    (TimeMode.DELAY, 20 * S, -90 * S, -52 * S),       # clamped at zero
    (TimeMode.DELAY, 5 * S, -90 * S, -R0),            # inside the delay the shown reserve is R0
    (TimeMode.BRONSTEIN, 20 * S, -90 * S, -40 * S),
    (TimeMode.FISCHER, 20 * S, 15 * S, 15 * S),
    (TimeMode.NONE, 59 * S, -2 * S, -1 * S),
    (TimeMode.NONE, 0, 0, 0),
], ids=["delay-add", "delay-remove", "delay-to-zero", "delay-clamped", "delay-inside-clamped",
        "bronstein-clamped", "fischer-add", "none-clamped", "none-zero"])
def test_with_reserve_change(mode, e, delta, applied):
    t = T0 + e
    turn = begin(mode)
    changed, got = turn.with_reserve_change(t, delta)
    assert got == applied
    shown = spec_shown(mode, R0, D, e)
    assert changed.reserve_at(t) == shown + applied
    assert changed.reserve_at(t) >= 0
    # the turn runs on from there: same elapsed time, same delay
    later = 3 * S
    assert changed.reserve_at(t + later) == spec_shown(mode, R0 + applied, D, e + later)
    assert changed.end(t + later).reserve_after == spec_after(mode, R0 + applied, D, e + later)
    assert changed.flag_at() == turn.flag_at() + applied


def test_reserve_change_on_a_paused_turn():
    t_pause = T0 + 20 * S
    frozen = begin(TimeMode.DELAY).frozen(t_pause)
    changed, applied = frozen.with_reserve_change(t_pause + 100 * S, -10 * S)
    assert applied == -10 * S
    assert not changed.running
    assert changed.reserve_at(t_pause + 200 * S) == R0 - 8 * S - 10 * S
    assert changed.resumed(T0 + 500 * S).flag_at() == T0 + 500 * S + (R0 - 8 * S - 10 * S)


def test_turn_end_fields():
    end = begin(TimeMode.DELAY).end(T0 + 15 * S)
    assert end == TurnEnd(span=15 * S, delay_used=D, charged=3 * S, refund=0,
                          reserve_after=R0 - 3 * S)

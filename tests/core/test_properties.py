"""Property-based tests (hypothesis) of the engine against SPEC §2, §3, §7, §9 and the fine points.

The oracles are an independent reading of SPEC: plain integer arithmetic over the turn spans the
test itself scheduled (§2's table), states the test reasons from the phase tables of §3, or a
second run of the same physical inputs in the world SPEC describes (the play without an undone
action, the tap alone). The hold properties also compare with the match fold given the gesture
already decided (`match.apply` of a Tap or Hold at the down edge), which checks the gesture layer.

1. Random input sequences in every time mode and discipline, with small reserves so flags fall:
   the engine never raises; no reserve shown is ever below zero at any sampled instant (also
   between inputs and one nanosecond before every timer); between events only the running side's
   reserve moves, and only down; `running` agrees with the phase (§9).
2. Exact charging: tap-only alternating play with arbiter pauses against an oracle of §2's table,
   to the nanosecond; for random sequences an audit of the surviving effects (each turn's span
   rebuilt from its start, pauses and result entries; the end-of-turn rule of the mode;
   initial + refunds + changes + overtime − charged = final reserve; Σ span = Σ charged + delay);
   `adjust` / `deduct` / `add` on the reserve shown at their instant (fine point 11).
3. The flag instant: t0 + D + R (delay) or t0 + R, later by every pause (arbiter or cube holds);
   no flag one nanosecond before; a tap at the instant is too late (fine point 4); overtime
   (fine point 8).
4. Undo (§7, fine point 12): undo followed by nothing is the state without the undone action; undo
   after more play is the same physical play without the action and without the later inputs
   that had no effect.
5. durations.py: decimal text <-> integer nanoseconds, exactly; clock faces round tenths down.
6. Holds (§3, fine points 1, 2, 4): a press released before hold_s is the tap; a press kept for
   hold_s acts from its down edge; a tap of the opponent inside the window confirms the result.

The examples are derandomized (the same every run); GAMMONCLOCK_PROPERTY_EXAMPLES=N searches
afresh with N random examples per property.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from hypothesis import HealthCheck, assume, example, given, note
from hypothesis import event as tally
from hypothesis import strategies as st

from gammonclock.core import match as m
from gammonclock.core.effects import (
    BreakOverrun,
    BreakStarted,
    DoubleOffered,
    DoubleTaken,
    Effect,
    FlagFell,
    GameEnded,
    GameStarted,
    MatchEnded,
    OvertimeGiven,
    Paused,
    Refused,
    ReserveChanged,
    ResultEntryCancelled,
    ResultEntryStarted,
    Resumed,
    TurnEnded,
    TurnEndReason,
    TurnStarted,
    Undone,
)
from gammonclock.core.engine import Engine, Input
from gammonclock.core.match import Phase
from gammonclock.core.rules import EndReason, Family, MatchRules, ResultKind
from gammonclock.core.timecontrol import FlagRule, TimeControl, TimeMode
from gammonclock.durations import (
    DurationError,
    format_clock,
    format_seconds,
    parse_duration,
    parse_signed_duration,
    seconds_to_ns,
)
from gammonclock.sides import Button, Pair, Side
from gammonclock.sim.script import parse_script
from property_helpers import property_settings
from strategy_helpers import (
    BUTTONS,
    MODES,
    MS,
    NS,
    PLAY_GAPS,
    SIDES,
    Run,
    arb,
    down,
    drive,
    feed,
    fork,
    play_on,
    play_rules,
    random_case,
    settled_prefix,
    sorted_inputs,
    tap_length,
    up,
)

# Deterministic by default; GAMMONCLOCK_PROPERTY_EXAMPLES explores (see property_helpers.py).
_HEALTH = [HealthCheck.too_slow, HealthCheck.filter_too_much]
PROPS = property_settings(300, suppress_health_check=_HEALTH)
MANY = property_settings(500, suppress_health_check=_HEALTH)


# =================================================================================================
# SPEC §2: the time-control table, as plain arithmetic
# =================================================================================================

def shown_charge(mode: TimeMode, delay: int, e: int) -> int:
    """How much less than R0 the reserve shows after `e` of running (pauses excluded)."""
    return max(0, e - delay) if mode is TimeMode.DELAY else e


def end_rule(mode: TimeMode, delay: int, span: int) -> tuple[int, int, int]:
    """(delay_used, charged, refund) at the end of a turn of `span` (SPEC §2's table)."""
    if mode is TimeMode.DELAY:
        used = min(span, delay)
        return used, span - used, 0
    if mode is TimeMode.BRONSTEIN:
        return 0, span, min(span, delay)
    if mode is TimeMode.FISCHER:
        return 0, span, delay
    return 0, span, 0


def budget(mode: TimeMode, delay: int, reserve: int) -> int:
    """Running time from a turn's start to its flag: D + R0 in delay mode, R0 otherwise."""
    return reserve + (delay if mode is TimeMode.DELAY else 0)


# =================================================================================================
# 1. Random inputs: the engine never raises, no reserve below zero at any sampled instant
# =================================================================================================

def _scripted(rules: MatchRules, text: str) -> tuple[MatchRules, list[Input], int]:
    script = parse_script(text, rules.hold_ns)
    return rules, list(script.inputs), script.end


@PROPS
# Regressions (engine bugs found by these properties): a recorded Hold replayed where a hold means
# nothing. (1) Undo of game 2's start replayed a cube hold (a pause) between games as a break for
# side None; its overrun's flag raised AttributeError. (2) Two presses held to the same instant:
# the second recomputation replayed the first (now a Hold) in `break` as a pass, AssertionError.
@example(case=_scripted(MatchRules.defaults("backgammon", 7, reserve_ns=20 * NS), """
    0 tap left
    1 tap right
    3 hold left
    6 tap right
    10 tap left
    11 hold cube
    15 arbiter undo
    400 end
    """))
@example(case=(
    MatchRules.defaults("backgammon", 2, reserve_ns=1, hold_ns=NS // 2, debounce_ns=0,
                        break_ns=1, breaks_per_player=1,
                        time=TimeControl(TimeMode.DELAY, 0, FlagRule.MATCH_LOSS, 1)),
    [arb(0, "forfeit", "left"), down(0, Button.RIGHT), down(0, Button.LEFT),
     up(NS // 2, Button.RIGHT)],
    NS // 2))
@given(random_case())
def test_random_inputs_never_raise_and_no_reserve_below_zero(case):
    rules, inputs, end = case
    note(f"rules: {rules.discipline.name} L={rules.length} {rules.time} "
         f"reserve={rules.reserve_ns} hold={rules.hold_ns} debounce={rules.debounce_ns}")
    note(f"inputs: {inputs!r} end={end}")
    run = drive(rules, inputs, end, probe=True)
    assert run.match.now == end
    for effect in run.effects:
        for field in ("reserve", "reserve_after"):
            if hasattr(effect, field):
                assert getattr(effect, field) >= 0, effect


# =================================================================================================
# 2. Exact charging
# =================================================================================================

@dataclass
class _Open:
    """A turn rebuilt from the surviving effects: when it started, when it was frozen."""

    side: Side
    start: int
    delay: int
    frozen_at: int | None = None
    frozen_total: int = 0

    def elapsed(self, t: int) -> int:
        upto = self.frozen_at if self.frozen_at is not None else t
        return upto - self.start - self.frozen_total


def audit(rules: MatchRules, run: Run) -> None:
    """Re-derive every charge from the surviving effects with SPEC §2's table and check the books:
    per side, initial + refunds + reserve changes + overtime − charged (flags included) = final."""
    mode = rules.time.mode
    acct = {s: rules.reserve_ns for s in Side}
    sums = {s: dict(refund=0, change=0, overtime=0, charged=0) for s in Side}
    span_total = charged_total = used_total = 0
    turn: _Open | None = None
    overrun = False

    def shown(side: Side, t: int) -> int:
        if turn is not None and turn.side is side:
            return acct[side] - shown_charge(mode, turn.delay, turn.elapsed(t))
        return acct[side]

    for e in run.kept():
        if isinstance(e, BreakOverrun):
            overrun = True
        elif isinstance(e, TurnStarted):
            assert turn is None, f"{e} while another turn is open"
            assert e.reserve == acct[e.side], e
            # A new turn starts with a fresh delay; a break overrun runs with none (§2, §5).
            assert e.delay == (0 if overrun else rules.time.delay_ns), e
            turn, overrun = _Open(e.side, e.t, e.delay), False
        elif isinstance(e, (Paused, ResultEntryStarted)):
            assert turn is not None and turn.frozen_at is None, e
            turn.frozen_at = e.t
        elif isinstance(e, (Resumed, ResultEntryCancelled)):
            assert turn is not None and turn.frozen_at is not None, e
            turn.frozen_total += e.t - turn.frozen_at
            turn.frozen_at = None
        elif isinstance(e, OvertimeGiven):
            assert turn is not None and turn.side is e.side and shown(e.side, e.t) == 0, e
            assert e.amount == rules.time.overtime_ns
            acct[e.side] += e.amount
            sums[e.side]["overtime"] += e.amount
        elif isinstance(e, ReserveChanged):
            before = shown(e.side, e.t)
            assert e.change >= -before, e          # clamped at zero (fine point 11)
            acct[e.side] += e.change
            sums[e.side]["change"] += e.change
            assert e.reserve == before + e.change == shown(e.side, e.t), e
        elif isinstance(e, TurnEnded):
            assert turn is not None and turn.side is e.side, e
            span = turn.elapsed(e.t)
            assert e.span == span, f"{e}: the span rebuilt from its effects is {span}"
            assert e.span == e.charged + e.delay_used
            if e.reason is TurnEndReason.FLAG:
                used = min(span, turn.delay) if mode is TimeMode.DELAY else 0
                assert (e.delay_used, e.charged, e.refund, e.reserve_after) == (
                    used, span - used, 0, 0), e
                # The flag fell exactly when the reserve reached zero.
                assert acct[e.side] - e.charged == 0, e
            else:
                used, charged, refund = end_rule(mode, turn.delay, span)
                assert (e.delay_used, e.charged, e.refund) == (used, charged, refund), e
                assert e.reserve_after == acct[e.side] - charged + refund, e
            acct[e.side] = e.reserve_after
            sums[e.side]["refund"] += e.refund
            sums[e.side]["charged"] += e.charged
            span_total += e.span
            charged_total += e.charged
            used_total += e.delay_used
            turn = None
        elif isinstance(e, FlagFell):
            assert run.match.flag is e.side   # only a losing fall is a FlagFell

    assert span_total == charged_total + used_total
    end = run.match.now
    for side in Side:
        running = (shown_charge(mode, turn.delay, turn.elapsed(end))
                   if turn is not None and turn.side is side else 0)
        s = sums[side]
        books = (rules.reserve_ns + s["refund"] + s["change"] + s["overtime"] - s["charged"]
                 - running)
        assert run.match.reserve_at(side) == books == shown(side, end), side
        assert run.engine.state_json()["clock"][side.value]["reserve_ms"] == books // MS


@PROPS
@given(random_case())
def test_books_balance_over_the_surviving_effects(case):
    rules, inputs, end = case
    note(f"rules: {rules.discipline.name} L={rules.length} {rules.time} "
         f"reserve={rules.reserve_ns} hold={rules.hold_ns} debounce={rules.debounce_ns}")
    note(f"inputs: {inputs!r} end={end}")
    audit(rules, drive(rules, inputs, end))


@st.composite
def alternating_play(draw):
    """Tap-only play of one game: the opener taps to start it, then the sides alternate. Each
    turn runs `span` (pauses excluded) and may be paused by the arbiter at running offsets within
    it; the last turn is still running when the run ends."""
    mode = draw(MODES)
    delay = draw(st.integers(0, 8 * NS))
    reserve = draw(st.one_of(st.integers(1, 40 * NS), st.integers(600 * NS, 1200 * NS)))
    debounce = draw(st.sampled_from([0, 1, 30 * MS, 50 * MS]))
    opener = draw(SIDES)
    t0 = draw(st.integers(0, 5 * NS))
    lo = max(debounce, 1)
    n = draw(st.integers(1, 10))
    turns = []
    for _ in range(n):
        span = draw(st.one_of(st.integers(lo, lo + 10 * MS), st.integers(lo, 30 * NS)))
        pauses = sorted(draw(st.lists(st.tuples(st.integers(0, span), st.integers(0, 5 * NS)),
                                      max_size=2)))
        turns.append((span, pauses))
    return mode, delay, reserve, debounce, opener, t0, turns


@PROPS
@given(alternating_play())
def test_alternating_play_charges_exactly_per_spec_table(play):
    mode, delay, reserve, debounce, opener, t0, turns = play
    rules = MatchRules.defaults(
        "backgammon", 7, time=TimeControl(mode, delay, FlagRule.MATCH_LOSS, 60 * NS),
        reserve_ns=reserve, debounce_ns=debounce)
    press = max(debounce, 1)            # a tap: released after the debounce, long before hold_s
    items: list[tuple[int, int, Input]] = []

    def at(t: int, event: Input) -> None:
        items.append((t, len(items), event))

    # --- the oracle: SPEC §2's table over the spans scheduled here -------------------------
    res = {s: reserve for s in Side}
    spans: list[int] = []                 # completed turns, in order
    flag: tuple[Side, int] | None = None
    side, t = opener.other, t0
    at(t0, down(t0, Button.of(opener)))
    at(t0 + press, up(t0 + press, Button.of(opener)))
    for i, (span, pauses) in enumerate(turns):
        last = i == len(turns) - 1
        limit = budget(mode, delay, res[side])
        wall, ran = t, 0
        for offset, length in pauses:
            wall += offset - ran
            ran = offset
            at(wall, arb(wall, "pause"))
            at(wall + length, arb(wall + length, "resume"))
            wall += length
        end_wall = wall + span - ran
        if flag is None and span >= limit:
            # The flag falls after `limit` of running; pauses that began before it shift it.
            shift = sum(length for offset, length in pauses if offset < limit)
            flag = (side, t + limit + shift)
            res[side] = 0
        elif flag is None:
            if last:
                res[side] -= shown_charge(mode, delay, span)
            else:
                _, charged, refund = end_rule(mode, delay, span)
                res[side] += refund - charged
                spans.append(span)
        if not last:
            at(end_wall, down(end_wall, Button.of(side)))
            at(end_wall + press, up(end_wall + press, Button.of(side)))
        side, t = side.other, end_wall
    end = t
    inputs = sorted_inputs(items)
    note(f"inputs: {inputs!r} end={end}; oracle: {res}, flag {flag}")

    run = drive(rules, inputs, end)
    for s in Side:
        assert run.match.reserve_at(s) == res[s], s
        assert run.engine.state_json()["clock"][s.value]["reserve_ms"] == res[s] // MS
    switches = [e.span for e in run.kept()
                if isinstance(e, TurnEnded) and e.reason is TurnEndReason.SWITCH]
    assert switches == spans
    flags = [e for e in run.kept() if isinstance(e, FlagFell)]
    if flag is None:
        assert flags == [] and run.match.phase is Phase.RUNNING
        assert run.match.running_side is side.other
    else:
        assert [(e.side, e.t) for e in flags] == [flag]
        assert run.match.flag is flag[0] and run.match.end_reason is EndReason.FLAG
        assert run.match.winner is flag[0].other
        assert run.match.score[flag[0].other] == rules.length


@PROPS
@given(mode=MODES, delay=st.integers(0, 15 * NS), reserve=st.integers(0, 120 * NS),
       opener=SIDES, running_for=st.integers(0, 200 * NS), target_runner=st.booleans(),
       command=st.sampled_from(["adjust", "adjust+", "adjust-", "deduct", "add"]),
       amount=st.one_of(st.integers(1, 130 * NS), st.just(0)), at_half=st.booleans())
def test_reserve_commands_act_on_the_reserve_shown_at_their_instant(
        mode, delay, reserve, opener, running_for, target_runner, command, amount, at_half):
    """§7 and fine point 11: `adjust` (no sign adds) clamps at 0; `deduct` is refused above half
    of the reserve shown at that instant (exactly half is allowed); `add` adds. On the running
    side the change applies to the reserve shown then, and the clock runs on from there."""
    assume(amount > 0 or command.startswith("adjust"))
    rules = MatchRules.defaults("backgammon", 7, time=TimeControl(mode, delay, FlagRule.MATCH_LOSS,
                                                                  NS), reserve_ns=reserve)
    runner = opener.other
    side = runner if target_runner else opener
    t = running_for
    shown = reserve - (shown_charge(mode, delay, t) if side is runner else 0)
    assume(budget(mode, delay, reserve) > t)     # no flag before the command
    if command == "deduct" and at_half:
        amount = (shown + 1) // 2    # exactly half of an even reserve; just over half of an odd one
    secs = f"{amount // NS}.{amount % NS:09d}s"
    words = {"adjust": ["adjust", side.value, secs], "adjust+": ["adjust", side.value, "+" + secs],
             "adjust-": ["adjust", side.value, "-" + secs], "deduct": ["deduct", side.value, secs],
             "add": ["add", side.value, secs]}[command]
    if command == "deduct" and amount == 0:
        return
    inputs = [down(0, Button.of(opener)), up(NS // 10, Button.of(opener)), arb(t, *words)]
    run = drive(rules, sorted_inputs([(i.t, n, i) for n, i in enumerate(inputs)]), t)
    if command == "adjust-":
        expected = max(0, shown - amount)
    elif command == "deduct":
        expected = shown if 2 * amount > shown else shown - amount
        refused = [e for e in run.effects if isinstance(e, Refused)]
        assert bool(refused) == (2 * amount > shown)
    else:
        expected = shown + amount
    assert run.match.reserve_at(side) == expected
    # The clock runs on from the changed reserve (a running side's delay is kept).
    later = t + NS
    feed(run, [], later)
    if side is runner and run.match.flag is None:
        assert run.match.reserve_at(side) == expected - (
            shown_charge(mode, delay, t + NS) - shown_charge(mode, delay, t))
    elif side is not runner:
        assert run.match.reserve_at(side) == expected


# =================================================================================================
# 3. The flag falls at exactly the instant of SPEC §2
# =================================================================================================

@st.composite
def flag_setup(draw):
    mode = draw(MODES)
    reserve = draw(st.one_of(st.integers(1, 5 * NS), st.integers(1, 30 * 60 * NS)))
    delay = draw(st.integers(0, 30 * NS))
    t0 = draw(st.integers(0, 3600 * NS))
    opener = draw(SIDES)
    hold = draw(st.integers(NS // 2, 5 * NS))
    debounce = draw(st.integers(0, 50 * MS))
    limit = budget(mode, delay, reserve)
    # Pauses at running offsets short of the flag, each by the arbiter or by two cube holds
    # (pause at the first down edge, resume at the second: both act from their down edges).
    raw = draw(st.lists(st.tuples(st.integers(0, limit - 1), st.integers(0, 90 * NS),
                                  st.booleans(), st.integers(0, NS), st.integers(0, NS)),
                        max_size=3))
    return mode, reserve, delay, t0, opener, hold, debounce, sorted(raw)


def _flag_inputs(setup):
    """The inputs of a flag setup and the instant the flag must fall at (SPEC §2: t0 + D + R0 in
    delay mode, t0 + R0 otherwise, later by the length of every pause)."""
    mode, reserve, delay, t0, opener, hold, debounce, raw = setup
    limit = budget(mode, delay, reserve)
    items: list[tuple[int, int, Input]] = []

    def at(t: int, event: Input) -> None:
        items.append((t, len(items), event))

    at(t0, down(t0, Button.of(opener)))
    at(t0 + max(debounce, 1), up(t0 + max(debounce, 1), Button.of(opener)))
    wall, ran, cube_free, recognised = t0, 0, t0, t0
    for offset, length, by_cube, extra1, extra2 in raw:
        offset = max(offset, ran)            # offsets are sorted; a cube gap may have passed one
        wall += offset - ran
        ran = offset
        if by_cube:
            if cube_free > wall:             # a cube press is not a bounce of the last one
                ran += cube_free - wall      # (the clock runs meanwhile)
                wall = cube_free
            resume = max(wall + length, wall + hold + extra1 + debounce)
            at(wall, down(wall, Button.CUBE))
            at(wall + hold + extra1, up(wall + hold + extra1, Button.CUBE))
            at(resume, down(resume, Button.CUBE))
            at(resume + hold + extra2, up(resume + hold + extra2, Button.CUBE))
            cube_free = resume + hold + extra2 + debounce
            recognised = resume + hold
        else:
            resume = wall + length
            at(wall, arb(wall, "pause"))
            at(resume, arb(resume, "resume"))
        wall = resume
        if ran >= limit:  # cube spacing pushed a pause past the flag: not a useful example
            return None
    expected = wall + limit - ran
    return items, expected, recognised


@PROPS
@given(setup=flag_setup(), flag_rule=st.sampled_from(list(FlagRule)),
       overtime=st.integers(1, 120 * NS))
def test_flag_falls_at_exactly_the_spec_instant(setup, flag_rule, overtime):
    mode, reserve, delay, t0, opener, hold, debounce, _ = setup
    built = _flag_inputs(setup)
    assume(built is not None)
    items, expected, recognised = built
    runner = opener.other
    rules = MatchRules.defaults(
        "backgammon", 5, time=TimeControl(mode, delay, flag_rule, overtime),
        reserve_ns=reserve, hold_ns=hold, debounce_ns=debounce)
    inputs = sorted_inputs(items)
    note(f"inputs: {inputs!r}; expected flag at {expected}")

    # One nanosecond before: no flag, and 1 ns of reserve left (once the last resume is known).
    before = drive(rules, inputs, expected - 1)
    assert before.match.flag is None and before.match.end_reason is None
    assert not [e for e in before.kept() if isinstance(e, (FlagFell, OvertimeGiven))]
    if recognised <= expected - 1:
        assert before.match.running_side is runner
        assert before.match.reserve_at(runner) == 1

    # The flag is known once the last resume hold is recognised (it acts from its down edge).
    at_flag = drive(rules, inputs, max(expected, recognised))
    if flag_rule is FlagRule.MATCH_LOSS:
        flags = [e for e in at_flag.kept() if isinstance(e, FlagFell)]
        assert [(e.side, e.t) for e in flags] == [(runner, expected)]
        assert at_flag.match.flag is runner and at_flag.match.winner is opener
        assert at_flag.match.reserve_at(runner) == 0
        ended = [e for e in at_flag.kept() if isinstance(e, MatchEnded)]
        assert [(e.t, e.reason) for e in ended] == [(expected, EndReason.FLAG)]
    else:
        # Fine point 8: the first fall adds overtime and the turn keeps running.
        given_ = [e for e in at_flag.kept() if isinstance(e, OvertimeGiven)]
        assert [(e.side, e.t, e.amount) for e in given_] == [(runner, expected, overtime)]
        if recognised <= expected:
            assert at_flag.match.flag is None and at_flag.match.running_side is runner
            assert at_flag.match.reserve_at(runner) == overtime
        second = drive(rules, inputs, max(expected + overtime, recognised))
        flags = [e for e in second.kept() if isinstance(e, FlagFell)]
        assert [(e.side, e.t) for e in flags] == [(runner, expected + overtime)]
        assert second.match.flag is runner

    # Fine point 4: a tap of the running side at exactly the flag instant is too late.
    n = len(items)
    tap = items + [(expected, n, down(expected, Button.of(runner))),
                   (expected + 1, n + 1, up(expected + 1, Button.of(runner)))]
    late = drive(rules, sorted_inputs(tap), max(expected, recognised) + NS)
    switched = [e for e in late.kept() if isinstance(e, TurnEnded) and e.t == expected
                and e.reason is TurnEndReason.SWITCH]
    if flag_rule is FlagRule.MATCH_LOSS:
        assert switched == []
        assert late.match.flag is runner and late.match.phase is Phase.MATCH_OVER
        assert late.match.reserve_at(runner) == 0


# =================================================================================================
# 4. Undo followed by nothing is the state without the undone action
# =================================================================================================

def _is_player_action(effects: list[Effect]) -> bool:
    """The actions §7 lists as undoable: a turn switch, a double, a take, a game start, a
    confirmed result."""
    return any(isinstance(e, (GameStarted, DoubleOffered, DoubleTaken, GameEnded))
               or (isinstance(e, TurnEnded) and e.reason is TurnEndReason.SWITCH)
               for e in effects)


def _action_kind(effects: list[Effect]) -> str:
    for kind, name in ((GameStarted, "game start"), (DoubleOffered, "double"),
                       (DoubleTaken, "take"), (GameEnded, "confirmed result")):
        if any(isinstance(e, kind) for e in effects):
            return name
    return "turn switch"


@st.composite
def undo_case(draw):
    rules = draw(play_rules())
    prefix, settled = draw(settled_prefix(rules))
    t_a = settled + draw(PLAY_GAPS)
    press = tap_length(rules, draw(st.integers(0, 1000)))
    # The undo comes after the release, or while the button is still down (released before
    # hold_s, after the undo).
    while_down = draw(st.booleans())
    if while_down:
        t_u = t_a + draw(st.integers(0, press - 1))
    else:
        t_u = t_a + press + draw(st.one_of(st.just(0), st.integers(0, 30 * NS)))
    later = draw(st.integers(0, 120 * NS))
    pick = draw(st.integers(0, 2))
    return rules, prefix, t_a, press, while_down, t_u, later, pick


@PROPS
@given(undo_case())
def test_undo_followed_by_nothing_is_the_state_without_the_action(case):
    """§7: after `undo`, "state and clocks become what they would be had it never happened": the
    time since is charged to whoever was running before it."""
    rules, prefix, t_a, press, while_down, t_u, later, pick = case
    base = drive(rules, prefix, t_a)
    options = {b: base.engine.feed(down(t_a, b))[1] for b in Button}
    candidates = [b for b in Button if _is_player_action(options[b])]
    assume(candidates)
    button = candidates[pick % len(candidates)]
    tally(f"undo of a {_action_kind(options[button])}"
          + (" while the button is down" if while_down else ""))
    note(f"rules: {rules.discipline.name} {rules.time} reserve={rules.reserve_ns}")
    note(f"prefix: {prefix!r}; action: tap {button} at {t_a} for {press}; undo at {t_u}")

    release = up(t_a + press, button)
    acted = feed(fork(base), [down(t_a, button)] + ([] if while_down else [release]), t_u)
    undone = feed(fork(acted), [arb(t_u, "undo")])
    outcome = undone.effects[len(acted.effects):]
    if while_down:
        feed(acted, [release])
        feed(undone, [release])
    now = undone.match.now
    without = feed(fork(base), [], now)

    if any(isinstance(e, Refused) for e in outcome):
        # Fine point 12: refused only after a match lost on flag (here: between action and undo).
        tally("undo refused after a flag")
        assert acted.match.end_reason is EndReason.FLAG
        assert undone.match == acted.match
        return
    assert any(isinstance(e, Undone) for e in outcome)
    assert undone.engine.state_json() == without.engine.state_json()
    assert undone.match.turn == without.match.turn
    assert undone.match == without.match
    # ... and it goes on the same: the running turn is the same turn, its flag at the same instant.
    assert undone.engine.next_deadline() == without.engine.next_deadline()
    feed(undone, [], now + later)
    feed(without, [], now + later)
    assert undone.match == without.match
    assert undone.engine.state_json() == without.engine.state_json()


TIMER_EFFECTS = (FlagFell, OvertimeGiven, BreakOverrun)


@st.composite
def undo_after_play_case(draw, holds: bool = True):
    rules = draw(play_rules())
    prefix, settled = draw(settled_prefix(rules, max_size=10))
    t_a = settled + draw(PLAY_GAPS)
    press = tap_length(rules, draw(st.integers(0, 1000)))
    pick = draw(st.integers(0, 2))
    # The gestures after the action, chosen with a look at the match after it (when it is one).
    engine = Engine.start(rules)
    for event in prefix:
        engine, _ = engine.feed(event)
    engine, _ = engine.advance(t_a)
    candidates = [b for b in Button if _is_player_action(engine.feed(down(t_a, b))[1])]
    if candidates:
        button = candidates[pick % len(candidates)]
        for event in (down(t_a, button), up(t_a + press, button)):
            engine, _ = engine.feed(event)
    middle, _, after = play_on(draw, rules, engine, t_a + press + rules.debounce_ns, 4,
                               min_size=1, holds=holds, undo=False)
    t_u = after + draw(st.one_of(st.just(0), st.integers(0, 10 * NS)))
    return rules, prefix, t_a, press, middle, t_u, pick


@PROPS
@example(case=(
    # Regression (an engine bug found by this property): undo replayed the later press as the
    # Hold it had been in the world with the action, in result_entry, where a hold means nothing:
    # a nested "left passes" result entry, then a cancel into result_entry with a running clock,
    # then an AssertionError on the next tap.
    # Game 1: right holds (result entry, "right wins single"); left confirms at 10 s [undone];
    # left holds at 15 s to ask for a break; undo at 25 s. Without the confirm, left's press at
    # 15 s is a tap of the non-holder in result_entry: it confirms (a hold means nothing there).
    MatchRules.defaults("backgammon", 7),
    [down(0, Button.LEFT), up(NS // 10, Button.LEFT),
     down(5 * NS, Button.RIGHT), up(7 * NS + NS // 2, Button.RIGHT)],
    10 * NS, NS // 10,
    [[down(15 * NS, Button.LEFT), up(17 * NS + NS // 2, Button.LEFT)]],
    25 * NS, 0))
@given(undo_after_play_case())
def test_undo_after_later_play_is_the_play_without_the_action(case):
    check_undo_after_later_play(case)


@PROPS
@given(undo_after_play_case(holds=False))
def test_undo_after_later_taps_commands_and_dice_is_the_play_without_the_action(case):
    """The same property where every later press is a tap (shorter than hold_s)."""
    check_undo_after_later_play(case)


def check_undo_after_later_play(case) -> None:
    """§7: undo turns back the last player action: "state and clocks become what they would be
    had it never happened"; fine point 12: the inputs after it that had no effect are dropped with
    it. So the reference is the same physical inputs (button edges, commands, dice lines) without
    the undone gesture and without the later ones that had no effect, each judged afresh in the
    world where the action never happened (a hold is judged in the phase its button went down
    in)."""
    rules, prefix, t_a, press, middle, t_u, pick = case
    base = drive(rules, prefix, t_a)
    candidates = [b for b in Button if _is_player_action(base.engine.feed(down(t_a, b))[1])]
    assume(candidates)
    button = candidates[pick % len(candidates)]
    groups = [[down(t_a, button), up(t_a + press, button)], *middle]
    note(f"rules: {rules.discipline.name} {rules.time} reserve={rules.reserve_ns} "
         f"hold={rules.hold_ns} debounce={rules.debounce_ns}")
    note(f"prefix: {prefix!r}")
    note(f"gestures: {groups!r}; undo at {t_u}")

    acted = fork(base)
    effective, actions = [], []
    for group in groups:
        feed(acted, [], group[0].t)
        seen = len(acted.kept())
        feed(acted, group, group[-1].t)
        new = acted.kept()[seen:]
        effective.append(any(not e.inert for e in new))
        actions.append(_is_player_action(new))
    feed(acted, [], t_u)
    # Timers in between (a flag, overtime, a break's end) are not inputs: keep them out.
    assume(not any(isinstance(e, TIMER_EFFECTS) for e in acted.kept()[len(base.kept()):]))
    assert actions[0]
    target = max(i for i, a in enumerate(actions) if a)
    tally(f"undo of gesture {target} of {len(groups)}")
    undone = feed(fork(acted), [arb(t_u, "undo")])
    assert any(isinstance(e, Undone) for e in undone.effects[len(acted.effects):])

    kept = [i for n, g in enumerate(groups)
            if n < target or (n > target and effective[n]) for i in g]
    reference = feed(fork(base), kept, t_u)
    note(f"undone: {target}; reference inputs after the prefix: {kept!r}")
    assert undone.engine.state_json() == reference.engine.state_json()
    assert undone.match == reference.match


# =================================================================================================
# 5. durations.py: decimal text <-> integer nanoseconds, exactly
# =================================================================================================

DIGITS = "0123456789"
UNIT_NS = {"h": 3600 * NS, "m": 60 * NS, "s": NS, "ms": MS}


def _normalised(whole: str, frac: str) -> str:
    whole = whole.lstrip("0") or "0"
    frac = frac.rstrip("0")
    return f"{whole}.{frac}" if frac else whole


@MANY
@given(whole=st.text(DIGITS, min_size=1, max_size=6), frac=st.text(DIGITS, max_size=9))
def test_seconds_text_round_trips_exactly(whole, frac):   # under 1 000 h: the bound on durations
    text = whole + (f".{frac}" if frac else "")
    ns = int(whole) * NS + (int(frac.ljust(9, "0")) if frac else 0)
    assert parse_duration(f"{text}s") == ns
    assert parse_duration(text, bare_seconds=True) == ns
    assert seconds_to_ns(text) == ns
    assert format_seconds(ns) == _normalised(whole, frac)
    assert format_seconds(parse_duration(f"{text}s")) == _normalised(whole, frac)
    assert seconds_to_ns(f"-{text}") == -ns
    assert parse_signed_duration(f"-{text}s") == -ns
    assert parse_signed_duration(f"+{text}") == ns
    if frac:
        assert parse_duration(f".{frac}s") == int(frac.ljust(9, "0"))


@MANY
@given(ns=st.integers(-10**15, 10**15))
def test_format_seconds_parses_back(ns):
    text = format_seconds(ns)
    assert seconds_to_ns(text) == ns
    if ns >= 0:
        assert parse_duration(f"{text}s") == ns
        whole, _, frac = text.partition(".")
        assert len(frac) <= 9 and not frac.endswith("0") and whole == str(ns // NS)


@MANY
@given(groups=st.lists(st.tuples(st.text(DIGITS, min_size=1, max_size=4),
                                 st.text(DIGITS, max_size=12), st.sampled_from(list(UNIT_NS))),
                       min_size=1, max_size=4))
def test_duration_groups_add_up_exactly_or_are_refused(groups):
    """Groups add up (`2m30s`); a group finer than a nanosecond is an error, never rounded, and
    so is a sum over 1 000 h (the bound on every duration from outside, issue 7)."""
    text = "".join(w + (f".{f}" if f else "") + u for w, f, u in groups)
    parts = [(Fraction(int(w)) + (Fraction(int(f), 10 ** len(f)) if f else 0)) * UNIT_NS[u]
             for w, f, u in groups]
    if any(p.denominator != 1 for p in parts) or sum(parts) > 1000 * 3600 * NS:
        try:
            parse_duration(text)
        except DurationError:
            return
        raise AssertionError(f"{text!r} is finer than a nanosecond or over 1 000 h and was "
                             "accepted")
    assert parse_duration(text) == int(sum(parts))


@MANY
@given(ns=st.integers(0, 100 * 3600 * NS))
def test_format_clock_rounds_tenths_down(ns):
    text = format_clock(ns)
    parts, tenth = text.split(".")
    fields = [int(p) for p in parts.split(":")]
    seconds = 0
    for f in fields:
        seconds = seconds * 60 + f
    shown = seconds * NS + int(tenth) * (NS // 10)
    assert shown <= ns < shown + NS // 10
    assert all(f < 60 for f in fields[1:])


# =================================================================================================
# 6. Holds: released before hold_s it is the tap; kept for hold_s it acts from its down edge
# =================================================================================================

def spec_hold_means_something(state: m.MatchState, button: Button) -> bool:
    """SPEC §3's table and fine point 1: where a hold has a meaning."""
    if state.phase is Phase.BETWEEN_GAMES:
        return button is not Button.CUBE                      # a break request
    if state.phase is Phase.RUNNING:
        return True                                           # result entry / pause
    if state.phase is Phase.CUBE_OFFERED:
        assert state.offer is not None
        return button is Button.CUBE or button.side is state.offer.doubler.other  # pause / pass
    if state.phase is Phase.PAUSED:
        return button is Button.CUBE                          # resume
    return False


@st.composite
def hold_case(draw):
    rules = draw(play_rules())
    prefix, settled = draw(settled_prefix(rules))
    t_d = settled + draw(PLAY_GAPS)
    button = draw(BUTTONS)
    short = tap_length(rules, draw(st.one_of(st.just(1000), st.integers(0, 1000))))
    long_ = draw(st.one_of(st.just(rules.hold_ns),
                           st.integers(rules.hold_ns, rules.hold_ns + 3 * NS), st.none()))
    look = t_d + rules.hold_ns + draw(st.one_of(st.just(0), st.integers(0, 20 * NS)))
    return rules, prefix, t_d, button, short, long_, look


def _reference(base: Run, event: m.Event, look: int) -> m.MatchState:
    """The match fold with the gesture already decided: `event` applied at its instant."""
    state, _ = m.apply(base.match, event)
    return m.advance(state, look)[0]


@PROPS
@given(hold_case())
def test_a_press_released_before_hold_s_is_the_tap(case):
    rules, prefix, t_d, button, short, _, look = case
    base = drive(rules, prefix, t_d)
    note(f"prefix: {prefix!r}; press {button} at {t_d} for {short}; look at {look}")
    canonical = max(rules.debounce_ns, 1)
    pressed = feed(fork(base), [down(t_d, button), up(t_d + short, button)], look)
    tapped = feed(fork(base), [down(t_d, button), up(t_d + canonical, button)], look)
    assert pressed.match == tapped.match
    assert pressed.match == _reference(base, m.Tap(t_d, button), look)
    assert pressed.engine.state_json() == tapped.engine.state_json()


@PROPS
@given(hold_case())
def test_a_press_kept_for_hold_s_acts_from_its_down_edge(case):
    rules, prefix, t_d, button, _, long_, look = case
    base = drive(rules, prefix, t_d)
    before = base.match                          # the state the down edge found
    note(f"prefix: {prefix!r}; hold {button} at {t_d} for {long_}; look at {look}; "
         f"phase then: {before.phase}")
    edges: list[Input] = [down(t_d, button)]
    if long_ is not None:
        edges.append(up(t_d + long_, button))
    held = feed(fork(base), edges, look)
    after = held.match
    meaning = spec_hold_means_something(before, button)
    tally(f"hold of {button} in {before.phase.value}")
    reference = _reference(base, (m.Hold if meaning else m.Tap)(t_d, button), look)
    assert after == reference
    new = [e for e in held.kept()[len(base.kept()):]]
    frozen_at_down = {s: before.reserve_at(s) for s in Side}

    if not meaning:
        # Fine point 1: where a hold means nothing, the tap's effect stands.
        tapped = feed(fork(base), [down(t_d, button), up(t_d + max(rules.debounce_ns, 1), button)],
                      look)
        assert after == tapped.match
    elif before.phase is Phase.BETWEEN_GAMES:
        # A break request, never a game start (§3, fine point 1), reserves untouched.
        assert not [e for e in new if isinstance(e, GameStarted)]
        assert after.game == before.game
        assert {s: after.reserve_at(s) for s in Side} == frozen_at_down
        side = button.side
        breaks = [e for e in new if isinstance(e, BreakStarted)]
        if before.game == 1 or before.breaks_left[side] <= 0 or rules.discipline.blitz:
            assert breaks == [] and after.phase is Phase.BETWEEN_GAMES
        if breaks:
            assert [(e.t, e.side) for e in breaks] == [(t_d, side)]
            assert after.breaks_left[side] == before.breaks_left[side] - 1
    elif before.phase is Phase.PAUSED:
        # Resume from the down edge: the paused turn goes on with what it had left.
        turn = before.turn
        assert turn is not None
        e = turn.elapsed + (look - t_d)
        left = turn.start_reserve - shown_charge(turn.mode, turn.delay, e)
        if left > 0 and after.flag is None and after.overtime_used == before.overtime_used:
            assert after.phase is before.resume_phase
            assert after.running_side is turn.side
            assert after.reserve_at(turn.side) == left
    else:
        # Result entry or pause: both clocks stop at the down edge; what the down edge did as a
        # tap (a switch, a double, a take) is undone exactly.
        assert after.running_side is None
        assert {s: after.reserve_at(s) for s in Side} == frozen_at_down
        assert after.cube_value == before.cube_value and after.cube_owner == before.cube_owner
        assert after.turn is not None and before.turn is not None
        assert after.turn.side is before.turn.side
        started = [e for e in new if isinstance(e, ResultEntryStarted)]
        if button is Button.CUBE:
            assert after.phase is Phase.PAUSED and after.resume_phase is before.phase
            assert [e.t for e in new if isinstance(e, Paused)] == [t_d]
        elif before.phase is Phase.RUNNING:
            assert after.phase is Phase.RESULT_ENTRY
            assert [(e.t, e.holder, e.proposal.winner, e.proposal.kind) for e in started] == [
                (t_d, button.side, button.side,
                 ResultKind.OIN if rules.family is Family.LONGGAMMON else ResultKind.SINGLE)]
        else:
            assert before.offer is not None
            assert after.phase is Phase.RESULT_ENTRY
            assert [(e.t, e.holder, e.passed) for e in started] == [(t_d, button.side, True)]
            assert started[0].proposal.winner is before.offer.doubler
            assert started[0].proposal.points == before.offer.value


@st.composite
def window_case(draw):
    """A game in play, then P holds their button while the opponent taps inside the window."""
    mode = draw(MODES)
    delay = draw(st.integers(0, 12 * NS))
    hold = draw(st.integers(NS // 2, 5 * NS))
    debounce = draw(st.integers(0, 50 * MS))
    opener = draw(SIDES)
    lo = max(debounce, 1)
    spans = draw(st.lists(st.integers(lo, 20 * NS), max_size=6))
    running_for = draw(st.integers(0, 20 * NS))
    holder = draw(SIDES)
    window = draw(st.integers(lo, hold - 1))
    return mode, delay, hold, debounce, opener, spans, running_for, holder, window


@PROPS
@given(window_case())
def test_an_opponents_tap_inside_the_hold_window_confirms_the_result(case):
    """Fine point 2: inputs in the window are applied again after the hold, in order; the
    opponent's tap becomes the confirmation of "holder wins single"."""
    mode, delay, hold, debounce, opener, spans, running_for, holder, window = case
    reserve = 600 * NS
    rules = MatchRules.defaults("backgammon", 7, time=TimeControl(mode, delay, FlagRule.MATCH_LOSS,
                                                                  60 * NS),
                                reserve_ns=reserve, hold_ns=hold, debounce_ns=debounce)
    press = max(debounce, 1)
    res = {s: reserve for s in Side}
    items: list[tuple[int, int, Input]] = []

    def at(t: int, event: Input) -> None:
        items.append((t, len(items), event))

    t = 0
    at(0, down(0, Button.of(opener)))
    at(press, up(press, Button.of(opener)))
    side = opener.other
    last_edge = {opener: press, opener.other: -NS}
    for span in spans:
        _, charged, refund = end_rule(mode, delay, span)
        res[side] += refund - charged
        t += span
        at(t, down(t, Button.of(side)))
        at(t + press, up(t + press, Button.of(side)))
        last_edge[side] = t + press
        side = side.other
    # `side` is running; the holder goes down at t_d, the opponent taps inside the window.
    t_d = max(t + running_for, last_edge[holder] + debounce)
    e = t_d - t
    _, charged, refund = end_rule(mode, delay, e)     # the turn ends at the down edge
    res[side] += refund - charged
    opponent = holder.other
    t_o = max(t_d + window, last_edge[opponent] + debounce)
    assume(t_o < t_d + hold)
    at(t_d, down(t_d, Button.of(holder)))
    at(t_o, down(t_o, Button.of(opponent)))
    at(t_o + press, up(t_o + press, Button.of(opponent)))
    at(t_d + hold + NS, up(t_d + hold + NS, Button.of(holder)))
    inputs = sorted_inputs(items)
    note(f"inputs: {inputs!r}")
    run = drive(rules, inputs, t_d + hold + 2 * NS)

    assert run.match.phase is Phase.BETWEEN_GAMES and run.match.game == 2
    assert run.match.score == Pair.both(Fraction(0)).with_(holder, Fraction(1))
    ended = [g for g in run.kept() if isinstance(g, GameEnded)]
    assert [(g.t, g.result.winner, g.result.kind) for g in ended] == [
        (t_o, holder, ResultKind.SINGLE)]
    for s in Side:
        assert run.match.reserve_at(s) == res[s], s

"""Random play for the engine's property tests (hypothesis strategies) and the runs that drive
the engine through it: random rules, random inputs at random instants (`random_case`), a settled
prefix of play steered towards a phase, and `Run`/`feed`/`drive`, which feed inputs and probe the
state between them. The property tests (core) and the snapshot's tests (journal) draw from
them."""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from hypothesis import strategies as st

from gammonclock.core import match as m
from gammonclock.core.arbiter import parse_command
from gammonclock.core.dice import Roll, Void
from gammonclock.core.effects import (
    Effect,
    surviving,
)
from gammonclock.core.engine import ButtonEdge, Engine, Input
from gammonclock.core.match import ArbiterAction, DiceEvent, Phase
from gammonclock.core.rules import DISCIPLINES, EndReason, Family, MatchRules
from gammonclock.core.timecontrol import FlagRule, TimeControl, TimeMode
from gammonclock.sides import Button, Pair, Side

NS = 1_000_000_000
MS = 1_000_000



# =================================================================================================
# Driving the engine
# =================================================================================================

@dataclass
class Run:
    engine: Engine
    effects: list[Effect]

    @property
    def match(self) -> m.MatchState:
        return self.engine.match

    def kept(self) -> list[Effect]:
        return surviving(self.effects)


def sorted_inputs(items: list[tuple[int, int, Input]]) -> list[Input]:
    """Inputs in time order; at one instant, in the order they were scheduled (SPEC §9)."""
    return [i for _, _, i in sorted(items, key=lambda k: (k[0], k[1]))]


def check_state(engine: Engine) -> None:
    """What must hold at every instant (SPEC §2, §9)."""
    state = engine.match
    for side in Side:
        assert state.reserve_at(side) >= 0, f"{side}'s reserve shown below zero at {state.now}"
    js = engine.state_json()
    for side in ("left", "right"):
        assert js["clock"][side]["reserve_ms"] >= 0
    # §9: `running` is null while paused, between games, in result entry (and once it is over).
    if state.phase in (Phase.PAUSED, Phase.BETWEEN_GAMES, Phase.RESULT_ENTRY, Phase.MATCH_OVER):
        assert js["running"] is None, js
    if state.phase in (Phase.RUNNING, Phase.CUBE_OFFERED):
        assert js["running"] is not None, js
    if state.phase is Phase.BREAK and state.brk is not None:
        # Only a late player's reserve runs in a break (§5, fine point 7).
        late = state.brk.side.value if state.brk.overrun else None
        assert js["running"] == late, js
    # `winner`, `end_reason`, `flag`: null until the match is over.
    assert (state.phase is Phase.MATCH_OVER) == (state.end_reason is not None)
    if state.flag is not None:
        assert state.end_reason is EndReason.FLAG and state.winner is state.flag.other


def _probe(engine: Engine, t: int) -> None:
    """Look at the engine at an instant before its next timer, without changing it."""
    if t <= engine.now:
        return
    later, effects = engine.advance(t)
    assert effects == [], "a timer fired before the instant next_deadline() announced"
    check_state(later)
    # Between events only the running side's reserve moves, and only down (SPEC §2: R0 − e).
    runner = engine.match.running_side
    for side in Side:
        before, after = engine.match.reserve_at(side), later.match.reserve_at(side)
        if side is runner:
            assert 0 <= after <= before
        else:
            assert after == before


def _until(run: Run, t: int, probe: bool) -> None:
    """Fire every timer due up to `t` at its own instant (as simulate.run_until does)."""
    engine = run.engine
    fired_at, count = None, 0
    while (due := engine.next_deadline()) is not None and due <= t:
        assert due >= engine.now
        # A few timers may share an instant; one that stays due after firing never fires.
        fired_at, count = due, (count + 1 if due == fired_at else 1)
        assert count <= 8, f"the timer due at {due} does not fire"
        if probe:
            _probe(engine, engine.now + (due - engine.now) // 2)
            _probe(engine, due - 1)
        engine, effects = engine.advance(due)
        run.effects += effects
        check_state(engine)
    if probe:
        for k in (1, 2, 3):
            _probe(engine, engine.now + (t - engine.now) * k // 4)
    engine, effects = engine.advance(t)
    run.effects += effects
    check_state(engine)
    run.engine = engine


def feed(run: Run, inputs: list[Input], end: int | None = None, probe: bool = False) -> Run:
    """Feed `inputs` in order (timers firing in between), then bring the run to `end`; inputs
    after `end` do not happen (SPEC fine point 13)."""
    for event in inputs:
        if end is not None and event.t > end:
            break
        _until(run, event.t, probe)
        run.engine, effects = run.engine.feed(event)
        run.effects += effects
        check_state(run.engine)
    if end is not None:
        _until(run, end, probe)
    return run


def drive(rules: MatchRules, inputs: list[Input], end: int, probe: bool = False) -> Run:
    return feed(Run(Engine.start(rules), []), inputs, end, probe)


def fork(run: Run) -> Run:
    """The engine is a value: a fork shares nothing mutable with the original."""
    return Run(run.engine, list(run.effects))


def down(t: int, b: Button) -> ButtonEdge:
    return ButtonEdge(t, b, True)


def up(t: int, b: Button) -> ButtonEdge:
    return ButtonEdge(t, b, False)


def arb(t: int, *words: str) -> ArbiterAction:
    return ArbiterAction(t, parse_command(list(words)))


# =================================================================================================
# Strategies
# =================================================================================================

SIDES = st.sampled_from(list(Side))
BUTTONS = st.sampled_from(list(Button))
MODES = st.sampled_from(list(TimeMode))
SIDE_WORDS = st.sampled_from(["left", "right"])
DIE = st.integers(1, 6)


def _ms_words(ms: int) -> str:
    return f"{ms // 1000}.{ms % 1000:03d}s"


DURATION_WORDS = st.one_of(st.integers(1, 20_000), st.integers(1, 1_200_000)).map(_ms_words)
ADJUST_WORDS = st.builds(lambda s, sign, d: ["adjust", s, sign + d], SIDE_WORDS,
                         st.sampled_from(["", "+", "-", "-"]), DURATION_WORDS)

ARBITER_WORDS = st.one_of(
    st.just(["pause"]),
    st.just(["resume"]),
    st.just(["undo"]),
    ADJUST_WORDS,
    ADJUST_WORDS,
    st.builds(lambda s, d: ["deduct", s, d], SIDE_WORDS, DURATION_WORDS),
    st.builds(lambda s, d: ["add", s, d], SIDE_WORDS, DURATION_WORDS),
    st.builds(lambda s: ["point", s], SIDE_WORDS),
    st.builds(lambda s, p: ["forfeit", s, *p], SIDE_WORDS, st.sampled_from([[], ["1"], ["2"]])),
    st.builds(lambda s: ["disqualify", s], SIDE_WORDS),
    st.builds(lambda s: ["warn", s, "slow", "play"], SIDE_WORDS),
    st.builds(lambda s, o: ["challenge", s, o], SIDE_WORDS,
              st.sampled_from(["upheld", "rejected"])),
    st.builds(lambda a, b: ["score", str(a), str(b)], st.integers(0, 12), st.integers(0, 12)),
    st.builds(lambda v, s: ["cube", str(v)] + ([s] if v > 1 and s else []),
              st.sampled_from([1, 2, 4, 64]), st.sampled_from([None, "left", "right"])),
)
# The commands a settled prefix of play uses: no match-ending ones, so that play goes on.
MIDDLE_ARBITER_WORDS = st.one_of(
    st.just(["pause"]),
    st.just(["resume"]),
    st.builds(lambda s, sign, d: ["adjust", s, sign + d], SIDE_WORDS,
              st.sampled_from(["", "-"]), DURATION_WORDS),
    st.builds(lambda s, d: ["deduct", s, d], SIDE_WORDS, DURATION_WORDS),
    st.builds(lambda s, d: ["add", s, d], SIDE_WORDS, DURATION_WORDS),
    st.builds(lambda s: ["point", s], SIDE_WORDS),
    st.builds(lambda v, s: ["cube", str(v), s], st.sampled_from([2, 4]), SIDE_WORDS),
)
PLAY_ARBITER_WORDS = st.one_of(MIDDLE_ARBITER_WORDS, st.just(["undo"]))

DICE = st.one_of(
    st.builds(lambda a, b: Roll((a, b)), DIE, DIE),
    st.builds(lambda a: Roll((a,)), DIE),
    st.builds(lambda s, a, b: Roll((a, b), s), SIDES, DIE, DIE),
    st.just(Void()),
)


@st.composite
def random_rules(draw, max_reserve: int = 15 * NS) -> MatchRules:
    """Any discipline and time mode, with small reserves and short breaks so that flags fall and
    break overruns happen inside a short run."""
    name = draw(st.sampled_from(sorted(DISCIPLINES)))
    discipline = DISCIPLINES[name]
    length = draw(st.integers(1, 11))
    mode = draw(MODES)
    delay = draw(st.one_of(st.just(0), st.integers(0, 3 * NS)))
    flag_rule = draw(st.sampled_from(list(FlagRule)))
    overtime = draw(st.integers(1, 3 * NS))
    overrides: dict[str, object] = dict(
        time=TimeControl(mode, delay, flag_rule, overtime),
        reserve_ns=draw(st.integers(0, max_reserve)),
        hold_ns=draw(st.integers(NS // 2, 5 * NS)),           # buttons.hold_s 0.5..5
        debounce_ns=draw(st.integers(0, 50 * MS)),            # debounce_ms 0..50
        break_ns=draw(st.integers(1, 10 * NS)),
    )
    if not discipline.blitz:
        overrides["breaks_per_player"] = draw(st.integers(0, 3))
    if discipline.family is Family.LONGGAMMON:
        overrides["cube"] = draw(st.booleans())
    if length > 1 and draw(st.booleans()):
        a, b = draw(st.integers(0, length - 1)), draw(st.integers(0, length - 1))
        overrides["start_score"] = Pair(Fraction(a), Fraction(b))
        overrides["crawford_played"] = draw(st.booleans())
    return MatchRules.defaults(name, length, **overrides)


GAPS = st.one_of(st.just(0), st.integers(0, 60 * MS), st.integers(0, 3 * NS),
                 st.integers(0, 20 * NS))
# A press: a bounce (released within the debounce), a tap (released before hold_s) or a hold; the
# number places its length within that range.
PRESSES = st.tuples(st.just("press"), BUTTONS, st.sampled_from(["tap", "hold", "bounce"]),
                    st.integers(0, 1000))
RAW_EVENTS = st.one_of(
    PRESSES,
    st.tuples(st.just("press"), st.sampled_from([Button.LEFT, Button.RIGHT]),
              st.sampled_from(["tap", "hold"]), st.integers(0, 1000)),
    PRESSES,
    st.tuples(st.just("edge"), BUTTONS, st.booleans()),
    st.tuples(st.just("arbiter"), ARBITER_WORDS),
    st.tuples(st.just("arbiter"), ARBITER_WORDS),
    st.tuples(st.just("dice"), DICE),
)


def press_length(rules: MatchRules, kind: str, permille: int) -> int:
    if kind == "bounce":
        return rules.debounce_ns * permille // 1001
    if kind == "tap":
        return tap_length(rules, permille)
    return rules.hold_ns + 3 * NS * permille // 1000


@st.composite
def random_case(draw) -> tuple[MatchRules, list[Input], int]:
    """Random rules and random inputs at random non-decreasing instants: presses of all three
    buttons (released later, possibly after other inputs, so presses overlap), lone edges
    (repeated or bouncing), arbiter commands and dice lines. Returns the rules, the inputs and
    the instant the run ends."""
    rules = draw(random_rules(max_reserve=draw(st.sampled_from([15 * NS, 120 * NS]))))
    if draw(st.integers(0, 2)) == 0:
        # Play-like: gestures chosen with a look at the state (doubles, passes, breaks …).
        inputs, t = draw(settled_prefix(rules, max_size=25))
        return rules, inputs, t + draw(st.integers(0, 30 * NS))
    events = draw(st.lists(st.tuples(GAPS, RAW_EVENTS), min_size=draw(st.sampled_from([0, 10])),
                           max_size=40))
    items: list[tuple[int, int, Input]] = []
    t = draw(st.integers(0, 2 * NS))
    for n, (gap, event) in enumerate(events):
        t += gap
        if event[0] == "press":
            _, button, kind, permille = event
            length = press_length(rules, kind, permille)
            items += [(t, n, down(t, button)), (t + length, n, up(t + length, button))]
        elif event[0] == "edge":
            items.append((t, n, ButtonEdge(t, event[1], event[2])))
        elif event[0] == "arbiter":
            items.append((t, n, arb(t, *event[1])))
        else:
            items.append((t, n, DiceEvent(t, event[1])))
    inputs = sorted_inputs(items)
    last = inputs[-1].t if inputs else t
    end = last + draw(st.integers(0, 30 * NS))
    return rules, inputs, end


# --- a settled prefix of play (every press released and recognised before the next gesture) ---

TAPS_AND_HOLDS = [
    st.tuples(st.just("tap"), BUTTONS, st.integers(0, 1000)),
    st.tuples(st.just("tap"), st.just(Button.CUBE), st.integers(0, 1000)),
    st.tuples(st.just("tap"), st.sampled_from([Button.LEFT, Button.RIGHT]), st.integers(0, 1000)),
    st.tuples(st.just("tap"), st.sampled_from([Button.LEFT, Button.RIGHT]), st.integers(0, 1000)),
    st.tuples(st.just("hold"), BUTTONS, st.integers(0, NS)),
]
GESTURES = st.one_of(*TAPS_AND_HOLDS, st.tuples(st.just("arbiter"), PLAY_ARBITER_WORDS),
                     st.tuples(st.just("dice"), DICE))
PLAY_GAPS = st.one_of(st.integers(0, 2 * NS), st.integers(0, 20 * NS))


def tap_length(rules: MatchRules, permille: int) -> int:
    """A press length that is a tap: at least the debounce (so the release is not a bounce)
    and shorter than hold_s."""
    lo, hi = max(rules.debounce_ns, 1), rules.hold_ns - 1
    return lo + (hi - lo) * permille // 1000


def gesture_groups(rules: MatchRules, steps, t: int) -> tuple[list[list[Input]], int]:
    """Sequential gestures from `t`, one group of inputs each (a press is its two edges); returns
    them and the instant from which the buttons are all released, every hold recognised, and a
    new press of any button is not a bounce."""
    groups: list[list[Input]] = []
    for gap, g in steps:
        t += gap
        if g[0] in ("tap", "hold"):
            length = (tap_length(rules, g[2]) if g[0] == "tap" else rules.hold_ns + g[2])
            groups.append([down(t, g[1]), up(t + length, g[1])])
            t += length + rules.debounce_ns
        elif g[0] == "arbiter":
            groups.append([arb(t, *g[1])])
        else:
            groups.append([DiceEvent(t, g[1])])
    return groups, t


def gestures_to_inputs(rules: MatchRules, steps, t: int) -> tuple[list[Input], int]:
    groups, t = gesture_groups(rules, steps, t)
    return [i for g in groups for i in g], t


@st.composite
def play_rules(draw) -> MatchRules:
    """Rules for the prefix-of-play properties: any discipline and mode, reserves from tight to
    comfortable."""
    name = draw(st.sampled_from(sorted(DISCIPLINES)))
    mode = draw(MODES)
    delay = draw(st.integers(0, 12 * NS))
    flag_rule = draw(st.sampled_from(list(FlagRule)))
    reserve = draw(st.one_of(st.integers(60 * NS, 600 * NS), st.integers(60 * NS, 600 * NS),
                             st.integers(NS, 60 * NS)))
    length = draw(st.one_of(st.integers(5, 15), st.integers(1, 15)))
    return MatchRules.defaults(
        name, length, time=TimeControl(mode, delay, flag_rule, draw(st.integers(1, 60 * NS))),
        reserve_ns=reserve, hold_ns=draw(st.integers(NS // 2, 5 * NS)),
        debounce_ns=draw(st.integers(0, 50 * MS)))


@st.composite
def settled_prefix(draw, rules: MatchRules, max_size: int = 14) -> tuple[list[Input], int]:
    """Play from the start: blind gestures or, mostly, gestures chosen with a look at the state
    (so that doubles, takes, passes, pauses, result entries and breaks come up often)."""
    t = draw(st.integers(0, NS))
    if draw(st.integers(0, 3)) == 0:
        steps = draw(st.lists(st.tuples(PLAY_GAPS, GESTURES), max_size=max_size))
        return gestures_to_inputs(rules, steps, t)
    groups, engine, t = play_on(draw, rules, Engine.start(rules), t, max_size)
    target = draw(st.sampled_from([None, *STEER_TARGETS]))
    if target is not None:
        more, engine, t = steer(draw, rules, engine, t, target)
        groups += more
    return [i for g in groups for i in g], t


STEER_TARGETS = [Phase.RUNNING, Phase.CUBE_OFFERED, Phase.CUBE_OFFERED, Phase.PAUSED,
                 Phase.RESULT_ENTRY, Phase.BREAK, Phase.BREAK, Phase.BETWEEN_GAMES]


def _towards(state: m.MatchState, target: Phase):
    """The next gesture (button, is_hold) on a way from the state's phase to `target`."""
    phase = state.phase
    runner = state.turn.side if state.turn is not None else None
    if phase is Phase.RUNNING and runner is not None:
        if target is Phase.CUBE_OFFERED:
            first = state.turn_number <= 1 and state.rules.family is Family.BACKGAMMON
            if first or state.cube_owner is runner.other or state.rolled:
                return Button.of(runner), False          # play on to a turn that may double
            return Button.CUBE, False
        if target is Phase.PAUSED:
            return Button.CUBE, True
        return Button.of(runner), True                    # result entry, and on to the next game
    if phase is Phase.CUBE_OFFERED and state.offer is not None:
        taker = Button.of(state.offer.doubler.other)
        if target is Phase.PAUSED:
            return Button.CUBE, True
        return taker, target in (Phase.RESULT_ENTRY, Phase.BETWEEN_GAMES, Phase.BREAK)
    if phase is Phase.RESULT_ENTRY and state.entry is not None:
        if target in (Phase.BETWEEN_GAMES, Phase.BREAK):
            return Button.of(state.entry.holder.other), False   # confirm
        return Button.of(state.entry.holder), False             # cancel
    if phase is Phase.PAUSED:
        return Button.CUBE, True
    if phase is Phase.BREAK and state.brk is not None:
        return Button.of(state.brk.side), False
    if phase is Phase.BETWEEN_GAMES:
        side = Button.LEFT if state.must_start is Side.RIGHT else Button.RIGHT
        return side, target is Phase.BREAK and state.game > 1
    return None


def steer(draw, rules: MatchRules, engine: Engine, t: int,
          target: Phase) -> tuple[list[list[Input]], Engine, int]:
    """A few gestures that lead the match towards `target` (not always there: a double may be
    illegal, a break may be refused)."""
    groups: list[list[Input]] = []
    for _ in range(8):
        if engine.match.phase is target:
            break
        way = _towards(engine.match, target)
        if way is None:
            break
        button, is_hold = way
        t += draw(PLAY_GAPS)
        engine, _ = engine.advance(t)
        if engine.match.phase is target:
            break
        gesture = ("hold", button, draw(st.integers(0, NS))) if is_hold else (
            "tap", button, draw(st.integers(0, 1000)))
        [group], t = gesture_groups(rules, [(0, gesture)], t)
        for event in group:
            engine, _ = engine.feed(event)
        groups.append(group)
    return groups, engine, t


# What a player (or the arbiter) does next; "advance" is the move the phase calls for.
INTENTS = ["advance", "advance", "advance", "double", "hold side", "hold cube", "pass",
           "any tap", "arbiter", "dice"]


def _next_gesture(draw, state: m.MatchState, intent: str, holds: bool, undo: bool):
    def tap(b: Button):
        return ("tap", b, draw(st.integers(0, 1000)))

    def hold(b: Button):
        return ("hold", b, draw(st.integers(0, NS))) if holds else tap(b)

    phase = state.phase
    if intent == "advance":
        if phase is Phase.RUNNING and state.turn is not None:
            return tap(Button.of(state.turn.side))
        if phase is Phase.CUBE_OFFERED and state.offer is not None:
            return tap(Button.of(state.offer.doubler.other))
        if phase is Phase.RESULT_ENTRY and state.entry is not None:
            return tap(Button.of(state.entry.holder.other))
        if phase is Phase.PAUSED:
            return hold(Button.CUBE) if holds else ("arbiter", ["resume"])
        if phase is Phase.BREAK and state.brk is not None:
            return tap(Button.of(state.brk.side))
        return tap(Button.of(draw(SIDES)))
    if intent == "double":
        return tap(Button.CUBE)
    if intent == "hold side":
        return hold(Button.of(draw(SIDES)))
    if intent == "hold cube":
        return hold(Button.CUBE)
    if intent == "pass":
        if phase is Phase.CUBE_OFFERED and state.offer is not None:
            return hold(Button.of(state.offer.doubler.other))
        return hold(Button.of(state.turn.side) if state.turn is not None else Button.LEFT)
    if intent == "any tap":
        return tap(draw(BUTTONS))
    if intent == "arbiter":
        return ("arbiter", draw(PLAY_ARBITER_WORDS if undo else MIDDLE_ARBITER_WORDS))
    return ("dice", draw(DICE))


def play_on(draw, rules: MatchRules, engine: Engine, t: int, max_size: int, *, min_size: int = 0,
            holds: bool = True, undo: bool = True) -> tuple[list[list[Input]], Engine, int]:
    """Up to `max_size` sequential gestures from `t`, each chosen with a look at the match as it
    stands; returns their input groups, the engine after them and the settled instant."""
    groups: list[list[Input]] = []
    for _ in range(draw(st.integers(min_size, max_size))):
        t += draw(PLAY_GAPS)
        engine, _ = engine.advance(t)
        gesture = _next_gesture(draw, engine.match, draw(st.sampled_from(INTENTS)), holds, undo)
        [group], t = gesture_groups(rules, [(0, gesture)], t)
        for event in group:
            engine, _ = engine.feed(event)
        groups.append(group)
    return groups, engine, t

"""A chord during a PIN lockout (SPEC §13.4, issue 31): undone like any chord (what its down
edges did, holds included, taken back), none of its presses becomes a hold, no arbiter's mode,
and the clocks as they were: the match is exactly the one played without those edges (the time
since is the running side's), and the panels are told how long the lockout still lasts.

Every row plays the same lockout (three failed PINs, locked from 109.5 s to 409.5 s), then a
chord at about 150 s in one phase, and compares it with the same script without the chord's
lines: the same match state to the nanosecond, the same surviving effects but the one notice."""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import given
from hypothesis import strategies as st

from arbiter_helpers import OPENING, PIN, WRONG_PIN_TAPS, S, chord, entry, run
from gammonclock.core.effects import Effect, Paused, Shown
from gammonclock.core.engine import ButtonEdge, Engine, Input
from gammonclock.core.match_state import Phase
from gammonclock.core.pin import hash_pin
from gammonclock.core.reasons import Reason
from gammonclock.core.rules import MatchRules
from gammonclock.sides import Button, Side
from play_helpers import Played
from property_helpers import property_settings
from strategy_helpers import play_rules, settled_prefix

FAILURES = "".join(chord(start) + entry(start + 5, WRONG_PIN_TAPS) for start in (20, 60, 100))
LOCKED_OUT = OPENING + FAILURES           # right's clock runs; the chord locked until 409.5 s
LOCK_ENDS = 409.5


def lines(*text: str) -> str:
    return "".join(f"{line}\n" for line in text)


def locked_shown(played: Played) -> list[Shown]:
    return [e for e in played.surviving(Shown) if e.reason is Reason.CHORD_LOCKED]


def without_notice(played: Played) -> list[Effect]:
    return [e for e in played.surviving()
            if not (isinstance(e, Shown) and e.reason is Reason.CHORD_LOCKED)]


# (name, the phase's lines before the chord, the chord's lines, its last down edge, the end,
#  overrides of the rules, the phase the match is in at the end)
CASES = [
    ("running: cube first (a double, a take, a switch)", "", chord(150), 150.2, 170, {},
     Phase.RUNNING),
    # The reported attack: left's press held 2 s is a result entry ("left wins"), right's down
    # edge confirms it, the cube completes the chord.
    ("the attack: left held 2 s, right confirms, then cube", "",
     lines("150 down left", "152.5 down right", "152.6 down cube", "156 up left",
           "156 up right", "156 up cube"), 152.6, 170, {}, Phase.RUNNING),
    ("running: right first (a switch, then its hold a result entry; left confirms)", "",
     chord(150, order=("right", "left", "cube")), 150.2, 170, {}, Phase.RUNNING),
    ("after a tap: the tap stands, left's clock runs on", "148 tap right\n", chord(150),
     150.2, 170, {}, Phase.RUNNING),
    ("a double offered: the taker's press does not take", lines("120 tap right", "122 tap cube"),
     chord(150, order=("right", "cube", "left")), 150.2, 170, {}, Phase.CUBE_OFFERED),
    ("result entry: the other side's press does not confirm", "120 hold right\n",
     chord(150, order=("left", "cube", "right")), 150.2, 170, {}, Phase.RESULT_ENTRY),
    ("between games: the press does not start game 2", lines("120 hold right", "123 tap left"),
     chord(150, order=("left", "right", "cube")), 150.2, 170, {}, Phase.BETWEEN_GAMES),
    ("paused: the cube's press does not resume", "120 hold cube\n",
     chord(150, release_after=5), 150.2, 170, {}, Phase.PAUSED),
    ("a break: the taker's press does not end it",
     lines("120 hold right", "123 tap left", "125 hold left"),
     chord(150, order=("left", "right", "cube")), 150.2, 170, {}, Phase.BREAK),
    ("hold_s 4 s: the cube's hold, due after the chord, never comes", "",
     lines("150 down cube", "150.1 down left", "150.2 down right", "155 up left", "155 up right",
           "156 up cube"), 150.2, 170, {"hold_ns": 4 * S}, Phase.RUNNING),
    ("held a minute: still right's time, no hold", "", chord(150, release_after=60), 150.2,
     230, {}, Phase.RUNNING),
    # Right's flag is due at 151 s (1 s + 12 s delay + 138 s): the cube's press (right doubles)
    # would have stopped it; undone, it falls where it was due.
    ("the running side's flag falls inside the chord", "", chord(150), 150.2, 170,
     {"reserve_ns": 138 * S}, Phase.MATCH_OVER),
]


@pytest.mark.parametrize(("name", "before", "presses", "last_down", "end", "rules", "phase"),
                         CASES, ids=[row[0] for row in CASES])
def test_a_chord_in_a_lockout_is_undone_and_the_clocks_are_as_before(
        name, before, presses, last_down, end, rules, phase):
    locked = run(LOCKED_OUT + before + presses + f"{end} end\n", **rules)
    never = run(LOCKED_OUT + before + f"{end} end\n", **rules)    # no chord at all
    lock_ends = never.match.chord_locked_until     # 409.5 s (with hold_s 4 s: 411.5 s)
    assert lock_ends is not None and lock_ends >= LOCK_ENDS * S
    # The match is the one without the chord's edges, clocks to the nanosecond, and in that phase.
    assert locked.match == never.match
    assert locked.match.phase is phase and locked.match.panel is None
    assert without_notice(locked) == without_notice(never)
    assert not [e for e in locked.surviving(Paused) if e.t >= 149 * S]
    # The panels are told how long the lockout still lasts, once, when the chord is recognised.
    recognised = round((last_down + 3) * S)
    left = lock_ends - recognised
    [shown] = locked_shown(locked)
    assert (shown.t, dict(shown.facts)) == (recognised, {"left_ns": left})


def test_the_attack_gives_left_no_game():
    """Issue 31: a 2 s hold of left inside a locked chord stood as a result entry and gave left
    the running game."""
    case = next(row for row in CASES if row[0].startswith("the attack"))
    played = run(LOCKED_OUT + case[2] + "170 end\n")
    state = played.state
    assert (state["phase"], state["running"], state["score"]) == (
        "running", "right", {"left": 0, "right": 0})
    assert state["game"] == 1
    assert played.match.reserve_at(Side.RIGHT) == run(LOCKED_OUT + "170 end\n").match.reserve_at(
        Side.RIGHT)


def test_the_notice_says_the_lockout_left_in_words_and_the_journal_keeps_it():
    played = run(LOCKED_OUT + chord(150) + "160 end\n")
    [shown] = locked_shown(played)
    assert shown.text == "arbiter chord locked for 4:16.3"            # 409.5 s − 153.2 s
    assert shown.as_dict() == {"kind": "shown", "t": 153_200_000_000,
                               "text": "arbiter chord locked for 4:16.3",
                               "reason": "chord_locked", "facts": [["left_ns", 256_300_000_000]]}


def test_after_the_lockout_the_chord_opens_the_pin_again():
    played = run(LOCKED_OUT + chord(150) + chord(410) + "420 end\n")
    assert played.match.phase is Phase.ARBITER and played.match.panel is not None
    assert len(locked_shown(played)) == 1


def test_a_second_chord_in_the_lockout_is_undone_too():
    twice = run(LOCKED_OUT + chord(150) + chord(200, order=("right", "left", "cube"))
                + "220 end\n")
    assert twice.match == run(LOCKED_OUT + "220 end\n").match
    assert [dict(e.facts)["left_ns"] for e in locked_shown(twice)] == [
        round((LOCK_ENDS - 153.2) * S), round((LOCK_ENDS - 203.2) * S)]


# --- any play, any phase, any chord in the lockout: the match played without its edges ----------

def _timeout_failures(t: int) -> tuple[list[Input], int]:
    """Three failed attempts from `t`: each a chord of the three buttons, released, and no
    PIN within the 30 s; returns the edges and the instant after the third."""
    edges: list[Input] = []
    for _ in range(3):
        downs = [ButtonEdge(t + i * S // 10, b, True) for i, b in enumerate(Button)]
        release = t + 4 * S
        edges += downs + [ButtonEdge(release, b, False) for b in Button]
        t = release + 31 * S
    return edges, t


@st.composite
def locked_chord(draw):
    """Rules with a PIN, a settled prefix of play, the lockout, maybe more play, then a chord:
    its three downs in any order and spacing, each released any time after it is recognised."""
    rules = replace(draw(play_rules()), arbiter_pin=hash_pin(PIN))
    prefix, t = draw(settled_prefix(rules, max_size=8))
    failures, t = _timeout_failures(t + S)
    # A little more play in the lockout (its instants from 0, moved to after the failures).
    more, took = draw(settled_prefix(rules, max_size=3))
    more, t = [replace(i, t=i.t + t) for i in more], t + took
    order = draw(st.permutations(list(Button)))
    gaps = draw(st.lists(st.integers(rules.debounce_ns, 2 * S), min_size=3, max_size=3))
    start = t + draw(st.integers(rules.debounce_ns + 1, 5 * S))
    downs, at = [], start
    for button, gap in zip(order, gaps, strict=True):
        at += gap
        downs.append(ButtonEdge(at, button, True))
    recognised = at + rules.chord_ns
    ups = sorted((ButtonEdge(recognised + draw(st.integers(1, 20 * S)), b, False) for b in order),
                 key=lambda e: e.t)
    end = ups[-1].t + draw(st.integers(0, 10 * S))
    return rules, prefix + failures + more, downs + ups, end


@property_settings(120)
@given(locked_chord())
def test_any_chord_in_a_lockout_leaves_the_match_as_without_it(case):
    rules, before, chord_edges, end = case
    first = chord_edges[0].t
    lock = fed(rules, before, first).engine.match.chord_locked_until
    assert lock is not None and lock > first + rules.chord_ns
    locked = fed(rules, before + chord_edges, end)
    never = fed(rules, before, end)
    assert locked.match == never.match
    assert without_notice(locked) == without_notice(never)


def fed(rules: MatchRules, inputs: list[Input], end: int) -> Played:
    """The inputs fed to the engine in order (its timers firing on the way), brought to `end`.
    (Not `strategy_helpers.drive`: its checks at every instant hold the arbiter's mode opened
    over a match already over, which a failed attempt here may be, to a play phase.)"""
    played = Played(Engine.start(rules))
    for event in inputs:
        played.engine, effects = played.engine.feed(event)
        played.effects += effects
    played.engine, effects = played.engine.advance(end)
    played.effects += effects
    return played

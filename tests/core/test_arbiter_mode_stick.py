"""A USB stick's offer in the arbiter's menu (SPEC §13.5, §14.1, issue 31), in the pure engine:
the offer is a journaled input (`StickOffered`), so the menu lists its item exactly while one
stands and no game of this match is in progress, and a replay lists what the arbiter saw; the
menu without an offer is the one every old journal was played on."""

from __future__ import annotations

import textwrap

import pytest

from arbiter_helpers import PIN, RIGHT_PIN_TAPS, chord, entry, taps
from gammonclock.core.effects import Effect, Refused, Shown
from gammonclock.core.engine import Engine
from gammonclock.core.match import StickOffered
from gammonclock.core.match_state import MenuItem, PanelStage, StickOffer
from gammonclock.core.pin import hash_pin
from gammonclock.core.reasons import Reason
from gammonclock.core.rules import MatchRules
from gammonclock.sim.script import parse_script
from gammonclock.sim.simulate import simulate

S = 1_000_000_000
OFFER = StickOffer("table-3", "Anna", "Boris", 7, "6-0", "match-x.jsonl", 40, "ab" * 32)
OTHER = StickOffer("table-4", "Chen", "Dora", 5, "2-1", "match-y.jsonl", 12, "cd" * 32)
MENU_AT = 45.0
R, L, C = "right", "left", "cube"


def played(script: str, extra: list = ()) -> tuple[Engine, list[Effect]]:
    """A script on a ready match with the PIN, the `extra` inputs (an offer, a command) in
    their places."""
    rules = MatchRules.defaults(arbiter_pin=hash_pin(PIN))
    parsed = parse_script(textwrap.dedent(script), rules.hold_ns)
    inputs = sorted([*parsed.inputs, *extra], key=lambda event: event.t)
    effects: list[Effect] = []
    engine = simulate(rules, inputs, parsed.end, lambda _, more: effects.extend(more))
    return engine, effects


def in_menu(presses: tuple[str, ...], extra: list = (), before: str = "") -> tuple[Engine,
                                                                                 list[Effect]]:
    script = (before + chord(30) + entry(40, RIGHT_PIN_TAPS)
              + taps(MENU_AT, presses, every=1.0) + f"{MENU_AT + len(presses) + 1} end\n")
    return played(script, extra)


def item(engine: Engine) -> tuple[PanelStage, MenuItem]:
    panel = engine.match.panel
    assert panel is not None
    return panel.stage, panel.item


OFFERED = [StickOffered(10 * S, OFFER)]

# presses from "resume", with and without an offer: the item second, the rest as they were
MENU_ROWS = [
    ((R,), [], MenuItem.ADJUST_LEFT),
    ((R,), OFFERED, MenuItem.CONTINUE_STICK),
    ((R, R), OFFERED, MenuItem.ADJUST_LEFT),
    ((L,), [], MenuItem.INFO),
    ((L,), OFFERED, MenuItem.INFO),
    ((L, L), [], MenuItem.NEXT_MATCH),
    ((L, L), OFFERED, MenuItem.NEXT_MATCH),
    ((L,) * 10, OFFERED, MenuItem.CONTINUE_STICK),
    ((L,) * 10, [], MenuItem.RESUME),
]


@pytest.mark.parametrize(("presses", "extra", "expected"), MENU_ROWS)
def test_the_menu_lists_the_sticks_offer_second_only_while_it_stands(presses, extra, expected):
    engine, _ = in_menu(presses, extra)
    assert item(engine) == (PanelStage.MENU, expected)


def test_confirming_it_asks_the_device_and_changes_nothing_of_the_match():
    engine, effects = in_menu((R, C, C), OFFERED)
    asked = [e for e in effects if isinstance(e, Shown)
             and e.reason is Reason.CONTINUE_STICK_REQUESTED]
    assert len(asked) == 1 and OFFER.file in asked[0].text and "table-3" in asked[0].text
    assert engine.match.stick_offer == OFFER and engine.match.game == 1
    assert item(engine) == (PanelStage.MENU, MenuItem.CONTINUE_STICK)


def test_a_new_offer_takes_the_arbiter_back_from_a_confirmation():
    # The confirmation asked at 46 s; another stick's offer at 46.5 s: the yes at 47 s is a
    # choice of the new offer again, not its confirmation.
    engine, effects = in_menu((R, C, C), [*OFFERED, StickOffered(int(46.5 * S), OTHER)])
    assert not [e for e in effects if isinstance(e, Shown)
                and e.reason is Reason.CONTINUE_STICK_REQUESTED]
    assert engine.match.stick_offer == OTHER
    assert item(engine) == (PanelStage.CONFIRM, MenuItem.CONTINUE_STICK)
    withdrawn, _ = in_menu((R, C), [*OFFERED, StickOffered(int(46.5 * S), None)])
    assert item(withdrawn) == (PanelStage.MENU, MenuItem.RESUME)
    assert withdrawn.match.stick_offer is None


def test_a_game_started_ends_the_offer_and_an_offer_mid_match_is_refused():
    engine, effects = played("1 tap left\n20 end\n", [StickOffered(int(0.5 * S), OFFER)])
    assert engine.match.stick_offer is None
    ended = [e for e in effects if isinstance(e, Shown) and e.reason is Reason.STICK_OFFER_ENDED]
    assert [e.t for e in ended] == [1 * S]
    late, refused = played("1 tap left\n20 end\n", [StickOffered(15 * S, OFFER)])
    assert late.match.stick_offer is None
    assert any(isinstance(e, Refused) and e.reason is Reason.MATCH_IN_PROGRESS for e in refused)
    # … and in the menu of a match in progress there is no such item.
    engine, _ = in_menu((R,), [StickOffered(10 * S, OFFER)], before="1 tap left\n")
    assert item(engine) == (PanelStage.MENU, MenuItem.ADJUST_LEFT)

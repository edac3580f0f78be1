"""Clear at a glance (issue 10, SPEC §15): the cube and the delay told apart by shape and place,
the dice of a reader shown (whose opening die is whose), and a press that changes few bytes on
the panels' bus.

The pictures themselves are pinned by the reference images of test_screens.py and
test_russian.py; here are the rules they follow.
"""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import given
from hypothesis import strategies as st
from PIL import Image, ImageChops

from gammonclock.core.effects import (
    DiceRolled,
    Effect,
    GameEnded,
    GameStarted,
    RollVoided,
    TurnStarted,
)
from gammonclock.core.rules import GameResult, ResultKind
from gammonclock.hardware import partial
from gammonclock.hardware.drawing import RUN_CELL, shifted
from gammonclock.hardware.notices import notice_for, opening_dice
from gammonclock.hardware.panels import SHIFTS
from gammonclock.hardware.presenters import PanelPresenter
from gammonclock.hardware.redraw import settled
from gammonclock.hardware.screens import MARGIN, Clock, PanelView, panel_view, render
from gammonclock.sides import Pair, Side
from play_helpers import play
from property_helpers import property_settings

S = 10**9
LEFT, RIGHT = Side.LEFT, Side.RIGHT
NAMES = Pair("Anna", "Boris")
OPENING = "0 tap left\n40 tap right\n100 tap left\n"


def changed_box(a: PanelView, b: PanelView) -> tuple[int, int, int, int] | None:
    """Where the pictures of two views differ (x0, y0, x1, y1 in panel pixels), or None."""
    return ImageChops.difference(render(a), render(b)).getbbox()


# --- the cube and the delay: different places, different shapes ------------------------------

RUNNING = play(OPENING + "130 tap cube\n140 tap left\n150 end", names=NAMES).match
# Right's turn runs with its delay; left owns the cube at 2.
OWN_RUNNING, OPP_RUNNING = (panel_view(RUNNING, RIGHT, RUNNING.now),
                            panel_view(RUNNING, LEFT, RUNNING.now))


@pytest.mark.parametrize("view, line", [
    (OWN_RUNNING, "own"), (OPP_RUNNING, "opponent"),
])
def test_the_delay_is_small_digits_beside_the_turn_marker_at_the_left(view, line) -> None:
    clock = view.own if line == "own" else view.opponent
    assert clock.delay and clock.running
    without = replace(view, **{line: replace(clock, delay="")})
    box = changed_box(view, without)
    assert box is not None
    x0, y0, x1, y1 = box
    assert x1 <= MARGIN + RUN_CELL          # inside the running cell, left of every name
    assert y1 - y0 <= 6                     # the digits of the 5x8 face: no box around them


@pytest.mark.parametrize("view, line", [
    (OPP_RUNNING, "own"), (OWN_RUNNING, "opponent"),
])
def test_the_cube_is_a_square_at_the_right_end_of_its_owners_line(view, line) -> None:
    clock = view.own if line == "own" else view.opponent
    assert clock.cube == "2"
    without = replace(view, **{line: replace(clock, cube="")})
    x0, y0, x1, y1 = changed_box(view, without)
    assert x0 >= 80                         # at the right, where no delay is ever drawn
    assert min(x1 - x0, y1 - y0) >= 11      # a square about as tall as the line, not digits
    assert abs((x1 - x0) - (y1 - y0)) <= 2


def test_cube_and_delay_never_share_a_column() -> None:
    own = OWN_RUNNING.own
    with_cube = replace(OWN_RUNNING, own=replace(own, cube="64", delay="12"))
    delay_box = changed_box(with_cube, replace(with_cube, own=replace(own, cube="64")))
    cube_box = changed_box(with_cube, replace(with_cube, own=replace(own, delay="12")))
    assert delay_box is not None and cube_box is not None
    assert delay_box[2] < cube_box[0]


# --- a press changes few bytes on the bus -----------------------------------------------------

def press_bytes(before: PanelView, after: PanelView, shift: tuple[int, int]) -> int:
    """The bytes an SSD1306 with partial updates sends for this change (commands, data and the
    transactions' overhead), the picture at burn-in offset `shift`."""
    old = partial.page_bytes(shifted(render(before), shift))
    new = partial.page_bytes(shifted(render(after), shift))
    gap = 6 + 2 * partial.COMMAND_OVERHEAD
    runs = [partial.changed_runs(a, b, gap) for a, b in zip(old, new, strict=True)]
    return sum(partial.window_cost(w, 6) for w in partial.merged_windows(runs, 6))


def shown(script: str, side: Side) -> PanelView:
    m = play(script, names=NAMES).match
    return panel_view(m, side, settled(m, side, m.now)[0])


# (before the press, the press): within the delay, after it, a cube owned, tenths showing.
PRESSES = {
    "within the delay": (OPENING + "105 end", OPENING + "105 tap right\n105 end"),
    "after the delay": (OPENING + "117.5 end", OPENING + "117.5 tap right\n117.5 end"),
    "cube owned": (OPENING + "130 tap cube\n140 tap left\n145 end",
                   OPENING + "130 tap cube\n140 tap left\n145 tap right\n145 end"),
}
# At the picture's home position a press costs at most this per panel; at the other burn-in
# offsets a cell may straddle two pages. (Before issue 10's layout: 102-140 bytes.)
HOME_LIMIT, SHIFTED_LIMIT = 60, 90


@pytest.mark.parametrize("name", sorted(PRESSES))
@pytest.mark.parametrize("side", list(Side))
def test_a_press_changes_few_bytes_on_each_panel(name: str, side: Side) -> None:
    before_script, after_script = PRESSES[name]
    before, after = shown(before_script, side), shown(after_script, side)
    assert before != after
    costs = {shift: press_bytes(before, after, shift) for shift in SHIFTS}
    assert costs[(0, 0)] <= HOME_LIMIT, costs
    assert max(costs.values()) <= SHIFTED_LIMIT, costs


def test_a_press_with_tenths_showing_changes_few_bytes() -> None:
    reserve = {"reserve_ns": 30 * S}
    before = play("0 tap left\n14 tap right\n27 end", names=NAMES, **reserve).match
    after = play("0 tap left\n14 tap right\n27 tap left\n27 end", names=NAMES, **reserve).match
    for side in Side:
        a = panel_view(before, side, before.now)
        b = panel_view(after, side, settled(after, side, after.now)[0])
        assert press_bytes(a, b, (0, 0)) <= HOME_LIMIT + 20      # the stopped tenths too


# --- the dice -------------------------------------------------------------------------------

def test_a_roll_shows_until_the_turn_ends_and_a_void_strikes_it() -> None:
    # Right's turn runs from 100 s.
    rolled = play(OPENING + "101 roll 6 6\n102 end", names=NAMES).match
    assert panel_view(rolled, RIGHT, rolled.now).own.dice == (6, 6)
    assert panel_view(rolled, LEFT, rolled.now).opponent.dice == (6, 6)
    voided = play(OPENING + "101 roll 6 6\n102 void\n103 end", names=NAMES).match
    assert panel_view(voided, RIGHT, voided.now).own.dice == ()
    passed = play(OPENING + "101 roll 6 6\n110 tap right\n111 end", names=NAMES).match
    assert all(panel_view(passed, s, passed.now).own.dice == () for s in Side)


def test_an_early_roll_is_not_the_running_players() -> None:
    m = play(OPENING + "101 roll L 4 2\n102 end", names=NAMES).match   # left's clock is stopped
    for side in Side:
        view = panel_view(m, side, m.now)
        assert view.own.dice == () and view.opponent.dice == ()


def test_the_backgammon_opener_plays_the_opening_roll_and_longgammon_rolls_afresh() -> None:
    m = play("1 roll 5\n2 roll 3\n3 tap left\n4 end", names=NAMES).match   # right opens
    assert panel_view(m, RIGHT, m.now, opening=(5, 3)).own.dice == (5, 3)
    assert panel_view(m, LEFT, m.now, opening=(5, 3)).opponent.dice == (5, 3)
    assert panel_view(m, RIGHT, m.now, opening=(5,)).own.dice == ()     # half a roll: none
    lg = play("1 roll 5\n2 roll 3\n3 tap left\n4 end", names=NAMES,
              discipline="longgammon").match
    assert panel_view(lg, RIGHT, lg.now, opening=(5, 3)).own.dice == ()


def test_longgammon_names_whose_opening_die_is_whose_when_white_is_known() -> None:
    # After game 1 the previous black (left) plays white: the first die is Anna's.
    m = play("0 tap left\n5 tap right\n10 hold left\n13 tap right\n20 end", names=NAMES,
             discipline="longgammon").match
    assert m.must_start is LEFT
    for side in Side:
        assert panel_view(m, side, m.now, opening=(2, 6)).opening == (("Anna", 2), ("Boris", 6))
        assert panel_view(m, side, m.now, lang="ru", opening=(2, 6)).opening == (
            ("Anna", 2), ("Boris", 6))


def test_the_opening_roll_is_shown_between_games_only() -> None:
    m = play(OPENING + "105 end", names=NAMES).match
    assert panel_view(m, LEFT, m.now, opening=(5, 3)).opening == ()


def test_the_opening_roll_has_no_notice_and_an_early_roll_keeps_its_own() -> None:
    assert notice_for(DiceRolled(0, None, (5,), 1, 0, False)) is None
    assert notice_for(DiceRolled(0, RIGHT, (3, 3), 1, 4, True)) == "early roll: logged"


def _rolled(*dice: int, turn: int = 0) -> DiceRolled:
    return DiceRolled(0, None, tuple(dice), 1, turn, False)


GAME_STARTED = [GameStarted(5, 1, RIGHT, None, False), TurnStarted(5, RIGHT, 840 * S, 12 * S)]
NEXT_TURN = [TurnStarted(9, LEFT, 840 * S, 12 * S)]
GAME_ENDED = [GameEnded(9, 1, GameResult(LEFT, ResultKind.SINGLE, 1), Pair(1, 0), False,
                        False)]


@pytest.mark.parametrize("before, effects, after", [
    ((), [_rolled(5)], (5,)),
    ((), [_rolled(5), _rolled(3)], (5, 3)),
    ((5,), [_rolled(3)], (5, 3)),
    ((5, 3), [_rolled(2)], (2,)),                      # a third die: the roll again
    ((5,), [_rolled(6, 1)], (6, 1)),                   # two at once: the whole roll
    ((5, 3), [RollVoided(0, (3,))], (5,)),
    ((6, 1), [RollVoided(0, (6, 1))], ()),
    ((5, 3), [RollVoided(0, (4, 4))], (5, 3)),         # a void of another roll
    ((5, 3), [_rolled(4, 2, turn=3)], (5, 3)),         # a roll of a turn is not the opening
    ((5, 3), GAME_STARTED, (5, 3)),                    # the opener plays it
    ((5, 3), NEXT_TURN, ()),
    ((5, 3), GAME_ENDED, ()),
])
def test_opening_dice_from_the_effects(before, effects: list[Effect], after) -> None:
    assert opening_dice(before, effects) == after


@given(st.lists(st.one_of(st.builds(_rolled, st.integers(1, 6)),
                          st.builds(_rolled, st.integers(1, 6), st.integers(1, 6)),
                          st.builds(RollVoided, st.just(0),
                                    st.lists(st.integers(1, 6), min_size=1, max_size=2)
                                    .map(tuple))), max_size=12))
@property_settings(200)
def test_the_opening_roll_is_at_most_two_dice(effects: list[Effect]) -> None:
    dice: tuple[int, ...] = ()
    for effect in effects:
        dice = opening_dice(dice, [effect])
        assert len(dice) <= 2 and all(1 <= d <= 6 for d in dice)


class _Recording:
    """A panel that keeps the last picture it was given."""

    def __init__(self) -> None:
        self.image: Image.Image | None = None

    def show(self, image: Image.Image, t: int) -> None:
        self.image = image


def test_the_presenter_gathers_the_opening_roll_from_the_effects() -> None:
    panels = Pair(_Recording(), _Recording())
    presenter = PanelPresenter(panels)    # type: ignore[arg-type]
    p = play("1 roll 5\n2 roll 3\n3 end", names=NAMES)
    presenter.present(p.engine, p.match.now, p.effects)
    assert presenter.opening == (5, 3)
    expected = render(panel_view(p.match, LEFT, p.match.now, opening=(5, 3)))
    assert panels.left.image is not None
    assert ImageChops.difference(panels.left.image, expected).getbbox() is None


def test_a_clock_without_dice_is_the_clock_it_was() -> None:
    # Every clock made before the dice compares equal still (the field defaults to none).
    assert Clock("13:12") == Clock("13:12", dice=())

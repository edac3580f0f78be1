"""The compact match-rules module: every discipline default and every rule of the match, as data
and pure functions (SPEC §1, §3–§6). Nothing here keeps state, reads a clock or does I/O.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from enum import Enum
from fractions import Fraction

from gammonclock.durations import NS_PER_MIN, NS_PER_S
from gammonclock.sides import Pair, Side

from .pin import PinCheck
from .reasons import Reason
from .timecontrol import FlagRule, TimeControl, TimeMode


class Family(str, Enum):
    BACKGAMMON = "backgammon"   # opening roll is played at once; single/gammon/backgammon
    LONGGAMMON = "longgammon"   # white rolls afresh; oin/mars/draw


@dataclass(frozen=True)
class Discipline:
    name: str
    family: Family
    cube: bool                  # has a doubling cube unless the config says otherwise
    blitz: bool                 # no breaks, ever
    shared_break: bool          # sprintgammon: one break for both players, late in the match
    per_point_ns: int           # default reserve per match point
    delay_ns: int               # default simple delay

    @property
    def breaks_allowed(self) -> bool:
        return not self.blitz


def _discipline(name: str, family: Family, cube: bool, per_point_min: Fraction | int,
                delay_s: int, *, blitz: bool = False, shared_break: bool = False) -> Discipline:
    return Discipline(name, family, cube, blitz, shared_break,
                      int(Fraction(per_point_min) * NS_PER_MIN), delay_s * NS_PER_S)


# SPEC §1: the one table of discipline defaults.
DISCIPLINES: dict[str, Discipline] = {d.name: d for d in (
    _discipline("backgammon", Family.BACKGAMMON, True, 2, 12),
    _discipline("backgammon_blitz", Family.BACKGAMMON, True, 1, 8, blitz=True),
    _discipline("backgammon_doubles", Family.BACKGAMMON, True, Fraction(5, 2), 18),
    _discipline("sprintgammon", Family.BACKGAMMON, True, 1, 8, shared_break=True),
    _discipline("longgammon", Family.LONGGAMMON, False, 2, 8),
    _discipline("longgammon_blitz", Family.LONGGAMMON, False, 1, 5, blitz=True),
)}

MAX_BREAK_NS = 5 * NS_PER_MIN          # IBF: a break lasts at most 5 minutes
SPRINT_BREAK_AFTER_NS = 45 * NS_PER_MIN  # sprintgammon: not before 45 min of match time
DEFAULT_OVERTIME_NS = 1 * NS_PER_MIN
DEFAULT_HOLD_NS = 2 * NS_PER_S
DEFAULT_CHORD_NS = 3 * NS_PER_S     # arbiter.chord_s (SPEC §13.4)
CHORD_NS_RANGE = (1 * NS_PER_S, 10 * NS_PER_S)   # what arbiter.chord_s may be (config, journal)
DEFAULT_DEBOUNCE_NS = 30_000_000


# --- breaks (§5) -----------------------------------------------------------------------------

def break_allowance(discipline: Discipline, match_length: int) -> int:
    """Breaks per player by match length; in sprintgammon the one shared break of the match.

    The source lists 5 / 7, 9 / 11, 13 / 15+; an even length takes the allowance of the listed
    length just below it.
    """
    if discipline.blitz:
        return 0
    if discipline.shared_break:
        return 1
    if match_length <= 6:
        return 0
    if match_length <= 10:
        return 1
    if match_length <= 14:
        return 2
    return 3


# --- reserve (§1) ----------------------------------------------------------------------------

def initial_reserve_ns(per_point_ns: int, match_length: int, start_score: Pair[Fraction]) -> int:
    """`per_point × (length − (a + b) / 2)`: the US rule for a match that starts at a score."""
    points = match_length - (start_score.left + start_score.right) / 2
    return int(per_point_ns * Fraction(points))


# --- the cube (§4) ---------------------------------------------------------------------------

def double_refusal(*, cube_in_play: bool, crawford_game: bool, owner: Side | None,
                   doubler: Side, first_turn: bool, family: Family,
                   rolled_this_turn: bool) -> Reason | None:
    """Why `doubler` may not double now (`DOUBLE_REFUSALS` words it), or None when it is legal."""
    if not cube_in_play:
        return Reason.DOUBLE_NO_CUBE
    if crawford_game:
        return Reason.DOUBLE_CRAWFORD
    if owner is not None and owner is not doubler:
        return Reason.DOUBLE_NOT_OWNER
    if first_turn and family is Family.BACKGAMMON:
        return Reason.DOUBLE_FIRST_TURN
    if rolled_this_turn:
        return Reason.DOUBLE_AFTER_ROLL
    return None


# What the display shows for each refused double (§3).
DOUBLE_REFUSALS: dict[Reason, str] = {
    Reason.DOUBLE_NO_CUBE: "no doubling cube in this match",
    Reason.DOUBLE_CRAWFORD: "Crawford game: no doubling",
    Reason.DOUBLE_NOT_OWNER: "the cube belongs to the opponent",
    Reason.DOUBLE_FIRST_TURN: "no double on the first turn: the opening roll is already played",
    Reason.DOUBLE_AFTER_ROLL: "the dice are already rolled this turn",
}


# --- results (§3, §6) ------------------------------------------------------------------------

class ResultKind(str, Enum):
    SINGLE = "single"
    GAMMON = "gammon"
    BACKGAMMON = "backgammon"
    OIN = "oin"
    MARS = "mars"
    DRAW = "draw"
    PASS = "pass"          # a double passed: the doubler wins the value before the double
    FORFEIT = "forfeit"    # an arbiter's forfeit

    @property
    def multiplier(self) -> int:
        return _MULTIPLIER[self]


_MULTIPLIER = {ResultKind.SINGLE: 1, ResultKind.GAMMON: 2, ResultKind.BACKGAMMON: 3,
               ResultKind.OIN: 1, ResultKind.MARS: 2, ResultKind.PASS: 1,
               ResultKind.DRAW: 0, ResultKind.FORFEIT: 1}


@dataclass(frozen=True)
class GameResult:
    """The outcome of one game. `winner` is None for a draw, where each side scores `points`."""

    winner: Side | None
    kind: ResultKind
    points: Fraction

    def describe(self) -> str:
        if self.winner is None:
            return f"draw ({format_points(self.points)} each)"
        return f"{self.winner} wins {self.kind.value} ({format_points(self.points)})"


def format_points(points: Fraction) -> str:
    noun = "point" if points == 1 else "points"
    return f"{format_score(points)} {noun}"


def format_score(points: Fraction) -> str:
    return str(points.numerator) if points.denominator == 1 else str(float(points))


def json_points(points: Fraction) -> int | float:
    """A score or a number of points as JSON has it (the journal, the state object, the
    export): whole, or a half in longgammon."""
    return int(points) if points.denominator == 1 else float(points)


def game_result(winner: Side | None, kind: ResultKind, cube_value: int,
                draw_points: Fraction) -> GameResult:
    """Points of a result: the cube value times 1/2/3 (single/gammon/backgammon) or 1/2
    (oin/mars); a draw gives each side `draw_points`, not multiplied by the cube."""
    if kind is ResultKind.DRAW:
        return GameResult(None, kind, draw_points)
    return GameResult(winner, kind, Fraction(cube_value * kind.multiplier))


def proposal_cycle(family: Family, holder: Side, cube_value: int, draw_points: Fraction,
                   *, passed_by: Side | None = None) -> tuple[GameResult, ...]:
    """The results a result entry cycles through with taps of the cube button (§3, fine point 5).

    `holder` held their clock button; when they did so to pass a double, `passed_by` is the holder
    and the first proposal is the pass: the doubler wins `cube_value` (the value before the double).
    """
    other = holder.other
    if family is Family.LONGGAMMON:
        kinds = [(holder, ResultKind.OIN), (holder, ResultKind.MARS),
                 (other, ResultKind.OIN), (other, ResultKind.MARS), (None, ResultKind.DRAW)]
    else:
        kinds = [(w, k) for w in (holder, other)
                 for k in (ResultKind.SINGLE, ResultKind.GAMMON, ResultKind.BACKGAMMON)]
    cycle = [game_result(w, k, cube_value, draw_points) for w, k in kinds]
    if passed_by is not None:
        cycle.insert(0, GameResult(passed_by.other, ResultKind.PASS, Fraction(cube_value)))
    return tuple(cycle)


def add_result(score: Pair[Fraction], result: GameResult) -> Pair[Fraction]:
    if result.winner is None:
        return Pair(score.left + result.points, score.right + result.points)
    return score.with_(result.winner, score[result.winner] + result.points)


# --- Crawford (§5, fine point 6) -------------------------------------------------------------

def crawford_due(score: Pair[Fraction], match_length: int) -> bool:
    """Either player stands at match point: length − 1 or more, short of the length."""
    return any(match_length - 1 <= s < match_length for s in score)


def next_game_is_crawford(*, rule_active: bool, crawford_done: bool, game_was_crawford: bool,
                          score: Pair[Fraction], match_length: int) -> bool:
    """Decided when a result is applied: the game after the first in which a player reaches
    length − 1 is the Crawford game, at most once per match."""
    if not rule_active or crawford_done or game_was_crawford:
        return False
    return crawford_due(score, match_length)


# --- match end (§6) --------------------------------------------------------------------------

class EndReason(str, Enum):
    SCORE = "score"
    FLAG = "flag"
    DISQUALIFIED = "disqualified"
    CHALLENGES = "challenges"
    ABANDONED = "abandoned"    # by the arbiter: no winner, the score as it stood
    # continued on another clock (SPEC §13.5): no winner, the score as it stood; the match
    # goes on there and is never resumed here
    MOVED = "moved"


def winner_by_score(score: Pair[Fraction], match_length: int) -> tuple[bool, Side | None]:
    """(over, winner): over once a score reaches the length; the higher score wins, a tie (both
    taken to the length by a draw) has no winner."""
    if max(score) < match_length:
        return False, None
    if score.left == score.right:
        return True, None
    return True, Side.LEFT if score.left > score.right else Side.RIGHT


def award_match(loser: Side, score: Pair[Fraction], match_length: int) -> Pair[Fraction]:
    """A match lost other than by score: the opponent's score becomes the match length."""
    return score.with_(loser.other, Fraction(match_length))


CHALLENGES_TO_LOSE = 3   # the third rejected video-replay challenge loses the match


# --- one match's rules, as the config settles them -------------------------------------------

@dataclass(frozen=True)
class MatchRules:
    """Everything the engine needs to know about the match it keeps: the discipline's defaults
    with the config's overrides applied."""

    discipline: Discipline
    length: int
    cube: bool
    crawford: bool              # the Crawford rule as configured; it acts only with a cube
    start_score: Pair[Fraction]
    crawford_played: bool
    draw_points: Fraction
    time: TimeControl
    reserve_ns: int
    breaks_per_player: int      # sprintgammon: the shared count
    break_ns: int
    hold_ns: int
    debounce_ns: int
    names: Pair[str]
    # The arbiter at the panels (SPEC §13.4): the PIN's hash (pin.py; None: the chord means
    # nothing) and how long the chord of all three buttons is held. A journal written before
    # these existed reads back with the defaults: no PIN.
    arbiter_pin: PinCheck | None = None
    chord_ns: int = DEFAULT_CHORD_NS
    # A match continued on this clock (SPEC §13.5, `match.ArbiterHandover`): the two fields
    # above are this clock's arbiter's from the hand-over on, no longer the journal header's
    # (the clock the match came from); a snapshot therefore writes them (journal/snapshot.py).
    handed_over: bool = False

    @property
    def family(self) -> Family:
        return self.discipline.family

    def handed_over_to(self, pin: PinCheck | None, chord_ns: int) -> MatchRules:
        """These rules with the arbiter at the panels of the clock that continues the match:
        its PIN's check (None: it has none, the chord means nothing there) and its chord."""
        return replace(self, arbiter_pin=pin, chord_ns=chord_ns, handed_over=True)

    @property
    def crawford_active(self) -> bool:
        return self.crawford and self.cube

    @staticmethod
    def defaults(discipline: str = "backgammon", length: int = 7,
                 **overrides: object) -> MatchRules:
        """The rules of a match with every default of its discipline (config, tests, demos)."""
        d = DISCIPLINES[discipline]
        start = Pair(Fraction(0), Fraction(0))
        fields_: dict[str, object] = dict(
            discipline=d, length=length, cube=d.cube, crawford=True, start_score=start,
            crawford_played=False, draw_points=Fraction(1, 2),
            time=TimeControl(TimeMode.DELAY, d.delay_ns, FlagRule.MATCH_LOSS, DEFAULT_OVERTIME_NS),
            reserve_ns=initial_reserve_ns(d.per_point_ns, length, start),
            breaks_per_player=break_allowance(d, length), break_ns=MAX_BREAK_NS,
            hold_ns=DEFAULT_HOLD_NS, debounce_ns=DEFAULT_DEBOUNCE_NS,
            names=Pair("Left", "Right"))
        fields_.update(overrides)
        return MatchRules(**fields_)  # type: ignore[arg-type]

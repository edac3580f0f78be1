"""The match state (SPEC §3–§7): the phase, the clocks, the score and the cube, as one value.

`match.apply` and `match.advance` fold events and time over it; the transitions (`play`,
`arbiter_actions`, `dice_rules`) each change their own copy (`copy_state`) and never the state
they were given.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from fractions import Fraction

from .rules import EndReason, GameResult, MatchRules
from .sides import Button, Pair, Side
from .timecontrol import Turn


class Phase(str, Enum):
    BETWEEN_GAMES = "between_games"
    RUNNING = "running"
    CUBE_OFFERED = "cube_offered"
    PAUSED = "paused"
    RESULT_ENTRY = "result_entry"
    BREAK = "break"
    MATCH_OVER = "match_over"


@dataclass(frozen=True)
class CubeOffer:
    doubler: Side
    value: int          # the cube value before the double


@dataclass(frozen=True)
class ResultEntry:
    holder: Side
    proposals: tuple[GameResult, ...]
    index: int
    resume_phase: Phase  # where a cancel goes back to

    @property
    def proposal(self) -> GameResult:
        return self.proposals[self.index]


@dataclass(frozen=True)
class BreakState:
    side: Side          # who asked for it (in sprintgammon too)
    ends_at: int
    overrun: bool       # time is up and the player is late: their reserve runs


@dataclass(frozen=True)
class LastRoll:
    dice: tuple[int, ...]
    counted: bool       # it was the running player's roll of this turn


@dataclass
class MatchState:
    """The match at instant `now`. Treated as a value: transitions work on a copy."""

    rules: MatchRules
    now: int
    phase: Phase
    game: int                        # the game in progress or the next to start
    score: Pair[Fraction]
    cube_value: int
    cube_owner: Side | None
    crawford_game: bool              # the current (or next) game is the Crawford game
    crawford_done: bool              # the Crawford game has been played
    reserves: Pair[int]              # each side's reserve while its clock is not running
    turn: Turn | None                # the running, paused or interrupted turn
    turn_number: int                 # moves begun in this game (1: the opening move)
    rolled: bool                     # the running player has rolled in this turn
    last_roll: LastRoll | None
    offer: CubeOffer | None
    entry: ResultEntry | None
    brk: BreakState | None
    resume_phase: Phase | None       # while paused: the phase a resume returns to
    breaks_left: Pair[int]
    white: Side | None               # longgammon: white in the game in progress
    must_start: Side | None          # longgammon: the side whose turn must open the next game
    overtime_used: Pair[bool]
    rejected_challenges: Pair[int]
    match_started_at: int | None     # the start of game 1 (sprintgammon's break clock)
    winner: Side | None
    end_reason: EndReason | None
    flag: Side | None

    # --- reading ----------------------------------------------------------------------------

    def reserve_at(self, side: Side, t: int | None = None) -> int:
        """The reserve `side`'s display shows at `t` (default: now)."""
        t = self.now if t is None else t
        if self.turn is not None and self.turn.side is side:
            return self.turn.reserve_at(t)
        return self.reserves[side]

    @property
    def running_side(self) -> Side | None:
        """The side whose reserve is running now (a late player in a break overrun too)."""
        return self.turn.side if self.turn is not None and self.turn.running else None

    @property
    def cube_enabled(self) -> bool:
        return self.rules.cube and not self.crawford_game

    def next_deadline(self) -> int | None:
        """The instant of the next timer: the running side's flag, or a break's end."""
        due = self.turn.flag_at() if self.turn is not None else None
        if self.phase is Phase.BREAK and self.brk is not None and not self.brk.overrun:
            due = self.brk.ends_at if due is None else min(due, self.brk.ends_at)
        return due

    def hold_has_meaning(self, button: Button) -> bool:
        """Whether a hold of `button` means something in this phase (fine point 1): only then
        does it undo what its down edge did as a tap."""
        if self.phase is Phase.BETWEEN_GAMES:
            return button is not Button.CUBE
        if self.phase is Phase.RUNNING:
            return True
        if self.phase is Phase.CUBE_OFFERED:
            assert self.offer is not None
            return button is Button.CUBE or button.side is self.offer.doubler.other
        if self.phase is Phase.PAUSED:
            return button is Button.CUBE
        return False


def copy_state(state: MatchState) -> MatchState:
    """A shallow copy for a transition to change (faster than `copy.copy` on the hot path)."""
    new = object.__new__(MatchState)
    new.__dict__ = state.__dict__.copy()
    return new

"""The match state (SPEC §3–§7): the phase, the clocks, the score and the cube, as one value.

`match.apply` and `match.advance` fold events and time over it; the transitions (`play`,
`arbiter_actions`, `dice_rules`) each change their own copy (`copy_state`) and never the state
they were given.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from enum import Enum
from fractions import Fraction

from gammonclock.sides import Button, Pair, Side

from .reasons import Reason
from .rules import EndReason, GameResult, MatchRules
from .timecontrol import Turn


class Phase(str, Enum):
    BETWEEN_GAMES = "between_games"
    RUNNING = "running"
    CUBE_OFFERED = "cube_offered"
    PAUSED = "paused"
    RESULT_ENTRY = "result_entry"
    BREAK = "break"
    MATCH_OVER = "match_over"
    ARBITER = "arbiter"            # the arbiter at the panels (SPEC §13.4): PIN entry, the menu


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


class PanelStage(str, Enum):
    """Where the arbiter at the panels is (SPEC §13.4)."""

    HELD = "held"          # the chord is recognised and still down
    PIN = "pin"            # the chord released: PIN taps, each a dot
    MENU = "menu"          # the PIN was right: the list of items
    EDIT = "edit"          # an item's new value being set (a clock, the score, the cube)
    CONFIRM = "confirm"    # the change asked for, before it applies
    INFO = "info"          # table, address, version, journal


class MenuItem(str, Enum):
    """The arbiter's menu at the panels, in the order it lists them."""

    RESUME = "resume"
    # Only while a USB stick's continuation is offered here (`MatchState.stick_offer`) and no
    # game of this match is in progress: `arbiter_mode.menu_items`.
    CONTINUE_STICK = "continue_stick"
    # Only while a provisioning stick is offered here (`MatchState.provision_offer`, issue 32)
    # and no game of this match is in progress.
    PROVISION_STICK = "provision_stick"
    ADJUST_LEFT = "adjust_left"
    ADJUST_RIGHT = "adjust_right"
    UNDO = "undo"
    SCORE = "score"
    CUBE = "cube"
    END_BREAK = "end_break"
    MOVED = "moved"                # the match went on on another clock (SPEC §13.5)
    NEXT_MATCH = "next_match"
    INFO = "info"


@dataclass(frozen=True)
class StickOffer:
    """A dead clock's match that a USB stick offers here (SPEC §13.5): the device copied the
    journal off the stick and verified it, and holds it; nothing is loaded and nothing ended
    until the arbiter takes it at the menu after the PIN. What the panels show of it, and
    `mac` (the last record's seal) to tell this offer from another."""

    table: str              # the table the match was played on ("" when its header names none)
    left: str
    right: str
    length: int
    score: str              # as the panels show it, "6-0"
    file: str               # the journal's file name
    seq: int                # its last record
    mac: str                # … and that record's seal

    def describe(self) -> str:
        table = f"{self.table}'s " if self.table else ""
        return (f"{table}match {self.left}-{self.right} {self.score} to {self.length} "
                f"({self.file}, record {self.seq})")


@dataclass(frozen=True)
class ProvisionOffer:
    """A provisioning stick offered here (issue 32): the table this clock would be and the
    hall's broker host, for the panels; `digest` (of the stick's files) tells it from another.
    The device holds the files; the arbiter takes them at the menu after the PIN."""

    table: str
    host: str
    digest: str

    def describe(self) -> str:
        return f"provisioning as {self.table} on {self.host} ({self.digest[:12]})"


@dataclass(frozen=True)
class PanelMode:
    """The arbiter at the panels: play stopped at `since` (the chord's earliest down edge) and
    goes on in `back_to`; `froze_turn`: a running clock was stopped there (a failed PIN charges
    the whole span to it). The draft fields hold the value an EDIT step is setting."""

    since: int
    back_to: Phase
    froze_turn: bool
    stage: PanelStage
    deadline: int | None              # PIN: 30 s after the release; menu: 120 s after a press
    # The PIN taps so far, in a journal written before the PIN was hashed only (its taps were
    # button edges); since, the buttons stay in the engine's pin pad and this is empty.
    entered: tuple[Button, ...] = ()
    dots: int = 0                     # the PIN presses so far (the panels show dots only)
    item: MenuItem = MenuItem.RESUME
    delta_ns: int = 0                 # ADJUST_*: the change to the reserve
    score: Pair[Fraction] | None = None
    score_side: Side = Side.LEFT      # SCORE: the side whose points the arrows change
    cube_value: int = 1
    cube_owner: Side | None = None
    refused: Reason | None = None     # why the last change was refused (shown until a press)


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
    # The arbiter at the panels (SPEC §13.4); a journal or snapshot older than them has none.
    panel: PanelMode | None = None            # in Phase.ARBITER
    pin_failures: int = 0                     # failed PIN attempts in a row
    chord_locked_until: int | None = None     # three failures lock the chord until then
    lockouts: int = 0                         # lockouts since the last right PIN (escalation)
    # A USB stick's continuation offered here (SPEC §13.5): the menu then lists it; it ends
    # when a game starts here, with another offer, or when the device withdraws it.
    stick_offer: StickOffer | None = None
    # A provisioning stick offered here (issue 32): the menu lists it while no game is in
    # progress (it stands for after the match); taken, withdrawn or replaced by the device.
    provision_offer: ProvisionOffer | None = None
    # Ended as moved (SPEC §13.5): the table the match went on at (None: the arbiter at the
    # panels said only that it moved; or it did not move).
    moved_to: str | None = None

    # --- reading ----------------------------------------------------------------------------

    def differs_only_in_instant(self, before: MatchState) -> bool:
        """Whether this state is `before` but for the instant (a button let go after a tap, a
        bounce): nothing a panel shows or the journal must make durable at once changed."""
        return replace(self, now=before.now) == before

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
    def play_phase(self) -> Phase:
        """The phase of play: under the arbiter's mode, the one it goes back to."""
        return self.panel.back_to if self.phase is Phase.ARBITER and self.panel is not None \
            else self.phase

    @property
    def in_progress(self) -> bool:
        """A game of the match has been started or counts as played (a forfeited game 1, fine
        point 11: `game` is then past 1 though no game was ever started), and the match is not
        over (the arbiter's mode open over it or not): a next match needs `--force`, and the
        players' clocks are never hidden (SPEC §13.2). A score correction or a penalty point
        before game 1 plays no game: the match stays ready."""
        played = self.match_started_at is not None or self.game > 1
        return played and self.play_phase is not Phase.MATCH_OVER

    @property
    def cube_enabled(self) -> bool:
        return self.rules.cube and not self.crawford_game

    def next_deadline(self) -> int | None:
        """The instant of the next timer: the running side's flag, or a break's end."""
        due = self.turn.flag_at() if self.turn is not None else None
        if self.phase is Phase.BREAK and self.brk is not None and not self.brk.overrun:
            due = self.brk.ends_at if due is None else min(due, self.brk.ends_at)
        if self.phase is Phase.ARBITER and self.panel is not None \
                and self.panel.deadline is not None:
            due = self.panel.deadline if due is None else min(due, self.panel.deadline)
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
        if self.phase is Phase.ARBITER:
            # In the menu a cube hold resumes play; a PIN tap and a confirmation stand.
            assert self.panel is not None
            return button is Button.CUBE and self.panel.stage in (
                PanelStage.MENU, PanelStage.EDIT, PanelStage.INFO)
        return False


def copy_state(state: MatchState) -> MatchState:
    """A shallow copy for a transition to change (faster than `copy.copy` on the hot path)."""
    new = object.__new__(MatchState)
    new.__dict__ = state.__dict__.copy()
    return new

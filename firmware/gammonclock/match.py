"""The match state machine (SPEC §3–§7): a pure fold of gesture-level events over the match state.

`apply(state, event)` and `advance(state, t)` return a new state and the effects they caused; the
state passed in is never changed. Events are taps and holds (already recognised from button edges
by `engine`), arbiter commands and dice messages, each carrying its instant. Timers (a flag, the end
of a break) fire inside `advance`, at their exact instants, before any event at the same instant.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from enum import Enum
from fractions import Fraction

from . import arbiter as cmd
from .dice import DiceMessage, Roll
from .durations import format_clock
from .effects import (
    ArbiterCommand,
    BreakEnded,
    BreakOverrun,
    BreakStarted,
    ChallengeDecided,
    CubeSet,
    DiceRolled,
    DoubleOffered,
    DoubleTaken,
    Effect,
    FlagFell,
    GameEnded,
    GameStarted,
    Ignored,
    MatchEnded,
    OvertimeGiven,
    Paused,
    Recovered,
    Refused,
    ReserveChanged,
    ResultEntryCancelled,
    ResultEntryStarted,
    ResultProposed,
    Resumed,
    RollVoided,
    ScoreChanged,
    Shown,
    TurnEnded,
    TurnEndReason,
    TurnStarted,
    Warned,
)
from .rules import (
    CHALLENGES_TO_LOSE,
    SPRINT_BREAK_AFTER_NS,
    EndReason,
    Family,
    GameResult,
    MatchRules,
    ResultKind,
    add_result,
    award_match,
    crawford_due,
    double_refusal,
    format_score,
    next_game_is_crawford,
    proposal_cycle,
    winner_by_score,
)
from .sides import Button, Pair, Side
from .timecontrol import FlagRule, TimeMode, Turn, TurnEnd


class Phase(str, Enum):
    BETWEEN_GAMES = "between_games"
    RUNNING = "running"
    CUBE_OFFERED = "cube_offered"
    PAUSED = "paused"
    RESULT_ENTRY = "result_entry"
    BREAK = "break"
    MATCH_OVER = "match_over"


@dataclass(frozen=True)
class Tap:
    """A press acting at its down edge `t`."""

    t: int
    button: Button

    def describe(self) -> str:
        return f"tap {self.button}"


@dataclass(frozen=True)
class Hold:
    """A press that stayed down for `hold_s`; it acts from its down edge `t`."""

    t: int
    button: Button

    def describe(self) -> str:
        return f"hold {self.button}"


@dataclass(frozen=True)
class ArbiterAction:
    t: int
    command: cmd.Command

    def describe(self) -> str:
        return f"arbiter {self.command.describe()}"


@dataclass(frozen=True)
class DiceEvent:
    t: int
    message: DiceMessage

    def describe(self) -> str:
        return self.message.describe()


@dataclass(frozen=True)
class Recover:
    """The clock came back after an outage (a power cut, a crash) whose last record is at `t`:
    a running clock is paused there, so the outage is charged to nobody."""

    t: int

    def describe(self) -> str:
        return "recovered"


@dataclass(frozen=True)
class DiceDropped:
    """The dice reader sent lines faster than dice are rolled; `count` of them were dropped
    unread (a faulty or hostile reader). Journaled so the record says what was lost."""

    t: int
    count: int

    def describe(self) -> str:
        return f"dice reader: {self.count} lines dropped"


Event = Tap | Hold | ArbiterAction | DiceEvent | DiceDropped | Recover


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


def _copy(state: MatchState) -> MatchState:
    """A shallow copy for a transition to change (faster than `copy.copy` on the hot path)."""
    new = object.__new__(MatchState)
    new.__dict__ = state.__dict__.copy()
    return new


def start(rules: MatchRules, at: int = 0) -> MatchState:
    """The match before game 1, at instant `at`."""
    # `crawford_played` speaks of a start at match point; from any other score the Crawford
    # game is still to come.
    at_match_point = crawford_due(rules.start_score, rules.length)
    crawford_done = rules.crawford_played and at_match_point
    crawford_game = rules.crawford_active and not crawford_done and at_match_point
    return MatchState(
        rules=rules, now=at, phase=Phase.BETWEEN_GAMES, game=1, score=rules.start_score,
        cube_value=1, cube_owner=None, crawford_game=crawford_game,
        crawford_done=crawford_done, reserves=Pair.both(rules.reserve_ns), turn=None,
        turn_number=0, rolled=False, last_roll=None, offer=None, entry=None, brk=None,
        resume_phase=None, breaks_left=Pair.both(rules.breaks_per_player), white=None,
        must_start=None, overtime_used=Pair.both(False), rejected_challenges=Pair.both(0),
        match_started_at=None, winner=None, end_reason=None, flag=None)


def advance(state: MatchState, t: int) -> tuple[MatchState, list[Effect]]:
    """The state at `t`, with every timer due at or before `t` fired at its own instant."""
    if t < state.now:
        raise ValueError(f"time went backwards: {t} < {state.now}")
    effects: list[Effect] = []
    while (due := state.next_deadline()) is not None and due <= t:
        state = _copy(state)
        state.now = due
        _Step(state, effects).fire_timer()
    if state.now != t:
        state = _copy(state)
        state.now = t
    return state, effects


def apply(state: MatchState, event: Event) -> tuple[MatchState, list[Effect]]:
    """The state after `event` (timers due up to its instant fire first) and the effects."""
    state, effects = advance(state, event.t)
    state = _copy(state)
    step = _Step(state, effects)
    if isinstance(event, Hold) and state.hold_has_meaning(event.button):
        step.hold(event.button)
    elif isinstance(event, (Tap, Hold)):
        # A hold that means nothing in this phase is the tap its down edge was (fine point 1);
        # a replay after an undo or another hold can bring a recorded hold into such a phase.
        step.tap(event.button)
    elif isinstance(event, ArbiterAction):
        step.arbiter(event.command)
    elif isinstance(event, Recover):
        step.recover()
    elif isinstance(event, DiceDropped):
        effects.append(Ignored(event.t, f"{event.count} dice reader lines",
                               "more than dice are rolled; dropped unread"))
    else:
        step.dice(event.message)
    return state, effects


class _Step:
    """One transition: mutates its own copy `s` of the state and reports into `out`."""

    def __init__(self, state: MatchState, out: list[Effect]) -> None:
        self.s = state
        self.out = out
        self.t = state.now

    # --- shared pieces ----------------------------------------------------------------------

    def start_turn(self, side: Side) -> None:
        s, tc = self.s, self.s.rules.time
        s.turn = Turn.begin(side, self.t, s.reserves[side], tc.mode, tc.delay_ns)
        s.rolled, s.last_roll = False, None      # a VOID now can only be about this turn's roll
        self.out.append(TurnStarted(self.t, side, s.reserves[side], tc.delay_ns))

    def end_turn(self, reason: TurnEndReason) -> TurnEnd:
        """The end-of-turn rule of the time control, at now (or where the turn is frozen)."""
        s = self.s
        assert s.turn is not None
        side, end = s.turn.side, s.turn.end(self.t)
        s.reserves = s.reserves.with_(side, end.reserve_after)
        s.turn = None
        self.out.append(TurnEnded(self.t, side, reason, end.span, end.delay_used, end.charged,
                                  end.refund, end.reserve_after))
        return end

    def ignore(self, what: str, why: str) -> None:
        self.out.append(Ignored(self.t, what, why))

    def refuse(self, what: str, why: str) -> None:
        self.out.append(Refused(self.t, what, why))

    # --- timers -----------------------------------------------------------------------------

    def fire_timer(self) -> None:
        s = self.s
        if s.turn is not None and s.turn.flag_at() == self.t:
            self.flag_falls(s.turn)
        else:
            assert s.brk is not None and s.brk.ends_at == self.t
            s.brk = replace(s.brk, overrun=True)
            self.out.append(BreakOverrun(self.t, s.brk.side))
            # The late player's reserve runs with no delay and nothing added back.
            side = s.brk.side
            s.turn = Turn.begin(side, self.t, s.reserves[side], TimeMode.NONE, 0)
            self.out.append(TurnStarted(self.t, side, s.reserves[side], 0))

    def flag_falls(self, turn: Turn) -> None:
        s, tc, side = self.s, self.s.rules.time, turn.side
        if tc.flag_rule is FlagRule.OVERTIME and not s.overtime_used[side]:
            s.overtime_used = s.overtime_used.with_(side, True)
            s.turn = replace(turn, start_reserve=turn.start_reserve + tc.overtime_ns)
            self.out.append(OvertimeGiven(self.t, side, tc.overtime_ns))
            return
        end = turn.flag_end(self.t)
        s.reserves = s.reserves.with_(side, 0)
        s.turn = None
        self.out.append(TurnEnded(self.t, side, TurnEndReason.FLAG, end.span, end.delay_used,
                                  end.charged, 0, 0))
        self.out.append(FlagFell(self.t, side))
        self.lose_match(side, EndReason.FLAG)

    # --- taps -------------------------------------------------------------------------------

    def tap(self, button: Button) -> None:
        s = self.s
        what = f"tap {button}"
        if s.phase is Phase.MATCH_OVER:
            self.ignore(what, "the match is over")
        elif s.phase is Phase.BETWEEN_GAMES:
            if button is Button.CUBE:
                self.out.append(Shown(self.t, self.info_page()))
            else:
                self.start_game(button.side)  # type: ignore[arg-type]
        elif s.phase is Phase.RUNNING:
            assert s.turn is not None
            if button is Button.CUBE:
                self.double(s.turn.side)
            elif button.side is s.turn.side:
                self.end_turn(TurnEndReason.SWITCH)
                s.turn_number += 1
                self.start_turn(button.side.other)
            else:
                self.ignore(what, f"out of turn: {s.turn.side}'s clock runs")
        elif s.phase is Phase.CUBE_OFFERED:
            assert s.offer is not None
            if button.side is s.offer.doubler.other:
                self.take()
            elif button is Button.CUBE:
                self.out.append(Shown(self.t, "take: press your clock"))
            else:
                self.ignore(what, "the doubler waits for the answer")
        elif s.phase is Phase.RESULT_ENTRY:
            self.result_entry_tap(button)
        elif s.phase is Phase.BREAK:
            assert s.brk is not None
            if button.side is s.brk.side:
                self.end_break()
            else:
                self.ignore(what, f"{s.brk.side}'s break")
        else:
            self.ignore(what, "paused")

    def info_page(self) -> str:
        s = self.s
        return (f"score {format_score(s.score.left)}-{format_score(s.score.right)} "
                f"to {s.rules.length}; breaks left {s.breaks_left.left}/{s.breaks_left.right}; "
                f"reserves {format_clock(s.reserves.left)} / {format_clock(s.reserves.right)}")

    def start_game(self, tapper: Side) -> None:
        s = self.s
        if s.rules.family is Family.LONGGAMMON and s.must_start is tapper:
            self.ignore(f"tap {tapper}", f"{tapper} plays white and starts: "
                                         f"{tapper.other} presses")
            return
        starter = tapper.other
        s.white = starter if s.rules.family is Family.LONGGAMMON else None
        if s.match_started_at is None:
            s.match_started_at = self.t
        s.phase = Phase.RUNNING
        s.turn_number = 1
        s.last_roll = None
        self.out.append(GameStarted(self.t, s.game, starter, s.white, s.crawford_game))
        self.start_turn(starter)

    def double(self, doubler: Side) -> None:
        s = self.s
        why = double_refusal(cube_in_play=s.rules.cube, crawford_game=s.crawford_game,
                             owner=s.cube_owner, doubler=doubler, first_turn=s.turn_number == 1,
                             family=s.rules.family, rolled_this_turn=s.rolled)
        if why is not None:
            self.refuse(f"{doubler}'s double", why)
            return
        self.end_turn(TurnEndReason.DOUBLE)
        s.offer = CubeOffer(doubler, s.cube_value)
        s.phase = Phase.CUBE_OFFERED
        self.out.append(DoubleOffered(self.t, doubler, s.cube_value * 2))
        self.start_turn(doubler.other)

    def take(self) -> None:
        s = self.s
        assert s.offer is not None
        taker = s.offer.doubler.other
        self.end_turn(TurnEndReason.TAKE)
        s.cube_value, s.cube_owner = s.offer.value * 2, taker
        doubler, s.offer = s.offer.doubler, None
        s.phase = Phase.RUNNING
        self.out.append(DoubleTaken(self.t, taker, s.cube_value))
        self.start_turn(doubler)

    def result_entry_tap(self, button: Button) -> None:
        s = self.s
        entry = s.entry
        assert entry is not None and s.turn is not None
        if button is Button.CUBE:
            s.entry = replace(entry, index=(entry.index + 1) % len(entry.proposals))
            self.out.append(ResultProposed(self.t, s.entry.proposal))
        elif button.side is entry.holder:
            # Cancel: the interrupted turn runs on from now; the entry was charged to nobody.
            s.phase, s.entry = entry.resume_phase, None
            s.turn = s.turn.resumed(self.t)
            self.out.append(ResultEntryCancelled(self.t, entry.holder))
        else:
            self.finish_game(entry.proposal, by_arbiter=False)

    def end_break(self) -> None:
        s = self.s
        assert s.brk is not None
        overrun = self.end_turn(TurnEndReason.BREAK_OVER).span if s.brk.overrun else 0
        self.out.append(BreakEnded(self.t, s.brk.side, overrun))
        s.brk, s.phase = None, Phase.BETWEEN_GAMES

    # --- holds (only where `hold_has_meaning`) ----------------------------------------------

    def hold(self, button: Button) -> None:
        s = self.s
        if s.phase is Phase.BETWEEN_GAMES:
            self.request_break(button.side)  # type: ignore[arg-type]
        elif s.phase is Phase.PAUSED:
            self.resume("cube")
        elif button is Button.CUBE:
            self.pause("cube")
        elif s.phase is Phase.RUNNING:
            self.start_result_entry(button.side, passed=False)  # type: ignore[arg-type]
        else:
            self.start_result_entry(button.side, passed=True)  # type: ignore[arg-type]

    def start_result_entry(self, holder: Side, passed: bool) -> None:
        s = self.s
        assert s.turn is not None
        s.turn = s.turn.frozen(self.t)
        value = s.offer.value if passed and s.offer is not None else s.cube_value
        proposals = proposal_cycle(s.rules.family, holder, value, s.rules.draw_points,
                                   passed_by=holder if passed else None)
        s.entry = ResultEntry(holder, proposals, 0, s.phase)
        s.phase = Phase.RESULT_ENTRY
        self.out.append(ResultEntryStarted(self.t, holder, s.entry.proposal, passed))

    def pause(self, by: str) -> None:
        s = self.s
        assert s.turn is not None
        s.turn = s.turn.frozen(self.t)
        s.resume_phase, s.phase = s.phase, Phase.PAUSED
        self.out.append(Paused(self.t, by))

    def resume(self, by: str) -> None:
        s = self.s
        assert s.turn is not None and s.resume_phase is not None
        s.turn = s.turn.resumed(self.t)
        s.phase, s.resume_phase = s.resume_phase, None
        self.out.append(Resumed(self.t, by))

    def request_break(self, side: Side) -> None:
        s, rules = self.s, self.s.rules
        why = None
        if not rules.discipline.breaks_allowed:
            why = "no breaks in blitz"
        elif s.game == 1:
            why = "breaks only after the first game"
        elif s.breaks_left[side] <= 0:
            shared = rules.discipline.shared_break
            why = "the match's break is taken" if shared else "no breaks left"
        elif rules.discipline.shared_break:
            started = s.match_started_at if s.match_started_at is not None else self.t
            played = self.t - started
            if played < SPRINT_BREAK_AFTER_NS:
                why = f"break allowed from 45:00 of match time (now {format_clock(played)})"
        if why is not None:
            self.refuse(f"{side}'s break", why)
            return
        if rules.discipline.shared_break:
            s.breaks_left = Pair.both(s.breaks_left[side] - 1)
        else:
            s.breaks_left = s.breaks_left.with_(side, s.breaks_left[side] - 1)
        s.brk = BreakState(side, self.t + rules.break_ns, overrun=False)
        s.phase = Phase.BREAK
        self.out.append(BreakStarted(self.t, side, s.brk.ends_at, s.breaks_left))

    # --- the end of a game and of the match -------------------------------------------------

    def finish_game(self, result: GameResult, by_arbiter: bool) -> None:
        s, rules = self.s, self.s.rules
        if s.turn is not None:
            self.end_turn(TurnEndReason.ARBITER if by_arbiter else TurnEndReason.RESULT)
        s.score = add_result(s.score, result)
        was_crawford = s.crawford_game
        s.crawford_done = s.crawford_done or was_crawford
        over, winner = winner_by_score(s.score, rules.length)
        next_crawford = not over and next_game_is_crawford(
            rule_active=rules.crawford_active, crawford_done=s.crawford_done,
            game_was_crawford=was_crawford, score=s.score, match_length=rules.length)
        if rules.family is Family.LONGGAMMON:
            # Colours alternate: the next game is started by this game's black.
            white = s.white if s.white is not None else s.must_start
            s.must_start = white.other if white is not None else None
        s.cube_value, s.cube_owner = 1, None
        s.offer = s.entry = None
        s.resume_phase = s.white = None
        s.turn_number, s.rolled, s.last_roll = 0, False, None
        self.out.append(GameEnded(self.t, s.game, result, s.score, by_arbiter, next_crawford))
        if over:
            self.end_match(winner, EndReason.SCORE)
        else:
            s.game += 1
            s.crawford_game = next_crawford
            s.phase = Phase.BETWEEN_GAMES

    def lose_match(self, loser: Side, reason: EndReason) -> None:
        """A match lost other than by score: the running turn ends by the normal rule and the
        opponent's score becomes the match length."""
        s = self.s
        if s.turn is not None:
            self.end_turn(TurnEndReason.ARBITER)
        phase = s.resume_phase if s.phase is Phase.PAUSED else s.phase
        if phase in (Phase.BETWEEN_GAMES, Phase.BREAK):
            s.game = max(1, s.game - 1)   # no game in progress: `game` is the last one played
        s.score = award_match(loser, s.score, s.rules.length)
        self.end_match(loser.other, reason, flag=loser if reason is EndReason.FLAG else None)

    def end_match(self, winner: Side | None, reason: EndReason, flag: Side | None = None) -> None:
        s = self.s
        s.phase = Phase.MATCH_OVER
        s.winner, s.end_reason, s.flag = winner, reason, flag
        s.crawford_game = False
        s.offer = s.entry = s.brk = None
        s.resume_phase = None
        self.out.append(MatchEnded(self.t, winner, reason, s.score))

    # --- the arbiter (§7) -------------------------------------------------------------------

    def arbiter(self, command: cmd.Command) -> None:
        s = self.s
        text = command.describe()
        self.out.append(ArbiterCommand(self.t, text))
        if s.phase is Phase.MATCH_OVER and not isinstance(command, cmd.Warn):
            self.refuse(text, "the match is over")
            return
        handler = getattr(self, "arbiter_" + type(command).__name__.lower())
        handler(command, text)

    def clock_runs(self) -> bool:
        s = self.s
        return s.phase in (Phase.RUNNING, Phase.CUBE_OFFERED) or (
            s.phase is Phase.BREAK and s.brk is not None and s.brk.overrun)

    def arbiter_pause(self, _: cmd.Pause, text: str) -> None:
        if self.clock_runs():
            self.pause("arbiter")
        else:
            self.refuse(text, "no clock is running")

    def recover(self) -> None:
        paused = self.clock_runs()
        if paused:
            self.pause("recovery")
        self.out.append(Recovered(self.t, paused))

    def arbiter_resume(self, _: cmd.Resume, text: str) -> None:
        if self.s.phase is Phase.PAUSED:
            self.resume("arbiter")
        else:
            self.refuse(text, "the clock is not paused")

    def change_reserve(self, side: Side, delta: int) -> None:
        s = self.s
        if s.turn is not None and s.turn.side is side:
            s.turn, applied = s.turn.with_reserve_change(self.t, delta)
        else:
            applied = max(-s.reserves[side], delta)
            s.reserves = s.reserves.with_(side, s.reserves[side] + applied)
        self.out.append(ReserveChanged(self.t, side, applied, s.reserve_at(side, self.t)))

    def arbiter_adjust(self, c: cmd.Adjust, _: str) -> None:
        self.change_reserve(c.side, c.delta_ns)

    def arbiter_deduct(self, c: cmd.Deduct, text: str) -> None:
        shown = self.s.reserve_at(c.side, self.t)
        if 2 * c.amount_ns > shown:
            self.refuse(text, f"more than half of the remaining {format_clock(shown)}")
        else:
            self.change_reserve(c.side, -c.amount_ns)

    def arbiter_addtime(self, c: cmd.AddTime, _: str) -> None:
        self.change_reserve(c.side, c.amount_ns)

    def arbiter_pointpenalty(self, c: cmd.PointPenalty, _: str) -> None:
        # A penalty point never creates or cancels the Crawford game (fine point 6).
        s = self.s
        s.score = s.score.with_(c.side, max(Fraction(0), s.score[c.side] - 1))
        self.out.append(ScoreChanged(self.t, s.score, s.crawford_game))

    def arbiter_forfeit(self, c: cmd.Forfeit, text: str) -> None:
        s = self.s
        if s.phase is Phase.BREAK:
            self.refuse(text, "no forfeit during a break")
            return
        points = Fraction(c.points if c.points is not None else s.cube_value)
        self.finish_game(GameResult(c.side.other, ResultKind.FORFEIT, points), by_arbiter=True)

    def arbiter_disqualify(self, c: cmd.Disqualify, _: str) -> None:
        self.lose_match(c.side, EndReason.DISQUALIFIED)

    def arbiter_warn(self, c: cmd.Warn, _: str) -> None:
        self.out.append(Warned(self.t, c.side, c.text))

    def arbiter_challenge(self, c: cmd.Challenge, _: str) -> None:
        s = self.s
        if not c.upheld:
            s.rejected_challenges = s.rejected_challenges.with_(
                c.side, s.rejected_challenges[c.side] + 1)
        self.out.append(ChallengeDecided(self.t, c.side, c.upheld, s.rejected_challenges[c.side]))
        if s.rejected_challenges[c.side] >= CHALLENGES_TO_LOSE and not c.upheld:
            self.lose_match(c.side, EndReason.CHALLENGES)

    def arbiter_setscore(self, c: cmd.SetScore, text: str) -> None:
        s, rules = self.s, self.s.rules
        new = Pair(c.left, c.right)
        if max(new) >= rules.length:
            self.refuse(text, f"a score must stay below the match length {rules.length}")
            return
        if rules.family is not Family.LONGGAMMON and any(v.denominator != 1 for v in new):
            self.refuse(text, "half points exist only in longgammon")
            return
        s.score = new
        if s.phase in (Phase.BETWEEN_GAMES, Phase.BREAK):   # the next game is not under way
            s.crawford_game = (rules.crawford_active and not s.crawford_done
                               and crawford_due(new, rules.length))
        self.out.append(ScoreChanged(self.t, s.score, s.crawford_game))

    def arbiter_setcube(self, c: cmd.SetCube, text: str) -> None:
        s = self.s
        owner = c.owner if c.value > 1 else None
        if c.value > 1 and owner is None:
            owner = s.cube_owner
        why = None
        if not s.cube_enabled:
            why = "no doubling cube in this game"
        elif s.offer is not None:
            why = "not while a double is offered: undo it, or let it be taken or passed"
        elif s.phase is Phase.BREAK:
            why = "not during a break"
        elif c.value > 1 and owner is None:
            why = f"name the owner: cube {c.value} left|right"
        if why is not None:
            self.refuse(text, why)
            return
        s.cube_value, s.cube_owner = c.value, owner
        if s.entry is not None:
            # The result being entered is worth the corrected cube (§3: points × cube value).
            proposals = proposal_cycle(s.rules.family, s.entry.holder, c.value,
                                       s.rules.draw_points)
            s.entry = replace(s.entry, proposals=proposals)
        self.out.append(CubeSet(self.t, c.value, owner))

    def arbiter_undo(self, _: cmd.Undo, text: str) -> None:  # pragma: no cover - engine's job
        raise AssertionError("undo is applied by the engine, which keeps the history")

    # --- the dice reader (§8) ---------------------------------------------------------------

    def dice(self, message: DiceMessage) -> None:
        s = self.s
        if isinstance(message, Roll):
            if s.phase is Phase.MATCH_OVER:
                self.ignore(message.describe(), "the match is over")
                return
            runner = s.running_side
            side = message.side if message.side is not None else runner
            early = message.side is not None and runner is not None and message.side is not runner
            counted = s.phase is Phase.RUNNING and not early
            if counted:
                s.rolled = True
            s.last_roll = LastRoll(message.dice, counted)
            self.out.append(DiceRolled(self.t, side, message.dice, s.game, s.turn_number, early))
        elif s.last_roll is None:
            self.ignore("void", "no roll to void")
        else:
            if s.last_roll.counted:
                s.rolled = False
            self.out.append(RollVoided(self.t, s.last_roll.dice))
            s.last_roll = None


def state_json(state: MatchState) -> dict[str, object]:
    """The SPEC §9 state object at `state.now` (the arbiter's `status`, the simulator's output)."""
    def points(v: Fraction) -> int | float:
        return int(v) if v.denominator == 1 else float(v)

    def side(v: Side | None) -> str | None:
        return None if v is None else v.value

    return {
        "phase": state.phase.value,
        "game": state.game,
        "match_length": state.rules.length,
        "score": {"left": points(state.score.left), "right": points(state.score.right)},
        "crawford_game": state.crawford_game,
        "cube": {"value": state.cube_value, "owner": side(state.cube_owner),
                 "enabled": state.cube_enabled},
        "running": side(state.running_side),
        "clock": {s.value: {"reserve_ms": state.reserve_at(s) // 1_000_000} for s in Side},
        "breaks_left": state.breaks_left.as_dict(),
        "winner": side(state.winner),
        "end_reason": None if state.end_reason is None else state.end_reason.value,
        "flag": side(state.flag),
    }

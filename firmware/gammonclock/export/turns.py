"""Derive the match's turns, games, breaks, pauses, arbiter actions and dice from a journal.

One pass over the surviving effects (`stream.load_stream`), in stream order. A turn is the span
from a side's `TurnStarted` to its `TurnEnded`; a turn that a hold or an undo retracted is gone
from the surviving effects, so it never appears here.
"""

from __future__ import annotations

from pathlib import Path
from typing import assert_never

from gammonclock.core.effects import (
    AnyEffect,
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
    Rewound,
    RollVoided,
    ScoreChanged,
    Shown,
    TurnEnded,
    TurnEndReason,
    TurnStarted,
    Undone,
    Warned,
    as_any,
)
from gammonclock.core.rules import ResultKind
from gammonclock.journal.reader import JournalSource
from gammonclock.journal.replay import UNDO_KEPT, Replayed
from gammonclock.sides import Side

from .handover import handover_of, mark
from .model import (
    ArbiterAct,
    Author,
    Break,
    Game,
    Incident,
    MatchRecord,
    Pause,
    Roll,
    Turn,
)
from .stream import RewoundPastHanded, Stamped, Stream, stream_effects


def _arbiter_outcome(effect: Effect) -> bool:
    """Whether `effect`, right after an arbiter command at its instant, is what it did."""
    if isinstance(effect, (ReserveChanged, ScoreChanged, CubeSet, Warned, ChallengeDecided,
                           Undone, Refused, MatchEnded)):
        return True
    if isinstance(effect, (Paused, Resumed)):
        return effect.by == "arbiter"
    if isinstance(effect, TurnEnded):
        return effect.reason is TurnEndReason.ARBITER
    if isinstance(effect, GameEnded):
        return effect.by_arbiter
    return False


class _Builder:
    def __init__(self) -> None:
        self.turns: list[Turn] = []
        self.games: dict[int, Game] = {}
        self.breaks: list[Break] = []
        self.pauses: list[Pause] = []
        self.arbiter: list[ArbiterAct] = []
        self.rolls: list[Roll] = []
        self.incidents: list[Incident] = []
        self.result: MatchEnded | None = None
        self.game_no = 1                 # the game in progress or the next to start
        self.in_game = False
        self.clock_turns = 0             # clock turns of the game so far
        self.move = 0
        self.open: Turn | None = None
        self.last: Turn | None = None    # the last finished turn
        self.early: dict[Side, list[Roll]] = {Side.LEFT: [], Side.RIGHT: []}
        self.opening: list[Roll] = []    # opening dice before the next game starts
        self.last_roll: Roll | None = None
        self.entry: Side | None = None   # the holder of a result entry in progress
        self.act: tuple[ArbiterAct, Stamped] | None = None

    # --- dispatch ---------------------------------------------------------------------------

    def take(self, item: Stamped) -> None:
        e = item.effect
        if self.act is not None:
            act, said = self.act
            if item.place is said.place and e.t == act.t and _arbiter_outcome(e):
                act.outcome.append(e)
                if isinstance(e, Refused):
                    act.refused, act.refused_reason = e.why, e.reason
                    act.refused_facts = e.facts
            else:
                self.act = None
        self.on(as_any(e), item)

    def on(self, e: AnyEffect, item: Stamped) -> None:
        match e:
            case TurnStarted():
                self.on_turn_started(e, item)
            case TurnEnded():
                self.on_turn_ended(e, item)
            case DoubleOffered():
                self.on_double_offered(e, item)
            case DoubleTaken():
                self.on_double_taken(e, item)
            case GameStarted():
                self.on_game_started(e, item)
            case ResultEntryStarted():
                self.on_result_entry_started(e, item)
            case ResultEntryCancelled():
                self.on_result_entry_cancelled(e, item)
            case GameEnded():
                self.on_game_ended(e, item)
            case MatchEnded():
                self.on_match_ended(e, item)
            case DiceRolled():
                self.on_dice_rolled(e, item)
            case RollVoided():
                self.on_roll_voided(e, item)
            case Paused():
                self.on_paused(e, item)
            case Resumed():
                self.on_resumed(e, item)
            case BreakStarted():
                self.on_break_started(e, item)
            case BreakOverrun():
                self.on_break_overrun(e, item)
            case BreakEnded():
                self.on_break_ended(e, item)
            case ArbiterCommand():
                self.on_arbiter_command(e, item)
            case FlagFell() | OvertimeGiven() | Recovered():
                self.incidents.append(Incident(e.t, item.wall, e.kind, e.describe(), e))
            case (ResultProposed() | ReserveChanged() | ScoreChanged() | CubeSet() | Warned()
                  | ChallengeDecided() | Undone() | Refused() | Ignored() | Shown()
                  | Rewound()):
                pass    # an arbiter's act's outcome (above), or nothing the export shows
            case _:
                assert_never(e)

    def game(self, number: int) -> Game:
        if number not in self.games:
            self.games[number] = Game(number)
        return self.games[number]

    # --- turns ------------------------------------------------------------------------------

    def on_turn_started(self, e: TurnStarted, item: Stamped) -> None:
        if self.in_game:
            self.clock_turns += 1
            number, move = self.clock_turns, self.move
        else:
            number, move = 0, 0          # a late player's reserve runs after a break
        turn = Turn(self.game_no, number, move, e.side, e.t, item.wall, e.reserve, e.delay)
        turn.rolls, self.early[e.side] = self.early[e.side], []
        self.open = turn
        self.turns.append(turn)

    def on_turn_ended(self, e: TurnEnded, item: Stamped) -> None:
        turn = self.open
        if turn is None or turn.side is not e.side:
            return                       # cannot happen with a consistent stream
        turn.end_t, turn.end_wall, turn.reason = e.t, item.wall, e.reason.value
        turn.span, turn.delay_used, turn.charged = e.span, e.delay_used, e.charged
        turn.refund, turn.reserve_after = e.refund, e.reserve_after
        self.open, self.last = None, turn
        if e.reason is TurnEndReason.SWITCH:
            self.move += 1

    def on_double_offered(self, e: DoubleOffered, _: Stamped) -> None:
        if self.last is not None and self.last.side is e.doubler:
            self.last.cube = f"doubled to {e.value}"

    def on_double_taken(self, e: DoubleTaken, _: Stamped) -> None:
        if self.last is not None and self.last.side is e.taker:
            self.last.cube = f"took {e.value}"

    # --- games ------------------------------------------------------------------------------

    def on_game_started(self, e: GameStarted, item: Stamped) -> None:
        game = self.game(e.game)
        game.start_t, game.start_wall = e.t, item.wall
        game.starter, game.white, game.crawford = e.starter, e.white, e.crawford
        game.opening, self.opening = self.opening, []
        self.game_no, self.in_game = e.game, True
        self.clock_turns, self.move, self.last_roll = 0, 1, None

    def on_result_entry_started(self, e: ResultEntryStarted, _: Stamped) -> None:
        self.entry = e.holder

    def on_result_entry_cancelled(self, e: ResultEntryCancelled, _: Stamped) -> None:
        self.entry = None
        self.game(self.game_no).cancelled_entries += 1

    def on_game_ended(self, e: GameEnded, item: Stamped) -> None:
        game = self.game(e.game)
        game.end_t, game.end_wall = e.t, item.wall
        game.result, game.score_after = e.result, e.score
        game.by_arbiter, game.next_crawford = e.by_arbiter, e.next_crawford
        game.entered_by = None if e.by_arbiter else self.entry
        last = self.last
        if (e.result.kind is ResultKind.PASS and last is not None
                and last.reason == TurnEndReason.RESULT.value and last.side is not e.result.winner):
            last.cube = "passed"
        self.entry, self.in_game, self.last_roll = None, False, None
        self.game_no = e.game + 1

    def on_match_ended(self, e: MatchEnded, item: Stamped) -> None:
        self.result = e
        if self.in_game:
            self.game(self.game_no).match_ended = e.reason.value
        if self.pauses and self.pauses[-1].end_t is None:
            self.pauses[-1].end_t, self.pauses[-1].resumed_by = e.t, "match over"
        self.incidents.append(Incident(e.t, item.wall, e.kind, e.describe(), e))

    # --- dice -------------------------------------------------------------------------------

    def on_dice_rolled(self, e: DiceRolled, item: Stamped) -> None:
        open_side = self.open.side if self.open is not None else None
        roll = Roll(e.t, item.wall, tuple(e.dice), e.side, e.side or open_side, e.game, e.turn,
                    e.early)
        self.rolls.append(roll)
        self.last_roll = roll
        if e.turn == 0:
            self.opening.append(roll)
        elif e.early and e.side is not None:
            self.early[e.side].append(roll)      # for that player's next turn
        elif self.open is not None:
            self.open.rolls.append(roll)

    def on_roll_voided(self, e: RollVoided, _: Stamped) -> None:
        roll = self.last_roll
        if roll is None or roll.dice != tuple(e.dice):
            roll = next((r for r in reversed(self.rolls)
                         if not r.voided and r.dice == tuple(e.dice)), None)
        if roll is not None:
            roll.voided = True
        self.last_roll = None

    # --- pauses, breaks, the arbiter, incidents ---------------------------------------------

    def on_paused(self, e: Paused, item: Stamped) -> None:
        self.pauses.append(Pause(e.by, e.t, item.wall))

    def on_resumed(self, e: Resumed, _: Stamped) -> None:
        if self.pauses and self.pauses[-1].end_t is None:
            self.pauses[-1].end_t, self.pauses[-1].resumed_by = e.t, e.by

    def on_break_started(self, e: BreakStarted, item: Stamped) -> None:
        self.breaks.append(Break(e.side, e.t, item.wall, e.ends_at, e.breaks_left))

    def on_break_overrun(self, e: BreakOverrun, _: Stamped) -> None:
        if self.breaks:
            self.breaks[-1].overrun_t = e.t

    def on_break_ended(self, e: BreakEnded, item: Stamped) -> None:
        if self.breaks:
            brk = self.breaks[-1]
            brk.end_t, brk.end_wall, brk.overrun = e.t, item.wall, e.overrun

    def on_arbiter_command(self, e: ArbiterCommand, item: Stamped) -> None:
        act = ArbiterAct(e.t, item.wall, e.text, author=Author(e.source, e.by))
        self.arbiter.append(act)
        self.act = (act, item)

    # --- the end ----------------------------------------------------------------------------

    def attach_openings(self) -> None:
        """Backgammon: the opening roll is played as the first move of the game."""
        for turn in self.turns:
            if turn.number == 1:
                dice = [r for r in self.games[turn.game].opening if not r.voided]
                if len(dice) >= 2 and all(len(r.dice) == 1 for r in dice[-2:]):
                    a, b = dice[-2:]
                    turn.opening = Roll(b.t, b.wall, a.dice + b.dice, turn.side, turn.side,
                                        turn.game, 0, False)
                elif dice and len(dice[-1].dice) == 2:
                    turn.opening = dice[-1]


def derive(stream: Stream) -> MatchRecord:
    """The match a journal holds, as the export shows it."""
    builder = _Builder()
    for item in stream.effects:
        builder.take(item)
    return _record(builder, stream.read, stream.replayed, stream.effects, stream.total)


def _record(builder: _Builder, read: JournalSource, replayed: Replayed,
            effects: list[Stamped], total: int) -> MatchRecord:
    if replayed.config.rules.family.value == "backgammon":
        builder.attach_openings()
    last = read.last
    table = read.header.data.get("table")
    handover = mark(handover_of(read.header.data), builder.incidents,
                    table if isinstance(table, str) else None)
    return MatchRecord(
        path=read.path, read=read, replayed=replayed, effects=effects, effects_total=total,
        turns=builder.turns, games=[builder.games[n] for n in sorted(builder.games)],
        breaks=builder.breaks, pauses=builder.pauses, arbiter=builder.arbiter,
        rolls=builder.rolls, incidents=builder.incidents, result=builder.result,
        end_t=last.t, end_wall=last.wall, handover=handover)


def load_match(path: str | Path, effects: bool = True) -> MatchRecord:
    """Read, replay and derive a journal in one pass (errors as `stream.stream_effects`).
    `effects`: keep the surviving effects in the record (the JSON and the HTML report use
    them); without them (the CSV) the memory grows with the turns only, not with the journal."""
    def derived(keep: int | None) -> MatchRecord:
        builder, kept = _Builder(), []

        def take(item: Stamped) -> None:
            builder.take(item)
            if effects:
                kept.append(item)
        read, replayed, total = stream_effects(path, take, keep)
        return _record(builder, read, replayed, kept, total)
    try:
        return derived(UNDO_KEPT)
    except RewoundPastHanded:       # an undo reached past what the replay kept
        return derived(None)

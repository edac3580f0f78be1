"""One transition of the match, and the pieces every kind of transition shares.

A `Step` changes its own copy of the state and reports into a list of effects. The kinds of
step — the players' buttons and the timers (`play`), the arbiter's commands (`arbiter_actions`),
the dice reader (`dice_rules`) — build on what is here: turns starting and ending, pauses, and
the end of a game and of the match.
"""

from __future__ import annotations

from dataclasses import replace

from gammonclock.sides import Side

from .effects import (
    BreakEnded,
    BreakOverrun,
    Effect,
    FlagFell,
    GameEnded,
    Ignored,
    MatchEnded,
    OvertimeGiven,
    Paused,
    Refused,
    Resumed,
    TurnEnded,
    TurnEndReason,
    TurnStarted,
)
from .match_state import MatchState, Phase
from .reasons import Reason
from .rules import (
    EndReason,
    Family,
    GameResult,
    add_result,
    award_match,
    next_game_is_crawford,
    winner_by_score,
)
from .timecontrol import FlagRule, TimeMode, Turn, TurnEnd


class Step:
    """One transition: mutates its own copy `s` of the state and reports into `out`."""

    def __init__(self, state: MatchState, out: list[Effect]) -> None:
        self.s = state
        self.out = out
        self.t = state.now

    # --- what changed nothing ---------------------------------------------------------------

    def ignore(self, what: str, reason: Reason, why: str, /, **facts: str | int) -> None:
        """`why` in English; `facts`, the figures and sides it names, for `words`."""
        self.out.append(Ignored(self.t, what, why, reason, tuple(facts.items())))

    def refuse(self, what: str, reason: Reason, why: str, /, **facts: str | int) -> None:
        """`why` in English; `facts`, the figures and sides it names, for `words`."""
        self.out.append(Refused(self.t, what, why, reason, tuple(facts.items())))

    # --- turns ------------------------------------------------------------------------------

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

    # --- pauses -----------------------------------------------------------------------------

    def clock_runs(self) -> bool:
        s = self.s
        return s.phase in (Phase.RUNNING, Phase.CUBE_OFFERED) or (
            s.phase is Phase.BREAK and s.brk is not None and s.brk.overrun)

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

    # --- timers -----------------------------------------------------------------------------

    def flag_falls(self, turn: Turn, at: int | None = None) -> None:
        """The running side's reserve reached zero at `at` (default: now; earlier for a span
        charged after the fact, a failed arbiter's PIN): overtime once, or the match is lost."""
        s, tc, side = self.s, self.s.rules.time, turn.side
        if tc.flag_rule is FlagRule.OVERTIME and not s.overtime_used[side]:
            s.overtime_used = s.overtime_used.with_(side, True)
            s.turn = replace(turn, start_reserve=turn.start_reserve + tc.overtime_ns)
            self.out.append(OvertimeGiven(self.t, side, tc.overtime_ns))
            return
        end = turn.flag_end(self.t if at is None else at)
        s.reserves = s.reserves.with_(side, 0)
        s.turn = None
        self.out.append(TurnEnded(self.t, side, TurnEndReason.FLAG, end.span, end.delay_used,
                                  end.charged, 0, 0))
        self.out.append(FlagFell(self.t, side))
        self.lose_match(side, EndReason.FLAG)

    def overrun_break(self, since: int | None = None) -> None:
        """The break's time is up (at `since`, default now: earlier when it ran out while the
        arbiter's mode held the panels) and its taker is not back: their reserve runs from
        then, with no delay and nothing added back."""
        s = self.s
        assert s.brk is not None
        s.brk = replace(s.brk, overrun=True)
        self.out.append(BreakOverrun(self.t, s.brk.side))
        side = s.brk.side
        s.turn = Turn.begin(side, self.t if since is None else since, s.reserves[side],
                            TimeMode.NONE, 0)
        self.out.append(TurnStarted(self.t, side, s.reserves[side], 0))

    def end_break(self) -> None:
        """The break ends now: its taker came back (or the arbiter ended it)."""
        s = self.s
        assert s.brk is not None
        overrun = self.end_turn(TurnEndReason.BREAK_OVER).span if s.brk.overrun else 0
        self.out.append(BreakEnded(self.t, s.brk.side, overrun))
        s.brk, s.phase = None, Phase.BETWEEN_GAMES

    # --- the arbiter at the panels (SPEC §13.4) ---------------------------------------------

    def leave_panel(self, charge: bool, by: str) -> None:
        """Play goes on where the chord stopped it. `charge`: a failed PIN, so the clock that
        was running runs from the chord's down edge, as if it had never stopped (a failed
        attempt is never free time); else from now (the arbiter's pause is nobody's) — but a
        break's overrun is always its late taker's (`run_break_under_panel`)."""
        self.run_break_under_panel()
        s = self.s
        panel = s.panel
        assert panel is not None
        s.phase, s.panel = panel.back_to, None
        if panel.froze_turn and s.turn is not None:
            s.turn = s.turn.resumed(panel.since if charge else self.t)
            self.out.append(Resumed(self.t, by))
            self.flags_due()

    def run_break_under_panel(self) -> None:
        """The arbiter's mode stops play, not a break's time (docs/engine.md): a break whose
        end has passed is overrun since its end, and the overrun up to now is charged to its
        late taker — frozen here, the mode still open, since (`panel.since`) moved to now."""
        s, panel = self.s, self.s.panel
        assert panel is not None
        brk = s.brk
        if panel.back_to is not Phase.BREAK or brk is None or (
                not brk.overrun and brk.ends_at > self.t):
            return
        s.phase, s.panel = Phase.BREAK, None
        if not brk.overrun:
            self.overrun_break(since=brk.ends_at)
        elif s.turn is not None and panel.froze_turn:
            s.turn = s.turn.resumed(panel.since)
        self.flags_due()
        froze = s.turn is not None
        if s.turn is not None:
            s.turn = s.turn.frozen(self.t)
        s.panel = replace(panel, since=self.t, back_to=s.phase, froze_turn=froze)
        s.phase = Phase.ARBITER

    def flags_due(self) -> None:
        """A span charged after the fact may have run the reserve out: the flag falls now,
        with the clock at zero at the instant it reached it."""
        s = self.s
        while s.turn is not None and (due := s.turn.flag_at()) is not None and due <= self.t:
            self.flag_falls(s.turn, at=due)

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
        self.stop_play()
        s.score = award_match(loser, s.score, s.rules.length)
        self.end_match(loser.other, reason, flag=loser if reason is EndReason.FLAG else None)

    def abandon(self) -> None:
        """The match ends where it stands, with no winner: the running turn ends by the normal
        rule, the score stays."""
        self.stop_play()
        self.end_match(None, EndReason.ABANDONED)

    def moved(self, to: str | None) -> None:
        """The match went on on another clock (SPEC §13.5): it ends here as abandon ends it
        (the running turn by the normal rule, the score as it stood, no winner), naming where
        it went, and is never resumed here."""
        self.stop_play()
        self.s.moved_to = to
        self.end_match(None, EndReason.MOVED)

    def stop_play(self) -> None:
        """Before a match ends other than by score: the running turn ends by the normal rule,
        and with no game in progress `game` is the last one played."""
        s = self.s
        if s.turn is not None:
            self.end_turn(TurnEndReason.ARBITER)
        phase = s.resume_phase if s.phase is Phase.PAUSED else s.phase
        if phase in (Phase.BETWEEN_GAMES, Phase.BREAK):
            s.game = max(1, s.game - 1)

    def end_match(self, winner: Side | None, reason: EndReason, flag: Side | None = None) -> None:
        s = self.s
        s.phase = Phase.MATCH_OVER
        s.winner, s.end_reason, s.flag = winner, reason, flag
        s.crawford_game = False
        s.offer = s.entry = s.brk = None
        s.resume_phase = None
        self.out.append(MatchEnded(self.t, winner, reason, s.score))

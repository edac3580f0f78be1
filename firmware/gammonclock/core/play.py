"""The players' side of the match (SPEC §3–§5): taps and holds of the three buttons, and the
timers (a flag, the end of a break) that fire while they play.

`Play` is the step for a tap, a hold, a timer or a recovery after an outage; which buttons mean
what in each phase is SPEC §3's table.
"""

from __future__ import annotations

from dataclasses import replace

from gammonclock.durations import format_clock
from gammonclock.sides import Button, Pair, Side

from .arbiter_mode import ArbiterMode
from .effects import (
    BreakStarted,
    DoubleOffered,
    DoubleTaken,
    GameStarted,
    Recovered,
    ResultEntryCancelled,
    ResultEntryStarted,
    ResultProposed,
    Shown,
    TurnEndReason,
)
from .match_state import BreakState, CubeOffer, Phase, ResultEntry
from .reasons import Reason
from .rules import (
    DOUBLE_REFUSALS,
    SPRINT_BREAK_AFTER_NS,
    Family,
    double_refusal,
    format_score,
    proposal_cycle,
)
from .transition import Step


class Play(Step):
    """A tap, a hold, a timer firing or a recovery: the match as the players run it."""

    # --- timers -----------------------------------------------------------------------------

    def fire_timer(self) -> None:
        s = self.s
        if s.phase is Phase.ARBITER:
            ArbiterMode(s, self.out).timeout()
        elif s.turn is not None and s.turn.flag_at() == self.t:
            self.flag_falls(s.turn)
        else:
            assert s.brk is not None and s.brk.ends_at == self.t
            self.overrun_break()

    def recover(self) -> None:
        """Back after an outage: a running clock is paused at the last record's instant. The
        arbiter's mode does not outlive the outage: nobody is at the panels any more."""
        s = self.s
        if s.phase is Phase.ARBITER:
            ArbiterMode(s, self.out).outage()
        paused = self.clock_runs()
        if paused:
            self.pause("recovery")
        self.out.append(Recovered(self.t, paused))

    # --- taps -------------------------------------------------------------------------------

    def tap(self, button: Button) -> None:
        s = self.s
        what = "tap " + button.value      # (an enum's f-string formatting is slow: every tap)
        if s.phase is Phase.ARBITER:
            ArbiterMode(s, self.out).press(button, held=False)
        elif s.phase is Phase.MATCH_OVER:
            self.ignore(what, Reason.MATCH_OVER, "the match is over", pressed=str(button))
        elif s.phase is Phase.BETWEEN_GAMES:
            if button is Button.CUBE:
                self.out.append(Shown(self.t, self.info_page(), Reason.INFO_PAGE))
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
                self.ignore(what, Reason.OUT_OF_TURN, f"out of turn: {s.turn.side}'s clock runs",
                            pressed=str(button), side=str(s.turn.side))
        elif s.phase is Phase.CUBE_OFFERED:
            assert s.offer is not None
            if button.side is s.offer.doubler.other:
                self.take()
            elif button is Button.CUBE:
                self.out.append(Shown(self.t, "take: press your clock", Reason.TAKE_HINT))
            else:
                self.ignore(what, Reason.DOUBLER_WAITS, "the doubler waits for the answer",
                            pressed=str(button))
        elif s.phase is Phase.RESULT_ENTRY:
            self.result_entry_tap(button)
        elif s.phase is Phase.BREAK:
            assert s.brk is not None
            if button.side is s.brk.side:
                self.end_break()
            else:
                self.ignore(what, Reason.NOT_BREAK_TAKER, f"{s.brk.side}'s break",
                            pressed=str(button), side=str(s.brk.side))
        else:
            self.ignore(what, Reason.PAUSED, "paused", pressed=str(button))

    def info_page(self) -> str:
        s = self.s
        return (f"score {format_score(s.score.left)}-{format_score(s.score.right)} "
                f"to {s.rules.length}; breaks left {s.breaks_left.left}/{s.breaks_left.right}; "
                f"reserves {format_clock(s.reserves.left)} / {format_clock(s.reserves.right)}")

    def start_game(self, tapper: Side) -> None:
        s = self.s
        if s.rules.family is Family.LONGGAMMON and s.must_start is tapper:
            self.ignore(f"tap {tapper}", Reason.WHITE_STARTS,
                        f"{tapper} plays white and starts: {tapper.other} presses",
                        pressed=str(tapper), side=str(tapper))
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
        refusal = double_refusal(cube_in_play=s.rules.cube, crawford_game=s.crawford_game,
                                 owner=s.cube_owner, doubler=doubler,
                                 first_turn=s.turn_number == 1, family=s.rules.family,
                                 rolled_this_turn=s.rolled)
        if refusal is not None:
            self.refuse(f"{doubler}'s double", refusal, DOUBLE_REFUSALS[refusal],
                        side=str(doubler))
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

    # --- holds (only where `hold_has_meaning`) ----------------------------------------------

    def hold(self, button: Button) -> None:
        s = self.s
        if s.phase is Phase.ARBITER:
            ArbiterMode(s, self.out).press(button, held=True)
        elif s.phase is Phase.BETWEEN_GAMES:
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

    def request_break(self, side: Side) -> None:
        s, rules = self.s, self.s.rules
        refusal = self.break_refusal(side)
        if refusal is not None:
            self.refuse(f"{side}'s break", *refusal[:2], side=str(side), **refusal[2])
            return
        if rules.discipline.shared_break:
            s.breaks_left = Pair.both(s.breaks_left[side] - 1)
        else:
            s.breaks_left = s.breaks_left.with_(side, s.breaks_left[side] - 1)
        s.brk = BreakState(side, self.t + rules.break_ns, overrun=False)
        s.phase = Phase.BREAK
        self.out.append(BreakStarted(self.t, side, s.brk.ends_at, s.breaks_left))

    def break_refusal(self, side: Side) -> tuple[Reason, str, dict[str, str]] | None:
        """Why `side` may not take a break now, or None when they may."""
        s, discipline = self.s, self.s.rules.discipline
        if not discipline.breaks_allowed:
            return Reason.BREAK_BLITZ, "no breaks in blitz", {}
        if s.game == 1:
            return Reason.BREAK_FIRST_GAME, "breaks only after the first game", {}
        if s.breaks_left[side] <= 0:
            if discipline.shared_break:
                return Reason.BREAK_SHARED_TAKEN, "the match's break is taken", {}
            return Reason.BREAK_NONE_LEFT, "no breaks left", {}
        if discipline.shared_break:
            started = s.match_started_at if s.match_started_at is not None else self.t
            played = self.t - started
            if played < SPRINT_BREAK_AFTER_NS:
                return (Reason.BREAK_TOO_EARLY,
                        f"break allowed from 45:00 of match time (now {format_clock(played)})",
                        {"now": format_clock(played)})
        return None

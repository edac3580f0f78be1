"""The arbiter's commands acting on the match (SPEC §7).

Each command is journaled as given (`ArbiterCommand`), then does what it says or is refused with
a `Reason`. Once the match is over only a warning still acts. `undo` needs the history of the
match and is the engine's (`engine.Engine._undo`); it never reaches this step.
"""

from __future__ import annotations

from dataclasses import replace
from fractions import Fraction
from typing import assert_never

from gammonclock.durations import format_clock
from gammonclock.sides import Pair, Side

from . import arbiter as cmd
from .effects import (
    ArbiterCommand,
    ChallengeDecided,
    CubeSet,
    ReserveChanged,
    ScoreChanged,
    Warned,
)
from .match_state import Phase
from .reasons import Reason
from .rules import (
    CHALLENGES_TO_LOSE,
    EndReason,
    Family,
    GameResult,
    ResultKind,
    crawford_due,
    proposal_cycle,
)
from .transition import Step


class Arbiter(Step):
    """One arbiter command; `text` is the command as given, the `what` of its refusals."""

    def command(self, command: cmd.Command, source: str | None = None,
                by: str | None = None) -> None:
        """Journal the command with who gave it (`source`: "socket", "panel", "hall"), then act."""
        text = command.describe()
        self.out.append(ArbiterCommand(self.t, text, source, by))
        if self.s.phase is Phase.ARBITER:
            self.at_panel(command, text)
        else:
            self.act(command, text)

    def at_panel(self, command: cmd.Command, text: str) -> None:
        """A command while the arbiter's mode holds the panels (SPEC §13.4): `resume` leaves it
        (and a pause it found), `pause` has nothing to stop; any other acts on the match as it
        stood when the chord stopped it, and the mode stays."""
        s = self.s
        self.run_break_under_panel()     # a break's overrun to now is its taker's
        panel = s.panel
        assert panel is not None
        if isinstance(command, cmd.Resume):
            self.leave_panel(charge=False, by="arbiter")
            if s.phase is Phase.PAUSED:
                self.resume("arbiter")
            return
        if isinstance(command, cmd.Pause):
            self.refuse(text, Reason.NO_CLOCK_RUNNING, "the arbiter's mode has stopped the clocks",
                        case="panel")
            return
        s.phase, s.panel = panel.back_to, None
        self.act(command, text)
        s.panel = replace(panel, back_to=s.phase,
                          froze_turn=panel.froze_turn and s.turn is not None)
        s.phase = Phase.ARBITER

    def act(self, command: cmd.Command, text: str) -> None:
        if self.s.phase is Phase.MATCH_OVER and not isinstance(command, cmd.Warn):
            self.refuse(text, Reason.MATCH_OVER, "the match is over")
            return
        match command:
            case cmd.Pause():
                self.pause_clock(text)
            case cmd.Resume():
                self.resume_clock(text)
            case cmd.Adjust(side=side, delta_ns=delta):
                self.change_reserve(side, delta)
            case cmd.Deduct(side=side, amount_ns=amount):
                self.deduct(side, amount, text)
            case cmd.AddTime(side=side, amount_ns=amount):
                self.change_reserve(side, amount)
            case cmd.PointPenalty(side=side):
                self.point_penalty(side)
            case cmd.Forfeit():
                self.forfeit(command, text)
            case cmd.Disqualify(side=side):
                self.lose_match(side, EndReason.DISQUALIFIED)
            case cmd.Abandon():
                self.abandon()
            case cmd.Moved(to=to):
                self.moved(to)
            case cmd.EndBreak():
                self.end_break_early(text)
            case cmd.Warn(side=side, text=warning):
                self.out.append(Warned(self.t, side, warning))
            case cmd.Challenge(side=side, upheld=upheld):
                self.challenge(side, upheld)
            case cmd.SetScore():
                self.set_score(command, text)
            case cmd.SetCube():
                self.set_cube(command, text)
            case cmd.Undo():  # pragma: no cover - the engine's job
                raise AssertionError("undo is applied by the engine, which keeps the history")
            case _:
                assert_never(command)

    def pause_clock(self, text: str) -> None:
        if self.clock_runs():
            self.pause("arbiter")
        else:
            self.refuse(text, Reason.NO_CLOCK_RUNNING, "no clock is running")

    def resume_clock(self, text: str) -> None:
        if self.s.phase is Phase.PAUSED:
            self.resume("arbiter")
        else:
            self.refuse(text, Reason.NOT_PAUSED, "the clock is not paused")

    def end_break_early(self, text: str) -> None:
        if self.s.phase is Phase.BREAK:
            self.end_break()
        else:
            self.refuse(text, Reason.NO_BREAK, "no break is being taken")

    # --- time -------------------------------------------------------------------------------

    def change_reserve(self, side: Side, delta: int) -> None:
        s = self.s
        if s.turn is not None and s.turn.side is side:
            s.turn, applied = s.turn.with_reserve_change(self.t, delta)
        else:
            applied = max(-s.reserves[side], delta)
            s.reserves = s.reserves.with_(side, s.reserves[side] + applied)
        self.out.append(ReserveChanged(self.t, side, applied, s.reserve_at(side, self.t)))

    def deduct(self, side: Side, amount: int, text: str) -> None:
        shown = self.s.reserve_at(side, self.t)
        if 2 * amount > shown:
            self.refuse(text, Reason.DEDUCT_OVER_HALF,
                        f"more than half of the remaining {format_clock(shown)}",
                        reserve=format_clock(shown))
        else:
            self.change_reserve(side, -amount)

    # --- penalties --------------------------------------------------------------------------

    def point_penalty(self, side: Side) -> None:
        # A penalty point never creates or cancels the Crawford game (fine point 6).
        s = self.s
        s.score = s.score.with_(side, max(Fraction(0), s.score[side] - 1))
        self.out.append(ScoreChanged(self.t, s.score, s.crawford_game, penalty=side))

    def forfeit(self, c: cmd.Forfeit, text: str) -> None:
        s = self.s
        if s.phase is Phase.BREAK:
            self.refuse(text, Reason.FORFEIT_IN_BREAK, "no forfeit during a break")
            return
        points = Fraction(c.points if c.points is not None else s.cube_value)
        self.finish_game(GameResult(c.side.other, ResultKind.FORFEIT, points), by_arbiter=True)

    def challenge(self, side: Side, upheld: bool) -> None:
        s = self.s
        if not upheld:
            s.rejected_challenges = s.rejected_challenges.with_(
                side, s.rejected_challenges[side] + 1)
        self.out.append(ChallengeDecided(self.t, side, upheld, s.rejected_challenges[side]))
        if s.rejected_challenges[side] >= CHALLENGES_TO_LOSE and not upheld:
            self.lose_match(side, EndReason.CHALLENGES)

    # --- corrections ------------------------------------------------------------------------

    def set_score(self, c: cmd.SetScore, text: str) -> None:
        s, rules = self.s, self.s.rules
        new = Pair(c.left, c.right)
        if max(new) >= rules.length:
            self.refuse(text, Reason.SCORE_AT_LENGTH,
                        f"a score must stay below the match length {rules.length}",
                        length=rules.length)
            return
        if rules.family is not Family.LONGGAMMON and any(v.denominator != 1 for v in new):
            self.refuse(text, Reason.SCORE_HALF_POINT, "half points exist only in longgammon")
            return
        s.score = new
        if s.phase in (Phase.BETWEEN_GAMES, Phase.BREAK):   # the next game is not under way
            s.crawford_game = (rules.crawford_active and not s.crawford_done
                               and crawford_due(new, rules.length))
        self.out.append(ScoreChanged(self.t, s.score, s.crawford_game))

    def set_cube(self, c: cmd.SetCube, text: str) -> None:
        s = self.s
        owner = c.owner if c.value > 1 else None
        if c.value > 1 and owner is None:
            owner = s.cube_owner
        refusal = self.cube_refusal(c.value, owner)
        if refusal is not None:
            self.refuse(text, *refusal, value=c.value)
            return
        s.cube_value, s.cube_owner = c.value, owner
        if s.entry is not None:
            # The result being entered is worth the corrected cube (§3: points × cube value).
            proposals = proposal_cycle(s.rules.family, s.entry.holder, c.value,
                                       s.rules.draw_points)
            s.entry = replace(s.entry, proposals=proposals)
        self.out.append(CubeSet(self.t, c.value, owner))

    def cube_refusal(self, value: int, owner: Side | None) -> tuple[Reason, str] | None:
        """Why the cube may not be set to `value` owned by `owner` now, or None."""
        s = self.s
        if not s.cube_enabled:
            return Reason.CUBE_NOT_IN_GAME, "no doubling cube in this game"
        if s.offer is not None:
            return (Reason.CUBE_DOUBLE_OFFERED,
                    "not while a double is offered: undo it, or let it be taken or passed")
        if s.phase is Phase.BREAK:
            return Reason.CUBE_IN_BREAK, "not during a break"
        if value > 1 and owner is None:
            return Reason.CUBE_NO_OWNER, f"name the owner: cube {value} left|right"
        return None

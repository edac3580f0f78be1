"""What the dice reader's messages do to the match (SPEC §8).

A roll is recorded against the turn it belongs to: the running player's roll of this turn counts
(a double is no longer allowed), a roll by the other side is an early roll. A void strikes the
last roll. Lines the reader dropped unread (it sent faster than dice are rolled) are recorded as
ignored, with their count.
"""

from __future__ import annotations

from typing import assert_never

from .dice import DiceMessage, Roll, Void
from .effects import DiceRolled, RollVoided
from .match_state import LastRoll, Phase
from .reasons import Reason
from .transition import Step


class Dice(Step):
    """One message of the dice reader, or the count of lines it dropped."""

    def message(self, message: DiceMessage) -> None:
        match message:
            case Roll():
                self.roll(message)
            case Void():
                self.void()
            case _:
                assert_never(message)

    def roll(self, message: Roll) -> None:
        s = self.s
        if s.phase is Phase.MATCH_OVER:
            self.ignore(message.describe(), Reason.MATCH_OVER, "the match is over")
            return
        runner = s.running_side
        side = message.side if message.side is not None else runner
        early = message.side is not None and runner is not None and message.side is not runner
        counted = s.phase is Phase.RUNNING and not early
        if counted:
            s.rolled = True
        s.last_roll = LastRoll(message.dice, counted)
        self.out.append(DiceRolled(self.t, side, message.dice, s.game, s.turn_number, early))

    def void(self) -> None:
        s = self.s
        if s.last_roll is None:
            self.ignore("void", Reason.VOID_NO_ROLL, "no roll to void")
            return
        if s.last_roll.counted:
            s.rolled = False
        self.out.append(RollVoided(self.t, s.last_roll.dice))
        s.last_roll = None

    def dropped(self, count: int) -> None:
        self.ignore(f"{count} dice reader lines", Reason.DICE_DROPPED,
                    "more than dice are rolled; dropped unread", count=count)

"""The match as the arbiter's export sees it: turns, games, breaks, pauses, arbiter actions and
dice, derived from a journal's surviving effects (`turns.derive`). Instants are engine ns (`t`)
and wall-clock ns since the epoch (`wall`); durations are ns.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import TYPE_CHECKING

from gammonclock.config.loading import Config
from gammonclock.core.effects import Effect, MatchEnded
from gammonclock.core.reasons import Reason
from gammonclock.core.rules import GameResult, MatchRules
from gammonclock.journal.reader import JournalSource
from gammonclock.journal.replay import Replayed, diverged_note
from gammonclock.sides import Pair, Side

if TYPE_CHECKING:     # the stream and handover modules build on this one
    from .handover import Handover
    from .stream import Stamped


@dataclass(slots=True)
class Roll:
    t: int
    wall: int
    dice: tuple[int, ...]
    side: Side | None        # as the engine logged it (the reader's side, else the runner)
    roller: Side | None      # side, else the side of the turn it was rolled in
    game: int
    move: int                # the move of the game (0: the opening roll)
    early: bool
    voided: bool = False

    def text(self) -> str:
        return "-".join(map(str, self.dice))


@dataclass(slots=True)
class Turn:
    """A span in which one side's clock ran (TurnStarted … TurnEnded)."""

    game: int
    number: int              # clock turn of the game, from 1; 0 for a late return from a break
    move: int                # the move of the game it belongs to (a cube decision: the doubler's)
    side: Side
    start_t: int
    start_wall: int
    reserve_before: int
    delay: int
    end_t: int | None = None
    end_wall: int | None = None
    reason: str | None = None          # TurnEndReason value; None: still open at the end
    span: int | None = None            # think time, pauses and result entry excluded
    delay_used: int | None = None
    charged: int | None = None
    refund: int | None = None
    reserve_after: int | None = None
    cube: str = ""                     # "doubled to N", "took N", "passed"
    rolls: list[Roll] = field(default_factory=list)
    opening: Roll | None = None        # backgammon: the opening roll this first move plays

    @property
    def finished(self) -> bool:
        return self.reason is not None

    @property
    def is_move(self) -> bool:
        """A move or cube decision (not a late return from a break)."""
        return self.number > 0


@dataclass
class Game:
    number: int
    start_t: int | None = None         # None: forfeited before it started
    start_wall: int | None = None
    starter: Side | None = None
    white: Side | None = None
    crawford: bool = False
    end_t: int | None = None
    end_wall: int | None = None
    result: GameResult | None = None
    score_after: Pair[Fraction] | None = None
    by_arbiter: bool = False
    next_crawford: bool = False
    entered_by: Side | None = None     # who held to enter the result (the other confirmed)
    match_ended: str | None = None     # the match ended during this game: flag, disqualified …
    cancelled_entries: int = 0
    opening: list[Roll] = field(default_factory=list)


@dataclass(frozen=True)
class Author:
    """Who gave an arbiter command, as its journal record says (SPEC §13.4): `source` is
    "socket", "panel", "hall" or "script", `by` the login or account. Older journals name
    neither."""

    source: str | None = None
    by: str | None = None

    def text(self) -> str:
        """"socket: anna", "panel", "hall: director"; "unknown" when the journal does not say."""
        if self.source is None and self.by is None:
            return "unknown"
        return ": ".join(part for part in (self.source or "unknown", self.by) if part)


UNKNOWN_AUTHOR = Author()


# What an arbiter command does, by its first word, as the export names it (an `adjust` is time
# given or time taken by its sign). Time given is never a penalty (SPEC §7's `add` is not one).
CATEGORIES: dict[str, str] = {
    "add": "time given", "deduct": "time taken", "point": "point penalty",
    "forfeit": "game forfeited", "disqualify": "disqualification", "warn": "warning",
    "challenge": "challenge", "score": "correction", "cube": "correction", "undo": "undo",
    "pause": "clock paused", "resume": "clock resumed", "abandon": "match abandoned",
    "moved": "match moved",
}
OTHER = "other"
# The acts that are penalties (sanctions against a player) when they acted.
PENALTIES = ("deduct", "point", "forfeit", "disqualify", "warn")
# The categories that go against a player besides time taken, counted in the report's totals.
SANCTIONS = ("point penalty", "game forfeited", "disqualification", "warning")
AGAINST = ("time taken", *SANCTIONS)


@dataclass
class ArbiterAct:
    t: int
    wall: int
    command: str
    outcome: list[Effect] = field(default_factory=list)
    refused: str | None = None
    author: Author = UNKNOWN_AUTHOR
    refused_reason: Reason | None = None     # the code of `refused`
    refused_facts: tuple[tuple[str, str | int], ...] = ()   # what `refused` names

    @property
    def name(self) -> str:
        return self.command.split()[0] if self.command else ""

    @property
    def category(self) -> str:
        """What the command does: "time given", "time taken", "point penalty" … (CATEGORIES);
        what it would have done for a refused one."""
        if self.name == "adjust":
            words = self.command.split()
            return "time taken" if len(words) > 2 and words[2].startswith("-") else "time given"
        return CATEGORIES.get(self.name, OTHER)

    @property
    def side(self) -> Side | None:
        """The side the command names, if any."""
        words = self.command.split()
        return Side(words[1]) if len(words) > 1 and words[1] in ("left", "right") else None

    @property
    def penalty(self) -> bool:
        return self.name in PENALTIES and self.refused is None


@dataclass
class Break:
    side: Side
    start_t: int
    start_wall: int
    planned_end_t: int
    breaks_left: Pair[int]
    overrun_t: int | None = None       # time was up and the player was late from here
    end_t: int | None = None
    end_wall: int | None = None
    overrun: int = 0                   # ns the late player's reserve ran


@dataclass
class Pause:
    by: str                            # cube, arbiter or recovery
    start_t: int
    start_wall: int
    end_t: int | None = None
    resumed_by: str | None = None


@dataclass
class Incident:
    """Flags, overtime, outages and the match's end: one line each."""

    t: int
    wall: int
    kind: str
    text: str
    effect: Effect | None = None       # what it was (the report words it in its language)


@dataclass
class MatchRecord:
    path: str
    read: JournalSource
    replayed: Replayed
    effects: list[Stamped]             # surviving, in stream order
    effects_total: int
    turns: list[Turn]
    games: list[Game]
    breaks: list[Break]
    pauses: list[Pause]
    arbiter: list[ArbiterAct]
    rolls: list[Roll]
    incidents: list[Incident]
    result: MatchEnded | None
    end_t: int                         # the journal's last instant
    end_wall: int
    handover: Handover | None = None   # continued from another clock's journal

    @property
    def config(self) -> Config:
        return self.replayed.config

    @property
    def rules(self) -> MatchRules:
        return self.replayed.config.rules

    @property
    def origin_t(self) -> int:
        return self.read.header.t

    def name(self, side: Side | None) -> str:
        return "" if side is None else self.rules.names[side]

    @property
    def notes(self) -> list[str]:
        """What the reader should know about the journal itself."""
        notes = list(self.read.problems())
        if self.replayed.diverged:
            notes.append(diverged_note(self.replayed.diverged, "r.diverged"))
        return notes

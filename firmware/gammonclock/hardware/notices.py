"""The transient texts a panel lays over its screen for an effect (pure: no PIL, no device).

`notice_for` decides which effects the players are told about and in what words; the presenter
decides how long a notice stays (`presenters.NOTICE_NS`).
"""

from __future__ import annotations

from ..effects import (
    ChallengeDecided,
    CubeSet,
    DiceRolled,
    Effect,
    Ignored,
    OvertimeGiven,
    Recovered,
    Refused,
    ReserveChanged,
    ScoreChanged,
    Shown,
    Undone,
    Warned,
)
from ..reasons import Reason
from .glyphs import TINY
from .views import INFO_PAGE, INNER_W, format_countdown

_NOTICE_CHARS = 2 * TINY.chars(INNER_W - 4)    # two lines in the notice box

# While records cannot be written (a full, failing or read-only card), both panels say so for as
# long as it lasts; the log names the file and the cause, which a player cannot act on.
JOURNAL_ALERT = "journal not written: call the arbiter"


def journal_alert(journal_error: str | None) -> str | None:
    """The standing notice for a session's `journal_error` (None: the journal is written)."""
    return JOURNAL_ALERT if journal_error else None


def _short(text: str) -> str:
    """A free text (an arbiter's warning) cut to what fits a notice: parentheses first, then the
    tail after ': '."""
    if len(text) > _NOTICE_CHARS and "(" in text:
        text = text.split("(", 1)[0].rstrip()
    if len(text) > _NOTICE_CHARS and ": " in text:
        text = text.split(": ", 1)[0]
    return text


# What the panels say to a player whose double or break is refused, and for the hints: worded
# here, for a 128-pixel panel, from the reason alone (the engine's text is for the journal).
_PLAYER_NOTICES: dict[Reason, str] = {
    Reason.DOUBLE_NO_CUBE: "no doubling cube in this match",
    Reason.DOUBLE_CRAWFORD: "Crawford game: no doubling",
    Reason.DOUBLE_NOT_OWNER: "the cube belongs to the opponent",
    Reason.DOUBLE_FIRST_TURN: "no double on the first turn",
    Reason.DOUBLE_AFTER_ROLL: "the dice are already rolled this turn",
    Reason.BREAK_BLITZ: "no breaks in blitz",
    Reason.BREAK_FIRST_GAME: "breaks only after the first game",
    Reason.BREAK_SHARED_TAKEN: "the match's break is taken",
    Reason.BREAK_NONE_LEFT: "no breaks left",
    Reason.BREAK_TOO_EARLY: "break allowed from 45:00 of match time",
    Reason.TAKE_HINT: "take: press your clock",
}

# The ignored taps the player is told about, and how; the rest (the match is over, the dice
# reader's) need no word.
_IGNORED_NOTICES: dict[Reason, str] = {
    Reason.OUT_OF_TURN: "out of turn: not your clock",
    Reason.WHITE_STARTS: "white starts: black presses",
    Reason.DOUBLER_WAITS: "waiting for take or pass",
    Reason.PAUSED: "paused: hold cube to resume",
    Reason.NOT_BREAK_TAKER: "break: its taker ends it",
}


def notice_for(effect: Effect) -> str | None:
    """A short transient text for the effects the players need told, else None.

    Decided from the effect's type, its `Reason` and its typed fields, never from its text.
    Refusals of an arbiter's command are the arbiter's business (their console shows them); a
    player's refused double or break shows why.
    """
    if isinstance(effect, Refused):       # one without a code (made by hand): its text, cut
        return _short(effect.why) if effect.reason is None else _PLAYER_NOTICES.get(effect.reason)
    if isinstance(effect, Ignored):
        return None if effect.reason is None else _IGNORED_NOTICES.get(effect.reason)
    if isinstance(effect, Shown):
        return INFO_PAGE if effect.reason is Reason.INFO_PAGE else (
            None if effect.reason is None else _PLAYER_NOTICES.get(effect.reason))
    if isinstance(effect, Recovered):
        return ("recovered: paused, hold cube to resume" if effect.paused
                else "recovered after an outage")
    if isinstance(effect, OvertimeGiven):
        return f"flag: overtime +{format_countdown(effect.amount)}"
    if isinstance(effect, DiceRolled) and effect.turn == 0:
        return "opening " + ("die " if len(effect.dice) == 1 else "roll ") + \
            "-".join(map(str, effect.dice))
    if isinstance(effect, DiceRolled) and effect.early:
        return "early roll: logged"
    if isinstance(effect, Warned):
        return _short(f"warning: {effect.text}")
    if isinstance(effect, ChallengeDecided):
        return "challenge " + ("upheld" if effect.upheld else f"rejected ({effect.rejected})")
    if isinstance(effect, Undone):
        return "arbiter: undo"
    if isinstance(effect, ReserveChanged):
        return "arbiter: time changed"
    if isinstance(effect, ScoreChanged):
        return "arbiter: score changed"
    if isinstance(effect, CubeSet):
        return "arbiter: cube set"
    return None

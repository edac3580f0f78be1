"""The transient texts a panel lays over its screen for an effect (pure: no PIL, no device).

`notice_for` decides which effects the players are told about and in what words; the presenter
decides how long a notice stays (`presenters.NOTICE_NS`). A notice is a `texts.Text`: English, and
said in the panel's language by `panel_view` (the words of both are in `texts.py`).

`opening_dice` keeps what the effects tell of the opening roll, which the match state does not
keep (it holds the last message only): the panels draw it as dice, each with whose it is, so an
opening roll needs no notice.
"""

from __future__ import annotations

from gammonclock.core.effects import (
    ChallengeDecided,
    CubeSet,
    DiceRolled,
    Effect,
    GameEnded,
    GameStarted,
    Ignored,
    OvertimeGiven,
    Recovered,
    Refused,
    ReserveChanged,
    RollVoided,
    ScoreChanged,
    Shown,
    TurnStarted,
    Undone,
    Warned,
)
from gammonclock.core.reasons import Reason
from gammonclock.durations import NS_PER_S

from .glyphs import TINY
from .texts import Text
from .views import INFO_PAGE, INNER_W, format_countdown

_NOTICE_CHARS = 2 * TINY.chars(INNER_W - 4)    # two lines in the notice box

# While records cannot be written (a full, failing or read-only card), both panels say so for as
# long as it lasts; the log names the file and the cause, which a player cannot act on.
JOURNAL_ALERT = Text("alert.journal")


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
    Reason.DOUBLE_NO_CUBE: Text("refused.no_cube"),
    Reason.DOUBLE_CRAWFORD: Text("refused.crawford"),
    Reason.DOUBLE_NOT_OWNER: Text("refused.not_owner"),
    Reason.DOUBLE_FIRST_TURN: Text("refused.first_turn"),
    Reason.DOUBLE_AFTER_ROLL: Text("refused.after_roll"),
    Reason.BREAK_BLITZ: Text("refused.blitz"),
    Reason.BREAK_FIRST_GAME: Text("refused.first_game"),
    Reason.BREAK_SHARED_TAKEN: Text("refused.shared_taken"),
    Reason.BREAK_NONE_LEFT: Text("refused.none_left"),
    Reason.BREAK_TOO_EARLY: Text("refused.too_early"),
    Reason.TAKE_HINT: Text("hint.take"),
}

# The arbiter at the panels (SPEC §13.4): everyone at the table learns what came of a chord (the
# PIN's dots and the menu's steps are the arbiter's screens themselves, not notices).
_ARBITER_MODE_NOTICES: dict[Reason, str] = {
    Reason.PIN_WRONG: Text("notice.pin_wrong"),
    Reason.PIN_TIMEOUT: Text("notice.pin_timeout"),
    Reason.CHORD_LOCKED: Text("notice.chord_locked"),
    Reason.MENU_TIMEOUT: Text("notice.menu_closed"),
    Reason.NEXT_MATCH_REQUESTED: Text("notice.next_match"),
    Reason.CONTINUE_STICK_REQUESTED: Text("notice.continue_stick"),
    Reason.PROVISION_REQUESTED: Text("notice.provision_stick"),
}

# The ignored taps the player is told about, and how; the rest (the match is over, the dice
# reader's) need no word.
_IGNORED_NOTICES: dict[Reason, str] = {
    Reason.OUT_OF_TURN: Text("ignored.out_of_turn"),
    Reason.WHITE_STARTS: Text("ignored.white_starts"),
    Reason.DOUBLER_WAITS: Text("ignored.doubler_waits"),
    Reason.PAUSED: Text("ignored.paused"),
    Reason.NOT_BREAK_TAKER: Text("ignored.not_break_taker"),
}


def _silent(kind: type) -> bool:
    """Whether `notice_for` says nothing of any effect of this type (none of its cases is it)."""
    silent = _SILENT.get(kind)
    if silent is None:
        silent = _SILENT[kind] = not issubclass(kind, (
            Refused, Shown, Ignored, Recovered, OvertimeGiven, DiceRolled, Warned,
            ChallengeDecided)) and kind not in _ARBITER_NOTICES
    return silent


_SILENT: dict[type, bool] = {}


def notice_for(effect: Effect) -> str | None:
    """A short transient text for the effects the players need told, else None.

    Decided from the effect's type, its `Reason` and its typed fields, never from its text.
    Refusals of an arbiter's command are the arbiter's business (their console shows them); a
    player's refused double or break shows why. One made by hand, without a reason code, shows
    the engine's English words.
    """
    if _silent(type(effect)):               # most effects (a turn ended, one started): at once
        return None
    return _notice(effect)


def _notice(effect: Effect) -> str | None:
    """`notice_for` without its shortcut for the types it never speaks of (`_silent` must list
    every type a case below speaks of: a test builds each effect type and holds them to it)."""
    if isinstance(effect, Shown) and effect.reason is Reason.CHORD_LOCKED:
        return _chord_locked(effect)
    if isinstance(effect, (Refused, Shown)) and effect.reason in _ARBITER_MODE_NOTICES:
        return _ARBITER_MODE_NOTICES[effect.reason]
    if isinstance(effect, Refused):       # one without a code (made by hand): its text, cut
        return _short(effect.why) if effect.reason is None else _PLAYER_NOTICES.get(effect.reason)
    if isinstance(effect, Ignored):
        return None if effect.reason is None else _IGNORED_NOTICES.get(effect.reason)
    if isinstance(effect, Shown):
        return INFO_PAGE if effect.reason is Reason.INFO_PAGE else (
            None if effect.reason is None else _PLAYER_NOTICES.get(effect.reason))
    if isinstance(effect, Recovered):
        return Text("notice.recovered_paused" if effect.paused else "notice.recovered")
    if isinstance(effect, OvertimeGiven):
        return Text("notice.overtime", time=format_countdown(effect.amount))
    if isinstance(effect, DiceRolled) and effect.early:
        return Text("notice.early_roll")
    if isinstance(effect, Warned):          # the arbiter's words as typed, after "warning:"
        return Text("notice.warning", fit=_short, text=effect.text)
    if isinstance(effect, ChallengeDecided):
        return (Text("notice.challenge_upheld") if effect.upheld
                else Text("notice.challenge_rejected", n=effect.rejected))
    return _ARBITER_NOTICES.get(type(effect))


def _chord_locked(shown: Shown) -> str:
    """A chord during a lockout, undone (SPEC §13.4): how long the lockout still lasts, in
    whole seconds rounded up (it is still locked at the second shown); without that fact (an
    effect made by hand), that it is locked."""
    left = dict(shown.facts).get("left_ns")
    if not isinstance(left, int):
        return _ARBITER_MODE_NOTICES[Reason.CHORD_LOCKED]
    return Text("notice.chord_locked_for", time=format_countdown(-(-left // NS_PER_S) * NS_PER_S))


# What the arbiter changed, said on the panels (the arbiter's console says how).
_ARBITER_NOTICES: dict[type[Effect], str] = {
    Undone: Text("notice.undo"),
    ReserveChanged: Text("notice.time_changed"),
    ScoreChanged: Text("notice.score_changed"),
    CubeSet: Text("notice.cube_set"),
}


# --- the opening roll --------------------------------------------------------------------------

def opening_dice(dice: tuple[int, ...], effects: list[Effect]) -> tuple[int, ...]:
    """The opening roll shown after `effects`, given the one shown before (`dice`), in the order
    read: white's die first (SPEC §8). One die at a time gathers up to two, and a third starts
    the roll again; two dice at once are the whole roll; a void strikes the die or roll it names.
    It stands while the game it opens plays its first move (a backgammon opener plays it), and
    lapses at the next turn or when the game or match ends."""
    for effect in effects:
        if isinstance(effect, DiceRolled):
            if effect.turn == 0:
                dice = (effect.dice if len(effect.dice) == 2 or len(dice) >= 2
                        else dice + effect.dice)
        elif isinstance(effect, RollVoided):
            if dice[-len(effect.dice):] == effect.dice:
                dice = dice[:-len(effect.dice)]
        elif not dice:
            continue                # nothing shown to lapse (most presses: no dice reader)
        elif isinstance(effect, GameEnded) or (isinstance(effect, TurnStarted)
                                               and not _opens_a_game(effects, effect)):
            dice = ()
    return dice


def _opens_a_game(effects: list[Effect], started: TurnStarted) -> bool:
    """Whether `started` is the first turn of a game (a game start among the same effects)."""
    return any(isinstance(e, GameStarted) and e.t == started.t for e in effects)

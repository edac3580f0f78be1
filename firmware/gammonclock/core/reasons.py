"""Why the engine ignored an input, refused an action or showed a page, as a stable code.

Every `Ignored`, `Refused` and `Shown` effect carries a `Reason`; the journal records its value
(the effect's `"reason"` key). The panels, the export and the hall decide from the code, never
from the effect's text, which is for people and may be reworded. The values are part of the
journal format: a new case gets a new member; a value is never renamed or reused.
"""

from __future__ import annotations

from enum import Enum


class Reason(str, Enum):
    # --- any input ---
    MATCH_OVER = "match_over"                    # the match is over (a tap, a roll, a command)

    # --- a clock or cube tap that does nothing (Ignored) ---
    OUT_OF_TURN = "out_of_turn"                  # the side whose clock is not running tapped
    WHITE_STARTS = "white_starts"                # longgammon: white tapped; black starts a game
    DOUBLER_WAITS = "doubler_waits"              # the doubler tapped before the answer
    PAUSED = "paused"                            # a tap while paused (a cube hold resumes)
    NOT_BREAK_TAKER = "not_break_taker"          # only the break's taker ends it

    # --- pages and hints that change nothing (Shown) ---
    INFO_PAGE = "info_page"                      # cube tap between games: score, breaks, clocks
    TAKE_HINT = "take_hint"                      # cube tap on an offered double: how to take

    # --- a player's double (Refused; `rules.double_refusal`) ---
    DOUBLE_NO_CUBE = "double_no_cube"            # the match is played without a cube
    DOUBLE_CRAWFORD = "double_crawford"          # no doubling in the Crawford game
    DOUBLE_NOT_OWNER = "double_not_owner"        # the opponent owns the cube
    DOUBLE_FIRST_TURN = "double_first_turn"      # backgammon: the opening roll is played
    DOUBLE_AFTER_ROLL = "double_after_roll"      # the dice are already rolled this turn

    # --- a player's break (Refused) ---
    BREAK_BLITZ = "break_blitz"                  # blitz disciplines have no breaks
    BREAK_FIRST_GAME = "break_first_game"        # breaks only after the first game
    BREAK_NONE_LEFT = "break_none_left"          # the player's breaks are used up
    BREAK_SHARED_TAKEN = "break_shared_taken"    # sprintgammon: the match's one break is taken
    BREAK_TOO_EARLY = "break_too_early"          # sprintgammon: before 45:00 of match time

    # --- an arbiter's command (Refused; the arbiter's console shows these) ---
    NO_CLOCK_RUNNING = "no_clock_running"        # pause: no clock is running
    NOT_PAUSED = "not_paused"                    # resume: the clock is not paused
    DEDUCT_OVER_HALF = "deduct_over_half"        # deduct: more than half the shown reserve
    FORFEIT_IN_BREAK = "forfeit_in_break"        # forfeit: not during a break
    SCORE_AT_LENGTH = "score_at_length"          # score: a score must stay below the length
    SCORE_HALF_POINT = "score_half_point"        # score: half points only in longgammon
    CUBE_NOT_IN_GAME = "cube_not_in_game"        # cube: no cube in this game (none, Crawford)
    CUBE_DOUBLE_OFFERED = "cube_double_offered"  # cube: not while a double is offered
    CUBE_IN_BREAK = "cube_in_break"              # cube: not during a break
    CUBE_NO_OWNER = "cube_no_owner"              # cube: a value above 1 needs an owner
    UNDO_MATCH_LOST = "undo_match_lost"          # undo: the match was lost on flag, DQ, challenges
    UNDO_NOTHING = "undo_nothing"                # undo: no player action to take back
    UNDO_MATCH_MOVED = "undo_match_moved"        # undo: the match went on on another clock
    UNDO_PAST_ARBITER = "undo_past_arbiter"      # undo: the arbiter ended the match after it
    NO_BREAK = "no_break"                        # end-break: no break is being taken

    # --- the arbiter at the panels (SPEC §13.4) ---
    CHORD_LOCKED = "chord_locked"                # Shown: the chord, locked after 3 bad PINs
    CHORD_HELD = "chord_held"                    # Ignored: a tap before the chord is released
    PIN_ENTRY = "pin_entry"                      # Shown: the chord recognised, or released
    PIN_DOT = "pin_dot"                          # Shown: a PIN tap (a dot, never the button)
    PIN_WRONG = "pin_wrong"                      # Refused: a wrong PIN; play resumes, charged
    PIN_TIMEOUT = "pin_timeout"                  # Refused: no PIN within 30 s; likewise
    ARBITER_MENU = "arbiter_menu"                # Shown: the arbiter's menu, a step of it
    MENU_TIMEOUT = "menu_timeout"                # Shown: 120 s without a press: menu closed
    NEXT_MATCH_REQUESTED = "next_match_requested"  # Shown: the device loads its match file
    # A continuation a USB stick offers (SPEC §13.5, §14.1): the stick's journal, verified and
    # held by the device, is only offered; the arbiter takes it at the menu after the PIN.
    STICK_OFFERED = "stick_offered"              # Shown: a stick offers a match (or no more)
    STICK_OFFER_ENDED = "stick_offer_ended"      # Shown: a game started here: the offer ends
    CONTINUE_STICK_REQUESTED = "continue_stick_requested"  # Shown: the device continues it
    # A provisioning stick (issue 32): its table and hall, held by the device, only offered.
    PROVISION_OFFERED = "provision_offered"      # Shown: a stick offers them (or no more)
    PROVISION_REQUESTED = "provision_requested"  # Shown: the device takes them
    # A match continued on this clock (SPEC §13.5, §14.1): the arbiter at these panels is this
    # clock's from here on (its PIN, or none), no longer the old clock's.
    ARBITER_HANDED_OVER = "arbiter_handed_over"  # Shown: the hand-over's arbiter

    # --- the table's lifecycle (SPEC §13.2; answers only, never in a match's journal) ---
    NO_MATCH = "no_match"                        # a command or a roll while no match is loaded
    MATCH_IN_PROGRESS = "match_in_progress"      # new-match: a match is being played
    MATCH_FILE_BAD = "match_file_bad"            # new-match: the match file has problems
    JOURNAL_NOT_WRITTEN = "journal_not_written"  # new-match: the card does not take the records
    NOTHING_OFFERED = "nothing_offered"          # the menu's stick item: no offer held here

    # --- the dice reader (Ignored) ---
    VOID_NO_ROLL = "void_no_roll"                # a void with no roll to void
    DICE_DROPPED = "dice_dropped"                # lines faster than dice are rolled, dropped


# The refusals that answer an arbiter's command: the arbiter's console shows them, the players'
# panels do not. Every other refusal answers a player's own button (a double, a break).
ARBITER_REFUSALS = frozenset({
    Reason.MATCH_OVER, Reason.NO_CLOCK_RUNNING, Reason.NOT_PAUSED, Reason.DEDUCT_OVER_HALF,
    Reason.FORFEIT_IN_BREAK, Reason.SCORE_AT_LENGTH, Reason.SCORE_HALF_POINT,
    Reason.CUBE_NOT_IN_GAME, Reason.CUBE_DOUBLE_OFFERED, Reason.CUBE_IN_BREAK,
    Reason.CUBE_NO_OWNER, Reason.UNDO_MATCH_LOST, Reason.UNDO_NOTHING, Reason.UNDO_PAST_ARBITER,
    Reason.NO_BREAK, Reason.UNDO_MATCH_MOVED,
    Reason.NO_MATCH, Reason.MATCH_IN_PROGRESS, Reason.MATCH_FILE_BAD, Reason.JOURNAL_NOT_WRITTEN,
})

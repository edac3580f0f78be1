"""Reasons and effect kinds as data (issue 8): every ignored input, refusal and page carries a
stable `Reason` code that the journal records and the panels decide from; every effect states its
journal `kind`; no code under firmware/ decides anything from message text or finds a handler
by building its name."""

from __future__ import annotations

import ast
import re
import typing
from fractions import Fraction
from pathlib import Path

import pytest

from gammonclock.core.arbiter import parse_command
from gammonclock.core.dice import parse_line
from gammonclock.core.effects import (
    AnyEffect,
    ArbiterCommand,
    Effect,
    Ignored,
    Refused,
    Shown,
    as_any,
)
from gammonclock.core.engine import ButtonEdge, Engine, PinKey, PinKeyKind
from gammonclock.core.match import (
    ArbiterAction,
    ArbiterHandover,
    DiceDropped,
    DiceEvent,
    ProvisionOffered,
    Recover,
    StickOffered,
)
from gammonclock.core.match_state import ProvisionOffer, StickOffer
from gammonclock.core.pin import PinCheck, make_hash
from gammonclock.core.reasons import ARBITER_REFUSALS, Reason
from gammonclock.core.rules import MatchRules, json_points
from gammonclock.export import text as export_text
from gammonclock.hardware.screens import INFO_PAGE, notice_for
from gammonclock.journal import inputs as journal_inputs
from gammonclock.sides import Button, Pair
from play_helpers import play

FIRMWARE = Path(__file__).resolve().parents[2] / "firmware" / "gammonclock"

# --- the codes are stable: renaming or re-valuing a member breaks the journal format ----------

REASON_CODES = {
    "MATCH_OVER": "match_over",
    "OUT_OF_TURN": "out_of_turn",
    "WHITE_STARTS": "white_starts",
    "DOUBLER_WAITS": "doubler_waits",
    "PAUSED": "paused",
    "NOT_BREAK_TAKER": "not_break_taker",
    "INFO_PAGE": "info_page",
    "TAKE_HINT": "take_hint",
    "DOUBLE_NO_CUBE": "double_no_cube",
    "DOUBLE_CRAWFORD": "double_crawford",
    "DOUBLE_NOT_OWNER": "double_not_owner",
    "DOUBLE_FIRST_TURN": "double_first_turn",
    "DOUBLE_AFTER_ROLL": "double_after_roll",
    "BREAK_BLITZ": "break_blitz",
    "BREAK_FIRST_GAME": "break_first_game",
    "BREAK_NONE_LEFT": "break_none_left",
    "BREAK_SHARED_TAKEN": "break_shared_taken",
    "BREAK_TOO_EARLY": "break_too_early",
    "NO_CLOCK_RUNNING": "no_clock_running",
    "NOT_PAUSED": "not_paused",
    "DEDUCT_OVER_HALF": "deduct_over_half",
    "FORFEIT_IN_BREAK": "forfeit_in_break",
    "SCORE_AT_LENGTH": "score_at_length",
    "SCORE_HALF_POINT": "score_half_point",
    "CUBE_NOT_IN_GAME": "cube_not_in_game",
    "CUBE_DOUBLE_OFFERED": "cube_double_offered",
    "CUBE_IN_BREAK": "cube_in_break",
    "CUBE_NO_OWNER": "cube_no_owner",
    "UNDO_MATCH_LOST": "undo_match_lost",
    "UNDO_NOTHING": "undo_nothing",
    "UNDO_PAST_ARBITER": "undo_past_arbiter",
    "UNDO_MATCH_MOVED": "undo_match_moved",
    "VOID_NO_ROLL": "void_no_roll",
    "DICE_DROPPED": "dice_dropped",
    "NO_MATCH": "no_match",
    "MATCH_IN_PROGRESS": "match_in_progress",
    "MATCH_FILE_BAD": "match_file_bad",
    "JOURNAL_NOT_WRITTEN": "journal_not_written",
    "NO_BREAK": "no_break",
    "CHORD_LOCKED": "chord_locked",
    "CHORD_HELD": "chord_held",
    "PIN_ENTRY": "pin_entry",
    "PIN_DOT": "pin_dot",
    "PIN_WRONG": "pin_wrong",
    "PIN_TIMEOUT": "pin_timeout",
    "ARBITER_MENU": "arbiter_menu",
    "MENU_TIMEOUT": "menu_timeout",
    "NEXT_MATCH_REQUESTED": "next_match_requested",
    "STICK_OFFERED": "stick_offered",
    "STICK_OFFER_ENDED": "stick_offer_ended",
    "CONTINUE_STICK_REQUESTED": "continue_stick_requested",
    "PROVISION_OFFERED": "provision_offered",
    "PROVISION_REQUESTED": "provision_requested",
    "ARBITER_HANDED_OVER": "arbiter_handed_over",
    "NOTHING_OFFERED": "nothing_offered",
}

# The journal's `kind` of every effect, as journals written before issue 8 have them.
EFFECT_KINDS = {
    "GameStarted": "game_started",
    "TurnStarted": "turn_started",
    "TurnEnded": "turn_ended",
    "DoubleOffered": "double_offered",
    "DoubleTaken": "double_taken",
    "ResultEntryStarted": "result_entry_started",
    "ResultProposed": "result_proposed",
    "ResultEntryCancelled": "result_entry_cancelled",
    "GameEnded": "game_ended",
    "MatchEnded": "match_ended",
    "FlagFell": "flag_fell",
    "OvertimeGiven": "overtime_given",
    "Paused": "paused",
    "Resumed": "resumed",
    "Recovered": "recovered",
    "BreakStarted": "break_started",
    "BreakOverrun": "break_overrun",
    "BreakEnded": "break_ended",
    "ArbiterCommand": "arbiter_command",
    "ReserveChanged": "reserve_changed",
    "ScoreChanged": "score_changed",
    "CubeSet": "cube_set",
    "Warned": "warned",
    "ChallengeDecided": "challenge_decided",
    "DiceRolled": "dice_rolled",
    "RollVoided": "roll_voided",
    "Rewound": "rewound",
    "Undone": "undone",
    "Ignored": "ignored",
    "Refused": "refused",
    "Shown": "shown",
}


def test_reason_codes_are_the_documented_ones_and_unique():
    # `__members__` keeps aliases: a member given another's value would show up here.
    assert {name: m.value for name, m in Reason.__members__.items()} == REASON_CODES
    assert len(set(REASON_CODES.values())) == len(REASON_CODES)
    assert all(re.fullmatch(r"[a-z]+(_[a-z]+)*", code) for code in REASON_CODES.values())


def _effect_classes() -> list[type[Effect]]:
    found, todo = [], list(Effect.__subclasses__())
    while todo:
        cls = todo.pop()
        found.append(cls)
        todo += cls.__subclasses__()
    return found


def test_effect_kinds_are_explicit_the_journals_ones_and_unique():
    classes = _effect_classes()
    assert {cls.__name__: cls.kind for cls in classes} == EFFECT_KINDS
    assert all("kind" in vars(cls) for cls in classes)       # stated, not inherited
    assert len({cls.kind for cls in classes}) == len(classes)
    # The union the exhaustive matches run over holds every effect there is.
    assert set(typing.get_args(AnyEffect)) == set(classes)


def test_an_effect_without_a_kind_is_refused_at_once():
    with pytest.raises(TypeError, match="NoKind states no `kind`"):
        type("NoKind", (Effect,), {})


# --- every reason is emitted, and is what the panels decide from -----------------------------

GAME_2 = "0 tap left\n5 hold left\n8 tap right\n10 hold left\n"   # game 1 played; a break at 10
OVER = "0 tap left\n1 arbiter disqualify left\n"
ROLL = "0 tap left\n5 tap right\n"                                 # left's clock runs

# (reason, effect, script, MatchRules.defaults overrides, the notice the panels show)
EMITTED = [
    (Reason.MATCH_OVER, Ignored, OVER + "2 tap right\n3 end", {}, None),
    (Reason.MATCH_OVER, Refused, OVER + "2 arbiter pause\n3 end", {}, None),
    (Reason.MATCH_OVER, Ignored, OVER + "2 roll 3 1\n3 end", {}, None),
    (Reason.OUT_OF_TURN, Ignored, "0 tap left\n5 tap left\n6 end", {},
     "out of turn: not your clock"),
    (Reason.WHITE_STARTS, Ignored,
     "0 tap left\n5 tap right\n10 hold left\n13 tap right\n20 tap left\n21 end",
     {"discipline": "longgammon"}, "white starts: black presses"),
    (Reason.DOUBLER_WAITS, Ignored, ROLL + "10 tap cube\n11 tap left\n12 end", {},
     "waiting for take or pass"),
    (Reason.PAUSED, Ignored, "0 tap left\n5 hold cube\n10 tap left\n11 end", {},
     "paused: hold cube to resume"),
    (Reason.NOT_BREAK_TAKER, Ignored, GAME_2 + "20 tap right\n21 end", {},
     "break: its taker ends it"),
    (Reason.INFO_PAGE, Shown, "0 tap left\n5 hold left\n8 tap right\n20 tap cube\n21 end", {},
     INFO_PAGE),
    (Reason.TAKE_HINT, Shown, ROLL + "10 tap cube\n11 tap cube\n12 end", {},
     "take: press your clock"),
    (Reason.DOUBLE_NO_CUBE, Refused, ROLL + "10 tap cube\n11 end", {"cube": False},
     "no doubling cube in this match"),
    (Reason.DOUBLE_CRAWFORD, Refused, ROLL + "10 tap cube\n11 end",
     {"start_score": Pair(Fraction(6), Fraction(0))}, "Crawford game: no doubling"),
    (Reason.DOUBLE_NOT_OWNER, Refused, ROLL + "10 tap cube\n12 tap right\n14 tap cube\n15 end",
     {}, "the cube belongs to the opponent"),
    (Reason.DOUBLE_FIRST_TURN, Refused, "0 tap left\n5 tap cube\n6 end", {},
     "no double on the first turn"),
    (Reason.DOUBLE_AFTER_ROLL, Refused, ROLL + "8 roll 3 1\n10 tap cube\n11 end", {},
     "the dice are already rolled this turn"),
    (Reason.BREAK_BLITZ, Refused, GAME_2 + "20 end", {"discipline": "backgammon_blitz"},
     "no breaks in blitz"),
    (Reason.BREAK_FIRST_GAME, Refused, "0 hold left\n5 end", {},
     "breaks only after the first game"),
    (Reason.BREAK_NONE_LEFT, Refused, GAME_2 + "20 end", {"breaks_per_player": 0},
     "no breaks left"),
    (Reason.BREAK_SHARED_TAKEN, Refused, GAME_2 + "20 end",
     {"discipline": "sprintgammon", "breaks_per_player": 0}, "the match's break is taken"),
    (Reason.BREAK_TOO_EARLY, Refused, GAME_2 + "20 end", {"discipline": "sprintgammon"},
     "break allowed from 45:00 of match time"),
    (Reason.NO_CLOCK_RUNNING, Refused, "0 arbiter pause\n1 end", {}, None),
    (Reason.NOT_PAUSED, Refused, "0 arbiter resume\n1 end", {}, None),
    (Reason.DEDUCT_OVER_HALF, Refused, "0 tap left\n1 arbiter deduct left 20m\n2 end", {}, None),
    (Reason.FORFEIT_IN_BREAK, Refused, GAME_2 + "15 arbiter forfeit left\n16 end", {}, None),
    (Reason.SCORE_AT_LENGTH, Refused, "0 arbiter score 7 0\n1 end", {}, None),
    (Reason.SCORE_HALF_POINT, Refused, "0 arbiter score 1.5 0\n1 end", {}, None),
    (Reason.CUBE_NOT_IN_GAME, Refused, "0 arbiter cube 2 left\n1 end", {"cube": False}, None),
    (Reason.CUBE_DOUBLE_OFFERED, Refused, ROLL + "10 tap cube\n11 arbiter cube 2 left\n12 end",
     {}, None),
    (Reason.CUBE_IN_BREAK, Refused, GAME_2 + "15 arbiter cube 2 left\n16 end", {}, None),
    (Reason.CUBE_NO_OWNER, Refused, "0 arbiter cube 2\n1 end", {}, None),
    (Reason.UNDO_MATCH_LOST, Refused, OVER + "2 arbiter undo\n3 end", {}, None),
    (Reason.UNDO_NOTHING, Refused, "0 arbiter undo\n1 end", {}, None),
    (Reason.UNDO_PAST_ARBITER, Refused, "0 tap left\n1 arbiter forfeit left\n2 arbiter undo\n3 end",
     {"length": 1}, None),
    (Reason.UNDO_MATCH_MOVED, Refused, "0 tap left\n1 arbiter moved table-9\n2 arbiter undo\n"
     "3 end", {}, None),
    (Reason.VOID_NO_ROLL, Ignored, "0 void\n1 end", {}, None),
    (Reason.NO_BREAK, Refused, "0 arbiter end-break\n1 end", {}, None),
]


def _inert_ones(effects: list[Effect]) -> list[Effect]:
    return [e for e in effects if isinstance(e, (Ignored, Refused, Shown))]


@pytest.mark.parametrize(("reason", "kind", "script", "overrides", "notice"), EMITTED,
                         ids=[f"{row[0].value}-{row[1].kind}-{i}" for i, row in enumerate(EMITTED)])
def test_the_engine_emits_each_reason_and_the_panels_decide_from_it(
        reason, kind, script, overrides, notice):
    p = play(script, **overrides)
    [effect] = _inert_ones(p.surviving())
    assert type(effect) is kind and effect.reason is reason
    assert effect.as_dict()["reason"] == reason.value          # the journal records the code
    assert notice_for(effect) == notice
    if kind is Refused:
        # The arbiter's console, not the players' panels, hears of an arbiter's refused command.
        before = p.surviving()[p.surviving().index(effect) - 1]
        assert (reason in ARBITER_REFUSALS) == isinstance(before, ArbiterCommand)


def test_dropped_dice_lines_are_ignored_with_their_reason():
    engine = Engine.start(MatchRules.defaults())
    _, effects = engine.feed(DiceDropped(1_000, 7))
    [effect] = effects
    assert isinstance(effect, Ignored) and effect.reason is Reason.DICE_DROPPED
    assert notice_for(effect) is None


# The lifecycle's reasons answer the arbiter's socket, never a match's journal: their tests are
# in test_lifecycle.py.
LIFECYCLE_REASONS = {Reason.NO_MATCH, Reason.MATCH_IN_PROGRESS, Reason.MATCH_FILE_BAD,
                     Reason.JOURNAL_NOT_WRITTEN, Reason.NOTHING_OFFERED}


# The arbiter at the panels (SPEC §13.4) says several in a row: their tests are in
# test_arbiter_mode*.py.
PANEL_REASONS = {Reason.CHORD_LOCKED, Reason.CHORD_HELD, Reason.PIN_ENTRY, Reason.PIN_DOT,
                 Reason.PIN_WRONG, Reason.PIN_TIMEOUT, Reason.ARBITER_MENU, Reason.MENU_TIMEOUT,
                 Reason.NEXT_MATCH_REQUESTED, Reason.STICK_OFFERED, Reason.STICK_OFFER_ENDED,
                 Reason.CONTINUE_STICK_REQUESTED, Reason.ARBITER_HANDED_OVER,
                 Reason.PROVISION_OFFERED, Reason.PROVISION_REQUESTED}


def test_every_reason_is_emitted_somewhere():
    emitted = ({row[0] for row in EMITTED} | {Reason.DICE_DROPPED} | LIFECYCLE_REASONS
               | PANEL_REASONS)
    assert emitted == set(Reason)


# --- no decision from message text; no handler found by its name -----------------------------

# Attributes that hold text for people (an effect's `why`, `what`, `text`), and `describe()`.
TEXT_ATTRS = {"why", "what", "text"}
# `.text` that is not a message: the config file's own text, compared to pick its journal.
NOT_MESSAGES = {"config.text"}
STRING_TESTS = {"startswith", "endswith", "find", "rfind", "index", "rindex", "count", "split",
                "rsplit", "partition", "rpartition", "removeprefix", "removesuffix", "lower",
                "upper", "casefold", "strip", "lstrip", "rstrip", "__contains__", "__eq__"}


def _is_text(node: ast.AST, aliases: set[str] | frozenset[str] = frozenset()) -> bool:
    if isinstance(node, ast.Attribute) and node.attr in TEXT_ATTRS:
        return ast.unparse(node) not in NOT_MESSAGES
    if isinstance(node, ast.Name):
        return node.id in aliases
    return (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
            and node.func.attr == "describe")


def text_decisions(source: str) -> list[str]:
    """Where `source` compares message text, runs a string test on it, looks it up in a table,
    matches on it or hands it to `re` (directly, or through a name it was assigned to)."""
    tree = ast.parse(source)
    aliases = {target.id for node in ast.walk(tree) if isinstance(node, ast.Assign)
               and _is_text(node.value) for target in node.targets
               if isinstance(target, ast.Name)}
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            suspects = [node.left, *node.comparators]
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            suspects = [node.func.value] if node.func.attr in STRING_TESTS else []
            if isinstance(node.func.value, ast.Name) and node.func.value.id == "re":
                suspects += node.args
        elif isinstance(node, ast.Subscript):
            suspects = [node.slice]
        elif isinstance(node, ast.Match):
            suspects = [node.subject]
        else:
            suspects = []
        found += [f"line {node.lineno}: {ast.unparse(node)}" for s in suspects
                  if _is_text(s, aliases)]
    return found


@pytest.mark.parametrize("source", [
    'if effect.why.startswith("out of turn"): pass',
    'x = "plays white" in e.why',
    'ok = effect.what == "undo"',
    'notice = TABLE[effect.text]',
    'hit = re.search("break", effect.why)',
    'a = e.describe().endswith("void")',
    'match e.why:\n    case "paused": pass',
    'why = effect.why\nif why == "paused": pass',
])
def test_the_text_check_sees_decisions_from_text(source):
    assert text_decisions(source)


def test_the_text_check_lets_text_for_people_through():
    source = ('notice = _short(effect.why)\nline = f"{e.what}: {e.why}"\n'
              'same = head.config == config.text\nx = effect.reason is Reason.PAUSED')
    assert text_decisions(source) == []


def test_no_code_under_firmware_decides_from_message_text():
    found = [f"{path.relative_to(FIRMWARE)} {hit}" for path in sorted(FIRMWARE.rglob("*.py"))
             for hit in text_decisions(path.read_text())]
    assert found == []


def built_lookups(source: str) -> list[str]:
    """Where `source` looks an attribute up by a name it builds (`"on_" + kind`, an f-string)."""
    return [f"line {node.lineno}: {ast.unparse(node)}" for node in ast.walk(ast.parse(source))
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
            and node.func.id in ("getattr", "hasattr") and len(node.args) >= 2
            and isinstance(node.args[1], (ast.BinOp, ast.JoinedStr, ast.Call))]


def test_the_lookup_check_sees_built_names():
    assert built_lookups('h = getattr(self, "on_" + e.kind, None)')
    assert built_lookups('h = getattr(self, f"arbiter_{name}")')
    assert built_lookups('h = getattr(self, "arbiter_" + type(c).__name__.lower())')
    assert not built_lookups("v = getattr(self, f.name)")


def test_no_handler_is_found_by_building_its_name():
    found = [f"{path.relative_to(FIRMWARE)} {hit}" for path in sorted(FIRMWARE.rglob("*.py"))
             for hit in built_lookups(path.read_text())]
    assert found == []


def test_every_effect_is_one_the_exhaustive_matches_know():
    for cls in _effect_classes():
        assert isinstance(cls, type) and cls in typing.get_args(AnyEffect)
    with pytest.raises(AssertionError, match="not in AnyEffect"):
        as_any(Effect(0))


# --- the journal's inputs: one reader per type, and back ------------------------------------

INPUTS = [
    ButtonEdge(5, Button.CUBE, True),
    ArbiterAction(6, parse_command("deduct left 30s".split())),
    DiceEvent(7, parse_line("ROLL L 3 1")),
    DiceDropped(8, 12),
    Recover(9),
    PinKey(10, PinKeyKind.DOT),
    PinKey(11, PinKeyKind.END, "x" * 44),
    StickOffered(12, StickOffer("T3", "Anna", "Boris", 7, "6-0", "match-x.jsonl", 40,
                                "ab" * 32)),
    StickOffered(13, None),
    ProvisionOffered(16, ProvisionOffer("table-1", "192.168.1.10", "cd" * 32)),
    ProvisionOffered(17, None),
    ArbiterHandover(14, PinCheck(make_hash("LRCL", salt=b"s" * 16, pepper=b"p" * 32)),
                    4_000_000_000),
    ArbiterHandover(15, None, 3_000_000_000),
]


def test_each_journaled_input_type_has_its_reader():
    assert {journal_inputs.input_data(event)["type"] for event in INPUTS} == \
        set(journal_inputs.INPUT_TYPES)


@pytest.mark.parametrize("event", INPUTS, ids=lambda e: type(e).__name__)
def test_an_input_reads_back_as_it_was_journaled(event):
    assert journal_inputs.input_from(event.t, journal_inputs.input_data(event)) == event


# --- one Fraction-to-JSON ------------------------------------------------------------------

@pytest.mark.parametrize(("points", "expected"), [
    (Fraction(3), 3), (Fraction(0), 0), (Fraction(7, 2), 3.5), (Fraction(1, 2), 0.5)])
def test_points_as_json(points, expected):
    value = json_points(points)
    assert value == expected and type(value) is type(expected)


def test_points_have_one_json_form():
    assert export_text.points is json_points
    # The conversion is written once, in core/rules.py.
    written = [path.relative_to(FIRMWARE).as_posix() for path in FIRMWARE.rglob("*.py")
               if re.search(r"denominator == 1 else float\(", path.read_text())]
    assert written == ["core/rules.py"]


def test_every_refusal_a_player_meets_has_its_panel_words():
    from gammonclock.hardware.notices import _PLAYER_NOTICES

    player_refusals = {r for r in Reason if r.name.startswith(("DOUBLE_", "BREAK_"))}
    assert player_refusals | {Reason.TAKE_HINT} == set(_PLAYER_NOTICES)
    assert not player_refusals & ARBITER_REFUSALS

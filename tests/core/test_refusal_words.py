"""The engine's refusals, ignored presses and undos in the match's language (issue 25, SPEC §15):
each carries its code and the facts it names (a reserve, a length, a side, what was undone and
when), and words.py says it from them in English (the engine's own words, unchanged) and in
Russian, with no English word left but the command language; the replies say seconds to the
tenth, with Russian's decimal comma."""

from __future__ import annotations

import re
from fractions import Fraction

import pytest

from gammonclock import words
from gammonclock.core.effects import Ignored, Refused, TurnEnded, TurnEndReason, Undone
from gammonclock.core.reasons import Reason
from gammonclock.core.rules import GameResult, MatchRules, ResultKind
from gammonclock.runtime.arbiter_requests import refusal_text, said_lines
from gammonclock.sides import Side
from play_helpers import play

OPENING = """
0 tap left
+10 tap right
+10 tap left
"""   # right's clock runs from 20 s (12 s delay), turn 1

# What a Russian text may keep in Latin letters: the command language an arbiter types
# ("cube 2 left|right", "gammonclock arbiter new-match FILE"), and UTC.
COMMAND_WORDS = {"cube", "left", "right", "gammonclock", "arbiter", "new", "match", "FILE", "USB",
                 "deduct", "score", "undo", "s"}
LATIN = re.compile(r"[A-Za-z]+")


def latin_words(text: str) -> set[str]:
    """The words in Latin letters of a text, but its placeholders and the command language."""
    return set(LATIN.findall(re.sub(r"\{\w+\}", "", text))) - COMMAND_WORDS


def the(kind: type, script: str, rules: MatchRules | None = None) -> list:
    return [e for e in play(script, rules).surviving(kind)]


# --- refusals -----------------------------------------------------------------------------------

SCRIPTS = [
    # (script, rules, the Russian reply's words for the refusal)
    (OPENING + "30 arbiter deduct right 10m\n31 end", None,
     "deduct right 600s: больше половины оставшегося резерва (14:00,0)"),
    (OPENING + "30 arbiter score 7 0\n31 end", MatchRules.defaults("backgammon", 7),
     "score 7 0: счёт должен быть меньше длины матча (7)"),
    (OPENING + "30 arbiter disqualify left\n31 arbiter undo\n32 end", None,
     "undo: матч проигран (дисквалификация): отмена невозможна"),
    ("0 tap left\n5 tap cube\n6 end", None,
     "удвоение правого: на первом ходу удваивать нельзя: стартовый бросок уже сыгран"),
    (OPENING + "30 arbiter cube 2\n31 end", None,
     "cube 2: укажите владельца: cube 2 left|right"),
    ("0 arbiter pause\n1 end", None, "pause: часы не идут"),
    (OPENING + "30 arbiter undo\n30 arbiter undo\n30 arbiter undo\n30 arbiter undo\n31 end", None,
     "undo: нечего отменять"),
]


@pytest.mark.parametrize("script, rules, ru", SCRIPTS)
def test_a_refusal_is_said_in_russian_from_its_code_and_facts(script, rules, ru) -> None:
    refusals = the(Refused, script, rules)
    assert refusals, script
    assert refusal_text(refusals[-1:], "ru") == ru
    assert not latin_words(ru.split(": ", 1)[1]), ru
    # English is the engine's own words, made again from the facts by the catalogue
    for e in refusals:
        key = words.why_key(e.reason.value, e.facts)
        assert key is not None, e
        assert words.say(key, "en", **words.fact_args(e.facts, "en")) == e.why
        assert refusal_text([e], "en") == f"{e.what}: {e.why}"


def test_an_ignored_press_is_said_in_russian() -> None:
    ignored = the(Ignored, OPENING + "25 tap left\n26 end")
    assert [words.said(e, "ru") for e in ignored] == [
        "не принято нажатие левой кнопки: не в свою очередь: идут часы правого"]
    assert [e.describe() for e in ignored] == ["ignored tap left: out of turn: right's clock runs"]


@pytest.mark.parametrize("made, ru", [
    (lambda: Refused(0, "left's break", "break allowed from 45:00 of match time (now 12:03.5)",
             Reason.BREAK_TOO_EARLY, (("side", "left"), ("now", "12:03.5"))),
     "отказано перерыв левого: перерыв можно взять с 45:00 времени матча (сейчас 12:03,5)"),
    (lambda: Refused(0, "the arbiter's PIN", "wrong PIN (1 of 3 before a lockout)",
                     Reason.PIN_WRONG, (("failures", 1), ("of", 3))),
     "отказано ПИН-код судьи: неверный ПИН-код (1 из 3 до блокировки)"),
    (lambda: Refused(0, "the arbiter's PIN", "the power went before the PIN; the chord is "
                     "locked for 1:00.0", Reason.PIN_TIMEOUT,
                     (("locked", "1:00.0"), ("case", "outage"))),
     "отказано ПИН-код судьи: питание пропало до ввода ПИН-кода; вход судьи заблокирован на "
     "1:00,0"),
    (lambda: Refused(0, "pause", "no match is loaded: load one with `gammonclock arbiter "
                     "new-match FILE` (or a USB stick)", Reason.NO_MATCH,
                     (("case", "load_one"),)),
     "отказано pause: матч не загружен: загрузите его командой `gammonclock arbiter new-match "
     "FILE` (или с USB-флешки)"),
    (lambda: Ignored(0, "3 dice reader lines", "more than dice are rolled; dropped unread",
             Reason.DICE_DROPPED, (("count", 3),)),
     "не принято строк считывателя костей: 3: строк больше, чем бросков; отброшены "
     "непрочитанными"),
])
def test_refusals_of_the_panels_and_the_loop_in_russian(made, ru) -> None:
    effect = made()              # (made in the test: an effect with facts)
    assert words.said(effect, "ru") == ru
    assert words.said(effect, "en") == effect.describe()
    assert not latin_words(ru.replace("отказано pause", "")), ru


def test_a_refusal_recorded_without_its_facts_keeps_the_engines_words() -> None:
    """An export of a journal written before the facts: the English as recorded, not a
    placeholder missing."""
    old = Refused(0, "deduct left 600s", "more than half of the remaining 6:00.0",
                  Reason.DEDUCT_OVER_HALF)
    assert words.said(old, "ru") == ("отказано deduct left 600s: more than half of the "
                                     "remaining 6:00.0")


REFUSAL_KEYS = ("why.", "what.", "undo.", "e.undone")


@pytest.mark.parametrize("key", sorted(k for k in words.WORDS if k.startswith(REFUSAL_KEYS)))
def test_no_english_word_in_the_russian_of_a_refusal(key: str) -> None:
    assert not latin_words(words.WORDS[key].ru), (key, words.WORDS[key].ru)


def test_every_refusal_code_has_words() -> None:
    said = {k.split(".")[1] for k in words.WORDS if k.startswith("why.")}
    panels_only = {Reason.INFO_PAGE, Reason.TAKE_HINT, Reason.CHORD_LOCKED, Reason.PIN_ENTRY,
                   Reason.PIN_DOT, Reason.ARBITER_MENU, Reason.MENU_TIMEOUT,
                   Reason.NEXT_MATCH_REQUESTED, Reason.STICK_OFFERED,
                   Reason.STICK_OFFER_ENDED, Reason.CONTINUE_STICK_REQUESTED,
                   Reason.ARBITER_HANDED_OVER, Reason.PROVISION_OFFERED,
                   Reason.PROVISION_REQUESTED}   # Shown: pages
    assert {r.value for r in Reason} - {r.value for r in panels_only} <= said


# --- undo ---------------------------------------------------------------------------------------

def test_an_undone_switch_carries_its_fields_and_is_said_in_both_languages() -> None:
    (undone,) = the(Undone, OPENING + "30.5 tap right\n50 arbiter undo\n51 end")
    assert (undone.action, undone.side, undone.game, undone.made_at) == (
        "switch", Side.RIGHT, 1, 30_500_000_000)
    assert words.said(undone, "ru") == "отменено: нажатие часов правого (в 0:30,5 по времени матча)"
    assert undone.describe() == "undone: right's turn switch (at 0:30.5 match time)"
    assert words.said(undone, "en") == undone.describe()
    assert undone.as_dict()["action"] == "switch" and undone.as_dict()["side"] == "right"


def test_an_undone_double_and_start_in_russian() -> None:
    (double,) = the(Undone, OPENING + "30 tap right\n40 tap cube\n50 arbiter undo\n51 end")
    assert (double.action, double.side, double.value) == ("double", Side.LEFT, 2)
    assert words.said(double, "ru") == "отменено: удвоение левого до 2 (в 0:40,0 по времени матча)"
    (start,) = the(Undone, "3 tap left\n5 arbiter undo\n6 end")
    assert (start.action, start.side, start.game) == ("start", Side.LEFT, 1)
    assert words.said(start, "ru") == "отменено: начало партии 1 (в 0:03,0 по времени матча)"
    assert not latin_words(words.said(start, "ru")) and not latin_words(words.said(double, "ru"))


def test_an_undone_result_is_said_from_its_result() -> None:
    undone = Undone(0, "the result of game 3 (left wins gammon (4 points))", "result", Side.LEFT,
                    3, result=GameResult(Side.LEFT, ResultKind.GAMMON, Fraction(4)),
                    made_at=754_200_000_000)
    assert words.said(undone, "ru") == ("отменено: результат партии 3 (победил левый: гаммон "
                                        "(4 очка)) (в 12:34,2 по времени матча)")


# --- seconds for people -------------------------------------------------------------------------

def test_replies_say_seconds_to_the_tenth() -> None:
    ended = [e for e in the(TurnEnded, OPENING + "31.246302646 tap right\n32 end")
             if e.side is Side.RIGHT][-1]
    assert ended.span == 11_246_302_646
    assert said_lines([ended], "en") == [
        "right's turn ends (switch) after 11.2 s, charged 0 s, delay used 11.2 s"]
    assert said_lines([ended], "ru") == [
        "ход правого окончен (нажатие часов) через 11,2 с, списано 0 с, задержка 11,2 с"]
    assert "11.246302646 s" in ended.describe()          # the log and the report keep every ns


@pytest.mark.parametrize("ns, shown", [
    (0, "0"), (30_000_000_000, "30"), (1_246_302_646, "1.2"), (1_250_000_000, "1.3"),
    (49_999_999, "0"), (-500_000_000, "-0.5"), (59_960_000_000, "60")])
def test_rounded_seconds(ns: int, shown: str) -> None:
    assert words.rounded_seconds(ns) == shown


def test_a_turn_end_built_by_hand_is_rounded_too() -> None:
    ended = TurnEnded(0, Side.LEFT, TurnEndReason.SWITCH, 1_246_302_646, 0, 1_246_302_646, 0, 0)
    assert words.describe(ended, "ru", rounded=True) == (
        "ход левого окончен (нажатие часов) через 1,2 с, списано 1,2 с")


def test_every_line_of_a_russian_undo_reply_is_russian() -> None:
    played = play(OPENING + "30.246302646 tap right\n50 arbiter undo\n51 end")
    undo_at = max(i for i, e in enumerate(played.effects) if type(e).__name__ == "Rewound")
    lines = said_lines(played.effects[undo_at:], "ru")
    assert lines[0] == "отмена: возврат к 30,2 с"
    assert "ход правого окончен (нажатие часов) через 10,2 с, списано 0 с, задержка 10,2 с" \
        not in lines                                   # the switch is undone: not said again
    assert lines[-2:] == ["arbiter: undo",
                          "отменено: нажатие часов правого (в 0:30,2 по времени матча)"]
    for line in lines[:-2]:
        assert not latin_words(line), line

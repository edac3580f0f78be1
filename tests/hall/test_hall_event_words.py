"""A card's "Last events" in words (issue 32): what each event did, in the page's language
("arbiter: score set to 3-2", "судья: счёт изменён на 3-2"), not the journal's names
(`arbiter_command, score_changed`); every kind of effect the clock sends worded in English and
Russian by the arbiter's replies' catalogue; an effect the hall cannot read said "other event",
its name as text, cut short. Against a real Mosquitto, a real clock on mock pins, the real hall
and its page in headless Chromium."""

from __future__ import annotations

import json
import re
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

from export_helpers import CONFIG_11, eleven_point_script, play_journal
from gammonclock import words
from gammonclock.core import effects as fx
from gammonclock.core.reasons import Reason
from gammonclock.core.rules import EndReason, GameResult, ResultKind
from gammonclock.hall.events import EFFECTS, MAX_SAID_TEXT, effect_of, event_words
from gammonclock.sides import Button, Pair, Side
from hall_ru_helpers import shots
from hall_web_helpers import PAGE_WAIT_MS, P, RunningHall, event, open_page, publish, table_client
from mqtt_helpers import Broker
from table_helpers import Table, loaded_clock

CYRILLIC = re.compile("[а-яёА-ЯЁ]")
P2 = Pair(Fraction(3), Fraction(2))
WIN = GameResult(Side.LEFT, ResultKind.GAMMON, Fraction(2))

# An effect of every kind an 11-point match does not make, as the engine makes them.
MORE = [fx.OvertimeGiven(1, Side.LEFT, 30 * 10**9), fx.Paused(1, "cube"), fx.Resumed(1, "cube"),
        fx.Recovered(1, True), fx.BreakStarted(1, Side.RIGHT, 600 * 10**9, Pair(1, 0)),
        fx.BreakOverrun(1, Side.RIGHT), fx.BreakEnded(1, Side.RIGHT, 5 * 10**9),
        fx.ScoreChanged(1, P2, False), fx.ScoreChanged(1, P2, True, Side.LEFT),
        fx.CubeSet(1, 4, Side.RIGHT), fx.Warned(1, Side.LEFT, "slow play"),
        fx.ChallengeDecided(1, Side.LEFT, False, 1), fx.ChallengeDecided(1, Side.RIGHT, True, 0),
        fx.DiceRolled(1, Side.LEFT, (3, 5), 1, 2, True), fx.RollVoided(1, (3, 5)),
        fx.Rewound(1, 0, 5 * 10**9, "undo"),
        fx.Undone(1, "left's double to 2", "double", Side.LEFT, 1, 2, None, 10**9),
        fx.Ignored(1, "left tap", "not your turn", Reason.OUT_OF_TURN, (("side", "left"),)),
        fx.Refused(1, "double", "cube is dead", Reason.MATCH_OVER, ()),
        fx.Shown(1, "take: press the cube", None, ()), fx.FlagFell(1, Side.RIGHT),
        fx.MatchEnded(1, Side.LEFT, EndReason.FLAG, P2), fx.DoubleOffered(1, Side.LEFT, 2),
        fx.DoubleTaken(1, Side.RIGHT, 2), fx.ResultProposed(1, WIN),
        fx.ResultEntryStarted(1, Side.LEFT, WIN, True), fx.ResultEntryCancelled(1, Side.LEFT),
        fx.GameEnded(1, 1, WIN, P2, True, True),
        fx.ReserveChanged(1, Side.LEFT, -30 * 10**9, 570 * 10**9)]


@pytest.fixture(scope="module")
def every_effect(tmp_path_factory: pytest.TempPathFactory) -> list[fx.Effect]:
    """An effect of every kind there is: a real 11-point match's, and MORE."""
    played = play_journal(tmp_path_factory.mktemp("events"), CONFIG_11,
                          eleven_point_script().text())
    return [*played.effects, *MORE]


def test_every_kind_of_effect_is_read_back_and_worded_in_both_languages(
        every_effect: list[fx.Effect]) -> None:
    assert {e.kind for e in every_effect} == set(EFFECTS), "a kind of effect left untested"
    for effect in every_effect:
        # As the event carries it: the journal's own object, through JSON.
        data = json.loads(json.dumps(effect.as_dict()))
        assert effect_of(data) == effect, data
        said = event_words([data])
        if isinstance(effect, fx.ArbiterCommand):
            assert said == {"en": f"arbiter: {effect.text}", "ru": f"судья: {effect.text}"}
            continue
        for lang in words.LANGUAGES:
            assert said[lang] == words.describe(effect, lang, rounded=True)[:MAX_SAID_TEXT]
            assert "other event" not in said[lang] and "другое событие" not in said[lang]
        # Never the journal's name (a one-word kind, "refused", is also an English word).
        assert effect.kind not in said["ru"] and CYRILLIC.search(said["ru"]), said
        assert "_" not in said["en"] or effect.kind not in said["en"], said


@pytest.mark.parametrize(("effects", "en", "ru"), [
    # An arbiter's command and what it did: one line, the arbiter named first.
    ([{"kind": "arbiter_command", "t": 1, "text": "score 3 2", "source": "hall", "by": "td"},
      {"kind": "score_changed", "t": 1, "score": {"left": 3, "right": 2},
       "crawford_next": False, "penalty": None}],
     "arbiter: score set to 3-2", "судья: счёт изменён на 3-2"),
    ([{"kind": "arbiter_command", "t": 1, "text": "warn left slow play"},
      {"kind": "warned", "t": 1, "side": "left", "text": "slow play"}],
     "arbiter: warning to left: slow play", "судья: предупреждение игроку слева: slow play"),
    # A kind this hall does not know, or a known one whose fields are not its own.
    ([{"kind": "sneezed", "t": 1}], "other event (sneezed)", "другое событие (sneezed)"),
    ([{"kind": "flag_fell", "t": 1, "side": "up"}],
     "other event (flag_fell)", "другое событие (flag_fell)"),
    ([{"kind": "score_changed", "t": 1, "score": {"left": 1e300, "right": 2},
       "crawford_next": False}], "other event (score_changed)", "другое событие (score_changed)"),
    ([{"kind": "warned", "t": 1, "side": "left", "text": ["a"]}],
     "other event (warned)", "другое событие (warned)"),
    ([{"kind": "dice_rolled", "t": 1, "side": "left", "dice": list(range(100)), "game": 1,
       "turn": 1, "early": False}], "other event (dice_rolled)", "другое событие (dice_rolled)"),
    (["not an object"], "other event (?)", "другое событие (?)"),
])
def test_events_said_and_what_is_not_an_effect(effects: list[Any], en: str, ru: str) -> None:
    assert event_words(effects) == {"en": en, "ru": ru}


def test_a_hostile_event_is_said_bounded() -> None:
    said = event_words([{"kind": "x" * 10_000, "t": 1}] * 200 +
                       [{"kind": "warned", "t": 1, "side": "left", "text": "y" * 10_000}])
    for text in said.values():
        assert len(text) <= MAX_SAID_TEXT
    assert said["en"].startswith(f"other event ({'x' * 39}…) ×200; warning to left: yyy")
    assert said["ru"].startswith(f"другое событие ({'x' * 39}…) ×200; предупреждение игроку "
                                 "слева: yyy")
    assert said["en"].endswith("y…") and said["ru"].endswith("y…")
    said = event_words([{"kind": f"{n}" + "x" * 10_000, "t": 1} for n in range(200)])
    assert said["en"].startswith(f"other event (0{'x' * 38}…); other event (1{'x' * 38}…); ")
    assert len(said["en"]) == len(said["ru"]) == MAX_SAID_TEXT
    said = event_words([{"kind": f"{n}", "t": 1} for n in range(200)])
    assert said["en"].endswith("other event (7); … and 192 more")
    assert event_words([{"kind": "flag_fell", "t": 1, "side": "left"}] * 20) == {
        "en": "left's flag falls ×20", "ru": "флажок левого упал ×20"}


# --- on the page, from a real clock ------------------------------------------------------------

@pytest.fixture
def clock(broker: Broker, tables, tmp_path: Path, hall: RunningHall) -> Table:  # noqa: F811
    """A real clock on mock pins, Anna v Boris loaded, seen by the hall with its players."""
    return loaded_clock(tables, broker, tmp_path, hall)


def last_events(page: Any, table: str) -> str:
    page.click(f'.card[data-table="{table}"]')
    page.wait_for_selector("#table-dialog[open] #td-body ul.log:last-of-type li",
                           timeout=PAGE_WAIT_MS)
    return str(page.inner_text("#td-body ul.log:last-of-type"))     # the last events


def test_a_cards_last_events_say_what_happened_in_the_pages_language(
        browser: Any, hall: RunningHall, clock: Table, broker: Broker,  # noqa: F811
        tmp_path: Path) -> None:
    clock.tap(Button.LEFT)                  # game 1 starts
    for command in ("score 3 2", "warn left slow play"):
        reply = hall.post("/api/cmd", {"table": "table-1", "command": command})
        assert reply["reply"]["ok"] is True, reply
    hall.wait(lambda: len(hall.card("table-1")["recent"]) >= 3, "the events on the card")
    # A hostile table's event: a name of markup, long; and a kind no clock sends.
    hostile = table_client(broker, "table-2")
    evil = '<img src=x onerror="window.__owned=1">' * 40
    publish(hostile, f"{P}/table-2/events", event(3, {"kind": evil}, {"kind": "sneezed"}))
    hall.wait(lambda: hall.card("table-2").get("recent"), "the hostile event on its card")
    page = open_page(browser, hall)
    try:
        page.wait_for_selector('.card[data-table="table-1"]', timeout=PAGE_WAIT_MS)
        page.wait_for_function(
            "() => document.querySelector('.card[data-table=\"table-1\"]') !== null",
            timeout=PAGE_WAIT_MS)
        text = last_events(page, "table-1")
        assert "arbiter: score set to 3-2" in text, text
        assert "arbiter: warning to left: slow play" in text, text
        assert "game 1 starts" in text, text
        for raw in ("arbiter_command", "score_changed", "warned", "game_started"):
            assert raw not in text, text
        page.screenshot(path=str(shots(tmp_path) / "event-words-en.png"))

        page.keyboard.press("Escape")
        page.select_option("#language", "ru")
        text = last_events(page, "table-1")
        assert "судья: счёт изменён на 3-2" in text, text
        assert "судья: предупреждение игроку слева: slow play" in text, text
        assert "партия 1 началась" in text, text
        assert "arbiter" not in text and "score set" not in text, text
        page.screenshot(path=str(shots(tmp_path) / "event-words-ru.png"))

        page.keyboard.press("Escape")
        text = last_events(page, "table-2")
        assert "другое событие (<img src=x onerror=" in text, text
        assert "другое событие (sneezed)" in text, text
        said = page.inner_text("#td-body .said")
        assert len(said) <= MAX_SAID_TEXT, said
        assert page.query_selector("#td-body img") is None
        assert page.evaluate("() => window.__owned") is None
        page.screenshot(path=str(shots(tmp_path) / "event-words-hostile-ru.png"))
    finally:
        page.close()
        hostile.disconnect()
        hostile.loop_stop()

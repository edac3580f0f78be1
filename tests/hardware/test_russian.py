"""The panels in Russian (SPEC §15): every text of theirs in both languages and fitting where it is
drawn, names shown as written in Latin or Cyrillic and cut the same way in both, the language
reaching the panels through the presenter, and reference images of the main screens in Russian
(checked as screen_helpers.py checks them: `GAMMONCLOCK_UPDATE_REFERENCES=1` writes them).
"""

from __future__ import annotations

import string
from fractions import Fraction
from string import Formatter

import pytest
from hypothesis import given
from hypothesis import strategies as st
from PIL import Image

from arbiter_helpers import PIN, WRONG_PIN_TAPS, chord, entry
from gammonclock.core.effects import (
    ChallengeDecided,
    CubeSet,
    DiceRolled,
    Ignored,
    OvertimeGiven,
    Recovered,
    Refused,
    Shown,
    Undone,
    Warned,
)
from gammonclock.core.match import Phase
from gammonclock.core.pin import hash_pin
from gammonclock.core.rules import ResultKind
from gammonclock.hardware import drawing, glyphs, texts
from gammonclock.hardware.glyphs import BIG, MEDIUM, SMALL, TINY
from gammonclock.hardware.notices import JOURNAL_ALERT, journal_alert
from gammonclock.hardware.presenters import PanelPresenter
from gammonclock.hardware.screens import (
    INFO_PAGE,
    INNER_W,
    Layout,
    PanelView,
    config_error_view,
    idle_view,
    in_language,
    message_view,
    next_match_view,
    notice_for,
    panel_view,
    render,
)
from gammonclock.hardware.texts import TEXTS, Room, Text, localized, say
from gammonclock.sides import Pair, Side
from play_helpers import play
from property_helpers import property_settings
from screen_helpers import OPENING, check_screen

S = 10**9
LEFT, RIGHT = Side.LEFT, Side.RIGHT
RU_NAMES = Pair("Анна", "Борис")
RU_LETTERS = "абвгдеёжзийклмнопрстуфхцчшщъыьэюяАБВГДЕЁЖЗИЙКЛМНОПРСТУФХЦЧШЩЪЫЬЭЮЯ"
FACES = (TINY, SMALL, MEDIUM, BIG)


def ru_views(script: str, notice: str | None = None, **overrides) -> tuple[object, Pair]:
    p = play(script, names=RU_NAMES, **overrides)
    m = p.match
    return p, Pair(panel_view(m, LEFT, m.now, notice, lang="ru"),
                   panel_view(m, RIGHT, m.now, notice, lang="ru"))


# --- the table: every text in both languages -------------------------------------------------

def _fields(text: str) -> set[str]:
    return {name for _, name, _, _ in Formatter().parse(text) if name}


@pytest.mark.parametrize("key", sorted(TEXTS))
def test_every_text_has_both_languages_with_the_same_placeholders(key: str) -> None:
    entry = TEXTS[key]
    assert entry.en.strip() and entry.ru.strip()
    assert _fields(entry.en) == _fields(entry.ru)
    # Russian is Russian: a text without placeholders differs from the English, bar a few that
    # are the same in both ("IP …").
    if key not in {"idle.ip", "next.match", "stick.offer", "arbiter.about.stick",
                   "stick.provision_offer"}:
        assert entry.en != entry.ru


# What each placeholder stands for at its longest on a panel, in the sample texts below.
SAMPLES = {"own": "10", "opp": "11", "length": "13", "n": "12", "s": "12", "value": "64",
           "a": "3", "b": "3", "table": "table-12", "time": "2:00", "dice": "6-6",
           "text": "slow play", "addresses": "192.168.100.200",
           # a USB stick's lines: free text, wrapped on the panel (at most four lines)
           "match": "Анна-Борис, 13 points", "why": "a match is in progress (game 3)",
           "problem": "the stick is full: 2 of 5 files copied", "error": "KeyError: 0",
           # a USB stick's offer (SPEC §13.5): the match's score on the dead clock
           "score": "12-11",
           # a provisioning stick (issue 32): the hall's broker host
           "host": "192.168.100.200"}
NAME = {"en": "Anna", "ru": "Анна"}
FIRST = {lang: max((say(k, lang, s="12", n=12) for k in
                    ("tc.none", "tc.delay", "tc.bronstein", "tc.fischer", "ready.game")), key=len)
         for lang in texts.LANGUAGES}

# How many characters each room holds (the faces are monospaced): 5x8 gives 24 across the
# panel, 6x12 20; the top row's right end leaves the name at least 4.
ROOM_CHARS = {Room.HEADER: TINY.chars(INNER_W) - 4, Room.STATUS: TINY.chars(INNER_W),
              Room.TITLE: SMALL.chars(INNER_W), Room.FOOTER: SMALL.chars(INNER_W),
              Room.TEXT: TINY.chars(INNER_W), Room.RIGHT: 9}


def _sample(key: str, lang: str) -> str:
    kind = max((say(f"kind.{k.value}", lang) for k in ResultKind), key=len)
    args = dict(SAMPLES, name=NAME[lang], first=FIRST[lang], left=NAME[lang], right="Борис",
                kind=kind,
                points=texts.points(Fraction(12), lang), length=texts.length(13, lang))
    if key.startswith("header."):
        args["length"] = SAMPLES["length"]
    return say(key, lang, **args)


@pytest.mark.parametrize("key", sorted(k for k, e in TEXTS.items()
                                       if e.room not in (Room.WORD, Room.LINE)))
def test_the_russian_text_fits_where_it_is_drawn(key: str) -> None:
    """The same width rules as the English (a single line of a message is checked on the
    screens below, with what stands beside it)."""
    entry, ru = TEXTS[key], _sample(key, "ru")
    if entry.room is Room.LINES:
        for line in ru.split("\n"):
            assert len(line) <= SMALL.chars(INNER_W), line   # "|" stands for the gap
    elif entry.room is Room.NOTICE:         # the notice box: two wrapped lines, nothing cut
        lines = glyphs.wrap(ru, TINY.chars(INNER_W - 4), 2)
        assert not lines[-1].endswith(".."), lines
    elif key.startswith(("stick.", "start.", "fault.")):   # a stick's message, why the clock
        # starts nothing, that it failed: wrapped, within the screen
        lines = glyphs.wrap(ru, TINY.chars(INNER_W), 4)
        assert not lines[-1].endswith(".."), lines
    else:
        assert len(ru) <= ROOM_CHARS[entry.room], ru


def test_points_take_the_russian_plural() -> None:
    said = {n: texts.points(Fraction(n), "ru") for n in (1, 2, 4, 5, 11, 12, 14, 21, 22, 25)}
    assert said == {1: "1 очко", 2: "2 очка", 4: "4 очка", 5: "5 очков", 11: "11 очков",
                    12: "12 очков", 14: "14 очков", 21: "21 очко", 22: "22 очка", 25: "25 очков"}
    assert texts.points(Fraction(1, 2), "ru") == "0.5 очка"
    assert [texts.points(Fraction(n), "en") for n in (1, 2)] == ["1 point", "2 points"]
    assert [texts.length(n, "ru") for n in (1, 7, 11, 21)] == ["до 1 очка", "до 7 очков",
                                                               "до 11 очков", "до 21 очка"]
    assert texts.length(7, "en") == "7 points"


def test_an_unknown_language_is_english() -> None:
    assert say("pause.title", "de") == "PAUSED"


def test_a_text_is_english_and_knows_how_to_say_itself_in_russian() -> None:
    text = Text("notice.overtime", time="1:00")
    assert text == "flag: overtime +1:00" and isinstance(text, str)
    assert localized(text, "ru") == "флажок: добавлено +1:00"
    assert localized(text, "en") == "flag: overtime +1:00"
    # Titles other modules give in English are found by their words; anything else is kept.
    assert localized("NEXT MATCH", "ru") == "СЛЕДУЮЩИЙ МАТЧ"
    assert localized("next match loaded: Анна-Борис", "ru") == "next match loaded: Анна-Борис"


# --- notices ---------------------------------------------------------------------------------

@pytest.mark.parametrize("effect, ru", [
    (Refused(0, "x", "y"), None),
    (OvertimeGiven(0, LEFT, 60 * S), "флажок: добавлено +1:00"),
    (DiceRolled(0, RIGHT, (3, 3), 1, 4, True), "ранний бросок: записан"),
    (Warned(0, LEFT, "slow play"), "предупреждение: slow play"),
    (ChallengeDecided(0, LEFT, False, 2), "апелляция отклонена (2)"),
    (ChallengeDecided(0, LEFT, True, 0), "апелляция принята"),
    (Recovered(0, paused=True), "восстановлено: пауза, держите куб"),
    (Recovered(0, paused=False), "восстановлено после сбоя"),
    (Undone(0, "the last press"), "судья: отмена хода"),
    (CubeSet(0, 2, None), "судья: куб установлен"),
])
def test_notices_are_said_in_russian_on_a_russian_panel(effect, ru) -> None:
    notice = notice_for(effect)
    if ru is None:
        # A refusal made by hand, without a reason code: the engine's English words.
        assert notice == "y" and localized(notice, "ru") == "y"
        return
    assert notice is not None and localized(notice, "ru") == ru


def test_an_arbiters_warning_is_cut_as_in_english() -> None:
    notice = notice_for(Warned(0, LEFT, "delay of game: moving after the roll took 40 seconds"))
    assert notice == "warning"                    # too long: cut at its first ": "
    assert localized(notice, "ru") == "предупреждение"


def test_the_journal_alert_in_russian() -> None:
    assert journal_alert("disk full") is JOURNAL_ALERT
    m = play(OPENING + "105.5 end", names=RU_NAMES).match
    view = panel_view(m, LEFT, m.now, journal_alert("disk full"), lang="ru")
    assert view.notice == "журнал не пишется: позовите судью"
    assert panel_view(m, LEFT, m.now, journal_alert("disk full")).notice == (
        "journal not written: call the arbiter")


# --- the screens in Russian ------------------------------------------------------------------

def test_running_clock() -> None:
    _, v = ru_views(OPENING + "105.5 end")
    assert (v.left.header, v.left.header_right) == ("Анна", "0-0 до 7")
    assert v.left.opponent.name == "Борис"
    check_screen("ru-running-left", v.left)
    check_screen("ru-running-right", v.right)


def test_dice_in_russian() -> None:
    # The opening roll between games, each die with its colour; then the running player's roll.
    m = play("1 roll 5\n2 roll 3\n3 end", names=RU_NAMES).match
    opening = panel_view(m, LEFT, m.now, lang="ru", opening=(5, 3))
    assert opening.opening == (("белые", 5), ("чёрные", 3))
    check_screen("ru-dice-opening-left", opening)
    _, v = ru_views(OPENING + "101 roll 6 2\n105.5 end")
    assert v.left.opponent.dice == (6, 2)
    check_screen("ru-dice-running-left", v.left)


def test_crawford_header() -> None:
    _, v = ru_views("0 tap left\n5 tap right\n10 tap left\n15 hold left\n18 tap cube\n"
                    "20 tap right\n30 end", length=3)
    assert v.left.header_right == "КРОУФОРД 2-0 до 3"


def test_ready_before_the_first_game_and_between_games() -> None:
    _, v = ru_views("1 end")
    assert v.left.status == ("задержка 12с: нажмите",)
    check_screen("ru-ready-left", v.left)
    _, later = ru_views("0 tap left\n5 tap right\n10 hold left\n13 tap right\n20 end",
                        discipline="longgammon")
    assert later.left.status == ("партия 2: вы белые",)
    assert later.right.status == ("партия 2: нажмите",)
    check_screen("ru-between-games-left", later.left)


def test_cube_offered() -> None:
    _, v = ru_views(OPENING + "130 tap cube\n133.5 end")
    assert v.left.status == ("Борис удваивает до 2", "нажать=беру  держать=пас")
    assert v.right.status == ("вы удваиваете до 2",)
    check_screen("ru-cube-offered-left", v.left)
    check_screen("ru-cube-offered-right", v.right)


def test_result_entry() -> None:
    _, v = ru_views("0 tap left\n40 tap right\n100 hold left\n103 tap cube\n104 end")
    assert v.left.title == "РЕЗУЛЬТАТ?"
    assert v.left.lines == (("победа: Анна", ""), ("гаммон", "2 очка"))
    assert v.left.footer == "куб=далее нажать=нет" and v.right.footer == "куб=далее нажать=да"
    check_screen("ru-result-entry-left", v.left)


def test_pause() -> None:
    _, v = ru_views(OPENING + "110 hold cube\n115 end")
    assert (v.left.title, v.left.footer) == ("ПАУЗА", "дальше: держите куб")
    assert v.left.lines == (("Анна", "13:12"), ("Борис", "13:32"))
    check_screen("ru-paused-left", v.left)


GAME_THEN_BREAK = "0 tap left\n5 tap right\n10 tap left\n15 hold left\n20 tap right\n30 hold left\n"


def test_break() -> None:
    _, v = ru_views(GAME_THEN_BREAK + "40.5 end")
    assert (v.left.title, v.right.title) == ("ПЕРЕРЫВ: нажать=стоп", "ПЕРЕРЫВ: Анна")
    check_screen("ru-break-left", v.left)
    check_screen("ru-break-right", v.right)
    _, late = ru_views(GAME_THEN_BREAK + "345.2 end")
    assert late.left.status == ("перерыв: нажмите часы",)
    assert late.right.status == ("Анна опаздывает",)


def test_info_page() -> None:
    p = play("0 tap left\n5 hold left\n8 tap right\n20 tap cube\n21 end", names=RU_NAMES)
    notice = notice_for(p.surviving(Shown)[-1])
    assert notice == INFO_PAGE
    view = panel_view(p.match, RIGHT, p.match.now, notice, lang="ru")
    assert (view.title, view.footer) == ("ДАЛЕЕ ПАРТИЯ 2", "ещё перерывов 1-1")


def test_match_over() -> None:
    _, v = ru_views("0 tap left\n5 hold left\n8 tap right\n10 end", length=1)
    assert v.right.title == "МАТЧ ОКОНЧЕН"
    assert v.right.lines == (("победа: Анна", "1-0"), ("по счёту", ""))
    check_screen("ru-match-over-right", v.right)


def test_flag() -> None:
    _, v = ru_views("0 tap left\n100 end", reserve_ns=30 * S)
    assert v.left.title == "ФЛАЖОК УПАЛ"
    assert v.left.lines == (("Борис: время", "0.0"), ("победа: Анна", "7-0"))
    check_screen("ru-flag-left", v.left)


def test_abandoned() -> None:
    p = play(OPENING + "105.5 end", names=RU_NAMES)
    from gammonclock.core.arbiter import Abandon
    from gammonclock.core.match import ArbiterAction
    engine, _ = p.engine.feed(ArbiterAction(p.engine.now, Abandon()))
    m = engine.match
    assert m.phase is Phase.MATCH_OVER
    view = panel_view(m, LEFT, m.now, lang="ru")
    assert view.title == "МАТЧ ПРЕРВАН"
    assert view.lines == (("счёт", "0-0"), ("решением судьи", ""))
    check_screen("ru-abandoned-left", view)


@pytest.mark.parametrize("script", [
    "0 tap left\n5 arbiter disqualify right\n6 end",
])
def test_match_over_lines_fit(script: str) -> None:
    _, v = ru_views(script)
    assert v.left.lines[1] == ("дисквалиф.: Борис", "")


def test_a_refused_double_in_russian() -> None:
    p = play("0 tap left\n5 tap cube\n6 end", names=RU_NAMES)
    notice = notice_for(p.surviving(Refused)[-1])
    view = panel_view(p.match, RIGHT, p.match.now, notice, lang="ru")
    assert view.notice == "в первый ход удваивать нельзя"
    check_screen("ru-notice-refused-right", view)


def test_the_hints_in_russian() -> None:
    p = play("0 tap left\n5 tap left\n6 end", names=RU_NAMES)
    notice = notice_for(p.surviving(Ignored)[-1])
    assert panel_view(p.match, LEFT, p.match.now, notice, "ru").notice == (
        "не ваш ход: часы соперника")


def test_idle() -> None:
    view = idle_view("7", "Кубок Москвы", ["192.168.1.20"], lang="ru")
    assert view.title == "СТОЛ 7"
    assert [line for line, _ in view.lines] == ["Кубок Москвы", "IP 192.168.1.20",
                                                "ждём следующий матч"]
    assert idle_view("7", "", [], lang="ru").lines[0] == ("нет сети", "")
    check_screen("ru-idle", view)


def test_a_config_error_keeps_the_checkers_english_under_a_russian_title() -> None:
    message = ('table.toml: time.delay: "12x" is not a duration; use e.g. "12s"\n'
               "table.toml: match.length: required\ntable.toml: players.left: required")
    view = config_error_view(message, lang="ru")
    assert view.title == "ОШИБКА НАСТРОЕК"
    assert [line for line, _ in view.lines] == [
        "table.toml: time.delay:", '"12x" is not a duration;', 'use e.g. "12s"',
        "(и ещё ошибок: 2)"]
    assert config_error_view("", "JOURNAL ERROR", lang="ru").lines == (
        ("(без подробностей)", ""),)


@pytest.mark.parametrize("view", [
    config_error_view("x: bad\ny: bad", "MATCH REFUSED"),
    config_error_view("x: bad", "JOURNAL ERROR"),
    message_view("USB STICK", ["exported 3 files"]),
    idle_view("7", "Cup", ["10.0.0.2"]),
    next_match_view(("Анна", "Борис"), 7, "14:00"),
])
def test_a_fixed_screen_made_in_english_is_made_again_in_russian(view: PanelView) -> None:
    ru = in_language(view, "ru")
    assert ru.title != view.title and ru.layout is Layout.TEXT
    assert in_language(view, "en") == view
    assert render(ru).getbbox() is not None


def test_the_next_match_screen() -> None:
    en = next_match_view(("Anna", "Boris"), 7, "14:00")
    # As the lifecycle's own message_view("NEXT MATCH", [match_words, readback_time]) has it.
    assert en == message_view("NEXT MATCH", ["Anna-Boris, 7 points", "14:00 each"])
    ru = next_match_view(("Анна", "Борис"), 7, "14:00", lang="ru")
    assert ru.title == "СЛЕДУЮЩИЙ МАТЧ"
    assert [line for line, _ in ru.lines] == ["Анна-Борис, до 7 очков", "14:00 каждому"]


@pytest.mark.parametrize("kind", list(ResultKind))
def test_every_result_kind_fits_with_its_points(kind: ResultKind) -> None:
    lines = texts.say_lines("result.win", "ru", name="Анна", kind=say(f"kind.{kind.value}", "ru"),
                            points=texts.points(Fraction(12), "ru"))
    for left, right in lines:
        assert len(left) + 1 + len(right) <= SMALL.chars(INNER_W), (left, right)


def test_a_name_with_a_bar_stays_whole_in_the_result_lines() -> None:
    assert texts.say_lines("result.win", "en", name="A|B", kind="gammon", points="2 points") == (
        ("A|B wins", "gammon"), ("", "2 points"))


# --- every message line, status and title of the Russian screens fits -------------------------

SCRIPTS = {
    "running": (OPENING + "105.5 end", {}),
    "ready": ("1 end", {}),
    "bronstein": ("1 end", {"time": None}),
    "cube": (OPENING + "130 tap cube\n133.5 end", {}),
    "result": ("0 tap left\n40 tap right\n100 hold left\n103 tap cube\n104 end", {}),
    "pass": (OPENING + "130 tap cube\n140 hold left\n145 end", {}),
    "draw": ("0 tap left\n40 tap right\n100 hold left\n" + "".join(
        f"{101 + i} tap cube\n" for i in range(4)) + "106 end", {"discipline": "longgammon"}),
    "pause": (OPENING + "110 hold cube\n115 end", {}),
    "break": (GAME_THEN_BREAK + "40.5 end", {}),
    "overrun": (GAME_THEN_BREAK + "345.2 end", {}),
    "flag": ("0 tap left\n100 end", {"reserve_ns": 30 * S}),
    "over": ("0 tap left\n5 hold left\n8 tap right\n10 end", {"length": 1}),
    "disqualified": ("0 tap left\n5 arbiter disqualify right\n6 end", {}),
}


@pytest.mark.parametrize("name", sorted(SCRIPTS))
def test_nothing_on_a_russian_screen_is_cut(name: str) -> None:
    script, overrides = SCRIPTS[name]
    if name == "bronstein":
        from gammonclock.core.timecontrol import FlagRule, TimeControl, TimeMode
        overrides = {"time": TimeControl(TimeMode.BRONSTEIN, 12 * S, FlagRule.MATCH_LOSS,
                                         60 * S)}
    _, v = ru_views(script, **overrides)
    for view in v:
        assert len(view.title) <= SMALL.chars(INNER_W), view.title
        assert len(view.footer) <= SMALL.chars(INNER_W), view.footer
        assert len(view.header_right) <= TINY.chars(INNER_W) - 4, view.header_right
        for line in view.status:
            assert len(line) <= TINY.chars(INNER_W), line
        for left, right in view.lines:
            assert len(left) + (1 + len(right) if right else 0) <= SMALL.chars(INNER_W), (
                left, right)


# --- names: as written, and cut the same way in both alphabets --------------------------------

LATIN_TO_CYRILLIC = str.maketrans("ABEKMHOPCTXaeopcxy", "АВЕКМНОРСТХаеорсху")


@pytest.mark.parametrize("face", FACES, ids=lambda f: f.name)
def test_every_russian_letter_is_in_every_face(face) -> None:
    assert glyphs.printable(RU_LETTERS, face) == RU_LETTERS


@pytest.mark.parametrize("text, face, shown", [
    ("Борис Ёлкин", TINY, "Борис Ёлкин"),          # Cyrillic as written
    ("Anna Smith", TINY, "Anna Smith"),            # Latin unchanged
    ("Jürgen", SMALL, "Jürgen"),                   # Latin-1 where the face has it
    ("Jürgen", TINY, "Jurgen"),                    # the accent dropped where it has not
    ("И\u0306ошкар-Ола", TINY, "Йошкар-Ола"),      # a decomposed Й composed first
    ("Ѡ Ω 李 ★", TINY, "? ? ? ?"),                  # other letters and scripts: one "?" each
    ("Ӑлла", TINY, "Алла"),                        # a Cyrillic letter with a mark it lacks
])
def test_printable(text: str, face, shown: str) -> None:
    assert glyphs.printable(text, face) == shown


NAME_LETTERS = st.text(st.sampled_from(string.ascii_letters + RU_LETTERS + " -'"),
                       min_size=1, max_size=40)


@property_settings(150)
@given(NAME_LETTERS, st.sampled_from(FACES), st.integers(min_value=0, max_value=INNER_W))
def test_a_name_is_cut_to_the_same_number_of_characters_in_either_alphabet(name, face, pixels):
    kept = glyphs.clip(name, face, pixels)
    assert len(kept) == min(len(name), face.chars(pixels))
    assert name.startswith(kept)


@pytest.mark.parametrize("latin, cyrillic", [
    ("Aleksandra Vasilyevna", "Александра Васильевна"),
    ("Konstantin Konstantinopol'skiy", "Константин Константинопольский"),
    ("Boris", "Борис"),
])
def test_a_long_name_is_cut_the_same_way_on_the_panel(latin: str, cyrillic: str,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """Wherever a name is drawn (the header, the opponent's line, a message line), a Latin and
    a Cyrillic name of the same length are cut to the same characters at the same place."""
    assert len(latin) == len(cyrillic)
    drawn: list[tuple[int, int, int, str]] = []
    real_text = drawing._Canvas.text

    def text(self, x, y, text, face, fill=255):                 # what is drawn, and where
        drawn.append((x, y, len(glyphs.printable(text, face)), face.name))
        real_text(self, x, y, text, face, fill)
    monkeypatch.setattr(drawing._Canvas, "text", text)

    def draws(name: str) -> list[tuple[int, int, int, str]]:
        drawn.clear()
        m = play(OPENING + "105.5 end", names=Pair(name, "Boris")).match
        paused = play(OPENING + "110 hold cube\n115 end", names=Pair(name, "Boris")).match
        for lang in texts.LANGUAGES:
            for state in (m, paused):
                for side in Side:
                    render(panel_view(state, side, state.now, lang=lang))
        return list(drawn)
    assert draws(latin) == draws(cyrillic)


# --- the language reaches the panels ---------------------------------------------------------

class _Glass:
    def __init__(self) -> None:
        self.images: list[Image.Image] = []

    def show(self, image: Image.Image, t: int) -> bool:
        self.images.append(image)
        return True

    def flush(self, timeout: float = 1.0) -> bool:
        return True

    def close(self) -> None:
        pass


def test_the_presenter_draws_in_the_language_it_is_given() -> None:
    p = play(OPENING + "105.5 end", names=RU_NAMES)
    language = ["ru"]
    glass = Pair(_Glass(), _Glass())
    presenter = PanelPresenter(glass, language=lambda: language[0])      # type: ignore[arg-type]
    presenter.present(p.engine, p.engine.now, [])
    m = p.match
    assert _same(glass.left.images[-1], render(panel_view(m, LEFT, m.now, lang="ru")))
    presenter.show_message(config_error_view("x: bad", "MATCH REFUSED"))
    assert _same(glass.right.images[-1],
                 render(config_error_view("x: bad", "MATCH REFUSED", lang="ru")))
    presenter.present_idle({"table": "7", "event": "", "addresses": []}, 0)
    assert _same(glass.left.images[-1], render(idle_view("7", "", [], lang="ru")))
    language[0] = "en"                  # the next match may speak English
    presenter.present_idle({"table": "7", "event": "", "addresses": []}, 0)
    assert _same(glass.left.images[-1], render(idle_view("7", "", [])))


def test_a_presenter_without_a_language_speaks_english() -> None:
    glass = Pair(_Glass(), _Glass())
    PanelPresenter(glass).present_idle({"table": "7"}, 0)             # type: ignore[arg-type]
    assert _same(glass.left.images[-1], render(idle_view("7", "", [])))


def _same(a: Image.Image, b: Image.Image) -> bool:
    return a.tobytes() == b.tobytes()


# --- the fonts as shipped ----------------------------------------------------------------------

def test_the_cyrillic_fonts_are_the_ones_the_readme_names_with_their_licences() -> None:
    import hashlib
    import re
    fonts = glyphs.FONT_DIR
    listed = dict((name, digest) for digest, name in
                  re.findall(r"^([0-9a-f]{64})  (cyrillic-\S+)$",
                             (fonts / "README.md").read_text(), re.M))
    shipped = sorted(p.name for p in fonts.glob("cyrillic-*"))
    assert sorted(listed) == shipped == sorted(
        f"{face.cyrillic}.{ext}" for face in FACES for ext in ("pbm", "pil"))
    for name, digest in listed.items():
        assert hashlib.sha256((fonts / name).read_bytes()).hexdigest() == digest, name
    licences = (fonts / "LICENSE-terminus.txt").read_text() + (
        fonts / "LICENSE-misc-fixed.txt").read_text()
    assert all(face.cyrillic in licences for face in FACES)


# --- the arbiter at the panels (SPEC §13.4) in Russian ------------------------------------------

def _ru_arbiter(presses: tuple[str, ...] = (), pin: tuple[str, ...] = ("left", "right", "cube",
                                                                      "left"),
                before: str = OPENING) -> PanelView:
    script = (before + "130 down cube\n130.1 down left\n130.2 down right\n"
              "133.7 up cube\n133.7 up left\n133.7 up right\n")
    script += "".join(f"{140 + 0.5 * i} tap {b}\n" for i, b in enumerate(pin))
    if len(pin) == 4:                        # the whole PIN: the cube held ends the entry
        script += "142 hold cube\n"
    script += "".join(f"{150 + i} tap {b}\n" for i, b in enumerate(presses))
    p, v = ru_views(script + f"{151 + len(presses)} end\n", arbiter_pin=hash_pin("LRCL"))
    if p.state["phase"] == "arbiter":          # (a resume leaves it: the players' screens)
        assert v.left == v.right
    return v.left


_R, _L, _C = "right", "left", "cube"
# Every step of the menu, each item: (menu presses, the PIN's taps).
RU_ARBITER_STEPS = [((), ("left", "right"))] + [
    (("right",) * i + extra, ("left", "right", "cube", "left"))
    for i in range(9) for extra in ((), ("cube",), ("cube", "right"), ("cube", "right", "cube"))]


@pytest.mark.parametrize(("presses", "pin"), RU_ARBITER_STEPS)
def test_nothing_on_a_russian_arbiters_screen_is_cut(presses, pin) -> None:
    view = _ru_arbiter(presses, pin)
    assert len(view.title) <= SMALL.chars(INNER_W), view.title
    assert len(view.footer) <= TINY.chars(INNER_W), view.footer
    assert len(view.header) + 1 + len(view.header_right) <= TINY.chars(INNER_W), view.header
    for left, right in view.lines:
        limit = TINY.chars(INNER_W) if view.layout is Layout.TEXT else SMALL.chars(INNER_W)
        assert len(left) + (1 + len(right) if right else 0) <= limit, (left, right)


@pytest.mark.parametrize(("name", "presses", "pin"), [
    ("ru-arbiter-pin", (), ("left", "right")),
    ("ru-arbiter-menu", (), ("left", "right", "cube", "left")),
    ("ru-arbiter-edit-clock", (_R, _C, _R, _R), ("left", "right", "cube", "left")),
    ("ru-arbiter-confirm-undo", (_R, _R, _R, _C), ("left", "right", "cube", "left")),
])
def test_the_arbiters_screens_in_russian(name, presses, pin) -> None:
    check_screen(name, _ru_arbiter(presses, pin))


def test_a_chord_in_a_lockout_in_russian() -> None:
    # Three wrong PINs lock the chord until 409.5 s; a chord recognised at 153.2 s is undone.
    failures = "".join(chord(t) + entry(t + 5, WRONG_PIN_TAPS) for t in (20, 60, 100))
    p, _ = ru_views("1 tap left\n" + failures + chord(150) + "153.7 end\n",
                    arbiter_pin=hash_pin(PIN))
    notice = notice_for(p.surviving(Shown)[-1])
    assert notice is not None and localized(notice, "ru") == "режим судьи закрыт ещё 4:17"
    check_screen("ru-notice-chord-locked-left",
                 panel_view(p.match, LEFT, p.match.now, notice, lang="ru"))


def test_a_failed_pin_in_russian() -> None:
    p, _ = ru_views(OPENING + "130 down cube\n130.1 down left\n130.2 down right\n"
                    "133.7 up cube\n133.7 up left\n133.7 up right\n170 end\n",
                    arbiter_pin=hash_pin("LRCL"))
    [refused] = p.surviving(Refused)
    notice = notice_for(refused)
    assert notice is not None
    assert localized(notice, "ru") == "нет ПИН-кода за 30 с: игра идёт"

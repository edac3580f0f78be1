"""What a person reads outside the panels, in Russian (issue 25, SPEC §15): the catalogue has every
text in both languages with the same placeholders, Russian plurals, numbers and dates follow
Russian conventions, and a Russian match's report and CSV are Russian without any flag, while
`export --language` overrides the match's language.
"""

from __future__ import annotations

import csv
import html
import io
import re
from fractions import Fraction
from pathlib import Path

import pytest

from export_helpers import CONFIG_11, Played, eleven_point_script, play_journal
from gammonclock import words
from gammonclock.cli.main import main
from gammonclock.core.effects import ArbiterCommand, surviving
from gammonclock.export import export_journal, read_match, render
from gammonclock.export.csv_out import COLUMNS
from gammonclock.words import WORDS, fields

RU_CONFIG = (CONFIG_11.replace("left = '<Anna & \"Co\">'", 'left = "Анна Иванова"')
             .replace("right = \"Boris <b>O'Neil</b>\"", 'right = "Борис Петров"')
             + '\n[event]\nname = "Кубок Москвы"\nround = "тур 3"\n\n[display]\nlanguage = "ru"\n')
CYRILLIC = re.compile("[а-яёА-ЯЁ]")

# Texts the same in both languages: placeholders only, or the command language.
SAME = {"rb.discipline_line", "c.legend", "upto.one", "upto.many", "e.arbiter", "dev.button"}
# Texts with no word to translate: "UTC", and "v" between two names (a dash in Russian).
LATIN = {"r.utc", "r.vs"}


# --- the catalogue -----------------------------------------------------------------------------

@pytest.mark.parametrize("key", sorted(WORDS))
def test_every_text_has_both_languages_with_the_same_placeholders(key: str) -> None:
    entry = WORDS[key]
    assert entry.en.strip() and entry.ru.strip()
    assert fields(entry.en) == fields(entry.ru)
    if key not in SAME:
        assert entry.en != entry.ru, entry
        if re.search("[A-Za-z]", re.sub(r"\{[^}]*\}", "", entry.en)) and key not in LATIN:
            assert CYRILLIC.search(entry.ru), entry


def test_the_plural_nouns_have_every_form() -> None:
    for noun in ("points", "games", "turns", "records", "breaks", "length", "upto"):
        forms = {key.rsplit(".", 1)[1] for key in WORDS if key.rsplit(".", 1)[0] == noun}
        assert forms in ({"one", "few", "many"}, {"one", "many"}), noun


@pytest.mark.parametrize(("noun", "n", "ru", "en"), [
    ("points", 1, "1 очко", "1 point"),
    ("points", 2, "2 очка", "2 points"),
    ("points", 4, "4 очка", "4 points"),
    ("points", 5, "5 очков", "5 points"),
    ("points", 11, "11 очков", "11 points"),
    ("points", 12, "12 очков", "12 points"),
    ("points", 21, "21 очко", "21 points"),
    ("points", 22, "22 очка", "22 points"),
    ("points", 111, "111 очков", "111 points"),
    ("points", Fraction(1, 2), "0,5 очка", "0.5 points"),
    ("points", Fraction(3, 2), "1,5 очка", "1.5 points"),
    ("games", 1, "1 партия", "1 game"),
    ("games", 2, "2 партии", "2 games"),
    ("games", 5, "5 партий", "5 games"),
    ("games", 14, "14 партий", "14 games"),
    ("records", 602, "602 записи", "602 records"),
    ("breaks", 1, "1 перерыв", "1 break"),
])
def test_plural_forms(noun: str, n: int | Fraction, ru: str, en: str) -> None:
    assert words.counted(noun, n, "ru") == ru
    assert words.counted(noun, n, "en") == en


@pytest.mark.parametrize(("n", "ru"), [(1, "матч до 1 очка"), (3, "матч до 3 очков"),
                                       (7, "матч до 7 очков"), (21, "матч до 21 очка"),
                                       (25, "матч до 25 очков")])
def test_a_match_length_after_do_takes_the_genitive(n: int, ru: str) -> None:
    assert words.match_length(n, "ru") == ru
    assert words.match_length(n, "en") == f"a match to {n} point{'s' if n != 1 else ''}"


def test_numbers_dates_and_percentages_in_russian_conventions() -> None:
    wall = 1_796_220_000 * 10**9          # 2026-12-02T14:00:00Z
    assert words.date(wall, "ru") == "2 декабря 2026 г."
    assert words.date(wall, "en") == "2 December 2026"
    assert words.number("9:41.3", "ru") == "9:41,3"
    assert words.number("9:41.3", "en") == "9:41.3"
    assert words.seconds("12.5", "ru") == "12,5 с"
    assert words.percent(0.125, 1, "ru") == "12,5 %"
    assert words.percent(0.125, 1, "en") == "12.5%"
    assert words.language("de") == "en"


# --- the effects' words: the replies and the report's "What it did" ----------------------------

@pytest.fixture(scope="module")
def match_ru(tmp_path_factory) -> Played:
    return play_journal(tmp_path_factory.mktemp("ru"), RU_CONFIG, eleven_point_script().text())


def test_the_catalogues_english_is_what_the_effects_say(match_ru: Played) -> None:
    """`words.said` in English is `Effect.describe`, word for word, for every kind of effect
    an 11-point match makes (so the English replies never change)."""
    seen = set()
    for effect in match_ru.effects:
        assert words.said(effect, "en") == effect.describe(), effect
        assert words.describe(effect, "en") == effect.describe()
        seen.add(type(effect).__name__)
    assert len(seen) >= 18, seen


def test_every_effect_is_said_in_russian(match_ru: Played) -> None:
    for effect in surviving(match_ru.effects):
        said = words.describe(effect, "ru")
        if isinstance(effect, ArbiterCommand):
            assert said == effect.describe()          # the command as given, "arbiter: …"
        else:
            assert said != effect.describe() and CYRILLIC.search(said), (effect, said)
    reserves = [words.describe(e, "ru") for e in match_ru.effects
                if type(e).__name__ == "ReserveChanged"]
    assert "резерв левого +15 с -> 21:33,6" in reserves


# --- the report --------------------------------------------------------------------------------

def _text(page: str) -> str:
    """What a reader sees of the printed page: no styles, images, codes or the screen's list."""
    page = re.sub(r"<style>.*?</style>|<img[^>]*>|<code>.*?</code>|<details>.*?</details>", "",
                  page, flags=re.S)
    return html.unescape(re.sub(r"<[^>]+>", " ", page))


def test_a_russian_match_report_is_russian_without_a_flag(match_ru: Played, tmp_path: Path) -> None:
    out = tmp_path / "report.html"
    export_journal(match_ru.path, "html", out, key=bytes(range(32)))
    page = out.read_text(encoding="utf-8")
    assert '<html lang="ru">' in page
    text = _text(page)
    for heading in ("Матч", "Результат", "Партии", "Действия судьи", "Время", "Перерывы",
                    "Кости", "Подписи", "Игроки", "Контроль времени"):
        assert f"{heading}" in text, heading
    for english in ("Players", "Result", "Arbiter actions", "Signatures", "Are the dice fair",
                    " each", "wins", "points", "refused", "game"):
        assert english not in text, english
    # Latin words left are names of things, not English: the program, the test, UTC, the
    # arbiter's own warning ("slow play")
    latin = set(re.findall(r"[A-Za-z][A-Za-z']{2,}", text))
    assert latin <= {"UTC", "gammonclock", "scipy", "stats", "chisquare", "slow", "play"}, latin
    assert "1 мая 2024 г., 10:00:00 UTC" in text              # the start, WALL0
    assert "22:00 каждому + задержка 12 с (простая); падение флажка — поражение в матче" in text
    assert "победа:" in text and "12–6" in text
    assert re.search(r"\d+ записе?[йи]?,", text)
    assert re.search(r"\d+,\d с", text)                       # a decimal comma in durations
    assert "цел:" in text and "печати проверены" in text      # the seal check, in words
    assert "отказано: больше половины оставшегося резерва" in text
    assert "отменено: нажатие часов левого" in text


def test_export_language_overrides_the_matchs(match_ru: Played, tmp_path: Path) -> None:
    state = tmp_path / "state"
    state.mkdir()
    out = tmp_path / "en.html"
    assert main(["export", str(match_ru.path), "--format", "html", "--out", str(out),
                 "--state-dir", str(state), "--language", "en"]) == 0
    page = out.read_text(encoding="utf-8")
    assert '<html lang="en">' in page and "Arbiter actions" in page
    assert "Действия судьи" not in page
    # and the other way: an English match's report in Russian
    english = play_journal(tmp_path, CONFIG_11, eleven_point_script().text(), "en.jsonl")
    out_ru = tmp_path / "ru.html"
    assert main(["export", str(english.path), "--format", "html", "--out", str(out_ru),
                 "--state-dir", str(state), "--language", "ru"]) == 0
    assert '<html lang="ru">' in out_ru.read_text(encoding="utf-8")
    with pytest.raises(SystemExit):
        main(["export", str(english.path), "--format", "html", "--out", str(out_ru),
              "--language", "de"])


def test_an_english_match_stays_english(tmp_path: Path) -> None:
    english = play_journal(tmp_path, CONFIG_11, eleven_point_script().text())
    match = read_match(english.path)
    page = render(match, "html")
    assert '<html lang="en">' in page and "Arbiter actions" in page
    assert render(match, "csv").startswith(",".join(COLUMNS) + "\n")


# --- the CSV -----------------------------------------------------------------------------------

def test_a_russian_matchs_csv_opens_in_a_russian_spreadsheet(match_ru: Played) -> None:
    match = read_match(match_ru.path, effects=False)
    text = render(match, "csv")
    assert text.startswith("\ufeff")                       # UTF-8 with a byte order mark
    rows = list(csv.reader(io.StringIO(text[1:]), delimiter=";"))
    assert rows[0] == ["партия", "ход", "сторона", "игрок", "начало_utc", "время_матча_с",
                       "обдумывание_с", "задержка_с", "списано_с", "резерв_после_с",
                       "окончание", "куб", "кости"]
    assert len(rows[0]) == len(COLUMNS) and all(len(r) == len(COLUMNS) for r in rows)
    english = list(csv.DictReader(io.StringIO(render(match, "csv", language="en"))))
    assert len(english) == len(rows) - 1
    for en, ru in zip(english, rows[1:], strict=True):
        assert ru[0:2] == [en["game"], en["turn"]]
        assert ru[COLUMNS.index("think_s")] == en["think_s"].replace(".", ",")
        assert ru[COLUMNS.index("side")] == {"left": "слева", "right": "справа"}[en["side"]]
        assert ru[COLUMNS.index("start_utc")] == en["start_utc"]
    assert any("," in r[COLUMNS.index("match_time_s")] for r in rows[1:])
    assert any(r[COLUMNS.index("cube")].startswith("удвоил до") for r in rows[1:])
    assert any(r[COLUMNS.index("dice")].startswith("стартовый") for r in rows[1:])


@pytest.mark.slow
def test_the_russian_report_prints_on_two_a4_pages(match_ru: Played, tmp_path: Path) -> None:
    """Printed by Chromium as an arbiter would (A4, the print styles), the report of an 11-point
    match of eight games between players with long Cyrillic names fits two sheets, signatures
    included."""
    import shutil
    import subprocess

    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        pytest.fail("chromium is not installed: run scripts/test-deps", pytrace=False)
    page, pdf = tmp_path / "report.html", tmp_path / "report.pdf"
    export_journal(match_ru.path, "html", page, key=bytes(range(32)))
    subprocess.run([chromium, "--headless", "--no-sandbox", "--disable-gpu",
                    "--no-pdf-header-footer", f"--print-to-pdf={pdf}", page.as_uri()],
                   check=True, capture_output=True, timeout=120)
    data = pdf.read_bytes()
    boxes = re.findall(rb"/MediaBox \[0 0 ([\d.]+) ([\d.]+)\]", data)
    assert boxes and all(abs(float(w) - 595.3) < 1 and abs(float(h) - 841.9) < 1
                         for w, h in boxes), boxes                      # A4, in points
    assert len(re.findall(rb"/Type\s*/Page(?!s)", data)) == 2

"""The export of a journal whose match went on on another clock (SPEC §13.5, issue 31): every
format says how it ended, "moved to TABLE", with no winner and no result of its own (the journal
there has it), in English and Russian."""

from __future__ import annotations

import csv
import html
import io
import json
import re
from pathlib import Path

import pytest

from export_helpers import play_journal
from gammonclock.export import read_match, render

CONFIG = """\
[match]
length = 7

[players]
left = "Anna"
right = "Boris"
"""
RU_CONFIG = CONFIG.replace("Anna", "Анна").replace("Boris", "Борис") + (
    '\n[display]\nlanguage = "ru"\n')
# Left wins game 1; in game 2 right's clock runs when the hall's notice comes at 60 s.
SCRIPT = ("0 tap left\n5 hold left\n8 tap right\n20 tap right\n30 tap left\n"
          "60 arbiter moved table-9\n61 end\n")


def _text(page: str) -> str:
    return html.unescape(re.sub(r"<[^>]+>", " ", re.sub(r"\s+", " ", page)))


@pytest.fixture
def moved(tmp_path: Path):
    return read_match(play_journal(tmp_path, CONFIG, SCRIPT).path)


@pytest.fixture
def moved_ru(tmp_path: Path):
    return read_match(play_journal(tmp_path, RU_CONFIG, SCRIPT, "ru.jsonl").path)


def test_the_json_says_moved_where_and_no_winner(moved) -> None:
    doc = json.loads(render(moved, "json"))
    assert doc["result"] == {"winner": None, "winner_name": "", "reason": "moved",
                             "score": {"left": 1, "right": 0}, "moved_to": "table-9"}
    final = doc["final_state"]
    assert (final["phase"], final["end_reason"], final["moved_to"], final["winner"]) == (
        "match_over", "moved", "table-9", None)
    [act] = [a for a in doc["arbiter_actions"] if a["command"] == "moved table-9"]
    assert act["category"] == "match moved" and act["source"] == "script"


def test_the_report_says_where_it_went_in_both_languages(moved, moved_ru) -> None:
    text = _text(render(moved, "html"))
    assert "moved to table-9 at 1–0: no result here (the journal there has it)" in text
    assert "no winner (tie)" not in text
    assert "match over (moved to table-9)" in text            # the game it ended in
    ru = _text(render(moved_ru, "html"))
    assert "перенесён на стол table-9 при счёте 1–0: результата здесь нет" in ru
    assert "ничья" not in ru
    assert "матч перенесён" in ru                               # the arbiter's act, by kind


def test_the_csv_keeps_every_turn_the_last_ended_by_the_move(moved, moved_ru) -> None:
    rows = list(csv.DictReader(io.StringIO(render(moved, "csv"))))
    assert rows[-1]["side"] == "right" and rows[-1]["end"] == "arbiter"
    assert rows[-1]["think_s"] == "30"                         # from 30 s to the move at 60 s
    ru = list(csv.reader(io.StringIO(render(moved_ru, "csv")[1:]), delimiter=";"))
    assert ru[-1][2] == "справа" and len(ru) == len(rows) + 1

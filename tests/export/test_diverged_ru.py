"""Records this firmware replays differently from what the journal holds (issue 25): the note
the report ("About this journal"), `gammonclock replay` and a recovered clock's log give is a
Problem, said in the match's language with the count in its plural form (1 запись, 2 записи,
5 записей; 1 record, 2 records), its English as a sentence whose verb agrees with no number."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gammonclock.cli.main import main
from gammonclock.config.problems import said
from gammonclock.export import read_match, render
from gammonclock.journal.key import read_key
from gammonclock.journal.replay import diverged_note
from journal_helpers import CONFIG, bodies_of, journaled_run, sealed

RU = '\n[display]\nlanguage = "ru"\n'


@pytest.mark.parametrize(("n", "ru", "en"), [
    (1, "1 запись", "1 record"), (2, "2 записи", "2 records"), (4, "4 записи", "4 records"),
    (5, "5 записей", "5 records"), (11, "11 записей", "11 records"),
    (21, "21 запись", "21 records"), (22, "22 записи", "22 records"),
])
def test_the_count_takes_its_plural_form(n: int, ru: str, en: str) -> None:
    note = diverged_note([f"record {seq}" for seq in range(7, 7 + n)])
    assert note == f"this version replays {en} differently (first: record 7)"
    assert said(note, "ru") == f"эта версия прошивки воспроизводит иначе {ru} (первая — запись 7)"


def _diverging(tmp_path: Path, config_text: str, records: int) -> Path:
    """A journal whose first `records` records with effects hold one effect more than this
    firmware computes (sealed anew with the device's key: a journal of an older version)."""
    path, _, _ = journaled_run(tmp_path, config_text=config_text)
    bodies = bodies_of(path)
    changed = 0
    for body in bodies[1:]:
        effects = body.get("data", {}).get("effects")
        if effects and changed < records:
            effects.append(json.loads(json.dumps(effects[-1])))
            changed += 1
    assert changed == records
    path.write_bytes(sealed(read_key(tmp_path / "state"), bodies))
    return path


@pytest.mark.parametrize(("records", "ru"), [(1, "1 запись"), (2, "2 записи"),
                                              (5, "5 записей")])
def test_the_russian_report_says_how_many_records_replay_differently(
        tmp_path: Path, records: int, ru: str) -> None:
    path = _diverging(tmp_path, CONFIG + RU, records)
    match = read_match(path)
    assert len(match.replayed.diverged) == records
    html = render(match, "html")
    assert f"эта версия прошивки воспроизводит иначе {ru} (первая — запись " in html
    assert "replays" not in html
    english = render(match, "html", language="en")
    assert "this version replays " in english and " differently (first: record " in english


def test_replay_says_it_in_the_matchs_language_on_the_clock_log(tmp_path: Path, capsys) -> None:
    path = _diverging(tmp_path, CONFIG, 2)
    assert main(["replay", str(path)]) == 0
    assert "this version replays 2 records differently (first: record " in \
        capsys.readouterr().err

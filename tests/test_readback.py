"""`gammonclock check-config` (SPEC §13.1): every problem of a file at once, or the match read
back in words an arbiter can read to the players."""

from __future__ import annotations

from pathlib import Path

import pytest

from gammonclock.cli import main
from gammonclock.config import parse_config
from gammonclock.readback import minutes_seconds, readback

ROOT = Path(__file__).resolve().parents[1]
M7 = '[match]\nlength = 7\n'


@pytest.mark.parametrize(("text", "label", "words"), [
    (M7, "discipline", "backgammon, a match to 7 points, Crawford rule"),
    (M7 + "crawford = false\n", "discipline", "backgammon, a match to 7 points, no Crawford rule"),
    ('[match]\ndiscipline = "longgammon"\nlength = 1\n', "discipline",
     "longgammon, a match to 1 point, no cube"),
    (M7, "start", "0-0"),
    (M7 + "start_score = [6, 2]\ncrawford_played = true\n", "start",
     "6-2, Crawford game already played"),
    ('[match]\ndiscipline = "longgammon"\nlength = 7\nstart_score = [1.5, 0]\n', "start", "1.5-0"),
    (M7 + "start_score = [6, 2]\n", "start", "6-2, game 1 is the Crawford game"),
    (M7 + "crawford = false\nstart_score = [6, 2]\ncrawford_played = true\n", "start", "6-2"),
    ('[match]\ndiscipline = "longgammon"\nlength = 7\ndraw_points = "half"\n', "draws",
     "0.5 points each"),
    (M7, "time", "14:00 each + 12 s delay (simple); a flag loses the match"),
    (M7 + '[time]\nmode = "bronstein"\ndelay = "10s"\n', "time",
     "14:00 each + 10 s delay (Bronstein); a flag loses the match"),
    (M7 + '[time]\nmode = "fischer"\ndelay = 2.5\n', "time",
     "14:00 each + 2.5 s a move (Fischer); a flag loses the match"),
    (M7 + '[time]\nmode = "none"\n', "time", "14:00 each, no delay; a flag loses the match"),
    (M7 + '[time]\ndelay = 0\n', "time", "14:00 each, no delay; a flag loses the match"),
    (M7 + '[time]\nreserve = "1h40m30.5s"\nflag_rule = "overtime"\novertime = "2m"\n', "time",
     "1:40:30.5 each + 12 s delay (simple); a first flag gives 2:00 once, a second loses"),
    (M7, "breaks", "1 per player, 5:00 each"),
    (M7 + "[breaks]\nper_player = 0\n", "breaks", "none"),
    ('[match]\ndiscipline = "sprintgammon"\nlength = 7\n', "breaks",
     "1 in the whole match, shared, 5:00, from 45:00"),
    ('[match]\ndiscipline = "longgammon"\nlength = 7\ndraw_points = "one"\n', "draws",
     "1 point each"),
    (M7 + '[players]\nleft = "Анна"\nright = "Boris"\n', "players", "left: Анна, right: Boris"),
    (M7 + '[event]\nname = "Moscow Open"\nround = "3"\n', "event", "Moscow Open, 3"),
])
def test_a_config_is_read_back_in_words(text, label, words):
    lines = dict(readback(parse_config(text, "t.toml")))
    assert lines[label] == words


def test_longgammon_alone_says_what_a_draw_scores_and_only_an_event_is_read_back():
    assert "draws" not in dict(readback(parse_config(M7, "t.toml")))
    assert "event" not in dict(readback(parse_config(M7, "t.toml")))


@pytest.mark.parametrize(("ns", "text"), [
    (14 * 60 * 10**9, "14:00"), (30 * 10**9, "0:30"), (3600 * 10**9, "1:00:00"),
    (90 * 10**9 + 25 * 10**7, "1:30.25"),
])
def test_spans_read_as_a_clock_shows_them(ns, text):
    assert minutes_seconds(ns) == text


def test_every_example_config_checks_good(capsys):
    files = sorted(str(p) for p in (ROOT / "config").glob("*.toml"))
    assert main(["check-config", *files]) == 0
    out = capsys.readouterr().out
    assert out.count(": good") == len(files)
    assert "players     left: Anna, right: Boris" in out


def test_a_bad_file_names_every_problem_and_the_good_ones_are_still_read_back(tmp_path, capsys):
    bad = tmp_path / "bad.toml"
    bad.write_text('[match]\nlength = 700\n[time]\nmode = "hourglass"\n', encoding="utf-8")
    good = tmp_path / "good.toml"
    good.write_text(M7, encoding="utf-8")
    assert main(["check-config", str(bad), str(good)]) == 2
    out, err = capsys.readouterr()
    assert f"{bad}: match.length: 700 is out of range" in err
    assert f"{bad}: time.mode" in err
    assert f"{good}: good" in out and str(bad) not in out

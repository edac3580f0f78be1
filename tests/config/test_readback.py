"""`gammonclock check-config` (SPEC §13.1): every problem of a file at once, or the match read
back in words an arbiter can read to the players."""

from __future__ import annotations

from pathlib import Path

import pytest

from gammonclock.cli.main import main
from gammonclock.config.loading import parse_config, parse_device_config
from gammonclock.config.readback import minutes_seconds, readback

ROOT = Path(__file__).resolve().parents[2]
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


# --- what a file is checked as (SPEC §13.1): the truth about a match file -----------------------

MATCH_ONLY = '[match]\nlength = 5\n[players]\nleft = "Anna"\nright = "Boris"\n'
WITH_DISPLAY = MATCH_ONLY + '[display]\nlanguage = "ru"\n'        # a match file may hold it
WITH_PINS_HALL = MATCH_ONLY + ('[pins]\nleft = 17\n'
                               '[hall]\nbroker = "mqtt://10.0.0.2:1883"\n')
DEVICE_ONLY = '[hardware]\npin_factory = "mock"\n[table]\nid = "T12"\n'

# (file, --as, exit status, the verdict's words)
CHECKS = [
    (MATCH_ONLY, None, 0, "good as a match file (judged by its sections): a running clock"),
    (WITH_DISPLAY, None, 0, "годится как файл матча (вид определён по разделам)"),
    (WITH_PINS_HALL, None, 0, "good as a combined file, device and match in one (judged by its "
                              "sections): for `simulate --config` and `run --config`"),
    (DEVICE_ONLY, None, 0, "good as a device config (judged by its sections)"),
    (MATCH_ONLY, "match", 0, "good as a match file: a running clock takes it"),
    (WITH_DISPLAY, "match", 0, "годится как файл матча: работающие часы его примут"),
    (WITH_PINS_HALL, "match", 2, "pins: a device section"),
    (DEVICE_ONLY, "match", 2, "hardware: a device section"),
    (MATCH_ONLY, "device", 2, "match: a match section"),
    (WITH_PINS_HALL, "device", 2, "match: a match section"),
    (DEVICE_ONLY, "device", 0, "good as a device config\n"),
    (MATCH_ONLY, "combined", 0, "good as a combined file, device and match in one: for"),
    (WITH_PINS_HALL, "combined", 0, "good as a combined file"),
    (DEVICE_ONLY, "combined", 2, "match.length"),
]


@pytest.mark.parametrize(("text", "kind", "status", "words"), CHECKS)
def test_check_config_says_what_a_file_was_checked_as(tmp_path, capsys, text, kind, status,
                                                      words):
    path = tmp_path / "f.toml"
    path.write_text(text, encoding="utf-8")
    assert main(["check-config", str(path), *(["--as", kind] if kind else [])]) == status
    out, err = capsys.readouterr()
    assert words in (out if status == 0 else err), (out, err)
    assert (": good" in out or ": годится" in out) is (status == 0)


def test_a_match_file_with_device_sections_is_not_passed_as_a_next_match(tmp_path, capsys):
    path = tmp_path / "match.toml"
    path.write_text(WITH_PINS_HALL, encoding="utf-8")
    assert main(["check-config", str(path)]) == 0      # good for simulate/run --config
    out = capsys.readouterr().out
    assert f"{path}: good as a combined file" in out and "good as a match file" not in out
    assert ("as a next match it would be refused: [pins], [hall] are device sections (a match "
            "file holds only [match], [players], [time], [breaks], [event], [display]); "
            f"`check-config --as match {path}` checks it as the clock would") in out


@pytest.mark.parametrize("text", [MATCH_ONLY, WITH_DISPLAY, WITH_PINS_HALL, DEVICE_ONLY,
                                  (ROOT / "config" / "backgammon.toml").read_text("utf-8"),
                                  (ROOT / "config" / "match.toml").read_text("utf-8")])
def test_check_config_as_match_agrees_with_the_clocks_loader(tmp_path, capsys, text):
    from gammonclock.config.loading import ConfigError
    from gammonclock.runtime.lifecycle import Table

    path = tmp_path / "next.toml"
    path.write_text(text, encoding="utf-8")
    table = Table(parse_device_config(DEVICE_ONLY, "device.toml"), tmp_path, lambda: b"k" * 32,
                  lambda: None, lambda: 0)             # type: ignore[arg-type, return-value]
    try:
        table.read_match(text, str(path))
    except ConfigError as exc:
        refused: str | None = str(exc)
    else:
        refused = None
    status = main(["check-config", "--as", "match", str(path)])
    err = capsys.readouterr().err
    assert status == (2 if refused else 0)
    if refused:
        assert refused.strip() in err


def test_the_match_examples_check_is_the_clocks(tmp_path, capsys):
    """config/match.toml's header tells the arbiter how to check the file: each command it
    gives passes the file and refuses one that the clock would refuse."""
    text = (ROOT / "config" / "match.toml").read_text(encoding="utf-8")
    commands = [line.split("gammonclock check-config", 1)[1].split()
                for line in text.splitlines() if "gammonclock check-config" in line]
    assert commands
    device = tmp_path / "device.toml"
    device.write_text(DEVICE_ONLY, encoding="utf-8")
    combined = tmp_path / "combined.toml"
    combined.write_text(WITH_PINS_HALL, encoding="utf-8")

    def check(words: list[str], match: Path) -> int:
        paths = {"/etc/gammonclock/match.toml": str(match),
                 "/etc/gammonclock/device.toml": str(device)}
        return main(["check-config", *[paths.get(w, w) for w in words]])

    for words in commands:
        assert check(words, ROOT / "config" / "match.toml") == 0, words
        assert check(words, combined) == 2, words
        assert "pins: a device section" in capsys.readouterr().err

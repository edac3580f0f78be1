"""The arbiter's export (SPEC §11): CSV of turns, JSON, HTML report, from a journal.

The journals are made by playing scripted matches through a real `Session` with a
`JournalWriter`, as the device and `gammonclock simulate --journal` do; wall-clock stamps are the
engine's instant plus a fixed epoch, so every wall time in the export can be checked exactly.
"""

from __future__ import annotations

import base64
import csv
import html
import io
import json
import math
import re
from decimal import Decimal
from pathlib import Path

import pytest

from export_helpers import (
    CONFIG_11,
    EDGE_CASES,
    KEY,
    LEFT_NAME,
    RIGHT_NAME,
    WALL0,
    Played,
    eleven_point_script,
    play_journal,
)
from gammonclock.core.effects import (
    DiceRolled,
    Rewound,
    RollVoided,
    TurnEnded,
    TurnStarted,
)
from gammonclock.durations import NS_PER_S
from gammonclock.export import ExportError, TamperedJournal, export_journal, load_match
from gammonclock.export.chart import reserve_series
from gammonclock.export.json_out import document
from gammonclock.export.stats import dice_stats
from gammonclock.export.text import iso_utc
from gammonclock.journal.reader import read_journal
from gammonclock.journal.records import Stamp
from gammonclock.journal.replay import replay
from gammonclock.journal.verify import verify
from gammonclock.runtime.session import Session
from gammonclock.sides import Side
from gammonclock.sim.script import parse_script
from gammonclock.sim.simulate import run_script

GAME_SCORES = [(0, 2), (1, 2), (5, 1), (5, 5), (9, 5), (10, 5), (10, 6), (12, 6)]


@pytest.fixture(scope="module")
def match11(tmp_path_factory) -> Played:
    script = eleven_point_script()
    played = play_journal(tmp_path_factory.mktemp("m11"), CONFIG_11, script.text())
    played.script = script
    state = played.session.engine.state_json()
    assert state["phase"] == "match_over" and state["winner"] == "left", state
    assert state["score"] == {"left": 12, "right": 6}
    return played


@pytest.fixture(scope="module")
def exported(match11, tmp_path_factory) -> dict[str, Path]:
    out = tmp_path_factory.mktemp("out")
    paths = {fmt: out / f"match.{fmt}" for fmt in ("csv", "json", "html")}
    for fmt, path in paths.items():
        export_journal(match11.path, fmt, path)
    return paths


def csv_rows(path: Path) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(path.read_text(encoding="utf-8"))))


def ns(seconds_text: str) -> int:
    value = Decimal(seconds_text) * NS_PER_S
    assert value == value.to_integral_value()
    return int(value)


# --- the match itself ------------------------------------------------------------------------

def test_the_match_has_what_the_export_must_handle(match11):
    kinds = {e.kind for e in match11.effects}
    assert {"rewound", "undone", "double_offered", "double_taken", "roll_voided", "paused",
            "break_started", "break_overrun", "reserve_changed", "score_changed", "warned",
            "refused", "dice_rolled", "match_ended"} <= kinds
    # Turns were retracted: by holds that entered results and by the arbiter's undo.
    all_ends = [e for e in match11.effects if isinstance(e, TurnEnded)]
    assert len(all_ends) > len(match11.kept_of(TurnEnded))
    assert sum(isinstance(e, Rewound) and e.why == "undo" for e in match11.effects) == 1


# --- CSV -------------------------------------------------------------------------------------

def test_csv_has_one_row_per_surviving_turn(match11, exported):
    rows = csv_rows(exported["csv"])
    started = match11.kept_of(TurnStarted)
    ended = match11.kept_of(TurnEnded)
    assert len(rows) == len(started) == len(ended)
    assert [r["side"] for r in rows] == [e.side.value for e in started]
    assert [r["player"] for r in rows] == [LEFT_NAME if e.side is Side.LEFT else RIGHT_NAME
                                           for e in started]
    assert [ns(r["think_s"]) for r in rows] == [e.span for e in ended]
    assert [ns(r["reserve_after_s"]) for r in rows] == [e.reserve_after for e in ended]
    assert [ns(r["delay_used_s"]) for r in rows] == [e.delay_used for e in ended]
    assert [r["end"] for r in rows] == [e.reason.value for e in ended]
    assert [r["start_utc"] for r in rows] == [iso_utc(WALL0 + e.t) for e in started]
    assert [ns(r["match_time_s"]) for r in rows] == [e.t for e in started]


def test_csv_think_times_sum_exactly_to_charged_plus_delay(match11, exported):
    rows = csv_rows(exported["csv"])
    ended = match11.kept_of(TurnEnded)
    total = sum(Decimal(r["think_s"]) for r in rows)
    assert total * NS_PER_S == sum(e.charged + e.delay_used for e in ended)
    for side in Side:
        mine = [r for r in rows if r["side"] == side.value]
        assert (sum(Decimal(r["charged_s"]) for r in mine) * NS_PER_S
                == sum(e.charged for e in ended if e.side is side))


def test_csv_leaves_out_retracted_turns(match11, exported):
    rows = csv_rows(exported["csv"])
    starts = {(r["side"], ns(r["match_time_s"])) for r in rows}
    # Four results held on the holder's own turn (the down edge switched first) and the
    # switch the arbiter undid.
    assert match11.script is not None and len(match11.script.retracted_starts) == 5
    for side, t in match11.script.retracted_starts:
        assert (side.value, t) not in starts
    # Every turn the live engine reported and then retracted is gone, and only those.
    retracted = [e for e in match11.effects if isinstance(e, TurnStarted)
                 and not any(k is e for k in match11.kept)]
    assert retracted and all((e.side.value, e.t) not in starts for e in retracted)


def test_csv_turn_numbers_games_and_break_overrun(match11, exported):
    rows = csv_rows(exported["csv"])
    games = [int(r["game"]) for r in rows]
    assert games == sorted(games) and set(games) == set(range(1, 9))
    for g in range(1, 9):
        numbers = [int(r["turn"]) for r in rows if int(r["game"]) == g and r["turn"] != "0"]
        assert numbers == list(range(1, len(numbers) + 1))
    late = [r for r in rows if r["end"] == "break_over"]
    assert len(late) == 1 and late[0]["turn"] == "0" and late[0]["side"] == "right"
    assert late[0]["think_s"] == "20" and late[0]["charged_s"] == "20"
    assert late[0]["game"] == "4"                      # the game the break came before


def test_csv_cube_actions(match11, exported):
    rows = csv_rows(exported["csv"])
    actions = [(int(r["game"]), r["side"], r["cube"]) for r in rows if r["cube"]]
    assert match11.script is not None
    assert actions == [(g, s.value, a) for g, s, a in match11.script.cube_actions]
    assert [a for _, _, a in actions].count("passed") == 1
    # The doubler's turn ends with the double; the taker's decision turn with the take.
    for row in rows:
        if row["cube"].startswith("doubled"):
            assert row["end"] == "double"
        elif row["cube"].startswith("took"):
            assert row["end"] == "take"
        elif row["cube"] == "passed":
            assert row["end"] == "result"


def test_csv_dice(match11, exported):
    rows = csv_rows(exported["csv"])
    rolled = [e for e in match11.kept_of(DiceRolled) if e.turn > 0]
    shown = " ".join(r["dice"] for r in rows)
    voided = match11.kept_of(RollVoided)
    assert len(voided) == 1 and voided[0].dice == (6, 5)
    # Every roll of a move is in the table once, the void one excepted.
    listed = re.findall(r"(?<!opening )\b(\d-\d)\b", shown)
    assert len(listed) == len(rolled) - 1
    assert "6-5" not in [d for r in rows for d in r["dice"].split() if r["turn"] == "4"
                         and r["game"] == "1"]
    assert "4-2 (early)" in shown
    firsts = [r for r in rows if r["turn"] == "1"]
    assert len(firsts) == 8 and all(r["dice"].startswith("opening ") for r in firsts)
    assert firsts[0]["dice"] == "opening 3-5"


def test_csv_of_a_journal_with_a_turn_still_running(tmp_path):
    played = play_journal(tmp_path, CONFIG_11, """\
        0 roll 2
        0.5 roll 5
        1 tap left
        15 tap right
        24 tap left
        30 end
        """.replace("        ", ""))
    out = tmp_path / "turns.csv"
    export_journal(played.path, "csv", out)
    rows = csv_rows(out)
    assert [r["end"] for r in rows] == ["switch", "switch", "open"]
    assert rows[-1]["side"] == "right" and rows[-1]["think_s"] == ""
    assert rows[0]["think_s"] == "14" and rows[0]["charged_s"] == "2"
    assert rows[0]["reserve_after_s"] == "1318"


# --- JSON ------------------------------------------------------------------------------------

def test_json_round_trips_and_ends_in_the_replayed_state(match11, exported):
    text = exported["json"].read_text(encoding="utf-8")
    doc = json.loads(text)
    assert doc == json.loads(json.dumps(doc))
    # nothing lost on the way to text (the verdict: the chain checked, no key given)
    assert doc == document(load_match(match11.path), verify(match11.path, None))
    replayed = replay(read_journal(match11.path))
    assert doc["final_state"] == replayed.engine.state_json()
    assert doc["final_state"] == match11.session.engine.state_json()


def test_json_seal_ties_the_export_to_its_journal(match11, exported):
    doc = json.loads(exported["json"].read_text(encoding="utf-8"))
    lines = match11.path.read_bytes().splitlines()
    assert doc["seal"]["records"] == len(lines)
    assert doc["seal"]["last_mac"] == json.loads(lines[-1])["mac"]
    read = read_journal(match11.path)
    assert read.records[doc["seal"]["records"] - 1].mac == doc["seal"]["last_mac"]
    records = len(lines)
    assert doc["seal"]["verified"] == {"intact": True, "records": records,
                                       "message": f"intact: {records} records",
                                       "seal": "not checked", "sealed_by": None}
    assert doc["seal"]["check"] == (f"seal not checked: no device key given; chain intact: "
                                    f"{records} records")


def test_json_match_games_and_players(match11, exported):
    doc = json.loads(exported["json"].read_text(encoding="utf-8"))
    assert doc["players"] == {"left": LEFT_NAME, "right": RIGHT_NAME}
    assert doc["discipline"] == "backgammon"
    assert "config" in doc["header"] and doc["header"]["config_path"] == "table.toml"
    assert doc["rules"]["length"] == 11 and doc["rules"]["reserve_ns"] == 22 * 60 * NS_PER_S
    assert [(g["score_after"]["left"], g["score_after"]["right"]) for g in doc["games"]] \
        == GAME_SCORES
    kinds = [(g["result"]["winner"], g["result"]["kind"], g["result"]["points"])
             for g in doc["games"]]
    assert kinds == [("right", "single", 2), ("left", "pass", 1), ("left", "gammon", 4),
                     ("right", "single", 4), ("left", "gammon", 4), ("left", "single", 1),
                     ("right", "single", 1), ("left", "single", 2)]
    assert [g["crawford"] for g in doc["games"]] == [False] * 6 + [True, False]
    assert doc["result"] == {"winner": "left", "winner_name": LEFT_NAME, "reason": "score",
                             "score": {"left": 12, "right": 6}}
    assert len(doc["turns"]) == len(match11.kept_of(TurnEnded))


def test_json_arbiter_actions_breaks_pauses(match11, exported):
    doc = json.loads(exported["json"].read_text(encoding="utf-8"))
    acts = {a["command"]: a for a in doc["arbiter_actions"]}
    assert set(acts) == {"warn right slow play", "deduct right 30s", "deduct left 1200s",
                         "point right", "undo", "add left 15s"}
    assert acts["deduct left 1200s"]["refused"].startswith("more than half")
    assert not acts["deduct left 1200s"]["penalty"]
    assert acts["deduct right 30s"]["penalty"] and acts["point right"]["penalty"]
    assert acts["deduct right 30s"]["outcome"][0]["change"] == -30 * NS_PER_S
    assert acts["undo"]["outcome"][0]["kind"] == "undone"
    assert [(b["side"], b["overrun_ns"]) for b in doc["breaks"]] \
        == [("left", 0), ("right", 20 * NS_PER_S)]
    assert [(p["by"], p["resumed_by"], p["duration_ns"]) for p in doc["pauses"]] \
        == [("cube", "cube", 60 * NS_PER_S)]


def test_json_time_stats_add_up(match11, exported):
    doc = json.loads(exported["json"].read_text(encoding="utf-8"))
    ended = match11.kept_of(TurnEnded)
    for side in Side:
        stats = doc["time_stats"][side.value]
        moves = [e for e in ended if e.side is side and e.reason.value != "break_over"]
        assert stats["turns"] == len(moves)
        assert stats["think_ns"] == sum(e.span for e in moves)
        assert stats["longest_think"]["ns"] == max(e.span for e in moves)
        spans = sorted(e.span for e in moves)
        mid = len(spans) // 2
        median = spans[mid] if len(spans) % 2 else (spans[mid - 1] + spans[mid]) // 2
        assert stats["median_think_ns"] == median
        final = match11.session.engine.match.reserve_at(side)
        assert stats["reserve_left_ns"] == final


def test_json_dice(match11, exported):
    doc = json.loads(exported["json"].read_text(encoding="utf-8"))
    rolls = doc["dice"]["rolls"]
    assert doc["dice"]["recorded"] and len(rolls) == len(match11.kept_of(DiceRolled))
    assert [r["dice"] for r in rolls if r["voided"]] == [[6, 5]]
    standing = [r["dice"] for r in rolls if not r["voided"]]
    overall = doc["dice"]["stats"]["overall"]
    assert overall["dice"] == sum(len(d) for d in standing)
    assert overall["faces"] == {str(f): sum(d.count(f) for d in standing) for f in range(1, 7)}
    per_side = doc["dice"]["stats"]["left"]["dice"] + doc["dice"]["stats"]["right"]["dice"]
    assert per_side == overall["dice"] - 16        # 8 games' opening dice: roller unknown


# --- HTML ------------------------------------------------------------------------------------

def test_html_is_self_contained(exported):
    page = exported["html"].read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>")
    assert not re.search(r"""(src|href)\s*=\s*["']?\s*(https?:)?//""", page, re.I)
    assert "<script" not in page and "<link" not in page and "@import" not in page
    assert "url(" not in page
    images = re.findall(r'<img src="data:image/png;base64,([A-Za-z0-9+/=]+)"', page)
    assert len(images) == 2                           # the reserves and the dice
    for data in images:
        assert base64.b64decode(data).startswith(b"\x89PNG\r\n\x1a\n")


def test_html_escapes_the_names(exported):
    page = exported["html"].read_text(encoding="utf-8")
    for name in (LEFT_NAME, RIGHT_NAME):
        assert name not in page
        assert html.escape(name, quote=True) in page
    assert "<b>O'Neil</b>" not in page


def test_html_has_scores_statistics_penalties_breaks(match11, exported):
    page = exported["html"].read_text(encoding="utf-8")
    for left, right in GAME_SCORES:
        assert f"<td>{left}–{right}</td>" in page
    assert "12–6 (score)" in page
    for label in ("Total think time", "Median think", "Longest think", "Reserve left"):
        assert label in page
    doc = document(load_match(match11.path))
    for side in Side:
        longest = doc["time_stats"][side.value]["longest_think"]
        tenths = longest["ns"] // (NS_PER_S // 10)
        assert f"{tenths // 10}.{tenths % 10} s (game {longest['game']}, " \
               f"turn {longest['turn']})" in page
    for text in ("deduct right 30s", "point right", "undo", "refused: more than half"):
        assert text in page
    assert "Breaks" in page and "Pauses" in page
    chi = doc["dice"]["stats"]["overall"]["chi_square"]
    assert f"{chi:.2f}" in page and "Are the dice fair?" in page


def test_html_without_dice_has_no_dice_section(tmp_path):
    played = play_journal(tmp_path, CONFIG_11, "1 tap left\n15 tap right\n20 end\n")
    out = tmp_path / "report.html"
    export_journal(played.path, "html", out)
    page = out.read_text(encoding="utf-8")
    assert "<h2>Dice</h2>" not in page
    assert len(re.findall(r"data:image/png;base64,", page)) == 1


# --- the chart's data ------------------------------------------------------------------------

def test_reserve_series_follows_the_turns(match11):
    match = load_match(match11.path)
    series = reserve_series(match)
    for e in match11.kept_of(TurnEnded):
        assert (e.t, e.reserve_after) in series[e.side]
    for side in Side:
        assert series[side][-1][1] == match11.session.engine.match.reserve_at(side)
        times = [t for t, _ in series[side]]
        assert times == sorted(times)
        assert all(r >= 0 for _, r in series[side])


# --- dice statistics -------------------------------------------------------------------------

def chi_square_sf_5(x: float) -> float:
    """P(X ≥ x) for chi-square with 5 degrees of freedom, in closed form:
    erfc(√(x/2)) + √(2x/π)·e^(−x/2)·(1 + x/3)."""
    return math.erfc(math.sqrt(x / 2)) + math.sqrt(2 * x / math.pi) * math.exp(-x / 2) * (1 + x / 3)


def test_dice_stats_against_a_hand_computation():
    throws = [(1, 1), (2, 3), (6, 6), (4, 5), (1, 2), (3, 3), (6, 1), (5, 5), (2, 4), (6, 6),
              (3,), (5,)]
    stats = dice_stats(throws)
    faces = (4, 3, 4, 2, 4, 5)                    # counted by hand
    assert stats.faces == faces and stats.dice == 22 and stats.rolls == 12
    expected = 22 / 6
    chi = sum((o - expected) ** 2 / expected for o in faces)
    assert chi == pytest.approx(16 / 11)          # Σo² = 86; 86·6/22 − 22 = 16/11
    assert stats.chi_square == pytest.approx(chi, rel=1e-12)
    assert stats.p_value == pytest.approx(chi_square_sf_5(chi), rel=1e-9)
    assert (stats.pairs, stats.doubles, stats.doubles_rate) == (10, 5, 0.5)
    # Two-sided exact binomial test: every outcome no likelier than 5 doubles in 10; with
    # p = 1/6 those are 5..10 only (no count below 5 is that unlikely).
    assert stats.doubles_p_value == pytest.approx(
        sum(math.comb(10, k) * (1 / 6) ** k * (5 / 6) ** (10 - k) for k in range(5, 11)),
        rel=1e-9)
    assert "too few" in stats.reading()           # 22 dice: under 5 per face expected


def test_dice_stats_readings():
    fair = dice_stats([(f, f % 6 + 1) for f in range(1, 7)] * 5)        # 10 of each face
    assert fair.chi_square == 0 and fair.p_value == pytest.approx(1.0)
    assert fair.reading().startswith("Nothing unusual")
    loaded = dice_stats([(6, 6)] * 20 + [(1, 2), (3, 4), (5, 1)] * 5)
    expected = loaded.dice / 6
    hand = sum((o - expected) ** 2 / expected for o in loaded.faces)
    assert loaded.chi_square == pytest.approx(hand)
    assert loaded.p_value == pytest.approx(chi_square_sf_5(hand), rel=1e-6, abs=1e-300)
    assert loaded.p_value < 0.01 and "Check the dice" in loaded.reading()
    empty = dice_stats([])
    assert empty.dice == 0 and empty.p_value is None and empty.doubles_rate is None


# --- bad input -------------------------------------------------------------------------------

def test_bad_journals_give_clear_errors(tmp_path, match11):
    out = tmp_path / "out.csv"
    with pytest.raises(ExportError, match="cannot read the journal"):
        export_journal(tmp_path / "missing.jsonl", "csv", out)
    garbage = tmp_path / "garbage.jsonl"
    garbage.write_text("this is not a journal\n")
    # It does not verify (as `gammonclock verify` says): refused; allowed, it is no journal.
    with pytest.raises(TamperedJournal, match="garbage.jsonl: TAMPERED: line 1"):
        export_journal(garbage, "csv", out)
    with pytest.raises(ExportError, match="garbage.jsonl: no header record"):
        export_journal(garbage, "csv", out, allow_tampered=True)
    with pytest.raises(ExportError, match="unknown export format 'pdf'"):
        export_journal(match11.path, "pdf", out)
    with pytest.raises(ExportError, match="the journal itself"):
        export_journal(match11.path, "csv", match11.path)
    assert not out.exists()


def test_a_journal_whose_config_is_broken(tmp_path):
    played = play_journal(tmp_path, CONFIG_11, "1 tap left\n5 end\n")
    lines = played.path.read_bytes().splitlines(keepends=True)
    header = json.loads(lines[0])
    body = {k: v for k, v in header.items() if k not in ("mac", "sum")}
    body["data"]["config"] = "[match]\nlength = 0\n"
    from gammonclock.journal.records import encode
    broken = tmp_path / "broken.jsonl"
    broken.write_bytes(encode(KEY, body) + b"".join(lines[1:]))
    # (its header rewritten, the chain no longer holds: exported only when allowed)
    with pytest.raises(ExportError, match="broken.jsonl.*config in its header"):
        export_journal(broken, "json", tmp_path / "out.json", allow_tampered=True)


def test_a_torn_journal_is_exported_with_a_note(tmp_path, match11):
    torn = tmp_path / "torn.jsonl"
    blob = match11.path.read_bytes()
    torn.write_bytes(blob[:-40])                      # a power cut in the last record
    export_journal(torn, "json", tmp_path / "torn.json")
    doc = json.loads((tmp_path / "torn.json").read_text(encoding="utf-8"))
    assert any("torn last record" in n for n in doc["journal"]["notes"])
    assert doc["seal"]["records"] == len(blob.splitlines()) - 1
    export_journal(torn, "html", tmp_path / "torn.html")
    assert "torn last record" in (tmp_path / "torn.html").read_text(encoding="utf-8")


def test_the_seal_check_with_the_device_key(tmp_path, match11):
    export_journal(match11.path, "json", tmp_path / "ok.json", key=KEY)
    doc = json.loads((tmp_path / "ok.json").read_text(encoding="utf-8"))
    assert doc["seal"]["verified"]["intact"] is True
    # A record whose seal was forged: not exported (SPEC §14.1); allowed, it says so first.
    lines = match11.path.read_bytes().splitlines(keepends=True)
    record = json.loads(lines[5])
    record["mac"] = "0" * 64
    lines[5] = json.dumps(record, sort_keys=True, separators=(",", ":")).encode() + b"\n"
    forged = tmp_path / "forged.jsonl"
    forged.write_bytes(b"".join(lines))
    with pytest.raises(TamperedJournal, match="record 5 was altered") as refused:
        export_journal(forged, "html", tmp_path / "forged.html", key=KEY)
    assert not refused.value.verdict.intact and not (tmp_path / "forged.html").exists()
    export_journal(forged, "html", tmp_path / "forged.html", key=KEY, allow_tampered=True)
    page = (tmp_path / "forged.html").read_text(encoding="utf-8")
    assert "TAMPERED" in page and "record 5 was altered" in page


# --- other disciplines, time controls and endings ---------------------------------------------

@pytest.mark.parametrize("case", list(EDGE_CASES))
def test_other_matches_export_in_every_format(tmp_path, case):
    config, script = EDGE_CASES[case]
    played = play_journal(tmp_path, config, script)
    for fmt in ("csv", "json", "html"):
        export_journal(played.path, fmt, tmp_path / f"out.{fmt}")
    rows = csv_rows(tmp_path / "out.csv")
    started, ended = played.kept_of(TurnStarted), played.kept_of(TurnEnded)
    assert [r["side"] for r in rows] == [e.side.value for e in started]
    assert [ns(r["think_s"]) for r in rows if r["end"] != "open"] == [e.span for e in ended]
    doc = json.loads((tmp_path / "out.json").read_text(encoding="utf-8"))
    assert doc["final_state"] == played.session.engine.state_json()
    assert "data:image/png;base64," in (tmp_path / "out.html").read_text(encoding="utf-8")
    series = reserve_series(load_match(played.path))
    for side in Side:
        assert series[side][-1][1] == played.session.engine.match.reserve_at(side)
    for e in ended:
        assert (e.t, e.reserve_after) in series[e.side]


def exported_doc(tmp_path: Path, case: str) -> dict:
    played = play_journal(tmp_path, *EDGE_CASES[case])
    export_journal(played.path, "json", tmp_path / "out.json")
    return json.loads((tmp_path / "out.json").read_text(encoding="utf-8"))


def test_longgammon_draw_and_a_forfeit_before_the_game(tmp_path):
    doc = exported_doc(tmp_path, "longgammon draw, forfeit between games")
    first, second = doc["games"]
    assert first["result"] == {"winner": None, "winner_name": "", "kind": "draw", "points": 0.5}
    assert first["score_after"] == {"left": 0.5, "right": 0.5} and first["white"] == "left"
    assert second["start"] is None and second["by_arbiter"]
    assert second["score_after"] == {"left": 0.5, "right": 1.5}
    assert doc["result"] is None and doc["final_state"]["phase"] == "between_games"


def test_flag_with_overtime(tmp_path):
    doc = exported_doc(tmp_path, "bronstein, overtime, second flag")
    assert [i["kind"] for i in doc["incidents"]] == ["overtime_given", "flag_fell",
                                                     "match_ended"]
    assert doc["result"]["reason"] == "flag" and doc["games"][0]["match_ended"] == "flag"
    last = doc["turns"][-1]
    assert last["end_reason"] == "flag" and last["reserve_after_ns"] == 0


def test_disqualified_while_paused(tmp_path):
    doc = exported_doc(tmp_path, "fischer, disqualified while paused")
    assert doc["result"]["reason"] == "disqualified"
    assert [(p["by"], p["resumed_by"], p["duration_ns"]) for p in doc["pauses"]] \
        == [("arbiter", "match over", 18 * NS_PER_S)]
    assert doc["arbiter_actions"][-1]["penalty"]


def test_third_rejected_challenge(tmp_path):
    doc = exported_doc(tmp_path, "three rejected challenges")
    assert doc["result"]["reason"] == "challenges" and doc["result"]["winner"] == "right"
    assert [a["outcome"][0]["rejected"] for a in doc["arbiter_actions"]] == [1, 2, 2, 3]


def test_wall_clock_times_across_a_power_cut(tmp_path):
    """After an outage the engine's clock goes on from the last record while the wall clock
    jumped: each turn's wall-clock start comes from the records of its own boot."""
    from gammonclock.runtime.session import recover

    played = play_journal(tmp_path, CONFIG_11, "1 tap left\n15 tap right\n20 end\n")
    outage = 600 * NS_PER_S
    live: list[Session] = []

    def stamps() -> Stamp:
        now = live[0].engine.now if live else 20 * NS_PER_S
        return Stamp(now, "boot-2", WALL0 + outage + now)

    session, _ = recover(played.path, KEY, stamps, checkpoint_ns=5 * NS_PER_S)
    live.append(session)
    rest = parse_script("25 arbiter resume\n30 tap left\n40 tap right\n45 end\n",
                        session.engine.rules.hold_ns)
    run_script(session, rest.inputs, rest.end)
    session.close()
    out = tmp_path / "turns.csv"
    export_journal(played.path, "csv", out)
    rows = csv_rows(out)
    assert [(r["side"], r["match_time_s"], r["think_s"]) for r in rows] == [
        ("right", "1", "14"), ("left", "15", "10"), ("right", "30", "10"), ("left", "40", "")]
    assert [r["start_utc"] for r in rows] == [
        iso_utc(WALL0 + 1 * NS_PER_S), iso_utc(WALL0 + 15 * NS_PER_S),
        iso_utc(WALL0 + outage + 30 * NS_PER_S), iso_utc(WALL0 + outage + 40 * NS_PER_S)]
    export_journal(played.path, "json", tmp_path / "out.json")
    doc = json.loads((tmp_path / "out.json").read_text(encoding="utf-8"))
    assert [(p["by"], p["resumed_by"]) for p in doc["pauses"]] == [("recovery", "arbiter")]
    assert [i["kind"] for i in doc["incidents"]] == ["recovered"]


def test_time_added_is_time_given_not_a_penalty(match11, exported):
    doc = json.loads(exported["json"].read_text(encoding="utf-8"))
    acts = {a["command"]: a for a in doc["arbiter_actions"]}
    assert (acts["add left 15s"]["category"], acts["add left 15s"]["penalty"]) \
        == ("time given", False)
    assert (acts["deduct right 30s"]["category"], acts["deduct right 30s"]["penalty"]) \
        == ("time taken", True)
    page = exported["html"].read_text(encoding="utf-8")
    assert "<h2>Penalties and arbiter actions</h2>" not in page
    assert ('<code>add left 15s</code></td><td><span class="given">time given</span>'
            in page)

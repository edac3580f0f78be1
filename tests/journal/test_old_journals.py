"""A journal written by an earlier firmware (before the reason codes, the explicit effect kinds
and the one scheduler of issue 8) still replays to the state it recorded, with no record
replaying differently, still verifies, and exports the same CSV of turns."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from gammonclock.cli.main import main
from gammonclock.journal.reader import read_journal
from gammonclock.journal.replay import replay
from gammonclock.sides import Side

DATA = Path(__file__).parents[1] / "data" / "before-issue8"


def test_an_old_journal_replays_to_the_state_it_recorded():
    replayed = replay(read_journal(DATA / "match11.jsonl"))
    assert replayed.diverged == []
    expected = json.loads((DATA / "state.json").read_text())
    assert replayed.engine.state_json() == expected


def test_an_old_journal_still_verifies_and_exports_the_same_turns(tmp_path, capsys):
    state = tmp_path / "state"
    state.mkdir()
    shutil.copy(DATA / "device.key", state / "device.key")
    assert main(["verify", str(DATA / "match11.jsonl"), "--state-dir", str(state)]) == 0
    assert "intact" in capsys.readouterr().out
    out = tmp_path / "turns.csv"
    assert main(["export", str(DATA / "match11.jsonl"), "--format", "csv", "--out", str(out),
                 "--state-dir", str(state)]) == 0
    assert out.read_text() == (DATA / "match11.csv").read_text()


# --- a journal written before issue 18: the PIN in clear, its taps as button edges ------------

PIN_DATA = Path(__file__).parents[1] / "data" / "before-issue18"


def test_an_old_journal_with_a_panel_pin_replays_as_it_was_played():
    """Its wrong PIN failed at the PIN's 4th tap, the right one opened the menu, a timeout
    failed; the replay judges its taps as they were judged then (the clear PIN of its header),
    with not one record replaying differently."""
    replayed = replay(read_journal(PIN_DATA / "match.jsonl"))
    assert replayed.diverged == []
    assert replayed.engine.state_json() == json.loads((PIN_DATA / "state.json").read_text())
    match = replayed.engine.match
    expected = json.loads((PIN_DATA / "match.json").read_text())
    assert (match.pin_failures, match.chord_locked_until, match.now) == (
        expected["pin_failures"], expected["chord_locked_until"], expected["now"])
    assert {s.value: match.reserve_at(s) for s in Side} == expected["reserve_ns"]
    refusals = [e.get("reason") for r in read_journal(PIN_DATA / "match.jsonl").records
                if r.kind in ("input", "tick") for e in r.data["effects"]
                if e["kind"] in ("refused", "arbiter_command")]
    assert refusals == ["pin_wrong", None, None, "pin_timeout"]
    assert replayed.config.rules.arbiter_pin is not None
    assert replayed.config.rules.arbiter_pin.legacy_pin == "LRCL"


def test_an_old_journal_with_a_panel_pin_still_verifies(tmp_path, capsys):
    state = tmp_path / "state"
    state.mkdir()
    shutil.copy(PIN_DATA / "device.key", state / "device.key")
    assert main(["verify", str(PIN_DATA / "match.jsonl"), "--state-dir", str(state)]) == 0
    assert "intact" in capsys.readouterr().out


# --- a journal written before issue 31: penalty points in its snapshots' history --------------

PENALTY_DATA = Path(__file__).parents[1] / "data" / "before-issue31"


def test_an_old_journals_snapshots_hold_on_the_fields_they_have(tmp_path, capsys):
    """Its snapshots' effects have no `penalty` (ScoreChanged's newer field, which this firmware
    sets for a penalty point): compared on the fields they have, they still hold, and the
    journal is intact (it read TAMPERED, "its snapshot is not the replay's match")."""
    replayed = replay(read_journal(PENALTY_DATA / "match.jsonl"))
    assert replayed.diverged == [] and replayed.snapshots_differ == []
    assert replayed.engine.state_json()["score"] == {"left": 2, "right": 1}
    state = tmp_path / "state"
    state.mkdir()
    shutil.copy(PENALTY_DATA / "device.key", state / "device.key")
    assert main(["verify", str(PENALTY_DATA / "match.jsonl"), "--state-dir", str(state)]) == 0
    assert "intact: 20 records" in capsys.readouterr().out

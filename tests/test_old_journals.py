"""A journal written by an earlier firmware (before the reason codes, the explicit effect kinds
and the one scheduler of issue 8) still replays to the state it recorded, with no record
replaying differently, still verifies, and exports the same CSV of turns."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from gammonclock.cli import main
from gammonclock.journal import read_journal
from gammonclock.session import replay

DATA = Path(__file__).parent / "data" / "before-issue8"


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

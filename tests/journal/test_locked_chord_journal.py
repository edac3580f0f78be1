"""A chord during a PIN lockout in the journal (SPEC §13.4, issue 31): the session journals its
edges, and a replay of the journal gives the match the clock played, the chord undone; every new
journal's header says so (`lockout_chord`). A journal written before (no such key: its chord's
presses stood as presses) still replays as it was played."""

from __future__ import annotations

import textwrap
from dataclasses import replace
from pathlib import Path

import pytest

from arbiter_helpers import OPENING, PIN, RIGHT_PIN_TAPS, WRONG_PIN_TAPS, chord, entry, taps
from gammonclock.config.loading import LOCKOUT_CHORD, parse_config
from gammonclock.core.engine import Engine
from gammonclock.core.pin import hash_pin
from gammonclock.journal.files import journal_header
from gammonclock.journal.key import load_or_create_key
from gammonclock.journal.reader import read_journal
from gammonclock.journal.replay import replay
from gammonclock.journal.writer import JournalWriter
from gammonclock.runtime.session import Session
from gammonclock.sim.script import parse_script
from gammonclock.sim.simulate import run_script
from journal_helpers import fake_stamps

HASH = hash_pin(PIN).hashed
CONFIG = ('[match]\nlength = 7\n[players]\nleft = "Anna"\nright = "Boris"\n'
          f'[arbiter]\npin_hash = "{HASH}"\n')
FAILURES = "".join(chord(start) + entry(start + 5, WRONG_PIN_TAPS) for start in (20, 60, 100))
# The attack: left held 2 s (a result entry), right's press confirms, the cube's completes it.
ATTACK = ("150 down left\n152.5 down right\n152.6 down cube\n"
          "156 up left\n156 up right\n156 up cube\n")
SCRIPT = OPENING + FAILURES + ATTACK + "170 end\n"


def journaled(tmp_path: Path, before_issue_31: bool, script: str = SCRIPT
              ) -> tuple[Path, Engine]:
    """The script played by a journaled session; `before_issue_31`: as a firmware from before
    played and journaled it (its header without `lockout_chord`, its chord's presses acting)."""
    config = parse_config(CONFIG, "test.toml")
    rules, header = config.rules, journal_header(CONFIG, "test.toml")
    assert header[LOCKOUT_CHORD] == "undone"
    if before_issue_31:
        del header[LOCKOUT_CHORD]
        assert rules.arbiter_pin is not None
        rules = replace(rules, arbiter_pin=replace(rules.arbiter_pin, locked_chord_stands=True,
                                                   menu_without_moved=True))
    stamps = fake_stamps()
    path = tmp_path / "match.jsonl"
    writer = JournalWriter.create(path, load_or_create_key(tmp_path / "state"), header, 0,
                                  stamps())  # type: ignore[operator]
    session = Session(Engine.start(rules), writer, stamps,  # type: ignore[arg-type]
                      config.device.checkpoint_ns)
    parsed = parse_script(textwrap.dedent(script), rules.hold_ns)
    session = run_script(session, parsed.inputs, parsed.end)
    session.close()
    return path, session.engine


@pytest.mark.parametrize(("before_issue_31", "phase", "score"), [
    (False, "running", {"left": 0, "right": 0}),       # undone: the game runs on
    (True, "between_games", {"left": 1, "right": 0}),  # as played then: left won the game
])
def test_the_journal_replays_the_chord_as_it_was_played(tmp_path, before_issue_31, phase,
                                                        score):
    path, live = journaled(tmp_path, before_issue_31)
    replayed = replay(read_journal(path))
    assert replayed.diverged == []
    engine = replayed.engine.advance(live.now)[0]
    assert engine.match == live.match
    state = engine.state_json()
    assert (state["phase"], state["score"]) == (phase, score)
    check = replayed.config.rules.arbiter_pin
    assert check is not None and check.locked_chord_stands is before_issue_31


# The arbiter's menu: right seven times from "resume", then the cube chooses and confirms. On
# today's menu that is "match moved" (the match ends moved); on the menu before issue 31 it
# was "next match from file" (a request to the device: the match goes on, paused).
MENU_SCRIPT = (OPENING + chord(20) + entry(25, RIGHT_PIN_TAPS)
               + taps(40, ("right",) * 7 + ("cube", "cube")) + "60 end\n")


@pytest.mark.parametrize(("before_issue_31", "end_reason"), [(False, "moved"), (True, None)])
def test_the_menu_replays_as_it_was_when_the_journal_was_written(tmp_path, before_issue_31,
                                                                 end_reason):
    path, live = journaled(tmp_path, before_issue_31, MENU_SCRIPT)
    assert live.state_json()["end_reason"] == end_reason
    replayed = replay(read_journal(path))
    assert replayed.diverged == []
    engine = replayed.engine.advance(live.now)[0]
    assert engine.match == live.match
    check = replayed.config.rules.arbiter_pin
    assert check is not None and check.menu_without_moved is before_issue_31

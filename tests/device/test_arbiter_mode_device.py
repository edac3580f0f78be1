"""The arbiter at the panels (SPEC §13.4) on the device: the chord and the PIN through gpiozero
MockFactory pin edges, ending where the engine fed the same edges ends, charged exactly, and
journaled so that a replay gives the same match."""

from __future__ import annotations

import pytest

from device_helpers import MOCK_TEXT
from gammonclock.core.match_state import PanelStage
from gammonclock.journal.reader import read_journal
from gammonclock.journal.replay import replay
from gammonclock.sides import Button, Side
from rig_helpers import DOWN, UP, S, direct, journal_of, mock_config, pin_entry, presses

L, R, C = Button.LEFT, Button.RIGHT, Button.CUBE
PIN_TEXT = MOCK_TEXT + '\n[arbiter]\npin = "LRCL"\n'

OPENING = [(1.0, L, DOWN), (1.1, L, UP)]                    # right's clock runs
CHORD = [(30.0, C, DOWN), (30.1, L, DOWN), (30.2, R, DOWN),
         (33.7, C, UP), (33.7, L, UP), (33.7, R, UP)]


@pytest.mark.parametrize(("name", "pin", "phase", "charged"), [
    ("right", (L, R, C, L), "arbiter", False),
    ("wrong", (L, R, C, R), "running", True),
    ("nothing: 30 s after the release", (), "running", True),
])
def test_the_chord_and_the_pin_through_the_pins(request, name, pin, phase, charged):
    rig = request.getfixturevalue("open_device")(mock_config(PIN_TEXT))
    check = rig.engine.rules.arbiter_pin
    assert check is not None and check.matches(check.digest((L, R, C, L)))
    rig.play(OPENING + CHORD + pin_entry(40.0, pin))
    end = 70 * S
    engine = rig.settle(end)
    assert engine.match == direct(rig.engine.rules, rig.edges, end).match
    state = engine.state_json()
    assert state["phase"] == phase
    nobody = direct(rig.engine.rules, rig.edges[:2], end)          # only the opening tap
    at_chord = direct(rig.engine.rules, rig.edges[:2], 30 * S)
    right = engine.match.reserve_at(Side.RIGHT)
    expected = nobody if charged else at_chord
    assert right == expected.match.reserve_at(Side.RIGHT)         # to the nanosecond
    if not charged:
        assert engine.match.panel is not None and engine.match.panel.stage is PanelStage.MENU
    # The journal holds the same match, attempt and all.
    assert replay(read_journal(journal_of(rig))).engine.advance(end)[0].match == engine.match


def test_without_a_pin_the_device_treats_the_chord_as_presses(request):
    rig = request.getfixturevalue("open_device")()
    assert rig.engine.rules.arbiter_pin is None
    rig.play(OPENING + CHORD)
    end = 40 * S
    engine = rig.settle(end)
    assert engine.state_json()["phase"] != "arbiter"
    assert engine.match == direct(rig.engine.rules, rig.edges, end).match


# Every change of the menu through the pins: (name, the menu's presses, the command journaled)
MENU_CHANGES = [
    ("left clock +20 s", (R, C, R, R, C, C), "adjust left +20s"),
    ("score 0-1", (R, R, R, R, C, C, R, C, C), "score 0 1"),
    ("cube 2 left", (R, R, R, R, R, C, R, C, C), "cube 2 left"),
    ("resume", (C,), "resume"),
]


@pytest.mark.parametrize(("name", "menu", "command"), MENU_CHANGES,
                         ids=[row[0] for row in MENU_CHANGES])
def test_the_menu_through_the_pins_is_journaled_from_the_panel(request, name, menu, command):
    rig = request.getfixturevalue("open_device")(mock_config(PIN_TEXT))
    rig.play(OPENING + CHORD + pin_entry(40.0, (L, R, C, L)) + presses(45.0, menu))
    end = 70 * S
    engine = rig.settle(end)
    assert engine.match == direct(rig.engine.rules, rig.edges, end).match
    said = [e for r in read_journal(journal_of(rig)).records if r.kind == "input"
            for e in r.data["effects"] if e["kind"] == "arbiter_command"]
    assert [(e["text"], e["source"]) for e in said] == [(command, "panel")]
    assert replay(read_journal(journal_of(rig))).engine.advance(end)[0].match == engine.match

"""The attack of issue 31 on a real clock (SPEC §13.4): the clock built from its device config on
gpiozero MockFactory pins, three wrong PINs through the pins lock the chord out, then a chord in
which the left button is held 2 s (a result entry, "left wins"), the right button's press
confirming it, the cube's completing the chord. The chord is undone: the game still runs,
right's clock charged as if nobody had pressed, the panels say how long the lockout lasts, and
the journal replays to the same match."""

from __future__ import annotations

import pytest

from device_helpers import MOCK_TEXT
from gammonclock.hardware.presenters import PanelPresenter
from gammonclock.journal.reader import read_journal
from gammonclock.journal.replay import replay
from gammonclock.runtime.service import GRACE_NS
from gammonclock.sides import Button, Side
from rig_helpers import DOWN, UP, Rig, S, direct, journal_of, mock_config, pin_entry

L, R, C = Button.LEFT, Button.RIGHT, Button.CUBE
PIN_TEXT = MOCK_TEXT + '\n[arbiter]\npin = "LRCL"\n'
WRONG = (L, R, C, R)

OPENING = [(1.0, L, DOWN), (1.1, L, UP)]                     # right's clock runs


def chord(start: float) -> list[tuple[float, Button, bool]]:
    """All three down 0.1 s apart, released 3.5 s after the last."""
    return [(start, C, DOWN), (start + 0.1, L, DOWN), (start + 0.2, R, DOWN),
            (start + 3.7, C, UP), (start + 3.7, L, UP), (start + 3.7, R, UP)]


FAILURES = [edge for start in (20.0, 60.0, 100.0)
            for edge in chord(start) + pin_entry(start + 5, WRONG)]      # locked to 409.5 s
# Left held from 150 s: a hold at 152 s (result entry, "left wins"); right's press at 152.5 s
# confirms it; the cube's at 152.6 s completes the chord, recognised at 155.6 s.
ATTACK = [(150.0, L, DOWN), (152.5, R, DOWN), (152.6, C, DOWN),
          (157.0, L, UP), (157.0, R, UP), (157.0, C, UP)]
RECOGNISED = 155.6


def panel_notices(rig: Rig) -> tuple[str | None, str | None]:
    [presenter] = [p for p in rig.device.service.presenters if isinstance(p, PanelPresenter)]
    shown = [presenter.shown(side) for side in Side]
    assert all(s is not None for s in shown)
    return tuple(s[0].notice for s in shown if s is not None)   # type: ignore[return-value]


@pytest.mark.parametrize(("lang", "said"), [
    ("en", "arbiter mode locked for 4:14 more"),              # 409.5 s − 155.6 s = 253.9 s
    ("ru", "режим судьи закрыт ещё 4:14"),
])
def test_a_chord_in_a_lockout_is_undone_on_the_device(request, lang, said):
    text = PIN_TEXT + ('\n[display]\nlanguage = "ru"\n' if lang == "ru" else "")
    rig = request.getfixturevalue("open_device")(mock_config(text))
    rig.play(OPENING + FAILURES)
    assert rig.settle(140 * S).match.chord_locked_until == round(409.5 * S)
    before_attack = list(rig.edges)
    rig.play(ATTACK[:3])
    rig.at(round(RECOGNISED * S) + GRACE_NS + S // 10)   # the chord recognised and shown
    notices = panel_notices(rig)
    rig.play(ATTACK[3:])
    end = 170 * S
    engine = rig.settle(end)
    state = engine.state_json()
    # Not "left wins": the game runs on, right's clock as if the chord had never come.
    assert (state["phase"], state["running"], state["game"], state["score"]) == (
        "running", "right", 1, {"left": 0, "right": 0})
    never = direct(rig.engine.rules, before_attack, end)
    assert engine.match == never.match
    assert engine.match.reserve_at(Side.RIGHT) == never.match.reserve_at(Side.RIGHT)
    # The journal holds the same match, lockout, chord and all.
    assert replay(read_journal(journal_of(rig))).engine.advance(end)[0].match == engine.match
    # When the chord was recognised, both panels said how long the lockout still lasts.
    assert notices == (said, said)

"""What the panels say of a chord during a PIN lockout (SPEC §13.4, issue 31): the chord is
undone and play goes on, and both panels say how long the lockout still lasts, in English and
in Russian, over the clock screen that stays as it was (its reference screens: test_screens.py
and test_russian.py)."""

from __future__ import annotations

import pytest

from arbiter_helpers import OPENING, PIN, WRONG_PIN_TAPS, chord, entry
from gammonclock.core.effects import Shown
from gammonclock.core.pin import hash_pin
from gammonclock.core.reasons import Reason
from gammonclock.hardware import glyphs
from gammonclock.hardware.screens import INNER_W, Layout, notice_for, panel_view
from gammonclock.hardware.texts import localized
from gammonclock.sides import Pair, Side
from play_helpers import play

S = 10**9
FAILURES = "".join(chord(start) + entry(start + 5, WRONG_PIN_TAPS) for start in (20, 60, 100))


def locked_chord(names: Pair[str]):
    """Three wrong PINs (locked until 409.5 s), then a chord recognised at 153.2 s: the match
    (as the buttons go up, 0.5 s later) and the notice."""
    played = play(OPENING + FAILURES + chord(150) + "153.7 end\n",
                  names=names, arbiter_pin=hash_pin(PIN))
    [shown] = [e for e in played.surviving(Shown) if e.reason is Reason.CHORD_LOCKED]
    return played.match, notice_for(shown)


def test_the_notice_is_the_lockout_left_rounded_up_in_both_languages():
    match, notice = locked_chord(Pair("Anna", "Boris"))
    assert notice == "arbiter mode locked for 4:17 more"      # 409.5 s − 153.2 s: 256.3 s
    assert notice is not None and localized(notice, "ru") == "режим судьи закрыт ещё 4:17"
    view = panel_view(match, Side.RIGHT, match.now, notice, lang="ru")
    assert view.layout is Layout.CLOCK and view.notice == "режим судьи закрыт ещё 4:17"
    assert view.own is not None and view.own.running            # right's clock runs on


@pytest.mark.parametrize("left_ns", [1, S, 59 * 60 * S + 1, 60 * 60 * S])
def test_the_longest_lockout_fits_the_notice_in_both_languages(left_ns):
    notice = notice_for(Shown(0, "arbiter chord locked", Reason.CHORD_LOCKED,
                              (("left_ns", left_ns),)))
    assert notice is not None
    for lang in ("en", "ru"):
        lines = glyphs.wrap(localized(notice, lang), glyphs.TINY.chars(INNER_W - 4), 2)
        assert not lines[-1].endswith(".."), lines
    minutes = -(-left_ns // S) // 60
    assert f"{minutes}:" in notice


def test_a_locked_notice_without_its_time_still_says_it_is_locked():
    notice = notice_for(Shown(0, "arbiter chord locked", Reason.CHORD_LOCKED))
    assert notice == "arbiter mode locked: try later"
    assert notice is not None and localized(notice, "ru") == "режим судьи закрыт: позже"

"""What the panels say once a match went on on another clock (SPEC §13.5, issue 31): "moved to
TABLE" and the score it went at, never a clock to play on, in English and Russian; the arbiter's
menu item that says it at the panels. Checked pixel for pixel against reference PNGs."""

from __future__ import annotations

import pytest

from arbiter_helpers import OPENING, RIGHT_PIN_TAPS, chord, entry, run, taps
from gammonclock.core.match_state import Phase
from gammonclock.hardware.screens import panel_view
from gammonclock.sides import Pair, Side
from play_helpers import play
from screen_helpers import check_screen

NAMES = {"en": Pair("Anna", "Boris"), "ru": Pair("Анна", "Борис")}
# Left won game 1 (1-0); in game 2 right's clock runs when the hall's notice comes.
BEFORE = "0 tap left\n5 hold left\n8 tap right\n20 tap right\n30 tap left\n"


@pytest.mark.parametrize(("name", "lang", "side", "table", "title", "lines", "footer"), [
    ("moved-left", "en", Side.LEFT, "table-9", "MATCH MOVED",
     (("moved to table-9", ""), ("score", "1-0")), "play goes on there"),
    ("ru-moved-right", "ru", Side.RIGHT, "table-9", "МАТЧ ПЕРЕНЕСЁН",
     (("на стол table-9", ""), ("счёт", "0-1")), "игра идёт там"),   # Boris's: his first
    # A table id too long for the line: the table alone, as much of it as fits.
    ("moved-long-table-left", "en", Side.LEFT, "Hall-B_table-2024-final-12",
     "MATCH MOVED", (("Hall-B_table-2024-final-12", ""), ("score", "1-0")),
     "play goes on there"),
    # Said at the panels: no table.
    ("ru-moved-away-left", "ru", Side.LEFT, None, "МАТЧ ПЕРЕНЕСЁН",
     (("на другие часы", ""), ("счёт", "1-0")), "игра идёт там"),
])
def test_the_panels_say_where_the_match_went(name, lang, side, table, title, lines,
                                            footer) -> None:
    moved = play(BEFORE + f"40 arbiter moved{' ' + table if table else ''}\n41 end\n",
                 names=NAMES[lang])
    assert moved.match.phase is Phase.MATCH_OVER
    view = panel_view(moved.match, side, moved.match.now, lang=lang)
    assert (view.title, view.lines, view.footer) == (title, lines, footer)
    assert view.own is None and view.opponent is None          # no clock to play on
    check_screen(name, view)


@pytest.mark.parametrize(("name", "lang", "presses", "title", "lines"), [
    ("arbiter-menu-moved", "en", ("right",) * 7, "MATCH MOVED",
     (("it goes on at", ""), ("another clock", ""))),
    ("ru-arbiter-confirm-moved", "ru", ("right",) * 7 + ("cube",), "ПОДТВЕРДИТЬ?",
     (("закончить здесь", ""), ("как ПЕРЕНЕСЁННЫЙ?", ""))),
])
def test_the_arbiters_menu_item(name, lang, presses, title, lines) -> None:
    script = OPENING + chord(30) + entry(40, RIGHT_PIN_TAPS) + taps(45, presses, every=1.0)
    played = run(script + f"{45 + len(presses) + 1} end\n", names=NAMES[lang])
    view = panel_view(played.match, Side.LEFT, played.match.now, lang=lang)
    assert (view.title, view.lines) == (title, lines)
    check_screen(name, view)

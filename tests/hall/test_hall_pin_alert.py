"""A failed PIN at the panels reaches the director (SPEC §13.4: "every failed attempt is
journaled, and a hall shows it on that table's card"), end to end: a real clock on mock pins with
a panel PIN, the real Mosquitto with the shipped ACL, the real hall. Nothing the hall receives
holds the PIN or the buttons of the entry."""

from __future__ import annotations

import time
from pathlib import Path

from gammonclock.core.engine import ButtonEdge
from gammonclock.sides import Button
from hall_helpers import HallRunner
from mqtt_helpers import (
    WATCHER,
    Broker,
    Collector,
)
from table_helpers import Table, device_text, wait

PIN = "LRCR"
FAST_PANEL = f"""
[arbiter]
pin = "{PIN}"
chord_s = 1
"""
MATCH = """\
[match]
length = 5

[players]
left = "Anna"
right = "Boris"
"""


def _edges(table: Table, *edges: tuple[Button, bool]) -> None:
    for button, down in edges:
        table.service.submit(ButtonEdge(table.service.clock_ns(), button, down))
    wait(lambda: table.service.waiting() == 0, "the edges were not applied")


def _press(table: Table, button: Button, seconds: float = 0.1) -> None:
    """A press of `seconds`, edges stamped as they happen (in order)."""
    _edges(table, (button, True))
    time.sleep(seconds)
    _edges(table, (button, False))
    time.sleep(0.05)


def test_a_wrong_pin_at_the_panels_shows_on_the_tables_card(broker: Broker,
                                                            tmp_path: Path) -> None:
    match_file = tmp_path / "match.toml"
    match_file.write_text(MATCH, encoding="utf-8")
    table = Table(tmp_path, device_text(broker, match_file=match_file) + FAST_PANEL)
    with HallRunner(broker, tmp_path / "archive") as hall, \
            Collector(broker, WATCHER, "gammonclock/#") as heard:
        table.start()
        try:
            _press(table, Button.LEFT)                 # right's clock runs
            everything = (Button.CUBE, Button.LEFT, Button.RIGHT)
            _edges(table, *((b, True) for b in everything))
            time.sleep(1.3)                            # the chord: all three held 1 s (chord_s)
            _edges(table, *((b, False) for b in everything))
            for button in (Button.RIGHT, Button.LEFT, Button.CUBE):   # not the PIN
                _press(table, button)
            _press(table, Button.CUBE, 2.2)            # the cube held (hold_s 2 s): the end
            hall.wait(lambda: "arbiter PIN failed at the panels" in hall.alerts("table-1"),
                      "the failed PIN on the table's card")
            card = hall.alerts("table-1")
            assert "wrong PIN" in card, card
        finally:
            table.stop()
        everything_heard = b"".join(m.payload for m in heard.messages)
    assert b"game_started" in everything_heard                  # the watcher heard the table
    assert PIN.encode() not in everything_heard
    assert b'"button"' not in everything_heard         # no press of the entry names its button

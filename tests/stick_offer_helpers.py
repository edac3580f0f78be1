"""A USB stick's continuation only offered (SPEC §13.5, §14.1, issue 31): the venue's clocks
(venue_helpers) with the arbiter's PIN, a journal forged on another device (table-3's match
Anna-Boris at 6-0, sealed by the forger's own key), a stick carrying it with a marker, and the
arbiter at the panels as the buttons' edges reach the service (`chord`, `enter_pin`, `press`).
The stick offer's tests, English and Russian, use them."""

from __future__ import annotations

import shutil
from pathlib import Path

from gammonclock.device.build import Device
from gammonclock.hardware.presenters import PanelPresenter
from gammonclock.hardware.screens import PanelView
from gammonclock.journal.reader import read_journal
from gammonclock.runtime.lifecycle import load_next_match
from gammonclock.runtime.stick_handler import StickHandler
from gammonclock.sides import Button, Side
from lifecycle_helpers import on_loop
from venue_helpers import DEVICE_TEXT, Venue, edge, journal_of, tap

PIN = "LRCL"
LETTERS = {"L": Button.LEFT, "R": Button.RIGHT, "C": Button.CUBE}
PIN_DEVICE_TEXT = DEVICE_TEXT + f'\n[arbiter]\npin = "{PIN}"\n'
RU = '\n[display]\nlanguage = "ru"\n'

# The forger's match: a clock of its own (its own device key), "table-3" in the header.
FORGED_TABLE = "table-3"
FORGED_MATCH = """\
[match]
length = 7
start_score = [6, 0]

[players]
left = "Anna"
right = "Boris"
"""
# The match the hall pushed to the spare, ready there (loaded, no game started).
PUSHED_MATCH = """\
[match]
length = 5

[players]
left = "Carla"
right = "Dan"
"""


def forged_journal(venue: Venue, tmp_path: Path) -> Path:
    """A journal made and sealed on another device: table-3's match Anna-Boris at 6-0, game 7
    under way; copied off that clock as it stood."""
    forger = venue.build(tmp_path, FORGED_TABLE, tmp_path / "forger", 7 * 3600, "boot-forger")
    assert load_next_match(forger.service, forger.table, FORGED_MATCH, "forged.toml").ok
    tap(venue, forger, Button.LEFT)                 # game 7 starts: right's clock runs
    tap(venue, forger, Button.RIGHT, 4.0)
    folder = tmp_path / "forged"
    folder.mkdir()
    copy = folder / journal_of(forger).name
    shutil.copy(journal_of(forger), copy)
    assert read_journal(copy).count > 2
    return copy


def stick_with(tmp_path: Path, journal: Path, marker: str, name: str = "stick") -> Path:
    """A stick holding `gammonclock/continue/JOURNAL` and `MARKER.continue`."""
    stick = tmp_path / name
    folder = stick / "gammonclock" / "continue"
    folder.mkdir(parents=True)
    shutil.copy(journal, folder / journal.name)
    (folder / f"{marker}.continue").write_text("", encoding="utf-8")
    return stick


def plug(device: Device, stick: Path) -> dict:
    """The stick mounted: the `usb-stick DIR` request's work, the test being the loop."""
    return on_loop(device, lambda: StickHandler(device.service, device.table)(stick))


def press(venue: Venue, device: Device, button: Button, held_s: float = 0.1,
          think_s: float = 0.6) -> None:
    venue.wait(device, think_s)
    edge(venue, device, button, True)
    venue.wait(device, held_s)
    edge(venue, device, button, False)


def chord(venue: Venue, device: Device) -> None:
    """All three buttons down 0.1 s apart, held past chord_s (3 s), then released."""
    for button in (Button.CUBE, Button.LEFT, Button.RIGHT):
        venue.wait(device, 0.1)
        edge(venue, device, button, True)
    venue.wait(device, 3.5)
    for button in (Button.CUBE, Button.LEFT, Button.RIGHT):
        edge(venue, device, button, False)


def enter_pin(venue: Venue, device: Device, pin: str = PIN) -> None:
    """The PIN's taps, then the cube held (the end of the entry)."""
    for letter in pin:
        press(venue, device, LETTERS[letter])
    press(venue, device, Button.CUBE, held_s=2.0)


def panel(device: Device, side: Side = Side.LEFT) -> PanelView:
    """What the panel facing `side` shows now."""
    [presenter] = [p for p in device.service.presenters if isinstance(p, PanelPresenter)]
    shown = presenter.shown(side)
    assert shown is not None
    return shown[0]


def texts_of(view: PanelView) -> list[str]:
    """A view's words: its title and each line's two parts, in order."""
    return [view.title, *(part for line in view.lines for part in line if part)]


def journal_inputs(path: Path) -> list[dict]:
    return [r.data["input"] for r in read_journal(path).records if r.kind == "input"]

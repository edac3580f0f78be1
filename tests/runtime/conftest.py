"""The fixtures of the runtime's tests: the USB stick's (a clock's journals made once per module,
the clock's folder, a tmp folder standing in for the mounted stick)."""

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from gammonclock.journal.key import read_key
from journal_helpers import journaled_run
from usb_stick_helpers import CURRENT, NAMES, SHORT_SCRIPT, Clock
from venue_helpers import Venue


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The journals, made once: three finished matches and one in progress (short and long)."""
    folder = tmp_path_factory.mktemp("made")
    for name in NAMES:
        journaled_run(folder, name=name)
    journaled_run(folder, SHORT_SCRIPT, name=CURRENT)
    journaled_run(folder, name="longer.jsonl")
    return folder


@pytest.fixture
def usb_clock(made: Path, tmp_path: Path) -> Iterator[Clock]:
    """The clock's folder with the journals made (usb_stick_helpers.Clock); its own files must
    be the same after the test."""
    folder = tmp_path / "clock"
    shutil.copytree(made, folder)               # copy2: the mtimes too
    longer = (folder / "longer.jsonl").read_bytes()
    (folder / "longer.jsonl").unlink()
    state = folder / "state"
    made_clock = Clock(folder, [folder / n for n in NAMES], folder / CURRENT, longer,
                       read_key(state), state)
    before = made_clock.files()
    yield made_clock
    assert made_clock.files() == before, "the clock's own files were changed"


@pytest.fixture
def stick(tmp_path: Path) -> Path:
    path = tmp_path / "stick"
    path.mkdir()
    return path


@pytest.fixture
def venues() -> Iterator[Callable[[str], Venue]]:
    """Venues (venue_helpers) whose clocks have the device config given (`{table}` in it);
    every clock built in them is closed after the test."""
    made: list[Venue] = []

    def make(text: str) -> Venue:
        made.append(Venue(device_text=text))
        return made[-1]
    yield make
    for venue in made:
        for device in venue.clocks:
            device.close()

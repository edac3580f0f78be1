"""The health of a Pi as recorded from real boards (tests/data/health: a Pi 3's, a Pi 4's and a
Pi 5's files and command outputs), for the health readers' tests, the hall's health card and
the hall's benchmark: `recorded(board)`, a fixed monotonic `Clock` for the sync times, and
a table's `health` message as the clock sends it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from gammonclock.journal.fsync_times import SyncTimes
from gammonclock.runtime.health import Backlog, FakeSystem, read_health

DATA = Path(__file__).parent / "data" / "health"
STATE = "/var/lib/gammonclock"


def recorded(board: str) -> FakeSystem:
    """The board's recorded files (by their path on the board) and command outputs."""
    root = DATA / board
    files = {"/" + str(p.relative_to(root / "files")): p.read_text(encoding="utf-8")
             for p in (root / "files").rglob("*") if p.is_file()}
    commands = {p.name: p.read_text(encoding="utf-8") for p in (root / "commands").iterdir()}
    return FakeSystem(files, commands, {STATE: (3_100_000_000, 29_800_000_000)})


class Clock:
    def __init__(self) -> None:
        self.ns = 10 * 60_000_000_000

    def __call__(self) -> int:
        return self.ns


def health(board: str = "pi4", **over: Any) -> dict[str, Any]:
    """A table's `health` message as the clock sends it, from a board's recorded files."""
    data = read_health(recorded(board), "/var/lib/gammonclock",
                       sync_times=SyncTimes(Clock()), backlog=lambda: Backlog(0, 0),
                       at="2025-12-02T03:31:40.000Z").as_json()
    data.update(over)
    return data

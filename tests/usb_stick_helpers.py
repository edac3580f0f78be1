"""The USB stick's file work (SPEC §13.3) on a tmp folder standing in for the mounted stick: the
clock's side (`Clock`: its journals, the one in progress, the device key; the fixtures that make
it are tests/runtime/conftest.py's), an export to the stick, and a stick's faults (`fail`: an
`os` call on the stick failing from its nth call). The stick's tests, English and Russian, use
them."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from gammonclock.runtime.usb_stick import StickReport, export_to_stick

TABLE = "T7"
NAMES = [f"match-20240501-1{n}0000-{TABLE}-Anna-Boris.jsonl" for n in range(3)]
CURRENT = f"match-20240501-180000-{TABLE}-Carla-Dan.jsonl"
FOLDER = f"gammonclock/exports/{TABLE}"
SHORT_SCRIPT = "0 roll 3\n0.5 roll 5\n1 tap left\n+14 tap right\n+2 end\n"


@dataclass
class Clock:
    """The clock's side: its journals, the in-progress one, the device key."""

    folder: Path
    finished: list[Path]
    current: Path
    longer_current: bytes       # the in-progress journal a few turns later
    key: bytes
    state_dir: Path

    def files(self) -> dict[Path, tuple[bytes, int]]:
        return {p: (p.read_bytes(), p.stat().st_mtime_ns) for p in sorted(self.folder.iterdir())
                if p.is_file()}


def export(clock: Clock, stick: Path, with_current: bool = True) -> StickReport:
    return export_to_stick(stick, TABLE, clock.finished, clock.current if with_current else None,
                           clock.key)


def on_stick(stick: Path, where: object) -> bool:
    """Whether a path, or an open file descriptor, is on the stick."""
    if isinstance(where, int):
        where = os.readlink(f"/proc/self/fd/{where}")
    return str(where).startswith(str(stick))


def fail(monkeypatch: pytest.MonkeyPatch, stick: Path, name: str, nth: int, code: int,
         when: Callable[..., bool] = lambda *args, **kw: True,
         then: Callable[[], None] | None = None) -> None:
    """`os.NAME` on the stick fails with `code` from its `nth` call on (1-based); calls that
    `when` rejects are not counted. With `then`, the `nth` call instead runs `then` first
    (the stick goes away) and goes on to the real call."""
    real = getattr(os, name)
    calls = [0]

    def faulty(*args: Any, **kw: Any) -> Any:
        if on_stick(stick, args[0]) and when(*args, **kw):
            calls[0] += 1
            if calls[0] >= nth:
                if then is None:
                    raise OSError(code, os.strerror(code), str(args[0]))
                if calls[0] == nth:
                    then()
        return real(*args, **kw)

    monkeypatch.setattr(os, name, faulty)


def creating(path: object, flags: int, *rest: Any, **kw: Any) -> bool:
    return bool(flags & os.O_CREAT)

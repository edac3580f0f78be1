"""A whole generated match sends exactly the bytes it sent before the press path was trimmed
(issue 20): every I²C message of every ioctl, in order, for every step the panels are shown
(each press, each digit change, each notice's end, each burn-in move), and the instant each
step asks to be shown again.

The reference (`reference/press_wire.json`) was recorded with the code before the per-side facts,
the cached window plans and the reused message buffers; regenerate it only for a change that is
meant to change the wire: `python tests/hardware/test_press_wire.py` (it prints what it wrote).
The stream is kept as digests of 50 steps each, so that a failure names the first step that
differs.
"""

from __future__ import annotations

import ctypes
import hashlib
import json
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import smbus2
import smbus2.smbus2 as smbus2_module

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))   # run as a script: the helpers

from bench_helpers import load_benchmark  # noqa: E402
from gammonclock.core.engine import Engine  # noqa: E402
from gammonclock.core.timecontrol import TimeMode  # noqa: E402
from gammonclock.hardware import i2c_rdwr, partial  # noqa: E402
from gammonclock.hardware.panels import Panel  # noqa: E402
from gammonclock.hardware.presenters import PanelPresenter  # noqa: E402
from gammonclock.hardware.screens import HEIGHT, WIDTH  # noqa: E402
from gammonclock.sides import Pair  # noqa: E402
from i2c_helpers import serials_on  # noqa: E402

REFERENCE = Path(__file__).resolve().parent / "reference" / "press_wire.json"
CHUNK = 50            # steps per digest
PRESS_CPU = load_benchmark("bench_press_cpu")     # its schedule of a match's steps

# (name, driver, rotate, time mode, seed, both panels' frames in one ioctl as the bus writer
# sends them)
CASES = [
    ("ssd1306-delay-batched", "ssd1306", 0, TimeMode.DELAY, 2024, True),
    ("ssd1309-bronstein-batched-upside-down", "ssd1309", 2, TimeMode.BRONSTEIN, 11, True),
    ("sh1106-fischer-alone", "sh1106", 0, TimeMode.FISCHER, 7, False),
]


class _Wire(smbus2.SMBus):  # type: ignore[misc]
    """smbus2's own SMBus whose kernel records every I2C_RDWR's messages (address, bytes) and
    every other request (luma's set-up) as what it carries."""

    def __init__(self, log: list[Any]) -> None:
        super().__init__(None)
        self.fd = self
        self.log = log

    def carry(self, request: int, arg: Any) -> int:
        if request == smbus2_module.I2C_RDWR:
            self.log.append([(arg.msgs[i].addr, arg.msgs[i].flags,
                              ctypes.string_at(arg.msgs[i].buf, arg.msgs[i].len).hex())
                             for i in range(arg.nmsgs)])
        elif request == smbus2_module.I2C_SMBUS:
            block = arg.data.contents.block
            self.log.append(["smbus", arg.command, bytes(block[1:block[0] + 1]).hex()])
        return 0

    def close(self) -> None:
        self.fd = None


def _ioctl(real: Any) -> Any:
    def ioctl(fd: Any, request: int, arg: Any = 0, *rest: Any) -> Any:
        if isinstance(fd, _Wire):
            return fd.carry(request, arg)
        return real(fd, request, arg, *rest)
    return ioctl


def play(driver: str, rotate: int, mode: TimeMode, seed: int, batched: bool) -> list[str]:
    """The digests of the wire, `CHUNK` steps each, of a 3-point generated match."""
    match = load_benchmark("bench_match").generate_match(seed, 3, bounce=0.1)
    rules = replace(match.rules, time=replace(match.rules.time, mode=mode))
    log: list[Any] = []
    serials = serials_on(_Wire(log))
    presenter = PanelPresenter(Pair(*(
        Panel(lambda s=s: partial.DRIVERS[driver](s, width=WIDTH, height=HEIGHT, rotate=rotate),
              name) for s, name in zip(serials, ("left", "right"), strict=True))))
    steps: list[str] = []

    def present(engine: Engine, t: int, effects: list[Any]) -> int | None:
        batch = i2c_rdwr.Batch()
        if batched:
            with batch.gather():
                wake = presenter.present(engine, t, effects)
            batch.send()
        else:
            wake = presenter.present(engine, t, effects)
        steps.append(json.dumps([t, wake, log]))
        log.clear()
        return wake

    def step(engine: Engine, t: int, edge: Any) -> tuple[Engine, int | None]:
        engine, effects = engine.advance(t) if edge is None else engine.feed(edge)
        return engine, present(engine, t, effects)

    engine = Engine.start(rules)
    PRESS_CPU.play_steps(match, engine, present(engine, 0, []), step)
    presenter.close()
    return [hashlib.sha256("\n".join(steps[i:i + CHUNK]).encode()).hexdigest()[:16]
            for i in range(0, len(steps), CHUNK)]


@pytest.fixture
def wire(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(smbus2_module, "ioctl", _ioctl(smbus2_module.ioctl))


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_a_whole_match_sends_the_same_bytes_as_before(wire: None, case: tuple[Any, ...]) -> None:
    name, *how = case
    expected = json.loads(REFERENCE.read_text())[name]
    got = play(*how)
    assert len(got) == len(expected), f"{name}: steps changed ({len(got)} vs {len(expected)})"
    first = next((i for i, (a, b) in enumerate(zip(got, expected, strict=True)) if a != b), None)
    assert first is None, f"{name}: the wire differs from step {first * CHUNK} on"


if __name__ == "__main__":
    smbus2_module.ioctl = _ioctl(smbus2_module.ioctl)
    recorded = {name: play(*how) for name, *how in CASES}
    REFERENCE.write_text(json.dumps(recorded, indent=1) + "\n")
    print(f"wrote {REFERENCE}: " + ", ".join(f"{k} {len(v) * CHUNK} steps"
                                            for k, v in recorded.items()))

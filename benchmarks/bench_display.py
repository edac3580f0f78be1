"""Benchmark: frames per second of the display path, per panel.

Run it as a plain script from the repository root::

    python benchmarks/bench_display.py [--frames N]

For each panel (the one facing left, the one facing right) it times, on luma's `dummy` device:

- `view+render+show`, every frame new: the state of a running clock at successive whole seconds
  (so the digits change every frame), through `panel_view`, `render` and `Panel.show`;
- `show, unchanged`: the same picture again (the path `Panel.show` takes when nothing changed);

and, as a measure of luma's own cost of packing a frame for the glass, `view+render+show` on the
real ssd1306 driver over luma's `noop` bus (no I²C: the bus time of a real panel comes on top,
about 25 ms a frame at 400 kHz). It prints figures only and asserts nothing.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

try:
    import gammonclock  # noqa: F401
except ImportError:  # running from a checkout without the package installed
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "firmware"))

from luma.core.device import dummy
from luma.core.interface.serial import noop
from luma.oled.device import ssd1306

from gammonclock.core.engine import ButtonEdge, Engine
from gammonclock.core.match import MatchState
from gammonclock.core.rules import MatchRules
from gammonclock.hardware.panels import Panel
from gammonclock.hardware.screens import HEIGHT, WIDTH, panel_view, render
from gammonclock.sides import Button, Pair, Side

NS_PER_S = 1_000_000_000


def running_match() -> MatchState:
    """Game 1 of a 7-point match, right's clock running from 0 s."""
    rules = MatchRules.defaults("backgammon", 7, names=Pair("Anna", "Boris"))
    engine, _ = Engine.start(rules).feed(ButtonEdge(0, Button.LEFT, True))
    engine, _ = engine.feed(ButtonEdge(NS_PER_S // 10, Button.LEFT, False))
    return engine.match


def fps(frames: int, seconds: float) -> str:
    return f"{frames / seconds:10.0f} fps  ({seconds / frames * 1e3:7.3f} ms/frame)"


def bench_changing(panel: Panel, state: MatchState, side: Side, frames: int) -> float:
    start = time.perf_counter()
    for k in range(frames):
        t = (k + 20) * NS_PER_S        # after the delay: the reserve changes every second
        if not panel.show(render(panel_view(state, side, t)), t):
            raise RuntimeError("the benchmark's device failed")
    return time.perf_counter() - start


def bench_unchanged(panel: Panel, state: MatchState, side: Side, frames: int) -> float:
    image = render(panel_view(state, side, 20 * NS_PER_S))
    panel.show(image, 0)
    start = time.perf_counter()
    for _ in range(frames):
        panel.show(image, 0)
    return time.perf_counter() - start


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--frames", type=int, default=2000)
    args = parser.parse_args(argv)
    state = running_match()
    print(f"display benchmark: {args.frames} frames per figure, 128x64 1-bit")
    for side in Side:
        device = dummy(width=WIDTH, height=HEIGHT, mode="1")
        name = f"panel facing {side}"
        changing = bench_changing(Panel.for_device(device, name), state, side, args.frames)
        unchanged = bench_unchanged(Panel.for_device(device, name), state, side, args.frames)
        real = ssd1306(noop(), width=WIDTH, height=HEIGHT)
        luma_frames = max(1, args.frames // 10)
        packed = bench_changing(Panel.for_device(real, name), state, side, luma_frames)
        print(f"{name:>18}  view+render+show (dummy)      {fps(args.frames, changing)}")
        print(f"{'':>18}  show, unchanged (dummy)       {fps(args.frames, unchanged)}")
        print(f"{'':>18}  view+render+show (ssd1306)    {fps(luma_frames, packed)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

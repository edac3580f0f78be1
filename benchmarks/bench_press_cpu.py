"""Benchmark: the CPU of a clock press, engine and both panels, on one thread, the noise taken out.

Run it as a plain script from the repository root::

    python benchmarks/bench_press_cpu.py [--length L] [--seed N] [--replays R] [--driver D]

`bench_bus.py` measures the CPU per press as the device spends it — the clock's thread and the
bus writer's, with the wire's time in between — and on a shared machine that figure moves with
the load (other processes evict the caches while the writer sleeps on the bus). This one plays
the same generated match (`bench_match.py`) `--replays` times (default 5) through the engine and
the real `PanelPresenter` on two `Panel`s with the partial drivers on luma's managed `i2c` serial,
whose smbus2 `SMBus` builds every message as on the Pi and hands it to an ioctl that does
nothing (so no thread and no sleep), and times each
clock press with `time.thread_time_ns`: the engine's `feed`, then `present` (views, the frames,
the drivers' plans and messages: both panels' in one ioctl, as the bus writer sends the frames
it takes together, `i2c_rdwr.Batch`). Each press's figure is its least over the replays (what the
code costs, not what the host's load added); it prints p50, p99 and the maximum of those, next to
issue 20's target (≤ 0.15 ms for engine + view + render + writer), and below them the last
replay's own figures (each press timed once, as `bench_bus.py` times it). It asserts nothing.
"""

from __future__ import annotations

import argparse
import gc
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

try:
    import gammonclock  # noqa: F401
except ImportError:  # running from a checkout without the package installed
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "firmware"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import smbus2  # noqa: E402
import smbus2.smbus2 as smbus2_module  # noqa: E402
from bench_match import GeneratedMatch, generate_match  # noqa: E402
from luma.core.interface.serial import i2c as luma_i2c  # noqa: E402

from gammonclock.core.effects import Effect, GameStarted, TurnEnded  # noqa: E402
from gammonclock.core.engine import ButtonEdge, Engine  # noqa: E402
from gammonclock.core.match_state import Phase  # noqa: E402
from gammonclock.hardware import i2c_rdwr, partial  # noqa: E402
from gammonclock.hardware.panels import Panel  # noqa: E402
from gammonclock.hardware.presenters import PanelPresenter  # noqa: E402
from gammonclock.hardware.screens import HEIGHT, WIDTH  # noqa: E402
from gammonclock.sides import Pair  # noqa: E402

TARGET_MS = 0.15


class NullBus(smbus2.SMBus):  # type: ignore[misc]
    """smbus2's SMBus as luma's managed i2c uses it on the Pi, whose kernel takes every ioctl
    and carries none (`_ioctl`): the messages are built exactly as there."""

    def __init__(self) -> None:
        super().__init__(None)
        self.fd = self                  # what smbus2 hands to `ioctl`

    def close(self) -> None:
        self.fd = None


_real_ioctl = smbus2_module.ioctl


def _ioctl(fd: Any, request: int, arg: Any = 0, *rest: Any) -> Any:
    if isinstance(fd, NullBus):
        return 0
    return _real_ioctl(fd, request, arg, *rest)


def null_serial(address: int) -> Any:
    saved = smbus2.SMBus
    smbus2.SMBus = lambda port: NullBus()
    try:
        return luma_i2c(port=1, address=address)
    finally:
        smbus2.SMBus = saved


def play_steps(match: GeneratedMatch, engine: Engine, wake: int | None,
               step: Callable[[Engine, int, ButtonEdge | None], tuple[Engine, int | None]]
               ) -> Engine:
    """Play `match` on from `engine` as the device's loop schedules it, panels that ask to be
    shown again included: before each input (and before `match.end`) every deadline that falls
    earlier, the engine's or the panels' own `wake`, then the input. `step(engine, t, edge)`
    advances the engine to `t` (`edge` None) or feeds it `edge` (at `t == edge.t`), shows it,
    and returns the new engine and the panels' next wake. Returns the last engine."""
    for edge in [*match.inputs, None]:
        until = match.end if edge is None else edge.t
        while True:
            due = [d for d in (wake, engine.next_deadline()) if d is not None and d < until]
            if not due:
                break
            engine, wake = step(engine, min(due), None)
        if edge is None:
            break
        engine, wake = step(engine, edge.t, edge)
    return engine


def replay(seed: int, length: int, driver: str) -> list[tuple[int, int, int]]:
    """(engine ns, panels ns, the press's instant) of each clock press of the match, in
    order."""
    match = generate_match(seed, length, bounce=0.0)

    def panel(address: int, name: str) -> Panel:
        serial = null_serial(address)
        return Panel(lambda: partial.DRIVERS[driver](serial, width=WIDTH, height=HEIGHT), name)

    presenter = PanelPresenter(Pair(panel(0x3C, "left panel"), panel(0x3D, "right panel")))

    def present(engine: Engine, t: int, effects: list[Effect]) -> int | None:
        # What the bus writer does with the frames it takes together (`BusWriter._write`):
        # each panel plans its windows, and their messages leave in one ioctl.
        batch = i2c_rdwr.Batch()
        with batch.gather():
            wake = presenter.present(engine, t, effects)
        batch.send()
        return wake

    engine = Engine.start(match.rules)
    wake = present(engine, 0, [])
    # What lives all match frozen, as the service does once READY (`service.settle_memory`): a
    # full collection on a press then scans what the match made, not the whole heap (without
    # it, one press here took a full collection of ~3 ms, which the device never does).
    gc.collect()
    gc.freeze()
    out: list[tuple[int, int, int]] = []

    def step(engine: Engine, t: int, edge: ButtonEdge | None) -> tuple[Engine, int | None]:
        if edge is None:
            engine, effects = engine.advance(t)
            return engine, present(engine, t, effects)
        running = engine.match.phase is Phase.RUNNING
        start = time.thread_time_ns()
        engine, effects = engine.feed(edge)
        fed = time.thread_time_ns()
        wake = present(engine, t, effects)
        done = time.thread_time_ns()
        if (edge.pressed and running and engine.match.phase is Phase.RUNNING
                and any(isinstance(e, TurnEnded) for e in effects)
                and not any(isinstance(e, GameStarted) for e in effects)):
            out.append((fed - start, done - fed, t))
        return engine, wake

    play_steps(match, engine, wake, step)
    presenter.close()
    gc.unfreeze()           # (the heap as it was: a test runs the benchmark in its process)
    return out


def replays_of(seed: int, length: int, driver: str, replays: int
               ) -> list[list[tuple[int, int, int]]]:
    """`replays` (at least one) replays of the match, the ioctls taken and dropped."""
    saved = smbus2_module.ioctl
    smbus2_module.ioctl = _ioctl
    try:
        return [replay(seed, length, driver) for _ in range(max(1, replays))]
    finally:
        smbus2_module.ioctl = saved


def least_per_press_ms(seed: int, length: int, driver: str, replays: int) -> dict[int, float]:
    """Each clock press's CPU (engine + panels), the least over `replays` replays, by the
    press's instant: what the code itself costs, warm (`bench_bus.py`'s Pi model scales it)."""
    least: dict[int, float] = {}
    for run in replays_of(seed, length, driver, replays):
        for engine_ns, panels_ns, t in run:
            ms = (engine_ns + panels_ns) / 1e6
            least[t] = min(ms, least.get(t, ms))
    return least


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--length", type=int, default=3, help="match length in points")
    parser.add_argument("--seed", type=int, default=2024)
    parser.add_argument("--replays", type=int, default=5)
    parser.add_argument("--driver", default="ssd1306", choices=sorted(partial.DRIVERS))
    args = parser.parse_args(argv)
    runs = replays_of(args.seed, args.length, args.driver, args.replays)
    presses = len(runs[0])
    engine = [min(r[i][0] for r in runs) / 1e6 for i in range(presses)]
    panels = [min(r[i][1] for r in runs) / 1e6 for i in range(presses)]
    total = [e + p for e, p in zip(engine, panels, strict=True)]
    print(f"gammonclock press CPU: {args.length}-point match, seed {args.seed}, {presses} clock "
          f"presses, two {args.driver} panels (I²C taken and dropped), least of {len(runs)} "
          f"replays per press; load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs")
    # One replay's own figures, each press timed once as `bench_bus.py` times it: what this
    # host's load adds to the code's cost (caches evicted, a preempted core).
    once = [(e + p) / 1e6 for e, p, _ in runs[-1]]
    for label, values in (("engine (feed)", engine), ("panels (present)", panels),
                          ("CPU per clock press", total), ("one replay alone", once)):
        note = f"   target ≤ {TARGET_MS:g} ms" if values is total else ""
        print(f"  {label:<20} p50 {pct(values, .5):.3f} ms  p99 {pct(values, .99):.3f} ms  "
              f"max {max(values):.3f} ms{note}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Benchmark: the two panels on one emulated I²C bus — press to glass, bytes and bus time.

Run it as a plain script from the repository root::

    python benchmarks/bench_bus.py [--length L] [--seed N] [--speeds 100,400] [--driver D] [--stock]

The panels are the real thing except the wire: `PanelPresenter` on two `Panel`s with the partial
drivers of `hardware/partial.py`, both drawn by one `BusWriter` thread (as `Panel.from_config`
builds them for bus 1), on `hardware/i2c_emulator.py`'s bus, which blocks each transaction for
9 clock periods a byte plus 21 per transaction (address byte, control byte, START/STOP) at the
given speed. The match is one of `bench_match.py`'s generated matches (taps, doubles, result
entries, pauses), run through the engine with a redraw at every instant the presenter asks for.

Time is compressed: between two instants of the match the benchmark waits for the bus to fall
idle or for the real gap between them, whichever comes first — so a press finds the bus exactly
as busy as on the device, and the idle stretches are skipped.

It prints, per bus speed:
- press to glass, for the presses that switch the clocks (the target: p99 under 8 ms at 400 kHz
  and 25 ms at 100 kHz): from the instant the clock's loop takes the press edge to the end of the
  last transaction of the second panel's update (the service's 5 ms input grace comes before
  that instant; see bench_latency.py); and for the presses that change the screen (a game
  starts, a result is entered), whose frames are whole;
  the wire's share of it (the modelled bus time, without this host's sleep overshoot of
  about 70 µs a transaction) is printed below it;
- the bus's bytes and busy share per second with a running clock showing minutes:seconds and
  showing tenths (below 20 s: the target is under 5 %), from a minute and from 15 s of play.

`--stock` runs luma's own drivers drawn on the clock's thread instead (the situation before
issue 10), for comparison. It asserts nothing.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

try:
    import gammonclock  # noqa: F401
except ImportError:  # running from a checkout without the package installed
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "firmware"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_match import generate_match  # noqa: E402
from luma.oled import device as oled  # noqa: E402

from gammonclock.durations import NS_PER_S  # noqa: E402
from gammonclock.effects import Effect, GameStarted, TurnEnded  # noqa: E402
from gammonclock.engine import ButtonEdge, Engine  # noqa: E402
from gammonclock.hardware import partial  # noqa: E402
from gammonclock.hardware.bus_writer import BusWriter  # noqa: E402
from gammonclock.hardware.i2c_emulator import EmulatedBus, EmulatedI2C, memory_for  # noqa: E402
from gammonclock.hardware.panels import Panel  # noqa: E402
from gammonclock.hardware.presenters import PanelPresenter  # noqa: E402
from gammonclock.hardware.screens import HEIGHT, WIDTH  # noqa: E402
from gammonclock.match_state import Phase  # noqa: E402
from gammonclock.rules import MatchRules  # noqa: E402
from gammonclock.sides import Button, Pair, Side  # noqa: E402

ADDRESSES = Pair(0x3C, 0x3D)
TARGET_P99_MS = {400_000: 8.0, 100_000: 25.0}
TARGET_BUSY_TENTHS = 5.0          # % of the bus with tenths showing
MODES = {True: "luma's stock drivers on the clock's thread",
         False: "partial updates, one writer thread"}


class TimedPanel(Panel):
    """A Panel noting when the writer finished each frame (by the frame's instant)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.done_at: dict[int, float] = {}

    def write(self, job: object) -> bool:
        more = super().write(job)
        self.done_at[job.t] = time.perf_counter()     # type: ignore[attr-defined]
        return more


@dataclass
class Rig:
    bus: EmulatedBus
    panels: Pair[TimedPanel]
    presenter: PanelPresenter
    writer: BusWriter | None

    def settle(self, seconds: float) -> None:
        """Wait until the bus is idle, or `seconds` (the real gap to the next instant)."""
        if self.writer is not None and seconds > 0:
            self.writer.flush(timeout=seconds)

    def close(self) -> None:
        self.presenter.close()


def make_rig(speed_hz: int, driver: str, stock: bool, sleep: bool = True) -> Rig:
    bus = EmulatedBus(speed_hz=speed_hz, sleep=sleep)
    writer = None if stock else BusWriter("bench bus")
    make: Callable[..., Any] = getattr(oled, driver) if stock else partial.DRIVERS[driver]

    def panel(side: Side) -> TimedPanel:
        serial = EmulatedI2C(bus, memory_for(driver), ADDRESSES[side])
        return TimedPanel(lambda: make(serial, width=WIDTH, height=HEIGHT), f"{side} panel",
                          writer=writer)

    panels = Pair(panel(Side.LEFT), panel(Side.RIGHT))
    return Rig(bus, panels, PanelPresenter(panels), writer)


@dataclass
class Latencies:
    clock_presses: list[float] = field(default_factory=list)    # ms, measured
    screen_changes: list[float] = field(default_factory=list)
    clock_wire: list[float] = field(default_factory=list)       # ms the bus was busy meanwhile


def _glass_ms(rig: Rig, t: int, since: float, returned: float) -> tuple[float, float] | None:
    """From `since` to the end of the last panel's frame of instant `t` (None: nothing drawn):
    measured, and the bus's modelled busy time in that span (the wire's share of it)."""
    if rig.writer is None:
        end = returned
    else:
        rig.writer.flush(timeout=5.0)
        ends = [p.done_at[t] for p in rig.panels if t in p.done_at]
        if not ends:
            return None
        end = max(ends)
    wire = sum(x.busy for x in rig.bus.transactions if since < x.end <= end)
    return (end - since) * 1e3, wire * 1e3


def play_match(rig: Rig, rules: MatchRules, inputs: list[ButtonEdge], end: int) -> Latencies:
    """The match through engine and presenter, time compressed (see the module's docstring)."""
    out = Latencies()
    engine = Engine.start(rules)
    now = 0
    wake = rig.presenter.present(engine, 0, [])

    def step(t: int, edge: ButtonEdge | None) -> None:
        nonlocal engine, now, wake
        rig.settle((t - now) / NS_PER_S)
        now = t
        since = time.perf_counter()
        effects: list[Effect]
        running_before = engine.match.phase is Phase.RUNNING
        engine, effects = engine.feed(edge) if edge is not None else engine.advance(t)
        wake = rig.presenter.present(engine, t, effects)
        returned = time.perf_counter()
        if edge is None or not edge.pressed or not effects:
            return
        glass = _glass_ms(rig, t, since, returned)
        if glass is None:
            return
        # A clock press: one turn ends, the other starts, on the same screen. A press that
        # changes the screen (a double, a take, a result) sends whole frames: counted apart.
        if (running_before and engine.match.phase is Phase.RUNNING
                and any(isinstance(e, TurnEnded) for e in effects)
                and not any(isinstance(e, GameStarted) for e in effects)):
            out.clock_presses.append(glass[0])
            out.clock_wire.append(glass[1])
        else:
            out.screen_changes.append(glass[0])

    for edge in [*inputs, None]:
        t_input = end if edge is None else edge.t
        while True:
            due = [d for d in (wake, engine.next_deadline()) if d is not None and d < t_input]
            if not due:
                break
            step(min(due), None)
        if edge is not None:
            step(edge.t, edge)
    rig.settle(5.0)
    return out


def steady_bus_share(speed_hz: int, driver: str, tenths: bool) -> tuple[float, float, float]:
    """(bytes per second, busy %, seconds) of the bus with one clock running, redrawn whenever
    the presenter asks, for 60 s showing minutes:seconds or 15 s showing tenths."""
    rules = MatchRules.defaults("backgammon", 7, names=Pair("Anna", "Boris"))
    rig = make_rig(speed_hz, driver, stock=False, sleep=False)
    engine = Engine.start(rules)
    engine, _ = engine.feed(ButtonEdge(NS_PER_S, Button.LEFT, True))       # right's clock runs
    engine, _ = engine.feed(ButtonEdge(NS_PER_S + NS_PER_S // 10, Button.LEFT, False))
    reserve = engine.match.reserve_at(Side.RIGHT)
    delay = rules.time.delay_ns
    # Tenths: from 19 s left to 4 s left; minutes:seconds: a minute after the delay.
    start = NS_PER_S + delay + (reserve - 19 * NS_PER_S if tenths else 0)
    length = (15 if tenths else 60) * NS_PER_S
    t = start
    engine, _ = engine.advance(t)
    wake = rig.presenter.present(engine, t, [])
    rig.settle(5.0)
    before_bytes, before_busy = rig.bus.total_bytes(), rig.bus.busy_seconds()
    while wake is not None and wake < start + length:
        t = wake
        engine, effects = engine.advance(t)
        wake = rig.presenter.present(engine, t, effects)
        rig.settle(5.0)
    seconds = length / NS_PER_S
    sent = rig.bus.total_bytes() - before_bytes
    busy = rig.bus.busy_seconds() - before_busy
    rig.close()
    return sent / seconds, 100 * busy / seconds, seconds


def pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--length", type=int, default=3, help="match length in points")
    parser.add_argument("--seed", type=int, default=2024)
    parser.add_argument("--speeds", default="400,100", help="bus speeds in kHz, comma-separated")
    parser.add_argument("--driver", default="ssd1306", choices=sorted(partial.DRIVERS))
    parser.add_argument("--stock", action="store_true",
                        help="luma's own drivers on the clock's thread (before issue 10)")
    args = parser.parse_args(argv)

    match = generate_match(args.seed, args.length, bounce=0.0)
    presses = sum(1 for e in match.inputs if e.pressed)
    print(f"gammonclock bus benchmark: {args.length}-point match, seed {match.seed}, "
          f"{presses} presses, {match.end / NS_PER_S / 60:.0f} min of play; two {args.driver} "
          f"panels on one emulated I²C bus; {MODES[args.stock]}")
    for khz in (int(s) for s in args.speeds.split(",")):
        hz = khz * 1000
        rig = make_rig(hz, args.driver, args.stock)
        started = time.perf_counter()
        lat = play_match(rig, match.rules, match.inputs, match.end)
        took = time.perf_counter() - started
        rig.close()
        c, s = lat.clock_presses, lat.screen_changes
        target = TARGET_P99_MS.get(hz)
        print(f"\n{khz} kHz ({took:.0f} s to run)")
        print(f"  press to glass, clock presses ({len(c)}): p50 {pct(c, .5):6.2f} ms  "
              f"p99 {pct(c, .99):6.2f} ms  max {max(c, default=float('nan')):6.2f} ms"
              + (f"   target p99 < {target:g} ms" if target else ""))
        w = lat.clock_wire
        print(f"    of which the wire (bus busy, modelled): p50 {pct(w, .5):6.2f} ms  "
              f"p99 {pct(w, .99):6.2f} ms  max {max(w, default=float('nan')):6.2f} ms")
        print(f"  press to glass, screen changes ({len(s)}): p50 {pct(s, .5):6.2f} ms  "
              f"p99 {pct(s, .99):6.2f} ms  max {max(s, default=float('nan')):6.2f} ms")
        if not args.stock:
            for tenths in (False, True):
                rate, busy, seconds = steady_bus_share(hz, args.driver, tenths)
                label = "tenths showing  " if tenths else "minutes:seconds "
                note = f"   target < {TARGET_BUSY_TENTHS:g} %" if tenths else ""
                print(f"  bus, {label}: {rate:7.0f} B/s  {busy:5.2f} % busy "
                      f"(over {seconds:.0f} s){note}")
        if rig.writer is not None:
            print(f"  frames written {rig.writer.written}, superseded before sending "
                  f"{rig.writer.dropped}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

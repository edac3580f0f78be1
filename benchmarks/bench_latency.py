"""Benchmark: from a button's edge to the frame that shows it, on mock hardware.

Run it as a plain script from the repository root::

    python benchmarks/bench_latency.py [--presses N] [--idle-seconds S] [--state-dir DIR]

It builds the device `gammonclock run` builds (config/backgammon.toml on gpiozero's MockFactory
pins) with two luma `dummy` panels wrapped so that every `display()` is timestamped, runs the
service on its own thread as the device does, starts game 1, and then has the running player
press their clock N times, alternately. For each press it takes the host's monotonic time just
before the pin is driven low and the time of the first frame handed to each panel in which the
other player's clock runs from that press: the edge-to-glass latency of the software (the I²C
transfer of a real panel, about 25 ms at 400 kHz, comes on top). It prints p50, p99 and the
maximum, for the first panel drawn and for both, and the frames per second each panel received
while the presses went on and while the clock then ran untouched. It asserts nothing.

The service waits `service.GRACE_NS` (5 ms) after each edge before applying it, on purpose (a
late callback of an earlier edge must still come first): that much of the latency is by design.
And the session journals each input, written and fsynced, before the panels see it: the time of
each journal append is printed too. It depends on the file system of the state directory (a temp
directory by default; give `--state-dir /dev/shm/…` to see the latency without a disk's fsync).
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

try:
    import gammonclock  # noqa: F401
except ImportError:  # running from a checkout without the package installed
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "firmware"))

from luma.core.device import dummy

from gammonclock.config import parse_config
from gammonclock.device import build_device
from gammonclock.hardware.panels import Panel
from gammonclock.service import GRACE_NS
from gammonclock.sides import Button, Pair, Side

ROOT = Path(__file__).resolve().parents[1]

HOLD_DOWN_S = 0.04        # each press lasts this long: over the 30 ms debounce


class TimedPanel(dummy):
    """luma's dummy that notes when each frame arrives and whose clock ran then."""

    def __init__(self, name: str) -> None:
        super().__init__(width=128, height=64, mode="1")
        self.name = name
        self.probe: Callable[[], Any] = lambda: None
        self.frames: list[tuple[int, Any]] = []     # (monotonic ns, probe())
        self.arrived = threading.Condition()

    def display(self, image: Any) -> None:
        super().display(image)
        with self.arrived:
            self.frames.append((time.monotonic_ns(), self.probe()))
            self.arrived.notify_all()

    def wait_for(self, since: int, want: Callable[[Any], bool], timeout: float = 2.0) -> int:
        """The time of the first frame after `since` whose probe passes `want`."""
        deadline = time.monotonic() + timeout
        with self.arrived:
            while True:
                first = [at for at, probe in self.frames if at >= since and want(probe)]
                if first:
                    return first[0]
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError(f"{self.name}: no frame showed the press")
                self.arrived.wait(left)


def mock_config_text() -> str:
    text = (ROOT / "config" / "backgammon.toml").read_text(encoding="utf-8")
    return text.replace('pin_factory = "lgpio"', 'pin_factory = "mock"')


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def ms(ns: float) -> str:
    return f"{ns / 1e6:7.2f} ms"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--presses", type=int, default=300)
    parser.add_argument("--idle-seconds", type=float, default=3.0)
    parser.add_argument("--state-dir", help="where the journal goes (default: a new temp dir)")
    args = parser.parse_args(argv)

    screens = Pair(TimedPanel("left panel"), TimedPanel("right panel"))
    panels = Pair(Panel.for_device(screens.left, "left panel"),
                  Panel.for_device(screens.right, "right panel"))
    state_dir = tempfile.mkdtemp(prefix="gammonclock-bench-", dir=args.state_dir)
    config = parse_config(mock_config_text(), "backgammon.toml (mock)")
    device = build_device(config, state_dir, panels=panels)
    journal = device.session.journal
    assert journal is not None
    appends: list[int] = []
    append = journal.append

    def timed_append(*a: Any, **k: Any) -> Any:
        start = time.monotonic_ns()
        try:
            return append(*a, **k)
        finally:
            appends.append(time.monotonic_ns() - start)

    journal.append = timed_append  # type: ignore[method-assign]

    def probe() -> tuple[Side | None, int | None]:
        # Runs on the service thread, inside present(): the engine it shows.
        turn = device.session.engine.match.turn
        return (None, None) if turn is None else (device.session.engine.match.running_side,
                                                  turn.started_at)

    for screen in screens:
        screen.probe = probe
    pins = {b: device.factory.pin(gpio) for b, gpio in config.device.button_pins.items()}
    worker = threading.Thread(target=device.service.run, name="clock", daemon=True)
    worker.start()
    origin = device.service.origin

    first_frame: list[int] = []
    both_frames: list[int] = []
    try:
        running = Side.RIGHT                    # left's press starts game 1: right's clock runs
        presser = Button.LEFT
        storm_start = time.monotonic_ns()
        counts_before = [len(s.frames) for s in screens]
        for n in range(args.presses + 1):
            edge = time.monotonic_ns()
            pins[presser].drive_low()

            def shows(p: tuple[Side | None, int | None], side: Side = running,
                      edge: int = edge) -> bool:
                return p[0] is side and p[1] is not None and p[1] + origin >= edge - 10**6

            arrivals = [screen.wait_for(edge, shows) for screen in screens]
            if n > 0:                           # the first press starts the game: not counted
                first_frame.append(min(arrivals) - edge)
                both_frames.append(max(arrivals) - edge)
            time.sleep(max(0.0, HOLD_DOWN_S - (time.monotonic_ns() - edge) / 1e9))
            pins[presser].drive_high()
            presser = Button.RIGHT if running is Side.RIGHT else Button.LEFT
            running = running.other
        storm_s = (time.monotonic_ns() - storm_start) / 1e9
        storm_frames = [len(s.frames) - c for s, c in zip(screens, counts_before, strict=True)]

        idle_before = [len(s.frames) for s in screens]
        time.sleep(args.idle_seconds)
        idle_frames = [len(s.frames) - c for s, c in zip(screens, idle_before, strict=True)]
    finally:
        device.service.stop()
        worker.join(5)
        device.close()
        device.factory.close()
        shutil.rmtree(state_dir, ignore_errors=True)

    print(f"edge-to-frame latency on mock hardware: {len(first_frame)} presses "
          f"(service grace {GRACE_NS / 1e6:.1f} ms included)")
    for label, values in (("first panel drawn", first_frame), ("both panels drawn", both_frames)):
        print(f"  {label:<18} p50 {ms(percentile(values, 0.50))}   "
              f"p99 {ms(percentile(values, 0.99))}   max {ms(max(values))}   "
              f"mean {ms(statistics.fmean(values))}")
    print(f"  {'journal append':<18} p50 {ms(percentile(appends, 0.50))}   "
          f"p99 {ms(percentile(appends, 0.99))}   max {ms(max(appends))}   "
          f"mean {ms(statistics.fmean(appends))}   ({len(appends)} records, fsynced, "
          f"under {args.state_dir or tempfile.gettempdir()})")
    print("frames handed to each panel:")
    for screen, storm, idle in zip(screens, storm_frames, idle_frames, strict=True):
        print(f"  {screen.name:<12} during the presses {storm / storm_s:6.1f} fps "
              f"({storm} in {storm_s:.1f} s)   clock running untouched "
              f"{idle / args.idle_seconds:5.1f} fps ({idle} in {args.idle_seconds:.1f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

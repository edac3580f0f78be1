"""Benchmark: from a button's edge to the frame that shows it, on mock hardware.

Run it as a plain script from the repository root::

    python benchmarks/bench_latency.py [--presses N] [--idle-seconds S] [--state-dir DIR]
        [--gap-min S] [--gap-max S] [--quick] [--seed N]
        [--sd-p50-ms MS] [--sd-p99-ms MS] [--sd-stall-rate R] [--sd-stall-ms MS]
        [--sd-as-if-preallocated]

It builds the device `gammonclock run` builds (config/backgammon.toml on gpiozero's MockFactory
pins) with two luma `dummy` panels wrapped so that every `display()` is timestamped, runs the
service on its own thread as the device does, starts game 1, and then has the running player
press their clock N times, alternately, spaced like players: the gaps between presses are drawn
log-uniformly between `--gap-min` and `--gap-max` (0.5–5 s; `--quick`, for the smoke test: 0.1–0.2
s). Back-to-back presses would hide the card: an fsync soon after the last one is cheap, one after
a pause is not. For each press it takes the host's monotonic time just before the pin is driven
low and the time of the first frame handed to each panel in which the other player's clock runs
from that press: the edge-to-glass latency of the software (the I²C transfer of a real panel comes
on top: see bench_bus.py). It prints p50, p99 and the maximum, for the first panel drawn and for
both, and the frames per second each panel received while the presses went on and while the clock
then ran untouched. It asserts nothing.

**The SD-card model.** The first N presses run on a modelled slow card: each `os.fsync` /
`os.fdatasync` of the process (the journal's, the snapshots') takes a time drawn from a
log-normal distribution (median `--sd-p50-ms` 3 ms, 99th percentile `--sd-p99-ms` 20 ms), and one
in a hundred (`--sd-stall-rate` 0.01: one at a random place in each hundred fsyncs, so that a
short run has its share) stalls for `--sd-stall-ms` 150 ms instead — a class-10 card with its
garbage collection. Under the model the call sleeps for the drawn time (without the GIL, as the
real one) instead of syncing this machine's disk, so the figure does not depend on this host's
disk, whose stalls (seconds, on a shared machine) would otherwise leak into it. The next N presses
run on the real file system, for comparison. The model is a patch of `os` inside this benchmark:
the firmware is not slowed.

The service waits `service.GRACE_NS` (5 ms) after each edge before applying it, on purpose (a
late callback of an earlier edge must still come first): that much of the latency is by design.
And the session journals each input, written and fsynced, before the panels see it: the time of
each journal append is printed too. It depends on the file system of the state directory (a temp
directory by default; give `--state-dir /dev/shm/…` to see the latency without a disk's fsync).
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import math
import os
import random
import shutil
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

try:
    import gammonclock  # noqa: F401
except ImportError:  # running from a checkout without the package installed
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "firmware"))

from luma.core.device import dummy

from gammonclock.config.loading import parse_config
from gammonclock.device.build import build_device
from gammonclock.hardware.panels import Panel
from gammonclock.runtime.service import GRACE_NS
from gammonclock.sides import Button, Pair, Side

ROOT = Path(__file__).resolve().parents[1]

HOLD_DOWN_S = 0.04        # each press lasts this long: over the 30 ms debounce
PLAYER_GAPS_S = (0.5, 5.0)    # a player's press follows the last one after this long
QUICK_GAPS_S = (0.1, 0.2)     # --quick (the smoke test)
Z99 = 2.3263478740408408      # the standard normal's 99th percentile


@dataclass
class CardModel:
    """A slow SD card's fsync (see the module's docstring): what each fsync takes."""

    p50_ms: float = 3.0
    p99_ms: float = 20.0
    stall_rate: float = 0.01
    stall_ms: float = 150.0
    seed: int = 1
    # A sync that needs no metadata (`fdatasync` with the file's size unchanged since its last
    # sync, or every sync with `as_if_preallocated`: an append into a preallocated, written
    # region) writes the data and flushes, where `fsync` or a sync that grew the file also
    # commits ext4's journal: modelled at `data_only` of the time (a stall stays as long).
    data_only: float = 0.5
    as_if_preallocated: bool = False
    data_only_syncs: int = 0
    on: bool = False                        # the model applies to the fsyncs made while on
    fsyncs: dict[bool, list[int]] = field(default_factory=lambda: {False: [], True: []})
    # The modelled stalls, each (start, end) in time.monotonic_ns.
    stalls: list[tuple[int, int]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._random = random.Random(self.seed)
        self._lock = threading.Lock()
        self._sigma = math.log(self.p99_ms / self.p50_ms) / Z99 if self.p99_ms > self.p50_ms else 0
        self._block = round(1 / self.stall_rate) if self.stall_rate > 0 else 0
        self._drawn = 0
        self._stall_at = -1
        self.stalled = False                # whether the last draw was a stall
        self._sizes: dict[int, int] = {}     # inode: its size at its last sync

    def draw_s(self) -> float:
        """One fsync's time on the modelled card, in seconds."""
        with self._lock:
            if self._block:
                at = self._drawn % self._block
                if at == 0:
                    self._stall_at = self._random.randrange(self._block)
                self._drawn += 1
                self.stalled = at == self._stall_at
                if self.stalled:
                    return self.stall_ms / 1e3
            return self.p50_ms * math.exp(self._random.gauss(0.0, self._sigma)) / 1e3

    def wrap(self, real: Callable[[int], None], datasync: bool = False
             ) -> Callable[[int], None]:
        def synced(fd: int) -> None:
            on = self.on
            start = time.perf_counter()
            try:
                if on:
                    info = os.fstat(fd)         # an fd the real call would refuse is refused
                    with self._lock:
                        grew = self._sizes.get(info.st_ino) != info.st_size
                        self._sizes[info.st_ino] = info.st_size
                    seconds, stalled = self.draw_s(), self.stalled
                    if not stalled and (self.as_if_preallocated or (datasync and not grew)):
                        seconds *= self.data_only
                        self.data_only_syncs += 1
                    begun = time.monotonic_ns()
                    time.sleep(seconds)
                    if stalled:
                        self.stalls.append((begun, time.monotonic_ns()))
                else:
                    real(fd)
            finally:
                self.fsyncs[on].append(round((time.perf_counter() - start) * 1e9))
        return synced

    @contextlib.contextmanager
    def installed(self) -> Iterator[CardModel]:
        """os.fsync and os.fdatasync through the model while the block runs."""
        names = [n for n in ("fsync", "fdatasync") if hasattr(os, n)]
        saved = {n: getattr(os, n) for n in names}
        for n in names:
            setattr(os, n, self.wrap(saved[n], n == "fdatasync"))
        try:
            yield self
        finally:
            for n in names:
                setattr(os, n, saved[n])


def player_gaps(count: int, low: float, high: float, seed: int) -> list[float]:
    """`count` gaps between presses, log-uniform in [low, high] seconds."""
    rng = random.Random(seed)
    return [math.exp(rng.uniform(math.log(low), math.log(high))) for _ in range(count)]


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


def percentile(values: list[int] | list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def ms(ns: float) -> str:
    return f"{ns / 1e6:7.2f} ms"


def stall_overlap(stalls: list[tuple[int, int]], start: int, end: int) -> int:
    """How much of [start, end] the stalls cover (ns; they never overlap each other)."""
    return sum(max(0, min(end, b) - max(start, a)) for a, b in stalls)


def _stall_share(card: CardModel, spans: list[tuple[int, int]]) -> None:
    """Press → both panels with the SD-card model, apart for the presses a stall touched: the
    others' p99 (the target's, stalls aside), and how much later than the stall's own length
    the touched ones were drawn (the target: never more than the stall)."""
    clear = [end - start for start, end in spans if not stall_overlap(card.stalls, start, end)]
    beyond = [end - start - stall_overlap(card.stalls, start, end) for start, end in spans
              if stall_overlap(card.stalls, start, end)]
    print(f"  with the SD-card model, the stall share apart ({len(card.stalls)} stalls of "
          f"{card.stall_ms:g} ms):")
    if clear:
        print(f"    presses no stall touched ({len(clear)}): both panels drawn p50 "
              f"{ms(percentile(clear, 0.50))}   p99 {ms(percentile(clear, 0.99))}   "
              f"max {ms(max(clear))}   target p99 ≤ 20 ms")
    if beyond:
        print(f"    presses a stall touched ({len(beyond)}): drawn later than the stall's own "
              f"length by p50 {ms(percentile(beyond, 0.50))}   max {ms(max(beyond))}   "
              f"(the stall itself excluded)")


def main(argv: list[str] | None = None) -> int:
    try:
        return _main(argv)
    finally:
        gc.unfreeze()      # the device's service froze the heap once READY (settle_memory): run
                           # in a test process, later tests must not inherit it


def _main(argv: list[str] | None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--presses", type=int, default=120,
                        help="presses timed with the SD-card model, and as many without "
                             "(default %(default)s)")
    parser.add_argument("--idle-seconds", type=float, default=3.0)
    parser.add_argument("--state-dir", help="where the journal goes (default: a new temp dir)")
    parser.add_argument("--gap-min", type=float, help=f"shortest gap between presses, s "
                        f"(default {PLAYER_GAPS_S[0]:g}; --quick: {QUICK_GAPS_S[0]:g})")
    parser.add_argument("--gap-max", type=float, help=f"longest gap between presses, s "
                        f"(default {PLAYER_GAPS_S[1]:g}; --quick: {QUICK_GAPS_S[1]:g})")
    parser.add_argument("--quick", action="store_true",
                        help="presses close together, for the smoke test")
    parser.add_argument("--seed", type=int, default=2026, help="gaps and the card's draws")
    parser.add_argument("--sd-p50-ms", type=float, default=3.0, help="the card's median fsync")
    parser.add_argument("--sd-p99-ms", type=float, default=20.0,
                        help="the card's 99th-percentile fsync (stalls aside)")
    parser.add_argument("--sd-stall-rate", type=float, default=0.01,
                        help="the share of fsyncs that stall")
    parser.add_argument("--sd-stall-ms", type=float, default=150.0, help="a stall's length")
    parser.add_argument("--sd-as-if-preallocated", action="store_true",
                        help="model every sync as an fdatasync into a preallocated file (half "
                             "the time, stalls aside), even one that grew the file (the writer "
                             "fills zeros ahead when the loop is idle)")
    args = parser.parse_args(argv)
    gaps_s = QUICK_GAPS_S if args.quick else PLAYER_GAPS_S
    gap_min = gaps_s[0] if args.gap_min is None else args.gap_min
    gap_max = gaps_s[1] if args.gap_max is None else args.gap_max
    if not HOLD_DOWN_S < gap_min <= gap_max:
        parser.error(f"the gaps must be over the {HOLD_DOWN_S:g} s a press is held, min ≤ max")
    gaps = player_gaps(2 * args.presses + 1, gap_min, gap_max, args.seed)
    card = CardModel(args.sd_p50_ms, args.sd_p99_ms, args.sd_stall_rate, args.sd_stall_ms,
                     args.seed, as_if_preallocated=args.sd_as_if_preallocated)

    screens = Pair(TimedPanel("left panel"), TimedPanel("right panel"))
    panels = Pair(Panel.for_device(screens.left, "left panel"),
                  Panel.for_device(screens.right, "right panel"))
    state_dir = tempfile.mkdtemp(prefix="gammonclock-bench-", dir=args.state_dir)
    config = parse_config(mock_config_text(), "backgammon.toml (mock)")
    device = build_device(config, state_dir, panels=panels)
    journal = device.session.journal
    assert journal is not None
    appends: dict[bool, list[int]] = {False: [], True: []}
    append = journal.append

    def timed_append(*a: Any, **k: Any) -> Any:
        on = card.on
        start = time.monotonic_ns()
        try:
            return append(*a, **k)
        finally:
            appends[on].append(time.monotonic_ns() - start)

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

    # Per press, without (False) and with (True) the SD-card model.
    first_frame: dict[bool, list[int]] = {False: [], True: []}
    both_frames: dict[bool, list[int]] = {False: [], True: []}
    spans: list[tuple[int, int]] = []          # per counted press: the edge, both panels drawn
    stack = contextlib.ExitStack()
    try:
        stack.enter_context(card.installed())
        running = Side.RIGHT                    # left's press starts game 1: right's clock runs
        presser = Button.LEFT
        storm_start = time.monotonic_ns()
        counts_before = [len(s.frames) for s in screens]
        next_at = time.monotonic_ns()
        for n in range(2 * args.presses + 1):
            time.sleep(max(0.0, (next_at - time.monotonic_ns()) / 1e9))
            card.on = n <= args.presses         # the first press (n = 0) starts the game
            edge = time.monotonic_ns()
            next_at = edge + round(gaps[n] * 1e9)
            pins[presser].drive_low()

            def shows(p: tuple[Side | None, int | None], side: Side = running,
                      edge: int = edge) -> bool:
                return p[0] is side and p[1] is not None and p[1] + origin >= edge - 10**6

            arrivals = [screen.wait_for(edge, shows) for screen in screens]
            if n > 0:                           # the first press starts the game: not counted
                first_frame[card.on].append(min(arrivals) - edge)
                both_frames[card.on].append(max(arrivals) - edge)
                spans.append((edge, max(arrivals)))
            time.sleep(max(0.0, HOLD_DOWN_S - (time.monotonic_ns() - edge) / 1e9))
            pins[presser].drive_high()
            presser = Button.RIGHT if running is Side.RIGHT else Button.LEFT
            running = running.other
        time.sleep(max(0.0, (next_at - time.monotonic_ns()) / 1e9))
        card.on = False
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
        stack.close()
        shutil.rmtree(state_dir, ignore_errors=True)

    under = args.state_dir or tempfile.gettempdir()
    print(f"edge-to-frame latency on mock hardware: {2 * args.presses} presses "
          f"{gap_min:g}–{gap_max:g} s apart (service grace {GRACE_NS / 1e6:.1f} ms included), "
          f"journal under {under}")
    print(f"SD-card model on the first {args.presses}: fsync log-normal, p50 {card.p50_ms:g} ms, "
          f"p99 {card.p99_ms:g} ms; {100 * card.stall_rate:g} % stall {card.stall_ms:g} ms; "
          f"{card.data_only_syncs} syncs needed no metadata (x{card.data_only:g}"
          f"{', every sync as if preallocated' if card.as_if_preallocated else ''})")
    for on, title in ((True, "with the SD-card model"), (False, "this machine's file system")):
        print(f"  {title} ({len(both_frames[on])} presses):")
        for label, values in (("first panel drawn", first_frame[on]),
                              ("both panels drawn", both_frames[on]),
                              ("journal append", appends[on]),
                              ("fsync", card.fsyncs[on])):
            if not values:
                continue
            print(f"    {label:<18} p50 {ms(percentile(values, 0.50))}   "
                  f"p99 {ms(percentile(values, 0.99))}   max {ms(max(values))}   "
                  f"mean {ms(statistics.fmean(values))}   (n {len(values)})")
    _stall_share(card, spans[:len(both_frames[True])])
    print("frames handed to each panel:")
    for screen, storm, idle in zip(screens, storm_frames, idle_frames, strict=True):
        print(f"  {screen.name:<12} during the presses {storm / storm_s:6.1f} fps "
              f"({storm} in {storm_s:.1f} s)   clock running untouched "
              f"{idle / args.idle_seconds:5.1f} fps ({idle} in {args.idle_seconds:.1f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Benchmark: the journal's syncs per tap, and press → frame with an SD card's sync model.

Run it as a plain script from the repository root::

    python benchmarks/bench_sync.py [--taps N] [--seed S] [--no-card-model] [--gap-max S]
                                    [--as-if-preallocated]

It drives the real loop (`ClockService`, `Session`, `JournalWriter` with fsync, in a temporary
directory) through a generated match: players tap their clocks, spaced like players (0.5–8 s
apart), each release 60–150 ms after its press, one press in ten with bounce edges. Every sync
of the journal (`os.fsync`, `os.fdatasync`) is counted and, unless `--no-card-model`, delayed like
an SD card's: log-normal with p50 3 ms and p99 20 ms, and 1 % stalls of 150 ms (the journal is
then kept in /dev/shm, so the model is the card's whole sync). A sync that needs no metadata
(`fdatasync` with the file's size unchanged since its last sync, or every journal sync with
`--as-if-preallocated`) is modelled at DATA_ONLY (half) of that delay; a stall (the card's
own) stays as long. Between inputs the loop is idle as on the device (`ClockService.when_idle`):
the journal's zeros are filled ahead there (an fsync of its own, counted apart as a fill), so
the appends' fdatasyncs find the file's size unchanged.

Time runs on a clock that skips the idle gaps between inputs but counts every microsecond the
loop spends (the injected delays included), so a press due while a sync stalls waits as it would
on the device. For each press it measures from the instant it is due (its edge plus the loop's
grace, `service.GRACE_NS`) to the picture handed to the panels: press → frame (the panels'
bus comes on top: bench_bus). The panels are stood for by a presenter that takes `--render-ms`
to render (2 ms: about a Pi's for both panels) and, as the panels' bus writers do, can hold its
pictures while the journal syncs: the loop renders beside the sync. It prints the syncs per
tap, p50, p99 and the maximum of press → frame, and the longest injected delay. It asserts
nothing.
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import math
import os
import random
import stat
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

try:
    import gammonclock  # noqa: F401
except ImportError:  # running from a checkout without the package installed
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "firmware"))

from gammonclock.config.loading import parse_config
from gammonclock.core.effects import Effect
from gammonclock.core.engine import ButtonEdge, Engine
from gammonclock.journal.files import journal_header
from gammonclock.journal.key import load_or_create_key
from gammonclock.journal.prealloc import written_end
from gammonclock.journal.records import Stamp
from gammonclock.journal.writer import JournalWriter
from gammonclock.runtime.service import GRACE_NS, ClockService
from gammonclock.runtime.session import Session
from gammonclock.sides import Button

MS = 1_000_000
S = 1_000_000_000
CONFIG = """\
[match]
length = 99
[players]
left = "Anna"
right = "Boris"
[time]
reserve = "60m"
"""

# The SD card's sync: log-normal with this median and p99, and stalls this often and long.
CARD_P50_S, CARD_P99_S = 0.003, 0.020
STALL_RATE, STALL_S = 0.01, 0.150
# A sync that needs no metadata (`fdatasync` of a file whose size did not change since its last
# sync: an append into a preallocated, already written region) writes the data blocks and
# flushes; `fsync`, or any sync that grew the file, also commits ext4's journal (the inode's size,
# the block bitmap): about twice the card's writes. A model, not a measurement: half the delay.
DATA_ONLY = 0.5


class SkipClock:
    """Monotonic time that counts real time as it passes and skips idle gaps (`skip_to`)."""

    def __init__(self) -> None:
        self.skipped = 0
        self.start = time.perf_counter_ns()

    def __call__(self) -> int:
        return time.perf_counter_ns() - self.start + self.skipped

    def skip_to(self, t: int) -> None:
        now = self()
        if t > now:
            self.skipped += t - now


class Card:
    """The journal's syncs, counted, and delayed like an SD card's (or not)."""

    def __init__(self, model: bool, rng: random.Random) -> None:
        self.model, self.rng = model, rng
        self.syncs = 0
        self.ticks = 0          # syncs whose last record is a timer's or a checkpoint
        self.data_only = 0      # syncs that needed no metadata (see DATA_ONLY)
        self.fills = 0          # fsyncs of zeros filled ahead (the loop's idle time)
        self.as_if_preallocated = False    # every journal sync counted as data only
        self._sizes: dict[int, int] = {}   # inode: size at its last sync
        self.delays: list[float] = []
        self.sigma = math.log(CARD_P99_S / CARD_P50_S) / 2.326

    @contextlib.contextmanager
    def installed(self) -> Iterator[Card]:
        """os.fsync and os.fdatasync through the card while the block runs (and only then: a
        smoke test runs this benchmark in a test process, whose later tests sync folders)."""
        names = [n for n in ("fsync", "fdatasync") if hasattr(os, n)]
        saved = {n: getattr(os, n) for n in names}
        for n in names:
            setattr(os, n, self._wrap(saved[n], n == "fdatasync"))
        try:
            yield self
        finally:
            for n in names:
                setattr(os, n, saved[n])

    def _wrap(self, real: Any, datasync: bool) -> Any:
        def sync(fd: int) -> None:
            real(fd)
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode):
                return                                  # a folder's entries: not the journal
            grew = self._sizes.get(info.st_ino) != info.st_size
            self._sizes[info.st_ino] = info.st_size
            with open(f"/proc/self/fd/{fd}", "rb") as f:      # the journal, read-only
                size = written_end(f"/proc/self/fd/{fd}")    # its zeros ahead left out
                f.seek(max(0, size - 4096))
                last = f.read(size - f.tell()).rstrip(b"\n").rsplit(b"\n", 1)[-1]
            if not datasync and size < info.st_size:
                self.fills += 1                             # zeros filled ahead, when idle
            else:
                self.syncs += 1
                data_only = self.as_if_preallocated or (datasync and not grew)
                self.data_only += data_only
                if b'"kind":"tick"' in last:
                    self.ticks += 1
            if self.model:
                data_only = datasync and not grew
                delay = (STALL_S if self.rng.random() < STALL_RATE     # the card's own: as long
                         else CARD_P50_S * math.exp(self.rng.gauss(0.0, self.sigma))
                         * (DATA_ONLY if data_only or self.as_if_preallocated else 1.0))
                self.delays.append(delay)
                time.sleep(delay)
        return sync


class Camera:
    """A presenter standing for the panels: it renders for `render_s` (a Pi renders two panels
    in a few ms) and notes when each picture leaves for the glass. Like the panels' bus writers
    it can hold its pictures while the journal syncs (the loop then renders beside the sync)
    and lets them go at `release`."""

    def __init__(self, clock: SkipClock, render_s: float) -> None:
        self.clock, self.render_s = clock, render_s
        self.shown: list[tuple[int, int]] = []     # (engine instant shown, clock when it left)
        self._holding = False
        self._held: list[int] = []

    def hold(self) -> bool:
        self._holding = True
        return True

    def release(self) -> None:
        self._holding = False
        now = self.clock()
        self.shown.extend((t, now) for t in self._held)
        self._held = []

    def present(self, engine: Engine, t: int, effects: list[Effect]) -> int | None:
        if self.render_s:
            time.sleep(self.render_s)
        if self._holding:
            self._held.append(t)
        else:
            self.shown.append((t, self.clock()))
        return None

    def close(self) -> None:
        pass


def edges(taps: int, rng: random.Random, gap_max_ms: int = 8000
          ) -> list[tuple[ButtonEdge, bool]]:
    """A match's taps, turn after turn, spaced like players (0.5 s to `gap_max_ms` apart,
    engine instants from 1 s); each edge with whether it is a tap's press."""
    out: list[tuple[ButtonEdge, bool]] = []
    t = 1 * S
    for i, button in zip(range(taps), itertools.cycle([Button.LEFT, Button.RIGHT]),
                         strict=False):
        out.append((ButtonEdge(t, button, True), True))
        if i % 10 == 3:                                  # a bouncy contact
            for k in range(rng.randint(1, 3)):
                out.append((ButtonEdge(t + (2 * k + 1) * MS // 2, button, False), False))
                out.append((ButtonEdge(t + (2 * k + 2) * MS // 2, button, True), False))
        out.append((ButtonEdge(t + rng.randint(60, 150) * MS, button, False), False))
        t += rng.randint(500, gap_max_ms) * MS
    return out


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def run(taps: int, seed: int, model: bool, render_s: float = 0.0, gap_max_s: float = 8.0,
        as_if_preallocated: bool = False) -> dict[str, float]:
    rng = random.Random(seed)
    card = Card(model, random.Random(seed + 1))
    card.as_if_preallocated = as_if_preallocated
    clock = SkipClock()
    # With the card model, the journal lives in memory (/dev/shm, where a sync costs nothing)
    # so that the model alone is the card; without it, on this machine's disk.
    shm = Path("/dev/shm")
    where = str(shm) if model and shm.is_dir() else None
    with tempfile.TemporaryDirectory(prefix="bench-sync-", dir=where) as tmp:
        config = parse_config(CONFIG, "bench.toml")
        key = load_or_create_key(Path(tmp) / "state")
        def stamps() -> Stamp:
            return Stamp(clock(), "bench", time.time_ns())
        writer = JournalWriter.create(Path(tmp) / "match.jsonl", key,
                                      journal_header(CONFIG, "bench.toml"), 0, stamps())
        origin = clock()
        session = Session(Engine.start(config.rules, at=0), writer, stamps,
                          config.device.checkpoint_ns)
        camera = Camera(clock, render_s)
        service = ClockService(session, [camera], origin=origin, clock_ns=clock)
        presses: list[int] = []          # engine instants of the presses
        with card.installed():
            wake = service.step()
            plan = edges(taps, rng, round(gap_max_s * 1000))
            for i, (edge, press) in enumerate(plan):
                due = origin + edge.t + GRACE_NS
                while wake is not None and wake < due:       # timers, checkpoints meanwhile
                    clock.skip_to(wake)
                    wake = service.step()
                clock.skip_to(origin + edge.t)
                service.submit(ButtonEdge(origin + edge.t, edge.button, edge.pressed))
                if press:
                    presses.append(edge.t)
                nxt = plan[i + 1][0].t if i + 1 < len(plan) else None
                if nxt is not None and nxt < edge.t + GRACE_NS:
                    continue                                 # submitted together (a bounce)
                clock.skip_to(due)
                wake = service.step()
                service.when_idle(wake)                      # the loop's idle time
            session.close()
        syncs, ticks = card.syncs, card.ticks
    latencies = []
    shown = camera.shown
    j = 0
    for t in presses:
        while j < len(shown) and shown[j][0] < t:
            j += 1
        if j < len(shown) and shown[j][0] == t:      # its own picture (not a later one)
            latencies.append((shown[j][1] - (origin + t + GRACE_NS)) / MS)
    return {"taps": taps, "edges": len(plan), "syncs": syncs, "per_tap": syncs / taps,
            "ticks": ticks, "data_only": card.data_only, "fills": card.fills,
            "inputs_per_tap": (syncs - ticks) / taps,
            "p50": statistics.median(latencies), "p99": percentile(latencies, 0.99),
            "max": max(latencies), "worst_delay": max(card.delays, default=0.0) * 1000,
            "presses": len(latencies)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--taps", type=int, default=400, help="taps in the match (400)")
    parser.add_argument("--seed", type=int, default=20, help="the match and the card (20)")
    parser.add_argument("--render-ms", type=float, default=2.0,
                        help="the panels' render per picture (2 ms: a Pi's, about)")
    parser.add_argument("--no-card-model", action="store_true",
                        help="no injected delay: this machine's syncs alone")
    parser.add_argument("--gap-max", type=float, default=8.0,
                        help="the longest turn, seconds (8: turns of 0.5-8 s)")
    parser.add_argument("--as-if-preallocated", action="store_true",
                        help="model every journal sync as an fdatasync into a preallocated "
                             "file (no metadata: DATA_ONLY of the delay), even one that grew "
                             "the file (the writer fills ahead when idle)")
    args = parser.parse_args(argv)
    result = run(args.taps, args.seed, not args.no_card_model, args.render_ms / 1000,
                 args.gap_max, args.as_if_preallocated)
    model = ("no card model" if args.no_card_model else
             f"SD model: p50 {CARD_P50_S * 1e3:g} ms, p99 {CARD_P99_S * 1e3:g} ms, "
             f"{STALL_RATE:.0%} stalls of {STALL_S * 1e3:g} ms")
    print(f"a match of {result['taps']} taps ({result['edges']} edges, bounces included), "
          f"{model}; a render of {args.render_ms:g} ms per picture")
    print(f"fsyncs per tap: {result['per_tap']:.2f} ({result['syncs']} syncs; for the inputs "
          f"alone {result['inputs_per_tap']:.2f} per tap, and {result['ticks']} for checkpoints "
          f"and timers alone: a clock that runs is journaled every 5 s, synced alone every "
          f"30 s; turns of 0.5-{args.gap_max:g} s)")
    print(f"syncs that needed no metadata (fdatasync, size unchanged"
          f"{', or modelled as if preallocated' if args.as_if_preallocated else ''}): "
          f"{result['data_only']} of {result['syncs']}; zeros filled ahead when idle "
          f"{result['fills']} times (an fsync each, off the press path)")
    print(f"press due -> frame ({result['presses']} presses): p50 {result['p50']:.2f} ms, "
          f"p99 {result['p99']:.2f} ms, max {result['max']:.2f} ms; longest injected sync "
          f"{result['worst_delay']:.1f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())

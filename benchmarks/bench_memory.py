"""Benchmark: the clock's memory footprint (issue 20, "a flat footprint").

Run it from the repository root::

    python benchmarks/bench_memory.py [--points 99] [--taps 2000] [--records 53000] [--fsync]

It prints:

- **RSS over a match**: a generated `--points`-point match (`bench_match.py`'s generator, raw
  button edges) run through a journaled session by the service's own scripted loop
  (`simulate.run_script`, as `gammonclock run` drives it, on a virtual clock), its journal
  written as the clock writes it (`--fsync`: every record fsynced, as on the device; off by
  default, which changes the time it takes, not the memory). The resident memory before the
  first input, at each tenth of the match and at its end, in MB (target: flat, at most 40 MB);
- **the full GC pause** at the end of that match: one `gc.collect()` (target at most 10 ms),
  with the service's `gc.freeze()` after the start and after each snapshot;
- **a snapshot after `--taps` taps while paused**: the arbiter pauses a game in progress and the
  players tap away; the size of the last snapshot record (target at most 10 KB), and the
  journal's size;
- **`gammonclock export --format csv` of a journal of about `--records` records** (the match
  above, the arbiter setting the score back to 0-0 whenever a side passes 80, as
  `bench_recovery.py` does), and of half of it: the tool's peak resident memory (target at most
  45 MB, flat with the length).

EXACTNESS CHECK: the match's Σ charged + Σ delay used over the surviving turn ends equals Σ of
the generator's turn spans, to the nanosecond (printed). Figures only; nothing is asserted.
"""

from __future__ import annotations

import argparse
import gc
import itertools
import sys
import tempfile
import time
from pathlib import Path

try:
    import gammonclock  # noqa: F401
except ImportError:  # running from a checkout without the package installed
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "firmware"))

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_match import generate_match  # noqa: E402

from gammonclock.config.loading import parse_config  # noqa: E402
from gammonclock.core.arbiter import Pause  # noqa: E402
from gammonclock.core.effects import Effect, TurnEnded, surviving  # noqa: E402
from gammonclock.core.engine import ButtonEdge, Engine, Input  # noqa: E402
from gammonclock.core.match import ArbiterAction  # noqa: E402
from gammonclock.journal.files import journal_header
from gammonclock.journal.key import load_or_create_key
from gammonclock.journal.records import JOURNALS_DIR, SNAPSHOT_KIND, Stamp
from gammonclock.journal.writer import JournalWriter
from gammonclock.runtime.service import settle_memory  # noqa: E402
from gammonclock.runtime.session import Session
from gammonclock.sides import Button  # noqa: E402
from gammonclock.sim.simulate import run_script  # noqa: E402

MS, S = 1_000_000, 1_000_000_000
TARGET_RSS_MB, TARGET_SNAPSHOT_KB, TARGET_GC_MS, TARGET_EXPORT_MB = 40, 10, 10, 45


def config_text(points: int, reserve_min: int | None = None) -> str:
    return (f'[match]\ndiscipline = "backgammon"\nlength = {min(points, 99)}\n\n'
            f'[time]\nreserve = "{reserve_min or 2 * points}m"\n')


def rss_mb() -> float:
    """This process's resident memory now (VmRSS), in MB."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def stamp() -> Stamp:
    return Stamp(time.monotonic_ns(), "bench", time.time_ns())


def journaled_session(state: Path, text: str, fsync: bool, name: str = "match-bench.jsonl"
                      ) -> Session:
    key = load_or_create_key(state)
    path = state / JOURNALS_DIR / name
    path.parent.mkdir(parents=True, exist_ok=True)
    writer = JournalWriter.create(path, key, journal_header(text, "bench.toml"), 0, stamp(),
                                  fsync=fsync)
    session = Session(Engine.start(parse_config(text).rules), writer, stamp)
    session.after_snapshot = settle_memory      # as the service does
    return session


def match_footprint(points: int, fsync: bool, seed: int = 2024
                    ) -> tuple[list[float], tuple[float, float], int, bool]:
    """A `points`-point match through a journaled session: RSS samples (MB: before, each tenth,
    end), the full GC pause at its end (ms; and had nothing been frozen), the journal's records,
    and the exactness check."""
    match = generate_match(seed, points)
    effects: list[Effect] = []
    with tempfile.TemporaryDirectory(prefix="gammonclock-bench-memory-") as folder:
        session = journaled_session(Path(folder), config_text(points), fsync)
        session.observers.append(lambda _, said: effects.extend(said))
        settle_memory()                         # the service's READY
        samples = [rss_mb()]
        marks = [match.end * k // 10 for k in range(1, 10)]

        def pace(t: int) -> None:         # the service's clock moves to `t`
            while marks and t >= marks[0]:
                marks.pop(0)
                samples.append(rss_mb())
        run_script(session, match.inputs, match.end, pace=pace)
        samples.append(rss_mb())
        started = time.perf_counter()
        gc.collect()
        pause_ms = (time.perf_counter() - started) * 1000
        gc.unfreeze()                          # what it would be had nothing been frozen
        started = time.perf_counter()
        gc.collect()
        unfrozen_ms = (time.perf_counter() - started) * 1000
        assert session.journal is not None
        records = session.journal.next_seq if isinstance(session.journal, JournalWriter) else 0
        session.close()
    ends = [e for e in surviving(effects) if isinstance(e, TurnEnded)]
    exact = sum(e.charged + e.delay_used for e in ends) == sum(s for _, s in match.turn_spans)
    return samples, (pause_ms, unfrozen_ms), records, exact


def paused_taps_snapshot(taps: int, fsync: bool = False) -> tuple[int, int, int]:
    """`taps` taps while the arbiter has paused a game in progress: the size of the last
    snapshot record (bytes), the journal's size (bytes) and its records."""
    text = config_text(7)
    with tempfile.TemporaryDirectory(prefix="gammonclock-bench-memory-") as folder:
        session = journaled_session(Path(folder), text, fsync)
        inputs: list[Input] = []
        t = S

        def tap(button: Button) -> None:
            nonlocal t
            inputs.extend([ButtonEdge(t, button, True), ButtonEdge(t + 80 * MS, button, False)])
            t += 300 * MS
        for button in (Button.LEFT, Button.RIGHT, Button.LEFT, Button.RIGHT):
            tap(button)
            t += 5 * S
        inputs.append(ArbiterAction(t, Pause()))
        t += S
        for n in range(taps):
            tap((Button.LEFT, Button.RIGHT, Button.CUBE)[n % 3])
        run_script(session, inputs, t + S)
        assert session.journal is not None
        path = Path(session.journal.path)
        session.close()
        last = 0
        with path.open("rb") as f:
            for line in f:
                if f'"kind":"{SNAPSHOT_KIND}"'.encode() in line:
                    last = len(line)
        with path.open("rb") as f:
            records = sum(1 for _ in f)
        return last, path.stat().st_size, records


def tool_peak_mb(args: list[str]) -> tuple[float, float]:
    """`gammonclock ARGS` in a fresh interpreter (`bench_recovery.tool`): its peak resident MB
    and wall seconds."""
    from bench_recovery import tool
    elapsed, peak, code = tool(args)
    if code != 0:
        raise SystemExit(f"gammonclock {' '.join(args)} exited with status {code}")
    return peak, elapsed


def long_journal(state: Path, records: int, seed: int = 2024) -> tuple[Path, int]:
    """A journal of `records` records (fewer if the games run out): 99-point matches' games one
    after the other, the arbiter setting the score back to 0-0 past 80 (`bench_recovery.py`'s
    way), cut after its `records`th line (a journal cut short is a whole journal)."""
    from bench_recovery import inputs_of
    points = max(1, min(99, records // 400 + 1))     # a 99-point match: ~40 000 records
    while True:
        inputs = inputs_of(points, seed)
        if len(inputs) >= records or points > 1000:
            break
        points *= 2
    session = journaled_session(state, config_text(points), fsync=False, name="long.jsonl")
    run_script(session, inputs, inputs[-1].t)
    session.close()
    assert session.journal is not None
    path = Path(session.journal.path)
    lines = path.read_bytes().splitlines(keepends=True)[:records]
    path.write_bytes(b"".join(lines))
    return path, len(lines)


def main(argv: list[str] | None = None) -> int:
    try:
        return _main(argv)
    finally:
        gc.unfreeze()      # the clocks' sessions froze the heap (settle_memory): run in a test
                           # process, later tests must not inherit it


def _main(argv: list[str] | None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--points", type=int, default=99)
    parser.add_argument("--taps", type=int, default=2000)
    parser.add_argument("--records", type=int, default=53_000)
    parser.add_argument("--fsync", action="store_true", help="fsync every record, as the clock")
    args = parser.parse_args(argv)

    samples, (pause_ms, unfrozen_ms), records, exact = match_footprint(args.points, args.fsync)
    print(f"RSS over a {args.points}-point match ({records} records, journal "
          f"{'fsynced' if args.fsync else 'not fsynced'}): {samples[0]:.1f} -> {samples[-1]:.1f} "
          f"MB, max {max(samples):.1f} MB (target flat, at most {TARGET_RSS_MB} MB)")
    print("  by tenths: " + " ".join(f"{s:.1f}" for s in samples))
    print(f"  exact: sum charged + delay used = sum of turn spans: {'yes' if exact else 'NO'}")
    print(f"full GC pause at the end of the match: {pause_ms:.1f} ms (target at most "
          f"{TARGET_GC_MS} ms); {unfrozen_ms:.1f} ms had nothing been frozen")

    size, journal_size, taps_records = paused_taps_snapshot(args.taps)
    print(f"snapshot after {args.taps} taps while paused: {size / 1024:.1f} KB (target at most "
          f"{TARGET_SNAPSHOT_KB} KB); the journal {journal_size / 1024:.0f} KB, "
          f"{taps_records} records")

    with tempfile.TemporaryDirectory(prefix="gammonclock-bench-memory-") as folder:
        full, count = long_journal(Path(folder), args.records)
        half = full.with_name("half.jsonl")
        with full.open("rb") as f:
            half.write_bytes(b"".join(itertools.islice(f, count // 2)))
        for path, n in ((half, count // 2), (full, count)):
            peak, wall = tool_peak_mb(["export", str(path), "--format", "csv", "--out",
                                       str(Path(folder) / "out.csv")])
            print(f"export csv of {n} records: peak {peak:.1f} MB, {wall:.2f} s (target at "
                  f"most {TARGET_EXPORT_MB} MB, flat with the length)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

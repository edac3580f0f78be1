"""Benchmark: the journal — writing a 25-point match, replaying it, and one fsynced append.

Run it from the repository root::

    python benchmarks/bench_journal.py [--appends N]

It journals the benchmark match of `bench_match.py` (a 25-point match of more than 5 000 inputs)
through a `Session` into a temporary directory, then prints:

- the journal's size and record count;
- the replay time of that journal through the engine (target: under 0.5 s on a 2-core machine),
  best of several runs, and whether the replayed state equals the live one;
- the cost of one `JournalWriter.append` with its sync (p50, p99), on the disk the temporary
  directory is on — on the Pi that is the SD card, where it is much slower than here;
- appends spaced like presses (`--gap-ms`, 50 ms: back-to-back syncs are cheaper than a
  table's), three ways: `fsync` of a file that grows (the journal before issue 20),
  `fdatasync` of a file that grows, and `fdatasync` into zeros filled ahead (the journal now:
  its size and blocks already on the disk, so the sync writes the data alone).

Figures only; nothing is asserted.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

try:
    import gammonclock  # noqa: F401
except ImportError:  # running from a checkout without the package installed
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "firmware"))

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_match import generate_benchmark_match  # noqa: E402

from gammonclock.core.engine import Engine  # noqa: E402
from gammonclock.journal.files import journal_header
from gammonclock.journal.key import load_or_create_key
from gammonclock.journal.reader import read_journal
from gammonclock.journal.records import Stamp
from gammonclock.journal.replay import replay
from gammonclock.journal.writer import JournalWriter
from gammonclock.runtime.session import Session
from gammonclock.sim.simulate import run_script  # noqa: E402

TARGET_REPLAY_S = 0.5
CONFIG = '[match]\ndiscipline = "backgammon"\nlength = 25\n'


def stamp() -> Stamp:
    return Stamp(time.monotonic_ns(), "bench", time.time_ns())


def write_match(directory: Path, fsync: bool) -> tuple[Path, Session, float]:
    match = generate_benchmark_match()
    key = load_or_create_key(directory)
    path = directory / f"match-{'fsync' if fsync else 'nofsync'}.jsonl"
    writer = JournalWriter.create(path, key, journal_header(CONFIG, "bench.toml"), 0, stamp(),
                                  fsync=fsync)
    session = Session(Engine.start(match.rules), writer, stamp)
    started = time.perf_counter()
    run_script(session, match.inputs, match.end)
    elapsed = time.perf_counter() - started
    session.close()
    return path, session, elapsed


def spaced_appends(directory: Path, how: str, count: int, gap_s: float,
                   data: dict[str, object]) -> list[int]:
    """The time of each append (write + sync), `gap_s` apart: `how` is "fsync, grows" (the
    writer's sync made an fsync), "fdatasync, grows" or "fdatasync into zeros"."""
    writer = JournalWriter.create(directory / f"spaced-{how.replace(' ', '-')}.jsonl",
                                  load_or_create_key(directory), {"config": CONFIG}, 0, stamp())
    if how.startswith("fsync"):
        writer._sync_data = lambda: os.fsync(writer.fd)  # type: ignore[method-assign]
    costs = []
    for i in range(count):
        if how.endswith("zeros"):
            writer.fill_ahead()              # as the loop does when idle, off the timed path
        time.sleep(gap_s)
        started = time.perf_counter_ns()
        writer.append("input", i, data, stamp())
        costs.append(time.perf_counter_ns() - started)
    writer.close()
    return sorted(costs)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--appends", type=int, default=300, help="fsynced appends to time")
    parser.add_argument("--repeat", type=int, default=5, help="replays to time")
    parser.add_argument("--spaced", type=int, default=100,
                        help="appends spaced like presses, timed for each way of syncing")
    parser.add_argument("--gap-ms", type=float, default=50.0, help="their spacing (50 ms)")
    args = parser.parse_args(argv)

    with tempfile.TemporaryDirectory(prefix="gammonclock-bench-") as tmp:
        directory = Path(tmp)
        path, session, write_s = write_match(directory, fsync=False)
        read = read_journal(path)
        print(f"journal:           {len(read.records)} records, {path.stat().st_size:,} bytes "
              f"(a 25-point match)")
        print(f"writing it:        {write_s:.3f} s without fsync (engine + encoding + sealing)")

        times = []
        for _ in range(args.repeat):
            started = time.perf_counter()
            replayed = replay(read_journal(path))
            times.append(time.perf_counter() - started)
        same = replayed.engine.state_json() == session.engine.state_json()
        verdict = "within" if min(times) < TARGET_REPLAY_S else "OVER"
        print(f"replay:            best {min(times):.3f} s of {args.repeat} (median "
              f"{statistics.median(times):.3f} s)  target < {TARGET_REPLAY_S} s on 2 cores: "
              f"{verdict}")
        print(f"replayed state equals the live one: {'yes' if same else 'NO'}; records that "
              f"replay differently: {len(replayed.diverged)}")

        writer = JournalWriter.create(directory / "appends.jsonl", load_or_create_key(directory),
                                      {"config": CONFIG}, 0, stamp())
        data = {"input": {"type": "edge", "button": "left", "pressed": True},
                "effects": [e["effects"] for e in [read.records[5].data]][0]}
        costs = []
        for i in range(args.appends):
            started = time.perf_counter_ns()
            writer.append("input", i, data, stamp())
            costs.append(time.perf_counter_ns() - started)
        writer.close()
        costs.sort()
        p50 = costs[len(costs) // 2] / 1e6
        p99 = costs[min(len(costs) - 1, int(len(costs) * 0.99))] / 1e6
        print(f"one append + sync: p50 {p50:.3f} ms, p99 {p99:.3f} ms over {args.appends} "
              f"appends on {tmp.split('/')[1]} (back to back)")
        for how in ("fsync, grows", "fdatasync, grows", "fdatasync into zeros"):
            costs = spaced_appends(directory, how, args.spaced, args.gap_ms / 1000, data)
            print(f"  {args.gap_ms:g} ms apart, {how:<21} p50 "
                  f"{costs[len(costs) // 2] / 1e6:.3f} ms, p99 "
                  f"{costs[min(len(costs) - 1, int(len(costs) * 0.99))] / 1e6:.3f} ms, max "
                  f"{costs[-1] / 1e6:.3f} ms over {args.spaced}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

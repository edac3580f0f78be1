"""Benchmark: the command line's own costs (issue 11's table).

Run it from the repository root::

    python benchmarks/bench_cli.py [--runs N] [--points 99]

- `gammonclock --help`: the interpreter's start and the imports the command line needs (best
  and median of N runs);
- `gammonclock simulate --script` of a generated match of `--points` points (`bench_match.py`'s
  generator, as raw down/up edges), with and without `--journal`: in virtual time the journal
  is fsynced once, at the end, so journaling must cost at most 1.5× the run without it.

Figures only; nothing is asserted. A Pi Zero 2 W or a Pi 3 is 6-10 times slower than this.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
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

TARGET_JOURNAL_RATIO = 1.5


def timed(args: list[str]) -> float:
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "gammonclock", *args], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - started


def report(what: str, samples: list[float]) -> float:
    best = min(samples)
    print(f"{what}: best {best:.2f} s, median {statistics.median(samples):.2f} s "
          f"({len(samples)} runs)")
    return best


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--points", type=int, default=99)
    args = parser.parse_args(argv)
    report("gammonclock --help", [timed(["--help"]) for _ in range(args.runs)])
    match = generate_match(length=args.points)
    with tempfile.TemporaryDirectory(prefix="gammonclock-bench-cli-") as folder:
        work = Path(folder)
        script = work / "match.script"
        script.write_text(match.script_text(), encoding="utf-8")
        config = work / "match.toml"
        config.write_text(f"[match]\nlength = {args.points}\n", encoding="utf-8")
        base = ["simulate", "--config", str(config), "--script", str(script), "--json"]
        print(f"a generated {args.points}-point match: {len(match.inputs)} button edges, "
              f"{match.games} games")
        plain = report("simulate", [timed(base) for _ in range(args.runs)])

        def journaled(n: int) -> float:
            return timed([*base, "--journal", str(work / f"run-{n}.jsonl"), "--state-dir",
                          str(work)])
        with_journal = report("simulate --journal", [journaled(n) for n in range(args.runs)])
        records = len((work / "run-0.jsonl").read_text().splitlines())
        print(f"  the journal: {records} records; {with_journal / plain:.2f}× the run without "
              f"it (target at most {TARGET_JOURNAL_RATIO}×)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

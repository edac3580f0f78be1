"""Benchmark: recovery and the journal's readers on long matches.

Run it from the repository root::

    python benchmarks/bench_recovery.py [--runs N] [--points 25,99,199,399]

It journals generated backgammon matches (`bench_match.py`'s generator) as `gammonclock run`
would, each cut short so that it is still in progress, and prints for each:

- `gammonclock run` from its start to systemd's READY recovering that journal (best and median
  of N runs), and the same for a new match; the peak resident memory of `run` once READY;
- `gammonclock replay`, `verify` and `export --format csv` of it: wall time (the process's whole
  life, interpreter start included) and peak resident memory, and how each grows with the
  journal's length (the time ratio of each doubling of the record count).

A match file cannot be longer than 99 points (MAX_POINTS), so the longer journals (199 and 399
points) are a 99-point match on which the arbiter sets the score back to 0-0 (`score 0 0`)
whenever a side passes 80: the generator plays on to 199 or 399 points of games, as long and
as varied as a match of that length would be.

Figures only; nothing is asserted. A Pi Zero 2 W or a Pi 3 is 6-10 times slower than this.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from fractions import Fraction
from pathlib import Path

try:
    import gammonclock  # noqa: F401
except ImportError:  # running from a checkout without the package installed
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "firmware"))

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_match import generate_match  # noqa: E402
from bench_start import journal_in_progress, run_to_ready  # noqa: E402

from gammonclock.config.loading import parse_config  # noqa: E402
from gammonclock.core.arbiter import SetScore  # noqa: E402
from gammonclock.core.effects import Effect, GameEnded  # noqa: E402
from gammonclock.core.engine import Engine, Input  # noqa: E402
from gammonclock.core.match import ArbiterAction  # noqa: E402
from gammonclock.journal.records import JOURNALS_DIR  # noqa: E402
from gammonclock.sim.simulate import simulate  # noqa: E402

KEPT = 0.95            # the share of the match's inputs journaled: it is still in progress
RESET_AT = 80          # the arbiter sets the score back once a side has this many points
MAX_POINTS = 99
NS_PER_MIN = 60 * 10**9
TARGET_READY_S = 0.5
TARGET_READY_OVER_NEW_S = 0.1
TARGET_RUN_MB = 45
TARGET_TOOL_S, TARGET_TOOL_MB, TARGET_RATIO = 2.0, 60, 2.2

DEVICE = '[hardware]\npin_factory = "mock"\n'


def config_text(points: int) -> str:
    """The match file of a journal of `points` points: at most 99, the reserve of the whole."""
    return (f'[match]\ndiscipline = "backgammon"\nlength = {min(points, MAX_POINTS)}\n\n'
            f'[time]\nreserve = "{2 * points}m"\n\n{DEVICE}')


def inputs_of(points: int, seed: int) -> list[Input]:
    """The generated match's inputs, with the arbiter's score resets beyond 99 points."""
    match = generate_match(seed, points)
    inputs: list[Input] = list(match.inputs[:int(len(match.inputs) * KEPT)])
    if points <= MAX_POINTS:
        return inputs
    rules = parse_config(config_text(points)).rules
    ended: list[GameEnded] = []

    def observe(_: Engine, effects: list[Effect]) -> None:
        ended.extend(e for e in effects if isinstance(e, GameEnded))

    while True:
        ended.clear()
        simulate(rules, inputs, inputs[-1].t, observe)
        last_reset = max((e.t for e in inputs if isinstance(e, ArbiterAction)), default=-1)
        due = next((e for e in ended if e.t > last_reset
                    and max(e.score.left, e.score.right) >= RESET_AT), None)
        if due is None:
            return inputs
        reset = ArbiterAction(due.t + 1, SetScore(Fraction(0), Fraction(0)))
        inputs = sorted([*inputs, reset], key=lambda e: e.t)


def journal_match(state: Path, points: int, seed: int) -> tuple[int, int]:
    """A match in progress journaled in `state` as `gammonclock run` would; records, bytes."""
    text = config_text(points)
    records = journal_in_progress(state, text, parse_config(text).rules, inputs_of(points, seed))
    return records, (state / JOURNALS_DIR / "match-bench.jsonl").stat().st_size


def cut(template: Path, records: int, state: Path) -> str:
    """The first `records` records of the journal in `template`, in a state folder of their own
    (with the device key): a journal cut short is a whole journal."""
    source = template / JOURNALS_DIR / "match-bench.jsonl"
    target = state / JOURNALS_DIR / source.name
    target.parent.mkdir(parents=True)
    shutil.copy(template / "device.key", state / "device.key")
    with source.open("rb") as f, target.open("wb") as out:
        for n, line in enumerate(f):
            if n >= records:
                break
            out.write(line)
    return str(target)


# --- measuring processes ---------------------------------------------------------------------

# `gammonclock ARGS` in a fresh interpreter that reports its own peak memory as it ends (VmHWM
# of its own address space: the rusage of a child counts the parent's size before its exec).
_MEASURED = ("import sys\n"
             "from gammonclock.cli.main import main\n"
             "try:\n"
             "    code = main(sys.argv[1:])\n"
             "finally:\n"
             "    hwm = [l for l in open('/proc/self/status') if l.startswith('VmHWM:')][0]\n"
             "    sys.stderr.write('\\n' + hwm)\n"
             "sys.exit(code)\n")


def tool(args: list[str]) -> tuple[float, float, int]:
    """`gammonclock ARGS`: wall seconds, peak resident MB, exit status."""
    started = time.perf_counter()
    proc = subprocess.run([sys.executable, "-c", _MEASURED, *args], stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE, text=True, check=False)
    elapsed = time.perf_counter() - started
    peak = int(proc.stderr.rsplit("VmHWM:", 1)[1].split()[0]) / 1024
    return elapsed, peak, proc.returncode


def best(samples: list[tuple[float, float, int]]) -> tuple[float, float, int]:
    return min(samples, key=lambda s: s[0])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--points", default="25,99,199,399",
                        help="the journals' lengths in points (comma-separated)")
    parser.add_argument("--records", default="13000,27000,53000",
                        help="the record counts replay, verify and export are timed on "
                             "(the first records of the longest journal)")
    parser.add_argument("--seed", type=int, default=2024)
    args = parser.parse_args(argv)
    lengths = [int(p) for p in args.points.split(",")]
    with tempfile.TemporaryDirectory(prefix="gammonclock-bench-recovery-") as tmp:
        work = Path(tmp)
        config = work / "bench.toml"
        config.write_text(config_text(25), encoding="utf-8")
        made = {}
        for points in lengths:
            template = work / f"template-{points}"
            records, size = journal_match(template, points, args.seed)
            made[points] = (template, records)
            print(f"journal of {points} points: {records} records, {size / 1e6:.1f} MB")
        print()

        def ready_times(template: Path | None) -> tuple[list[float], float]:
            times, peaks = [], []
            for _ in range(args.runs):
                state = work / "state"
                shutil.rmtree(state, ignore_errors=True)
                if template is not None:
                    shutil.copytree(template, state)
                else:
                    state.mkdir()
                ready, peak = run_to_ready(config, state, work)
                times.append(ready)
                peaks.append(peak)
            return times, max(peaks)

        new_times, new_peak = ready_times(None)
        new_best = min(new_times)
        print(f"run to READY, a new match:   best {new_best:.3f} s, median "
              f"{statistics.median(new_times):.3f} s, peak {new_peak:.1f} MB")
        for points in lengths:
            times, peak = ready_times(made[points][0])
            verdict = ("within" if min(times) < TARGET_READY_S
                       and min(times) - new_best < TARGET_READY_OVER_NEW_S
                       and peak < TARGET_RUN_MB else "OVER")
            print(f"run to READY, recovering {points:3d} points ({made[points][1]} records): "
                  f"best {min(times):.3f} s (+{min(times) - new_best:.3f} s over a new match), "
                  f"median {statistics.median(times):.3f} s, peak {peak:.1f} MB  "
                  f"[targets < {TARGET_READY_S} s, < +{TARGET_READY_OVER_NEW_S} s, "
                  f"< {TARGET_RUN_MB} MB: {verdict}]")
        print()

        previous: dict[str, tuple[int, float]] = {}
        longest = made[max(lengths)][0]
        for records in [int(n) for n in args.records.split(",")]:
            state = str(work / f"cut-{records}")
            journal = cut(longest, records, Path(state))
            commands = {
                "replay": ["replay", journal, "--json"],
                "verify": ["verify", journal, "--state-dir", state],
                "export csv": ["export", journal, "--format", "csv", "--out",
                               str(work / "out.csv"), "--state-dir", state],
            }
            for name, command in commands.items():
                elapsed, peak, status = best([tool(command) for _ in range(max(1, args.runs // 2))])
                growth = ""
                if name in previous:
                    before_records, before_s = previous[name]
                    ratio = elapsed / before_s
                    scale = records / before_records
                    growth = f", x{ratio:.2f} time for x{scale:.2f} records"
                previous[name] = (records, elapsed)
                verdict = ("within" if elapsed < TARGET_TOOL_S and peak < TARGET_TOOL_MB
                           else "OVER")
                print(f"{name:10s} {records:6d} records: {elapsed:.3f} s, "
                      f"peak {peak:5.1f} MB, exit {status}{growth}  [< {TARGET_TOOL_S} s, "
                      f"< {TARGET_TOOL_MB} MB: {verdict}]")
    print(f"\nlinear: each doubling of the records at most x{TARGET_RATIO} the time")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Benchmark: from `gammonclock run` starting to systemd's READY.

Run it from the repository root::

    python benchmarks/bench_start.py [--runs N]

It journals most of the benchmark match of `bench_match.py` (a 25-point match, cut before its
end so that it is still in progress) into a state folder, then starts `gammonclock run` on mock
hardware under a stand-in for systemd's notify socket, and prints the time from starting the
process to READY (the journal recovered, the panels showing the match), best and median of N
runs; and the same for a new match (an empty state folder), for comparison. READY is what a
`Type=notify` unit waits for: the players' clock is back when it arrives.

Figures only; nothing is asserted. A Pi Zero 2 W or a Pi 3 is 6-10 times slower than a desktop.
"""

from __future__ import annotations

import argparse
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

try:
    import gammonclock  # noqa: F401
except ImportError:  # running from a checkout without the package installed
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "firmware"))

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_match import generate_benchmark_match  # noqa: E402

from gammonclock.core.engine import Engine, Input  # noqa: E402
from gammonclock.core.rules import MatchRules  # noqa: E402
from gammonclock.journal.files import journal_header
from gammonclock.journal.key import load_or_create_key
from gammonclock.journal.records import JOURNALS_DIR, Stamp
from gammonclock.journal.writer import JournalWriter
from gammonclock.runtime.session import Session
from gammonclock.sim.simulate import run_script  # noqa: E402

CONFIG = ('[match]\ndiscipline = "backgammon"\nlength = 25\n\n'
          '[hardware]\npin_factory = "mock"\n')
KEPT = 0.9        # the share of the match's inputs journaled: it is still in progress


def stamp() -> Stamp:
    return Stamp(time.monotonic_ns(), "bench", time.time_ns())


def journal_in_progress(state: Path, config: str, rules: MatchRules,
                        inputs: Sequence[Input]) -> int:
    """`inputs` under `rules`, journaled in `state` as `gammonclock run` would (the match still
    in progress); the record count."""
    key = load_or_create_key(state)
    path = state / JOURNALS_DIR / "match-bench.jsonl"
    writer = JournalWriter.create(path, key, journal_header(config, "bench.toml"), 0, stamp(),
                                  fsync=False)
    session = Session(Engine.start(rules), writer, stamp)
    run_script(session, inputs, inputs[-1].t)
    assert session.engine.match.end_reason is None, "the cut match is over; keep fewer inputs"
    session.close()
    return writer.next_seq


def journal_a_match_in_progress(state: Path) -> int:
    """Most of the benchmark match, journaled as `gammonclock run` would; its record count."""
    match = generate_benchmark_match()
    return journal_in_progress(state, CONFIG, match.rules,
                               match.inputs[:int(len(match.inputs) * KEPT)])


def peak_mb(pid: int) -> float:
    """The peak resident memory of a running process so far (VmHWM), in MB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def run_to_ready(config: Path, state: Path, work: Path) -> tuple[float, float]:
    """Start `gammonclock run`; seconds until it tells systemd READY=1, and its peak memory
    then (MB). Then stop it."""
    notify = work / "notify.sock"
    notify.unlink(missing_ok=True)
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as systemd:
        systemd.bind(str(notify))
        systemd.settimeout(120)
        env = {**os.environ, "NOTIFY_SOCKET": str(notify), "RUNTIME_DIRECTORY": str(work)}
        started = time.perf_counter()
        proc = subprocess.Popen([sys.executable, "-m", "gammonclock", "run", "--config",
                                 str(config), "--state-dir", str(state)], env=env,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            while b"READY=1" not in systemd.recv(4096).split(b"\n"):
                pass
            ready = time.perf_counter() - started
            time.sleep(0.3)                 # the first frames drawn after READY
            peak = peak_mb(proc.pid)
        finally:
            proc.terminate()
            proc.wait(30)
    return ready, peak


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="gammonclock-bench-start-") as tmp:
        work = Path(tmp)
        config = work / "bench.toml"
        config.write_text(CONFIG, encoding="utf-8")
        template = work / "template"
        records = journal_a_match_in_progress(template)
        size = (template / JOURNALS_DIR / "match-bench.jsonl").stat().st_size
        print(f"journal: {records} records, {size / 1e6:.1f} MB (a 25-point match, "
              f"{KEPT:.0%} played)")
        for label, with_journal in (("recovering it", True), ("a new match", False)):
            times = []
            for _ in range(args.runs):
                state = work / "state"
                shutil.rmtree(state, ignore_errors=True)
                if with_journal:
                    shutil.copytree(template, state)
                times.append(run_to_ready(config, state, work)[0])
            print(f"start to READY, {label}: best {min(times):.2f} s, median "
                  f"{statistics.median(times):.2f} s ({args.runs} runs)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

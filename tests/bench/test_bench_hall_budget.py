"""benchmarks/bench_hall.py's CPU budget (issue 20): only as many real clocks as the machine
can run (the rest light tables), and `--cpu-quota`, a starved CPU for the clocks' processes."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from bench_helpers import load_benchmark

bench = load_benchmark("bench_hall")


def args(*argv: str) -> argparse.Namespace:
    """The benchmark's arguments as its parser reads them (nothing is run)."""
    parsed: list[argparse.Namespace] = []

    def keep(a: argparse.Namespace, *_: object) -> int:
        parsed.append(a)
        return 0
    real_fakes = bench.run_fakes
    bench.run_fakes = keep
    try:
        assert bench.main(["--fakes", *argv]) == 0
    finally:
        bench.run_fakes = real_fakes
    return parsed[0]


def test_the_default_round_runs_only_the_real_clocks_the_machine_can_run():
    cores = bench.usable_cores()
    budget = bench.Budget.of(args())                         # 200 tables at 20x
    assert budget.real == max(2, int(max(0.5, cores / 2) * bench.CLOCKS_PER_CORE))
    assert budget.real < 200 if cores < 20 else budget.real == 200
    assert budget.quota is None and budget.core is None
    assert f"{200 - budget.real} light tables" in budget.words
    twice = bench.Budget.of(args("--speed", "40"))           # twice the work a clock
    assert twice.real == max(2, int(max(0.5, cores / 2) * bench.CLOCKS_PER_CORE / 2))


def test_real_sets_the_number_of_real_clocks_and_a_small_round_is_all_real():
    assert bench.Budget.of(args("--real", "5")).real == 5
    assert bench.Budget.of(args("--tables", "3")).real == 3
    with pytest.raises(SystemExit):
        args("--real", "1")                                    # one of them is killed


def test_cpu_quota_puts_fewer_clocks_a_process_on_one_core():
    budget = bench.Budget.of(args("--cpu-quota", "0.5"))
    assert budget.quota == 0.5
    assert budget.core == max(os.sched_getaffinity(0))
    assert budget.per_process == int(0.5 * bench.CLOCKS_PER_CORE)
    assert budget.real == bench.CLOCKS_PER_CORE               # one core between them all
    with pytest.raises(SystemExit):
        args("--cpu-quota", "1.5")


def state_of(pid: int) -> str:
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]


def test_the_throttle_stops_and_continues_the_clocks_processes_and_leaves_them_running():
    busy = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        throttle = bench.Throttle(0.5, lambda: [busy.pid])
        states: set[str] = set()
        deadline = time.monotonic() + 5
        while {"T", "R"} - states and time.monotonic() < deadline:
            states.add(state_of(busy.pid))
            time.sleep(0.005)
        assert {"T", "R"} <= states                            # stopped, then running again
        throttle.stop()
        assert state_of(busy.pid) != "T"                       # never left stopped
    finally:
        busy.kill()
        busy.wait()

"""Every benchmark under benchmarks/ runs, briefly, in a smoke test (issue 19 item 10).

Their figures are not asserted: only that each still runs to its end with tiny options, says its
figures, and exits 0. A benchmark file without a smoke test fails `test_every_benchmark_has_a_
smoke_test`: give it one (here, or elsewhere with `load_benchmark("NAME")`, and list it in
SMOKED_ELSEWHERE)."""

from __future__ import annotations

import gc
import os
import re
import time
from pathlib import Path
from typing import Any

import pytest

from bench_helpers import BENCHMARKS, load_benchmark

TESTS = Path(__file__).resolve().parents[1]

# Run here: the benchmark, its tiny options, and words its output must hold.
SMOKED_HERE: dict[str, tuple[list[str], tuple[str, ...]]] = {
    "bench_bus": (["--length", "1", "--speeds", "400", "--presses", "30"],
                  ("400 kHz", "press to glass", "Pi 3 model: CPU × 8", "CPU per clock press")),
    "bench_cli": (["--runs", "1", "--points", "1"], ("1-point match", "simulate: best")),
    "bench_cpu": (["--seconds", "0.5", "--start-timeout", "60"],
                  ("% of one core", "the child exited 0 on SIGTERM")),
    "bench_journal": (["--appends", "5", "--repeat", "1", "--spaced", "3", "--gap-ms", "1"],
                      ("replayed state equals the live one: yes", "one append + sync",
                       "fdatasync into zeros")),
    "bench_memory": (["--points", "1", "--taps", "40", "--records", "1500"],
                     ("RSS over a 1-point match", "sum of turn spans: yes", "full GC pause",
                      "snapshot after 40 taps while paused", "export csv of 750 records",
                      "export csv of 1500 records")),
    "bench_latency": (["--presses", "3", "--idle-seconds", "0.2", "--quick"],
                      ("edge-to-frame latency", "frames handed to each panel",
                       "with the SD-card model (3 presses)", "0.1–0.2 s apart")),
    "bench_press_cpu": (["--length", "1", "--replays", "1"],
                        ("CPU per clock press", "engine (feed)", "panels (present)")),
    "bench_recovery": (["--runs", "1", "--points", "1,2", "--records", "100,200"],
                       ("run to READY, a new match", "linear:")),
    "bench_public": (["--tables", "3", "--subscribers", "8", "--measuring", "2", "--seconds", "2",
                      "--turn", "0.5,1"], ("press -> public page", "with spectators",
                                           "the hall's CPU with the spectators")),
    "bench_start": (["--runs", "1"], ("start to READY, recovering it",
                                      "start to READY, a new match")),
    "bench_sync": (["--taps", "20"], ("fsyncs per tap", "press due -> frame")),
}
SLOW: set[str] = set()    # over ~10 s here (none is: the slowest, bench_bus, takes ~6 s)
# Run by a smoke test of their own (each file holds `load_benchmark("NAME")` and calls `main`
# or runs the script as a person does).
SMOKED_ELSEWHERE = {
    "bench_display": "hardware/test_panels.py",
    "bench_hall": "bench/test_bench_hall_smoke.py",
    "bench_hostile": "bench/test_bench_hostile_smoke.py",
    "bench_match": "bench/test_benchmark_smoke.py",
}


def test_every_benchmark_has_a_smoke_test() -> None:
    scripts = {p.stem for p in BENCHMARKS.glob("*.py")}
    assert scripts, BENCHMARKS
    missing = sorted(scripts - set(SMOKED_HERE) - set(SMOKED_ELSEWHERE))
    assert missing == [], f"benchmarks without a smoke test: {missing}"
    assert sorted((set(SMOKED_HERE) | set(SMOKED_ELSEWHERE)) - scripts) == []
    for name, test_file in SMOKED_ELSEWHERE.items():
        text = (TESTS / test_file).read_text(encoding="utf-8")
        assert f'load_benchmark("{name}")' in text, (name, test_file)
        runs = re.search(r"\.main\(", text) or f'"{name}.py"' in text   # main, or the script
        assert runs, f"{test_file} does not run {name}'s main or its script"


@pytest.mark.parametrize("name", [
    pytest.param(n, marks=pytest.mark.slow) if n in SLOW else n for n in sorted(SMOKED_HERE)])
def test_the_benchmark_runs_briefly(name: str, capsys: Any) -> None:
    options, needles = SMOKED_HERE[name]
    bench = load_benchmark(name)
    started = time.monotonic()
    patched = {n: getattr(os, n) for n in ("fsync", "fdatasync", "write", "open")}
    code = bench.main(options)
    out, err = capsys.readouterr()
    assert code == 0, err
    for needle in needles:
        assert needle in out, (needle, out)
    assert time.monotonic() - started < 120
    # Run in a test process: what it patched to model a card is put back (later tests sync
    # folders through os.fsync).
    assert {n: getattr(os, n) for n in patched} == patched
    assert gc.get_freeze_count() == 0            # nor a heap left frozen (gc.freeze)


# --- bench_cpu: a helper that fails, or hangs, is said and does not hang the benchmark ----------

def test_bench_cpu_reports_a_failing_helper_with_its_traceback(capsys: Any,
                                                              monkeypatch: pytest.MonkeyPatch
                                                              ) -> None:
    bench = load_benchmark("bench_cpu")
    # The helper as it was before issue 19: an attribute the device config no longer has.
    broken = bench.HELPER.replace("device.config.button_pins", "device.config.device.button_pins")
    assert broken != bench.HELPER
    monkeypatch.setattr(bench, "HELPER", broken)
    started = time.monotonic()
    code = bench.main(["--seconds", "0.5", "--start-timeout", "60"])
    err = capsys.readouterr().err
    assert code == 1
    assert "Traceback" in err and "AttributeError" in err and "no attribute 'device'" in err, err
    assert time.monotonic() - started < 30


def test_bench_cpu_waits_for_the_clock_a_bounded_time(capsys: Any,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    bench = load_benchmark("bench_cpu")
    monkeypatch.setattr(bench, "HELPER", "import time\ntime.sleep(120)\n")   # never says a word
    started = time.monotonic()
    code = bench.main(["--seconds", "0.5", "--start-timeout", "2"])
    err = capsys.readouterr().err
    assert code == 1
    assert 'did not say "clock running" within 2 s' in err, err
    assert time.monotonic() - started < 20

"""Smoke test of benchmarks/bench_hall.py: three real clocks (Device on mock pins, `[hall]`),
a real Mosquitto and the real hall, a few seconds of each phase. Its checks must pass and its
figures must print; no timing is asserted here (speed lives in the benchmark)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from bench_helpers import load_benchmark

pytestmark = pytest.mark.slow     # ~20 s: left out by `-m "not slow"` while editing; CI runs it

bench = load_benchmark("bench_hall")
ROOT = Path(__file__).resolve().parents[2]

TINY = ["--tables", "3", "--play", "2", "--outage", "3", "--after", "2"]


def test_a_tiny_round_passes_its_checks_and_prints_its_figures() -> None:
    # Run as a person runs it (a script, its own sys.path): a module the clocks' spawned
    # processes import from the tests' folders once went missing there and nowhere else.
    run = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "bench_hall.py"), *TINY],
                         cwd=ROOT, capture_output=True, text=True, timeout=600)
    out = run.stdout
    assert run.returncode == 0, out + run.stderr
    assert "FAILED" not in out
    assert f"$ {bench.COMMAND} {' '.join(TINY)}" in out            # the command, quotable
    assert "3 real clocks (Device, mock pins, [hall]) in 1 processes and table-3 alone in one" \
        in out
    latencies = re.findall(r"press -> page \(SSE\) (.+?): (\d+) of (\d+) presses shown, "
                           r"p50 \d+ ms, p99 \d+ ms", out)
    assert [label for label, _, _ in latencies] == [
        "while all play", "while the backlog drained and settled", "settled after the outage"]
    checked = [latencies[0], latencies[2]]        # the drain's is a figure, not a check
    assert all(shown == pressed and int(pressed) > 0 for _, shown, pressed in checked)
    assert re.search(r"CPU \(% of one core; the machine has \d+\): the clocks' 2 processes "
                     r"\d+%, the hall and the page's reader \d+%, mosquitto \d+%; the clocks' "
                     r"threads \d+, their RSS \d+ MB", out)
    assert re.search(r"table-3 killed \(SIGKILL\) mid-round: offline in the hall after [\d.]+ s "
                     r"\(True\); \d+ events not acknowledged by the hall then; rebuilt in "
                     r"[\d.]+ s on its state folder: online again \(True\), every event of its "
                     r"journal in the hall \(True\)", out)
    assert re.search(r"table-2 closed and built again on its state folder during the outage "
                     r"\(\d+ events not acknowledged", out)
    assert re.search(r"the backlog \(\d+ events of 3 tables.*all in the hall [\d.]+ s after "
                     r"the restart: True", out)
    assert re.search(r"\(0 missing, 0 not in a journal\)", out)
    # The hall counts the records with effects as events and the records that only carried
    # lines apart, each as the clocks' journals hold them.
    assert re.search(r"(\d+) event records in the clocks' journals(?: and the \d+ light "
                     r"tables')? and (\d+) records carrying lines: \1 events and \2 carriers "
                     r"counted by the hall", out), out
    assert "table-4 with a wrong password: refused by the broker (True), never on the page " \
           "(True), plays on (True)" in out
    assert "table-5's account publishing as table-1: refused by the ACL (True), table-1's " \
           "card untouched (True)" in out


def test_a_planned_match_is_whole_games_of_alternating_turns() -> None:
    import random

    from gammonclock.sides import Button

    hold = 2 * bench.S
    presses = bench.plan_match(random.Random(3), 3, hold)
    assert [p.at for p in presses] == sorted(p.at for p in presses)
    holds = [p for p in presses if p.held >= hold]
    assert 3 <= len(holds) <= 5                    # one hold a game, one point each: to 3
    assert all(p.button is not Button.CUBE for p in presses)
    for before, after in zip(presses, presses[1:], strict=False):
        assert after.at - before.at > before.held  # a press ends before the next begins

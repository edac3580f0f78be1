"""Smoke test of benchmarks/bench_match.py: its generator and its exactness check must keep
working (no timing is asserted here)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from bench_helpers import load_benchmark
from gammonclock.effects import TurnEnded, surviving
from gammonclock.engine import ButtonEdge
from gammonclock.script import parse_script
from gammonclock.sides import Side

bench = load_benchmark("bench_match")


@pytest.fixture(scope="module", params=[(1, 5), (7, 7), (42, 3)], ids=["seed1-L5", "seed7-L7",
                                                                        "seed42-L3"])
def played(request):
    seed, length = request.param
    match = bench.generate_match(seed, length, bounce=0.5)
    engine, effects = bench.run(match, collect=True)
    return match, engine, effects


def test_generated_match_runs_and_is_exact(played):
    match, engine, effects = played
    ex = bench.check_exactness(match, engine, effects)
    assert ex.reserves_match, (ex.expected_reserve, ex.actual_reserve)
    assert ex.spans_match, (ex.sum_spans, ex.sum_charged, ex.sum_delay_used)
    assert ex.score_matches, (ex.expected_score, ex.actual_score, ex.actual_winner)
    assert ex.ok


def test_generated_match_is_a_real_match(played):
    match, engine, effects = played
    state = engine.state_json()
    assert state["phase"] == "match_over"
    assert state["end_reason"] == "score"
    assert state["flag"] is None                       # nobody flags
    assert max(state["score"].values()) >= match.rules.length
    assert all(isinstance(e, ButtonEdge) for e in match.inputs)
    assert [e.t for e in match.inputs] == sorted(e.t for e in match.inputs)
    assert match.counts["turns"] == len(match.turn_spans) > 0
    assert match.counts["bounce_edges"] > 0
    # simple delay: every surviving turn end charged max(0, span − delay)
    delay = match.rules.time.delay_ns
    for e in surviving(effects):
        if isinstance(e, TurnEnded):
            assert e.charged == max(0, e.span - delay)
    # the spans the engine reports are the generator's, turn by turn
    reported = [(e.side, e.span) for e in surviving(effects) if isinstance(e, TurnEnded)]
    assert reported == match.turn_spans


def test_script_text_round_trips(played):
    match, _, _ = played
    parsed = parse_script(match.script_text(), match.rules.hold_ns)
    assert list(parsed.inputs) == match.inputs
    assert parsed.end == match.end


def test_exactness_check_can_fail(played):
    """The check is not vacuous: one nanosecond off in the expectation is caught."""
    match, engine, effects = played
    off = replace(match, expected_reserve={**match.expected_reserve,
                                           Side.LEFT: match.expected_reserve[Side.LEFT] + 1})
    assert not bench.check_exactness(off, engine, effects).ok
    short = replace(match, turn_spans=match.turn_spans[:-1])
    assert not bench.check_exactness(short, engine, effects).ok
    other = replace(match, expected_score={Side.LEFT: 0, Side.RIGHT: 0})
    assert not bench.check_exactness(other, engine, effects).ok


def test_generator_is_deterministic():
    a = bench.generate_match(3, 3)
    b = bench.generate_match(3, 3)
    assert a.inputs == b.inputs and a.end == b.end and a.expected_reserve == b.expected_reserve
    assert bench.generate_match(4, 3).inputs != a.inputs


def test_benchmark_match_is_big_enough():
    """The benchmark's own match: 25 points, at least MIN_INPUTS inputs (generation only)."""
    match = bench.generate_benchmark_match()
    assert match.rules.length == 25
    assert match.rules.discipline.name == "backgammon"
    assert len(match.inputs) >= bench.MIN_INPUTS >= 5_000


def test_main_prints_the_figures(capsys):
    assert bench.main(["--length", "3", "--repeat", "1", "--seed", "5", "--min-inputs", "0"]) == 0
    out = capsys.readouterr().out
    for needle in ("inputs:", "games:", "simulate wall time", "target < 0.5 s", "inputs/s",
                   "EXACTNESS CHECK", "exact to the nanosecond: YES"):
        assert needle in out

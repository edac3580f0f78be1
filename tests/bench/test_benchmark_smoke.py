"""Smoke test of benchmarks/bench_match.py: its generator and its exactness check must keep
working (no timing is asserted here). And the Pi models of bench_bus.py (the kernel per
transaction, the CPU scale, luma's i2c through smbus2 to the emulated bus) and bench_latency.py
(the SD card's fsync, the players' gaps) do what they say."""

from __future__ import annotations

from dataclasses import replace

import pytest

from bench_helpers import load_benchmark
from gammonclock.core.effects import TurnEnded, surviving
from gammonclock.core.engine import ButtonEdge
from gammonclock.sides import Side
from gammonclock.sim.script import parse_script

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


# --- the Pi models of bench_bus and bench_latency (issue 20) -----------------------------------

def test_the_bus_model_carries_lumas_i2c_through_smbus2_to_the_controllers_memory():
    """luma's managed i2c on smbus2, the ioctl replaced: the controller holds the frame and the
    bus counted each transaction, without sleeping."""
    from luma.oled.device import ssd1306
    from PIL import Image, ImageDraw

    from gammonclock.hardware.i2c_emulator import image_of, memory_for

    bus_bench = load_benchmark("bench_bus")
    bus = bus_bench.ModelBus(speed_hz=400_000, sleep=False)
    cpu = bus_bench.CpuScale(1.0)
    memories = {0x3C: memory_for("ssd1306")}
    picture = Image.new("1", (128, 64))
    ImageDraw.Draw(picture).rectangle((3, 5, 60, 40), fill=1)
    with bus_bench.wired():
        serial = bus_bench.wire_serial(bus, memories, cpu, 0x3C)
        device = ssd1306(serial, width=128, height=64)
        before = len(bus.transactions)
        device.display(picture)
    sent = bus.transactions[before:]
    assert [t.payload for t in sent] == [6, 1024]        # the window (0x21, 0x22), the frame
    assert {t.address for t in sent} == {0x3C}
    assert image_of(memories[0x3C].pages()).tobytes() == picture.tobytes()
    assert bus_bench.smbus2_module.ioctl is bus_bench._real_ioctl    # put back


def test_the_bus_model_adds_the_kernel_to_each_transaction(monkeypatch):
    bus_bench = load_benchmark("bench_bus")
    now = [0.0]
    bus = bus_bench.ModelBus(speed_hz=100_000, sleep=True, kernel_s=0.002,
                             clock=lambda: now[0])

    def sleep(seconds: float) -> None:
        now[0] += seconds

    monkeypatch.setattr(bus_bench.time, "sleep", sleep)
    bus.carry_ioctl([(0x3C, 10)], since=0.0)
    monkeypatch.undo()
    wire = (21 + 9 * 10) / 100_000
    assert now[0] == pytest.approx(0.002 + wire)
    assert bus.transactions[0].busy == pytest.approx(wire)    # the wire's share stays the wire's


def test_one_ioctl_sleeps_once_to_the_end_of_its_last_message(monkeypatch):
    """The messages of one I2C_RDWR follow each other inside a Pi's kernel: the model sleeps
    once (this host's overshoot paid once an ioctl), each message ending where the model says."""
    bus_bench = load_benchmark("bench_bus")
    now = [0.0]
    sleeps: list[float] = []
    bus = bus_bench.ModelBus(speed_hz=400_000, sleep=True, kernel_s=0.0001, message_s=0.00002,
                             clock=lambda: now[0])

    def sleep(seconds: float) -> None:
        sleeps.append(seconds)
        now[0] += seconds + 0.00007                       # this host's overshoot

    monkeypatch.setattr(bus_bench.time, "sleep", sleep)
    bus.carry_ioctl([(0x3C, 10), (0x3C, 30), (0x3D, 10)], since=0.0)
    monkeypatch.undo()
    wires = [(21 + 9 * n) / 400_000 for n in (10, 30, 10)]
    ends = [0.0001 + wires[0], 0.0001 + wires[0] + 0.00002 + wires[1],
            0.0001 + sum(wires) + 2 * 0.00002]
    assert len(sleeps) == 1 and sleeps[0] == pytest.approx(ends[-1])
    assert [t.end for t in bus.transactions[:2]] == pytest.approx(ends[:2])
    assert bus.transactions[2].end == pytest.approx(ends[2] + 0.00007)   # when the sleep returned
    assert bus.lateness == pytest.approx([0.0, 0.0, 0.00007])
    assert bus.firsts == [True, False, False]
    assert [t.busy for t in bus.transactions] == pytest.approx(wires)


def test_the_pi_model_scales_the_codes_own_cpu_and_the_hosts_wake_up_surplus_apart():
    """A press measured at 0.5 ms whose code costs 0.2 ms warm: 0.2 × 8 + 0.3 × 2 on the Pi
    model; the threads of its run burn the measured CPU × the factor that gives the same sum."""
    bus_bench = load_benchmark("bench_bus")
    here = bus_bench.Latencies(clock_cpu=[0.5, 0.1], clock_wire=[2.0, 1.0],
                               clock_transactions=[3, 2], clock_ioctls=[1, 1], clock_t=[10, 20])
    split = bus_bench.warm_split(here, {10: 0.2, 20: 0.15})
    assert [pytest.approx(pair) for pair in split] == [(0.2, 0.3), (0.1, 0.0)]   # at most measured
    pi = bus_bench.Machine("Pi", 8.0, 60e-6, 15e-6, cold_factor=2.0)
    series = bus_bench.in_series(here, pi, split)
    assert series == pytest.approx([0.2 * 8 + 0.3 * 2 + 2.0 + 0.060 + 2 * 0.015,
                                    0.1 * 8 + 1.0 + 0.060 + 0.015])
    share = bus_bench.warm_share(split)
    assert share == pytest.approx(0.3 / 0.6)
    assert pi.effective_factor(share) * 0.6 == pytest.approx(0.3 * 8 + 0.3 * 2)
    plain = bus_bench.Machine("Pi", 8.0, cold_factor=8.0)
    assert plain.effective_factor(share) == pytest.approx(8.0)  # the surplus × 8: all × 8


def test_the_cpu_scale_burns_factor_minus_one_times_the_work_again():
    bus_bench = load_benchmark("bench_bus")
    import time
    cpu = bus_bench.CpuScale(4.0)
    cpu.begin()
    start = time.thread_time_ns()
    sum(i * i for i in range(200_000))                      # some work
    work = time.thread_time_ns() - start
    cpu.catch_up()
    total = time.thread_time_ns() - start
    assert cpu.used_ns() >= work                             # the work is counted, unscaled
    assert total >= 4 * work * 0.99                          # and burnt 3 times again
    cpu.skip()
    assert cpu.used_ns() < total


def test_a_press_with_a_warm_budget_burns_its_own_cpu_by_the_factor_and_the_rest_by_the_cold():
    """0.3 ms measured against a 0.1 ms warm budget: 0.1 × 8 + 0.2 × 2 in all, over the
    stretches of either thread, the budget spent by the first; without a budget × factor."""
    bus_bench = load_benchmark("bench_bus")
    cpu = bus_bench.CpuScale(5.0, own_factor=8.0, cold_factor=2.0)
    cpu.budget(0.1)
    assert cpu._stretched(60_000) == 8 * 60_000                  # within the budget
    assert cpu._stretched(240_000) == 8 * 40_000 + 2 * 200_000   # the budget's rest, then cold
    assert cpu._stretched(10_000) == 2 * 10_000                  # spent: all surplus
    cpu.budget(None)
    assert cpu._stretched(10_000) == 5 * 10_000                  # no press: the run's factor


def test_the_card_model_has_its_median_its_p99_and_its_share_of_stalls():
    latency = load_benchmark("bench_latency")
    card = latency.CardModel(p50_ms=3.0, p99_ms=20.0, stall_rate=0.01, stall_ms=150.0, seed=7)
    draws = [card.draw_s() * 1e3 for _ in range(20_000)]
    stalls = [d for d in draws if d == 150.0]
    assert len(stalls) == 200                                # one in each hundred, exactly
    rest = sorted(d for d in draws if d != 150.0)
    assert rest[len(rest) // 2] == pytest.approx(3.0, rel=0.1)
    assert rest[int(0.99 * len(rest))] == pytest.approx(20.0, rel=0.15)


def test_the_card_model_replaces_fsync_only_while_on(tmp_path, monkeypatch):
    import os
    latency = load_benchmark("bench_latency")
    real: list[int] = []
    monkeypatch.setattr(os, "fsync", real.append)
    monkeypatch.setattr(os, "fdatasync", real.append)
    card = latency.CardModel(p50_ms=0.01, p99_ms=0.02, stall_rate=0.0)
    with (tmp_path / "f").open("w") as f, card.installed():
        fd = f.fileno()
        os.fsync(fd)
        card.on = True
        os.fsync(fd)
        os.fdatasync(fd)
    assert real == [fd]                                     # the modelled ones slept instead
    assert (len(card.fsyncs[False]), len(card.fsyncs[True])) == (1, 2)
    assert os.fsync == real.append                           # put back


def test_player_gaps_stay_within_their_bounds():
    latency = load_benchmark("bench_latency")
    gaps = latency.player_gaps(500, 0.5, 5.0, seed=3)
    assert all(0.5 <= g <= 5.0 for g in gaps)
    assert min(gaps) < 0.7 and max(gaps) > 4.0
    assert gaps == latency.player_gaps(500, 0.5, 5.0, seed=3)

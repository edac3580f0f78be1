"""bench_latency's stall share (issue 20): the card model notes its stalls, and a press's time is
split into what a stall covered and the rest."""

from __future__ import annotations

import os

from bench_helpers import load_benchmark


def test_the_card_model_notes_each_stall_when_and_how_long(tmp_path, monkeypatch):
    latency = load_benchmark("bench_latency")
    slept: list[float] = []
    monkeypatch.setattr(latency.time, "sleep", slept.append)
    card = latency.CardModel(p50_ms=1.0, p99_ms=2.0, stall_rate=0.1, stall_ms=150.0, seed=3)
    with (tmp_path / "f").open("w") as f, card.installed():
        card.on = True
        for _ in range(30):
            os.fsync(f.fileno())
    assert slept.count(0.15) == 3                         # one in each ten
    assert len(card.stalls) == 3
    assert all(start <= end for start, end in card.stalls)


def test_a_press_s_time_under_stalls_is_their_overlap_with_it():
    latency = load_benchmark("bench_latency")
    stalls = [(100, 250), (400, 500)]
    assert latency.stall_overlap(stalls, 0, 90) == 0
    assert latency.stall_overlap(stalls, 200, 300) == 50    # the end of the first
    assert latency.stall_overlap(stalls, 50, 450) == 150 + 50
    assert latency.stall_overlap(stalls, 120, 130) == 10    # inside one


def test_the_stall_share_is_printed_apart(capsys):
    latency = load_benchmark("bench_latency")
    card = latency.CardModel(stall_ms=150.0)
    card.stalls = [(1_000_000_000, 1_150_000_000)]
    ms = 1_000_000
    spans = [(0, 5 * ms), (10 * ms, 18 * ms), (990 * ms, 1_160 * ms)]
    latency._stall_share(card, spans)
    out = capsys.readouterr().out
    assert "presses no stall touched (2)" in out and "max    8.00 ms" in out
    # 170 ms from the edge, 150 of them the stall's: 20 ms beyond it
    assert "presses a stall touched (1)" in out and "max   20.00 ms" in out

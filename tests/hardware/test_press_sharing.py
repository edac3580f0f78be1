"""What a press works out once and keeps (issue 20) is what it would work out afresh: each side's
clock shared by both panels' views (`views.SideClocks`), the running turn's next changes kept per
instant (`redraw._turn_changes`), a frame's windows kept per shape of change
(`partial._cheapest_plan`), and each thread's own message buffers (`i2c_rdwr._Scratch`). Each is
compared with the straightforward path, kept here as the reference."""

from __future__ import annotations

import ctypes
import random
import threading
from dataclasses import replace
from typing import Any

import pytest
import smbus2
import smbus2.smbus2 as smbus2_module
from hypothesis import given, settings
from hypothesis import strategies as st

from bench_helpers import load_benchmark
from gammonclock.core.engine import Engine
from gammonclock.core.match import MatchState, Phase
from gammonclock.core.timecontrol import TimeMode
from gammonclock.durations import NS_PER_S
from gammonclock.hardware import i2c_rdwr, partial, redraw, views
from gammonclock.hardware.redraw import GLIMPSE_NS, settled
from gammonclock.hardware.views import (
    TENTH_NS,
    TENTHS_BELOW_NS,
    Clock,
    SideClocks,
    format_reserve,
    panel_view,
    shown_sides,
)
from gammonclock.sides import Side

# --- the reference: each worked out afresh ------------------------------------------------------


def reference_clock(state: MatchState, side: Side, t: int, named: bool,
                    opening: tuple[int, ...]) -> Clock:
    turn = state.turn if state.turn is not None and state.turn.side is side else None
    delay = ""
    if turn is not None and turn.running and turn.delay_left_at(t) > 0:
        delay = str(turn.delay_left_at(t) // NS_PER_S)
    return Clock(reserve=format_reserve(state.reserve_at(side, t), tenths=not named),
                 running=turn is not None and turn.running, delay=delay,
                 cube=str(state.cube_value) if state.cube_owner is side else "",
                 name=state.rules.names[side] if named else "",
                 dice=views._running_roll(state, side, opening))


def _step_down(value: int, step: int) -> int | None:
    whole = value // step
    return value - whole * step + 1 if whole > 0 else None


def reference_next_change(state: MatchState, facing: Side, t: int) -> int | None:
    if state.phase is Phase.BREAK and state.brk is not None and not state.brk.overrun:
        wait = _step_down(state.brk.ends_at - t, NS_PER_S)
        return None if wait is None else t + wait
    turn = state.turn
    if turn is None or not turn.running or turn.side not in shown_sides(state, facing):
        return None
    delay, reserve = turn.delay_left_at(t), turn.reserve_at(t)
    step = TENTH_NS if reserve < TENTHS_BELOW_NS and turn.side is facing else NS_PER_S
    due = []
    wait = _step_down(reserve, step)
    if wait is not None:
        due.append(t + delay + wait)
    if delay > 0:
        wait = _step_down(delay, NS_PER_S)
        due.append(t + (wait if wait is not None else delay))
    return min(due) if due else None


def reference_settled(state: MatchState, facing: Side, t: int) -> tuple[int, int | None]:
    shown, change = t, reference_next_change(state, facing, t)
    if state.turn is None or state.turn.since != t:
        return shown, change
    while change is not None and change - t < GLIMPSE_NS:
        shown, change = change, reference_next_change(state, facing, change)
    return shown, change


def match_states(mode: TimeMode, seed: int) -> list[tuple[MatchState, int]]:
    """Every state of a generated match after each input, at instants around it: the input,
    the nanosecond after, into the delay and the seconds, and the last 20 s of a running
    reserve (its tenths)."""
    match = load_benchmark("bench_match").generate_match(seed, 3, bounce=0.25)
    rules = replace(match.rules, time=replace(match.rules.time, mode=mode))
    engine = Engine.start(rules)
    out = []
    for edge in match.inputs:
        engine, _ = engine.feed(edge)
        for later in (0, 1, 350_000_000, 7_300_000_001, 11 * NS_PER_S + 999_999_999):
            out.append((engine.match, edge.t + later))
        turn = engine.match.turn
        flag_at = turn.flag_at() if turn is not None else None
        if flag_at is not None:
            out += [(engine.match, t) for t in (flag_at - 15_050_000_000, flag_at - 300_000_001)
                    if t >= edge.t]
    return out


MODES = [TimeMode.DELAY, TimeMode.BRONSTEIN, TimeMode.FISCHER]


# --- each side's clock, shared by both panels ---------------------------------------------------

@pytest.mark.parametrize("mode", MODES)
def test_clocks_shared_by_both_panels_are_the_clocks_made_for_each(mode: TimeMode) -> None:
    rnd = random.Random(5)
    checked = 0
    for state, t in match_states(mode, 51):
        opening = rnd.choice(((), (3, 5), (6,)))
        clocks = SideClocks(state, t, opening)
        for side in Side:
            for named in (False, True):
                made = clocks.clock(side, named)
                assert made == reference_clock(state, side, t, named, opening), (state, t)
                assert type(made) is Clock and hash(made) == hash(
                    reference_clock(state, side, t, named, opening))
                checked += 1
    assert checked > 4000


@pytest.mark.parametrize("mode", MODES)
def test_views_given_the_shared_clocks_are_the_views_made_alone(mode: TimeMode) -> None:
    for state, t in match_states(mode, 52):
        clocks = SideClocks(state, t)
        for side in Side:
            alone = panel_view(state, side, t)
            assert panel_view(state, side, t, clocks=clocks) == alone
            # Clocks of another instant are not taken for this one.
            assert panel_view(state, side, t, clocks=SideClocks(state, t + NS_PER_S)) == alone


# --- the running turn's next changes, kept per instant -----------------------------------------

@pytest.mark.parametrize("mode", MODES)
def test_next_changes_kept_per_instant_are_the_changes_worked_out_afresh(mode: TimeMode) -> None:
    rnd = random.Random(6)
    for state, t in match_states(mode, 53):
        # Both panels, in either order, asked again: what is kept is what is worked out.
        order = list(Side) if rnd.random() < 0.5 else list(reversed(Side))
        for side in order + order:
            assert settled(state, side, t) == reference_settled(state, side, t), (state, t)
    assert len(redraw._known[1]) <= redraw.KNOWN_INSTANTS


# --- a frame's windows, kept per shape of change ------------------------------------------------

def reference_plan(spans: list[tuple[int, int, int]], command_bytes: int,
                   one_page_bytes: int | None, merge: bool) -> list[Any] | None:
    runs: list[list[tuple[int, int]]] = [[] for _ in range(8)]
    for page, first, last in spans:
        runs[page].append((first, last))
    full = partial.FULL_SHARE * 1024
    if sum(last - first + 1 for page in runs for first, last in page) > full:
        return None
    plan = (partial.merged_windows(runs, command_bytes, one_page_bytes) if merge
            else [(p, p, run) for p, page in enumerate(runs) for run in page])
    cost = sum(partial.window_cost(w, command_bytes, one_page_bytes) for w in plan)
    return None if cost > full else plan


@settings(max_examples=300, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), count=st.integers(1, 24),
       driver=st.sampled_from(((6, 3, True), (3, None, False))))
def test_cached_plans_are_the_plans_searched_afresh(seed: int, count: int,
                                                    driver: tuple[int, int | None, bool]) -> None:
    rnd = random.Random(seed)
    spans = []
    for page in sorted(rnd.sample(range(8), rnd.randint(1, 8))):
        column = rnd.randrange(0, 20)
        for _ in range(rnd.randint(1, max(1, count // 4))):
            if column > 127:
                break
            last = min(127, column + rnd.randrange(0, 30))
            spans.append((page, column, last))
            column = last + rnd.randint(10, 40)
    expected = reference_plan(spans, *driver)
    for _ in range(2):              # worked out, then kept
        got = partial._cheapest_plan(tuple(spans), 8, 1024, *driver)
        assert (None if got is None else list(got)) == expected


# --- each thread's own message buffers ----------------------------------------------------------

class _Kernel(smbus2.SMBus):  # type: ignore[misc]
    """smbus2's own SMBus whose fake kernel reads each I2C_RDWR's messages (address, bytes)
    from where they point, optionally waiting first (`before_reading`)."""

    def __init__(self) -> None:
        super().__init__(None)
        self.fd = self
        self.carried: list[list[tuple[int, bytes]]] = []
        self.before_reading: Any = None

    def carry(self, request: int, arg: Any) -> int:
        assert request == smbus2_module.I2C_RDWR
        if self.before_reading is not None:
            self.before_reading()
        self.carried.append([(arg.msgs[i].addr,
                              ctypes.string_at(arg.msgs[i].buf, arg.msgs[i].len))
                             for i in range(arg.nmsgs)])
        return 0

    def close(self) -> None:
        self.fd = None


def test_messages_larger_than_the_scratch_leave_whole(kernel: None) -> None:
    bus = _Kernel()
    rnd = random.Random(7)
    items = [(0x3C + i % 2, bytes(rnd.randrange(256) for _ in range(1025))) for i in range(5)]
    assert sum(len(raw) for _, raw in items) > i2c_rdwr.SCRATCH_BYTES
    i2c_rdwr._transfer(bus, items)
    i2c_rdwr._transfer(bus, items[:2])       # and after it, through the scratch again
    assert bus.carried == [items, items[:2]]


def test_each_thread_packs_its_messages_in_buffers_of_its_own(kernel: None) -> None:
    """A writer thread still in its ioctl while another thread sends: its messages still
    point at its own bytes."""
    first, second = _Kernel(), _Kernel()
    in_kernel, other_done = threading.Event(), threading.Event()

    def wait_for_the_other() -> None:
        in_kernel.set()
        assert other_done.wait(5)

    first.before_reading = wait_for_the_other
    mine = [(0x3C, b"\x00\xb2\x0c\x12"), (0x3C, b"\x40" + bytes(range(1, 40)))]
    theirs = [(0x3D, b"\x00\xb6\x0a\x10"), (0x3D, b"\x40" + bytes(range(200, 255)))]

    def other() -> None:
        assert in_kernel.wait(5)
        i2c_rdwr._transfer(second, theirs)
        other_done.set()

    thread = threading.Thread(target=other)
    thread.start()
    i2c_rdwr._transfer(first, mine)
    thread.join(5)
    assert first.carried == [mine] and second.carried == [theirs]

"""Benchmark: the two panels on one emulated I²C bus — press to glass, bytes and bus time.

Run it as a plain script from the repository root::

    python benchmarks/bench_bus.py [--length L] [--seed N] [--speeds 100,400] [--driver D] [--stock]
        [--pi-factor F] [--cold-factor C] [--warm-replays R] [--kernel-us US] [--presses N]

The panels are the real thing except the wire: `PanelPresenter` on two `Panel`s with the partial
drivers of `hardware/partial.py`, both drawn by one `BusWriter` thread (as `Panel.from_config`
builds them for bus 1), each on luma's own `i2c` serial and smbus2's `SMBus` as on the Pi, whose
messages are built as there; only their `ioctl` is replaced: it hands each transaction to
`hardware/i2c_emulator.py`'s bus (and controller memories), which blocks it for 9 clock periods a
byte plus 21 per transaction (address byte, control byte, START/STOP) at the given speed. The match
is one of `bench_match.py`'s generated matches (taps, doubles, result entries, pauses), run through
the engine with a redraw at every instant the presenter asks for.

Each speed is run twice: on this machine as it is, and as a **Pi 3 model** (a Zero 2 W is the
same): what this machine lacks of a Pi is added to the run itself, so that the queueing of frames
behind each other, the GIL shared by the clock's thread and the writer, and the bus's idle gaps
all play out as they would there:
- **CPU × `--pi-factor`** (default 8; a Pi 3's Cortex-A53 runs Python 6–10 times slower than this
  kind of machine) for the code's own CPU, and × `--cold-factor` (default 2) for what this host
  adds to a thread that has waited. On this machine (a KVM guest on a shared host) a thread that
  slept runs its next few hundred µs 2–4 times slower than warm: while its virtual CPU was
  halted, other guests' work evicted its caches and branch predictors (the same press after a
  5 ms sleep: 0.50 ms against 0.17 ms; any code, not only this one's). A Pi runs nothing else,
  and redraws its running clock every second with this same code: what of that surplus remains
  there are cache misses, whose cost is the Pi's memory latency (about twice this host's), not
  the interpreter's 8×. So each clock press's CPU is split: the code's own is the least of
  `--warm-replays` (5) warm replays of the same press (`bench_press_cpu.py`), the rest is the
  surplus. Run with `--cold-factor 8` for the model before this split (all × 8); both are
  printed in series. After every stretch of Python on the clock's thread (engine, presenter,
  views, render) and on the writer's (the driver's plan, luma, smbus2's messages), measured with
  `time.thread_time`, the thread burns (s − 1) times as much CPU again, holding the GIL as the
  slower Python would; s is the factor that gives this machine's run, split as above, its
  scaled sum (printed). The emulator's own work (decoding into the controller memories) is not
  counted: it runs inside the transaction's time.
- **`--kernel-us` of kernel an ioctl** (default 60; the ioctl, the i2c-bcm2835 driver's set-up
  and its interrupts take 30–100 µs on a Pi): each ioctl's first transaction blocks (without the
  GIL) that much longer, on top of the wire's time; **`--message-us`** (default 15) for each
  further message of one `I2C_RDWR` ioctl (the driver's interrupt starts it with a repeated
  START: `hardware/i2c_rdwr.py` sends a frame's windows so). The messages of one ioctl follow
  each other in the kernel, so the model sleeps once, to the end of the last, and the process's
  timer slack is 1 µs (a Pi's transfer ends with the controller's interrupt, not a timer: Linux's
  default 50 µs slack would be added to every modelled transaction).
- As in the service, a step that makes records holds the panels' frames while the journal would
  sync (there is no journal here) and lets them go together: both panels in one ioctl.
The CPU times are this host's as measured: a busy host (other processes, a shared VM) inflates
them, and the Pi model multiplies that too; the load average is printed with the figures. The
Pi model's target: p99 ≤ 6 ms at 400 kHz (issue 20).

Time is compressed: between two instants of the match the benchmark waits for the bus to fall
idle or for the real gap between them, whichever comes first — so a press finds the bus exactly
as busy as on the device, and the idle stretches are skipped.

It prints, per bus speed and for this machine and the Pi 3 model:
- press to glass, for the presses that switch the clocks (the target: p99 under 8 ms at 400 kHz
  and 25 ms at 100 kHz): from the instant the clock's loop takes the press edge to the end of the
  last transaction of the second panel's update (the service's 5 ms input grace comes before
  that instant; see bench_latency.py); and for the presses that change the screen (a game
  starts, a result is entered), whose frames are whole;
  the wire's share of it (the modelled bus time) is printed below it, for the Pi model the
  kernel's share, and how late the transactions returned in all: a transaction's caller needs
  the GIL back, which the clock's thread holds while it renders (up to the 5 ms switch
  interval: the same on a Pi), and this host's sleep overshoots (about 30 µs an ioctl with the
  fine timer slack; not on a Pi: the Pi model's figure is that much pessimistic);
- for the Pi model, also its press to glass computed in series from this machine's run: per
  press, its own CPU × factor + its surplus × cold factor + its wire time + the kernel per
  transaction, without any wait (the GIL handed over at once, no frame queued, no host
  preemption): the floor the run's figure would reach on an idle host with a free GIL; and
  the same with the surplus × factor too;
- the CPU per clock press on this machine: the clock's thread (engine, presenter, render, handing
  the frames over) and the writer's (driver, luma, smbus2) for that press's frames; the code's
  own and this host's wake-up surplus;
- the bus's bytes and busy share per second with a running clock showing minutes:seconds and
  showing tenths (below 20 s: the target is under 5 %), from a minute and from 15 s of play.

`--stock` runs luma's own drivers drawn on the clock's thread instead (the situation before
issue 10), for comparison. It asserts nothing.
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import gc
import os
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

try:
    import gammonclock  # noqa: F401
except ImportError:  # running from a checkout without the package installed
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "firmware"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import smbus2  # noqa: E402
import smbus2.smbus2 as smbus2_module  # noqa: E402
from bench_match import generate_match  # noqa: E402
from bench_press_cpu import least_per_press_ms  # noqa: E402
from luma.core.interface.serial import i2c as luma_i2c  # noqa: E402
from luma.oled import device as oled  # noqa: E402

from gammonclock.core.effects import Effect, GameStarted, TurnEnded  # noqa: E402
from gammonclock.core.engine import ButtonEdge, Engine  # noqa: E402
from gammonclock.core.match_state import Phase  # noqa: E402
from gammonclock.core.rules import MatchRules  # noqa: E402
from gammonclock.durations import NS_PER_S  # noqa: E402
from gammonclock.hardware import partial  # noqa: E402
from gammonclock.hardware.bus_writer import BusWriter  # noqa: E402
from gammonclock.hardware.i2c_emulator import (  # noqa: E402
    ControllerMemory,
    EmulatedBus,
    Transaction,
    memory_for,
)
from gammonclock.hardware.panels import Panel  # noqa: E402
from gammonclock.hardware.presenters import PanelPresenter  # noqa: E402
from gammonclock.hardware.screens import HEIGHT, WIDTH  # noqa: E402
from gammonclock.sides import Button, Pair, Side  # noqa: E402

ADDRESSES = Pair(0x3C, 0x3D)
TARGET_P99_MS = {400_000: 8.0, 100_000: 25.0}
TARGET_BUSY_TENTHS = 5.0          # % of the bus with tenths showing
TARGET_PI_P99_MS = {400_000: 6.0}     # issue 20: press → both panels' glass on a Pi 3
TARGET_CPU_MS = 0.15                  # issue 20: CPU per press, here
PI_FACTOR = 8.0                       # a Pi 3 / Zero 2 W runs Python 6–10× slower
COLD_FACTOR = 2.0                     # … and waits on memory about twice as long (DRAM latency)
WARM_REPLAYS = 5                      # replays of the match for each press's warm CPU
KERNEL_US = 60.0                      # a Pi's kernel per I²C ioctl: 30–100 µs
MESSAGE_US = 15.0                     # and per further message of one I2C_RDWR ioctl (the
                                      # driver's interrupt starting it with a repeated START)
MODES = {True: "luma's stock drivers on the clock's thread",
         False: "partial updates, one writer thread"}
CONTROL_COMMAND = 0x00                # luma's control byte before commands (0x40: data)
PR_SET_TIMERSLACK = 29                # prctl(2)


@dataclass(frozen=True)
class Machine:
    """What the run adds to this machine: its CPU × `factor`, `kernel_s` an ioctl and
    `message_s` a further message of one ioctl."""

    name: str
    factor: float = 1.0
    kernel_s: float = 0.0
    message_s: float = 0.0
    cold_factor: float = 1.0      # for the CPU this host adds to a thread that waited

    def effective_factor(self, warm_share: float) -> float:
        """The factor on this host's measured CPU whose `warm_share` is the code's own (scaled
        by `factor`) and the rest this host's wake-up surplus (scaled by `cold_factor`)."""
        return self.factor * warm_share + self.cold_factor * (1 - warm_share)


HERE = Machine("this machine")


class CpuScale:
    """Each thread's CPU between marks: counted, and (factor > 1) stretched: `catch_up` burns
    factor − 1 times the CPU since the mark again, holding the GIL as a slower CPU would.

    While a press's warm CPU is known (`budget`: what its code costs warm), its stretches, on
    either thread, are the code's own up to that budget — burnt `own_factor` − 1 times again —
    and this host's wake-up surplus beyond it, burnt `cold_factor` − 1 times: the press's CPU
    split as `in_series` splits it."""

    def __init__(self, factor: float, own_factor: float | None = None,
                 cold_factor: float | None = None) -> None:
        self.factor = factor
        self.own_factor = factor if own_factor is None else own_factor
        self.cold_factor = factor if cold_factor is None else cold_factor
        self._budget_ns: int | None = None
        self._local = threading.local()

    def budget(self, warm_ms: float | None) -> None:
        """The coming press's warm CPU (None: not a press with one; stretches × `factor`)."""
        self._budget_ns = None if warm_ms is None else round(warm_ms * 1e6)

    def _stretched(self, spent: int) -> int:
        budget = self._budget_ns
        if budget is None:
            return round(self.factor * spent)
        own = min(spent, budget)
        self._budget_ns = budget - own
        return round(self.own_factor * own + self.cold_factor * (spent - own))

    def begin(self) -> None:
        self._local.mark = time.thread_time_ns()
        self._local.used = 0

    def catch_up(self) -> None:
        now = time.thread_time_ns()
        mark = getattr(self._local, "mark", None)
        if mark is None:
            self.begin()
            return
        self._local.used += now - mark
        until = mark + self._stretched(now - mark)
        while time.thread_time_ns() < until:
            pass
        self._local.mark = time.thread_time_ns()

    def skip(self) -> None:
        """The CPU since the mark is the emulator's own: not counted, not stretched."""
        self._local.mark = time.thread_time_ns()

    def used_ns(self) -> int:
        return int(getattr(self._local, "used", 0))


@dataclass
class ModelBus(EmulatedBus):
    """The emulated bus with `kernel_s` more a transaction, and each transaction's lateness
    (how much later than meant this host's sleep returned)."""

    kernel_s: float = 0.0
    message_s: float = 0.0
    lateness: list[float] = field(default_factory=list)
    firsts: list[bool] = field(default_factory=list)   # per transaction: an ioctl's first

    def carry_ioctl(self, messages: list[tuple[int, int]], since: float) -> None:
        """The messages (address, payload bytes) of one ioctl entered at `since`: it returns
        after the kernel's time (`kernel_s` for its first message, `message_s` for each further
        one, started by the driver's interrupt) and the wires' (one writer per bus: nothing
        waits for the lock). The caller sleeps once, to the end of the last message: on a Pi the
        messages follow each other inside the kernel, so this host's sleep overshoot is paid
        once an ioctl, not once a message."""
        with self._lock:
            end = since
            ends: list[tuple[float, int, int, float]] = []
            for i, (address, payload_bytes) in enumerate(messages):
                busy = self.seconds(payload_bytes)
                end += (self.kernel_s if i == 0 else self.message_s) + busy
                ends.append((end, address, payload_bytes, busy))
                self.firsts.append(i == 0)
            if self.sleep:
                while (left := end - self.clock()) > 0:
                    time.sleep(left)
                done = self.clock()
                # Each message ends when the model says (the last: when the sleep returned).
                for i, (at, address, payload_bytes, busy) in enumerate(ends):
                    last = i == len(ends) - 1
                    self.transactions.append(Transaction(done if last else at, address,
                                                         payload_bytes, busy))
                    self.lateness.append(done - at if last else 0.0)
            else:
                self.transactions.extend(Transaction(at, address, payload_bytes, busy)
                                         for at, address, payload_bytes, busy in ends)


class WireSMBus(smbus2.SMBus):  # type: ignore[misc]
    """smbus2's SMBus whose kernel is the model: its ioctls (see `_ioctl`) reach `bus` and the
    controller `memories`; the CPU up to each one is caught up on `cpu`."""

    def __init__(self, bus: ModelBus, memories: dict[int, ControllerMemory],
                 cpu: CpuScale) -> None:
        super().__init__(None)
        self.fd = self                  # what smbus2 hands to `ioctl`
        self.bus, self.memories, self.cpu = bus, memories, cpu

    def close(self) -> None:
        self.fd = None

    def transfer(self, request: int, arg: Any) -> int:
        self.cpu.catch_up()              # luma's and smbus2's Python before the ioctl
        since = time.perf_counter()
        messages: list[tuple[int, int]] = []
        if request == smbus2_module.I2C_RDWR:
            for i in range(arg.nmsgs):
                msg = arg.msgs[i]
                raw = ctypes.string_at(msg.buf, msg.len)
                messages.append(self._decode(msg.addr, raw[0], raw[1:]))
        elif request == smbus2_module.I2C_SMBUS:
            block = arg.data.contents.block
            messages.append(self._decode(self.address, arg.command,
                                         bytes(block[1:block[0] + 1])))
        self.bus.carry_ioctl(messages, since)
        self.cpu.skip()                  # the emulator's decoding is not the Pi's
        return 0

    def _decode(self, address: int, control: int, payload: bytes) -> tuple[int, int]:
        """The message into the controller's memory; (address, payload bytes) for the wire."""
        memory = self.memories[address]
        if control == CONTROL_COMMAND:
            memory.command(payload)
        else:
            memory.data(payload)
        return address, len(payload)


_real_ioctl = smbus2_module.ioctl


def _ioctl(fd: Any, request: int, arg: Any = 0, *rest: Any) -> Any:
    if isinstance(fd, WireSMBus):
        return fd.transfer(request, arg)
    return _real_ioctl(fd, request, arg, *rest)


def fine_timer_slack() -> None:
    """This process's timer slack to 1 µs (Linux's default, 50 µs, is added to every sleep):
    a Pi's I²C transfer ends with the controller's interrupt waking the caller, not a timer, so
    the modelled transactions should not overshoot by the slack. New threads inherit it."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_TIMERSLACK, 1000, 0, 0, 0)
    except (OSError, AttributeError):
        pass                             # not Linux: the sleeps overshoot a little more


@contextlib.contextmanager
def wired() -> Iterator[None]:
    """smbus2's ioctl through the model while the block runs (real file descriptors pass)."""
    smbus2_module.ioctl = _ioctl
    try:
        yield
    finally:
        smbus2_module.ioctl = _real_ioctl


def wire_serial(bus: ModelBus, memories: dict[int, ControllerMemory], cpu: CpuScale,
                address: int) -> Any:
    """luma's managed `i2c` serial (as `Panel.from_config` builds it) on a `WireSMBus`."""
    saved = smbus2.SMBus
    smbus2.SMBus = lambda port: WireSMBus(bus, memories, cpu)
    try:
        return luma_i2c(port=1, address=address)
    finally:
        smbus2.SMBus = saved


class ScaledWriter(BusWriter):
    """The bus writer; the clock's CPU up to each hand-over is caught up first, and the
    writer's for each piece of work (its frames planned and sent: both panels' in one ioctl at
    a press) is caught up and noted on the panels, with when their frames reached the glass."""

    def __init__(self, name: str, cpu: CpuScale) -> None:
        super().__init__(name)
        self.cpu = cpu

    def submit(self, target: Any, job: object) -> None:
        self.cpu.catch_up()
        super().submit(target, job)

    def _write(self, work: list[tuple[Any, object | None]]) -> list[bool]:
        self.cpu.begin()
        done = super()._write(work)
        self.cpu.catch_up()
        ended = time.perf_counter()
        frames = [(target, job) for target, job in work
                  if job is not None and isinstance(target, TimedPanel)]
        for target, job in frames:              # the writer's CPU shared by its frames
            target.cpu_ns[job.t] = self.cpu.used_ns() // len(frames)  # type: ignore[attr-defined]
            target.done_at[job.t] = ended                             # type: ignore[attr-defined]
        return done


class TimedPanel(Panel):
    """A Panel on which the writer (`ScaledWriter._write`) notes when each of its frames
    reached the glass and the writer's CPU for it, by the frame's instant."""

    def __init__(self, *args: Any, cpu: CpuScale, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.cpu = cpu
        self.done_at: dict[int, float] = {}
        self.cpu_ns: dict[int, int] = {}


@dataclass
class Rig:
    bus: ModelBus
    panels: Pair[TimedPanel]
    presenter: PanelPresenter
    writer: BusWriter | None
    cpu: CpuScale
    machine: Machine

    def settle(self, seconds: float) -> None:
        """Wait until the bus is idle, or `seconds` (the real gap to the next instant)."""
        if self.writer is not None and seconds > 0:
            self.writer.flush(timeout=seconds)

    def close(self) -> None:
        self.presenter.close()


def make_rig(speed_hz: int, driver: str, stock: bool, sleep: bool = True,
             machine: Machine = HERE, scale: float | None = None) -> Rig:
    """The panels on one bus, on `machine`, whose threads burn their CPU × `scale` (default
    the machine's factor) outside presses whose warm CPU is known; build it inside
    `wired()`."""
    bus = ModelBus(speed_hz=speed_hz, sleep=sleep, kernel_s=machine.kernel_s,
                   message_s=machine.message_s)
    cpu = CpuScale(machine.factor if scale is None else scale, machine.factor,
                   machine.cold_factor)
    writer = None if stock else ScaledWriter("bench bus", cpu)
    make: Callable[..., Any] = getattr(oled, driver) if stock else partial.DRIVERS[driver]
    memories = {address: memory_for(driver) for address in ADDRESSES}

    def panel(side: Side) -> TimedPanel:
        serial = wire_serial(bus, memories, cpu, ADDRESSES[side])
        return TimedPanel(lambda: make(serial, width=WIDTH, height=HEIGHT), f"{side} panel",
                          writer=writer, cpu=cpu)

    panels = Pair(panel(Side.LEFT), panel(Side.RIGHT))
    return Rig(bus, panels, PanelPresenter(panels), writer, cpu, machine)


@dataclass
class Latencies:
    clock_presses: list[float] = field(default_factory=list)    # ms, measured
    screen_changes: list[float] = field(default_factory=list)
    clock_wire: list[float] = field(default_factory=list)       # ms the bus was busy meanwhile
    clock_kernel: list[float] = field(default_factory=list)     # ms of modelled kernel
    clock_late: list[float] = field(default_factory=list)       # ms of this host's overshoot
    clock_transactions: list[int] = field(default_factory=list)  # transactions in the span
    clock_ioctls: list[int] = field(default_factory=list)        # ioctls among them
    clock_cpu: list[float] = field(default_factory=list)        # ms of CPU, measured (unscaled)
    clock_thread_cpu: list[float] = field(default_factory=list)  # of which the clock's thread
    clock_t: list[int] = field(default_factory=list)            # the presses' instants


@dataclass
class Glass:
    ms: float           # from the press to the last panel's glass
    wire: float         # of which the bus's modelled busy time
    kernel: float       # the modelled kernel's
    late: float         # this host's sleep overshoot
    transactions: int   # ended within it
    ioctls: int         # of which the first of an ioctl (the others: its further messages)


def _glass(rig: Rig, t: int, since: float, returned: float) -> Glass | None:
    """From `since` to the end of the last panel's frame of instant `t` (None: nothing drawn),
    and the shares of it of the wire, the kernel and this host's overshoot."""
    if rig.writer is None:
        end = returned
    else:
        rig.writer.flush(timeout=5.0)
        ends = [p.done_at[t] for p in rig.panels if t in p.done_at]
        if not ends:
            return None
        end = max(ends)
    spanned = [i for i, x in enumerate(rig.bus.transactions) if since < x.end <= end]
    wire = sum(rig.bus.transactions[i].busy for i in spanned)
    late = sum(rig.bus.lateness[i] for i in spanned if i < len(rig.bus.lateness))
    ioctls = sum(1 for i in spanned if rig.bus.firsts[i])
    kernel = ioctls * rig.bus.kernel_s + (len(spanned) - ioctls) * rig.bus.message_s
    return Glass((end - since) * 1e3, wire * 1e3, kernel * 1e3, late * 1e3, len(spanned), ioctls)


def play_match(rig: Rig, rules: MatchRules, inputs: list[ButtonEdge], end: int,
               warm: dict[int, float] | None = None) -> Latencies:
    """The match through engine and presenter, time compressed (see the module's docstring);
    `warm`: each clock press's warm CPU by its instant, for the CPU scale's split."""
    out = Latencies()
    engine = Engine.start(rules)
    now = 0
    wake = rig.presenter.present(engine, 0, [])

    def step(t: int, edge: ButtonEdge | None) -> None:
        nonlocal engine, now, wake
        rig.cpu.budget(None)              # what the writer finishes meanwhile is no press's
        rig.settle((t - now) / NS_PER_S)
        now = t
        rig.cpu.budget(warm.get(t) if warm is not None and edge is not None else None)
        rig.cpu.begin()
        since = time.perf_counter()
        effects: list[Effect]
        running_before = engine.match.phase is Phase.RUNNING
        engine, effects = engine.feed(edge) if edge is not None else engine.advance(t)
        # As the service does when the step made records: the frames are held while it syncs
        # the journal (none here) and leave together (one ioctl for both panels).
        held = bool(edge is not None or effects) and rig.presenter.hold()
        wake = rig.presenter.present(engine, t, effects)
        rig.cpu.catch_up()
        if held:
            rig.presenter.release()
        returned = time.perf_counter()
        if edge is None or not edge.pressed or not effects:
            return
        glass = _glass(rig, t, since, returned)
        if glass is None:
            return
        # A clock press: one turn ends, the other starts, on the same screen. A press that
        # changes the screen (a double, a take, a result) sends whole frames: counted apart.
        if (running_before and engine.match.phase is Phase.RUNNING
                and any(isinstance(e, TurnEnded) for e in effects)
                and not any(isinstance(e, GameStarted) for e in effects)):
            out.clock_presses.append(glass.ms)
            out.clock_wire.append(glass.wire)
            out.clock_kernel.append(glass.kernel)
            out.clock_late.append(glass.late)
            out.clock_transactions.append(glass.transactions)
            out.clock_ioctls.append(glass.ioctls)
            writer_ns = sum(p.cpu_ns.get(t, 0) for p in rig.panels) if rig.writer else 0
            out.clock_cpu.append((rig.cpu.used_ns() + writer_ns) / 1e6)
            out.clock_thread_cpu.append(rig.cpu.used_ns() / 1e6)
            out.clock_t.append(t)
        else:
            out.screen_changes.append(glass.ms)

    for edge in [*inputs, None]:
        t_input = end if edge is None else edge.t
        while True:
            due = [d for d in (wake, engine.next_deadline()) if d is not None and d < t_input]
            if not due:
                break
            step(min(due), None)
        if edge is not None:
            step(edge.t, edge)
    rig.settle(5.0)
    return out


def steady_bus_share(speed_hz: int, driver: str, tenths: bool) -> tuple[float, float, float]:
    """(bytes per second, busy %, seconds) of the bus with one clock running, redrawn whenever
    the presenter asks, for 60 s showing minutes:seconds or 15 s showing tenths."""
    rules = MatchRules.defaults("backgammon", 7, names=Pair("Anna", "Boris"))
    rig = make_rig(speed_hz, driver, stock=False, sleep=False)
    engine = Engine.start(rules)
    engine, _ = engine.feed(ButtonEdge(NS_PER_S, Button.LEFT, True))       # right's clock runs
    engine, _ = engine.feed(ButtonEdge(NS_PER_S + NS_PER_S // 10, Button.LEFT, False))
    reserve = engine.match.reserve_at(Side.RIGHT)
    delay = rules.time.delay_ns
    # Tenths: from 19 s left to 4 s left; minutes:seconds: a minute after the delay.
    start = NS_PER_S + delay + (reserve - 19 * NS_PER_S if tenths else 0)
    length = (15 if tenths else 60) * NS_PER_S
    t = start
    engine, _ = engine.advance(t)
    wake = rig.presenter.present(engine, t, [])
    rig.settle(5.0)
    before_bytes, before_busy = rig.bus.total_bytes(), rig.bus.busy_seconds()
    while wake is not None and wake < start + length:
        t = wake
        engine, effects = engine.advance(t)
        wake = rig.presenter.present(engine, t, effects)
        rig.settle(5.0)
    seconds = length / NS_PER_S
    sent = rig.bus.total_bytes() - before_bytes
    busy = rig.bus.busy_seconds() - before_busy
    rig.close()
    return sent / seconds, 100 * busy / seconds, seconds


def pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def _line(label: str, values: list[float], note: str = "", unit: str = "ms") -> str:
    return (f"{label}: p50 {pct(values, .5):6.2f} {unit}  p99 {pct(values, .99):6.2f} {unit}  "
            f"max {max(values, default=float('nan')):6.2f} {unit}{note}")


def warm_split(here: Latencies, warm: dict[int, float]) -> list[tuple[float, float]]:
    """Per clock press of this machine's run, its measured CPU split into the code's own (the
    least of the warm replays, at most what was measured) and this host's wake-up surplus."""
    split = []
    for t, cpu in zip(here.clock_t, here.clock_cpu, strict=True):
        own = min(cpu, warm.get(t, cpu))
        split.append((own, cpu - own))
    return split


def warm_share(split: list[tuple[float, float]]) -> float:
    """The share of this machine's measured CPU per press that is the code's own."""
    total = sum(own + surplus for own, surplus in split)
    return sum(own for own, _ in split) / total if total else 1.0


def in_series(here: Latencies, pi: Machine, split: list[tuple[float, float]]) -> list[float]:
    """Per clock press of this machine's run, the Pi's press to glass computed in series: the
    code's own CPU × factor + this host's wake-up surplus × cold factor + the wire + the kernel
    a transaction; no waits (GIL, host, queued frames)."""
    return [pi.factor * own + pi.cold_factor * surplus + wire
            + (k * pi.kernel_s + (n - k) * pi.message_s) * 1e3
            for (own, surplus), wire, n, k in zip(split, here.clock_wire,
                                                  here.clock_transactions, here.clock_ioctls,
                                                  strict=True)]


def report(machine: Machine, lat: Latencies, hz: int, took: float,
           here: Latencies | None = None, split: list[tuple[float, float]] | None = None,
           scale: float = 1.0) -> None:
    """The figures of one run (`here`: this machine's, beside the Pi model's, whose threads
    burnt `scale` × their CPU; `split`: this machine's CPU per press, own and surplus)."""
    c, s = lat.clock_presses, lat.screen_changes
    if machine is HERE:
        target = TARGET_P99_MS.get(hz)
        print(f"  {machine.name} ({took:.0f} s to run)")
    else:
        target = TARGET_PI_P99_MS.get(hz)
        print(f"  {machine.name}: CPU × {machine.factor:g} (this host's wake-up surplus × "
              f"{machine.cold_factor:g}: each thread's CPU × {scale:.2f} in this run), "
              f"{machine.kernel_s * 1e6:g} µs of kernel an ioctl, "
              f"{machine.message_s * 1e6:g} µs a further message of one ({took:.0f} s to run)")
    note = f"   target p99 < {target:g} ms" if target and machine is HERE else (
        f"   target p99 ≤ {target:g} ms" if target else "")
    print("    " + _line(f"press to glass, clock presses ({len(c)})", c, note))
    print("      " + _line("of which the wire (bus busy, modelled)", lat.clock_wire))
    if machine is not HERE:
        print("      " + _line("of which the kernel (modelled)", lat.clock_kernel))
    print("      " + _line("of which transactions ended late (GIL, sleep overshoot)",
                           lat.clock_late))
    if here is not None and here.clock_cpu and split is not None:
        print("    " + _line(f"computed in series from this machine's run (own CPU × "
                             f"{machine.factor:g} + surplus × {machine.cold_factor:g} + wire + "
                             f"kernel, no waits)", in_series(here, machine, split), note))
        if machine.cold_factor != machine.factor:
            plain = Machine(machine.name, machine.factor, machine.kernel_s, machine.message_s,
                            cold_factor=machine.factor)
            print("    " + _line(f"the same with the surplus × {machine.factor:g} too (as if a "
                                 f"Pi's caches were evicted as this VM's)",
                                 in_series(here, plain, split)))
    print("    " + _line(f"press to glass, screen changes ({len(s)})", s))
    if machine is HERE:
        print("    " + _line("CPU per clock press (clock's thread + writer)", lat.clock_cpu,
                             f"   target ≤ {TARGET_CPU_MS:g} ms"))
        writer = [a - b for a, b in zip(lat.clock_cpu, lat.clock_thread_cpu, strict=True)]
        print("      " + _line("of which the clock's thread (engine, views, frames, hand-over)",
                               lat.clock_thread_cpu))
        print("      " + _line("of which the writer (plans, messages, ioctl; after a wake-up)",
                               writer))
        if split is not None:
            print("      " + _line("of which the code's own (least of the warm replays)",
                                   [own for own, _ in split]))
            print("      " + _line("of which this host's wake-up surplus",
                                   [surplus for _, surplus in split]))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--length", type=int, default=3, help="match length in points")
    parser.add_argument("--seed", type=int, default=2024)
    parser.add_argument("--speeds", default="400,100", help="bus speeds in kHz, comma-separated")
    parser.add_argument("--driver", default="ssd1306", choices=sorted(partial.DRIVERS))
    parser.add_argument("--stock", action="store_true",
                        help="luma's own drivers on the clock's thread (before issue 10)")
    parser.add_argument("--pi-factor", type=float, default=PI_FACTOR,
                        help="the Pi model's CPU: this machine's CPU time × this "
                             "(default %(default)g)")
    parser.add_argument("--kernel-us", type=float, default=KERNEL_US,
                        help="the Pi model's kernel time per I²C ioctl, µs "
                             "(default %(default)g)")
    parser.add_argument("--message-us", type=float, default=MESSAGE_US,
                        help="the Pi model's kernel time per further message of one "
                             "I2C_RDWR ioctl, µs (default %(default)g)")
    parser.add_argument("--cold-factor", type=float, default=COLD_FACTOR,
                        help="the Pi model's factor on the CPU this host adds to a thread "
                             "that waited (default %(default)g; --cold-factor 8 scales all "
                             "of it as the code)")
    parser.add_argument("--warm-replays", type=int, default=WARM_REPLAYS,
                        help="replays of the match for each press's warm CPU "
                             "(default %(default)g)")
    parser.add_argument("--presses", type=int,
                        help="play only the match's first N presses (a brief run)")
    args = parser.parse_args(argv)
    pi = Machine("Pi 3 model", args.pi_factor, args.kernel_us / 1e6, args.message_us / 1e6,
                 cold_factor=args.cold_factor)
    fine_timer_slack()

    match = generate_match(args.seed, args.length, bounce=0.0)
    inputs, end = match.inputs, match.end
    if args.presses is not None:
        pressed = [i for i, e in enumerate(inputs) if e.pressed]
        if args.presses < len(pressed):
            cut = pressed[args.presses]
            inputs, end = inputs[:cut], inputs[cut].t
    presses = sum(1 for e in inputs if e.pressed)
    print(f"gammonclock bus benchmark: {args.length}-point match, seed {match.seed}, "
          f"{presses} presses, {end / NS_PER_S / 60:.0f} min of play; two {args.driver} "
          f"panels on one emulated I²C bus (luma's i2c and smbus2, the ioctl emulated); "
          f"{MODES[args.stock]}; this machine's load average "
          f"{os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs")
    # Each clock press's CPU as the code costs it warm (bench_press_cpu.py's replays, of the
    # partial drivers: none for --stock, whose CPU is then all scaled as the code's).
    warm = ({} if args.stock else
            least_per_press_ms(match.seed, args.length, args.driver, args.warm_replays))
    with wired():
        for khz in (int(s) for s in args.speeds.split(",")):
            hz = khz * 1000
            print(f"\n{khz} kHz")
            rig = None
            here: Latencies | None = None
            split: list[tuple[float, float]] | None = None
            for machine in (HERE, pi):
                # The Pi model's threads burn their CPU × the factor that splits it as this
                # machine's run did: the code's own × factor, the wake-up surplus × cold factor.
                scale = 1.0 if split is None else machine.effective_factor(warm_share(split))
                rig = make_rig(hz, args.driver, args.stock, machine=machine, scale=scale)
                # The heap frozen as the service freezes it once READY (`settle_memory`): a full
                # collection on a press would scan what the device never scans.
                gc.collect()
                gc.freeze()
                started = time.perf_counter()
                lat = play_match(rig, match.rules, inputs, end, warm if split else None)
                took = time.perf_counter() - started
                gc.unfreeze()
                rig.close()
                if here is None:
                    split = warm_split(lat, warm)
                report(machine, lat, hz, took, here, split, scale)
                here = lat
            if not args.stock:
                for tenths in (False, True):
                    rate, busy, seconds = steady_bus_share(hz, args.driver, tenths)
                    label = "tenths showing  " if tenths else "minutes:seconds "
                    note = f"   target < {TARGET_BUSY_TENTHS:g} %" if tenths else ""
                    print(f"  bus, {label}: {rate:7.0f} B/s  {busy:5.2f} % busy "
                          f"(over {seconds:.0f} s){note}")
            if rig is not None and rig.writer is not None:
                print(f"  frames written {rig.writer.written}, superseded before sending "
                      f"{rig.writer.dropped} (the Pi model's run)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Benchmark: the CPU `gammonclock run` uses while a clock runs, on mock hardware.

Run it as a plain script from the repository root::

    python benchmarks/bench_cpu.py [--seconds 60]

It writes config/backgammon.toml with `pin_factory = "mock"` (gpiozero's MockFactory pins, luma
`dummy` panels) to a temp directory and starts `gammonclock run` on it as a child process, through
a small helper that wraps `device.build_device` so that, once the service loop runs, the left
button's mock pin is pressed and released: game 1 starts and the right player's clock runs. The
helper then leaves everything to `gammonclock run` itself (`cli.main(["run", …])`): the service
loop, its redraws of both panels as the digits change, the journal's checkpoints.

From the child's "clock running" line it waits a second, then measures the child's CPU time over
`--seconds` of wall time from /proc/<pid>/stat (utime + stime, whole process, in clock ticks) and
from /proc/<pid>/task/*/schedstat (nanoseconds on the CPU, summed over the threads alive at each
reading), and prints it as % of one core next to the target (under 2 %). At the end it stops the
child with SIGTERM and checks from the journal that the clock ran the whole time (its checkpoint
records). It asserts nothing. Linux only (/proc).

A child that does not say "clock running" within `--start-timeout` seconds (it failed, or hangs)
is killed, and what it wrote on stderr (a traceback) is printed; the exit status is then 1.
"""

from __future__ import annotations

import argparse
import os
import queue
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

try:
    import gammonclock  # noqa: F401
except ImportError:  # running from a checkout without the package installed
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "firmware"))

from gammonclock.journal.reader import read_journal
from gammonclock.journal.records import JOURNALS_DIR
from gammonclock.journal.replay import replay

ROOT = Path(__file__).resolve().parents[1]

TARGET_PERCENT = 2.0

# Runs in the child: `gammonclock run`, with the left button pressed once the loop has started.
HELPER = r"""
import os, sys, threading, time, traceback
import gammonclock.device.build as device_module
from gammonclock.cli import main as cli
from gammonclock.sides import Button

build = device_module.build_device

def build_and_press(*args, **kwargs):
    device = build(*args, **kwargs)

    def press():
        try:
            pin = device.factory.pin(device.config.button_pins[Button.LEFT])
            pin.drive_low()
            time.sleep(0.1)
            pin.drive_high()
        except BaseException:            # said, and the child ends: the parent must not wait
            traceback.print_exc()
            print("helper failed", flush=True)
            sys.stderr.flush()
            os._exit(1)
        print("clock running", flush=True)

    threading.Timer(0.5, press).start()
    return device

device_module.build_device = build_and_press
sys.exit(cli.main(["run", "--config", sys.argv[1], "--state-dir", sys.argv[2]]))
"""


def cpu_ticks(pid: int) -> int:
    """utime + stime of the whole process, in clock ticks."""
    stat = Path(f"/proc/{pid}/stat").read_text()
    fields = stat[stat.rindex(")") + 2:].split()
    return int(fields[11]) + int(fields[12])          # fields 14 and 15 of proc(5)


def cpu_ns(pid: int) -> int:
    """Nanoseconds on the CPU, summed over the process's threads (schedstat)."""
    total = 0
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            total += int((task / "schedstat").read_text().split()[0])
        except (OSError, ValueError, IndexError):
            pass                                          # a thread that just ended
    return total


def first_line(stream: Any, timeout: float) -> str | None:
    """The first line `stream` gives within `timeout` seconds ("" at its end), else None."""
    lines: queue.Queue[str] = queue.Queue()
    threading.Thread(target=lambda: lines.put(stream.readline()), daemon=True).start()
    try:
        return lines.get(timeout=timeout)
    except queue.Empty:
        return None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=60.0,
                        help="how long to measure while the clock runs (default 60)")
    parser.add_argument("--start-timeout", type=float, default=60.0,
                        help="how long to wait for the clock to run (default 60)")
    args = parser.parse_args(argv)
    if not Path("/proc/self/stat").exists():
        print("bench_cpu: needs Linux /proc", file=sys.stderr)
        return 1

    work = Path(tempfile.mkdtemp(prefix="gammonclock-bench-cpu-"))
    text = (ROOT / "config" / "backgammon.toml").read_text(encoding="utf-8")
    config = work / "mock.toml"
    config.write_text(text.replace('pin_factory = "lgpio"', 'pin_factory = "mock"'),
                      encoding="utf-8")
    state = work / "state"
    paths = [str(ROOT / "firmware"), *filter(None, [os.environ.get("PYTHONPATH")])]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(paths))
    child = subprocess.Popen([sys.executable, "-c", HELPER, str(config), str(state)],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    failure = None
    try:
        assert child.stdout is not None and child.stderr is not None
        line = first_line(child.stdout, args.start_timeout)
        if line is None or line.strip() != "clock running":
            failure = (f"did not say \"clock running\" within {args.start_timeout:g} s"
                       if line is None else f"said {line.strip()!r}" if line else "ended")
        else:
            start_ticks = cpu_ticks(child.pid)
            startup_s = start_ticks / os.sysconf("SC_CLK_TCK")
            time.sleep(1.0)                               # let the start-up settle
            ticks0, ns0, wall0 = cpu_ticks(child.pid), cpu_ns(child.pid), time.monotonic()
            time.sleep(args.seconds)
            ticks1, ns1, wall1 = cpu_ticks(child.pid), cpu_ns(child.pid), time.monotonic()
    finally:
        if child.poll() is None:
            child.send_signal(signal.SIGKILL if failure else signal.SIGTERM)
        try:
            child.wait(timeout=30)
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait()
        err = child.stderr.read() if child.stderr is not None else ""
    if failure is not None:
        print(f"bench_cpu: the child {failure} (exit {child.returncode}); its stderr:\n{err}",
              file=sys.stderr)
        shutil.rmtree(work, ignore_errors=True)
        return 1

    hz = os.sysconf("SC_CLK_TCK")
    wall = wall1 - wall0
    by_ticks = (ticks1 - ticks0) / hz
    by_ns = (ns1 - ns0) / 1e9
    journals = sorted((state / JOURNALS_DIR).glob("match-*.jsonl"))
    read = read_journal(journals[-1])
    final = replay(read).engine.state_json()
    ticks = [r for r in read.records if r.kind == "tick"]

    print(f"CPU of `gammonclock run` (mock pins, dummy panels) while right's clock runs, "
          f"{wall:.1f} s of wall time:")
    print(f"  /proc/<pid>/stat (utime+stime, {1000 // hz} ms ticks): {by_ticks:7.3f} s CPU = "
          f"{100 * by_ticks / wall:6.3f} % of one core   (target: under {TARGET_PERCENT:g} %)")
    print(f"  /proc/<pid>/task/*/schedstat (ns):         {by_ns:7.3f} s CPU = "
          f"{100 * by_ns / wall:6.3f} % of one core   (target: under {TARGET_PERCENT:g} %)")
    print(f"  start-up until the clock ran: {startup_s:.2f} s CPU "
          f"(interpreter, imports, device, journal)")
    print(f"  the child exited {child.returncode} on SIGTERM; its journal has "
          f"{len(read.records)} records ({len(ticks)} ticks: checkpoints and the stop); at the "
          f"end: phase {final['phase']}, running {final['running']}, right's reserve "
          f"{final['clock']['right']['reserve_ms'] / 1000:.1f} s")
    shutil.rmtree(work, ignore_errors=True)
    if child.returncode != 0:                 # the clock failed while measured: said, and not 0
        print(err, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""A table's health (issue 24; SPEC §14 `P/T/health`): what the director should know before a
clock fails mid-match. Under-voltage and throttling now and since boot, the CPU's temperature,
free space on the state folder's card and the journal's sync p99 over the last hour, whether the
wall clock is synchronised and by what, uptime, software version, and the journal backlog to the
hall.

Every figure is read through `System`, one small reader of files and commands: `HostSystem` is
the machine's, `FakeSystem` a table of recorded files and command outputs (the tests hold a Pi
3's, a Pi 4's and a Pi 5's). Nothing is invented: off a Pi the Pi-only figures (throttling,
temperature) are "not a Pi" (null in the message), and what cannot be read is "unknown" (null).

- Throttling: `/sys/devices/platform/soc/soc:firmware/get_throttled` (hex without `0x`, e.g.
  `50005`; the Raspberry Pi kernel's firmware driver), else the same file under another `soc…`
  node (a Pi 5's device tree names it `soc@107c000000`), else `vcgencmd get_throttled`
  (`throttled=0x50005`). Bits: 0 under-voltage now, 1 ARM frequency capped now, 2 throttled now,
  3 soft temperature limit now; 16–19 the same since boot.
- Temperature: `/sys/class/thermal/thermal_zone0/temp`, millidegrees Celsius (the SoC's sensor on
  a Pi; on another machine zone 0 may be anything, so it is not read there).
- Wall clock: `chronyc -n tracking` (chrony running: its reference and leap status), else
  `timedatectl show` (`NTPSynchronized`) with `timedatectl show-timesync` (`ServerName`) for
  systemd-timesyncd, else `/run/systemd/timesync/synchronized` (timesyncd touches it once
  synchronised), else unknown.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from gammonclock import __version__
from gammonclock.journal.fsync_times import SYNC_TIMES, SyncTimes

NOT_A_PI = "not a Pi"
UNKNOWN = "unknown"

MODEL_FILE = "/proc/device-tree/model"
THROTTLED_FILE = "/sys/devices/platform/soc/soc:firmware/get_throttled"
THROTTLED_GLOB = "/sys/devices/platform/soc*/soc*:firmware/get_throttled"
THERMAL_FILE = "/sys/class/thermal/thermal_zone0/temp"
TIMESYNC_FLAG = "/run/systemd/timesync/synchronized"
UPTIME_FILE = "/proc/uptime"
COMMAND_TIMEOUT_S = 2.0

# The throttling bits (vcgencmd's documentation): now, and since boot (the same << 16).
THROTTLE_BITS = {"under_voltage": 0, "freq_capped": 1, "throttled": 2, "soft_temp_limit": 3}
SINCE_BOOT_SHIFT = 16


class System(Protocol):
    """Where the figures come from: files and commands, each answer None when absent."""

    def read_text(self, path: str) -> str | None: ...
    def glob(self, pattern: str) -> list[str]: ...
    def run(self, argv: list[str]) -> str | None: ...
    def disk(self, path: str) -> tuple[int, int] | None: ...   # (free, total) bytes


class HostSystem:
    """This machine: files read small, commands run with a deadline and the C locale."""

    def read_text(self, path: str) -> str | None:
        try:
            with open(path, encoding="utf-8", errors="replace") as f:
                return f.read(4096)
        except OSError:
            return None

    def glob(self, pattern: str) -> list[str]:
        anchor, _, rest = pattern.lstrip("/").partition("/")
        return sorted(str(p) for p in Path("/" + anchor).glob(rest)) if rest else []

    def run(self, argv: list[str]) -> str | None:
        if shutil.which(argv[0]) is None:
            return None
        try:
            done = subprocess.run(argv, capture_output=True, text=True, timeout=COMMAND_TIMEOUT_S,
                                  env={**os.environ, "LC_ALL": "C"}, check=False)
        except (OSError, subprocess.SubprocessError):
            return None
        return done.stdout if done.returncode == 0 else None

    def disk(self, path: str) -> tuple[int, int] | None:
        try:
            st = os.statvfs(path)
        except OSError:
            return None
        return st.f_bavail * st.f_frsize, st.f_blocks * st.f_frsize


@dataclass
class FakeSystem:
    """Recorded files and command outputs (a command by its argv joined with spaces)."""

    files: Mapping[str, str] = field(default_factory=dict)
    commands: Mapping[str, str] = field(default_factory=dict)
    disks: Mapping[str, tuple[int, int]] = field(default_factory=dict)

    def read_text(self, path: str) -> str | None:
        return self.files.get(path)

    def glob(self, pattern: str) -> list[str]:
        regex = re.compile(re.escape(pattern).replace(r"\*", "[^/]*"))
        return sorted(p for p in self.files if regex.fullmatch(p))

    def run(self, argv: list[str]) -> str | None:
        return self.commands.get(" ".join(argv))

    def disk(self, path: str) -> tuple[int, int] | None:
        return self.disks.get(path)


@dataclass
class RecordingSystem:
    """Another system's answers, each also written under `folder` as tests/data/health keeps a
    board's (`files/` mirrors the paths read, `commands/` holds each command's output under its
    command line): `python -m gammonclock.runtime.health --record DIR` on a real Pi gives the
    tests that board's own sources. Nothing absent is written: an absent file stays absent."""

    inner: System
    folder: Path

    def read_text(self, path: str) -> str | None:
        text = self.inner.read_text(path)
        if text is not None:
            self._keep(self.folder / "files" / path.lstrip("/"), text)
        return text

    def glob(self, pattern: str) -> list[str]:
        return self.inner.glob(pattern)

    def run(self, argv: list[str]) -> str | None:
        out = self.inner.run(argv)
        if out is not None:
            self._keep(self.folder / "commands" / " ".join(argv), out)
        return out

    def disk(self, path: str) -> tuple[int, int] | None:
        return self.inner.disk(path)

    @staticmethod
    def _keep(path: Path, text: str) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


# --- the readers ----------------------------------------------------------------------------------

def pi_model(system: System) -> str | None:
    """The Pi's model ("Raspberry Pi 4 Model B Rev 1.4"), or None off a Pi."""
    text = system.read_text(MODEL_FILE)
    if text is None:
        return None
    model = text.replace("\0", "").strip()
    return model[:80] if model.startswith("Raspberry Pi") else None


@dataclass(frozen=True)
class Throttled:
    """The firmware's throttling word, decoded."""

    raw: int

    def now(self, name: str) -> bool:
        return bool(self.raw >> THROTTLE_BITS[name] & 1)

    def since_boot(self, name: str) -> bool:
        return bool(self.raw >> (THROTTLE_BITS[name] + SINCE_BOOT_SHIFT) & 1)

    def as_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"raw": f"0x{self.raw:x}"}
        for name in THROTTLE_BITS:
            out[name] = self.now(name)
            out[f"{name}_since_boot"] = self.since_boot(name)
        return out


def parse_throttled(text: str) -> Throttled | None:
    """`throttled=0x50005` (vcgencmd) or `50005` (sysfs, hex without 0x); None if neither."""
    value = text.strip().removeprefix("throttled=").strip()
    value = value[2:] if value.lower().startswith("0x") else value
    if not re.fullmatch(r"[0-9a-fA-F]{1,8}", value):
        return None
    return Throttled(int(value, 16))


def read_throttled(system: System) -> Throttled | None:
    """The throttling word from sysfs (the fixed path, else another soc node), else vcgencmd."""
    for path in (THROTTLED_FILE, *system.glob(THROTTLED_GLOB)):
        text = system.read_text(path)
        if text is not None:
            found = parse_throttled(text)
            if found is not None:
                return found
    text = system.run(["vcgencmd", "get_throttled"])
    return parse_throttled(text) if text is not None else None


def read_cpu_temp_c(system: System) -> float | None:
    """The SoC's temperature in °C (zone 0 in millidegrees), or None."""
    text = system.read_text(THERMAL_FILE)
    try:
        milli = int((text or "").strip())
    except ValueError:
        return None
    return round(milli / 1000, 1) if -50_000 <= milli <= 150_000 else None


@dataclass(frozen=True)
class Sync:
    """Whether the wall clock is synchronised (None: unknown) and by what."""

    synchronized: bool | None
    source: str | None

    def as_json(self) -> dict[str, Any]:
        return {"synchronized": self.synchronized, "source": self.source}


def _fields(text: str, sep: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for line in text.splitlines():
        key, found, value = line.partition(sep)
        if found:
            out[key.strip()] = value.strip()
    return out


def read_sync(system: System) -> Sync:
    """chrony, else systemd-timesyncd (timedatectl, else its flag file), else unknown."""
    tracking = system.run(["chronyc", "-n", "tracking"])
    if tracking is not None:
        fields = _fields(tracking, ":")
        leap, ref = fields.get("Leap status", ""), fields.get("Reference ID", "")
        if leap:
            server = re.search(r"\(([^)]*)\)", ref)
            name = server.group(1) if server and server.group(1) else None
            synced = leap != "Not synchronised" and not ref.startswith("00000000")
            return Sync(synced, f"chrony {name}"[:80] if name and synced else "chrony")
    show = system.run(["timedatectl", "show"])
    if show is not None:
        value = _fields(show, "=").get("NTPSynchronized")
        if value in ("yes", "no"):
            timesync = system.run(["timedatectl", "show-timesync"]) or ""
            fields = _fields(timesync, "=")
            host = fields.get("ServerName") or fields.get("ServerAddress")
            source = f"systemd-timesyncd {host}" if host else "systemd-timesyncd"
            return Sync(value == "yes", source[:80])
    if system.read_text(TIMESYNC_FLAG) is not None:
        return Sync(True, "systemd-timesyncd")
    return Sync(None, None)


def read_uptime_s(system: System) -> int | None:
    text = system.read_text(UPTIME_FILE)
    try:
        return int(float((text or "").split()[0]))
    except (ValueError, IndexError):
        return None


# --- the whole -----------------------------------------------------------------------------------

@dataclass(frozen=True)
class Backlog:
    """The journal's records the hall has not acknowledged: in the journal the hall link is on
    (None when that is not the one being written, whose end is cheap to know), and how many
    journals after it wait their turn."""

    records: int | None
    journals: int

    def as_json(self) -> dict[str, Any]:
        return {"records": self.records, "journals": self.journals}


@dataclass(frozen=True)
class Health:
    pi: str | None
    throttled: Throttled | None
    cpu_temp_c: float | None
    disk: tuple[int, int] | None
    # The journal's syncs (fdatasync: journal.fsync_times); named as the message's keys.
    fsync_p99_ms: float | None
    fsyncs_in_hour: int
    sync: Sync
    uptime_s: int | None
    version: str
    backlog: Backlog | None
    at: str | None = None

    def as_json(self) -> dict[str, Any]:
        """The `P/T/health` message (hall/PROTOCOL.md): what cannot be read is null."""
        return {
            "at": self.at,
            "pi": self.pi,
            "throttled": self.throttled.as_json() if self.throttled else None,
            "cpu_temp_c": self.cpu_temp_c,
            "disk": None if self.disk is None else {"free_bytes": self.disk[0],
                                                    "total_bytes": self.disk[1]},
            "fsync_p99_ms": self.fsync_p99_ms,
            "fsyncs_in_hour": self.fsyncs_in_hour,
            "clock": self.sync.as_json(),
            "uptime_s": self.uptime_s,
            "version": self.version,
            "hall_backlog": self.backlog.as_json() if self.backlog else None,
        }

    def lines(self) -> list[str]:
        """In words, for a person at the table (the log, `python -m gammonclock.runtime.health`)."""
        off = NOT_A_PI if self.pi is None else UNKNOWN
        t = self.throttled
        if t is None:
            supply = off
        else:
            now = [n.replace("_", " ") for n in THROTTLE_BITS if t.now(n)]
            before = [n.replace("_", " ") for n in THROTTLE_BITS if t.since_boot(n)]
            supply = (f"{t.as_json()['raw']}: now {', '.join(now) or 'fine'}; since boot "
                      f"{', '.join(before) or 'fine'}")
        disk = UNKNOWN if self.disk is None else \
            f"{self.disk[0] / 1e6:.0f} MB free of {self.disk[1] / 1e6:.0f} MB"
        synced = UNKNOWN if self.fsync_p99_ms is None else \
            f"{self.fsync_p99_ms:g} ms (p99 of {self.fsyncs_in_hour} in the last hour)"
        sync = {True: "synchronised", False: "NOT synchronised", None: UNKNOWN}[
            self.sync.synchronized] + (f" by {self.sync.source}" if self.sync.source else "")
        backlog = UNKNOWN if self.backlog is None else (
            f"{'?' if self.backlog.records is None else self.backlog.records} records, "
            f"{self.backlog.journals} journals after it")
        return [f"board: {self.pi or NOT_A_PI}", f"supply and throttling: {supply}",
                f"CPU temperature: {off if self.cpu_temp_c is None else f'{self.cpu_temp_c} °C'}",
                f"state card: {disk}", f"journal sync (fdatasync): {synced}", f"wall clock: {sync}",
                f"uptime: {UNKNOWN if self.uptime_s is None else f'{self.uptime_s} s'}",
                f"version: {self.version}", f"hall backlog: {backlog}"]


def read_health(system: System, state_dir: str | Path, *,
                sync_times: SyncTimes = SYNC_TIMES,
                backlog: Callable[[], Backlog | None] | None = None,
                at: str | None = None) -> Health:
    """Every figure now. Off a Pi throttling and temperature are not read (None: "not a Pi")."""
    pi = pi_model(system)
    return Health(
        pi=pi,
        throttled=read_throttled(system) if pi else None,
        cpu_temp_c=read_cpu_temp_c(system) if pi else None,
        disk=system.disk(str(state_dir)),
        fsync_p99_ms=sync_times.p99_ms(),
        fsyncs_in_hour=sync_times.in_the_hour(),
        sync=read_sync(system),
        uptime_s=read_uptime_s(system),
        version=__version__,
        backlog=backlog() if backlog is not None else None,
        at=at,
    )


USAGE = ("usage: python -m gammonclock.runtime.health [STATE_DIR] [--record DIR]   (--record: "
         "keep what was read under DIR, as tests/data/health keeps a board's)")


def main(argv: Sequence[str] | None = None) -> int:
    """This machine's health, in words; `--record DIR` keeps its sources too (a new board for
    the tests: copy DIR to tests/data/health/NAME)."""
    args = list(sys.argv[1:] if argv is None else argv)
    record = None
    if "--record" in args:
        at = args.index("--record")
        if at + 1 >= len(args):
            print(USAGE, file=sys.stderr)
            return 2
        record = Path(args.pop(at + 1))
        args.pop(at)
    if len(args) > 1 or any(a.startswith("-") for a in args):
        print(USAGE, file=sys.stderr)
        return 2
    state = args[0] if args else "/var/lib/gammonclock"
    system: System = HostSystem()
    if record is not None:
        system = RecordingSystem(system, record)
    started = time.monotonic()
    for line in read_health(system, state).lines():
        print(line)
    print(f"(read in {1000 * (time.monotonic() - started):.0f} ms)")
    if record is not None:
        print(f"recorded in {record}: copy it to tests/data/health/BOARD for the tests")
    return 0


if __name__ == "__main__":
    sys.exit(main())

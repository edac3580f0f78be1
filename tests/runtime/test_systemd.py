"""The clock under systemd (issue 9): sd_notify against a fake NOTIFY_SOCKET — READY once the
journal is recovered and the panels are up, WATCHDOG from the loop and none while it is blocked,
STOPPING on SIGTERM — the control socket in the runtime directory, a working directory the
clock never writes into, lgpio's real trouble named, and the unit's settings."""

from __future__ import annotations

import os
import signal
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from device_helpers import MOCK_TEXT, ROOT, start_run
from gammonclock.config.loading import parse_config
from gammonclock.config.schema import PIN_FACTORIES, PinFactory
from gammonclock.core.engine import ButtonEdge, Engine
from gammonclock.core.rules import MatchRules
from gammonclock.hardware.buttons import make_pin_factory
from gammonclock.hardware.errors import HardwareError
from gammonclock.journal.reader import read_journal
from gammonclock.journal.records import JOURNALS_DIR
from gammonclock.runtime import arbiter_socket
from gammonclock.runtime.arbiter_client import ask
from gammonclock.runtime.arbiter_socket import RUNTIME_DIR, asking_path, serving_path, socket_path
from gammonclock.runtime.sdnotify import Notifier
from gammonclock.runtime.service import ClockService
from gammonclock.runtime.session import Session
from gammonclock.sides import Button
from journal_helpers import journal_of_config, unknown_input_journal

MS = 1_000_000


class FakeSystemd:
    """systemd's side of the notify socket: a datagram socket that keeps what it is told."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.bind(str(path))
        self.sock.settimeout(0.05)

    def read(self, seconds: float) -> list[str]:
        """Every message that arrives within `seconds`."""
        got: list[str] = []
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            try:
                got.append(self.sock.recv(4096).decode())
            except TimeoutError:
                pass
        return got

    def count(self, key: str, enough: int, seconds: float) -> int:
        """How many messages holding `key` arrive, reading until `enough` have or `seconds`
        passed (a loaded machine may take longer than the interval says; never forever)."""
        seen = 0
        deadline = time.monotonic() + seconds
        while seen < enough and time.monotonic() < deadline:
            try:
                seen += key in self.sock.recv(4096).decode().split("\n")
            except TimeoutError:
                pass
        return seen

    def wait_for(self, key: str, seconds: float = 20) -> list[str]:
        """Messages up to and including the first holding `key` (e.g. "READY=1")."""
        got: list[str] = []
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            try:
                message = self.sock.recv(4096).decode()
            except TimeoutError:
                continue
            got.append(message)
            if key in message.split("\n"):
                return got
        pytest.fail(f"systemd was never told {key}; it was told {got}")

    def env(self, watchdog_s: float | None = None) -> dict[str, str]:
        env = {"NOTIFY_SOCKET": str(self.path)}
        if watchdog_s is not None:
            env["WATCHDOG_USEC"] = str(int(watchdog_s * 1e6))
        return env


@pytest.fixture
def systemd(tmp_path: Path) -> Iterator[FakeSystemd]:
    fake = FakeSystemd(tmp_path / "notify.sock")
    yield fake
    fake.sock.close()


# --- the notifier ----------------------------------------------------------------------------

def test_outside_systemd_the_notifier_does_nothing():
    notifier = Notifier({})
    assert not notifier.active and notifier.watchdog_ns is None
    notifier.ready()
    notifier.watchdog()
    notifier.stopping()


def test_the_notifier_speaks_the_protocol(systemd):
    notifier = Notifier(systemd.env(watchdog_s=2))
    assert notifier.watchdog_ns == 2_000_000_000
    notifier.ready("between_games")
    notifier.watchdog()
    notifier.status("paused")
    notifier.stopping()
    assert systemd.read(0.2) == ["READY=1\nSTATUS=between_games", "WATCHDOG=1", "STATUS=paused",
                                 "STOPPING=1"]


def test_an_abstract_notify_socket_is_reached():
    name = f"gammonclock-test-{os.getpid()}"
    server = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    server.bind("\0" + name)
    server.settimeout(2)
    try:
        Notifier({"NOTIFY_SOCKET": "@" + name}).ready()
        assert server.recv(100) == b"READY=1"
    finally:
        server.close()


@pytest.mark.parametrize(("env", "expected"), [
    ({"WATCHDOG_USEC": "10000000"}, 10_000_000_000),
    ({"WATCHDOG_USEC": "0"}, None),
    ({"WATCHDOG_USEC": "ten"}, None),
    ({"WATCHDOG_USEC": "10000000", "WATCHDOG_PID": "1"}, None),   # systemd watches another
    ({"WATCHDOG_USEC": "10000000", "WATCHDOG_PID": str(os.getpid())}, 10_000_000_000),
    ({}, None),
])
def test_the_watchdog_interval_is_for_this_process_only(env, expected):
    assert Notifier({"NOTIFY_SOCKET": "/nowhere", **env}).watchdog_ns == expected


def test_a_notify_socket_that_is_gone_is_logged_once_and_changes_nothing(tmp_path, caplog):
    notifier = Notifier({"NOTIFY_SOCKET": str(tmp_path / "gone.sock")})
    notifier.ready()
    notifier.watchdog()
    assert sum("cannot notify systemd" in r.getMessage() for r in caplog.records) == 1


# --- the loop's notifications ----------------------------------------------------------------

class Panels:
    """A presenter that records its frames and can be made to hang (a stuck I2C write)."""

    def __init__(self) -> None:
        self.frames = 0
        self.hang = threading.Event()
        self.hung = threading.Event()
        self.release = threading.Event()

    def present(self, engine: Engine, t: int, effects: list) -> int | None:
        self.frames += 1
        if self.hang.is_set() and effects:
            self.hung.set()
            self.release.wait(5)
        return None

    def close(self) -> None:
        pass


def test_the_loop_is_ready_after_its_first_frame_and_pings_only_while_it_runs(systemd):
    panels = Panels()
    session = Session(Engine.start(MatchRules.defaults("backgammon", 7), at=0))
    service = ClockService(session, [panels], origin=time.monotonic_ns(),
                           notifier=Notifier(systemd.env(watchdog_s=0.2)))
    worker = threading.Thread(target=service.run, daemon=True)
    worker.start()
    try:
        told = systemd.wait_for("READY=1", 5)
        assert panels.frames >= 1                        # the panels were up before READY
        assert told[-1].startswith("READY=1\nSTATUS=between_games")
        assert systemd.count("WATCHDOG=1", 3, 2.0) >= 3   # every 0.1 s (2 s: a loaded CI)
        # A loop stuck in a panel write stops the pings: systemd's watchdog can see it.
        panels.hang.set()
        service.submit(ButtonEdge(time.monotonic_ns(), Button.LEFT, True))
        assert panels.hung.wait(5)
        systemd.read(0.05)                               # a ping sent just before the hang
        assert systemd.read(0.6) == []
        panels.release.set()
        assert "WATCHDOG=1" in systemd.read(0.5)         # and they come back with the loop
    finally:
        panels.release.set()
        service.stop()
        worker.join(5)


# --- gammonclock run under a fake systemd ----------------------------------------------------

def test_run_is_ready_after_recovery_pings_from_its_loop_and_stops_cleanly(tmp_path, systemd,
                                                                          processes):
    runtime = tmp_path / "run"
    runtime.mkdir()
    workdir = tmp_path / "cwd"        # the unit's working directory: the clock writes nothing there
    workdir.mkdir()
    # An unfinished match of this config: the start recovers it (right's clock runs, so the
    # recovery pauses it) before it may say READY.
    journal = journal_of_config(tmp_path / "state", parse_config(MOCK_TEXT, "mock.toml"))
    recorded = len(read_journal(journal).records)
    env = {**systemd.env(watchdog_s=0.4), "RUNTIME_DIRECTORY": str(runtime)}
    proc = start_run(tmp_path, processes, env, workdir)
    told = systemd.wait_for("READY=1")
    records = read_journal(journal).records      # read at once: what was there at READY
    # READY came after the journal was recovered and the socket opened.
    assert told[0].startswith("READY=1\nSTATUS=paused, "), told
    assert records[0].kind == "header" and len(records) > recorded
    assert records[-1].kind == "input"
    assert records[-1].data["input"]["type"] == "recover"
    assert list((tmp_path / "state" / JOURNALS_DIR).glob("match-*.jsonl")) == [journal]
    assert socket_path(runtime).exists()                   # in the runtime directory
    assert not socket_path(tmp_path / "state").exists()
    assert systemd.read(0.8).count("WATCHDOG=1") >= 2
    answer = ask(socket_path(runtime), ["status"])
    assert answer["ok"] is True
    proc.send_signal(signal.SIGTERM)
    told = systemd.wait_for("STOPPING=1")
    assert "READY=1" not in told
    _, err = proc.communicate(timeout=10)
    assert proc.returncode == 0, err
    assert read_journal(journal).last.kind == "tick"          # the stop's instant, journaled
    assert not socket_path(runtime).exists()
    assert list(workdir.iterdir()) == []


def test_a_refused_start_is_ready_with_its_reason_and_waits_fed_to_the_watchdog(
        tmp_path, systemd, processes):
    # A journal of this config that this firmware cannot understand (an input it does not know).
    unknown_input_journal(tmp_path / "state", parse_config(MOCK_TEXT, "mock.toml"))
    proc = start_run(tmp_path, processes, systemd.env(watchdog_s=0.4), tmp_path)
    told = systemd.wait_for("READY=1")
    assert any("STATUS=refused to start" in m for m in told)
    assert systemd.read(0.8).count("WATCHDOG=1") >= 2       # not restarted by the watchdog
    proc.send_signal(signal.SIGTERM)
    systemd.wait_for("STOPPING=1")
    _, err = proc.communicate(timeout=10)
    assert proc.returncode == 1
    assert "chord" in err


# --- where the arbiter's socket is -----------------------------------------------------------

def test_the_client_asks_where_it_is_told_then_where_the_service_serves(tmp_path, monkeypatch):
    monkeypatch.delenv("RUNTIME_DIRECTORY", raising=False)
    # A simulator killed without its clean-up left its socket file: nobody answers there.
    stale = tmp_path / "simulator" / "arbiter.sock"
    stale.parent.mkdir()
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as dead:
        dead.bind(str(stale))
    monkeypatch.setattr(arbiter_socket, "simulator_socket_path", lambda: stale)
    assert asking_path(tmp_path, "/var/lib/gammonclock") == tmp_path / "arbiter.sock"
    expected = (Path(RUNTIME_DIR) / "arbiter.sock" if (Path(RUNTIME_DIR) / "arbiter.sock").exists()
                else Path("/var/lib/gammonclock/arbiter.sock"))
    assert asking_path(None, "/var/lib/gammonclock") == expected
    monkeypatch.setenv("RUNTIME_DIRECTORY", str(tmp_path / "run"))
    assert asking_path(None, "/var/lib/gammonclock") == tmp_path / "run" / "arbiter.sock"
    assert serving_path(tmp_path / "state") == tmp_path / "run" / "arbiter.sock"
    monkeypatch.delenv("RUNTIME_DIRECTORY")
    assert serving_path(tmp_path / "state") == tmp_path / "state" / "arbiter.sock"


# --- a backend that is installed but fails to start --------------------------------------------

class BrokenFactory:
    """Stands in for lgpio on a Pi where the clock started in a folder it cannot write."""

    def __init__(self) -> None:
        raise OSError("xCreatePipe: Can't set permissions (0664) for //.lgd-nfy0")


def test_a_backend_that_is_there_but_fails_says_what_usually_causes_it(monkeypatch):
    lgpio = PIN_FACTORIES["lgpio"]
    monkeypatch.setitem(PIN_FACTORIES, "lgpio",
                        PinFactory("test_systemd.BrokenFactory", lgpio.hint, lgpio.running_hint))
    with pytest.raises(HardwareError) as error:
        make_pin_factory("lgpio")
    message = str(error.value)
    assert ".lgd-nfy0" in message and "LG_WD" in message and "gpio group" in message
    assert "apt install" not in message                 # installing is not the cure here


# --- the unit -------------------------------------------------------------------------------

def unit_settings() -> dict[str, list[str]]:
    settings: dict[str, list[str]] = {}
    for line in (ROOT / "systemd" / "gammonclock.service").read_text().splitlines():
        if "=" in line and not line.startswith(("#", "[")):
            key, value = line.split("=", 1)
            settings.setdefault(key, []).append(value)
    return settings


@pytest.mark.parametrize(("key", "value"), [
    ("Type", "notify"), ("NotifyAccess", "main"), ("WatchdogSec", "10"),
    ("Restart", "always"), ("StartLimitIntervalSec", "0"),
    ("RuntimeDirectory", "gammonclock"), ("WorkingDirectory", "/run/gammonclock"),
    ("Environment", "LG_WD=/run/gammonclock"), ("StateDirectory", "gammonclock"),
    ("Environment", "GAMMONCLOCK_STATE_DIR=/var/lib/gammonclock"), ("UMask", "0027"),
    ("CapabilityBoundingSet", ""), ("DevicePolicy", "closed"), ("ProtectSystem", "strict"),
])
def test_the_unit_says(key, value):
    assert value in unit_settings().get(key, []), f"{key}={value}"


def test_the_units_stop_time_leaves_room_for_the_drain():
    assert int(unit_settings()["TimeoutStopSec"][0]) >= 10
    assert "MemoryDenyWriteExecute" not in unit_settings()


def test_a_long_step_of_chattering_edges_still_pings_the_watchdog(systemd):
    """Progress is not a hang: a backlog of edges, each journaled slowly (an SD card), is
    applied in one step of the loop, and the pings go on between them."""
    now = time.monotonic_ns()
    session = Session(Engine.start(MatchRules.defaults("backgammon", 7), at=0))
    feed = session.feed

    def slow_feed(event: Any) -> Any:
        time.sleep(0.01)                # a slow write per input
        return feed(event)
    session.feed = slow_feed            # type: ignore[method-assign]
    origin = now - 5 * 10**9            # the edges all lie in the past: every one is due
    service = ClockService(session, [Panels()], origin=origin,
                           notifier=Notifier(systemd.env(watchdog_s=0.1)))
    for n in range(100):                # a chattering pin: 100 edges, 1 s of work
        service.submit(ButtonEdge(origin + n * 40 * MS, Button.CUBE, n % 2 == 0))
    service._ping_if_due()
    told: list[str] = []
    reader = threading.Thread(target=lambda: told.extend(systemd.read(2.0)))
    reader.start()
    started = time.monotonic()
    service.step()                      # one step applies them all
    assert time.monotonic() - started >= 0.9
    reader.join()
    assert told.count("WATCHDOG=1") >= 10


def test_a_notify_socket_nobody_reads_never_blocks_the_loop(systemd):
    notifier = Notifier(systemd.env(watchdog_s=1))
    started = time.monotonic()
    for _ in range(1000):               # far more than the socket's queue holds
        notifier.watchdog()
    assert time.monotonic() - started < 5


def test_a_login_that_may_not_use_the_socket_is_told_so(monkeypatch, capsys, tmp_path):
    import gammonclock.runtime.arbiter_client as arbiter_client
    from gammonclock.cli.main import main

    def not_allowed(*_: object, **__: object) -> dict[str, object]:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(arbiter_client, "ask", not_allowed)
    assert main(["arbiter", "--state-dir", str(tmp_path), "status"]) == 5
    err = capsys.readouterr().err
    assert "permission denied" in err and "--arbiter" in err and "no clock answers" not in err


def test_a_runtime_directory_this_login_may_not_look_into_is_still_where_it_asks(monkeypatch):
    monkeypatch.delenv("RUNTIME_DIRECTORY", raising=False)

    def forbidden(self: Path) -> bool:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(Path, "exists", forbidden)
    assert asking_path(None, "/var/lib/gammonclock") == Path(RUNTIME_DIR) / "arbiter.sock"


def test_the_units_filter_lets_chown_through_and_fails_calls_rather_than_killing():
    settings = unit_settings()
    assert "@chown" in settings["SystemCallFilter"]
    assert settings["SystemCallErrorNumber"] == ["EPERM"]

"""Helpers for tests that run the whole clock: the reference config on mock hardware, and
`gammonclock run` as a real process."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
REFERENCE_CONFIG = ROOT / "config" / "backgammon.toml"


def mock_config_text(*replacements: tuple[str, str]) -> str:
    """The reference config (every device key) on mock pins and dummy panels."""
    text = REFERENCE_CONFIG.read_text(encoding="utf-8")
    for old, new in (('pin_factory = "lgpio"', 'pin_factory = "mock"'), *replacements):
        assert old in text, old
        text = text.replace(old, new)
    return text


MOCK_TEXT = mock_config_text()


def gammonclock(*args: str) -> list[str]:
    """The command line of `gammonclock ARGS…` with this interpreter."""
    return [sys.executable, "-m", "gammonclock", *args]


def handles_sigterm(pid: int) -> bool:
    """Whether the process has installed its SIGTERM handler (Linux: /proc/<pid>/status)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    for line in status.splitlines():
        if line.startswith("SigCgt:"):
            return bool(int(line.split()[1], 16) >> (signal.SIGTERM - 1) & 1)
    return False


def start_run(tmp_path: Path, processes: list[subprocess.Popen[str]],
              env: dict[str, str] | None = None, cwd: Path | None = None,
              config_text: str = MOCK_TEXT) -> subprocess.Popen[str]:
    """`gammonclock run` as a process, on tmp_path/mock.toml (`config_text`) and the state
    folder tmp_path/state, with `env` added to this process's environment; its stdout and stderr
    are pipes. It goes into `processes` (the conftest fixture kills it if the test does not stop
    it)."""
    config = tmp_path / "mock.toml"
    config.write_text(config_text, encoding="utf-8")
    proc = subprocess.Popen(gammonclock("run", "--config", str(config), "--state-dir",
                                        str(tmp_path / "state")),
                            env={**os.environ, **(env or {})}, cwd=cwd,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    processes.append(proc)
    return proc


def wait_until_running(proc: subprocess.Popen[str], ready: Callable[[], bool] = lambda: True,
                       what: str = "gammonclock run did not start", timeout_s: float = 15
                       ) -> None:
    """Wait until `proc` handles SIGTERM (a stop now is a clean one) and `ready()` holds; fail
    with its stderr if it exits first, with `what` if it takes longer than `timeout_s`."""
    deadline = time.monotonic() + timeout_s
    while not (handles_sigterm(proc.pid) and ready()):
        if proc.poll() is not None:
            pytest.fail(f"gammonclock run exited {proc.returncode}: {proc.communicate()[1]}")
        assert time.monotonic() < deadline, what
        time.sleep(0.01)


@contextlib.contextmanager
def running_device(text: str, state: Path) -> Iterator[tuple[Any, Path]]:
    """A device built from config TEXT on mock hardware whose service runs on a thread (its own
    socket, default limits), and its state directory; stopped and closed at the end."""
    import threading

    from gammonclock.config.loading import parse_config
    from gammonclock.device.build import build_device

    device = build_device(parse_config(text, "mock.toml"), state)
    worker = threading.Thread(target=device.service.run, daemon=True)
    worker.start()
    try:
        yield device, state
    finally:
        device.service.stop()
        worker.join(timeout=5)
        device.close()


def reply_line(conn: socket.socket) -> bytes:
    """What the arbiter's socket sends on `conn`, up to its newline (or the end)."""
    data = b""
    while not data.endswith(b"\n"):
        chunk = conn.recv(65536)
        if not chunk:
            break
        data += chunk
    return data


def start_game_one(service: Any) -> None:
    """Left's tap starts game 1 (right's clock runs); wait, bounded, until the status says so."""
    from gammonclock.core.engine import ButtonEdge
    from gammonclock.sides import Button

    now = service.clock_ns()
    service.submit(ButtonEdge(now, Button.LEFT, True))
    service.submit(ButtonEdge(now + 100_000_000, Button.LEFT, False))
    deadline = time.monotonic() + 5
    while service.status()["running"] != "right":
        assert time.monotonic() < deadline, "game 1 did not start: right's clock is not running"
        time.sleep(0.01)

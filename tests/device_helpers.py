"""Helpers for tests that run the whole clock: the reference config on mock hardware, and
`gammonclock run` as a real process."""

from __future__ import annotations

import signal
import sys
from pathlib import Path

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

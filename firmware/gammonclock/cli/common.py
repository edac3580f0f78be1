"""What every command shares: its exit statuses, how it fails (a clear line on stderr), the
state folder it works on, and how a match's account and state are printed."""

from __future__ import annotations

import argparse
import json
import os
import sys

from gammonclock.config.loading import DeviceConfig
from gammonclock.core.effects import Effect
from gammonclock.core.engine import Engine
from gammonclock.sim.simulate import account_line

EXIT_BAD_INPUT = 2

EXIT_LOOP_FAILED = 70      # EX_SOFTWARE: the clock's loop met a bug; systemd starts it again

DEFAULT_STATE_DIR = "/var/lib/gammonclock"

def fail(message: object, status: int = EXIT_BAD_INPUT) -> int:
    print(f"gammonclock: {message}", file=sys.stderr)
    return status

def state_dir_of(args: argparse.Namespace, device: DeviceConfig | None = None) -> str:
    """--state-dir, else $GAMMONCLOCK_STATE_DIR, else the config's (or the default)."""
    if getattr(args, "state_dir", None):
        return str(args.state_dir)
    if os.environ.get("GAMMONCLOCK_STATE_DIR"):
        return os.environ["GAMMONCLOCK_STATE_DIR"]
    return device.state_dir if device is not None else DEFAULT_STATE_DIR


def print_account(engine: Engine, effects: list[Effect]) -> None:
    for effect in effects:
        print(account_line(engine, effect))

def print_state(engine: Engine, compact: bool) -> None:
    print(json.dumps(engine.state_json(), indent=None if compact else 2))

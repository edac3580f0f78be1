"""Which device key `gammonclock export` checks a journal's seals with, when it is not told.

On the device the arbiter types `gammonclock export --latest --format html --out r.html`: the
state folder is then, in this order, `$GAMMONCLOCK_STATE_DIR`, the `journal.state_dir` of
`/etc/gammonclock/device.toml` when that file is there and readable, else the default
`/var/lib/gammonclock`. The key is that folder's `device.key`. Whichever key is used, or why none
was, is said: a report whose seals were not checked says so plainly, and why.

`gammonclock verify` finds its key the same way. A key that did not seal the journal (its key id
is not the header's: a journal made on another table, exported here) gives the verdict "sealed by
another device (key id …)": its chain is checked, not its seals (`journal.verify`).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from gammonclock.config.loading import ConfigError, load_device_config
from gammonclock.config.problems import Problem, Told, message_of
from gammonclock.journal.key import SECRET_FILE, KeyRefused, key_id, read_key
from gammonclock.journal.records import JournalError

from .text import NO_KEY_GIVEN

DEVICE_CONFIG = Path("/etc/gammonclock/device.toml")
DEFAULT_STATE_DIR = "/var/lib/gammonclock"
STATE_DIR_VARIABLE = "GAMMONCLOCK_STATE_DIR"


@dataclass(frozen=True)
class KeyChoice:
    state_dir: str           # where the journals are (for --latest) and the key was looked for
    origin: str              # how that folder was chosen: "--state-dir", "$GAMMONCLOCK_STATE_DIR" …
    key: bytes | None
    said: str                # for the user: the key used, or why there is none
    no_check: str            # for the report when there is no key: "no device key given (…)"
    notes: tuple[str, ...] = ()   # what else the user should know (a device config not read)


def state_folder(given: str | Path | None, env: Mapping[str, str] | None = None,
                 device_config: Path | None = None) -> tuple[str, str, tuple[str, ...]]:
    """(folder, how it was chosen, notes): see the module's docstring for the order."""
    env = os.environ if env is None else env
    device_config = DEVICE_CONFIG if device_config is None else device_config
    if given:
        return str(given), "--state-dir", ()
    if env.get(STATE_DIR_VARIABLE):
        return env[STATE_DIR_VARIABLE], f"${STATE_DIR_VARIABLE}", ()
    default = Problem("keys.origin.default")
    if device_config.is_file() and os.access(device_config, os.R_OK):
        try:
            device = load_device_config(device_config).device
        except ConfigError as exc:
            first = Told(str(exc).splitlines()[0], _first_line_of(exc))
            return DEFAULT_STATE_DIR, default, (
                Problem("keys.not_read", path=device_config, error=first),)
        return device.state_dir, Problem("keys.origin.device", path=device_config), ()
    return DEFAULT_STATE_DIR, default, ()


def _first_line_of(exc: ConfigError) -> Callable[[str], str]:
    """A ConfigError's first problem, said in any language."""
    return lambda lang: exc.said(lang).splitlines()[0]


def choose_key(given: str | Path | None, env: Mapping[str, str] | None = None,
               device_config: Path | None = None) -> KeyChoice:
    """The state folder and the device key in it, and what to tell the user about them."""
    folder, origin, notes = state_folder(given, env, device_config)
    path = Path(folder) / SECRET_FILE
    try:
        key = read_key(folder)
    except KeyRefused as exc:
        return KeyChoice(folder, origin, None, Problem("keys.refused", error=message_of(exc)),
                         Problem("v.key_unusable", path=path), notes)
    except JournalError:
        why = Problem("v.key.absent" if not os.path.lexists(path)
                      else "v.key.not_for_user" if not os.access(path, os.R_OK)
                      else "v.key.unreadable")
        return KeyChoice(folder, origin, None,
                         Problem("keys.none", path=path, origin=origin, why=why),
                         Problem("v.no_key_at", path=path, why=why), notes)
    return KeyChoice(folder, origin, key, Problem("keys.used", path=path, origin=origin,
                                                  key_id=key_id(key)),
                     NO_KEY_GIVEN, notes)

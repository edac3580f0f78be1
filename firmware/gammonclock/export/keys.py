"""Which device key `gammonclock export` checks a journal's seals with, when it is not told.

On the device the arbiter types `gammonclock export --latest --format html --out r.html`: the
state folder is then, in this order, `$GAMMONCLOCK_STATE_DIR`, the `journal.state_dir` of
`/etc/gammonclock/device.toml` when that file is there and readable, else the default
`/var/lib/gammonclock`. The key is that folder's `device.key`. Whichever key is used, or why none
was, is said: a report whose seals were not checked says so plainly, and why.

A key found by itself that did not seal the journal (its key id is not the header's: a journal
made on another table, exported here) is not used: the report would read "TAMPERED" for a journal
that is only foreign. A key named with `--state-dir` is always used, as `gammonclock verify` does.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path

from ..config import ConfigError, load_device_config
from ..journal import SECRET_FILE, JournalError, KeyRefused, key_id, read_key
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
    if device_config.is_file() and os.access(device_config, os.R_OK):
        try:
            device = load_device_config(device_config).device
        except ConfigError as exc:
            first = str(exc).splitlines()[0]
            return DEFAULT_STATE_DIR, "the default", (
                f"{device_config} was not read for its state folder ({first})",)
        return device.state_dir, f"the journal.state_dir of {device_config}", ()
    return DEFAULT_STATE_DIR, "the default", ()


def choose_key(given: str | Path | None, env: Mapping[str, str] | None = None,
               device_config: Path | None = None) -> KeyChoice:
    """The state folder and the device key in it, and what to tell the user about them."""
    folder, origin, notes = state_folder(given, env, device_config)
    path = Path(folder) / SECRET_FILE
    try:
        key = read_key(folder)
    except KeyRefused as exc:
        return KeyChoice(folder, origin, None, f"seals not checked: {exc}",
                         f"the device key {path} is not usable", notes)
    except JournalError:
        why = ("not there" if not os.path.lexists(path)
               else "not readable by this user" if not os.access(path, os.R_OK)
               else "not readable")
        return KeyChoice(folder, origin, None,
                         f"seals not checked: no device key found ({path} from {origin}: {why})",
                         f"{NO_KEY_GIVEN} ({path} is {why})", notes)
    return KeyChoice(folder, origin, key, f"seals checked with the device key {path} "
                                          f"(from {origin})", NO_KEY_GIVEN, notes)


def header_key_id(journal: str | Path) -> str | None:
    """The key id a journal's header names; None when it cannot be read here (the export then
    says what is wrong with the journal)."""
    try:
        with open(journal, "rb") as f:
            found = json.loads(f.readline())["data"].get("key_id")
    except (OSError, ValueError, RecursionError, KeyError, TypeError, AttributeError):
        return None
    return found if isinstance(found, str) else None


def for_journal(choice: KeyChoice, journal: str | Path) -> KeyChoice:
    """`choice`, less a key found by itself that did not seal `journal` (see the docstring)."""
    if choice.key is None or choice.origin == "--state-dir":
        return choice
    sealed_with, this = header_key_id(journal), key_id(choice.key)
    if sealed_with is None or sealed_with == this:
        return choice
    path = Path(choice.state_dir) / SECRET_FILE
    why = (f"the device key here ({path}, key id {this}) did not seal this journal (key id "
           f"{sealed_with}): it was made on another device")
    return replace(choice, key=None, said=f"seals not checked: {why}",
                   no_check=f"{NO_KEY_GIVEN} for it; {why}")

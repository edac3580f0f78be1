"""A provisioning stick (issue 32, docs/decisions.md "A provisioning stick"): the table a clock
is and the hall it joins, from `gammonclock hall provision` (hall/README.md, the venue's layout).

    found = read_provision(Path("/run/gammonclock/usb/sda1"))   # None: not a provisioning stick
    done = take_provision(state_dir, found, key_now)              # the state folder's new set
    return_key(stick, table_id, key)                              # the clock's key for the hall

The stick's `gammonclock/provision/` holds `device.toml` (only `[table]` and `[hall]`), the
account's password and the venue's CA next to it (named by `hall.password_file`/`ca_file`), and
the table's `device.key` made at the hall. SPEC §14.1: the stick carries files, not authority.
Who makes it count is decided by the clock (`stick_handler`): a clock with no arbiter's PIN
takes it at once, one with a PIN offers it for the arbiter's menu after the PIN, and none takes
it in the middle of a match.

Everything of the stick is read once, whole, into memory, before anything on the clock
changes: a plain file (never a link, a pipe or a device), on the stick's own file system, of a
bounded size, in the provision folder itself (its names are plain names, never a path). A
stick pulled out mid-read is a refusal, the clock's files untouched. Taking it writes a new
folder in the state folder (`provisioned-DIGEST`), fsynced, and then points `STATE/provisioned`
at it by renaming a new link over the old one: the old set or the new one, whole, never a mix.

The device key: adopted from the stick only when this clock has sealed no journal with its own
(`sealed_journals`); otherwise it keeps its own (every journal it wrote verifies with it) and
gives a copy back on the stick, `returned.key` and `returned.table`, for the hall's
`provision --collect`. A stick with a bad key file is refused whole.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import logging
import os
import secrets
import stat
import time
from dataclasses import dataclass
from enum import Enum
from pathlib import Path

from gammonclock.config.loading import (
    PROVISIONED,
    PROVISIONED_FILE,
    ConfigError,
    provisioned,
)
from gammonclock.config.problems import Problem, Told
from gammonclock.errors import GammonclockError
from gammonclock.journal.durable import fsync_dir, write_all
from gammonclock.journal.key import KeyRefused, key_id, key_in_bytes, key_text, replace_key
from gammonclock.journal.reader import read_header
from gammonclock.journal.records import JOURNALS_DIR, JournalError
from gammonclock.wire import BrokerURL, BrokerURLError

from .usb_stick import STICK_DIR, StickFileRefused, our_folder, plain_file_on_stick

log = logging.getLogger(__name__)

PROVISION_DIR = "provision"                 # gammonclock/provision/ on the stick
KEY_FILE = "device.key"
RETURNED_KEY = "returned.key"
RETURNED_TABLE = "returned.table"
MAX_DEVICE_FILE = 4 * 1024                  # two short sections
MAX_PASSWORD = 1024
MAX_CA = 64 * 1024                          # a CA certificate or two, PEM
MAX_KEY = 4096                              # journal/key.py's limit
RECORD = "provision.json"                   # in the provisioned folder: when, how, the key
RETURN_PENDING = "return-key"               # the kept key still to give back on this stick
SET_PREFIX = "provisioned-"


class ProvisionRefused(GammonclockError):
    """A provisioning stick that cannot be taken; the message (a Problem) names the file, and
    the key, and says why. Nothing on the clock changed."""


class KeyFate(str, Enum):
    """What became of the device key when a stick was taken."""

    ADOPTED = "adopted"          # the stick's key is this clock's now (it had sealed nothing)
    KEPT = "kept"                # the clock's own key stays; a copy goes back to the hall


@dataclass(frozen=True)
class StickProvision:
    """A provisioning stick's files as read (whole, checked) and what they say."""

    text: str                           # device.toml
    files: tuple[tuple[str, bytes], ...]   # the password and the CA, by their names
    key: bytes | None                   # the stick's device key (None: the stick has none)
    table: str
    event: str
    broker: str
    username: str
    digest: str                         # of all of it: the same stick twice is one

    @property
    def host(self) -> str:
        """The broker's host, for the panels."""
        try:
            return BrokerURL.parse(self.broker).host
        except BrokerURLError:
            return self.broker

    def describe(self) -> str:
        return f"table {self.table} on {self.broker} as {self.username}"


@dataclass(frozen=True)
class Taken:
    """A stick taken: the table it made this clock, and the key's fate."""

    table: str
    key: KeyFate
    folder: Path


# --- reading the stick ----------------------------------------------------------------------------

def read_provision(stick: Path) -> StickProvision | None:
    """The provisioning stick's set (None: the stick has no `gammonclock/provision/device.toml`).
    Raises ProvisionRefused naming the file (and the key) for anything that may not be taken."""
    with our_folder(stick) as opened:
        if opened is None:
            return None
        mine, device = opened
        folder = _open_folder(mine, stick / STICK_DIR / PROVISION_DIR, device)
        if folder is None:
            return None
        try:
            return _read_set(folder, stick / STICK_DIR / PROVISION_DIR, device)
        finally:
            os.close(folder)


def _open_folder(parent: int, where: Path, device: int) -> int | None:
    try:
        if stat.S_ISLNK(os.lstat(PROVISION_DIR, dir_fd=parent).st_mode):
            raise ProvisionRefused(Problem("prov.unreadable", path=where, why=Problem(
                "usb.folder_link", dir=f"{STICK_DIR}/{PROVISION_DIR}")))
        folder = os.open(PROVISION_DIR, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW,
                         dir_fd=parent)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as exc:
        why = Problem("usb.folder_link", dir=f"{STICK_DIR}/{PROVISION_DIR}") \
            if exc.errno == errno.ELOOP else exc.strerror or str(exc)
        raise ProvisionRefused(Problem("prov.unreadable", path=where, why=why)) from None
    if os.fstat(folder).st_dev != device:
        os.close(folder)
        raise ProvisionRefused(Problem("prov.unreadable", path=where, why=Problem(
            "usb.folder_elsewhere", dir=f"{STICK_DIR}/{PROVISION_DIR}")))
    return folder


def _read_set(folder: int, where: Path, device: int) -> StickProvision | None:
    blob = _read_file(folder, where, PROVISIONED_FILE, device, MAX_DEVICE_FILE, missing=True)
    if blob is None:
        return None
    path = where / PROVISIONED_FILE
    try:
        text = blob.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError as exc:
        raise ProvisionRefused(Problem("prov.config", error=Problem(
            "usb.not_utf8", path=path, byte=exc.start))) from None
    try:
        tables = provisioned(text, str(path), Path("."))
    except ConfigError as exc:
        raise ProvisionRefused(Problem("prov.config", error=Told(str(exc), exc.said))) from None
    hall = tables["hall"]
    files = []
    for key, limit in (("password_file", MAX_PASSWORD), ("ca_file", MAX_CA)):
        if key in hall:
            name = Path(hall[key]).name
            data = _read_file(folder, where, name, device, limit)
            assert data is not None
            files.append((name, data))
    key_blob = _read_file(folder, where, KEY_FILE, device, MAX_KEY, missing=True)
    stick_key = None
    if key_blob is not None:
        try:
            stick_key = key_in_bytes(key_blob, str(where / KEY_FILE),
                                     "nothing of the stick was taken")
        except KeyRefused as exc:
            raise ProvisionRefused(Problem("prov.bad_key", path=where / KEY_FILE,
                                           why=str(exc).split(": the device key ", 1)[-1])
                                   ) from None
    digest = hashlib.sha256()
    for name, data in ((PROVISIONED_FILE, text.encode()), *files,
                       (KEY_FILE, b"" if stick_key is None else stick_key)):
        digest.update(f"{name}\0{len(data)}\0".encode() + data)
    table = tables["table"]
    return StickProvision(text, tuple(files), stick_key, table["id"], table.get("event", ""),
                          hall["broker"], hall.get("username", table["id"]),
                          digest.hexdigest())


def _read_file(folder: int, where: Path, name: str, device: int, limit: int,
               missing: bool = False) -> bytes | None:
    """A plain file of the provision folder, whole, at most `limit` bytes; None when it is not
    there and may be `missing`."""
    path = where / name
    try:
        blob = plain_file_on_stick(folder, name, device, limit)
    except FileNotFoundError:
        if missing:
            return None
        raise ProvisionRefused(Problem("prov.missing", path=path)) from None
    except StickFileRefused as refused:
        raise ProvisionRefused(Problem("prov.not_plain", path=path) if not refused.plain
                               else Problem("prov.unreadable", path=path, why=refused.why)
                               ) from None
    if len(blob) > limit:
        raise ProvisionRefused(Problem("prov.too_large", path=path, bytes=limit))
    return blob


# --- the clock's side -----------------------------------------------------------------------------

def sealed_journals(state_dir: str | Path, key: bytes | None) -> bool:
    """Whether a journal in the state folder was sealed with `key` (its header's key id), or
    cannot be told (a header that cannot be read: the key is kept, to be safe). No key: none."""
    return bool(journals_sealed(state_dir, key))


def journals_sealed(state_dir: str | Path, key: bytes | None) -> list[Path]:
    """The journals in the state folder sealed with `key`, and those that cannot be told (a
    header that cannot be read counts as sealed, to be safe). No key: none."""
    folder = Path(state_dir) / JOURNALS_DIR
    if key is None or not folder.is_dir():
        return []
    mine = key_id(key)
    found = []
    for path in sorted(folder.glob("match-*.jsonl")):
        try:
            if read_header(path).data.get("key_id") in (mine, None):
                found.append(path)
        except JournalError:
            found.append(path)
    return found


def applied(state_dir: str | Path) -> dict[str, object]:
    """What the provisioned folder's record says (empty: never provisioned)."""
    try:
        data = json.loads((Path(state_dir) / PROVISIONED / RECORD).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def return_pending(state_dir: str | Path) -> bool:
    return (Path(state_dir) / PROVISIONED / RETURN_PENDING).exists()


def take_provision(state_dir: str | Path, found: StickProvision, key_now: bytes | None,
                   how: str, *, may_adopt: bool, return_later: bool = False) -> Taken:
    """Make `found` this clock's set: written to a new folder, then `STATE/provisioned` renamed
    over to it. The stick's key becomes the device key only when `may_adopt` (no match here)
    and no journal was sealed by `key_now`; `return_later`: the kept key is still to go back
    on this stick (it was unmounted before the arbiter confirmed). Raises JournalError when the
    state folder cannot be written (the old set stands)."""
    state = Path(state_dir)
    adopt = (found.key is not None and may_adopt and found.key != key_now
             and not sealed_journals(state, key_now))
    fate = KeyFate.ADOPTED if adopt or (found.key is not None and found.key == key_now) \
        else KeyFate.KEPT
    name = f"{SET_PREFIX}{found.digest[:16]}-{secrets.token_hex(4)}"
    folder = state / name
    record = {"table": found.table, "broker": found.broker, "digest": found.digest,
              "how": how, "key": fate.value, "at": time.strftime("%Y-%m-%dT%H:%M:%SZ",
                                                                 time.gmtime())}
    link = state / f".{PROVISIONED}.new-{secrets.token_hex(4)}"
    replaced = False
    try:
        os.mkdir(folder, 0o700)
        for file_name, data in ((PROVISIONED_FILE, found.text.encode()), *found.files,
                                (RECORD, json.dumps(record).encode())):
            _write_new(folder / file_name, data)
        if fate is KeyFate.KEPT and return_later:
            _write_new(folder / RETURN_PENDING, b"")
        fsync_dir(folder)
        os.symlink(name, link)
        if adopt:
            assert found.key is not None
            replace_key(state, found.key)
            replaced = True
        old = _current_set(state)
        os.replace(link, state / PROVISIONED)      # the set is this clock's from here
        fsync_dir(state)
    except (OSError, JournalError) as exc:
        with contextlib.suppress(OSError):
            os.unlink(link)
        if _current_set(state) != folder:      # never pointed at: the old set stands, whole
            if replaced and key_now is not None:
                replace_key(state, key_now)    # … and the key it goes with
            _remove_set(folder)
        why = exc.strerror or exc if isinstance(exc, OSError) else exc
        raise JournalError(f"{folder}: cannot keep the provisioned settings: {why}") from None
    if old is not None and old != folder:
        _remove_set(old)
    log.info("provisioned: %s (%s), the device key %s", found.describe(), how, fate.value)
    return Taken(found.table, fate, folder)


def clear_return_pending(state_dir: str | Path) -> None:
    with contextlib.suppress(OSError):
        os.unlink(Path(state_dir) / PROVISIONED / RETURN_PENDING)


def _write_new(path: Path, data: bytes) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    try:
        write_all(fd, data)
        os.fsync(fd)
    finally:
        os.close(fd)


def _current_set(state: Path) -> Path | None:
    link = state / PROVISIONED
    try:
        target = os.readlink(link)
    except OSError:
        return None
    return state / target if target.startswith(SET_PREFIX) and "/" not in target else None


def _remove_set(folder: Path) -> None:
    """The set before, once nothing points at it (best effort: a left folder is harmless)."""
    try:
        if folder.exists():
            for entry in folder.iterdir():
                entry.unlink()
            folder.rmdir()
    except OSError as exc:
        log.warning("%s: the provisioned set before could not be removed: %s", folder,
                    exc.strerror or exc)


def return_key(stick: Path, table_id: str, key: bytes) -> Problem | None:
    """Give the clock's own key back on the stick, `gammonclock/provision/returned.key` and
    `returned.table`, each written whole (a temporary name, renamed) through the stick's own
    folders, never a link; None when done, else the stick's fault."""
    from .usb_stick import StickReport, _fault, _Progress, _write_file

    folder = stick
    report = StickReport()
    progress = _Progress(stick, report, 2)
    try:
        for part in (STICK_DIR, PROVISION_DIR):
            folder = folder / part
            mode = os.lstat(folder).st_mode
            if not stat.S_ISDIR(mode):
                return Problem("usb.link" if stat.S_ISLNK(mode) else "usb.not_folder",
                               path=folder.relative_to(stick).as_posix())
        _write_file(folder / RETURNED_KEY, key_text(key), progress)
        _write_file(folder / RETURNED_TABLE, f"{table_id}\n".encode(), progress)
    except OSError as exc:
        return _fault(exc, progress)
    log.info("the device key of %s given back on the stick for the hall", table_id)
    return None

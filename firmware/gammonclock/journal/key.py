"""The device key (SPEC §11): made once on the card, never copied off it; it seals every record of
every journal the clock writes (`records.encode`). A key file that is not one of ours is refused,
never used."""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import re
import secrets
from pathlib import Path

from .durable import fsync_dir, write_beside
from .records import JournalError

SECRET_FILE = "device.key"

KEY_BYTES = 32                 # at least this many random bytes; the file holds them as hex

KEY_FILE_LIMIT = 4096         # a key file longer than this is not one of ours

_KEY_ADVICE = ("it is never used to seal or verify. Move it away to make a new one; journals "
               "sealed with the old key will then not verify")

class KeyRefused(JournalError):
    """A device key file that is there but unusable (empty, short, not hex): it is never used,
    and it is not replaced behind anyone's back either."""

def load_or_create_key(state_dir: str | Path) -> bytes:
    """The per-device key in `state_dir`, created (mode 0600) on first use."""
    path = Path(state_dir) / SECRET_FILE
    if not os.path.lexists(path):
        _create_key(path)
    return read_key(state_dir)

def _create_key(path: Path) -> None:
    """A new key at `path`, unless one is there already (that one is the key)."""
    write_key(path, new_key())


def new_key() -> bytes:
    """A new device key: KEY_BYTES random bytes (the one maker of keys, on a clock and at the
    hall's `provision`)."""
    return secrets.token_bytes(KEY_BYTES)


def write_key(path: Path, key: bytes, mode: int = 0o600, *, replace: bool = False,
              group_of: Path | None = None) -> bool:
    """Write `key` as a key file (hex and a newline) under a temporary name, fsync it, then link
    it into place: a crash or a full disk leaves no key or a whole one, never an empty or partial
    one. Without `replace` a key already at `path` stays (False: not written); with it the new
    one takes its place by a rename. `group_of`: the file takes that folder's group when it
    may (the hall's keys folder, readable by its service's group). JournalError when it cannot
    be written."""
    check_key(key)
    temporary = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        owner = None if group_of is None else (-1, group_of.stat().st_gid)
        temporary = write_beside(path, key_text(key), mode, owner)
        if replace:
            os.replace(temporary, path)
            written = True
        else:
            written = _link_new(temporary, path)
        fsync_dir(path.parent)
    except OSError as exc:
        raise JournalError(f"{path}: cannot create the device key: "
                           f"{exc.strerror or exc}") from None
    finally:
        if temporary is not None:
            with contextlib.suppress(OSError):
                os.unlink(temporary)
    return written


def _link_new(temporary: Path, path: Path) -> bool:
    """`temporary` linked in as `path` unless a file is there already (False)."""
    try:
        os.link(temporary, path)      # never replaces a key that is already there
    except FileExistsError:
        return False                  # another process made one first: that one is the key
    except OSError as exc:
        if exc.errno not in (errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP, errno.ENOSYS):
            raise
        # A file system without hard links (FAT, exFAT): rename, which replaces, after a
        # last look (the folder's lock keeps a second clock out meanwhile).
        if path.exists():
            return False
        os.rename(temporary, path)
    return True


def read_key(state_dir: str | Path) -> bytes:
    """The device key; KeyRefused for a file that is not a whole key."""
    path = Path(state_dir) / SECRET_FILE
    try:
        return key_in_file(path)
    except OSError as exc:
        raise JournalError(f"{path}: cannot read the device key: {exc.strerror}") from None


def key_in_file(path: Path, advice: str = _KEY_ADVICE) -> bytes:
    """The key a key file holds (a state folder's `device.key`, or a copy of one). OSError when
    the file cannot be read; KeyRefused, ending with `advice`, when it holds no whole key."""
    with path.open("rb") as f:
        blob = f.read(KEY_FILE_LIMIT + 1)
    return key_in_bytes(blob, str(path), advice)


def key_in_bytes(blob: bytes, name: str, advice: str = _KEY_ADVICE) -> bytes:
    """The key a key file's bytes hold (read by the caller, e.g. from a stick without following
    a link, at most KEY_FILE_LIMIT + 1 bytes); KeyRefused naming `name` when they hold none."""
    problem = _key_problem(blob)
    if problem is not None:
        raise KeyRefused(f"{name}: the device key {problem}; {advice}")
    return bytes.fromhex(blob.strip().decode())


def key_text(key: bytes) -> bytes:
    """A key as its file holds it: hex digits and a newline."""
    return (key.hex() + "\n").encode()


def replace_key(state_dir: str | Path, key: bytes) -> None:
    """Make `key` the device key (a provisioning stick's, issue 32: only on a clock that has
    sealed no journal yet), as `write_key` writes one, renamed over `device.key`: a crash leaves
    the old key or the new one whole, never a part. JournalError when it cannot be written (the
    old key stands)."""
    write_key(Path(state_dir) / SECRET_FILE, key, replace=True)


def _key_problem(blob: bytes) -> str | None:
    text = blob.strip()
    if not blob:
        return "is empty (0 bytes)"
    if len(blob) > KEY_FILE_LIMIT:
        return f"is longer than {KEY_FILE_LIMIT} bytes"
    if re.fullmatch(rb"[0-9a-fA-F]*", text) is None or len(text) % 2:
        return f"is not hex text (a key is {2 * KEY_BYTES} hex digits and a newline)"
    if len(text) // 2 < KEY_BYTES:
        return f"holds {len(text) // 2} bytes; a device key has at least {KEY_BYTES}"
    return None

def check_key(key: bytes) -> None:
    """Refuse a key too short to seal with (an empty key would let anyone forge a journal)."""
    if len(key) < KEY_BYTES:
        raise KeyRefused(f"a device key of {len(key)} bytes is refused; at least {KEY_BYTES} "
                         f"random bytes are needed to seal or verify")

def key_id(key: bytes) -> str:
    """A short public name of a key, kept in the header, to tell keys apart."""
    return hashlib.sha256(b"gammonclock key id:" + key).hexdigest()[:16]

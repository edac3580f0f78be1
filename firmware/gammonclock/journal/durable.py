"""Files that survive a power cut whole (SPEC §11): every byte written, a small file replaced
atomically (a temporary file, fsync, rename, fsync of the folder), a folder's entries synced."""

from __future__ import annotations

import contextlib
import os
import secrets
from pathlib import Path


def write_all(fd: int, data: bytes) -> None:
    """Every byte of DATA to FD (a write may take fewer)."""
    while data:
        data = data[os.write(fd, data):]


def write_atomically(path: Path, data: bytes) -> None:
    """PATH holds DATA, whole, or what it held before: written beside it, synced, renamed over
    it, and the rename synced (a small state file: the hall link's position, the hall's rounds)."""
    tmp = path.with_name(path.name + ".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o640)
    try:
        written = 0
        while written < len(data):
            written += os.write(fd, data[written:])
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(tmp, path)
    fsync_dir(path.parent)                  # the rename itself survives a power cut

def write_beside(path: Path, data: bytes, mode: int, owner: tuple[int, int] | None = None
                 ) -> Path:
    """DATA in a new file beside PATH under a name of its own, its mode set and its owner when
    given and allowed ((uid, gid), -1 keeps one), synced: ready to be linked or renamed into
    place (a key, a password file). The caller removes it when it is not."""
    temporary = path.with_name(f".{path.name}.new-{os.getpid()}-{secrets.token_hex(4)}")
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        write_all(fd, data)
        if owner is not None:
            with contextlib.suppress(PermissionError):
                os.fchown(fd, *owner)
        os.fchmod(fd, mode)
        os.fsync(fd)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise
    finally:
        os.close(fd)
    return temporary


def fsync_dir(directory: Path) -> None:
    """Make a new file's directory entry durable too."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)

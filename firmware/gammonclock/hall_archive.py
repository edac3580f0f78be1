"""The director's archive (SPEC §14): every finished journal a table sends on `P/T/journal` lands
in `ARCHIVE/TABLE/NAME` and is verified there.

- Written under a temporary name, fsynced, then linked into place: a crash leaves no half file,
  and an existing file is never overwritten. The same journal delivered twice (delivery is at
  least once) is recognised and kept once; a different one under a name already taken is kept
  beside it as `NAME.2.jsonl`, `.3`, …
- Verified with `gammonclock verify`'s function when `KEYS/TABLE.key` holds that table's device
  key (a copy of its `device.key`); without it only the checksums and the replay are checked,
  and the verdict says "seal not checked".
"""

from __future__ import annotations

import contextlib
import os
import re
import secrets
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .config import ConfigError
from .errors import GammonclockError
from .hall_accounts import TABLE_ID
from .journal import KeyRefused, fsync_dir, key_in_file, read_journal
from .session import replay, verify_and_replay

JOURNAL_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,200}\.jsonl")
MAX_JOURNAL_BYTES = 64 << 20


class ArchiveError(GammonclockError):
    """A journal message the archive cannot take; the message says why."""


@dataclass(frozen=True)
class Verified:
    table: str
    name: str
    path: str
    ok: bool              # intact (seals checked) or readable (seals not checked)
    sealed: bool          # the seals were checked with the table's key
    message: str
    summary: str = ""

    def as_json(self) -> dict[str, Any]:
        return {"table": self.table, "name": self.name, "ok": self.ok, "sealed": self.sealed,
                "message": self.message, "summary": self.summary}


def store(archive: Path, table: str, name: str, text: str) -> tuple[Path, bool]:
    """Write a journal into the archive; (its path, whether it is new). Never overwrites."""
    if TABLE_ID.fullmatch(table) is None:
        raise ArchiveError(f"table {table!r} is not a table id")
    if JOURNAL_NAME.fullmatch(name) is None:
        raise ArchiveError(f"journal name {name[:80]!r} is not a journal file name "
                           "(letters, digits, '.', '-', '_', ending .jsonl)")
    data = text.encode("utf-8")
    if len(data) > MAX_JOURNAL_BYTES:
        raise ArchiveError(f"journal {name} is {len(data)} bytes; at most {MAX_JOURNAL_BYTES}")
    folder = archive / table
    folder.mkdir(parents=True, exist_ok=True)
    stem = name[: -len(".jsonl")]
    for number in range(1, 1000):
        path = folder / (name if number == 1 else f"{stem}.{number}.jsonl")
        if path.exists():
            if _same(path, data):
                return path, False
            continue
        if _link_new(path, data):
            return path, True
        if _same(path, data):        # another writer put the same journal there first
            return path, False
    raise ArchiveError(f"{folder}: 999 different journals named {name}")


def _same(path: Path, data: bytes) -> bool:
    try:
        return path.stat().st_size == len(data) and path.read_bytes() == data
    except OSError:
        return False


def _link_new(path: Path, data: bytes) -> bool:
    """Write `data` to a new `path`; False when the name is taken (nothing written)."""
    temporary = path.with_name(f".{path.name}.tmp-{os.getpid()}-{secrets.token_hex(4)}")
    try:
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
            os.fsync(fd)
        finally:
            os.close(fd)
        try:
            os.link(temporary, path)         # fails when the name is taken: never replaces
        except FileExistsError:
            return False
        fsync_dir(path.parent)
        return True
    finally:
        with contextlib.suppress(OSError):
            os.unlink(temporary)


_TABLE_KEY_ADVICE = "journals are not verified with it; put a copy of the table's device.key there"


def read_table_key(keys_dir: Path | None, table: str) -> bytes | None:
    """KEYS/TABLE.key (a copy of the table's device.key, read as the device reads its own), or
    None when there is none; ArchiveError when it cannot be read or holds no whole key."""
    if keys_dir is None:
        return None
    path = keys_dir / f"{table}.key"
    try:
        return key_in_file(path, _TABLE_KEY_ADVICE)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise ArchiveError(f"{path}: cannot read the table's key: {exc.strerror}") from None
    except KeyRefused as exc:
        raise ArchiveError(str(exc)) from None


def verify_archived(path: Path, table: str, keys_dir: Path | None) -> Verified:
    """The verdict on one archived journal: seals checked with the table's key when there is
    one, else checksums and replay only ("seal not checked")."""
    name = path.name
    try:
        key = read_table_key(keys_dir, table)
        if key is not None:
            checked = verify_and_replay(path, key)
            replayed = checked.replayed
            summary = _summary(replayed) if replayed is not None else (
                f"cannot replay: {checked.config_problem}")
            return Verified(table, name, str(path), checked.verdict.intact, True,
                            checked.verdict.message if checked.verdict.intact
                            else f"TAMPERED: {checked.verdict.message}", summary)
        read = read_journal(path)
        problems = read.problems()
        replayed_match = replay(read)
        message = "seal not checked (no " + (f"{keys_dir}/{table}.key" if keys_dir else
                                             "--keys-dir") + f"); {read.count} records"
        if problems:
            return Verified(table, name, str(path), False, False,
                            f"{message}; {'; '.join(problems)}", _summary(replayed_match))
        return Verified(table, name, str(path), True, False, message, _summary(replayed_match))
    except (GammonclockError, ConfigError) as exc:
        return Verified(table, name, str(path), False, key_known(keys_dir, table), str(exc))


def key_known(keys_dir: Path | None, table: str) -> bool:
    return keys_dir is not None and (keys_dir / f"{table}.key").exists()


def _summary(replayed: Any) -> str:
    rules, state = replayed.config.rules, replayed.engine.state_json()
    score = state["score"]
    return (f"{rules.discipline.name} to {rules.length}, {rules.names.left} v "
            f"{rules.names.right}, {score['left']}-{score['right']}, {state['phase']}")


def archived(archive: Path) -> list[tuple[str, Path]]:
    """(table, path) of every journal in the archive, oldest name first."""
    if not archive.is_dir():
        return []
    out = []
    for folder in sorted(p for p in archive.iterdir() if p.is_dir()):
        if TABLE_ID.fullmatch(folder.name) is None:
            continue
        out += [(folder.name, p) for p in sorted(folder.glob("*.jsonl"))
                if not p.name.startswith(".")]
    return out

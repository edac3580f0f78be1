"""A state folder's journals (SPEC §11, §13): a new journal's header and name, and the journals
already there, in the order of their own content (`match_no`), not of the wall clock."""

from __future__ import annotations

import logging
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gammonclock import __version__
from gammonclock.config.loading import LOCKOUT_CHORD, LOCKOUT_CHORD_UNDONE, ConfigError
from gammonclock.core.pin import RedactError, redact_pin

from .reader import header_data_unchecked, read_header
from .records import JOURNALS_DIR, JournalError, RecordError

log = logging.getLogger(__name__)


def journal_header(config_text: str, config_path: str, match_no: int | None = None, *,
                   device_text: str | None = None, table: str | None = None,
                   pepper: bytes | None = None) -> dict[str, Any]:
    """A new journal's header; `match_no` orders the journals of a state folder by their own
    content (see `journal_order`), not by the wall clock. A match file read on a device config
    keeps that config's text too (`device`): the match's buttons and panels' language are in
    it, and a replay must read the match as the clock did. `pepper` (`pin.pepper_of` the key
    that seals the journal): a clear PIN's hash is keyed with it (`config.keyed_config` with
    the same pepper gives the engine the very same hash)."""
    host = os.uname().nodename if hasattr(os, "uname") else "unknown"
    header: dict[str, Any] = {"config": header_text(config_text, config_path, pepper),
                              "config_path": config_path, "version": __version__, "host": host,
                              LOCKOUT_CHORD: LOCKOUT_CHORD_UNDONE}
    if device_text is not None:
        header["device"] = header_text(device_text, f"{config_path} (device config)", pepper)
    if table is not None:
        header["table"] = table
    if match_no is not None:
        header["match_no"] = match_no
    return header

def header_text(text: str, path: str, pepper: bytes | None = None) -> str:
    """A config text as a journal's header keeps it: a clear `[arbiter] pin` replaced by the
    hash the engine uses (SPEC §13.4: the PIN never leaves the arbiter), keyed with `pepper`
    when given. ConfigError when it cannot be replaced safely (the config's check refuses such
    a file before this)."""
    try:
        return redact_pin(text, pepper)
    except RedactError as exc:
        raise ConfigError(path, [f"arbiter.pin: {exc}"]) from None

def new_journal_path(state_dir: str | Path, wall_ns: int, suffix: str = "") -> Path:
    stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime(wall_ns // 1_000_000_000))
    directory = Path(state_dir) / JOURNALS_DIR
    path = directory / f"match-{stamp}{suffix}.jsonl"
    n = 1
    try:
        while path.exists():
            n += 1
            path = directory / f"match-{stamp}{suffix}-{n}.jsonl"
    except OSError as exc:        # a dying card: EIO on a lookup
        raise JournalError(f"{directory}: cannot look for journals: {exc.strerror}") from None
    return path

@dataclass(frozen=True)
class JournalHead:
    """What a journal's header says about it (read from its first line only). `problem` says
    why a whole header is not understood (a newer format...): such a journal still takes its
    place, so that it is never passed over silently."""

    path: Path
    match_no: int                 # 0 for older journals, which have none
    config: str | None
    continues: str | None         # the file name of the damaged journal this one goes on from
    problem: str | None = None

    @staticmethod
    def of(path: Path, data: dict[str, Any], problem: str | None = None) -> JournalHead:
        match_no, config, continues = data.get("match_no"), data.get("config"), \
            data.get("continues")
        return JournalHead(
            path, match_no if type(match_no) is int and match_no >= 0 else 0,
            config if isinstance(config, str) else None,
            str(continues["file"]) if isinstance(continues, dict)
            and isinstance(continues.get("file"), str)
            and not continues.get("handover") else None,    # another clock's (continuation.py)
            problem)

def journal_heads(state_dir: str | Path) -> list[JournalHead]:
    """The headers of every journal in the state folder; one with no whole header (never
    resumable) is logged and left out."""
    heads = []
    for path in (Path(state_dir) / JOURNALS_DIR).glob("match-*.jsonl"):
        try:
            heads.append(JournalHead.of(path, read_header(path).data))
        except RecordError as exc:
            heads.append(JournalHead.of(path, header_data_unchecked(path), str(exc)))
        except JournalError as exc:
            log.warning("%s", exc)
    return heads

def journal_order(heads: list[JournalHead]) -> list[JournalHead]:
    """The journals oldest first by their own content: `match_no`, then the name. A journal
    that another `continues` (the damaged original) is left out: its match goes on there."""
    continued = {head.continues for head in heads}
    return sorted((head for head in heads if head.path.name not in continued),
                  key=lambda head: (head.match_no, head.path.name))

def next_match_no(heads: list[JournalHead]) -> int:
    return 1 + max((head.match_no for head in heads), default=0)

def latest_journal(state_dir: str | Path) -> Path | None:
    """The newest journal by its own content (`journal_order`), not by the file's mtime."""
    ordered = journal_order(journal_heads(state_dir))
    return ordered[-1].path if ordered else None

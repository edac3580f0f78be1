"""The director's archive (SPEC §14): every finished journal a table sends on `P/T/journal` lands
in `ARCHIVE/TABLE/NAME` and is verified there.

- Written under a temporary name, fsynced, then linked into place: a crash leaves no half file,
  and an existing file is never overwritten. The same journal delivered twice (delivery is at
  least once) is recognised and kept once; a different one under a name already taken is kept
  beside it as `NAME.2.jsonl`, `.3`, …
- Every name the clock makes is taken (`match-…-TABLE-LEFT-RIGHT.jsonl`, the players' names in
  any alphabet: lifecycle.journal_path keeps letters and digits of any script, `_` for the
  rest); `/`, NUL, a leading `.`, `..` and over-long names are refused.
- A journal message is at most `MAX_JOURNAL_BYTES`, the broker's own `max_packet_size`
  (hall/mosquitto.conf, 16 MiB): its size is checked before anything of it is parsed, and it is
  parsed in a worker thread (`journal_message`), never on the loop every table shares.
- A journal shorter than the events the hall has seen of it is kept as `NAME.cut-short.jsonl`
  (never under the journal's own name), and a longer one sent later under a name a shorter one
  holds takes the name (the shorter is set aside as cut short): the complete one wins, the short
  one stays on disk, marked. The same short journal sent again (its very bytes: a table that
  lost its tail on a power cut has no more to send) is archived as it is, cut short, and said
  so, so that the table goes on with its next journals.
- Archived is not verified: a journal whose verdict is TAMPERED (or that cannot be read) is in
  the archive all the same, and is said to be "archived, NOT verified" (`Verified.verified`).
- Verified with `gammonclock verify`'s function when `KEYS/TABLE.key` holds that table's device
  key (a copy of its `device.key`); without it only the checksums and the replay are checked,
  and the verdict says "seal not checked". TABLE is the account the journal came from (the
  folder it is archived in), whatever its header says: a journal sealed by another device's key
  is TAMPERED here (SPEC §14.1: a table's account speaks only with what its own key sealed),
  where `gammonclock verify` says "sealed by another device" of a journal it was handed.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from gammonclock.config.loading import ConfigError
from gammonclock.config.problems import message_of
from gammonclock.errors import GammonclockError
from gammonclock.journal.durable import fsync_dir
from gammonclock.journal.key import KeyRefused, key_in_file
from gammonclock.journal.reader import read_journal
from gammonclock.journal.replay import replay, verify_and_replay
from gammonclock.journal.verify import SEAL_OTHER_DEVICE, verify
from gammonclock.wire import JOURNAL_NAME

from .accounts import TABLE_ID
from .messages import strict_json
from .words import Say, other_key_say, summary_say, unchecked_say, verdict_say, with_detail

# web.py serves `/archive/TABLE/NAME` under the same pattern (wire.JOURNAL_NAME).
MAX_NAME_BYTES = 200          # room for `.cut-short.N` and the temporary name within 255 bytes
CUT_SHORT = ".cut-short"
# A journal is one MQTT message, and the broker passes none longer than its max_packet_size
# (hall/mosquitto.conf: 16 MiB); nothing longer is taken either (a test holds the two equal).
MAX_JOURNAL_BYTES = 16 << 20


class ArchiveError(GammonclockError):
    """A journal message the archive cannot take; the message says why, `code` and `fields`
    say it for the page (words.py: `archive.failed.CODE`)."""

    def __init__(self, message: str, code: str = "", **fields: str | int) -> None:
        super().__init__(message)
        self.code, self.fields = code, fields


@dataclass(frozen=True)
class Verified:
    table: str
    name: str
    path: str
    ok: bool              # intact (seals checked) or readable (seals not checked)
    sealed: bool          # the seals were checked with the table's key
    message: str
    summary: str = ""
    journal: str = ""     # the journal it is a copy of (name without `.2`, `.cut-short`)
    cut_short: bool = False
    tampered: bool = False  # the chain (or, with the key, a seal) does not hold
    # `message`, `summary` and the cut short's words as codes and fields, for the page to say
    # in its language (words.py)
    say: Say = field(default_factory=dict)
    summary_say: Say = field(default_factory=dict)
    cut: Say = field(default_factory=dict)

    @property
    def verified(self) -> bool:
        """Verified: whole, intact and its seals checked with the table's key. Anything else is
        archived (written, kept, listed) but not verified: TAMPERED, unreadable, cut short, or
        no key to check the seals with."""
        return self.ok and self.sealed and not self.cut_short

    def as_json(self) -> dict[str, Any]:
        return {"table": self.table, "name": self.name, "ok": self.ok, "sealed": self.sealed,
                "verified": self.verified, "message": self.message, "summary": self.summary,
                "journal": self.journal or self.name, "cut_short": self.cut_short,
                "say": self.say, "summary_say": self.summary_say, "cut": self.cut}


@dataclass(frozen=True)
class JournalMessage:
    """A `P/T/journal` message as read: the journal's name and text, and its extent."""

    name: str
    text: str
    records: int
    last: int             # the highest seq in it (-1: none)


def journal_message(table: str, payload: bytes) -> JournalMessage:
    """A table's `journal` message read: its size first, before any of it is parsed (at most
    `MAX_JOURNAL_BYTES`, the broker's own bound), then its JSON, strictly, its name and how far
    its text goes. ArchiveError saying what is wrong. Up to 16 MiB of parsing: the hall runs
    it in a worker thread, off the loop."""
    if len(payload) > MAX_JOURNAL_BYTES:
        raise ArchiveError(f"the journal message is {len(payload)} bytes; at most "
                           f"{MAX_JOURNAL_BYTES} (the broker's max_packet_size)", "too_big",
                           size=len(payload), max=MAX_JOURNAL_BYTES)
    try:
        message = strict_json(payload, MAX_JOURNAL_BYTES)
    except (ValueError, RecursionError) as exc:
        raise ArchiveError(f"the journal message is not JSON: {exc}", "not_json") from None
    if not isinstance(message, dict):
        raise ArchiveError("the journal message is not a JSON object", "not_object")
    name, text = message.get("journal"), message.get("text")
    if not isinstance(name, str) or not isinstance(text, str):
        raise ArchiveError("`journal` and `text` must be strings", "not_strings")
    check_name(table, name)
    records, last = journal_extent(text)
    return JournalMessage(name, text, records, last)


def journal_of(name: str) -> str:
    """The journal an archived file is a copy of: `NAME.jsonl` for `NAME.2.jsonl`,
    `NAME.cut-short.jsonl` and `NAME.cut-short.3.jsonl`."""
    stem = name[: -len(".jsonl")]
    head, dot, number = stem.rpartition(".")
    if dot and number.isdigit() and number.isascii():
        stem = head
    return stem.removesuffix(CUT_SHORT) + ".jsonl"


def journal_extent(text: str) -> tuple[int, int]:
    """(records, last seq) of a journal's text: its whole JSON lines that carry a seq."""
    records, last = 0, -1
    for line in text.splitlines():
        try:
            seq = json.loads(line).get("seq")
        except (ValueError, AttributeError, RecursionError):
            continue
        if type(seq) is int:
            records, last = records + 1, max(last, seq)
    return records, last


def check_name(table: str, name: str) -> None:
    if TABLE_ID.fullmatch(table) is None:
        raise ArchiveError(f"table {table!r} is not a table id")
    if (JOURNAL_NAME.fullmatch(name) is None or CUT_SHORT in name
            or len(name.encode("utf-8")) > MAX_NAME_BYTES):
        raise ArchiveError(f"journal name {name[:80]!r} is not a journal file name "
                           f"(letters of any alphabet, digits, '.', '-', '_', ending .jsonl, "
                           f"at most {MAX_NAME_BYTES} bytes, not starting with '.')",
                           "bad_name", name=repr(name[:80]), max=MAX_NAME_BYTES)


@dataclass(frozen=True)
class Stored:
    path: Path
    new: bool
    set_aside: tuple[Path, Path] | None = None   # a shorter copy moved from the name: (was, is)


def store(archive: Path, table: str, name: str, text: str) -> tuple[Path, bool]:
    """Write a journal into the archive; (its path, whether it is new). Never overwrites."""
    stored = store_journal(archive, table, name, text)
    return stored.path, stored.new


def store_journal(archive: Path, table: str, name: str, text: str, *,
                  cut_short: bool = False) -> Stored:
    """Write a journal into the archive, never overwriting: under NAME (a shorter journal
    already there is first set aside as NAME.cut-short.jsonl: the complete one wins), or, when
    `cut_short`, under NAME.cut-short.jsonl. ArchiveError for a name or size refused; OSError
    when the disk refuses (nothing is acknowledged then: the table sends it again)."""
    check_name(table, name)
    data = text.encode("utf-8")
    if len(data) > MAX_JOURNAL_BYTES:
        raise ArchiveError(f"journal {name} is {len(data)} bytes; at most {MAX_JOURNAL_BYTES}")
    folder = archive / table
    folder.mkdir(parents=True, exist_ok=True)
    stem = name[: -len(".jsonl")]
    if cut_short:
        return Stored(*_store_numbered(folder, f"{stem}{CUT_SHORT}", data))
    aside = None
    own = folder / name
    if own.exists() and not _same(own, data):
        _records, last = journal_extent(text)
        if _last_seq(own) < last:
            aside = (own, _set_aside(own, folder, f"{stem}{CUT_SHORT}"))
    return Stored(*_store_numbered(folder, stem, data), set_aside=aside)


def _store_numbered(folder: Path, stem: str, data: bytes) -> tuple[Path, bool]:
    for number in range(1, 1000):
        path = folder / (f"{stem}.jsonl" if number == 1 else f"{stem}.{number}.jsonl")
        if path.exists():
            if _same(path, data):
                return path, False
            continue
        if _link_new(path, data):
            return path, True
        if _same(path, data):        # another writer put the same journal there first
            return path, False
    raise ArchiveError(f"{folder}: 999 different journals named {stem}.jsonl")


def _last_seq(path: Path) -> int:
    try:
        return journal_extent(path.read_text(encoding="utf-8", errors="replace"))[1]
    except OSError:
        return 1 << 62                # unreadable: never set aside


def _set_aside(path: Path, folder: Path, stem: str) -> Path:
    """Move a short copy off the journal's name (linked under a new name, then unlinked:
    nothing is overwritten)."""
    for number in range(1, 1000):
        target = folder / (f"{stem}.jsonl" if number == 1 else f"{stem}.{number}.jsonl")
        try:
            os.link(path, target)
        except FileExistsError:
            continue
        os.unlink(path)
        fsync_dir(folder)
        return target
    raise ArchiveError(f"{folder}: 999 short copies of {path.name}")


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
    verdict = _verify(path, table, keys_dir)
    if CUT_SHORT in path.name:
        complete = journal_of(path.name)
        whole = (path.parent / complete).exists()
        said = (f"set aside, {complete} is the complete one" if whole
                else "no complete copy in the archive")
        return replace(verdict, ok=False, cut_short=True,
                       message=f"cut short: {said}; {verdict.message}",
                       cut={"code": "set_aside", "complete": complete} if whole
                       else {"code": "no_complete"})
    return verdict


def _verify(path: Path, table: str, keys_dir: Path | None) -> Verified:
    name = path.name
    journal = journal_of(name)
    try:
        key = read_table_key(keys_dir, table)
        if key is not None:
            checked = verify_and_replay(path, key)
            replayed = checked.replayed
            summary = _summary(replayed) if replayed is not None else (
                f"cannot replay: {checked.config_problem}")
            summary_said = (_summary_say(replayed) if replayed is not None else
                            with_detail({"code": "cannot_replay"}, checked.config_problem or ""))
            if checked.verdict.intact and checked.verdict.seal == SEAL_OTHER_DEVICE:
                # Sealed by another device: not this table's journal, whatever it says.
                said = other_key_say(checked.verdict, table)
                return Verified(table, name, str(path), False, True,
                                f"TAMPERED: sealed by another device's key (key id "
                                f"{checked.verdict.sealed_by}), not {table}'s (key id "
                                f"{checked.verdict.this_key}); chain {checked.verdict.message}",
                                summary, journal, tampered=True, say=said,
                                summary_say=summary_said)
            return Verified(table, name, str(path), checked.verdict.intact,
                            checked.verdict.sealed, checked.verdict.words, summary, journal,
                            tampered=not checked.verdict.intact,
                            say=verdict_say(checked.verdict), summary_say=summary_said)
        read = read_journal(path)
        problems = read.problems()
        replayed_match = replay(read)
        key_file = f"{keys_dir}/{table}.key" if keys_dir else None
        message = "seal not checked (no " + (key_file or "--keys-dir") + \
            f"); {read.count} records"
        said = unchecked_say(read.count, key_file, problems)
        if problems:
            return Verified(table, name, str(path), False, False,
                            f"{message}; {'; '.join(problems)}", _summary(replayed_match),
                            journal, tampered=not verify(path, None).intact, say=said,
                            summary_say=_summary_say(replayed_match))
        return Verified(table, name, str(path), True, False, message, _summary(replayed_match),
                        journal, say=said, summary_say=_summary_say(replayed_match))
    except (GammonclockError, ConfigError) as exc:
        return Verified(table, name, str(path), False, key_known(keys_dir, table), str(exc),
                        journal=journal, say=with_detail({"code": "unreadable"},
                                                         message_of(exc)))


def key_known(keys_dir: Path | None, table: str) -> bool:
    return keys_dir is not None and (keys_dir / f"{table}.key").exists()


def _summary(replayed: Any) -> str:
    rules, state = replayed.config.rules, replayed.engine.state_json()
    score = state["score"]
    return (f"{rules.discipline.name} to {rules.length}, {rules.names.left} v "
            f"{rules.names.right}, {score['left']}-{score['right']}, {state['phase']}")


def _summary_say(replayed: Any) -> Say:
    rules, state = replayed.config.rules, replayed.engine.state_json()
    return summary_say(rules.discipline.name, rules.length, rules.names.left,
                       rules.names.right, state["score"], state["phase"])


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

"""A match being kept: the engine, its journal and whoever shows what happened.

The device service and the simulator both run a `Session`. Every input and every timer goes
through it in the same order: the engine computes, the journal writes and fsyncs the record, and
only then do the observers (displays, buzzer, the simulator's account) see the effects. Under the
service's group commit (`group`) the records of a step are synced together at `commit`, and a
quiet edge (a tap's release) is written at once and synced with the next record (`feed`). After a
power cut or a crash, `recover` replays the journal through the same engine — from its last
snapshot on, which the session journals every SNAPSHOT_EVERY records — and resumes the match
paused at the instant of its last record, so the outage is charged to nobody.
"""

from __future__ import annotations

import contextlib
import logging
import os
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, assert_never

from . import __version__
from .arbiter import parse_command
from .config import Config, ConfigError, config_of_header
from .dice import parse_line
from .effects import Effect, Refused
from .engine import ButtonEdge, Engine, Input, PinKey, PinKeyKind
from .errors import GammonclockError
from .journal import (
    JOURNALS_DIR,
    MAX_SEQ,
    NO_KEY_GIVEN,
    SNAPSHOT_KIND,
    DeferredJournal,
    JournalError,
    JournalSink,
    JournalSource,
    JournalStream,
    JournalWriter,
    Record,
    RecordError,
    Stamp,
    Verdict,
    fsync_dir,
    header_data_unchecked,
    open_from_snapshot,
    open_or_defer,
    read_header,
    verify,
)
from .match import ArbiterAction, DiceDropped, DiceEvent, Recover
from .pin import RedactError, pepper_of, redact_pin
from .reasons import Reason
from .sides import Button
from .snapshot import (
    SnapshotError,
    engine_data,
    engine_from,
    history_floor,
    same_snapshot,
    trimmed,
)

log = logging.getLogger(__name__)

Observer = Callable[[Engine, list[Effect]], None]

# Records between two snapshots. Recovery replays at most this many (≈ 80 µs each here, 6-10
# times that on a Pi: well under a tenth of a second here); a snapshot (a few KB, one fsync) per
# this many records adds about 4 % to the journal. Counted in records, not seconds: recovery
# costs records, and while a clock runs a checkpoint is a record every 5 s anyway.
SNAPSHOT_EVERY = 200


# Player actions whose history the live engine keeps, so that as many undos in a row (at the
# panels or the socket) need nothing but memory; a deeper one rebuilds the history from the
# journal first. The history is cut to them at each snapshot (every SNAPSHOT_EVERY records), so
# a match's memory does not grow with its length.
UNDO_KEPT = 8


def _undo_fell_short(effects: list[Effect]) -> bool:
    """Whether these effects hold an undo refused for finding no player action (in a history
    that may have been cut: the journal may still hold one)."""
    return any(isinstance(e, Refused) and e.reason is Reason.UNDO_NOTHING for e in effects)


StampSource = Callable[[], Stamp]


# --- the journal's view of inputs and effects ------------------------------------------------

def input_data(event: Input) -> dict[str, Any]:
    """An input as the journal records it (`input_from` reads it back)."""
    match event:
        case ButtonEdge():
            return {"type": "edge", "button": event.button.value, "pressed": event.pressed}
        case PinKey():
            data: dict[str, Any] = {"type": "pin", "key": event.key.value}
            if event.digest is not None:
                data["digest"] = event.digest
            return data
        case ArbiterAction():
            data = {"type": "arbiter", "command": event.command.describe()}
            data.update({key: value for key, value in (("source", event.source),
                                                       ("by", event.by)) if value is not None})
            return data
        case DiceEvent():
            return {"type": "dice", "line": event.message.to_line()}
        case DiceDropped():
            return {"type": "dice_dropped", "count": event.count}
        case Recover():
            return {"type": "recover"}
        case _:
            assert_never(event)


class InputError(GammonclockError, ValueError):
    """A journaled input this firmware cannot take: an unknown type, a field missing or of the
    wrong type, text it cannot parse."""


MAX_INPUT_TEXT = 1000     # a command or a dice line the clock wrote is far shorter

def input_from(t: int, data: dict[str, Any]) -> Input:
    """The input a journal record holds; raises InputError for one this firmware cannot take."""
    kind = _input_type(data)
    return INPUT_TYPES[kind].read(t, data)


def _edge_from(t: int, data: dict[str, Any]) -> Input:
    return ButtonEdge(t, _button(data["button"]), data["pressed"])


def _pin_from(t: int, data: dict[str, Any]) -> Input:
    try:
        key = PinKeyKind(data["key"])
    except ValueError:
        raise InputError(f"PIN key {data['key'][:40]!r} is unknown; one of "
                         f"{', '.join(k.value for k in PinKeyKind)} is due") from None
    digest = data.get("digest")
    if (key is PinKeyKind.END) != (digest is not None):
        raise InputError("a PIN input has a digest exactly when its key is end")
    return PinKey(t, key, digest)


def _arbiter_from(t: int, data: dict[str, Any]) -> Input:
    try:
        return ArbiterAction(t, parse_command(data["command"].split()), data.get("source"),
                             data.get("by"))
    except ValueError as exc:       # ArbiterSyntaxError
        raise InputError(f"the arbiter input {data['command'][:60]!r} cannot be read: "
                         f"{exc}") from None


def _dice_from(t: int, data: dict[str, Any]) -> Input:
    try:
        return DiceEvent(t, parse_line(data["line"]))
    except ValueError as exc:       # DiceSyntaxError
        raise InputError(f"the dice input {data['line'][:60]!r} cannot be read: {exc}") from None


def _dice_dropped_from(t: int, data: dict[str, Any]) -> Input:
    if not 0 <= data["count"] <= MAX_SEQ:
        raise InputError(f"a count of {data['count']} dropped dice lines is out of range")
    return DiceDropped(t, data["count"])


def _recover_from(t: int, _: dict[str, Any]) -> Input:
    return Recover(t)


@dataclass(frozen=True)
class _InputType:
    fields: dict[str, type]                           # each field's JSON type (bool is no int)
    read: Callable[[int, dict[str, Any]], Input]      # once `_input_type` has checked the fields
    optional: dict[str, type] = field(default_factory=dict)   # checked when present


# Every input type a journal holds: its fields, and how it is read back.
INPUT_TYPES: dict[str, _InputType] = {
    "edge": _InputType({"button": str, "pressed": bool}, _edge_from),
    "pin": _InputType({"key": str}, _pin_from, {"digest": str}),
    "arbiter": _InputType({"command": str}, _arbiter_from, {"source": str, "by": str}),
    "dice": _InputType({"line": str}, _dice_from),
    "dice_dropped": _InputType({"count": int}, _dice_dropped_from),
    "recover": _InputType({}, _recover_from),
}


def _input_type(data: dict[str, Any]) -> str:
    """The input's type, once it and its fields are what this firmware knows."""
    kind = data.get("type")
    if not isinstance(kind, str):
        raise InputError("the input has no type")
    input_type = INPUT_TYPES.get(kind)
    if input_type is None:
        raise InputError(f"input type {kind[:40]!r} is unknown to this firmware (version "
                         f"{__version__}); the journal may come from a newer version")
    present = {name: t for name, t in input_type.optional.items() if name in data}
    for name, json_type in {**input_type.fields, **present}.items():
        value = data.get(name)
        if type(value) is not json_type:
            raise InputError(f"the {kind} input's {name!r} is "
                             f"{'missing' if value is None else type(value).__name__}; "
                             f"{json_type.__name__} is due")
        if isinstance(value, str) and len(value) > MAX_INPUT_TEXT:
            raise InputError(f"the {kind} input's {name!r} is longer than {MAX_INPUT_TEXT} "
                             f"characters")
    return kind


def _button(name: str) -> Button:
    try:
        return Button(name)
    except ValueError:
        raise InputError(f"button {name[:40]!r} is unknown; one of "
                         f"{', '.join(b.value for b in Button)} is due") from None


def effects_data(effects: Iterable[Effect]) -> list[dict[str, Any]]:
    return [e.as_dict() for e in effects]


def boot_id() -> str:
    try:
        return Path("/proc/sys/kernel/random/boot_id").read_text().strip()
    except OSError:
        return "unknown"


def system_stamps() -> StampSource:
    """Stamps from this host: monotonic clock, boot id, wall clock."""
    boot = boot_id()
    return lambda: Stamp(time.monotonic_ns(), boot, time.time_ns())


# --- the session -----------------------------------------------------------------------------

@dataclass
class Session:
    engine: Engine
    journal: JournalSink | None = None
    stamps: StampSource = field(default_factory=system_stamps)
    checkpoint_ns: int | None = 5_000_000_000   # None: no checkpoints (a run in virtual time)
    observers: list[Observer] = field(default_factory=list)
    journal_error: str | None = None       # why records are waiting, for the displays
    failed_at: int | None = None           # the instant of that failure: retry a period later
    # Records not yet on disk (the journal failed), in order, with the stamps of their moment.
    backlog: list[tuple[str, int, dict[str, Any], Stamp]] = field(default_factory=list)
    language: str = "en"                   # the panels' (SPEC §15: the match's, else the device's)
    # A snapshot of the engine is journaled every `snapshot_every` records (see SNAPSHOT_EVERY).
    snapshot_every: int = SNAPSHOT_EVERY
    since_snapshot: int = 0                # records journaled since the last snapshot
    # Set when the engine's history leaves out entries before this serial (restored from a
    # snapshot, or cut to `undo_kept` player actions): a deeper undo first rebuilds the whole
    # history from the journal.
    history_floor: int | None = None
    undo_kept: int = UNDO_KEPT             # player actions the history keeps (see UNDO_KEPT)
    # Called after each snapshot is journaled (the service: `gc.freeze`, see service.py).
    after_snapshot: Callable[[], None] | None = None
    # Group commit (the service's loop): records wait in `backlog` until `commit`, which
    # writes them all with one sync before anything is shown; a quiet edge (see `feed`) is
    # written at once without a sync of its own and made durable by the next one.
    group: bool = False
    # Records written without a sync (quiet edges), until a sync covers them: a failed write
    # or sync puts them back at the head of `backlog`.
    unsynced: list[tuple[str, int, dict[str, Any], Stamp]] = field(default_factory=list)
    _commit_due: bool = False              # a record waits that must be synced at `commit`
    _last_t: int | None = None             # the instant of the last record made (on disk or not)
    # Effects told at `commit`, with the engine that made them.
    _untold: list[tuple[Engine, list[Effect]]] = field(default_factory=list)
    _telling: Engine | None = None         # the engine of the effects told now (`commit`)

    def feed(self, event: Input) -> list[Effect]:
        """Apply one input; journal it with its effects; then tell the observers.

        Under group commit (`group`), a *quiet* edge — a button edge with no effect that
        changes nothing in the match but its instant (a tap's release, a bounce) — is written
        at once but not synced: the next sync makes it durable, in order. Nothing shown
        depends on it, and a power cut that loses it leaves a journal ending with its press,
        which recovery resumes with every button up (`Recover`): the very match shown. Only
        while the journal is healthy and nothing waits before it; otherwise it goes with the
        others."""
        before = self.engine.match
        engine, effects = self.engine.feed(event)
        if self.history_floor is not None and _undo_fell_short(effects):
            # An undo (the socket's or the panel's) looked past the history kept in memory.
            self._rebuild_history()
            engine, effects = self.engine.feed(event)
        self.engine = engine
        if self.journal is not None:
            # As the engine says it: an edge of the PIN's entry without its button.
            recorded = self.engine.recorded or event
            quiet = (self.group and isinstance(event, ButtonEdge) and not effects
                     and engine.match.differs_only_in_instant(before))
            self._write("input", event.t, {"input": input_data(recorded),
                                           "effects": effects_data(effects)}, quiet)
            # A press waits for one fsync: the snapshot goes with a tick unless long overdue.
            self._snapshot_if_due(2 * self.snapshot_every)
        self._report(effects)
        return effects

    def advance(self, t: int) -> list[Effect]:
        """Fire the timers due up to `t`; journal them, or a checkpoint while a clock runs."""
        self.engine, effects = self.engine.advance(t)
        if self.journal is not None and (effects or self._checkpoint_due(t)):
            self._write("tick", t, {"effects": effects_data(effects)})
            self._snapshot_if_due(self.snapshot_every)
        self._report(effects)
        return effects

    def checkpoint(self, t: int) -> None:
        """Bring the match to `t` and journal that instant (a clean stop, the end of a run),
        with every record waiting before it."""
        self.engine, effects = self.engine.advance(t)
        wrote = self.journal is not None and (effects or self._last_record_t() != t)
        if wrote:
            self._write("tick", t, {"effects": effects_data(effects)})
        self._report(effects)
        if self.group or not wrote:
            self.commit(everything=True)

    @property
    def commit_due(self) -> bool:
        """Whether `commit` has records to write and sync (group commit)."""
        return self.journal is not None and self._commit_due

    def commit(self, everything: bool = False) -> None:
        """Group commit: write the records waiting since the last commit with one sync, then
        tell the observers their effects. `everything`: the quiet records too, even when no
        other waits (a stop; the next match loaded). A failed write keeps them all in
        `backlog` (the next record tries again, as without group commit)."""
        if self.journal is not None and (self._commit_due or (
                everything and (self.backlog or self.unsynced))):
            self._commit_due = False
            self._write_backlog(self.engine.now, sync_all=everything)
        untold, self._untold = self._untold, []
        try:
            for engine, effects in untold:
                self._telling = engine
                self._tell(effects)
        finally:
            self._telling = None

    def next_wakeup(self) -> int | None:
        """The next instant `advance` has work: a timer, or a checkpoint while a clock runs."""
        due = self.engine.next_deadline()
        checkpoint = self._next_checkpoint()
        if checkpoint is not None and (due is None or checkpoint < due):
            return checkpoint
        return due

    def close(self) -> None:
        """Close the journal, once more trying to write the records that wait for it."""
        if self.journal is not None:
            if self.backlog or self.unsynced:
                if isinstance(self.journal, DeferredJournal):
                    self.journal.retry_now()
                self._write_backlog(self.engine.now, sync_all=True)
            self.journal.close()
        self._commit_due = False
        self.commit()       # the observers hear what they have not heard yet

    def _next_checkpoint(self) -> int | None:
        journal, match = self.journal, self.engine.match
        # While a clock runs or a break counts down, a power cut must cost at most one interval.
        last_t = self._last_record_t()
        if journal is None or last_t is None or self.checkpoint_ns is None or (
                match.running_side is None and match.next_deadline() is None):
            return None
        due = last_t + self.checkpoint_ns
        if self.failed_at is not None:       # not again at once: that would spin on a dead disk
            due = max(due, self.failed_at + self.checkpoint_ns)
        return due

    def _last_record_t(self) -> int | None:
        """The instant of the last record journaled or waiting to be."""
        if self._last_t is not None:
            return self._last_t
        return self.journal.last_t if self.journal is not None else None

    def _checkpoint_due(self, t: int) -> bool:
        due = self._next_checkpoint()
        return due is not None and t >= due

    def _write(self, kind: str, t: int, data: dict[str, Any], quiet: bool = False) -> None:
        """Journal a record; if the journal fails, keep it (and every later one) in order until
        a write succeeds again. The match goes on in memory meanwhile, and the displays say the
        record is not being kept. Under group commit the record waits for `commit`, or, quiet
        (see `feed`), is written at once without a sync."""
        self.since_snapshot += 1
        self._last_t = t
        entry = (kind, t, data, self.stamps())
        assert self.journal is not None
        write = getattr(self.journal, "write", None)
        if (quiet and write is not None and not self.backlog and self.journal_error is None
                and _writes_without_sync(self.journal)):
            try:
                write(*entry)
            except JournalError as exc:
                self.backlog.append(entry)
                self._failed(exc, t)
                return
            self.unsynced.append(entry)
            return
        self.backlog.append(entry)
        if self.group:
            self._commit_due = True
            return
        self._write_backlog(t)

    def _snapshot_if_due(self, after: int) -> None:
        """Journal the engine's snapshot right after the record it stands at (same instant, so
        a replay to that record has exactly this engine), once `after` records went by."""
        if self.since_snapshot < after:
            return
        if self.history_floor is not None and history_floor(self.engine) is None:
            self._rebuild_history()      # what the snapshot keeps reaches past what we have
        self._write(SNAPSHOT_KIND, self.engine.now,
                    engine_data(self.engine, cut=self.history_floor is not None))
        self.since_snapshot = 0
        if self.group:      # with the records waiting before it: the trim needs it on disk
            self._commit_due = False
            self._write_backlog(self.engine.now)
        # What no undo of `undo_kept` in a row nor a press in progress can reach goes: it is in
        # the journal. Not while records wait for it (a failing card): the rebuild would have
        # no journal to read.
        if not self.backlog:
            self.engine, left_out = trimmed(self.engine, self.undo_kept)
            if left_out and self.engine.log is not None:
                self.history_floor = _oldest_serial(self.engine)
        if self.after_snapshot is not None:
            self.after_snapshot()

    def _rebuild_history(self) -> None:
        """The whole history, for an engine whose history left its start out (restored from
        a snapshot, or cut to what `undo_kept` undos reach): the journal replayed from its
        header, and the records still waiting for it."""
        assert self.journal is not None and self.history_floor is not None
        try:
            writer = (self.journal.writer if isinstance(self.journal, DeferredJournal)
                      else self.journal)
            if isinstance(writer, JournalWriter):
                # What waits (group commit, quiet edges) and what it holds unwritten (no
                # fsync per record) go first; what cannot be written is replayed below.
                self._write_backlog(self.engine.now, sync_all=True)
                writer.sync()
            check = self.engine.rules.arbiter_pin     # its pepper goes on (never journaled)
            full = replay(JournalStream.open(self.journal.path),
                          pepper=check.pepper if check is not None else None).engine
            for kind, t, data, _ in self.backlog:
                if kind in ("input", "tick"):
                    full, _ = _replay_step(full, kind, t, data)
            full, _ = full.advance(self.engine.now)
        except (GammonclockError, OSError) as exc:
            log.error("cannot rebuild the match's history from %s, so undo reaches only as far "
                      "back as the last snapshot: %s", self.journal.path, exc)
            self.history_floor = None
            return
        if (full.match, full.buttons, full.seq, full.serials) != (
                self.engine.match, self.engine.buttons, self.engine.seq, self.engine.serials):
            log.error("the replay of %s differs from the match in play; undo reaches only as "
                      "far back as the last snapshot", self.journal.path)
        else:
            self.engine = full
        self.history_floor = None

    def _write_backlog(self, t: int, sync_all: bool = False) -> None:
        """Write the records waiting, in order, with one sync that covers the quiet ones
        written before them too (`sync_all`: those alone as well). All or nothing: on failure
        the quiet ones go back at the head of the backlog (the writer cut them from the
        file)."""
        assert self.journal is not None
        if not self.backlog and not (sync_all and self.unsynced):
            return
        try:
            batch = getattr(self.journal, "append_batch", None)
            if not self.backlog:            # quiet records alone: their sync
                sync = getattr(getattr(self.journal, "writer", self.journal), "sync", None)
                if sync is not None:
                    sync()
            elif len(self.backlog) > 1 and batch is not None and self.journal_error is None:
                batch(list(self.backlog))      # a group: one sync
                self.backlog.clear()
            else:
                # One record; or records that waited for a failing card, one at a time as it
                # comes back (each one written is one fewer to keep).
                while self.backlog:
                    self.journal.append(*self.backlog[0])
                    self.backlog.pop(0)
                    self.unsynced.clear()      # the sync covered them
        except JournalError as exc:
            self._failed(exc, t)
            return
        self.unsynced.clear()
        if self.journal_error is not None:
            log.warning("the journal is written again; nothing was lost")
        self.journal_error, self.failed_at = None, None

    def _failed(self, exc: JournalError, t: int) -> None:
        """A write or a sync failed: every record not durable waits in the backlog, in order."""
        if self.unsynced:
            self.backlog[:0] = self.unsynced
            self.unsynced.clear()
        if self.journal_error is None:
            log.error("%s", exc)
        self.journal_error = f"{exc} ({len(self.backlog)} records waiting)"
        self.failed_at = t

    def _report(self, effects: list[Effect]) -> None:
        """Tell the observers, once the records are on disk (group commit: at `commit`)."""
        if not effects:
            return
        if self.group:
            self._untold.append((self.engine, effects))
        else:
            self._tell(effects)

    def _tell(self, effects: list[Effect]) -> None:
        if effects:
            engine = self._telling or self.engine
            for observe in self.observers:
                observe(engine, effects)


def _writes_without_sync(journal: JournalSink) -> bool:
    """Whether the journal writes a record at once and syncs it later (a writer with fsync:
    one opened on a card). A journal not opened yet, or one without fsync, gets the record
    with the others."""
    writer = journal.writer if isinstance(journal, DeferredJournal) else journal
    return isinstance(writer, JournalWriter) and writer.fsync


# --- starting, replaying and recovering a match ----------------------------------------------

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
                              "config_path": config_path, "version": __version__, "host": host}
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


@dataclass
class Replayed:
    engine: Engine
    config: Config
    read: JournalSource
    diverged: list[str]        # records whose effects the engine now computes differently
    # Snapshots whose engine is not the replay's at their record (a full replay checks them).
    snapshots_differ: list[str] = field(default_factory=list)
    # The engine came from a snapshot that left out the history before this serial.
    history_floor: int | None = None


@dataclass(frozen=True)
class ReplayStep:
    """One journal record replayed: the engine after it, the effects the engine computes for
    it now, and the record itself (its instant, its stamps, what it recorded)."""

    engine: Engine
    effects: list[Effect]
    record: Record


# Sees every input and tick record replayed, effects or none, with its record.
StepObserver = Callable[[ReplayStep], None]


class _Replay:
    """A replay in progress, fed one record at a time (by `replay`, or by `verify`'s walk).

    `keep`: the history is cut to that many player actions every SNAPSHOT_EVERY records, so
    that the replay's memory does not grow with the journal (None: the whole history is kept);
    an undo that finds no player action in what is kept is replayed again on the whole history,
    read once more from the journal's header."""

    def __init__(self, read: JournalSource, config: Config, engine: Engine,
                 observe: Observer | None, observe_steps: StepObserver | None,
                 keep: int | None = None, cut: bool = False) -> None:
        self.read, self.config, self.engine = read, config, engine
        self.observe, self.observe_steps = observe, observe_steps
        self.diverged: list[str] = []
        self.snapshots_differ: list[str] = []
        self.keep = keep
        self.cut = cut              # the history leaves out entries that acted
        self.since_trim = 0

    def step(self, record: Record) -> None:
        if record.kind == SNAPSHOT_KIND:
            if not same_snapshot(record.data, self.engine, self.config.rules, self.cut):
                self.snapshots_differ.append(f"record {record.seq}")
            return
        if record.kind not in ("input", "tick"):
            return
        try:
            self.engine, effects = _replay_step(self.engine, record.kind, record.t, record.data)
            if self.cut and record.kind == "input" and _undo_fell_short(effects):
                self.engine, effects = _replay_step(self._whole_before(record), record.kind,
                                                    record.t, record.data)
                self.cut = False
        except InputError as exc:   # a record this firmware cannot take: the journal's fault
            raise RecordError(f"{self.read.path}: record {record.seq} (line "
                              f"{self.read.line_of(record)}): {exc}") from None
        self.since_trim += 1
        if self.keep is not None and self.since_trim >= SNAPSHOT_EVERY:
            self.engine, left_out = trimmed(self.engine, self.keep)
            self.cut = self.cut or left_out
            self.since_trim = 0
        if effects_diverge(effects, record.data.get("effects")):
            self.diverged.append(f"record {record.seq}")
        if self.observe_steps is not None:
            self.observe_steps(ReplayStep(self.engine, effects, record))
        if self.observe and effects:
            self.observe(self.engine, effects)

    def _whole_before(self, record: Record) -> Engine:
        """The engine just before `record` with its whole history: the journal replayed again
        from its header (an undo reached past what this replay kept)."""
        whole = _Replay(self.read, self.config, Engine.start(self.config.rules,
                                                              at=self.read.header.t), None, None)
        for earlier in self.read.from_start():
            if earlier.seq >= record.seq:
                break
            if earlier.seq > 0:
                whole.step(earlier)
        return whole.engine

    def result(self, history_floor: int | None = None) -> Replayed:
        if history_floor is None and self.cut and self.engine.log is not None:
            history_floor = _oldest_serial(self.engine)
        return Replayed(self.engine, self.config, self.read, self.diverged,
                        self.snapshots_differ, history_floor)


def _oldest_serial(engine: Engine) -> int:
    entry = engine.log
    assert entry is not None
    while entry.prev is not None:
        entry = entry.prev
    return entry.serial


def replay(read: JournalSource, observe: Observer | None = None, *,
           observe_steps: StepObserver | None = None, pepper: bytes | None = None,
           keep: int | None = None) -> Replayed:
    """The match a journal holds, rebuilt by the same engine (one source of truth), record by
    record from its header. A record this firmware cannot take raises RecordError naming the
    file, the record and its line. Each snapshot on the way is compared with the replay.

    `observe` sees the engine and the effects of each record that has some (as a session's
    observers do); `observe_steps` sees every record replayed, with its effects. `pepper`: the
    clock's own, to go on playing (a replay needs none: it compares the journaled digests).
    `keep`: the history the engine keeps, in player actions (`_Replay`; None: all of it), so a
    tool's memory does not grow with the journal; `Replayed.history_floor` then says it was
    cut."""
    header = read.header
    config = config_of_header(header.data, str(read.path), pepper)
    run = _Replay(read, config, Engine.start(config.rules, at=header.t), observe, observe_steps,
                  keep)
    for record in read.each():
        run.step(record)
    return run.result()


def replay_from_snapshot(path: str | Path, pepper: bytes | None = None) -> Replayed:
    """The match a journal holds, from its last snapshot and the records after it (the whole
    journal when it has none): what recovery needs, in a time that does not grow with the
    journal. RecordError for a snapshot or a record this firmware cannot take. `pepper`
    (`pin.pepper_of` the device key): a keyed PIN hash can judge new entries."""
    read = open_from_snapshot(path)
    config = config_of_header(read.header.data, read.path, pepper)
    engine, floor = Engine.start(config.rules, at=read.header.t), None
    if read.start.kind == SNAPSHOT_KIND:
        try:
            engine, floor = engine_from(read.start.data, config.rules)
        except (SnapshotError, TypeError, ValueError) as exc:
            raise RecordError(f"{read.path}: record {read.start.seq} (line "
                              f"{read.line_of(read.start)}): the snapshot cannot be read back: "
                              f"{exc}") from None
    run = _Replay(read, config, engine, None, None, cut=floor is not None)
    for record in read.each():
        run.step(record)
    return run.result(floor)


@dataclass
class Checked:
    """`gammonclock verify`: the journal's verdict, and the match replayed in the same walk (None
    when its header's config cannot be read: `config_problem` says why)."""

    verdict: Verdict
    replayed: Replayed | None
    config_problem: str | None = None


def verify_and_replay(path: str | Path, key: bytes | None, *,
                      no_key: str = NO_KEY_GIVEN) -> Checked:
    """Check the chain, and every seal when `key` made them, and replay the match in one walk
    through the journal: `journal.verify`'s verdict (intact, tampered, sealed by another device,
    or seal not checked: `no_key` says why there is no key). A snapshot that is not the replay's
    engine at its record fails the check like an altered record. RecordError as `journal.verify`
    (a record not understood, the chain and seals all good)."""
    try:
        read = JournalStream.open(path)    # the header, for the config; then one walk
        config = config_of_header(read.header.data, read.path)
    except (JournalError, ConfigError) as exc:
        # The chain says what is wrong with a header that cannot be read (altered, another key).
        return Checked(verify(path, key, no_key=no_key), None, str(exc))
    run = _Replay(read, config, Engine.start(config.rules, at=read.header.t), None, None,
                  keep=UNDO_KEPT)      # its memory does not grow with the journal

    def observe(record: Record) -> None:
        if record.seq > 0:
            run.step(record)
            read.last = record
    verdict = verify(path, key, observe, no_key=no_key)
    if verdict.intact and run.snapshots_differ:
        verdict = replace(verdict, intact=False,
                          message=f"{run.snapshots_differ[0]}: its snapshot is not the replay's "
                                  f"match at that record")
    return Checked(verdict, run.result())


def effects_diverge(effects: list[Effect], recorded: object) -> bool:
    """Whether the effects computed now differ from those a record holds. Each recorded effect
    is compared on the keys it has only, so a journal written before a field was added to an
    effect still replays the same; a recorded key with another value, or an effect missing or
    extra, is a divergence."""
    if not isinstance(recorded, list) or len(recorded) != len(effects):
        return True
    for now, then in zip(effects_data(effects), recorded, strict=True):
        if not isinstance(then, dict) or any(key not in now or now[key] != value
                                             for key, value in then.items()):
            return True
    return False


def _replay_step(engine: Engine, kind: str, t: int, data: dict[str, Any]
                 ) -> tuple[Engine, list[Effect]]:
    if t < engine.now:
        raise InputError(f"its instant ({t} ns) is before the match's ({engine.now} ns): "
                         f"instants never go back")
    if kind == "input":
        return engine.feed(input_from(t, data["input"]))
    return engine.advance(t)


KeySource = Callable[[], bytes]


def recover(path: str | Path, key: bytes, stamps: StampSource, *,
            checkpoint_ns: int, observers: list[Observer] | None = None
            ) -> tuple[Session, list[str]]:
    """Replay a journal from its last snapshot and go on with it: the match resumes paused at
    its last record.

    A torn last line is dropped (a `torn` record says so). A damaged record in the middle stops
    the replay there; that file is kept as it is and the match goes on in a new journal that
    starts with the whole records before the damage.
    """
    return resume(replay_from_snapshot(path, pepper_of(key)), key, stamps,
                  checkpoint_ns=checkpoint_ns,
                  observers=observers)


def resume(replayed: Replayed, key: bytes | KeySource, stamps: StampSource, *,
           checkpoint_ns: int, observers: list[Observer] | None = None
           ) -> tuple[Session, list[str]]:
    """`recover` for a journal already replayed. When the journal cannot be written now (a
    read-only or full SD card), the match goes on all the same and its records wait in order
    until it can (`DeferredJournal`); `key` may then be a function that loads the key later."""
    read = replayed.read
    notes = read.problems()
    check = replayed.engine.rules.arbiter_pin
    if check is not None and not check.can_digest:
        notes.append(f"{read.path}: the arbiter PIN's hash is keyed by a device key not given "
                     "here: every PIN entered at the panels fails until the clock runs with "
                     "its key")
    if replayed.diverged:
        notes.append(f"{read.path}: {len(replayed.diverged)} records replay differently with "
                     "this version")
    last, stamp, key_of = read.last, stamps(), _key_source(key)
    if read.stopped:
        path = Path(read.path).with_name(Path(read.path).stem + ".continued.jsonl")
        journal, problem = open_or_defer(
            path, lambda: _continue_in_new_journal(read, path, key_of(), stamp), last.t,
            retry_ns=COPY_RETRY_NS)
        notes.append(f"the match goes on in {path}")
    else:
        journal, problem = open_or_defer(
            Path(read.path), lambda: JournalWriter.reopen(read, key_of(), last.t, stamp),
            last.t)
    session = Session(replayed.engine, journal, stamps, checkpoint_ns, list(observers or []),
                      language=replayed.config.device.language,
                      history_floor=replayed.history_floor,
                      since_snapshot=_records_since_snapshot(read))
    if problem is not None:
        session.journal_error = problem
        notes.append(f"the journal cannot be written now; its records wait in memory: {problem}")
    session.feed(Recover(last.t))
    return session, notes


def _records_since_snapshot(read: JournalSource) -> int:
    """The records after the last snapshot (after the header when there is none)."""
    start = read.start if isinstance(read, JournalStream) else read.header
    return read.last.seq - start.seq


def _key_source(key: bytes | KeySource) -> KeySource:
    if callable(key):
        return key
    fixed = key
    return lambda: fixed


COPY_RETRY_NS = 5_000_000_000   # a continuation that could not be copied: tried this often


def _continue_in_new_journal(read: JournalSource, path: Path, key: bytes, stamp: Stamp,
                             changes: dict[str, Any] | None = None) -> JournalWriter:
    """A new journal at `path` holding every whole record `read` has, sealed with `key`, its
    header naming the journal it continues; `changes`: header keys set beside (another clock's
    match, `continuation.py`)."""
    header = dict(read.header.data)
    for name in ("format", "key_id"):
        header.pop(name, None)
    header["continues"] = {"file": Path(read.path).name, "records": read.count,
                           "last_mac": read.last.mac}
    header.update(changes or {})
    # The copy is written under a name no reader takes for a journal, synced once, and only
    # then given its name: a copy cut short (a kill, a power cut, a start that timed out) never
    # stands as the match's journal beside its original. One fsync, not one per record: on an
    # SD card thousands of fsyncs would take a minute.
    partial = path.with_name(path.name + ".partial")
    with contextlib.suppress(OSError):
        partial.unlink()      # what an earlier cut-short copy left
    writer = JournalWriter.create(partial, key, header, read.header.t, stamp, fsync=False)
    try:
        for record in read.from_start():
            if record.seq > 0:
                writer.append(record.kind, record.t, record.data, _stamp_of(record))
        writer.sync()
        os.rename(partial, path)
    except (JournalError, OSError) as exc:
        writer.discard()      # half a copy would stand in the way of the next try
        if isinstance(exc, JournalError):
            raise
        raise JournalError(f"{path}: cannot continue the match here: {exc.strerror}") from None
    writer.path = path
    writer.fsync = True
    fsync_dir(path.parent)
    return writer


def _stamp_of(record: Record) -> Stamp:
    return Stamp(record.mono, record.boot, record.wall)

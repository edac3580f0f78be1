"""A match being kept: the engine, its journal and whoever shows what happened.

The device service and the simulator both run a `Session`. Every input and every timer goes
through it in the same order: the engine computes, the journal writes and fsyncs the record, and
only then do the observers (displays, buzzer, the simulator's account) see the effects. Under the
service's group commit (`group`) the records of a step are synced together at `commit`, and a
quiet edge (a tap's release) is written at once and synced with the next record (`feed`), and so is
a bare checkpoint until the power-cut bound is due (`SYNC_CHECKPOINTS`). After a
power cut or a crash, `recover` replays the journal through the same engine — from its last
snapshot on, which the session journals every SNAPSHOT_EVERY records — and resumes the match
paused at the instant of its last record, so the outage is charged to nobody.
"""

from __future__ import annotations

import contextlib
import logging
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gammonclock.core.effects import Effect
from gammonclock.core.engine import ButtonEdge, Engine, Input
from gammonclock.core.match import Recover
from gammonclock.core.match_state import Phase
from gammonclock.core.pin import pepper_of
from gammonclock.errors import GammonclockError
from gammonclock.journal.durable import fsync_dir
from gammonclock.journal.inputs import effects_data, input_data
from gammonclock.journal.reader import JournalSource, JournalStream
from gammonclock.journal.records import SNAPSHOT_KIND, JournalError, Record, Stamp
from gammonclock.journal.replay import (
    SNAPSHOT_EVERY,
    UNDO_KEPT,
    Observer,
    Replayed,
    diverged_note,
    oldest_serial,
    replay,
    replay_from_snapshot,
    replay_step,
    undo_fell_short,
)
from gammonclock.journal.snapshot import (
    engine_data,
    history_floor,
    trimmed,
)
from gammonclock.journal.writer import (
    DeferredJournal,
    JournalSink,
    JournalWriter,
    keep_ahead,
    open_or_defer,
)

log = logging.getLogger(__name__)


StampSource = Callable[[], Stamp]

# Checkpoint intervals a running clock may go without a sync (group commit): a checkpoint is
# written every interval (a kill -9 loses at most one: the page cache is the kernel's) and synced
# alone only at this many (a power cut loses at most 6 × 5 s = 30 s, the age at which Linux
# writes dirty pages back by itself). A press's sync makes the checkpoints before it durable, so
# a match pays one sync per tap plus one per 30 s a clock runs untouched, not one per 5 s.
SYNC_CHECKPOINTS = 6


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
    # Under group commit a checkpoint is written every `checkpoint_ns` (a kill -9 costs at most
    # that) but synced alone only once the last synced record is `sync_checkpoints` intervals
    # old (a power cut costs at most that: 30 s by default, the kernel's own writeback age);
    # the next press's sync makes the others durable. See `_next_checkpoint`.
    sync_checkpoints: int = SYNC_CHECKPOINTS
    _commit_due: bool = False              # a record waits that must be synced at `commit`
    _last_t: int | None = None             # the instant of the last record made (on disk or not)
    _synced_t: int | None = None           # the instant of the last record synced
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
        if self.history_floor is not None and undo_fell_short(effects):
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
            # A bare checkpoint is quiet (written, synced with the next record) until the
            # power-cut bound is due: see `sync_checkpoints`.
            quiet = self.group and not effects and not self._sync_due(t)
            self._write("tick", t, {"effects": effects_data(effects)}, quiet)
            self._snapshot_if_due(self.snapshot_every, quiet)
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

    def keep_ahead(self) -> None:
        """The clock's loop is idle: the journal's zeros filled ahead (an append's sync then
        writes no metadata), or cut off once the match is over (journal/prealloc.py)."""
        if self.journal is not None and not self.backlog:
            keep_ahead(self.journal, self.engine.match.play_phase is Phase.MATCH_OVER)

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
        # The power-cut bound, exactly: from the last record synced, or to be synced at the
        # coming commit (a press that starts a clock after a long pause), never before now.
        synced = last_t if self._commit_due else self._synced_t_or_journal()
        if self.group and synced is not None:
            due = min(due, max(synced + self.sync_checkpoints * self.checkpoint_ns,
                               self.engine.now))
        if self.failed_at is not None:       # not again at once: that would spin on a dead disk
            due = max(due, self.failed_at + self.checkpoint_ns)
        return due

    def _last_record_t(self) -> int | None:
        """The instant of the last record journaled or waiting to be."""
        if self._last_t is not None:
            return self._last_t
        return self.journal.last_t if self.journal is not None else None

    def _synced_t_or_journal(self) -> int | None:
        """The instant of the last record a sync made durable."""
        if self._synced_t is not None:
            return self._synced_t
        return self.journal.last_t if self.journal is not None else None

    def _sync_due(self, t: int) -> bool:
        """Whether a checkpoint at `t` must be synced alone: the last synced record is
        `sync_checkpoints` intervals old (or records wait to be synced anyway)."""
        synced = self._synced_t_or_journal()
        return (self.checkpoint_ns is None or synced is None or self._commit_due
                or t >= synced + self.sync_checkpoints * self.checkpoint_ns)

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

    def _snapshot_if_due(self, after: int, quiet: bool = False) -> None:
        """Journal the engine's snapshot right after the record it stands at (same instant, so
        a replay to that record has exactly this engine), once `after` records went by.
        `quiet`: after a quiet checkpoint, written as it is (synced with the next record; the
        trim below needs it in the file, not on the card: a power cut that loses it leaves the
        journal replayable from the snapshot before)."""
        if self.since_snapshot < after:
            return
        if self.history_floor is not None and history_floor(self.engine) is None:
            self._rebuild_history()      # what the snapshot keeps reaches past what we have
        self._write(SNAPSHOT_KIND, self.engine.now,
                    engine_data(self.engine, cut=self.history_floor is not None), quiet)
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
                self.history_floor = oldest_serial(self.engine)
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
            pepper = check.pepper if check is not None else None
            full = replay(JournalStream.open(self.journal.path), pepper=pepper).engine
            for kind, t, data, _ in self.backlog:
                if kind in ("input", "tick"):
                    full, _ = replay_step(full, kind, t, data, pepper)
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
        self._synced_t = self._last_t
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
        notes.append(diverged_note(replayed.diverged, "jr.diverged", path=read.path))
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
                             changes: dict[str, Any] | None = None,
                             then: list[tuple[str, int, dict[str, Any], Stamp]] | None = None
                             ) -> JournalWriter:
    """A new journal at `path` holding every whole record `read` has, sealed with `key`, its
    header naming the journal it continues; `changes`: header keys set beside (another clock's
    match, `continuation.py`); `then`: this clock's records after the copied ones, in the same
    copy (the journal never stands under its name without them: another clock's match handed
    over here)."""
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
        for kind, t, data, own in then or []:
            writer.append(kind, t, data, own)
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

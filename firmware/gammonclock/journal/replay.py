"""A match rebuilt from its journal by the same engine (SPEC §11): from the header (`replay`), from
the last snapshot (`replay_from_snapshot`, what recovery needs), or checked and replayed in one
walk (`verify_and_replay`, what `gammonclock verify` and the hall's archive do).

The live history is cut to UNDO_KEPT player actions every SNAPSHOT_EVERY records, in a session
and in a replay alike, so that neither one's memory grows with the match."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from gammonclock.config.loading import Config, ConfigError, config_of_header
from gammonclock.config.problems import Counted, Problem, message_of
from gammonclock.core.effects import Effect, Refused
from gammonclock.core.engine import Engine
from gammonclock.core.match import ArbiterHandover
from gammonclock.core.reasons import Reason

from .inputs import InputError, effects_diverge, input_from
from .reader import JournalSource, JournalStream, open_from_snapshot
from .records import SNAPSHOT_KIND, JournalError, Record, RecordError
from .snapshot import (
    SnapshotError,
    engine_from,
    same_snapshot,
    trimmed,
)
from .verify import NO_KEY_GIVEN, Verdict, verify

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

def undo_fell_short(effects: list[Effect]) -> bool:
    """Whether these effects hold an undo refused for finding no player action (in a history
    that may have been cut: the journal may still hold one)."""
    return any(isinstance(e, Refused) and e.reason is Reason.UNDO_NOTHING for e in effects)

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
                 keep: int | None = None, cut: bool = False,
                 pepper: bytes | None = None) -> None:
        self.read, self.config, self.engine = read, config, engine
        self.pepper = pepper        # the clock's own, for a hand-over's PIN (`replay_step`)
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
            self.engine, effects = replay_step(self.engine, record.kind, record.t, record.data,
                                               self.pepper)
            if self.cut and record.kind == "input" and undo_fell_short(effects):
                self.engine, effects = replay_step(self._whole_before(record), record.kind,
                                                    record.t, record.data, self.pepper)
                self.cut = False
        except InputError as exc:   # a record this firmware cannot take: the journal's fault
            raise RecordError(Problem("jf.record_at", path=self.read.path, seq=record.seq,
                                      line=self.read.line_of(record),
                                      problem=message_of(exc))) from None
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
                                                              at=self.read.header.t), None, None,
                        pepper=self.pepper)
        for earlier in self.read.from_start():
            if earlier.seq >= record.seq:
                break
            if earlier.seq > 0:
                whole.step(earlier)
        return whole.engine

    def result(self, history_floor: int | None = None) -> Replayed:
        if history_floor is None and self.cut and self.engine.log is not None:
            history_floor = oldest_serial(self.engine)
        return Replayed(self.engine, self.config, self.read, self.diverged,
                        self.snapshots_differ, history_floor)

def diverged_note(diverged: list[str], key: str = "jr.diverged_first", **more: object
                  ) -> Problem:
    """What a reader is told of `Replayed.diverged` (its entries "record N"): how many records
    this firmware replays differently, in each language's plural ("5 records", "5 записей"),
    and the first of them."""
    return Problem(key, records=Counted("records", len(diverged)),
                   first=diverged[0].removeprefix("record "), **more)

def oldest_serial(engine: Engine) -> int:
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
                  keep, pepper=pepper)
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
            engine, floor = engine_from(read.start.data, config.rules, pepper)
        except (SnapshotError, TypeError, ValueError) as exc:
            raise RecordError(f"{read.path}: record {read.start.seq} (line "
                              f"{read.line_of(read.start)}): the snapshot cannot be read back: "
                              f"{exc}") from None
    run = _Replay(read, config, engine, None, None, cut=floor is not None, pepper=pepper)
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
        return Checked(verify(path, key, no_key=no_key), None, message_of(exc))
    run = _Replay(read, config, Engine.start(config.rules, at=read.header.t), None, None,
                  keep=UNDO_KEPT)      # its memory does not grow with the journal

    def observe(record: Record) -> None:
        if record.seq > 0:
            run.step(record)
            read.last = record
    verdict = verify(path, key, observe, no_key=no_key)
    if verdict.intact and run.snapshots_differ:
        verdict = replace(verdict, intact=False,
                          message=Problem("jv.snapshot",
                                          record=run.snapshots_differ[0].removeprefix("record ")))
    return Checked(verdict, run.result())

def replay_step(engine: Engine, kind: str, t: int, data: dict[str, Any],
                pepper: bytes | None = None) -> tuple[Engine, list[Effect]]:
    """One input or tick record fed to `engine`. `pepper` (`pin.pepper_of` the device key, on
    the clock that holds it): a hand-over's keyed PIN hash can judge new entries (SPEC §13.4;
    the journal keeps the hash only)."""
    if t < engine.now:
        raise InputError(Problem("jf.before", t=t, now=engine.now))
    if kind == "input":
        event = input_from(t, data["input"])
        if isinstance(event, ArbiterHandover):
            event = event.with_key(pepper)
        return engine.feed(event)
    return engine.advance(t)

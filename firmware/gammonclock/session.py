"""A match being kept: the engine, its journal and whoever shows what happened.

The device service and the simulator both run a `Session`. Every input and every timer goes
through it in the same order: the engine computes, the journal writes and fsyncs the record, and
only then do the observers (displays, buzzer, the simulator's account) see the effects. After a
power cut or a crash, `recover` replays the journal through the same engine and resumes the match
paused at the instant of its last record, so the outage is charged to nobody.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import __version__
from .arbiter import parse_command
from .config import Config, parse_config
from .dice import parse_line
from .effects import Effect
from .engine import ButtonEdge, Engine, Input
from .journal import (
    JOURNALS_DIR,
    JournalError,
    JournalRead,
    JournalWriter,
    Record,
    Stamp,
    read_journal,
)
from .match import ArbiterAction, DiceEvent, Recover
from .sides import Button

log = logging.getLogger(__name__)

Observer = Callable[[Engine, list[Effect]], None]
StampSource = Callable[[], Stamp]


# --- the journal's view of inputs and effects ------------------------------------------------

def input_data(event: Input) -> dict[str, Any]:
    if isinstance(event, ButtonEdge):
        return {"type": "edge", "button": event.button.value, "pressed": event.pressed}
    if isinstance(event, ArbiterAction):
        return {"type": "arbiter", "command": event.command.describe()}
    if isinstance(event, DiceEvent):
        return {"type": "dice", "line": event.message.to_line()}
    return {"type": "recover"}


def input_from(t: int, data: dict[str, Any]) -> Input:
    kind = data["type"]
    if kind == "edge":
        return ButtonEdge(t, Button(data["button"]), bool(data["pressed"]))
    if kind == "arbiter":
        return ArbiterAction(t, parse_command(data["command"].split()))
    if kind == "dice":
        return DiceEvent(t, parse_line(data["line"]))
    if kind == "recover":
        return Recover(t)
    raise ValueError(f"unknown input type {kind!r}")


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
    journal: JournalWriter | None = None
    stamps: StampSource = field(default_factory=system_stamps)
    checkpoint_ns: int = 5_000_000_000
    observers: list[Observer] = field(default_factory=list)
    journal_error: str | None = None       # why records are waiting, for the displays
    failed_at: int | None = None           # the instant of that failure: retry a period later
    # Records not yet on disk (the journal failed), in order, with the stamps of their moment.
    backlog: list[tuple[str, int, dict[str, Any], Stamp]] = field(default_factory=list)

    def feed(self, event: Input) -> list[Effect]:
        """Apply one input; journal it with its effects; then tell the observers."""
        self.engine, effects = self.engine.feed(event)
        if self.journal is not None:
            self._write("input", event.t, {"input": input_data(event),
                                           "effects": effects_data(effects)})
        self._tell(effects)
        return effects

    def advance(self, t: int) -> list[Effect]:
        """Fire the timers due up to `t`; journal them, or a checkpoint while a clock runs."""
        self.engine, effects = self.engine.advance(t)
        if self.journal is not None and (effects or self._checkpoint_due(t)):
            self._write("tick", t, {"effects": effects_data(effects)})
        self._tell(effects)
        return effects

    def checkpoint(self, t: int) -> None:
        """Bring the match to `t` and journal that instant (a clean stop, the end of a run)."""
        self.engine, effects = self.engine.advance(t)
        if self.journal is not None and (effects or self.journal.last_t != t):
            self._write("tick", t, {"effects": effects_data(effects)})
        self._tell(effects)

    def next_wakeup(self) -> int | None:
        """The next instant `advance` has work: a timer, or a checkpoint while a clock runs."""
        due = self.engine.next_deadline()
        checkpoint = self._next_checkpoint()
        if checkpoint is not None and (due is None or checkpoint < due):
            return checkpoint
        return due

    def close(self) -> None:
        if self.journal is not None:
            self.journal.close()

    def _next_checkpoint(self) -> int | None:
        journal, match = self.journal, self.engine.match
        # While a clock runs or a break counts down, a power cut must cost at most one interval.
        if journal is None or journal.last_t is None or (
                match.running_side is None and match.next_deadline() is None):
            return None
        due = journal.last_t + self.checkpoint_ns
        if self.failed_at is not None:       # not again at once: that would spin on a dead disk
            due = max(due, self.failed_at + self.checkpoint_ns)
        return due

    def _checkpoint_due(self, t: int) -> bool:
        due = self._next_checkpoint()
        return due is not None and t >= due

    def _write(self, kind: str, t: int, data: dict[str, Any]) -> None:
        """Journal a record; if the journal fails, keep it (and every later one) in order until
        a write succeeds again. The match goes on in memory meanwhile, and the displays say the
        record is not being kept."""
        assert self.journal is not None
        self.backlog.append((kind, t, data, self.stamps()))
        while self.backlog:
            try:
                self.journal.append(*self.backlog[0])
            except JournalError as exc:
                if self.journal_error is None:
                    log.error("%s", exc)
                self.journal_error = f"{exc} ({len(self.backlog)} records waiting)"
                self.failed_at = t
                return
            self.backlog.pop(0)
        if self.journal_error is not None:
            log.warning("the journal is written again; nothing was lost")
        self.journal_error, self.failed_at = None, None

    def _tell(self, effects: list[Effect]) -> None:
        if effects:
            for observe in self.observers:
                observe(self.engine, effects)


# --- starting, replaying and recovering a match ----------------------------------------------

def journal_header(config_text: str, config_path: str) -> dict[str, Any]:
    return {"config": config_text, "config_path": config_path, "version": __version__,
            "host": os.uname().nodename if hasattr(os, "uname") else "unknown"}


def new_journal_path(state_dir: str | Path, wall_ns: int, suffix: str = "") -> Path:
    stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime(wall_ns // 1_000_000_000))
    directory = Path(state_dir) / JOURNALS_DIR
    path = directory / f"match-{stamp}{suffix}.jsonl"
    n = 1
    while path.exists():
        n += 1
        path = directory / f"match-{stamp}{suffix}-{n}.jsonl"
    return path


def latest_journal(state_dir: str | Path) -> Path | None:
    journals = sorted((Path(state_dir) / JOURNALS_DIR).glob("match-*.jsonl"),
                      key=lambda p: (p.stat().st_mtime_ns, p.name))
    return journals[-1] if journals else None


@dataclass
class Replayed:
    engine: Engine
    config: Config
    read: JournalRead
    diverged: list[str]        # records whose effects the engine now computes differently


def replay(read: JournalRead, observe: Observer | None = None) -> Replayed:
    """The match a journal holds, rebuilt by the same engine (one source of truth)."""
    header = read.header
    config = parse_config(header.data["config"], f"{read.path} (header)")
    engine = Engine.start(config.rules, at=header.t)
    diverged = []
    for record in read.records[1:]:
        if record.kind == "input":
            engine, effects = engine.feed(input_from(record.t, record.data["input"]))
        elif record.kind == "tick":
            engine, effects = engine.advance(record.t)
        else:
            continue
        if effects_data(effects) != record.data.get("effects"):
            diverged.append(f"record {record.seq}")
        if observe and effects:
            observe(engine, effects)
    return Replayed(engine, config, read, diverged)


def recover(path: str | Path, key: bytes, stamps: StampSource, *, checkpoint_ns: int,
            observers: list[Observer] | None = None) -> tuple[Session, list[str]]:
    """Replay a journal and go on with it: the match resumes paused at its last record.

    A torn last line is dropped (a `torn` record says so). A damaged record in the middle stops
    the replay there; that file is kept as it is and the match goes on in a new journal that
    starts with the whole records before the damage.
    """
    return resume(replay(read_journal(path)), key, stamps, checkpoint_ns=checkpoint_ns,
                  observers=observers)


def resume(replayed: Replayed, key: bytes, stamps: StampSource, *, checkpoint_ns: int,
           observers: list[Observer] | None = None) -> tuple[Session, list[str]]:
    """`recover` for a journal already replayed."""
    read = replayed.read
    notes = read.problems()
    if replayed.diverged:
        notes.append(f"{read.path}: {len(replayed.diverged)} records replay differently with "
                     "this version")
    last = read.last
    if read.stopped:
        writer = _continue_in_new_journal(read, key, stamps())
        notes.append(f"the match goes on in {writer.path}")
    else:
        writer = JournalWriter.reopen(read, key, last.t, stamps())
    session = Session(replayed.engine, writer, stamps, checkpoint_ns, list(observers or []))
    session.feed(Recover(last.t))
    return session, notes


def _continue_in_new_journal(read: JournalRead, key: bytes, stamp: Stamp) -> JournalWriter:
    header = dict(read.header.data)
    for name in ("format", "key_id"):
        header.pop(name, None)
    header["continues"] = {"file": Path(read.path).name, "records": len(read.records),
                           "last_mac": read.last.mac}
    path = Path(read.path).with_name(Path(read.path).stem + ".continued.jsonl")
    writer = JournalWriter.create(path, key, header, read.header.t, stamp)
    for record in read.records[1:]:
        writer.append(record.kind, record.t, record.data, _stamp_of(record))
    return writer


def _stamp_of(record: Record) -> Stamp:
    return Stamp(record.mono, record.boot, record.wall)

"""A journal's effects as they finally stand, each with its place in the real world.

The journal is replayed through the engine (`session.replay`, the one source of truth), the whole
effect stream is numbered, and every `Rewound` retracts what it names (`effects.surviving`). Each
surviving effect keeps the journal record that produced it (`replay` hands over each record with
its effects), so its wall-clock instant can be told: the record's wall stamp moved by how far the
effect's instant lies from the record's (a hold restates effects at its down edge, an undo
restates earlier actions at their own instants).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..effects import Effect, surviving
from ..journal import JournalRead, Record, read_journal
from ..session import Replayed, ReplayStep, replay


@dataclass(frozen=True)
class Stamped:
    seq: int          # the effect's number in the whole stream
    effect: Effect
    record: Record    # the journal record whose step produced it

    @property
    def t(self) -> int:
        return self.effect.t

    @property
    def wall(self) -> int:
        """Wall-clock ns since the epoch: the record's stamp, moved to the effect's instant."""
        return self.record.wall + (self.effect.t - self.record.t)


@dataclass(frozen=True)
class Stream:
    read: JournalRead
    replayed: Replayed
    effects: list[Stamped]   # the surviving effects, in stream order
    total: int               # effects in the whole stream, retracted ones and `Rewound`s too


def load_stream(path: str | Path) -> Stream:
    """Read and replay a journal; raises JournalError (RecordError for a record the engine
    cannot take, naming the file, the record and its line) or ConfigError (of its header)."""
    read = read_journal(path)
    stamped: list[Stamped] = []

    def number(step: ReplayStep) -> None:
        first = len(stamped)
        stamped.extend(Stamped(first + n, e, step.record) for n, e in enumerate(step.effects))

    replayed = replay(read, observe_steps=number)
    kept = {id(e) for e in surviving([s.effect for s in stamped])}
    effects = [s for s in stamped if id(s.effect) in kept]
    return Stream(read, replayed, effects, len(stamped))

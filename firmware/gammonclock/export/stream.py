"""A journal's effects as they finally stand, each with its place in the real world.

The journal is replayed through the engine (`session.replay`, the one source of truth), the whole
effect stream is numbered, and every `Rewound` retracts what it names (`effects.surviving`). Each
surviving effect keeps the journal record that produced it, so its wall-clock instant can be told:
the record's wall stamp moved by how far the effect's instant lies from the record's (a hold
restates effects at its down edge, an undo restates earlier actions at their own instants).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..effects import Effect, surviving
from ..engine import Engine
from ..journal import JournalRead, Record, read_journal
from ..session import Replayed, replay


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


class _Steps:
    """Matches each replay step to its journal record: replay goes record by record, and at
    each step the engine stands at the record's instant with the record's effects counted."""

    def __init__(self, read: JournalRead) -> None:
        self.records: list[tuple[Record, int]] = []   # (record, effects counted through it)
        counted = 0
        for record in read.records[1:]:
            if record.kind in ("input", "tick"):
                counted += len(record.data.get("effects") or [])
                self.records.append((record, counted))
        self.cursor = 0
        self.stamped: list[Stamped] = []

    def __call__(self, engine: Engine, effects: list[Effect]) -> None:
        record = self._record_for(engine.now, engine.seq)
        first = len(self.stamped)
        self.stamped += [Stamped(first + n, e, record) for n, e in enumerate(effects)]

    def _record_for(self, t: int, seq: int) -> Record:
        """The next record at instant `t`, preferring the one whose stored effects end at
        `seq` (several records can share an instant; instants never go backwards)."""
        at_t, i = [], self.cursor
        while i < len(self.records) and self.records[i][0].t <= t:
            if self.records[i][0].t == t:
                at_t.append(i)
            i += 1
        exact = [i for i in at_t if self.records[i][1] == seq]
        index = min((exact or at_t or [self.cursor])[0], len(self.records) - 1)
        self.cursor = index + 1
        return self.records[index][0]


def load_stream(path: str | Path) -> Stream:
    """Read and replay a journal; raises JournalError, ConfigError or a ValueError/KeyError of
    a record the engine cannot take (the caller names the journal)."""
    read = read_journal(path)
    steps = _Steps(read)
    replayed = replay(read, observe=steps)
    kept = {id(e) for e in surviving([s.effect for s in steps.stamped])}
    effects = [s for s in steps.stamped if id(s.effect) in kept]
    return Stream(read, replayed, effects, len(steps.stamped))

"""A journal's effects as they finally stand, each with its place in the real world.

The journal is replayed through the engine (`session.replay`, the one source of truth) as it is
read, record by record; the whole effect stream is numbered, and every `Rewound` retracts what
it names (`effects.surviving`). Each surviving effect keeps the place of the journal record that
produced it (its instant and stamps, not its data: memory grows with the match's effects, not
with the journal), so its wall-clock instant can be told: the record's wall stamp moved by how
far the effect's instant lies from the record's (a hold restates effects at its down edge, an
undo restates earlier actions at their own instants).

Who gave each arbiter command is on its `ArbiterCommand` effect (`source`, `by`): the engine
copies them from the input it replays (a command a hold or an undo restates keeps its own), and
a command made of button presses at the panels is "panel"."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..effects import Effect, surviving
from ..journal import JournalSource, JournalStream, Record, decode
from ..session import Replayed, ReplayStep, replay


@dataclass(frozen=True, slots=True)
class Place:
    """Where the record that produced an effect stands: what the export needs of it (its
    instant and wall stamp), without keeping the record's whole data in memory."""

    path: str
    seq: int
    t: int
    wall: int
    offset: int
    line: int


@dataclass(frozen=True)
class Stamped:
    seq: int          # the effect's number in the whole stream
    effect: Effect
    place: Place      # the journal record whose step produced it

    @property
    def t(self) -> int:
        return self.effect.t

    @property
    def wall(self) -> int:
        """Wall-clock ns since the epoch: the record's stamp, moved to the effect's instant."""
        return self.place.wall + (self.effect.t - self.place.t)

    @property
    def record(self) -> Record:
        """The whole record, read again from the journal (the export keeps only its place)."""
        with open(self.place.path, "rb") as f:
            f.seek(self.place.offset)
            return decode(f.readline().rstrip(b"\n"), self.place.line, self.place.offset)[0]


@dataclass(frozen=True)
class Stream:
    read: JournalSource
    replayed: Replayed
    effects: list[Stamped]   # the surviving effects, in stream order
    total: int               # effects in the whole stream, retracted ones and `Rewound`s too


def load_stream(path: str | Path) -> Stream:
    """Read and replay a journal; raises JournalError (RecordError for a record the engine
    cannot take, naming the file, the record and its line) or ConfigError (of its header)."""
    read = JournalStream.open(path)
    stamped: list[Stamped] = []

    def number(step: ReplayStep) -> None:
        first, record = len(stamped), step.record
        if not step.effects:
            return
        place = Place(read.path, record.seq, record.t, record.wall, record.offset, record.line)
        stamped.extend(Stamped(first + n, e, place) for n, e in enumerate(step.effects))

    replayed = replay(read, observe_steps=number)
    kept = {id(e) for e in surviving([s.effect for s in stamped])}
    effects = [s for s in stamped if id(s.effect) in kept]
    return Stream(read, replayed, effects, len(stamped))

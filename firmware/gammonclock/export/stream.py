"""A journal's effects as they finally stand, each with its place in the real world.

The journal is replayed through the engine (`session.replay`, the one source of truth) as it is
read, record by record; the whole effect stream is numbered, and every `Rewound` retracts what
it names (`effects.surviving`). Each surviving effect keeps the place of the journal record that
produced it (its instant and stamps, not its data: memory grows with the match's effects, not
with the journal), so its wall-clock instant can be told: the record's wall stamp moved by how
far the effect's instant lies from the record's (a hold restates effects at its down edge, an
undo restates earlier actions at their own instants).

Who gave each arbiter command: the `ArbiterCommand` effect says so when the engine put it there;
else the record of its input does (`source`, `by`). A command that a hold or an undo replays is
restated by a later record, so it is known by its instant and its words, which its first record
gave."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..effects import ArbiterCommand, Effect, surviving
from ..journal import JournalSource, JournalStream, Record, decode
from ..session import Replayed, ReplayStep, replay
from .model import UNKNOWN_AUTHOR, Author


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
    authors: dict[int, Author] = field(default_factory=dict)   # by the `ArbiterCommand`'s seq


def _input_of(record: Record) -> dict[str, Any]:
    data = record.data.get("input") if record.kind == "input" else None
    return data if isinstance(data, dict) else {}


class _Authors:
    """Who gave each arbiter command of the stream (see the module's docstring)."""

    def __init__(self) -> None:
        self.given: dict[tuple[int, str], Author] = {}    # (instant, words) of each input
        self.of: dict[int, Author] = {}

    def see(self, record: Record, first: int, effects: list[Effect]) -> None:
        data = _input_of(record)
        if data.get("type") == "arbiter" and isinstance(data.get("command"), str):
            source, by = data.get("source"), data.get("by")
            self.given[(record.t, data["command"])] = Author(
                source if isinstance(source, str) else None, by if isinstance(by, str) else None)
        for n, effect in enumerate(effects):
            if isinstance(effect, ArbiterCommand):
                self.of[first + n] = self.author(effect, data)

    def author(self, effect: ArbiterCommand, data: dict[str, Any]) -> Author:
        if effect.source is not None or effect.by is not None:    # the engine said it
            return Author(effect.source, effect.by)
        given = self.given.get((effect.t, effect.text))
        if given is not None:
            return given
        # A command the engine made of button presses: the arbiter at the panels.
        return Author("panel") if data.get("type") == "edge" else UNKNOWN_AUTHOR


def load_stream(path: str | Path) -> Stream:
    """Read and replay a journal; raises JournalError (RecordError for a record the engine
    cannot take, naming the file, the record and its line) or ConfigError (of its header)."""
    read = JournalStream.open(path)
    stamped: list[Stamped] = []
    authors = _Authors()

    def number(step: ReplayStep) -> None:
        first, record = len(stamped), step.record
        authors.see(record, first, step.effects)
        if not step.effects:
            return
        place = Place(read.path, record.seq, record.t, record.wall, record.offset, record.line)
        stamped.extend(Stamped(first + n, e, place) for n, e in enumerate(step.effects))

    replayed = replay(read, observe_steps=number)
    kept = {id(e) for e in surviving([s.effect for s in stamped])}
    effects = [s for s in stamped if id(s.effect) in kept]
    return Stream(read, replayed, effects, len(stamped), authors.of)

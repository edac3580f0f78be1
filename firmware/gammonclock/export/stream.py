"""A journal's effects as they finally stand, each with its place in the real world.

The journal is replayed through the engine (`replay`, the one source of truth) as it is
read, record by record; the whole effect stream is numbered, and every `Rewound` retracts what
it names (`effects.surviving`). Each surviving effect keeps the place of the journal record that
produced it (its instant and stamps, not its data: memory grows with the match's effects, not
with the journal), so its wall-clock instant can be told: the record's wall stamp moved by how
far the effect's instant lies from the record's (a hold restates effects at its down edge, an
undo restates earlier actions at their own instants).

The replay keeps only the history an undo can reach (`replay`'s `keep`), so the effects
older than its oldest entry can no longer be retracted: `stream_effects` hands each surviving
effect over as soon as that is so, and keeps only the few that a hold or an undo may still
retract. An undo that reaches further back (past what the replay kept) makes it start again on
the whole history (`RewoundPastHanded`).

Who gave each arbiter command is on its `ArbiterCommand` effect (`source`, `by`): the engine
copies them from the input it replays (a command a hold or an undo restates keeps its own), and
a command made of button presses at the panels is "panel"."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from gammonclock.core.effects import Effect, Rewound
from gammonclock.core.engine import Engine
from gammonclock.errors import GammonclockError
from gammonclock.journal.reader import JournalSource, JournalStream
from gammonclock.journal.records import Record, decode
from gammonclock.journal.replay import SNAPSHOT_EVERY, UNDO_KEPT, Replayed, ReplayStep, replay


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


@dataclass(frozen=True, slots=True)
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


class RewoundPastHanded(GammonclockError):
    """A `Rewound` retracts effects `stream_effects` already handed over: an undo reached past
    the history the replay kept. Start again with `keep=None`."""


def _oldest_seq(engine: Engine) -> int:
    """The stream number of the first effect of the engine's oldest history entry: no hold,
    chord or undo of what it keeps rewinds to before it (the engine's count when it keeps
    none)."""
    entry = engine.log
    if entry is None:
        return engine.seq
    while entry.prev is not None:
        entry = entry.prev
    return entry.first_seq


def stream_effects(path: str | Path, take: Callable[[Stamped], None],
                   keep: int | None = UNDO_KEPT) -> tuple[JournalSource, Replayed, int]:
    """Read and replay a journal, and hand each surviving effect to `take`, in stream order, as
    soon as nothing can retract it any more (`effects.surviving`, as the replay goes). Returns
    the journal read, the replay and the number of effects in the whole stream. `keep`: the
    replay's (None: the whole history, everything handed over at the end). Raises
    RewoundPastHanded (start again with `keep=None`), JournalError (RecordError for a record the
    engine cannot take, naming the file, the record and its line) or ConfigError (of its
    header)."""
    read = JournalStream.open(path)
    pending: list[Stamped] = []     # surviving so far, still retractable
    total, handed, steps = 0, 0, 0  # effects numbered; those below `handed` went to `take`

    def hand_over(upto: int) -> None:
        nonlocal handed
        n = 0
        while n < len(pending) and pending[n].seq < upto:
            take(pending[n])
            n += 1
        del pending[:n]
        handed = max(handed, upto)

    def number(step: ReplayStep) -> None:
        nonlocal total, steps
        record = step.record
        if step.effects:
            place = Place(read.path, record.seq, record.t, record.wall, record.offset,
                          record.line)
            for effect in step.effects:
                if isinstance(effect, Rewound):
                    if effect.since_seq < handed:
                        raise RewoundPastHanded(f"record {record.seq}")
                    while pending and pending[-1].seq >= effect.since_seq:
                        pending.pop()
                else:
                    pending.append(Stamped(total, effect, place))
                total += 1
        steps += 1
        if keep is not None and steps % SNAPSHOT_EVERY == 0:
            hand_over(_oldest_seq(step.engine))

    replayed = replay(read, observe_steps=number, keep=keep)
    hand_over(total)
    return read, replayed, total


def load_stream(path: str | Path) -> Stream:
    """Read and replay a journal, every surviving effect in a list (errors as
    `stream_effects`)."""
    effects: list[Stamped] = []
    try:
        read, replayed, total = stream_effects(path, effects.append)
    except RewoundPastHanded:
        effects.clear()
        read, replayed, total = stream_effects(path, effects.append, keep=None)
    return Stream(read, replayed, effects, total)

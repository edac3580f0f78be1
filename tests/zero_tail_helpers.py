"""A match journaled on the card as the service runs it, for the tests of the journal filled
ahead with zeros (issue 20); also imported by the child process those tests kill."""

from __future__ import annotations

from pathlib import Path

from gammonclock.config.loading import parse_config
from gammonclock.core.engine import ButtonEdge, Engine
from gammonclock.journal.files import journal_header
from gammonclock.journal.key import load_or_create_key
from gammonclock.journal.writer import JournalWriter
from gammonclock.runtime.session import Session
from gammonclock.sides import Button
from journal_helpers import fake_stamps

S = 1_000_000_000
CONFIG = """\
[match]
discipline = "backgammon"
length = 7
[players]
left = "Anna"
right = "Boris"
[time]
reserve = "2m"
[journal]
checkpoint_s = 5
"""


def live(tmp_path: Path, name: str = "match.jsonl") -> tuple[Session, JournalWriter, bytes]:
    """A match with a journal on the card (fsync), snapshots every 6 records; and the key."""
    config = parse_config(CONFIG, "test.toml")
    key = load_or_create_key(tmp_path / "state")
    stamps = fake_stamps()
    writer = JournalWriter.create(tmp_path / name, key, journal_header(CONFIG, "test.toml"), 0,
                                  stamps())  # type: ignore[operator]
    session = Session(Engine.start(config.rules), writer, stamps,  # type: ignore[arg-type]
                      config.device.checkpoint_ns)
    session.snapshot_every = 6
    session.group = True                # as the service runs it: one sync per step
    return session, writer, key


def taps(session: Session, count: int, first_s: float) -> float:
    """`count` taps, left and right in turn, 3 s apart from `first_s`, each committed (synced)
    as the loop does; the instant after the last."""
    at = first_s
    for i in range(count):
        t = round(at * S)
        button = Button.LEFT if i % 2 == 0 else Button.RIGHT
        session.feed(ButtonEdge(t, button, True))
        session.commit()
        session.feed(ButtonEdge(t + S // 10, button, False))
        session.commit()
        at += 3
    return at

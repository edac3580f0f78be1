"""Building journals for the tests: a scripted match run through a journaled session."""

from __future__ import annotations

import itertools
import textwrap
from pathlib import Path

from gammonclock.config import Config, parse_config
from gammonclock.engine import Engine
from gammonclock.journal import JournalWriter, Stamp, load_or_create_key
from gammonclock.script import parse_script
from gammonclock.session import Session, journal_header
from gammonclock.simulate import run_script

CONFIG = """\
[match]
discipline = "backgammon"
length = 7
[players]
left = "Anna"
right = "Boris"
[journal]
checkpoint_s = 5
"""

# A game with a double, a take, a hold that rewinds, a result and the start of game 2.
SCRIPT = """\
0 roll 3
0.5 roll 5
1 tap left
+14 tap right
+9 tap left
+6 tap cube
+20 tap left
+25 tap right
+3 roll 6 6
+30 arbiter warn left slow play
+2 tap left
+40 hold right
+4 tap cube
+3 tap left
+30 tap right
+20 tap left
+25 end
"""


def fake_stamps() -> object:
    """Deterministic stamps: monotonic and wall time tick by 1 ms per record."""
    counter = itertools.count()

    def stamp() -> Stamp:
        n = next(counter)
        return Stamp(10**9 + n * 10**6, "test-boot", 1_764_400_000 * 10**9 + n * 10**6)
    return stamp


def journaled_run(tmp_path: Path, script: str = SCRIPT, config_text: str = CONFIG,
                  name: str = "match.jsonl") -> tuple[Path, Session, Config]:
    """Run `script` with a journal in tmp_path; returns the journal path and the session."""
    config = parse_config(config_text, "test.toml")
    key = load_or_create_key(tmp_path / "state")
    stamps = fake_stamps()
    path = tmp_path / name
    writer = JournalWriter.create(path, key, journal_header(config_text, "test.toml"), 0,
                                  stamps())  # type: ignore[operator]
    session = Session(Engine.start(config.rules), writer, stamps,  # type: ignore[arg-type]
                      config.device.checkpoint_ns)
    parsed = parse_script(textwrap.dedent(script), config.rules.hold_ns)
    run_script(session, parsed.inputs, parsed.end)
    session.close()
    return path, session, config


def line_offsets(path: Path) -> list[int]:
    """The byte offset where each line starts, and the file's length last."""
    blob = path.read_bytes()
    offsets = [0]
    for i, byte in enumerate(blob):
        if byte == 0x0A:
            offsets.append(i + 1)
    return offsets

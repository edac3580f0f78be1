"""Building journals for the tests: a scripted match run through a journaled session, a match
opened in a state folder as the device opens it, and journals re-sealed after an edit (what a
holder of the device key could write)."""

from __future__ import annotations

import itertools
import json
import os
import textwrap
from pathlib import Path
from typing import Any

from gammonclock.config.loading import Config, parse_config
from gammonclock.core.engine import ButtonEdge, Engine
from gammonclock.device.build import open_match
from gammonclock.journal.files import journal_header
from gammonclock.journal.key import load_or_create_key, read_key
from gammonclock.journal.records import GENESIS, Stamp, encode
from gammonclock.journal.writer import JournalWriter
from gammonclock.runtime.session import Session
from gammonclock.sides import Button
from gammonclock.sim.script import parse_script
from gammonclock.sim.simulate import run_script

S = 1_000_000_000

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


# --- a match in a state folder, as the device opens it ---------------------------------------

def session_at(config: Config, state: Path, clock_ns: int = 0) -> tuple[Session, list[str]]:
    """The match `open_match` gives `config` in `state` (recovered, continued or new), and its
    notes."""
    session, _, notes = open_match(config, state, fake_stamps(),  # type: ignore[arg-type]
                                   lambda: clock_ns)
    return session, notes


def press(session: Session, button: Button, at_s: float) -> None:
    """A press of `button` at `at_s` seconds, released 0.1 s later."""
    t = round(at_s * S)
    session.feed(ButtonEdge(t, button, True))
    session.feed(ButtonEdge(t + S // 10, button, False))


def journal_of_config(state: Path, config: Config) -> Path:
    """An unfinished match of `config` in `state`: a tap (right's clock runs) and a checkpoint
    at 9 s."""
    session, _ = session_at(config, state)
    press(session, Button.LEFT, 1)
    session.checkpoint(9 * S)
    session.close()
    return session.journal.path                     # type: ignore[union-attr]


# --- journals edited and sealed anew ---------------------------------------------------------

def bodies_of(path: Path) -> list[dict[str, Any]]:
    """Each record of a journal as its body (without checksum and seal)."""
    out = []
    for line in path.read_bytes().splitlines():
        obj = json.loads(line)
        obj.pop("sum")
        obj.pop("mac")
        out.append(obj)
    return out


def sealed(key: bytes, bodies: list[dict[str, Any]], keep_prev: frozenset[int] = frozenset()
           ) -> bytes:
    """The records sealed with `key` and chained anew (what a holder of the key can write); the
    `prev` of the records in `keep_prev` stays as it is (or absent)."""
    out, prev = [], GENESIS
    for index, body in enumerate(bodies):
        if index not in keep_prev:
            body = {**body, "prev": prev}
        line = encode(key, body)
        prev = line[-67:-3].decode()
        out.append(line)
    return b"".join(out)


DELETE = object()   # as a value for `set_in`: remove the field


def set_in(body: dict[str, Any], where: str, value: Any) -> None:
    """Set (or, with value DELETE, remove) a field; `where` is a dotted path into the body."""
    *parents, last = where.split(".")
    for name in parents:
        body = body[name]
    if value is DELETE:
        del body[last]
    else:
        body[last] = value


def unknown_input_journal(state: Path, config: Config, index: int = 1,
                          where: str = "data.input.type", value: Any = "chord") -> Path:
    """An unfinished match of `config` in `state` whose record `index` holds what this firmware
    cannot understand (by default an input type it does not know), sealed with the device key."""
    path = journal_of_config(state, config)
    bodies = bodies_of(path)
    set_in(bodies[index], where, value)
    path.write_bytes(sealed(read_key(state), bodies))
    return path


def not_understood(tmp_path: Path, index: int, where: str, value: Any) -> Path:
    """The scripted match's journal with record `index`'s field `where` set to `value` (DELETE:
    removed), sealed again with the device key (a changed 'prev' kept as written)."""
    path, _, _ = journaled_run(tmp_path)
    bodies = bodies_of(path)
    set_in(bodies[index], where, value)
    keep = frozenset({index}) if where == "prev" else frozenset()
    path.write_bytes(sealed(load_or_create_key(tmp_path / "state"), bodies, keep))
    return path


def record_syncs(monkeypatch: Any) -> list[tuple[str, int]]:
    """From now on, each `os.fsync` and `os.fdatasync` (still done) recorded as (its name, the
    file's size then), in order, in the list returned."""
    syncs: list[tuple[str, int]] = []
    real = {name: getattr(os, name) for name in ("fsync", "fdatasync")}

    def recording(name: str) -> Any:
        def sync(fd: int) -> None:
            syncs.append((name, os.fstat(fd).st_size))
            real[name](fd)
        return sync
    for name in real:
        monkeypatch.setattr(os, name, recording(name))
    return syncs

"""A snapshot stays small whatever is tapped while a button is held through a pause with a PIN
set (issue 20): a chord reaches back `CHORD_REACH` entries at most (core/engine.py), so the
snapshot keeps no more for it; the live match, its replay from the snapshots and the whole
replay agree, to the nanosecond."""

from __future__ import annotations

from pathlib import Path

from gammonclock.config.loading import parse_config
from gammonclock.core.engine import ButtonEdge, Engine, Input
from gammonclock.journal.files import journal_header
from gammonclock.journal.key import load_or_create_key
from gammonclock.journal.reader import read_journal
from gammonclock.journal.records import SNAPSHOT_KIND
from gammonclock.journal.replay import replay, replay_from_snapshot
from gammonclock.journal.verify import verify
from gammonclock.journal.writer import JournalWriter
from gammonclock.runtime.session import Session, recover
from gammonclock.sides import Button, Side
from gammonclock.sim.simulate import run_script
from journal_helpers import fake_stamps

S, MS = 1_000_000_000, 1_000_000
CONFIG = '[match]\ndiscipline = "backgammon"\nlength = 5\n[arbiter]\npin = "LRCL"\n'


def held_cube_taps(taps: int) -> tuple[list[Input], int]:
    """Three turns; the cube held down (a pause, by its hold) and kept down while left and right
    tap `taps` times; then left and right go down and stay: the arbiter's chord."""
    inputs: list[Input] = []
    t = S
    for button in (Button.LEFT, Button.RIGHT, Button.LEFT):
        inputs += [ButtonEdge(t, button, True), ButtonEdge(t + 80 * MS, button, False)]
        t += 5 * S
    inputs.append(ButtonEdge(t, Button.CUBE, True))
    t += 3 * S
    for n in range(taps):
        button = (Button.LEFT, Button.RIGHT)[n % 2]
        inputs += [ButtonEdge(t, button, True), ButtonEdge(t + 80 * MS, button, False)]
        t += 300 * MS
    inputs += [ButtonEdge(t, Button.LEFT, True), ButtonEdge(t + 100 * MS, Button.RIGHT, True)]
    return inputs, t + 5 * S


def test_2000_taps_while_the_cube_is_held_through_a_pause_keep_snapshots_under_10_kb(tmp_path):
    rules = parse_config(CONFIG).rules
    key = load_or_create_key(tmp_path / "state")
    stamps = fake_stamps()
    path = tmp_path / "match.jsonl"
    writer = JournalWriter.create(path, key, journal_header(CONFIG, "test.toml"), 0, stamps(),
                                  fsync=False)  # type: ignore[operator]
    session = Session(Engine.start(rules), writer, stamps,  # type: ignore[arg-type]
                      5 * S, snapshot_every=200)
    inputs, end = held_cube_taps(2_000)
    session = run_script(session, inputs, end)
    live = session.engine
    assert live.match.phase.value == "arbiter"            # the chord, recognised
    session.close()
    sizes = [len(line) for line in path.read_bytes().splitlines()
             if f'"kind":"{SNAPSHOT_KIND}"'.encode() in line]
    assert len(sizes) >= 10
    assert max(sizes) <= 10_000, sizes       # MBs before (every tap since the cube's kept)
    assert verify(path, key).intact
    fast = replay_from_snapshot(path)
    full = replay(read_journal(path))
    assert fast.diverged == [] and full.diverged == [] and full.snapshots_differ == []
    for engine in (fast.engine, full.engine):
        assert (engine.match, engine.buttons, engine.seq) == (
            live.match, live.buttons, live.seq)


def test_a_recovery_after_the_taps_resumes_the_same_match(tmp_path):
    rules = parse_config(CONFIG).rules
    key = load_or_create_key(tmp_path / "state")
    stamps = fake_stamps()
    path = tmp_path / "match.jsonl"
    writer = JournalWriter.create(path, key, journal_header(CONFIG, "test.toml"), 0, stamps(),
                                  fsync=False)  # type: ignore[operator]
    session = Session(Engine.start(rules), writer, stamps,  # type: ignore[arg-type]
                      5 * S, snapshot_every=50)
    inputs, end = held_cube_taps(300)
    session = run_script(session, inputs[:-2], inputs[-3].t + 100 * MS)   # stopped there
    live = session.engine.match
    session.close()
    resumed, _ = recover(Path(path), key, stamps, checkpoint_ns=5 * S)
    assert [resumed.engine.match.reserve_at(side) for side in Side] == [
        live.reserve_at(side) for side in Side]
    assert resumed.engine.match.phase is live.phase
    resumed.close()

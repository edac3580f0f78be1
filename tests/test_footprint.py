"""A flat footprint (issue 20): the live engine keeps only the history an undo or a press in
progress can reach, a snapshot never re-encodes the taps ignored while paused, and undo still
does exactly what it did with the whole history (a deeper one rebuilds it from the journal),
live, in a replay and after a recovery."""

from __future__ import annotations

from pathlib import Path

from bench_helpers import load_benchmark
from gammonclock.arbiter import Pause, Undo
from gammonclock.config import parse_config
from gammonclock.engine import ButtonEdge, Engine, Entry, Input
from gammonclock.journal import (
    SNAPSHOT_KIND,
    JournalWriter,
    load_or_create_key,
    read_journal,
    verify,
)
from gammonclock.match import ArbiterAction
from gammonclock.session import (
    Session,
    journal_header,
    recover,
    replay,
    replay_from_snapshot,
    verify_and_replay,
)
from gammonclock.sides import Button
from gammonclock.simulate import run_script
from journal_helpers import fake_stamps

bench = load_benchmark("bench_match")

S, MS = 1_000_000_000, 1_000_000
LENGTH = 5
CONFIG = f'[match]\ndiscipline = "backgammon"\nlength = {LENGTH}\n'
RULES = parse_config(CONFIG).rules


def entries(engine: Engine) -> list[Entry]:
    out, entry = [], engine.log
    while entry is not None:
        out.append(entry)
        entry = entry.prev
    return out


def journaled(tmp_path: Path, every: int = 20, name: str = "match.jsonl") -> Session:
    key = load_or_create_key(tmp_path / "state")
    stamps = fake_stamps()
    writer = JournalWriter.create(tmp_path / name, key, journal_header(CONFIG, "test.toml"), 0,
                                  stamps(), fsync=False)  # type: ignore[operator]
    return Session(Engine.start(RULES), writer, stamps,  # type: ignore[arg-type]
                   5 * S, snapshot_every=every)


def unjournaled() -> Session:
    """The reference: a session without a journal never cuts its history."""
    return Session(Engine.start(RULES))


def state(engine: Engine) -> tuple[object, ...]:
    return engine.match, engine.buttons, engine.seq, engine.serials


def undo(t: int) -> Input:
    return ArbiterAction(t, Undo())


def generated() -> tuple[list[Input], int]:
    match = bench.generate_match(3, LENGTH, bounce=0.25)
    assert match.rules == RULES
    return list(match.inputs), match.end


# --- taps while paused -------------------------------------------------------------------------

def paused_taps(taps: int) -> tuple[list[Input], int]:
    """Two turns switched, the arbiter's pause, then `taps` taps of every button."""
    inputs: list[Input] = []
    t = S
    for button in (Button.LEFT, Button.RIGHT, Button.LEFT):
        inputs += [ButtonEdge(t, button, True), ButtonEdge(t + 80 * MS, button, False)]
        t += 5 * S
    inputs.append(ArbiterAction(t, Pause()))
    for n in range(taps):
        t += 300 * MS
        button = (Button.LEFT, Button.RIGHT, Button.CUBE)[n % 3]
        inputs += [ButtonEdge(t, button, True), ButtonEdge(t + 80 * MS, button, False)]
    return inputs, t + S


def snapshot_sizes(path: Path) -> list[int]:
    return [len(line) for line in path.read_bytes().splitlines()
            if f'"kind":"{SNAPSHOT_KIND}"'.encode() in line]


def test_a_snapshot_after_many_taps_while_paused_stays_small(tmp_path):
    inputs, end = paused_taps(600)
    session = run_script(journaled(tmp_path, every=50), inputs, end)
    session.close()
    sizes = snapshot_sizes(tmp_path / "match.jsonl")
    assert len(sizes) >= 5
    assert max(sizes) <= 10_000, sizes          # 2.6 MB after 2 000 taps before issue 20
    assert max(sizes[1:]) - min(sizes[1:]) < 200, sizes   # the same whatever the taps


def test_the_taps_left_out_change_nothing_an_undo_or_a_recovery_does(tmp_path):
    inputs, end = paused_taps(300)
    session = run_script(journaled(tmp_path, every=7), inputs, end)
    reference = run_script(unjournaled(), inputs, end)
    for n in range(1):
        said = session.feed(undo(end + (n + 1) * S))
        assert said == reference.feed(undo(end + (n + 1) * S))
        assert state(session.engine) == state(reference.engine)
    session.close()
    path = tmp_path / "match.jsonl"
    assert verify(path, load_or_create_key(tmp_path / "state")).intact
    fast = replay_from_snapshot(path)
    assert fast.diverged == []
    assert state(fast.engine) == state(reference.engine)
    full = replay(read_journal(path))
    assert full.diverged == [] and full.snapshots_differ == []


def old_kept_history(state: Engine, actions: int = 1, settled: bool = False
                     ) -> tuple[list[Entry], bool]:
    """What a snapshot kept before issue 20: every entry back to the last player action (or
    the tap of a press in progress), the ignored taps too."""
    chords = state.rules.arbiter_pin is not None
    found = entries(state)
    last = next((e.serial for e in found if e.player_action is not None), None)
    if last is None:
        return list(reversed(found)), False
    target = min([last, *(s.press.entry_serial for _, s in state.buttons if s.press is not None
                          and (not s.press.recognised or (chords and not s.press.chord)))])
    kept = []
    for entry in found:
        kept.append(entry)
        if entry.serial <= target:
            break
    kept.reverse()
    return kept, kept[0].prev is not None


def test_a_journal_whose_snapshots_kept_the_ignored_taps_still_verifies_and_recovers(
        tmp_path, monkeypatch):
    import gammonclock.snapshot as snapshot
    inputs, end = paused_taps(60)
    with monkeypatch.context() as patched:
        patched.setattr(snapshot, "kept_history", old_kept_history)
        session = run_script(journaled(tmp_path, every=7), inputs, end)
        session.close()
    path = tmp_path / "match.jsonl"
    sizes = snapshot_sizes(path)
    assert max(sizes) > 3 * min(sizes)           # the old snapshots did keep the taps
    key = load_or_create_key(tmp_path / "state")
    checked = verify_and_replay(path, key)
    assert checked.verdict.intact, checked.verdict.message
    assert checked.replayed is not None and checked.replayed.snapshots_differ == []
    resumed, _ = recover(path, key, fake_stamps(), checkpoint_ns=5 * S)  # type: ignore[arg-type]
    reference = run_script(unjournaled(), inputs, end)
    assert resumed.engine.match.score == reference.engine.match.score
    assert resumed.engine.seq >= reference.engine.seq
    resumed.close()

"""A flat footprint (issue 20): the live engine keeps only the history an undo or a press in
progress can reach, a snapshot never re-encodes the taps ignored while paused, and undo still
does exactly what it did with the whole history (a deeper one rebuilds it from the journal),
live, in a replay and after a recovery."""

from __future__ import annotations

import gc
import json
from pathlib import Path

import pytest

from bench_helpers import load_benchmark
from gammonclock.config.loading import parse_config
from gammonclock.core.arbiter import Pause, Undo
from gammonclock.core.effects import Effect
from gammonclock.core.engine import ButtonEdge, Engine, Entry, Input
from gammonclock.core.match import ArbiterAction
from gammonclock.journal.files import journal_header
from gammonclock.journal.key import load_or_create_key
from gammonclock.journal.reader import JournalStream, read_journal
from gammonclock.journal.records import SNAPSHOT_KIND
from gammonclock.journal.replay import UNDO_KEPT, replay, replay_from_snapshot, verify_and_replay
from gammonclock.journal.snapshot import engine_data
from gammonclock.journal.verify import verify
from gammonclock.journal.writer import JournalWriter
from gammonclock.runtime.service import ClockService, settle_memory
from gammonclock.runtime.session import Session, recover
from gammonclock.sides import Button
from gammonclock.sim.simulate import run_script
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
    # ... and the taps are not in the live engine either
    assert len(entries(session.engine)) < 50


def test_the_taps_left_out_change_nothing_an_undo_or_a_recovery_does(tmp_path):
    inputs, end = paused_taps(300)
    session = run_script(journaled(tmp_path, every=7), inputs, end)
    reference = run_script(unjournaled(), inputs, end)
    for n in range(3):
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
    import gammonclock.journal.snapshot as snapshot
    inputs, end = paused_taps(60)
    with monkeypatch.context() as patched:
        patched.setattr(snapshot, "kept_history", old_kept_history)
        patched.setattr(snapshot, "trimmed", lambda engine, _: (engine, False))
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


# --- the live history ---------------------------------------------------------------------------

@pytest.fixture(scope="module")
def long_match(tmp_path_factory):
    """A whole generated match journaled (a snapshot every 20 records) and the same without a
    journal (the whole history), both still open."""
    tmp_path = tmp_path_factory.mktemp("long")
    inputs, end = generated()
    return tmp_path, inputs, end


def test_the_live_history_stays_bounded_over_a_match(long_match):
    tmp_path, inputs, end = long_match
    session = run_script(journaled(tmp_path, name="bounded.jsonl"), inputs, end)
    reference = run_script(unjournaled(), inputs, end)
    session.close()
    assert state(session.engine) == state(reference.engine)
    whole = len(entries(reference.engine))
    assert whole > 200
    # What 20 records and UNDO_KEPT player actions hold, whatever the match's length.
    assert len(entries(session.engine)) < 60 < whole // 3, (len(entries(session.engine)), whole)
    assert session.history_floor is not None


@pytest.mark.parametrize("undos", [1, UNDO_KEPT, UNDO_KEPT + 5])
def test_undos_in_a_row_after_a_long_match_are_those_of_the_whole_history(
        long_match, undos, tmp_path):
    _, inputs, end = long_match
    session = run_script(journaled(tmp_path), inputs, end)
    reference = run_script(unjournaled(), inputs, end)
    for n in range(undos):
        said = session.feed(undo(end + (n + 1) * S))
        assert said == reference.feed(undo(end + (n + 1) * S)), n
        assert state(session.engine) == state(reference.engine), n
    # and play goes on the same: a tap, the next undo
    for event in (ButtonEdge(end + 40 * S, Button.LEFT, True),
                  ButtonEdge(end + 40 * S + 80 * MS, Button.LEFT, False), undo(end + 41 * S)):
        assert session.feed(event) == reference.feed(event)
    session.close()
    path = tmp_path / "match.jsonl"
    for replayed in (replay(read_journal(path)), replay(JournalStream.open(path), keep=2),
                     replay_from_snapshot(path)):
        assert replayed.diverged == [] and replayed.snapshots_differ == []
        assert state(replayed.engine) == state(reference.engine)


def test_a_deep_undo_before_the_history_is_cut_is_refused_as_before(tmp_path):
    """With nothing to undo at all, the journal's rebuild finds nothing either: refused."""
    session = journaled(tmp_path, every=1)
    session.history_floor = 0          # as if cut: the rebuild finds the same nothing
    said = session.feed(undo(S))
    assert [e.as_dict()["reason"] for e in said if "reason" in e.as_dict()] == ["undo_nothing"]
    session.close()


def test_undos_in_a_row_after_a_snapshot_replay_as_they_were_played(tmp_path):
    """A recovery replays the records after the last snapshot from what it kept: undos in a
    row there reach past it, and are replayed on the whole history from the journal."""
    inputs, end = generated()
    session = run_script(journaled(tmp_path, every=10_000), inputs[:400], inputs[399].t)
    session.snapshot_every = 1
    session._snapshot_if_due(1)        # a snapshot now, then no other
    session.snapshot_every = 10_000
    t = session.engine.now
    reference = run_script(unjournaled(), inputs[:400], inputs[399].t)
    for n in range(4):
        assert session.feed(undo(t + (n + 1) * S)) == reference.feed(undo(t + (n + 1) * S))
    session.close()
    path = tmp_path / "match.jsonl"
    fast = replay_from_snapshot(path)
    assert fast.read.start.kind == SNAPSHOT_KIND
    assert fast.diverged == []
    assert state(fast.engine) == state(reference.engine)


def test_a_replay_that_keeps_little_gives_the_whole_replays_effects(long_match):
    tmp_path, inputs, end = long_match
    session = run_script(journaled(tmp_path, name="kept.jsonl"), inputs, end)
    for n in range(UNDO_KEPT + 3):
        session.feed(undo(end + (n + 1) * S))
    session.close()
    path = tmp_path / "kept.jsonl"
    seen: dict[str, list[list[Effect]]] = {"whole": [], "kept": []}
    whole = replay(read_journal(path), observe=lambda _, said: seen["whole"].append(said))
    kept = replay(JournalStream.open(path), keep=1,
                  observe=lambda _, said: seen["kept"].append(said))
    assert seen["whole"] == seen["kept"]
    assert kept.diverged == [] and kept.snapshots_differ == []
    assert state(whole.engine) == state(kept.engine)
    assert engine_data(whole.engine) == engine_data(kept.engine, kept.history_floor is not None)
    assert len(entries(kept.engine)) < len(entries(whole.engine)) // 4


# --- the collector ------------------------------------------------------------------------------

def test_the_running_loop_freezes_what_it_loaded_and_each_snapshot(tmp_path):
    session = journaled(tmp_path, every=3)
    service = ClockService(session, [], origin=0)
    gc.unfreeze()
    try:
        service.stop()                 # the loop reaches READY, then stops at once
        service.run()
        assert gc.get_freeze_count() > 0
        assert session.after_snapshot is settle_memory
        gc.unfreeze()
        inputs, end = paused_taps(10)
        run_script(session, inputs, end)       # a snapshot every 3 records
        assert gc.get_freeze_count() > 0
    finally:
        session.close()
        gc.unfreeze()


def test_snapshots_call_the_hook(tmp_path):
    calls: list[int] = []
    session = journaled(tmp_path, every=3)
    session.after_snapshot = lambda: calls.append(session.engine.now)
    inputs, end = paused_taps(10)
    run_script(session, inputs, end)
    session.close()
    assert len(calls) == len(snapshot_sizes(tmp_path / "match.jsonl")) > 3


def test_snapshot_json_round_trips_after_the_cut(tmp_path):
    inputs, end = paused_taps(30)
    session = run_script(journaled(tmp_path, every=5), inputs, end)
    data = engine_data(session.engine, session.history_floor is not None)
    assert json.loads(json.dumps(data)) == data
    session.close()


# --- the export -----------------------------------------------------------------------------------

def whole_csv(path: Path) -> str:
    """The CSV as the export made it before issue 20: the whole history replayed, every effect
    numbered, then `effects.surviving`."""
    from gammonclock.core.effects import surviving
    from gammonclock.export.csv_out import render_csv
    from gammonclock.export.stream import Place, Stamped, Stream
    from gammonclock.export.turns import derive
    read = JournalStream.open(path)
    stamped: list[Stamped] = []

    def number(step) -> None:  # type: ignore[no-untyped-def]
        record = step.record
        place = Place(read.path, record.seq, record.t, record.wall, record.offset, record.line)
        stamped.extend(Stamped(len(stamped) + n, e, place) for n, e in enumerate(step.effects))
    replayed = replay(read, observe_steps=number)
    kept = {id(e) for e in surviving([s.effect for s in stamped])}
    return render_csv(derive(Stream(read, replayed, [s for s in stamped if id(s.effect) in kept],
                                    len(stamped))))


def with_undos(tmp_path: Path, undos: int, name: str) -> Path:
    """The generated match, with `undos` undos in a row a third of the way in and play going
    on after them (the later edges moved on by a minute)."""
    inputs, end = generated()
    cut = len(inputs) // 3
    t = inputs[cut - 1].t
    shifted = [e.__class__(e.t + 60 * S, e.button, e.pressed)   # type: ignore[union-attr]
               for e in inputs[cut:]]
    played = [*inputs[:cut], *(undo(t + (n + 1) * S) for n in range(undos)), *shifted]
    session = run_script(journaled(tmp_path, name=name), played, end + 60 * S)
    session.close()
    return tmp_path / name


@pytest.mark.parametrize("undos", [0, 2, UNDO_KEPT + 4, 80])
def test_the_csv_export_is_the_whole_replays_with_a_cut_history(tmp_path, undos, monkeypatch):
    from gammonclock.export import export_journal
    from gammonclock.export import stream as stream_module
    from gammonclock.export import turns as turns_module
    path = with_undos(tmp_path, undos, "m.jsonl")
    runs: list[int | None] = []
    streamed = stream_module.stream_effects

    def counted(*args, **kwargs):  # type: ignore[no-untyped-def]
        runs.append(args[2] if len(args) > 2 else kwargs.get("keep", UNDO_KEPT))
        return streamed(*args, **kwargs)
    monkeypatch.setattr(turns_module, "stream_effects", counted)
    export_journal(path, "csv", tmp_path / "out.csv")
    assert (tmp_path / "out.csv").read_text(encoding="utf-8") == whole_csv(path)
    assert runs[0] == UNDO_KEPT and runs[1:] in ([], [None])
    if undos == 80:
        # Undos past what the cut replay had handed over: it starts again on the whole history.
        assert runs == [UNDO_KEPT, None]


def test_the_export_replays_with_a_cut_history(long_match):
    from gammonclock.export import read_match
    tmp_path, inputs, end = long_match
    session = run_script(journaled(tmp_path, name="export.jsonl"), inputs, end)
    session.close()
    match = read_match(tmp_path / "export.jsonl", effects=False)
    whole = replay(read_journal(tmp_path / "export.jsonl")).engine
    assert match.replayed.history_floor is not None
    assert len(entries(match.replayed.engine)) < len(entries(whole)) // 3
    assert match.effects == [] and match.effects_total == whole.seq
    assert read_match(tmp_path / "export.jsonl").effects      # the JSON and HTML keep them


@pytest.mark.parametrize("undos", [0, 80])
def test_verify_replays_with_a_cut_history_and_holds_every_snapshot(tmp_path, undos):
    path = with_undos(tmp_path, undos, "v.jsonl")
    checked = verify_and_replay(path, load_or_create_key(tmp_path / "state"))
    assert checked.verdict.intact, checked.verdict.message
    assert checked.replayed is not None
    assert checked.replayed.diverged == [] and checked.replayed.snapshots_differ == []
    whole = replay(read_journal(path)).engine
    assert state(checked.replayed.engine) == state(whole)
    assert len(entries(checked.replayed.engine)) < len(entries(whole)) // 3


@pytest.mark.parametrize("every", [1, 4, 8])
def test_undos_at_the_panel_past_the_cut_history_rebuild_it_too(tmp_path, every):
    """The arbiter's menu undoes (a button's press, not a socket command) twice in a row, the
    live history cut to one player action at each snapshot: the second rebuilds the history
    from the journal, as the socket's undo does, and both do what they do on the whole."""
    from arbiter_helpers import RIGHT_PIN_TAPS, chord, entry, taps
    from gammonclock.sim.script import parse_script
    text = CONFIG + '\n[arbiter]\npin = "LRCL"\n'
    rules = parse_config(text).rules
    script = ("1 tap left\n5 tap right\n9 tap left\n13 tap right\n" + chord(30)
              + entry(40, RIGHT_PIN_TAPS) + taps(45, ("right",) * 3 + ("cube",) * 4, every=1.0))
    parsed = parse_script(script, rules.hold_ns)
    key = load_or_create_key(tmp_path / "state")
    stamps = fake_stamps()
    writer = JournalWriter.create(tmp_path / "p.jsonl", key, journal_header(text, "test.toml"),
                                  0, stamps(), fsync=False)  # type: ignore[operator]
    session = Session(Engine.start(rules), writer, stamps,  # type: ignore[arg-type]
                      5 * S, snapshot_every=every, undo_kept=1)
    said: list[Effect] = []
    session.observers.append(lambda _, effects: said.extend(effects))
    reference = Session(Engine.start(rules))
    heard: list[Effect] = []
    reference.observers.append(lambda _, effects: heard.extend(effects))
    run_script(session, parsed.inputs, 60 * S)
    run_script(reference, parsed.inputs, 60 * S)
    undone = [e for e in said if e.kind == "undone"]
    assert len(undone) == 2 and [e for e in heard if e.kind == "undone"] == undone
    assert said == heard
    assert state(session.engine) == state(reference.engine)
    assert session.engine.match.turn is not None
    session.close()
    replayed = replay_from_snapshot(tmp_path / "p.jsonl")
    assert replayed.diverged == [] and state(replayed.engine) == state(reference.engine)


class FailingJournal:
    """A card that takes no record (every append fails), as a session sees it."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.last_t: int | None = None

    def append(self, *_: object) -> None:
        from gammonclock.journal.records import JournalError
        raise JournalError(f"{self.path}: cannot append: read-only file system")

    def close(self) -> None:
        pass


def test_the_history_is_not_cut_while_records_wait_for_the_journal(tmp_path, long_match):
    """No journal to rebuild from: the whole history stays, and a deep undo is still exact."""
    _, inputs, end = long_match
    session = Session(Engine.start(RULES), FailingJournal(tmp_path / "x.jsonl"),  # type: ignore[arg-type]
                      fake_stamps(), 5 * S, snapshot_every=20)  # type: ignore[arg-type]
    run_script(session, inputs, end)
    reference = run_script(unjournaled(), inputs, end)
    assert session.backlog and session.history_floor is None
    for n in range(UNDO_KEPT + 3):
        assert session.feed(undo(end + (n + 1) * S)) == reference.feed(undo(end + (n + 1) * S))
    assert state(session.engine) == state(reference.engine)

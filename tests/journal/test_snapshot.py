"""Snapshots (issue 11): the engine's state sealed in the journal every so many records, so that
recovery reads the last one and the records after it. Restoring any snapshot and going on gives
exactly the engine (and the effects) of the whole run; undo and a pending hold behave the same
after a restore (a deep undo rebuilds the history from the journal first); `verify` holds every
snapshot against the replay; the encoding is strict; journals without snapshots still recover."""

from __future__ import annotations

import json
import os
import random
import signal
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given

from device_helpers import mock_config_text, start_run, wait_until_running
from gammonclock.cli.main import main
from gammonclock.config.loading import parse_config
from gammonclock.core.arbiter import Undo
from gammonclock.core.effects import Effect
from gammonclock.core.engine import ButtonEdge, Engine, Input
from gammonclock.core.match import ArbiterAction
from gammonclock.journal.files import journal_header
from gammonclock.journal.key import load_or_create_key, read_key
from gammonclock.journal.reader import JournalStream, open_from_snapshot, read_journal
from gammonclock.journal.records import JOURNALS_DIR, SNAPSHOT_KIND, RecordError
from gammonclock.journal.replay import replay, replay_from_snapshot, verify_and_replay
from gammonclock.journal.snapshot import (
    SnapshotError,
    decode_value,
    encode_value,
    engine_data,
    engine_from,
    history_floor,
    undo_needs_more_history,
)
from gammonclock.journal.writer import JournalWriter
from gammonclock.runtime.arbiter_client import ask
from gammonclock.runtime.arbiter_socket import socket_path
from gammonclock.runtime.session import Session, recover
from gammonclock.sides import Button
from journal_helpers import CONFIG, SCRIPT, bodies_of, fake_stamps, journaled_run, sealed
from property_helpers import property_settings
from strategy_helpers import random_case

S = 1_000_000_000
DATA = Path(__file__).parents[1] / "data" / "before-issue8"
RULES = parse_config(CONFIG).rules


def same(a: Engine, b: Engine, cut: bool = False) -> bool:
    """The same engine as far as anything it does can tell (the history as a snapshot keeps it);
    `cut`: `a` was restored from a snapshot that left the start of its history out."""
    return (a.match, a.buttons, a.seq, a.serials, engine_data(a, cut)) == \
        (b.match, b.buttons, b.seq, b.serials, engine_data(b))


def round_trip(engine: Engine) -> tuple[Engine, int | None]:
    """The engine a snapshot of `engine` gives back, through its JSON text."""
    return engine_from(json.loads(json.dumps(engine_data(engine))), engine.rules)


# --- restoring any snapshot gives the whole run --------------------------------------------------

Step = tuple[str, Any]


def steps_of(inputs: list[Input], end: int) -> list[Step]:
    """Each input preceded by the timers due up to it, then the timers up to `end` (a session's
    records: a tick, an input)."""
    steps: list[Step] = []
    for event in inputs:
        if event.t > end:
            break
        steps += [("advance", event.t), ("feed", event)]
    return steps + [("advance", end)]


def take(engine: Engine, step: Step) -> tuple[Engine, list[Effect]]:
    kind, what = step
    return engine.feed(what) if kind == "feed" else engine.advance(what)


def is_undo(step: Step) -> bool:
    return step[0] == "feed" and isinstance(step[1], ArbiterAction) \
        and isinstance(step[1].command, Undo)


@property_settings(60)
@given(random_case())
def test_restoring_any_snapshot_and_going_on_is_the_whole_run(case):
    rules, inputs, end = case
    steps = steps_of(inputs, end)
    engines, effects = [Engine.start(rules)], []
    for step in steps:
        engine, said = take(engines[-1], step)
        engines.append(engine)
        effects.append(said)
    for k in sorted({len(steps) * n // 6 for n in range(6)}):
        restored, floor = round_trip(engines[k])
        assert same(restored, engines[k], floor is not None)
        for j in range(k, len(steps)):
            # What the session does with a restored engine: a deep undo, or a snapshot that
            # would reach past the kept history, first rebuilds the whole history (its replay
            # of the journal is the engine that never stopped).
            if floor is not None and is_undo(steps[j]) and undo_needs_more_history(restored):
                restored, floor = engines[j], None
            restored, said = take(restored, steps[j])
            assert said == effects[j], (k, j, steps[j])
            if floor is not None and history_floor(restored) is None:
                restored, floor = engines[j + 1], None      # before a snapshot is written
            assert same(restored, engines[j + 1], floor is not None), (k, j, steps[j])


def press(t: int, button: Button) -> list[Input]:
    return [ButtonEdge(t, button, True), ButtonEdge(t + S // 10, button, False)]


def undo(t: int) -> Input:
    return ArbiterAction(t, Undo())


# A game with several player actions, then undos one after the other, and a pending press.
PLAY = [*press(1 * S, Button.LEFT), *press(10 * S, Button.RIGHT), *press(20 * S, Button.LEFT),
        *press(30 * S, Button.RIGHT), *press(40 * S, Button.LEFT)]


@pytest.mark.parametrize("undos", [1, 2, 4])
def test_undos_after_a_restore_act_as_if_nothing_stopped(undos):
    live = Engine.start(RULES)
    for event in PLAY:
        live, _ = live.feed(event)
    restored, floor = round_trip(live)
    assert floor is not None                  # the history before the last action is left out
    cut = True
    for n in range(undos):
        event = undo((50 + n) * S)
        if cut and undo_needs_more_history(restored):
            assert n >= 1                     # the first undo needs only what was kept
            restored, cut = live, False       # the session's rebuild
        live, expected = live.feed(event)
        restored, said = restored.feed(event)
        assert said == expected
        assert restored.match == live.match and restored.seq == live.seq
        if cut and history_floor(restored) is None:
            restored, cut = live, False       # rebuilt before a snapshot is written
        assert same(restored, live, cut)


def test_a_pending_press_keeps_its_tap_and_its_hold_rewinds_the_same():
    live = Engine.start(RULES)
    for event in [*PLAY, ButtonEdge(45 * S, Button.LEFT, True)]:   # left's press is still down
        live, _ = live.feed(event)
    restored, _ = round_trip(live)
    hold_at = 45 * S + RULES.hold_ns
    live, expected = live.advance(hold_at + 1)
    restored, said = restored.advance(hold_at + 1)
    assert expected and said == expected          # the hold rewinds its tap: the same effects
    assert same(restored, live, cut=True)


# --- the session: snapshots written, recovery from the last, the deep undo ----------------------

def snapshot_session(tmp_path: Path, every: int, script: str = SCRIPT) -> Path:
    path, _, _ = journaled_run(tmp_path, script)
    # The same run with a snapshot every `every` records.
    config = parse_config(CONFIG, "test.toml")
    key = load_or_create_key(tmp_path / "state")
    stamps = fake_stamps()
    snapped = tmp_path / f"every-{every}.jsonl"
    writer = JournalWriter.create(snapped, key, journal_header(CONFIG, "test.toml"), 0,
                                  stamps())  # type: ignore[operator]
    session = Session(Engine.start(config.rules), writer, stamps,  # type: ignore[arg-type]
                      config.device.checkpoint_ns, snapshot_every=every)
    from gammonclock.sim.script import parse_script
    from gammonclock.sim.simulate import run_script
    parsed = parse_script(script, config.rules.hold_ns)
    run_script(session, parsed.inputs, parsed.end)
    session.close()
    return snapped


def kinds(path: Path) -> list[str]:
    return [r.kind for r in read_journal(path).records]


@pytest.mark.parametrize("every", [1, 3, 7])
def test_recovery_from_the_last_snapshot_is_the_full_replay(tmp_path, every):
    path = snapshot_session(tmp_path, every)
    assert kinds(path).count(SNAPSHOT_KIND) >= 2
    tail = open_from_snapshot(path)
    assert tail.start.kind == SNAPSHOT_KIND
    full = replay(read_journal(path))
    assert full.snapshots_differ == [] and full.diverged == []
    fast = replay_from_snapshot(path)
    assert same(fast.engine, full.engine, fast.history_floor is not None)
    assert fast.read.count == full.read.count
    checked = verify_and_replay(path, read_key(tmp_path / "state"))
    assert checked.verdict.intact and checked.replayed is not None
    assert same(checked.replayed.engine, full.engine)


def test_snapshots_change_nothing_a_journal_tells(tmp_path):
    plain = replay(read_journal(journaled_run(tmp_path)[0]))
    snapped = replay(read_journal(snapshot_session(tmp_path / "s", 2)))
    assert plain.engine.state_json() == snapped.engine.state_json()


def test_records_before_the_snapshot_are_not_read(tmp_path):
    path = snapshot_session(tmp_path, 3)
    lines = path.read_bytes().splitlines(keepends=True)
    expected = replay(read_journal(path)).engine
    lines[2] = b"garbage" + lines[2][7:]           # damage long before the last snapshot
    path.write_bytes(b"".join(lines))
    assert read_journal(path).stopped is not None  # a full read stops there ...
    fast = replay_from_snapshot(path)
    assert same(fast.engine, expected, cut=True)   # ... recovery never looks


def test_a_deep_undo_after_recovery_rebuilds_the_history(tmp_path):
    script = "".join(f"+{5 + n % 3} tap {'left' if n % 2 else 'right'}\n" for n in range(12))
    path = snapshot_session(tmp_path, 4, "0 tap left\n" + script + "+3 end\n")
    key = load_or_create_key(tmp_path / "state")
    session, _ = recover(path, key, fake_stamps(), checkpoint_ns=5 * S)
    assert session.history_floor is not None
    t, undos = session.engine.now, 0
    while session.history_floor is not None and undos < 12:
        undos += 1
        session.feed(undo(t + undos * S))
    assert session.history_floor is None and undos > 1   # a deeper undo rebuilt the history
    session.feed(undo(t + 20 * S))
    session.close()
    full = replay(read_journal(path))
    assert same(session.engine, full.engine)
    assert full.engine.state_json()["running"] is None
    states = [e for e in full.engine.state_json()["clock"].values()]
    assert states


def test_a_snapshot_that_is_not_the_replay_fails_verify(tmp_path, capsys):
    path = snapshot_session(tmp_path, 3)
    key = read_key(tmp_path / "state")
    bodies = bodies_of(path)
    index = max(i for i, b in enumerate(bodies) if b["kind"] == SNAPSHOT_KIND)
    bodies[index]["data"]["seq"] += 1              # sealed with the key, but not the match
    path.write_bytes(sealed(key, bodies))
    checked = verify_and_replay(path, key)
    assert not checked.verdict.intact
    assert f"record {bodies[index]['seq']}: its snapshot is not the replay's" in \
        checked.verdict.message
    assert main(["verify", str(path), "--state-dir", str(tmp_path / "state")]) == 1
    assert "TAMPERED" in capsys.readouterr().out


def test_a_torn_line_after_the_snapshot_is_dropped_and_acknowledged(tmp_path):
    path = snapshot_session(tmp_path, 3)
    expected = replay(read_journal(path)).engine
    with path.open("ab") as f:
        f.write(b'{"boot":"half a rec')
    fast = replay_from_snapshot(path)
    assert fast.read.torn is not None and same(fast.engine, expected, cut=True)
    session, notes = recover(path, load_or_create_key(tmp_path / "state"), fake_stamps(),
                             checkpoint_ns=5 * S)
    session.close()
    assert any("torn" in n for n in notes)
    assert kinds(path)[-2:] == ["torn", "input"]   # the `torn` record, then `recover`
    assert verify_and_replay(path, read_key(tmp_path / "state")).verdict.intact


def test_a_damaged_record_after_the_snapshot_continues_in_a_new_journal(tmp_path):
    for every in range(3, 12):       # a snapshot with at least two records after it
        path = snapshot_session(tmp_path / str(every), every)
        read = read_journal(path)
        last_snapshot = max(r.seq for r in read.records if r.kind == SNAPSHOT_KIND)
        if last_snapshot + 2 < read.count:
            break
    lines = path.read_bytes().splitlines(keepends=True)
    damaged = last_snapshot + 1
    lines[damaged] = lines[damaged].replace(b'"kind"', b'"kinD"')
    path.write_bytes(b"".join(lines))
    expected = replay(read_journal(path)).engine        # stops before the damage
    session, notes = recover(path, load_or_create_key(tmp_path / "state"), fake_stamps(),
                             checkpoint_ns=5 * S)
    session.close()
    continued = path.with_name(path.stem + ".continued.jsonl")
    assert any(str(continued) in n for n in notes)
    again = replay(read_journal(continued))
    assert again.engine.match.now >= expected.match.now
    fast = replay_from_snapshot(continued)
    assert same(fast.engine, again.engine, fast.history_floor is not None)


def test_a_journal_without_snapshots_recovers_by_full_replay():
    fast = replay_from_snapshot(DATA / "match11.jsonl")
    assert fast.read.start.kind == "header" and fast.history_floor is None
    assert fast.engine.state_json() == json.loads((DATA / "state.json").read_text())


# --- the encoding is strict ----------------------------------------------------------------------

@pytest.mark.parametrize("data, fragment", [
    ({"$d": "engine.Nothing", "f": {}}, "class 'engine.Nothing' is unknown"),
    ({"$e": "sides.Side", "v": "middle"}, "'middle' is not a sides.Side"),
    ({"$d": "sides.Pair", "f": {"left": 1}}, "sides.Pair has fields ['left', 'right']"),
    ({"$x": 1}, "tag ['$x'] is unknown"),
    ({"$f": [1, 0]}, "a fraction must be [numerator, denominator]"),
    ([1, 2], "is not a snapshot value"),
    ({"$e": "sides.Pair", "v": 1}, "sides.Pair is not an enumeration"),
])
def test_a_value_not_understood_is_a_clear_error(data, fragment):
    with pytest.raises(SnapshotError) as caught:
        decode_value(data, RULES, "snapshot.match")
    assert str(caught.value).startswith("snapshot.match") and fragment in str(caught.value)


def test_a_value_a_snapshot_never_holds_is_refused():
    with pytest.raises(SnapshotError, match="cannot hold a float"):
        encode_value((1, 1.5))


@pytest.mark.parametrize("where, value, fragment", [
    ("format", 2, "snapshot format 2 is newer than this firmware's (1"),
    ("format", None, "the snapshot's format is null"),
    ("history", {}, "the snapshot's history is {}; a list is due"),
    ("trimmed", 1, "the snapshot's trimmed is 1; a bool is due"),
])
def test_a_snapshot_record_not_understood_names_it(tmp_path, where, value, fragment):
    path = snapshot_session(tmp_path, 3)
    key = read_key(tmp_path / "state")
    bodies = bodies_of(path)
    index = max(i for i, b in enumerate(bodies) if b["kind"] == SNAPSHOT_KIND)
    bodies[index]["data"][where] = value
    path.write_bytes(sealed(key, bodies))
    for read in (lambda: replay(JournalStream.open(path)), lambda: replay_from_snapshot(path)):
        try:
            read()
        except RecordError as exc:
            assert f"record {index} (line {index + 1}): " in str(exc) and fragment in str(exc)
        else:
            # A damaged-looking last snapshot is passed over for an earlier one.
            assert read is not None


def test_a_snapshot_whose_values_are_not_understood_stops_recovery_with_its_record(tmp_path):
    path = snapshot_session(tmp_path, 3)
    key = read_key(tmp_path / "state")
    bodies = bodies_of(path)
    index = max(i for i, b in enumerate(bodies) if b["kind"] == SNAPSHOT_KIND)
    bodies[index]["data"]["match"] = {"$d": "match_state.Nowhere", "f": {}}
    path.write_bytes(sealed(key, bodies))
    with pytest.raises(RecordError) as caught:
        replay_from_snapshot(path)
    assert f"record {index} (line {index + 1}): the snapshot cannot be read back" in \
        str(caught.value) and "match_state.Nowhere" in str(caught.value)


# --- a real `gammonclock run` killed at random instants of a 25-point match ---------------------

def bench_journal(state: Path, cut: float, seed: int) -> Path:
    """Part of a generated 25-point match journaled in `state` (snapshots included)."""
    import sys
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
    from bench_match import generate_match

    from gammonclock.sim.simulate import run_script

    text = mock_config_text(("length = 7", "length = 25"))
    config = parse_config(text, "mock.toml")
    match = generate_match(seed, config.rules.length, rules=config.rules)
    inputs = match.inputs[:max(2, int(len(match.inputs) * cut))]
    key = load_or_create_key(state)
    path = state / JOURNALS_DIR / "match-25.jsonl"
    writer = JournalWriter.create(path, key, journal_header(text, "mock.toml", 1), 0,
                                  fake_stamps()(), fsync=False)  # type: ignore[operator]
    session = Session(Engine.start(config.rules), writer, fake_stamps(),  # type: ignore[arg-type]
                      config.device.checkpoint_ns, snapshot_every=50)
    run_script(session, inputs, inputs[-1].t)
    session.close()
    assert session.engine.match.end_reason is None      # still in progress: `run` resumes it
    return path


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(4))
def test_a_run_killed_at_a_random_instant_recovers_the_full_replay(tmp_path, processes, seed):
    rnd = random.Random(seed)
    state = tmp_path / "state"
    journal = bench_journal(state, rnd.uniform(0.1, 0.9), seed)
    proc = start_run(tmp_path, processes)
    wait_until_running(proc, lambda: socket_path(state).exists())
    # The arbiter keeps the clock busy: each command is a record, and snapshots follow.
    deadline = time.monotonic() + rnd.uniform(0.2, 1.5)
    words = [["resume"], ["add", "left", "1s"], ["pause"], ["add", "right", "1s"], ["status"]]
    n = 0
    while time.monotonic() < deadline:
        ask(socket_path(state), words[n % len(words)])
        n += 1
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=20)
    full = replay(read_journal(journal))
    assert full.snapshots_differ == [] and full.diverged == []
    fast = replay_from_snapshot(journal)
    assert same(fast.engine, full.engine, fast.history_floor is not None)
    assert verify_and_replay(journal, read_key(state)).verdict.intact
    assert kinds(journal).count(SNAPSHOT_KIND) >= 1

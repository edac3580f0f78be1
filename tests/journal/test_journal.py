"""The journal: replay, torn and damaged records, tamper evidence, fsync before display."""

from __future__ import annotations

import json
import os
import stat

import pytest

from gammonclock.cli.main import main
from gammonclock.core.engine import Engine
from gammonclock.journal.inputs import input_from
from gammonclock.journal.key import key_id, load_or_create_key, read_key
from gammonclock.journal.reader import read_journal
from gammonclock.journal.records import JournalError, Stamp, encode
from gammonclock.journal.replay import replay
from gammonclock.journal.verify import verify
from gammonclock.journal.writer import JournalWriter
from gammonclock.sim.script import parse_script
from gammonclock.sim.simulate import simulate
from journal_helpers import SCRIPT, journaled_run, line_offsets

STAMP = Stamp(1, "b", 2)


def state_of_prefix(path, records: int) -> dict:
    """The state a fresh engine reaches from the journal's first `records` records' inputs."""
    read = read_journal(path)
    engine = None
    for record in read.records[:records]:
        if record.kind == "header":
            engine = Engine.start(replay(read).config.rules, at=record.t)
        elif record.kind == "input":
            engine, _ = engine.feed(input_from(record.t, record.data["input"]))
        elif record.kind == "tick":
            engine, _ = engine.advance(record.t)
    return engine.state_json()


# --- replay: one source of truth -------------------------------------------------------------

def test_a_journal_replays_to_the_state_of_the_run(tmp_path):
    path, session, config = journaled_run(tmp_path)
    assert replay(read_journal(path)).engine.state_json() == session.engine.state_json()
    # ... which is also what the plain simulator computes from the same script.
    parsed = parse_script(SCRIPT, config.rules.hold_ns)
    assert simulate(config.rules, parsed.inputs, parsed.end).state_json() == \
        session.engine.state_json()


def test_replay_recomputes_every_recorded_effect_identically(tmp_path):
    path, _, _ = journaled_run(tmp_path)
    assert replay(read_journal(path)).diverged == []


def test_records_hold_every_input_and_effect_with_their_stamps(tmp_path):
    path, _, config = journaled_run(tmp_path)
    records = read_journal(path).records
    assert [r.seq for r in records] == list(range(len(records)))
    assert records[0].kind == "header" and "[match]" in records[0].data["config"]
    inputs = [r for r in records if r.kind == "input"]
    script = parse_script(SCRIPT, config.rules.hold_ns)
    assert [input_from(r.t, r.data["input"]) for r in inputs] == list(script.inputs)
    assert all(r.boot == "test-boot" and r.wall > 0 and r.mono > 0 for r in records)
    kinds = {e["kind"] for r in records for e in r.data.get("effects", [])}
    assert {"turn_started", "turn_ended", "double_offered", "double_taken", "rewound",
            "game_ended", "dice_rolled", "warned"} <= kinds


def test_checkpoints_while_a_clock_runs_at_most_every_interval(tmp_path):
    path, _, _ = journaled_run(tmp_path)
    records = read_journal(path).records
    # Between any two records, while a clock ran, never more than the 5 s interval.
    state = replay_states(path)
    for (before, running), after in zip(state, records[1:], strict=False):
        if running:
            assert after.t - before.t <= 5 * 10**9, (before.seq, after.seq)


def replay_states(path):
    """(record, whether a clock ran after it) for each record."""
    read = read_journal(path)
    out = []
    engine = Engine.start(replay(read).config.rules, at=0)
    for record in read.records:
        if record.kind == "input":
            engine, _ = engine.feed(input_from(record.t, record.data["input"]))
        elif record.kind == "tick":
            engine, _ = engine.advance(record.t)
        out.append((record, engine.match.running_side is not None))
    return out


def test_no_checkpoints_while_no_clock_runs(tmp_path):
    path, _, _ = journaled_run(tmp_path, "0 tap left\n5 hold left\n200 end\n")
    ticks = [r for r in read_journal(path).records if r.kind == "tick"]
    # result entry from 5 s on: nothing runs, so no checkpoint until the run's end record.
    assert [r.t for r in ticks if r.t > 8 * 10**9] == [200 * 10**9]


# --- torn records: cut at every byte of the last three records -------------------------------

@pytest.mark.slow
def test_a_cut_anywhere_in_the_last_three_records_replays_up_to_the_last_whole_one(tmp_path):
    path, _, _ = journaled_run(tmp_path)
    blob = path.read_bytes()
    offsets = line_offsets(path)          # starts of lines ..., and len(blob) last
    whole_records = len(offsets) - 1
    first_cut = offsets[-4]
    for cut in range(first_cut, len(blob)):
        damaged = tmp_path / "cut.jsonl"
        damaged.write_bytes(blob[:cut])
        read = read_journal(damaged)
        complete = sum(1 for start in offsets[1:] if start <= cut)   # lines whose \n is kept
        assert len(read.records) == complete, cut
        assert (read.torn is not None) == (cut not in offsets), cut
        assert read.stopped is None
        assert replay(read).engine.state_json() == state_of_prefix(path, complete), cut
    assert whole_records == len(read_journal(path).records)


def test_reopening_after_a_torn_record_acknowledges_it_and_goes_on(tmp_path):
    path, _, _ = journaled_run(tmp_path)
    blob = path.read_bytes()
    offsets = line_offsets(path)
    path.write_bytes(blob[:offsets[-2] + 40])       # the last record, cut after 40 bytes
    read = read_journal(path)
    key = load_or_create_key(tmp_path / "state")
    writer = JournalWriter.reopen(read, key, read.last.t, STAMP)
    writer.append("tick", read.last.t + 1, {"effects": []}, STAMP)
    writer.close()
    assert path.read_bytes().startswith(blob[:offsets[-2] + 40])    # never truncated
    again = read_journal(path)
    assert again.torn is None and again.stopped is None
    assert [r.kind for r in again.records[-2:]] == ["torn", "tick"]
    assert verify(path, key).intact


def test_a_damaged_record_in_the_middle_stops_the_replay_there(tmp_path):
    path, _, _ = journaled_run(tmp_path)
    blob = bytearray(path.read_bytes())
    offsets = line_offsets(path)
    blob[offsets[10] + 30] ^= 0x01                   # flip one bit of record 10
    path.write_bytes(bytes(blob))
    read = read_journal(path)
    assert len(read.records) == 10
    assert "line 11" in read.stopped
    assert replay(read).engine.state_json() == state_of_prefix(path, 10)


# --- tamper evidence -------------------------------------------------------------------------

def tampered(tmp_path, change) -> tuple:
    path, _, _ = journaled_run(tmp_path)
    lines = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(b"".join(change(lines)))
    return path, load_or_create_key(tmp_path / "state")


def forge(line: bytes, **fields) -> bytes:
    """A record with fields changed and its checksum redone, sealed with a key that is not the
    device's (what someone without the key can do)."""
    obj = json.loads(line)
    obj.pop("mac")
    obj.pop("sum")
    obj.update(fields)
    return encode(b"not the device key", obj)


def test_an_intact_journal_verifies(tmp_path):
    path, _, _ = journaled_run(tmp_path)
    verdict = verify(path, load_or_create_key(tmp_path / "state"))
    assert verdict.intact and verdict.records == len(read_journal(path).records)


@pytest.mark.parametrize("name, change, fragment", [
    ("flipped byte", lambda ls: ls[:7] + [ls[7].replace(b'"t":', b'"t" :', 1)] + ls[8:],
     "record 7 was altered"),
    ("changed value, checksum redone", lambda ls: ls[:7] + [forge(ls[7], t=1)] + ls[8:],
     "record 7 was altered (its seal does not match)"),
    ("deleted record", lambda ls: ls[:7] + ls[8:], "record 7 was removed"),
    ("deleted records", lambda ls: ls[:7] + ls[10:], "records 7-9 were removed"),
    ("deleted header", lambda ls: ls[1:], "record 0 was removed"),
    ("inserted copy", lambda ls: ls[:7] + [ls[3]] + ls[7:], "record 3 was inserted or moved"),
    ("reordered", lambda ls: ls[:7] + [ls[8], ls[7]] + ls[9:], "removed"),
    ("inserted forgery", lambda ls: ls[:7] + [forge(ls[6], seq=7)] + ls[7:], "altered"),
])
def test_verify_names_the_first_record_altered_removed_inserted_or_moved(
        tmp_path, name, change, fragment):
    path, key = tampered(tmp_path, change)
    verdict = verify(path, key)
    assert not verdict.intact
    assert fragment in verdict.message, verdict.message


def test_verify_with_another_devices_key_says_so(tmp_path):
    path, _, _ = journaled_run(tmp_path)
    other = load_or_create_key(tmp_path / "other")
    verdict = verify(path, other)
    assert verdict.intact and not verdict.sealed and verdict.seal == "another device"
    assert verdict.sealed_by == key_id(read_key(tmp_path / "state"))
    assert verdict.words.startswith(f"sealed by another device (key id {verdict.sealed_by};")


def test_verify_command_exit_codes(tmp_path, capsys):
    path, _, _ = journaled_run(tmp_path)
    state = str(tmp_path / "state")
    assert main(["verify", str(path), "--state-dir", state]) == 0
    out = capsys.readouterr().out
    assert "intact" in out and "backgammon to 7" in out and "Anna v Boris" in out
    lines = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(b"".join(lines[:5] + lines[6:]))
    assert main(["verify", str(path), "--state-dir", state]) == 1
    assert "record 5 was removed" in capsys.readouterr().out


# --- the device key --------------------------------------------------------------------------

def test_the_device_key_is_created_once_with_mode_0600(tmp_path):
    first = load_or_create_key(tmp_path / "s")
    mode = stat.S_IMODE(os.stat(tmp_path / "s" / "device.key").st_mode)
    assert mode == 0o600
    assert load_or_create_key(tmp_path / "s") == first
    assert len(first) == 32


def test_a_journal_is_never_overwritten(tmp_path):
    path, _, _ = journaled_run(tmp_path)
    with pytest.raises(JournalError, match="cannot create"):
        JournalWriter.create(path, b"k" * 32, {}, 0, STAMP)


# --- written and fsynced before anyone sees the effect ---------------------------------------

def test_each_record_is_fsynced_before_the_observers_see_its_effects(tmp_path, monkeypatch):
    synced_sizes: list[int] = []
    real_fsync = os.fsync

    def recording_fsync(fd):
        real_fsync(fd)
        synced_sizes.append(os.fstat(fd).st_size)

    monkeypatch.setattr(os, "fsync", recording_fsync)
    monkeypatch.setattr(os, "fdatasync", recording_fsync)     # the journal's sync
    seen: list[tuple[int, int]] = []       # (records on disk and synced, effects shown)

    from gammonclock.runtime import session as session_module

    real_tell = session_module.Session._tell

    def checking_tell(self, effects):
        if effects and self.journal is not None:
            size = os.path.getsize(self.journal.path)
            assert synced_sizes and synced_sizes[-1] == size, "shown before its record was synced"
            last = read_journal(self.journal.path).last
            recorded = last.data.get("effects", [])
            assert [e.as_dict() for e in effects] == recorded
            seen.append((last.seq, len(effects)))
        real_tell(self, effects)

    monkeypatch.setattr(session_module.Session, "_tell", checking_tell)
    path, _, _ = journaled_run(tmp_path)
    with_effects = [r for r in read_journal(path).records if r.data.get("effects")]
    assert [seq for seq, _ in seen] == [r.seq for r in with_effects]


# --- a journal that fails for a while ----------------------------------------------------------

def test_records_kept_while_the_disk_fails_are_written_in_order_when_it_works_again(
        tmp_path, monkeypatch):
    import errno

    from gammonclock.config.loading import parse_config
    from gammonclock.core.engine import ButtonEdge
    from gammonclock.journal.files import journal_header
    from gammonclock.runtime.session import Session
    from gammonclock.sides import Button
    from journal_helpers import fake_stamps

    config_text = "[match]\nlength = 7\n"
    rules = parse_config(config_text).rules
    path = tmp_path / "j.jsonl"
    key = load_or_create_key(tmp_path / "state")
    stamps = fake_stamps()
    writer = JournalWriter.create(path, key, journal_header(config_text, "t.toml"), 0, stamps())
    session = Session(Engine.start(rules), writer, stamps, 5 * 10**9)
    real_write = os.write
    failing = {"on": False}

    def flaky_write(fd, data):
        if failing["on"] and fd == writer.fd:
            real_write(fd, data[: len(data) // 2])     # half a record reaches the disk ...
            raise OSError(errno.ENOSPC, "No space left on device")   # ... then the disk is full
        return real_write(fd, data)

    monkeypatch.setattr(os, "write", flaky_write)
    presses = [ButtonEdge(i * 10**9, Button.LEFT if i % 2 == 0 else Button.RIGHT, True)
               for i in range(0, 12, 2)]
    releases = [ButtonEdge(e.t + 10**8, e.button, False) for e in presses]
    inputs = sorted(presses + releases, key=lambda e: e.t)
    for n, event in enumerate(inputs):
        failing["on"] = 3 <= n < 7                      # inputs 3..6 meet a full disk
        session.feed(event)
        if failing["on"]:
            assert session.journal_error and "No space left" in session.journal_error
    assert session.journal_error is None and session.backlog == []
    writer.close()
    read = read_journal(path)
    assert read.torn is None and read.stopped is None            # no half record left behind
    journaled = [input_from(r.t, r.data["input"]) for r in read.records if r.kind == "input"]
    assert journaled == inputs
    assert replay(read).engine.state_json() == session.engine.state_json()
    assert verify(path, key).intact

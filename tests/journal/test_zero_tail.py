"""A journal filled ahead with zeros (issue 20): appends go at its logical end and are
`fdatasync`ed; every reader passes over the zeros; a power cut or a kill anywhere in or around
them recovers exactly the records synced; the zeros are cut off when the match ends and when the
journal is closed."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from gammonclock.core.engine import ButtonEdge
from gammonclock.core.match_state import Phase
from gammonclock.export import read_match, render
from gammonclock.journal import prealloc
from gammonclock.journal.key import load_or_create_key
from gammonclock.journal.reader import (
    JournalStream,
    header_data_unchecked,
    open_from_snapshot,
    read_header,
    read_journal,
)
from gammonclock.journal.replay import replay
from gammonclock.journal.verify import verify
from gammonclock.link.outbox import JournalTail
from gammonclock.runtime.service import ClockService
from gammonclock.runtime.session import Session, recover
from gammonclock.runtime.usb_stick import export_to_stick
from gammonclock.sides import Button
from journal_helpers import fake_stamps, record_syncs
from zero_tail_helpers import S, live, taps


def zero_tail(path: Path) -> int:
    """How many zeros the file holds after its logical end."""
    return path.stat().st_size - prealloc.written_end(path)


def macs(path: Path) -> list[str]:
    return [r.mac for r in read_journal(path).records]


def recovered(path: Path, key: bytes) -> tuple[Session, list[str]]:
    return recover(path, key, fake_stamps(), checkpoint_ns=5 * S)  # type: ignore[arg-type]


def assert_whole_without_zeros(path: Path, key: bytes) -> None:
    assert b"\0" not in path.read_bytes()
    read = read_journal(path)
    assert read.torn is None and read.stopped is None
    assert verify(path, key).intact


# --- appends into the zeros ----------------------------------------------------------------

def test_appends_go_into_the_zeros_filled_ahead_and_their_syncs_change_no_size(
        tmp_path, monkeypatch):
    session, writer, key = live(tmp_path)
    taps(session, 3, 1)
    end = prealloc.written_end(writer.path)
    assert writer.fill_ahead()
    size = writer.path.stat().st_size
    assert size == prealloc.fill_target(end) and size - end >= prealloc.AHEAD_BYTES
    assert zero_tail(writer.path) == size - end
    assert not writer.fill_ahead()                 # enough zeros ahead: nothing to do
    syncs = record_syncs(monkeypatch)
    taps(session, 4, 20)
    # Every record synced by an fdatasync of a file whose size stayed what the fill made it.
    assert syncs and {entry for entry in syncs} == {("fdatasync", size)}
    assert writer.path.stat().st_size == size
    read = read_journal(writer.path)
    assert read.size == prealloc.written_end(writer.path) > end
    assert read.count == writer.next_seq + writer.unsynced and read.torn is None
    assert read.stopped is None
    assert verify(writer.path, key).intact


def test_the_writer_fills_again_once_fewer_than_low_bytes_are_left(tmp_path, monkeypatch):
    monkeypatch.setattr(prealloc, "AHEAD_BYTES", 4096)
    from gammonclock.journal import writer as writer_module
    monkeypatch.setattr(writer_module, "LOW_BYTES", 2048)
    session, writer, _ = live(tmp_path)
    assert writer.fill_ahead()
    first = writer.path.stat().st_size
    at = taps(session, 1, 1)
    while first - prealloc.written_end(writer.path) >= 2048:
        assert not writer.fill_ahead()
        at = taps(session, 1, at)
    assert writer.fill_ahead()
    assert writer.path.stat().st_size > first
    assert zero_tail(writer.path) >= 4096


def test_a_journal_grown_past_its_zeros_is_still_whole_and_synced(tmp_path):
    """A burst of records beyond the zeros (no idle time to fill again) grows the file: each
    sync then writes the size too, and nothing is lost."""
    session, writer, key = live(tmp_path)
    assert writer.fill_ahead()
    size = writer.path.stat().st_size
    writer.append_batch([("tick", n * S, {"effects": [], "pad": "x" * 2000}, fake_stamps()())
                         for n in range(1, 2 + size // 2000)])
    assert zero_tail(writer.path) == 0 and writer.path.stat().st_size > size
    writer.close()
    assert_whole_without_zeros(writer.path, key)


# --- a power cut in or around the zeros ------------------------------------------------------

def cuts_of_interest(start: int, stop: int) -> list[int]:
    """Every byte offset for the first 64 after `start`, every page's last byte and first, and
    `stop`."""
    offsets = set(range(start, min(stop, start + 64) + 1)) | {stop}
    offsets |= {p + d for p in range(0, stop + 1, prealloc.PAGE) for d in (-1, 0)
                if start <= p + d <= stop}
    return sorted(offsets)


def test_a_power_cut_anywhere_in_the_zeros_recovers_exactly_the_synced_records(tmp_path):
    session, writer, key = live(tmp_path / "live")
    taps(session, 5, 1)
    assert writer.fill_ahead()
    taps(session, 3, 30)                       # appended into the zeros, synced
    synced = macs(writer.path)
    blob = writer.path.read_bytes()
    end = prealloc.written_end(writer.path)
    assert len(blob) - end > prealloc.LOW_BYTES
    for cut in cuts_of_interest(end, len(blob)):
        # The file as a cut of the fill, or its copy, may leave it: up to `cut`.
        copy = tmp_path / f"cut-{cut}" / "match.jsonl"
        copy.parent.mkdir()
        copy.write_bytes(blob[:cut])
        session2, notes = recovered(copy, key)
        assert notes == [], (cut, notes)
        assert macs(copy)[:len(synced)] == synced, cut
        kinds = [r.kind for r in read_journal(copy).records[len(synced):]]
        assert kinds and set(kinds) <= {"input", "tick", "state"}, (cut, kinds)  # Recover: an input
        session2.close()
        assert_whole_without_zeros(copy, key)
        shutil.rmtree(copy.parent)


def test_a_power_cut_inside_a_record_written_into_the_zeros_drops_that_record_alone(tmp_path):
    """The card holds the record's first bytes, the zeros after them (the size never moved):
    recovery drops the torn record, as a torn last line, and goes on after it."""
    session, writer, key = live(tmp_path / "live")
    taps(session, 4, 1)
    assert writer.fill_ahead()
    synced = macs(writer.path)
    start = prealloc.written_end(writer.path)
    taps(session, 1, 30)                      # the record the power cut tears
    blob = writer.path.read_bytes()
    end = prealloc.written_end(writer.path)
    line_end = blob.index(b"\n", start) + 1   # the press's record (its release follows)
    for cut in range(start + 1, line_end, 7):
        copy = tmp_path / f"cut-{cut}" / "match.jsonl"
        copy.parent.mkdir()
        copy.write_bytes(blob[:cut] + bytes(len(blob) - cut))
        session2, notes = recovered(copy, key)
        assert any("torn" in note for note in notes), (cut, notes)
        records = read_journal(copy).records
        assert [r.mac for r in records[:len(synced)]] == synced
        assert records[len(synced)].kind == "torn"
        assert records[len(synced)].data == {"offset": start, "length": cut - start}
        session2.close()
        assert_whole_without_zeros(copy, key)
        shutil.rmtree(copy.parent)
    assert end > line_end


def test_a_record_whose_end_reached_the_card_before_its_start_is_dropped_as_torn(tmp_path):
    """Pages of an unsynced write may reach the card in any order: the record's start still
    zeros, its end there, zeros after. It is one damaged last line: dropped, the match goes on
    in the same journal."""
    session, writer, key = live(tmp_path / "live")
    taps(session, 4, 1)
    assert writer.fill_ahead()
    synced = macs(writer.path)
    start = prealloc.written_end(writer.path)
    taps(session, 1, 30)
    blob = bytearray(writer.path.read_bytes())
    line_end = blob.index(b"\n", start) + 1
    blob[start:start + 40] = bytes(40)         # its first 40 bytes never reached the card
    blob[line_end:] = bytes(len(blob) - line_end)
    writer.close()
    copy = tmp_path / "copy" / "match.jsonl"
    copy.parent.mkdir()
    copy.write_bytes(bytes(blob))
    session2, notes = recovered(copy, key)
    assert any("torn" in note for note in notes), notes
    assert macs(copy)[:len(synced)] == synced
    session2.close()
    read = read_journal(copy)                  # the torn line's zeros stay, acknowledged
    assert read.torn is None and read.stopped is None and verify(copy, key).intact


def test_a_batch_whose_second_record_reached_the_card_alone_goes_on_in_a_new_journal(tmp_path):
    """Two records of one unsynced batch, the first's start still zeros and the second whole: a
    damaged line followed by a good one is damage in the middle, as today. The journal is kept
    as it is and the match goes on in a new journal holding every synced record."""
    session, writer, key = live(tmp_path / "live")
    taps(session, 4, 1)
    assert writer.fill_ahead()
    synced = macs(writer.path)
    start = prealloc.written_end(writer.path)
    taps(session, 1, 30)                       # a press and its release: two lines
    blob = bytearray(writer.path.read_bytes())
    blob[start:start + 40] = bytes(40)
    writer.close()
    state = tmp_path / "copy"
    copy = state / "journals" / "match.jsonl"
    copy.parent.mkdir(parents=True)
    copy.write_bytes(bytes(blob))
    session2, notes = recovered(copy, key)
    assert any("damaged" in note for note in notes), notes
    new = session2.journal.path                         # type: ignore[union-attr]
    assert new != copy and copy.read_bytes() == bytes(blob)
    continued = read_journal(new)
    assert continued.header.data["continues"]["records"] == len(synced)
    session2.close()
    assert verify(new, key).intact and b"\0" not in new.read_bytes()


# --- a kill -9 between the fill and the appends ----------------------------------------------

CHILD = textwrap.dedent("""\
    import os, sys
    sys.path.insert(0, {tests!r})
    from pathlib import Path
    import zero_tail_helpers as t
    session, writer, key = t.live(Path({folder!r}))
    at = t.taps(session, 4, 1)
    mode = {mode!r}
    if mode == "in the fill":
        def stuck(fd):
            print(writer.next_seq + writer.unsynced, flush=True)   # zeros written, never synced
            sys.stdin.read()
        os.fsync = stuck
    writer.fill_ahead()
    if mode == "after appends":
        t.taps(session, 3, at)
    print(writer.next_seq + writer.unsynced, flush=True)    # a kill keeps what was written
    sys.stdin.read()
""")


@pytest.mark.parametrize("mode", ["in the fill", "after the fill", "after appends"])
def test_a_kill_between_the_fill_and_the_appends_recovers_every_record_written(tmp_path, mode):
    """A kill -9 loses nothing written (the page cache outlives the process): recovery takes
    every record up to the zeros, and goes on there."""
    tests = Path(__file__).resolve().parents[1]
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD.format(tests=str(tests), folder=str(tmp_path), mode=mode)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = child.stdout.readline()                  # type: ignore[union-attr]
        assert line.strip().isdigit(), child.stderr.read()  # type: ignore[union-attr]
        written = int(line)
        child.send_signal(signal.SIGKILL)
    finally:
        child.wait(timeout=30)
    assert child.returncode == -signal.SIGKILL
    path = tmp_path / "match.jsonl"
    assert zero_tail(path) > 0                          # the kill left zeros after the records
    synced = macs(path)
    assert len(synced) == written
    key = load_or_create_key(tmp_path / "state")
    session, notes = recovered(path, key)
    assert notes == []
    read = read_journal(path)
    assert [r.mac for r in read.records[:written]] == synced
    assert read.torn is None and read.stopped is None and verify(path, key).intact
    assert zero_tail(path) > 0                          # continued in the zeros ...
    session.close()
    assert_whole_without_zeros(path, key)               # ... and cut to its end when closed


# --- every reader: the same with and without the zeros ---------------------------------------

def what_readers_say(path: Path, key: bytes) -> dict[str, object]:
    read = read_journal(path)
    stream = open_from_snapshot(path)
    tail = JournalTail(path, 0)
    events = tail.read(10_000)
    match = read_match(path)
    return {
        "records": read.records, "torn": read.torn, "stopped": read.stopped, "size": read.size,
        "from snapshot": (stream.start, list(stream.each()), stream.size),
        "header": read_header(path), "header data": header_data_unchecked(path),
        "verify": verify(path, key),
        "replay": replay(JournalStream.open(path)).engine.state_json(),
        "events": events, "tail": (tail.last_seq, tail.last_event),
        "csv": render(match, "csv"), "json": json.loads(render(match, "json")),
        "written": prealloc.written_bytes(path),
    }


@pytest.mark.parametrize("torn", [False, True])
def test_every_reader_of_a_journal_with_zeros_says_what_it_says_of_it_cut(tmp_path, torn):
    session, writer, key = live(tmp_path)
    at = taps(session, 9, 1)
    assert writer.fill_ahead()
    taps(session, 4, at)
    assert any(r.kind == "state" for r in read_journal(writer.path).records[-8:])
    if torn:                                    # a half-written record before the zeros
        os.pwrite(writer.fd, b'{"seq":99,"kind":"inp', prealloc.written_end(writer.path))
    path = writer.path
    with_zeros = what_readers_say(path, key)
    assert zero_tail(path) > 0 and (with_zeros["torn"] is not None) == torn
    assert not any("\0" in line for event in with_zeros["events"]  # type: ignore[attr-defined]
                   for line in event.records)
    with path.open("r+b") as f:
        f.truncate(prealloc.written_end(path))
    assert zero_tail(path) == 0
    assert what_readers_say(path, key) == with_zeros


def test_the_hall_links_tail_never_reads_the_zeros_as_a_line(tmp_path):
    """Read as the records are appended into the zeros: never a line of zeros, never an event
    beyond what is on the card, and the same events as from the journal cut at its end."""
    session, writer, key = live(tmp_path)
    assert writer.fill_ahead()
    tail = JournalTail(writer.path, 0)
    events = []
    at = 1.0
    for _ in range(6):
        at = taps(session, 1, at)
        got = tail.read(1000, upto=writer.next_seq - 1)
        assert all("\0" not in line for event in got for line in event.records)
        events.extend(got)
    assert zero_tail(writer.path) > 0
    writer.close()
    assert events == JournalTail(writer.path, 0).read(1000)


def test_the_sticks_copy_of_a_live_journal_holds_no_zeros(tmp_path):
    session, writer, key = live(tmp_path / "clock")
    at = taps(session, 3, 1)
    assert writer.fill_ahead()
    taps(session, 2, at)
    assert zero_tail(writer.path) > 0
    stick = tmp_path / "stick"
    stick.mkdir()
    report = export_to_stick(stick, "t1", [], writer.path, key)
    assert report.problem is None and report.in_progress == writer.path.name
    copied = stick / "gammonclock" / "exports" / "t1" / writer.path.name
    assert copied.read_bytes() == prealloc.written_bytes(writer.path)
    assert b"\0" not in copied.read_bytes() and verify(copied, key).intact
    # Once more with nothing new: the copy on the stick counts as done, not copied again.
    again = export_to_stick(stick, "t1", [], writer.path, key)
    assert again.problem is None and again.in_progress == writer.path.name


def test_the_export_of_a_live_journal_holds_no_zeros(tmp_path):
    session, writer, key = live(tmp_path)
    at = taps(session, 3, 1)
    assert writer.fill_ahead()
    taps(session, 2, at)
    document = json.loads(render(read_match(writer.path), "json"))
    end = prealloc.written_end(writer.path)
    assert document["seal"]["bytes"] == end < writer.path.stat().st_size
    import hashlib
    assert document["seal"]["sha256"] == hashlib.sha256(
        prealloc.written_bytes(writer.path)).hexdigest()
    assert "\0" not in render(read_match(writer.path), "csv")


# --- cut off when the match ends, and on close -----------------------------------------------

def test_the_zeros_are_cut_off_once_the_match_is_over_and_never_filled_again(tmp_path):
    session, writer, key = live(tmp_path)
    taps(session, 1, 1)                              # right's clock runs: 2 minutes
    session.keep_ahead()
    assert zero_tail(writer.path) > 0
    session.advance(200 * S)                         # right's flag falls
    session.commit()
    assert session.engine.match.play_phase is Phase.MATCH_OVER
    session.keep_ahead()
    assert zero_tail(writer.path) == 0
    session.keep_ahead()
    assert zero_tail(writer.path) == 0
    read = read_journal(writer.path)
    assert read.torn is None and verify(writer.path, key).intact


def test_closing_the_journal_cuts_its_zeros_off(tmp_path):
    session, writer, key = live(tmp_path)
    taps(session, 2, 1)
    session.keep_ahead()
    assert zero_tail(writer.path) > 0
    session.close()
    assert_whole_without_zeros(writer.path, key)


def test_the_loop_fills_aheadwhen_idle_and_not_with_an_input_waiting(tmp_path):
    session, writer, key = live(tmp_path)
    now = [10 * S]
    service = ClockService(session, [], origin=0, clock_ns=lambda: now[0])
    service.submit(ButtonEdge(now[0], Button.LEFT, True))
    service.when_idle(None)                          # an input waits: not now
    assert zero_tail(writer.path) == 0
    now[0] += S
    service.step()
    service.when_idle(now[0] + 5 * 1_000_000)        # something due in 5 ms: not now
    assert zero_tail(writer.path) == 0
    service.when_idle(now[0] + S)                    # idle for a second: filled
    assert zero_tail(writer.path) >= prealloc.AHEAD_BYTES // 2
    service.close_session()
    assert_whole_without_zeros(writer.path, key)


def test_a_fill_the_card_refuses_is_logged_and_the_appends_go_on(tmp_path, monkeypatch, caplog):
    session, writer, key = live(tmp_path)
    at = taps(session, 2, 1)
    tries: list[int] = []

    def full(fd: int, data: bytes, offset: int) -> int:
        tries.append(offset)
        raise OSError(28, "No space left on device")
    monkeypatch.setattr(os, "pwrite", full)
    assert not writer.fill_ahead()
    assert "cannot fill the journal ahead" in caplog.text and len(tries) == 1
    assert not writer.fill_ahead() and len(tries) == 1      # not again at every idle moment
    taps(session, 3, at)
    assert zero_tail(writer.path) == 0
    session.close()
    assert_whole_without_zeros(writer.path, key)


def test_the_zeros_are_filled_while_a_quiet_release_waits_for_its_sync(tmp_path):
    session, writer, key = live(tmp_path)
    taps(session, 2, 1)
    session.feed(ButtonEdge(20 * S, Button.LEFT, True))
    session.commit()
    session.feed(ButtonEdge(20 * S + S // 10, Button.LEFT, False))   # quiet: no sync of its own
    session.commit()
    waiting = writer.unsynced
    assert waiting == 1
    assert writer.fill_ahead()
    assert writer.unsynced == waiting and zero_tail(writer.path) > 0
    session.feed(ButtonEdge(25 * S, Button.RIGHT, True))
    session.commit()
    assert writer.unsynced == 0
    session.close()
    assert_whole_without_zeros(writer.path, key)


def test_the_hall_links_tail_reads_on_past_a_damaged_line_that_starts_with_zeros(tmp_path):
    """A record whose start never reached the card (pages written out of order), acknowledged
    by the `torn` record recovery writes: the tail passes over it and publishes what follows."""
    session, writer, key = live(tmp_path / "live")
    taps(session, 3, 1)
    assert writer.fill_ahead()
    start = prealloc.written_end(writer.path)
    taps(session, 1, 20)
    blob = bytearray(writer.path.read_bytes())
    line_end = blob.index(b"\n", start) + 1
    blob[start:start + 40] = bytes(40)
    blob[line_end:] = bytes(len(blob) - line_end)
    writer.close()
    copy = tmp_path / "copy" / "match.jsonl"
    copy.parent.mkdir()
    copy.write_bytes(bytes(blob))
    tail = JournalTail(copy, 0)
    before = tail.read(1000)
    session2, _ = recovered(copy, key)
    taps(session2, 2, 40)
    after = before + tail.read(1000)
    assert after == JournalTail(copy, 0).read(1000)
    torn = next(r.seq for r in read_journal(copy).records if r.kind == "torn")
    assert any(event.seq > torn for event in after)          # the taps after it reach the hall
    assert all("\0" not in line for event in after for line in event.records)
    session2.close()

"""The journal read record by record (issue 11): the stream gives exactly the records, the torn
line and the damage that reading the whole file gives, in memory that does not grow with the
journal; `verify` walks the file once, checking the seals and replaying in the same pass; the
export keeps the place of each record, not the record; `surviving` keeps what it kept before."""

from __future__ import annotations

import tracemalloc
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

import gammonclock.journal.reader as journal_reader
import gammonclock.journal.verify as journal_verify
from gammonclock.cli.main import main
from gammonclock.core.effects import Effect, Rewound, TurnStarted, surviving
from gammonclock.export.stream import load_stream
from gammonclock.journal.key import read_key
from gammonclock.journal.reader import JournalStream, Torn, read_journal
from gammonclock.journal.records import decode
from gammonclock.journal.replay import replay, verify_and_replay
from gammonclock.journal.verify import verify
from gammonclock.sides import Side
from journal_helpers import bodies_of, journaled_run, sealed
from property_helpers import property_settings

S = 1_000_000_000


def taps(count: int) -> str:
    """A script of `count` turn switches."""
    return "0 tap left\n" + "".join(f"+{3 + n % 5} tap {'right' if n % 2 == 0 else 'left'}\n"
                                    for n in range(count)) + "+2 end\n"


LONG = taps(300)


# --- surviving: the same effects, in one pass ----------------------------------------------------

def surviving_before(effects: list[Effect]) -> list[Effect]:
    """The list rebuilt at every Rewound, as it was before issue 11 (the reference)."""
    kept: list[tuple[int, Effect]] = []
    for seq, effect in enumerate(effects):
        if isinstance(effect, Rewound):
            kept = [(s, e) for s, e in kept if s < effect.since_seq]
        else:
            kept.append((seq, effect))
    return [e for _, e in kept]


@property_settings(300)
@given(st.lists(st.one_of(st.integers(0, 5), st.tuples(st.just("rewind"), st.integers(0, 60))),
                max_size=60))
def test_surviving_keeps_what_it_kept_before(plan):
    effects: list[Effect] = []
    for n, step in enumerate(plan):
        if isinstance(step, tuple):
            effects.append(Rewound(n, min(step[1], len(effects)), n, "held"))
        else:
            effects.append(TurnStarted(n, Side.LEFT, step, 0))
    assert surviving(effects) == surviving_before(effects)


# --- the stream reads what the whole read reads --------------------------------------------------

def damaged_variants(path: Path) -> dict[str, bytes]:
    blob = path.read_bytes()
    lines = blob.splitlines(keepends=True)
    return {
        "whole": blob,
        "torn last line": blob + b'{"boot":"half',
        "a whole bad last line": blob + b"not a record\n",
        "damaged in the middle": b"".join(lines[:5] + [b"x" + lines[5][1:]] + lines[6:]),
        "a record missing": b"".join(lines[:5] + lines[6:]),
    }


@pytest.mark.parametrize("case", ["whole", "torn last line", "a whole bad last line",
                                  "damaged in the middle", "a record missing"])
def test_the_stream_reads_what_the_whole_read_reads(tmp_path, case):
    path, _, _ = journaled_run(tmp_path)
    damaged = tmp_path / "damaged.jsonl"
    damaged.write_bytes(damaged_variants(path)[case])
    whole = read_journal(damaged)
    stream = JournalStream.open(damaged)
    records = [stream.header, *stream.each()]
    assert records == whole.records
    assert [r.line for r in records] == [r.line for r in whole.records]
    assert (stream.torn, stream.stopped, stream.count, stream.last) == \
        (whole.torn, whole.stopped, whole.count, whole.last)
    assert stream.problems() == whole.problems()
    assert replay(stream).engine.state_json() == replay(whole).engine.state_json()
    # `read_journal` is built on the stream, so the comparison above cannot tell a wrong reading
    # from a right one: what each case must give, from the undamaged lines decoded one by one.
    original = path.read_bytes().splitlines(keepends=True)
    offsets = [sum(len(line) for line in original[:n]) for n in range(len(original))]
    expected = [decode(line[:-1], n + 1, offset)[0]
                for n, (line, offset) in enumerate(zip(original, offsets, strict=True))]
    size = damaged.stat().st_size
    torn, stopped, kept = {
        "whole": (None, None, expected),
        "torn last line": (Torn(len(path.read_bytes()), size - len(path.read_bytes())), None,
                           expected),
        "a whole bad last line": (Torn(len(path.read_bytes()), len(b"not a record\n")), None,
                                  expected),
        "damaged in the middle": (None, "record at line 6 ", expected[:5]),
        "a record missing": (None, "record at line 6 ", expected[:5]),
    }[case]
    assert records == kept
    assert stream.torn == torn
    assert (stream.stopped or "").startswith(stopped or "") and (stream.stopped is None) == (
        stopped is None)


def peak_while_reading(path: Path) -> int:
    tracemalloc.start()
    try:
        count = sum(1 for _ in JournalStream.open(path).each())
        assert count > 0
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_reading_a_journal_takes_memory_that_does_not_grow_with_it(tmp_path):
    short, _, _ = journaled_run(tmp_path / "short", LONG)
    long_path, _, _ = journaled_run(tmp_path / "long", taps(1500))
    assert long_path.stat().st_size > 4 * short.stat().st_size
    base = peak_while_reading(short)
    assert peak_while_reading(long_path) < base + 8 * 1024
    assert peak_while_reading(long_path) < long_path.stat().st_size / 20


# --- verify: one walk, seals and replay ----------------------------------------------------------

def test_verify_walks_the_journal_once_and_replays_on_the_way(tmp_path, monkeypatch, capsys):
    path, session, _ = journaled_run(tmp_path, LONG)
    walks = []
    real = journal_reader._file_lines

    def counted(*args):
        walks.append(args[1:])
        return real(*args)
    monkeypatch.setattr(journal_reader, "_file_lines", counted)    # the reader's walks ...
    monkeypatch.setattr(journal_verify, "_file_lines", counted)    # ... and the seals' walk
    checked = verify_and_replay(path, read_key(tmp_path / "state"))
    assert len(walks) == 1
    assert checked.verdict.intact and checked.replayed is not None
    assert checked.replayed.engine.state_json() == session.engine.state_json()
    walks.clear()
    assert main(["verify", str(path), "--state-dir", str(tmp_path / "state")]) == 0
    assert len(walks) == 1
    out = capsys.readouterr().out
    assert f"intact: {read_journal(path).count} records; match: backgammon to 7" in out


@pytest.mark.parametrize("case", ["torn last line", "damaged in the middle", "a record missing"])
def test_verify_with_its_replay_gives_the_verdict_of_the_seals_alone(tmp_path, case):
    path, _, _ = journaled_run(tmp_path)
    damaged = tmp_path / "damaged.jsonl"
    damaged.write_bytes(damaged_variants(path)[case])
    key = read_key(tmp_path / "state")
    assert verify_and_replay(damaged, key).verdict == verify(damaged, key)


def test_a_record_not_understood_still_leaves_a_later_broken_seal_the_verdict(tmp_path):
    path, _, _ = journaled_run(tmp_path)
    key = read_key(tmp_path / "state")
    bodies = bodies_of(path)
    bodies[3]["data"]["input"]["type"] = "chord"          # sealed, but not understood
    lines = sealed(key, bodies).splitlines(keepends=True)
    lines[8] = lines[8][:-4] + (b"0" if lines[8][-4:-3] != b"0" else b"1") + lines[8][-3:]
    path.write_bytes(b"".join(lines))
    verdict = verify_and_replay(path, key).verdict
    assert not verdict.intact and "line 9: record 8 was altered" in verdict.message


# --- the export keeps places, not records --------------------------------------------------------

def test_the_export_reads_a_record_again_only_when_asked(tmp_path):
    path, _, _ = journaled_run(tmp_path)
    stream = load_stream(path)
    records = {r.seq: r for r in read_journal(path).records}
    for item in stream.effects:
        assert not hasattr(item, "__dict__") or "record" not in vars(item)
        assert item.record == records[item.place.seq]
        assert item.wall == records[item.place.seq].wall + item.t - records[item.place.seq].t

"""A continued journal's size cap (SPEC §13.5) is on what is written in it, not on the zeros a
live journal holds after its end (`journal.prealloc`): a dead clock's journal taken from its
card or a stick within `prealloc.MOST_AHEAD` of the cap is continued; one whose written part is
over it is refused naming the file; a huge file (a hostile stick's) is refused without being
read."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from gammonclock.core.match import Phase
from gammonclock.journal.prealloc import MOST_AHEAD, fill_target, fill_zeros, written_end
from gammonclock.runtime import continuation
from gammonclock.runtime.continuation import (
    COPIED_FROM_STICK,
    ContinuationRefused,
    check_source,
    journal_on_stick,
)
from gammonclock.runtime.lifecycle import load_next_match
from gammonclock.sides import Button
from venue_helpers import MATCH_TEXT, Venue, journal_of, tap


@pytest.fixture(scope="module")
def dead_journal(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A match under way on a clock that died: its journal as it stood, no zeros after it."""
    tmp_path = tmp_path_factory.mktemp("dead")
    venue = Venue()
    dead = venue.build(tmp_path, "T7", tmp_path / "t7", 3600, "boot-t7")
    assert load_next_match(dead.service, dead.table, MATCH_TEXT, "match.toml").ok
    tap(venue, dead, Button.LEFT)
    for button in (Button.RIGHT, Button.LEFT, Button.RIGHT):
        tap(venue, dead, button)
    assert dead.session is not None
    assert dead.session.engine.match.play_phase is not Phase.MATCH_OVER
    kept = tmp_path / "kept" / journal_of(dead).name
    kept.parent.mkdir()
    kept.write_bytes(journal_of(dead).read_bytes().rstrip(b"\0"))
    for device in venue.clocks:
        device.close()
    yield kept


def with_zeros_ahead(source: Path, into: Path) -> tuple[Path, int]:
    """A copy of `source` in folder `into` with the zeros a live journal holds after its end,
    as many as a fill leaves; and the size of its written part."""
    into.mkdir(parents=True, exist_ok=True)
    path = into / source.name
    shutil.copy(source, path)
    written = path.stat().st_size
    fd = os.open(path, os.O_WRONLY)
    try:
        fill_zeros(fd, written, fill_target(written))
    finally:
        os.close(fd)
    assert written_end(path) == written
    assert path.stat().st_size - written >= (1 << 17)    # 128 KiB of zeros, or more
    return path, written


def on_stick(stick: Path, journal: Path) -> Path:
    """A stick asking this clock (table SPARE) to continue `journal`."""
    folder = stick / "gammonclock" / "continue"
    folder.mkdir(parents=True, exist_ok=True)
    if journal.parent != folder:
        shutil.move(journal, folder / journal.name)
    (folder / "SPARE.continue").write_text("", encoding="utf-8")
    return folder / journal.name


def bytes_read() -> int:
    """What this process has read so far through read(2) and its kin (Linux's rchar)."""
    for line in Path("/proc/self/io").read_text(encoding="ascii").splitlines():
        if line.startswith("rchar:"):
            return int(line.split()[1])
    raise AssertionError("/proc/self/io has no rchar")


# --- within the cap: its zeros ahead do not count -------------------------------------------

def test_a_live_journal_whose_zeros_pass_the_cap_is_continued_from_the_card(
        dead_journal, tmp_path, monkeypatch):
    card, written = with_zeros_ahead(dead_journal, tmp_path / "card")
    # The cap just above the written part: the file with its zeros is over it.
    monkeypatch.setattr(continuation, "MAX_SOURCE_BYTES", written + 100)
    assert card.stat().st_size > continuation.MAX_SOURCE_BYTES
    source = check_source(card, None)
    assert source.read.count > 4 and Path(source.read.path) == card and source.verdict.intact


def test_a_live_journal_whose_zeros_pass_the_cap_is_copied_off_a_stick(
        dead_journal, tmp_path, monkeypatch):
    live, written = with_zeros_ahead(dead_journal, tmp_path / "live")
    stick = tmp_path / "stick"
    on_stick(stick, live)
    monkeypatch.setattr(continuation, "MAX_SOURCE_BYTES", written + 100)
    state = tmp_path / "state"
    copy = journal_on_stick(stick, "SPARE", state)
    assert copy == state / COPIED_FROM_STICK / dead_journal.name
    assert copy.read_bytes() == dead_journal.read_bytes()        # the zeros left behind
    assert check_source(copy, None).read.count > 4


# --- over the cap: refused, naming the file -------------------------------------------------

def test_a_journal_whose_written_part_is_over_the_cap_is_refused_from_the_card(
        dead_journal, tmp_path, monkeypatch):
    card, written = with_zeros_ahead(dead_journal, tmp_path / "card")
    monkeypatch.setattr(continuation, "MAX_SOURCE_BYTES", written - 1)
    with pytest.raises(ContinuationRefused) as refused:
        check_source(card, None)
    assert str(refused.value) == (f"{card}: {written} bytes, more than 0 MiB: not a match's "
                                  f"journal; nothing changed")


def test_a_journal_whose_written_part_is_over_the_cap_is_refused_from_a_stick(
        dead_journal, tmp_path, monkeypatch):
    live, written = with_zeros_ahead(dead_journal, tmp_path / "live")
    stick = tmp_path / "stick"
    on_stick_path = on_stick(stick, live)
    monkeypatch.setattr(continuation, "MAX_SOURCE_BYTES", written - 1)
    state = tmp_path / "state"
    with pytest.raises(ContinuationRefused) as refused:
        journal_on_stick(stick, "SPARE", state)
    assert str(refused.value) == f"{on_stick_path}: more than 0 MiB: not a match's journal"
    assert not (state / COPIED_FROM_STICK / dead_journal.name).exists()


# --- a huge file: refused unread -------------------------------------------------------------

def huge(path: Path) -> Path:
    """A 4 GiB file (sparse) that is not zero at its start nor at its very end."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("wb") as f:
        f.write(b'{"seq":0,"kind":"header"}\n')
        f.truncate(4 << 30)
        f.seek((4 << 30) - 1)
        f.write(b"x")
    return path


def test_a_huge_file_on_a_stick_is_refused_without_being_read(tmp_path):
    stick = tmp_path / "stick"
    journal = on_stick(stick, huge(tmp_path / "match-1-huge.jsonl"))
    before = bytes_read()
    with pytest.raises(ContinuationRefused) as refused:
        journal_on_stick(stick, "SPARE", tmp_path / "state")
    assert bytes_read() - before < MOST_AHEAD          # not its 4 GiB, nor its last 128 KiB
    assert str(refused.value) == f"{journal}: more than 64 MiB: not a match's journal"


def test_a_huge_file_named_to_continue_is_refused_without_being_read(tmp_path):
    path = huge(tmp_path / "card" / "match-1-huge.jsonl")
    before = bytes_read()
    with pytest.raises(ContinuationRefused) as refused:
        check_source(path, None)
    assert bytes_read() - before < MOST_AHEAD
    assert str(refused.value) == (f"{path}: {4 << 30} bytes, more than 64 MiB: not a match's "
                                  f"journal; nothing changed")


def test_a_file_of_zeros_just_within_the_bound_is_read_only_that_far(tmp_path, monkeypatch):
    """The most a stick's file makes the clock read: the cap and the most zeros after it."""
    monkeypatch.setattr(continuation, "MAX_SOURCE_BYTES", 1 << 20)
    stick = tmp_path / "stick"
    path = tmp_path / "match-1-zeros.jsonl"
    with path.open("wb") as f:
        f.write(b"{" + b"x" * ((1 << 20) + 10) + b"\n")       # its written part over the cap
        f.truncate((1 << 20) + MOST_AHEAD)
    journal = on_stick(stick, path)
    before = bytes_read()
    with pytest.raises(ContinuationRefused, match="more than 1 MiB") as refused:
        journal_on_stick(stick, "SPARE", tmp_path / "state")
    assert bytes_read() - before <= (1 << 20) + MOST_AHEAD
    assert str(refused.value).startswith(str(journal))


@pytest.mark.parametrize("name", ["match-1\nTAMPERED.jsonl", "match-\x1b[2J.jsonl",
                                  "match-" + "x" * 200 + ".jsonl", "match-..jsonl"])
def test_a_stick_file_whose_name_is_no_journals_is_not_read(tmp_path, name):
    """A stick's names are anyone's: only a journal's name as a clock makes it is read (it goes
    into the journaled offer, the panels and the reply)."""
    stick = tmp_path / "stick"
    odd = tmp_path / "odd"
    odd.mkdir()
    (odd / name).write_bytes(b'{"seq":0,"kind":"header"}\n')
    on_stick(stick, odd / name)
    with pytest.raises(ContinuationRefused, match="no journal") as refused:
        journal_on_stick(stick, "SPARE", tmp_path / "state")
    assert "\n" not in str(refused.value) and "\x1b" not in str(refused.value)
    assert not (tmp_path / "state").exists() or not list((tmp_path / "state").rglob("match-*"))

"""A match continued on another clock (SPEC §13.5, issue 24): `arbiter continue FROM`.

The clocks are whole devices on mock hardware driven by real presses (`ButtonEdge`s through the
service, the test being the loop's thread), on one shared fake real time: each clock has its own
monotonic clock (its own uptime) and boot id, and all their wall clocks read the same time, so
that a match played across two clocks and the same match played on one can be compared (the
venue: venue_helpers.py)."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from gammonclock.config.loading import parse_device_config
from gammonclock.core.match import Phase
from gammonclock.core.reasons import Reason
from gammonclock.device.build import build_device
from gammonclock.journal.reader import read_header, read_journal
from gammonclock.journal.records import JOURNALS_DIR
from gammonclock.journal.replay import replay
from gammonclock.journal.verify import verify
from gammonclock.runtime.continuation import (
    ContinuationRefused,
    check_source,
    checked_then,
    find_journal,
)
from gammonclock.runtime.lifecycle import load_next_match
from gammonclock.sides import Button, Side
from lifecycle_helpers import on_loop as _on_loop
from venue_helpers import (
    DEVICE_TEXT,
    GAP_S,
    MATCH_TEXT,
    Venue,
    assert_same_export,
    command,
    first_part,
    journal_of,
    on_loop,
    one_clock_reference,
    power_cut,
    second_part,
    tap,
)


@pytest.fixture
def venue() -> Iterator[Venue]:
    made = Venue()
    yield made
    for device in made.clocks:
        device.close()


@pytest.fixture
def dead_clock(venue, tmp_path) -> tuple[Path, Path, dict]:
    """Table T7 plays to game 4 and dies (the card is pulled: its journal as it stood); the
    state the match had at its last record."""
    dead = venue.build(tmp_path, "T7", tmp_path / "t7", 3 * 3600, "boot-t7")
    assert load_next_match(dead.service, dead.table, MATCH_TEXT, "match.toml").ok
    first_part(venue, dead)
    assert dead.session.engine.match.game == 4
    assert dead.session.engine.match.running_side is Side.RIGHT
    card = tmp_path / "card"
    card.mkdir()
    shutil.copy(journal_of(dead), card / journal_of(dead).name)
    last = read_journal(card / journal_of(dead).name).last
    last_state = replay(read_journal(card / journal_of(dead).name)).engine
    at_last = last_state.match
    expected = {"score": (at_last.score.left, at_last.score.right), "game": at_last.game,
                "cube": (at_last.cube_value, at_last.cube_owner),
                "reserves": {side: at_last.reserve_at(side, last.t) for side in Side},
                "breaks": tuple(at_last.breaks_left), "last": last}
    return card / journal_of(dead).name, card, expected


def test_a_match_continued_from_the_dead_clocks_journal_is_the_match_on_one_clock(
        venue, tmp_path, dead_clock):
    source, _, expected = dead_clock
    venue.wait(None, GAP_S)
    spare = venue.build(tmp_path, "SPARE", tmp_path / "spare", 50 * 3600, "boot-spare")
    assert spare.session is None                                  # idle
    outcome = on_loop(checked_then(spare.service, spare.table, source, via="journal",
                                   source_of="socket", by="arbiter"))
    assert outcome.ok, outcome.error
    assert outcome.said[0] == (f"match continued: Анна-Boris, 5 points, from {source.name} "
                               f"(record {expected['last'].seq})")
    match = spare.session.engine.match
    # The match exactly as the dead clock last journaled it, paused; the running side charged
    # up to that record, not for the time the match was on no clock.
    assert match.phase is Phase.PAUSED and match.game == 4
    assert (match.score.left, match.score.right) == expected["score"] == (2, 2)
    assert (match.cube_value, match.cube_owner) == expected["cube"]
    assert tuple(match.breaks_left) == expected["breaks"]
    assert {side: match.reserve_at(side) for side in Side} == expected["reserves"]
    status = spare.service.status()
    assert status["phase"] == "paused" and status["running"] is None
    # The new journal's header names the one it continues.
    new = journal_of(spare)
    header = read_header(new).data
    last = expected["last"]
    assert header["table"] == "SPARE"
    assert header["continues"] == {
        "file": source.name, "seq": last.seq, "records": last.seq + 1, "last_mac": last.mac,
        "last_wall": last.wall, "last_t": last.t, "table": "T7", "handover": True,
        "via": "journal", "verdict": verify(source, spare.table.key_of()).words,
        "forced": False, "source": "socket"}
    assert header["continues"]["verdict"].startswith("sealed by another device")
    assert verify(new, spare.table.key_of()).intact                 # sealed by the spare
    second_part(venue, spare)
    assert spare.session.engine.match.phase is Phase.MATCH_OVER
    continued = journal_of(spare)

    # The same match on one clock: T7 has a power cut where it died, and comes back on its own
    # card after the same time.
    venue.real = 0
    reference = one_clock_reference(venue, tmp_path)
    assert_same_export(continued, reference, expected, source)


def test_a_tampered_journal_is_refused_naming_the_file_and_record_unless_forced(
        venue, tmp_path, dead_clock):
    source, _, _ = dead_clock
    lines = source.read_bytes().splitlines(keepends=True)
    # A warning forged into record 30, its checksum made right again: the chain tells.
    record = json.loads(lines[30])
    record["data"]["effects"].append({"kind": "warned", "t": record["t"], "side": "left",
                                      "text": "forged"})
    body = {k: v for k, v in record.items() if k not in ("sum", "mac")}
    from gammonclock.journal.records import encode
    lines[30] = encode(b"\x01" * 32, body)
    source.write_bytes(b"".join(lines))
    spare = venue.build(tmp_path, "SPARE", tmp_path / "spare", 50 * 3600, "boot-spare")
    refused = on_loop(checked_then(spare.service, spare.table, source, via="journal"))
    assert not refused.ok
    assert refused.error.startswith(f"{source}: TAMPERED: line 32: record 31 does not follow "
                                    f"the record before it")
    assert "`continue --unverified`" in refused.error
    assert spare.session is None
    assert not list((tmp_path / "spare" / JOURNALS_DIR).glob("*.jsonl"))
    forced = on_loop(checked_then(spare.service, spare.table, source, via="journal",
                                  unverified=True))
    assert forced.ok and any(line.startswith("NOT VERIFIED") for line in forced.said)
    continues = read_header(journal_of(spare)).data["continues"]
    assert continues["forced"] is True and continues["verdict"].startswith("TAMPERED: line 32")


def test_a_continue_on_a_clock_with_a_match_in_progress_is_refused_unless_forced(
        venue, tmp_path, dead_clock):
    source, card, expected = dead_clock
    spare = venue.build(tmp_path, "SPARE", tmp_path / "spare", 50 * 3600, "boot-spare")
    assert load_next_match(spare.service, spare.table,
                           MATCH_TEXT.replace("Boris", "Carla"), "other.toml").ok
    tap(venue, spare, Button.LEFT)                                  # a game is on here
    own = journal_of(spare)
    before = own.read_bytes()
    refused = on_loop(checked_then(spare.service, spare.table, card, via="journal"))
    assert not refused.ok and refused.reason is Reason.MATCH_IN_PROGRESS
    assert "a match is in progress (game 1, score 0-0)" in refused.error
    assert "`continue --force`" in refused.error
    assert own.read_bytes() == before and journal_of(spare) == own
    forced = on_loop(checked_then(spare.service, spare.table, card, via="journal", force=True))
    assert forced.ok and forced.said[0] == "arbiter: abandon"
    assert spare.session.engine.rules.names.right == "Boris"
    assert replay(read_journal(own)).engine.match.end_reason.value == "abandoned"
    # The same continuation again is kept, not made twice.
    again = on_loop(checked_then(spare.service, spare.table, source, via="journal"))
    assert again.ok and again.kept
    assert len(list((tmp_path / "spare" / JOURNALS_DIR).glob("*.jsonl"))) == 2
    # A power cut on the spare: it boots into the continued match, as into any other.
    continued = journal_of(spare)
    venue.clocks.remove(spare)
    power_cut(spare)
    rebooted = venue.build(tmp_path, "SPARE", tmp_path / "spare", 60 * 3600, "boot-again")
    assert journal_of(rebooted) == continued
    assert rebooted.session.engine.match.phase is Phase.PAUSED
    assert rebooted.session.engine.rules.names.right == "Boris"


def test_a_finished_match_and_a_folder_without_journals_are_refused(tmp_path, venue):
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(ContinuationRefused, match="holds no journal"):
        find_journal(empty)
    with pytest.raises(ContinuationRefused, match="no such journal or folder"):
        find_journal(tmp_path / "missing")
    clock = venue.build(tmp_path, "T1", tmp_path / "t1", 3600, "b")
    assert load_next_match(clock.service, clock.table, MATCH_TEXT, "m.toml").ok
    command(clock, "abandon")
    with pytest.raises(ContinuationRefused, match="the match is over"):
        check_source(journal_of(clock), None)
    # A folder: the newest journal in it (or in its journals/).
    assert find_journal(tmp_path / "t1") == journal_of(clock)


# --- over the arbiter's socket: `gammonclock arbiter continue FROM` ------------------------

def test_arbiter_continue_over_the_socket(dead_clock, tmp_path, capsys):
    import threading

    from gammonclock.cli.main import main

    _, card, expected = dead_clock
    device_file = parse_device_config(DEVICE_TEXT.format(table="SPARE"),
                                      str(tmp_path / "spare.toml"))
    state = tmp_path / "spare-socket"
    spare = build_device(device_file, state)
    worker = threading.Thread(target=spare.service.run, daemon=True)
    worker.start()
    try:
        assert main(["arbiter", "--state-dir", str(state), "continue"]) == 2
        assert "give one journal or folder" in capsys.readouterr().err
        assert main(["arbiter", "--state-dir", str(state), "continue", str(card),
                     "--bogus"]) == 2
        assert "usage: continue FROM" in capsys.readouterr().err
        assert main(["arbiter", "--state-dir", str(state), "continue",
                     str(tmp_path / "missing")]) == 1
        assert "missing: no such journal or folder; nothing changed" in capsys.readouterr().err
        # The folder holding the dead clock's journal (a card, a stick).
        assert main(["arbiter", "--state-dir", str(state), "continue", str(card)]) == 0
        out = capsys.readouterr().out
        assert "match continued: Анна-Boris, 5 points" in out
        assert "score 2-2, paused: a hold of the cube button resumes" in out
        status = spare.service.status()
        assert status["phase"] == "paused" and status["lifecycle"] == "in_progress"
        assert status["score"] == {"left": 2, "right": 2}
        assert status["clock"]["right"]["reserve_ms"] == \
            expected["reserves"][Side.RIGHT] // 1_000_000
        # Again: the same continuation is kept; another match would need --force.
        assert main(["arbiter", "--state-dir", str(state), "continue", str(card)]) == 0
        assert "match already continued here" in capsys.readouterr().out
    finally:
        spare.service.stop()
        worker.join(timeout=5)
        spare.close()


# --- from a USB stick ---------------------------------------------------------------------------



def test_a_stick_with_the_journal_and_a_marker_only_offers_the_match(venue, tmp_path,
                                                                     dead_clock):
    """SPEC §13.5, §14.1: the stick's journal is copied off and verified, then only offered
    (its taking at the panels, after the PIN: test_stick_offer.py)."""
    from gammonclock.runtime.stick_handler import StickHandler

    source, _, expected = dead_clock
    spare = venue.build(tmp_path, "SPARE", tmp_path / "spare", 50 * 3600, "boot-spare")
    stick = tmp_path / "stick"
    folder = stick / "gammonclock" / "continue"
    folder.mkdir(parents=True)
    shutil.copy(source, folder / source.name)
    (stick / "gammonclock" / "match.toml").write_text(MATCH_TEXT, encoding="utf-8")
    handler = StickHandler(spare.service, spare.table)
    # The journal with another table's marker does nothing here: the next match on the stick
    # is loaded as ever.
    (folder / "T9.continue").write_text("", encoding="utf-8")
    answer = _on_loop(spare, lambda: handler(stick))
    assert answer["said"][-1] == "next match loaded: Анна-Boris, 5 points"
    ready = spare.session
    # With this table's marker beside it, the match is offered; the ready match stays, and the
    # stick's next match is not loaded over the offer.
    (folder / "SPARE.continue").write_text("", encoding="utf-8")
    answer = _on_loop(spare, lambda: handler(stick))
    assert answer["ok"], answer
    assert f"offered from the USB stick, NOT loaded (nothing here ended): T7's match " \
           f"Анна-Boris, 5 points, score 2-2, from {source.name} (record " \
           f"{expected['last'].seq})" in answer["said"]
    assert spare.session is ready and ready.engine.match.phase is Phase.BETWEEN_GAMES
    offer = ready.engine.match.stick_offer
    assert (offer.table, offer.score, offer.file) == ("T7", "2-2", source.name)
    # Plugged in again: offered again (the same), still nothing loaded.
    again = _on_loop(spare, lambda: handler(stick))
    assert again["ok"] and spare.session is ready
    assert spare.session.engine.match.stick_offer == offer
    # A journal that fails verification is refused from a stick (the socket can force it).
    (folder / source.name).write_bytes(source.read_bytes().replace(b'"seq":12,', b'"seq":13,'))
    other = venue.build(tmp_path, "SPARE", tmp_path / "spare2", 40 * 3600, "boot-2")
    refused = _on_loop(other, lambda: StickHandler(other.service, other.table)(stick))
    assert not refused["ok"]
    assert refused["said"][-1].startswith(f"match NOT continued: {tmp_path}/spare2/"
                                          f"continue-from-stick/{source.name}: TAMPERED: line "
                                          f"13: record 12 was altered")
    assert other.session is None

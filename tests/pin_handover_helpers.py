"""The arbiter's PIN at a spare's panels after a hand-over (SPEC §13.4, §13.5, §14.1, issue 31):
the chord and PINs entered there as button edges through the service (stick_offer_helpers), what
the journal says of them, the spare's own hand-over record, and the replay of its journal. The
hand-over's tests on the socket, the stick and the hall's move use them."""

from __future__ import annotations

from pathlib import Path

from gammonclock.core.match import Phase
from gammonclock.core.match_state import PanelStage
from gammonclock.core.pin import PinCheck, is_pin, pepper_of
from gammonclock.device.build import Device
from gammonclock.journal.reader import read_header, read_journal
from gammonclock.journal.replay import replay, verify_and_replay
from stick_offer_helpers import PIN, chord, enter_pin, journal_inputs
from venue_helpers import Venue, journal_of

S = 1_000_000_000
FORGER_PIN = "RRLL"                 # the source header's: the forger's (or the dead clock's)


def reasons_since(path: Path, seq: int) -> list[str]:
    """The reasons of what the journal's inputs after record `seq` did."""
    return [e["reason"] for r in read_journal(path).records if r.kind == "input" and r.seq > seq
            for e in r.data["effects"] if "reason" in e]


def last_seq(device: Device) -> int:
    return read_journal(journal_of(device)).last.seq


def wrong_pins_fail_own_opens(venue: Venue, device: Device, spare_pin: str = PIN,
                               wrong: tuple[str, ...] = (FORGER_PIN,)) -> None:
    """At the panels: each `wrong` PIN is a failed attempt, journaled; then `spare_pin` opens
    the arbiter's menu."""
    path = journal_of(device)
    for failures, pin in enumerate(wrong, start=1):
        before = last_seq(device)
        chord(venue, device)
        enter_pin(venue, device, pin)
        match = device.session.engine.match
        said = reasons_since(path, before)
        assert "arbiter_menu" not in said, f"{pin} opened the arbiter's menu"
        assert said.count("pin_wrong") == 1, said                   # a failed attempt …
        assert match.pin_failures == failures
        assert match.phase is Phase.PAUSED                          # … and play as it was
        ends = [i for i in journal_inputs(path)[-8:] if i.get("key") == "end"]
        assert ends and "digest" in ends[-1]                        # journaled as a digest
    before = last_seq(device)
    chord(venue, device)
    enter_pin(venue, device, spare_pin)
    match = device.session.engine.match
    assert match.phase is Phase.ARBITER and match.panel.stage is PanelStage.MENU, \
        f"the spare's own PIN did not open the menu: {reasons_since(path, before)}"
    assert match.pin_failures == 0


def handover_of(path: Path) -> list[tuple[int, dict]]:
    """The journal's hand-over inputs, with their records' seq."""
    return [(r.seq, r.data["input"]) for r in read_journal(path).records
            if r.kind == "input" and r.data["input"]["type"] == "handover"]


def assert_replays_to_the_match(device: Device) -> None:
    """The journal replays without divergence (its snapshots too) to the match in play."""
    session = device.session
    session.checkpoint(session.engine.now)          # the instant, journaled
    checked = verify_and_replay(journal_of(device), device.table.key_of())
    assert checked.verdict.intact, checked.verdict.words
    assert checked.replayed.diverged == [] and checked.replayed.snapshots_differ == []
    again = replay(read_journal(journal_of(device)))
    assert again.diverged == []
    assert again.engine.match == session.engine.match


def assert_own_handover(device: Device, source: Path, pin: str | None = PIN) -> None:
    """The spare's journal: the copied records, then its hand-over holding its own PIN's
    hash keyed by its device key (never the PIN), then its own records."""
    path = journal_of(device)
    records = read_header(path).data["continues"]["records"]
    [(seq, data)] = handover_of(path)[-1:]
    assert seq == records == read_journal(source).last.seq + 1    # right after the copy
    if pin is None:
        assert data == {"type": "handover", "chord_ns": 3 * S}
        assert device.session.engine.rules.arbiter_pin is None
        return
    assert set(data) == {"type", "chord_ns", "pin_hash"} and data["chord_ns"] == 3 * S
    pepper = pepper_of(device.table.key_of())
    assert data["pin_hash"].startswith("scrypt-k$")
    assert is_pin(PinCheck.parse(data["pin_hash"]).with_key(pepper), pin)
    assert device.session.engine.rules.arbiter_pin.hashed == data["pin_hash"]
    assert f'"{pin}"' not in path.read_text(encoding="utf-8")

"""The arbiter's PIN at the panels after a hand-over (SPEC §13.4, §13.5, §14.1, issue 31).

The attack: a continued match kept the source journal's `[arbiter] pin` / `pin_hash` (its
header is the old header), so the spare judged PIN entries at its own panels against the source
clock's PIN. A forger who wrote a clear or unkeyed PIN into a forged journal's header got the
arbiter's menu on the spare once the journal was continued, and the spare's own arbiter's PIN
failed there. Now the continuing clock journals a hand-over right after the records it copied
(`handover`: its own PIN's hash, keyed by its device key, or none), and from there on only its
own PIN counts, after a restart too, and the journal replays to the same match.

The clocks are whole devices on mock hardware driven by button edges through the service (the
venue: venue_helpers; the chord and the PIN: stick_offer_helpers), and one runs on its own
thread in real time, taking `gammonclock arbiter continue` on its socket."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from gammonclock.cli.main import main
from gammonclock.config.loading import parse_device_config
from gammonclock.core.engine import ButtonEdge
from gammonclock.core.match import Phase
from gammonclock.core.match_state import PanelStage
from gammonclock.core.pin import make_hash
from gammonclock.device.build import Device, build_device
from gammonclock.journal.reader import read_header, read_journal
from gammonclock.journal.records import SNAPSHOT_KIND, Stamp
from gammonclock.journal.replay import replay
from gammonclock.journal.writer import JournalWriter
from gammonclock.runtime.continuation import checked_then
from gammonclock.runtime.lifecycle import load_next_match
from gammonclock.runtime.session import _continue_in_new_journal
from gammonclock.sides import Button
from pin_handover_helpers import (
    FORGER_PIN,
    assert_own_handover,
    assert_replays_to_the_match,
    handover_of,
    last_seq,
    reasons_since,
    wrong_pins_fail_own_opens,
)
from stick_offer_helpers import (
    PIN,
    PIN_DEVICE_TEXT,
    PUSHED_MATCH,
    chord,
    enter_pin,
    forged_journal,
    journal_inputs,
    plug,
    press,
    stick_with,
)
from venue_helpers import DEVICE_TEXT, Venue, journal_of, on_loop, power_cut, tap

S = 1_000_000_000
FORGER_TEXT = DEVICE_TEXT + f'\n[arbiter]\npin = "{FORGER_PIN}"\n'
# How the forged header holds the forger's PIN: in clear (as a journal from before the hash,
# judged by its letters), as an unkeyed hash (anyone can make one), or keyed by the forger's
# own device key (what an honest dead clock's header holds: the spare cannot judge it).
HEADER_PINS = {
    "clear": f'pin = "{FORGER_PIN}"',
    "unkeyed": f'pin_hash = "{make_hash(FORGER_PIN)}"',
    "keyed": None,
}


@pytest.fixture
def venue() -> Iterator[Venue]:
    made = Venue(device_text=FORGER_TEXT)
    yield made
    for device in made.clocks:
        device.close()


def forged(venue: Venue, tmp_path: Path, header_pin: str) -> Path:
    """Table-3's match Anna-Boris at 6-0 made on the forger's clock (its PIN RRLL, its key),
    its header's `[arbiter]` then written as `HEADER_PINS[header_pin]` and every record sealed
    again with the forger's key: what a forger brings."""
    venue.device_text = FORGER_TEXT
    made = forged_journal(venue, tmp_path)
    arbiter = HEADER_PINS[header_pin]
    if arbiter is None:
        return made
    read = read_journal(made)
    header = {k: v for k, v in read.header.data.items() if k not in ("format", "key_id")}
    device = header["device"]
    header["device"] = device[:device.index("[arbiter]")] + f"[arbiter]\n{arbiter}\n"
    path = tmp_path / "forged-header" / made.name
    key = (tmp_path / "forger" / "device.key").read_bytes()
    writer = JournalWriter.create(path, key, header, read.header.t, stamp(read.header),
                                  fsync=False)
    for record in read.records[1:]:
        writer.append(record.kind, record.t, record.data, stamp(record))
    writer.close()
    return path


def stamp(record) -> Stamp:
    return Stamp(record.mono, record.boot, record.wall)


def spare_clock(venue: Venue, tmp_path: Path, table: str = "SPARE", text: str = PIN_DEVICE_TEXT,
                state: str = "spare", uptime_s: int = 50 * 3600) -> Device:
    venue.device_text = text
    return venue.build(tmp_path, table, tmp_path / state, uptime_s, f"boot-{state}")


def continued_by_socket(device: Device, source: Path) -> None:
    """`continue FROM` as the arbiter's socket takes it (the arbiters' group)."""
    outcome = on_loop(checked_then(device.service, device.table, source, via="journal",
                                   source_of="socket", by="arbiter"))
    assert outcome.ok, outcome.error
    assert read_header(journal_of(device)).data["continues"]["file"] == source.name


# --- the attack: a forged header's PIN, continued on the arbiter's socket -----------------------

@pytest.mark.parametrize("header_pin", list(HEADER_PINS))
def test_after_a_continue_only_the_spares_own_pin_opens_its_menu(venue, tmp_path, header_pin):
    source = forged(venue, tmp_path, header_pin)
    spare = spare_clock(venue, tmp_path)
    continued_by_socket(spare, source)
    assert_own_handover(spare, source)
    wrong_pins_fail_own_opens(venue, spare)
    assert_replays_to_the_match(spare)


# --- the stick's offer taken with the spare's PIN, and a restart ---------------------------------

def test_after_a_sticks_continuation_and_a_restart_the_spare_judges_by_its_own_pin(
        venue, tmp_path):
    source = forged(venue, tmp_path, "clear")
    spare = spare_clock(venue, tmp_path)
    assert load_next_match(spare.service, spare.table, PUSHED_MATCH, "pushed.toml").ok
    plug(spare, stick_with(tmp_path, source, "SPARE"))
    chord(venue, spare)
    enter_pin(venue, spare)                     # the spare's PIN, on its own match's rules
    for button in (Button.RIGHT, Button.CUBE, Button.CUBE):    # the stick's offer: yes
        press(venue, spare, button)
    venue.wait(spare, 0.5)
    assert spare.session.engine.rules.names.left == "Anna"
    assert read_header(journal_of(spare)).data["continues"]["via"] == "stick"
    assert_own_handover(spare, source)
    # A snapshot after each record from here on: the restart then resumes from one holding
    # the hand-over's PIN (its hash; the pepper comes from the device key at the boot).
    spare.session.snapshot_every = 1
    wrong_pins_fail_own_opens(venue, spare)
    press(venue, spare, Button.CUBE, held_s=2.0)      # the menu: resume play
    path = journal_of(spare)
    handover_seq = handover_of(path)[-1][0]
    assert [r for r in read_journal(path).records
            if r.kind == SNAPSHOT_KIND and r.seq > handover_seq][-1].data["match"]["f"][
        "rules"]["$rules"]["pin"] == {"$pin": spare.session.engine.rules.arbiter_pin.hashed}
    assert_replays_to_the_match(spare)

    venue.clocks.remove(spare)
    power_cut(spare)
    again = spare_clock(venue, tmp_path, uptime_s=60 * 3600)
    assert journal_of(again) == path                 # resumed from its journal, paused
    assert again.session.engine.match.phase is Phase.PAUSED
    assert again.session.engine.rules.arbiter_pin.can_digest      # keyed, with its pepper
    wrong_pins_fail_own_opens(venue, again)
    assert_replays_to_the_match(again)


# --- a spare without a PIN ----------------------------------------------------------------------

def test_on_a_spare_without_a_pin_the_chord_means_nothing_after_a_continue(venue, tmp_path):
    source = forged(venue, tmp_path, "clear")
    spare = spare_clock(venue, tmp_path, text=DEVICE_TEXT)          # no [arbiter] pin
    continued_by_socket(spare, source)
    assert_own_handover(spare, source, pin=None)
    before = last_seq(spare)
    chord(venue, spare)
    for letter in FORGER_PIN:
        press(venue, spare, {"L": Button.LEFT, "R": Button.RIGHT}[letter])
        assert spare.session.engine.match.phase is not Phase.ARBITER
    said = reasons_since(journal_of(spare), before)
    assert not {"pin_entry", "pin_dot", "arbiter_menu"} & set(said), said
    assert not [i for i in journal_inputs(journal_of(spare)) if i["type"] == "pin"]
    assert_replays_to_the_match(spare)


# --- the lockout --------------------------------------------------------------------------------

def test_the_old_clocks_lockout_does_not_lock_the_spares_arbiter_out(venue, tmp_path):
    """Three failed PINs at the old clock locked its chord for 5 minutes; the spare's arbiter
    failed nothing (docs/decisions.md): the chord opens the PIN's entry at once."""
    forger = spare_clock(venue, tmp_path, "T7", FORGER_TEXT, "t7", 7 * 3600)
    assert load_next_match(forger.service, forger.table, PUSHED_MATCH, "pushed.toml").ok
    tap(venue, forger, Button.LEFT)                         # game 1: right's clock runs
    for _ in range(3):
        chord(venue, forger)
        enter_pin(venue, forger, PIN)                       # not T7's PIN
    assert forger.session.engine.match.chord_locked_until is not None
    card = tmp_path / "card"
    card.mkdir()
    source = card / journal_of(forger).name
    source.write_bytes(journal_of(forger).read_bytes())
    spare = spare_clock(venue, tmp_path)
    continued_by_socket(spare, source)
    match = spare.session.engine.match
    assert (match.chord_locked_until, match.pin_failures, match.lockouts) == (None, 0, 0)
    wrong_pins_fail_own_opens(venue, spare)
    assert_replays_to_the_match(spare)


# --- a match continued twice: A → B → C --------------------------------------------------------

def test_a_match_continued_twice_is_judged_by_the_last_clocks_pin(venue, tmp_path):
    source = forged(venue, tmp_path, "clear")
    b = spare_clock(venue, tmp_path, "B", PIN_DEVICE_TEXT, "b", 20 * 3600)
    continued_by_socket(b, source)
    wrong_pins_fail_own_opens(venue, b)
    press(venue, b, Button.CUBE, held_s=2.0)                  # resume
    venue.wait(b, 5.0)
    card = tmp_path / "card-b"
    card.mkdir()
    b_journal = card / journal_of(b).name
    b_journal.write_bytes(journal_of(b).read_bytes())         # B dies: its card
    c_pin = "CCRL"
    c = spare_clock(venue, tmp_path, "C",
                    DEVICE_TEXT + f'\n[arbiter]\npin = "{c_pin}"\n', "c", 30 * 3600)
    continued_by_socket(c, b_journal)
    path = journal_of(c)
    assert [data.get("pin_hash", "")[:9] for _, data in handover_of(path)] == \
        ["scrypt-k$", "scrypt-k$"]                            # B's, then C's own
    assert_own_handover(c, b_journal, c_pin)
    assert read_header(path).data["continues"]["before"]["file"] == source.name
    wrong_pins_fail_own_opens(venue, c, c_pin, wrong=(PIN, FORGER_PIN))
    assert_replays_to_the_match(c)


# --- a journal written before: no hand-over, replayed as it was -----------------------------------

def test_a_continued_journal_from_before_the_handover_replays_as_it_was(venue, tmp_path):
    """A continuation written before issue 31's hand-over holds none: it replays, and resumes,
    with its header's PIN, exactly as it was played."""
    source = forged(venue, tmp_path, "unkeyed")
    read = read_journal(source)
    path = tmp_path / "before" / source.name
    path.parent.mkdir()
    key = os.urandom(32)
    _continue_in_new_journal(read, path, key, stamp(read.header),
                             {"continues": {"file": source.name, "handover": True}}).close()
    replayed = replay(read_journal(path))
    assert replayed.diverged == []
    # The header's rules, the forger's PIN (unkeyed) in them, from the first record to the last.
    header_rules = replay(read_journal(source)).engine.rules
    assert replayed.engine.rules == header_rules and header_rules.arbiter_pin is not None
    assert replayed.engine.match == replay(read_journal(source)).engine.match


# --- the real socket, on a clock running in real time -------------------------------------------

def at_the_panels(device: Device, pin: str) -> float:
    """The chord and the PIN as the buttons' callbacks hand their edges over (stamped with the
    host's monotonic clock, ahead of now); the monotonic second the entry ends."""
    service = device.service
    t = service.clock_ns() + S // 10
    edges: list[tuple[int, Button, bool]] = []
    for i, button in enumerate((Button.CUBE, Button.LEFT, Button.RIGHT)):
        edges.append((t + i * S // 10, button, True))
    t += 2 * S // 10 + 35 * S // 10                           # held 3.5 s past the last
    for i, button in enumerate((Button.CUBE, Button.LEFT, Button.RIGHT)):
        edges.append((t + i * S // 1000, button, False))
    t += S // 2
    for letter in pin:
        button = {"L": Button.LEFT, "R": Button.RIGHT, "C": Button.CUBE}[letter]
        edges += [(t, button, True), (t + S // 10, button, False)]
        t += 4 * S // 10
    edges += [(t, Button.CUBE, True), (t + 2 * S, Button.CUBE, False)]   # the end: cube held
    for at, button, pressed in edges:
        assert service.submit(ButtonEdge(at, button, pressed))
    return (t + 2 * S) / S


def until(condition, deadline_s: float) -> None:
    end = time.monotonic() + deadline_s
    while not condition():
        assert time.monotonic() < end, "not in time"
        time.sleep(0.05)


def test_through_the_arbiters_socket_the_spares_own_pin_and_not_the_forgers(venue, tmp_path,
                                                                           capsys):
    source = forged(venue, tmp_path, "clear")
    state = tmp_path / "spare-socket"
    spare = build_device(parse_device_config(PIN_DEVICE_TEXT.format(table="SPARE"),
                                             str(tmp_path / "spare.toml")), state)
    worker = threading.Thread(target=spare.service.run, daemon=True)
    worker.start()
    try:
        assert main(["arbiter", "--state-dir", str(state), "continue", str(source)]) == 0
        assert "match continued: Anna-Boris, 7 points" in capsys.readouterr().out
        path = journal_of(spare)
        assert_own_handover(spare, source)
        before = last_seq(spare)
        judged = {"pin_wrong", "arbiter_menu"}
        end = at_the_panels(spare, FORGER_PIN)
        until(lambda: time.monotonic() > end and judged & set(reasons_since(path, before)), 30)
        assert "arbiter_menu" not in reasons_since(path, before), "the forger's PIN opened it"
        assert reasons_since(path, before).count("pin_wrong") == 1
        assert spare.service.status()["phase"] == "paused"
        before = last_seq(spare)
        end = at_the_panels(spare, PIN)
        until(lambda: time.monotonic() > end and judged & set(reasons_since(path, before)), 30)
        assert "pin_wrong" not in reasons_since(path, before), "the spare's own PIN failed"
        match = spare.session.engine.match
        assert match.phase is Phase.ARBITER and match.panel.stage is PanelStage.MENU
    finally:
        spare.service.stop()
        worker.join(timeout=5)
    replayed = replay(read_journal(path))
    assert replayed.diverged == []
    assert replayed.engine.rules.arbiter_pin == spare.session.engine.rules.arbiter_pin
    spare.close()

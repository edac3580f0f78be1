"""A match handed over to another clock (SPEC §13.5, §14.1, issue 31): from the hand-over on, the
arbiter at the panels is the continuing clock's, its PIN and its chord (`ArbiterHandover`), not
those of the journal's header, which are the old clock's (or a forger's). Through the engine, as
the journal feeds it: button edges from scripts, the hand-over as the continuing clock journals
it, then the `Recover` its resume adds at the same instant."""

from __future__ import annotations

import textwrap
from dataclasses import dataclass, field

from arbiter_helpers import OPENING, PIN, S, chord, entry, entry_end
from gammonclock.core.arbiter import Undo
from gammonclock.core.effects import Effect, Refused, Shown
from gammonclock.core.engine import Engine, Input
from gammonclock.core.match import ArbiterAction, ArbiterHandover, Phase, Recover
from gammonclock.core.match_state import PanelStage
from gammonclock.core.pin import hash_pin, pepper_of
from gammonclock.core.reasons import Reason
from gammonclock.core.rules import MatchRules
from gammonclock.journal.snapshot import engine_data, engine_from
from gammonclock.sides import Side
from gammonclock.sim.script import parse_script

OLD_PIN = "RRLL"                      # the header's: the old clock's, or a forger's
OLD_TAPS = ("right", "right", "left", "left")
NEW_TAPS = ("left", "right", "cube", "left")       # PIN, this clock's
PEPPER = pepper_of(b"k" * 32)                      # this clock's device key's
NEW_CHECK = hash_pin(PIN, PEPPER)


@dataclass
class Run:
    """An engine fed in order, and every effect it reported."""

    engine: Engine
    effects: list[Effect] = field(default_factory=list)

    def feed(self, event: Input) -> list[Effect]:
        self.engine, effects = self.engine.feed(event)
        self.effects += effects
        return effects

    def script(self, text: str) -> None:
        parsed = parse_script(textwrap.dedent(text), self.engine.rules.hold_ns)
        for event in parsed.inputs:
            self.feed(event)
        self.engine, effects = self.engine.advance(parsed.end)
        self.effects += effects

    @property
    def match(self):
        return self.engine.match

    def since(self, mark: int) -> list[Reason | None]:
        return [e.reason for e in self.effects[mark:] if isinstance(e, (Refused, Shown))]


def old_clock() -> Run:
    """The header's rules: the old clock's PIN, game 1 under way (right's clock runs)."""
    return Run(Engine.start(MatchRules.defaults(arbiter_pin=hash_pin(OLD_PIN))))


def handed_over(run: Run, at: float, check=NEW_CHECK, chord_ns: int = 3 * S) -> list[Effect]:
    """The hand-over at `at` s, then the continuing clock's `Recover` at the same instant."""
    said = run.feed(ArbiterHandover(int(at * S), check, chord_ns))
    return said + run.feed(Recover(int(at * S)))


def entered(run: Run, at: float, buttons: tuple[str, ...]) -> list[Reason | None]:
    """The chord at `at` s and a PIN entered after its release: what was said since."""
    mark = len(run.effects)
    run.script(chord(at) + entry(at + 4, buttons) + f"{entry_end(at + 4, buttons) + 0.5} end\n")
    return run.since(mark)


def test_from_the_handover_on_only_this_clocks_pin_opens_the_menu():
    run = old_clock()
    run.script(OPENING + "5 end\n")
    said = handed_over(run, 5)
    shown = [e for e in said if isinstance(e, Shown) and e.reason is Reason.ARBITER_HANDED_OVER]
    assert len(shown) == 1 and shown[0].facts == (("pin", "set"),)
    rules = run.engine.rules
    assert rules.arbiter_pin == NEW_CHECK and rules.handed_over and rules.chord_ns == 3 * S
    assert rules.arbiter_pin.can_digest          # its pepper, for entries at these panels
    # The old clock's PIN is a failed attempt here …
    assert Reason.PIN_WRONG in entered(run, 10, OLD_TAPS)
    assert run.match.phase is Phase.PAUSED and run.match.pin_failures == 1
    # … and this clock's opens the menu.
    assert Reason.ARBITER_MENU in entered(run, 30, NEW_TAPS)
    assert run.match.phase is Phase.ARBITER and run.match.panel.stage is PanelStage.MENU


def test_the_chord_is_this_clocks_too():
    run = old_clock()
    run.script(OPENING + "5 end\n")
    handed_over(run, 5, chord_ns=5 * S)
    mark = len(run.effects)
    run.script(chord(10, release_after=4.0) + "16 end\n")       # held 4 s: not 5
    assert Reason.PIN_ENTRY not in run.since(mark)
    run.script(chord(20, release_after=5.5) + "27 end\n")
    assert Reason.PIN_ENTRY in run.since(mark)


def test_the_handover_starts_the_pins_lockout_afresh():
    """Three failures at the old clock lock its chord; the continuing clock's arbiter failed
    nothing (docs/decisions.md)."""
    run = old_clock()
    run.script(OPENING + "5 end\n")
    for at in (10, 30, 50):
        assert Reason.PIN_WRONG in entered(run, at, NEW_TAPS)     # not the old clock's PIN
    locked = run.match.chord_locked_until
    assert locked is not None and run.match.lockouts == 1
    handed_over(run, 70)
    assert (run.match.pin_failures, run.match.lockouts, run.match.chord_locked_until) == \
        (0, 0, None)
    assert 80 * S < locked
    assert Reason.ARBITER_MENU in entered(run, 80, NEW_TAPS)      # within the old lockout


def test_an_arbiters_mode_open_at_the_handover_closes_as_the_outage_closes_it():
    """The old clock died with its PIN being entered: the hand-over closes the mode as the
    `Recover` alone would (the span charged to the running side, up to the last record), and
    the old clock's entry counts for nothing here."""
    script = OPENING + chord(20) + "25.5 tap left\n26 end\n"     # one PIN tap, then the card
    plain, handed = old_clock(), old_clock()
    plain.script(script)
    handed.script(script)
    assert handed.match.panel is not None and handed.match.panel.stage is PanelStage.PIN
    plain.feed(Recover(26 * S))
    said = handed_over(handed, 26)
    assert any(isinstance(e, Refused) and e.reason is Reason.PIN_TIMEOUT for e in said)
    assert handed.match.phase is plain.match.phase is Phase.PAUSED
    for side in Side:
        assert handed.match.reserve_at(side) == plain.match.reserve_at(side)
    assert (plain.match.pin_failures, handed.match.pin_failures) == (1, 0)
    assert handed.match.panel is None and handed.engine.rules.arbiter_pin == NEW_CHECK


def test_an_undo_reaching_past_the_handover_keeps_this_clocks_pin():
    """The continuing clock's arbiter undoes the old clock's last turn: the history is replayed
    from before the hand-over, and the hand-over with it."""
    run = old_clock()
    run.script(OPENING + "5 tap right\n9 end\n")              # right's switch: a player action
    handed_over(run, 9)
    effects = run.feed(ArbiterAction(12 * S, Undo(), "socket", "arbiter"))
    assert any(e.kind == "undone" for e in effects)
    assert run.engine.rules.arbiter_pin == NEW_CHECK and run.engine.rules.arbiter_pin.can_digest
    assert Reason.ARBITER_MENU in entered(run, 20, NEW_TAPS)


def test_a_snapshot_after_the_handover_keeps_this_clocks_pin_and_the_pepper_comes_back():
    run = old_clock()
    run.script(OPENING + "5 tap right\n9 end\n")
    handed_over(run, 9)
    data = engine_data(run.engine)
    assert data["match"]["f"]["rules"] == {"$rules": {"pin": {"$pin": NEW_CHECK.hashed},
                                                      "chord_ns": 3 * S}}
    header = old_clock().engine.rules
    restored, _ = engine_from(data, header, PEPPER)
    assert restored.match == run.match and restored.rules.arbiter_pin.can_digest
    # Without the device key (a tool, the hall): the same match, judged only by the journal.
    unkeyed, _ = engine_from(data, header)
    assert unkeyed.match == run.match and not unkeyed.rules.arbiter_pin.can_digest
    # An undo on the restored engine replays the hand-over kept in its history.
    restored, effects = restored.feed(ArbiterAction(12 * S, Undo(), "socket", "arbiter"))
    assert any(e.kind == "undone" for e in effects)
    assert restored.rules.arbiter_pin.can_digest and restored.rules.handed_over
    again = Run(restored)
    assert Reason.ARBITER_MENU in entered(again, 20, NEW_TAPS)


def test_a_clock_without_a_pin_takes_the_chord_for_nothing_after_the_handover():
    run = old_clock()
    run.script(OPENING + "5 end\n")
    said = handed_over(run, 5, check=None)
    assert [e.facts for e in said if isinstance(e, Shown)
            and e.reason is Reason.ARBITER_HANDED_OVER] == [(("pin", "none"),)]
    assert run.engine.rules.arbiter_pin is None
    reasons = entered(run, 10, OLD_TAPS)
    assert Reason.PIN_ENTRY not in reasons and Reason.ARBITER_MENU not in reasons
    assert run.match.phase is not Phase.ARBITER

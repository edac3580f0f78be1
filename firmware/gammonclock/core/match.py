"""The match state machine (SPEC §3–§7): a pure fold of gesture-level events over the match state.

`apply(state, event)` and `advance(state, t)` return a new state and the effects they caused; the
state passed in is never changed. Events are taps and holds (already recognised from button edges
by `engine`), arbiter commands and dice messages, each carrying its instant. Timers (a flag, the end
of a break) fire inside `advance`, at their exact instants, before any event at the same instant.

The state is in `match_state` and the transitions by concern in `play` (buttons and timers),
`arbiter_actions` and `dice_rules`; this module is the fold and the names the rest imports.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import assert_never

from gammonclock.sides import Button, Pair, Side

from . import arbiter as cmd
from .arbiter_actions import Arbiter
from .arbiter_mode import ArbiterMode
from .dice import DiceMessage
from .dice_rules import Dice
from .effects import Effect
from .match_state import MatchState, Phase, ProvisionOffer, StickOffer, copy_state
from .pin import PinCheck
from .play import Play
from .rules import EndReason, MatchRules, crawford_due, json_points

__all__ = [
    "ArbiterAction", "ArbiterHandover", "Chord", "ChordReleased", "DiceDropped", "DiceEvent",
    "Event", "Hold", "MatchState", "Phase", "PinDot", "PinEntered", "ProvisionOffered", "Recover",
    "StickOffered", "Tap", "advance", "apply", "start", "state_json",
]


@dataclass(frozen=True)
class Tap:
    """A press acting at its down edge `t`."""

    t: int
    button: Button

    def describe(self) -> str:
        return f"tap {self.button}"


@dataclass(frozen=True)
class Hold:
    """A press that stayed down for `hold_s`; it acts from its down edge `t`."""

    t: int
    button: Button

    def describe(self) -> str:
        return f"hold {self.button}"


@dataclass(frozen=True)
class ArbiterAction:
    t: int
    command: cmd.Command
    # Who gave it, for the record (SPEC §13.4): `source` is "socket", "panel", "hall" or
    # "script", `by` the login or account. The engine never looks at them.
    source: str | None = None
    by: str | None = None

    def describe(self) -> str:
        return f"arbiter {self.command.describe()}"


@dataclass(frozen=True)
class DiceEvent:
    t: int
    message: DiceMessage

    def describe(self) -> str:
        return self.message.describe()


@dataclass(frozen=True)
class Recover:
    """The clock came back after an outage (a power cut, a crash) whose last record is at `t`:
    a running clock is paused there, so the outage is charged to nobody."""

    t: int

    def describe(self) -> str:
        return "recovered"


@dataclass(frozen=True)
class DiceDropped:
    """The dice reader sent lines faster than dice are rolled; `count` of them were dropped
    unread (a faulty or hostile reader). Journaled so the record says what was lost."""

    t: int
    count: int

    def describe(self) -> str:
        return f"dice reader: {self.count} lines dropped"


@dataclass(frozen=True)
class Chord:
    """All three buttons held together (SPEC §13.4), acting from the earliest of their down
    edges `t` in place of what those edges did: the arbiter's mode, PIN first."""

    t: int

    def describe(self) -> str:
        return "arbiter chord"


@dataclass(frozen=True)
class ChordReleased:
    """The last button of a recognised chord went up at `t`: the PIN's time starts."""

    t: int

    def describe(self) -> str:
        return "arbiter chord released"


@dataclass(frozen=True)
class PinDot:
    """A press in the arbiter's PIN entry (SPEC §13.4): a dot on the panels. Which button it was
    is the pin pad's (`engine`), never the match's or the journal's."""

    t: int

    def describe(self) -> str:
        return "PIN press"


@dataclass(frozen=True)
class PinEntered:
    """The PIN entry ended at `t` (the release of a cube hold, or of the 8th press): `digest`
    is the hash of the buttons entered with the PIN hash's salt and parameters (pin.py), which
    the match compares with the hash. The letters are never kept."""

    t: int
    digest: str

    def describe(self) -> str:
        return "PIN entered"


@dataclass(frozen=True)
class StickOffered:
    """The device offers here the continuation a USB stick brought (SPEC §13.5, §14.1), or
    (`offer` None) no longer does. An input of the device, not a person's: it changes only
    what the arbiter's menu lists; the arbiter takes the offer there, after the PIN."""

    t: int
    offer: StickOffer | None

    def describe(self) -> str:
        return ("USB stick: no offer" if self.offer is None
                else f"USB stick offers {self.offer.describe()}")


@dataclass(frozen=True)
class ProvisionOffered:
    """The device offers here the table and hall a provisioning stick brought (issue 32, SPEC
    §14.1), or (`offer` None) no longer does. An input of the device: it changes only what the
    arbiter's menu lists; the arbiter takes it there, after the PIN."""

    t: int
    offer: ProvisionOffer | None

    def describe(self) -> str:
        return ("provisioning stick: no offer" if self.offer is None
                else f"USB stick offers {self.offer.describe()}")


@dataclass(frozen=True)
class ArbiterHandover:
    """A match continued on this clock (SPEC §13.5): from `t` on, the arbiter at these panels is
    this clock's (SPEC §14.1), its PIN's check `pin` (None: this clock has no PIN, and the chord
    means nothing here) and its chord's `chord_ns`, no longer those of the journal's header,
    which are the clock's the match came from. An input of the device, never a person's: the
    continuing clock journals it right after the records it copied, before anything of its own.
    The journal keeps the PIN's hash only; a keyed hash's pepper is given in memory by the clock
    that holds the key (`with_key`), never journaled."""

    t: int
    pin: PinCheck | None
    chord_ns: int

    def with_key(self, pepper: bytes | None) -> ArbiterHandover:
        """The hand-over whose PIN can judge new entries with `pepper` (`pin.pepper_of` the
        device key) when its hash is keyed by it."""
        pin = self.pin.with_key(pepper) if self.pin is not None else None
        return self if pin is self.pin else ArbiterHandover(self.t, pin, self.chord_ns)

    def describe(self) -> str:
        return ("the arbiter at these panels is this clock's: "
                + ("its PIN" if self.pin is not None else "no PIN, the chord means nothing"))


Event = (Tap | Hold | ArbiterAction | DiceEvent | DiceDropped | Recover | Chord | ChordReleased
         | PinDot | PinEntered | StickOffered | ProvisionOffered | ArbiterHandover)


def start(rules: MatchRules, at: int = 0) -> MatchState:
    """The match before game 1, at instant `at`."""
    # `crawford_played` speaks of a start at match point; from any other score the Crawford
    # game is still to come.
    at_match_point = crawford_due(rules.start_score, rules.length)
    crawford_done = rules.crawford_played and at_match_point
    crawford_game = rules.crawford_active and not crawford_done and at_match_point
    return MatchState(
        rules=rules, now=at, phase=Phase.BETWEEN_GAMES, game=1, score=rules.start_score,
        cube_value=1, cube_owner=None, crawford_game=crawford_game,
        crawford_done=crawford_done, reserves=Pair.both(rules.reserve_ns), turn=None,
        turn_number=0, rolled=False, last_roll=None, offer=None, entry=None, brk=None,
        resume_phase=None, breaks_left=Pair.both(rules.breaks_per_player), white=None,
        must_start=None, overtime_used=Pair.both(False), rejected_challenges=Pair.both(0),
        match_started_at=None, winner=None, end_reason=None, flag=None)


def advance(state: MatchState, t: int) -> tuple[MatchState, list[Effect]]:
    """The state at `t`, with every timer due at or before `t` fired at its own instant."""
    if t < state.now:
        raise ValueError(f"time went backwards: {t} < {state.now}")
    effects: list[Effect] = []
    while (due := state.next_deadline()) is not None and due <= t:
        state = copy_state(state)
        state.now = due
        Play(state, effects).fire_timer()
    if state.now != t:
        state = copy_state(state)
        state.now = t
    return state, effects


def apply(state: MatchState, event: Event) -> tuple[MatchState, list[Effect]]:
    """The state after `event` (timers due up to its instant fire first) and the effects."""
    state, effects = advance(state, event.t)
    state = copy_state(state)
    match event:
        case Hold(button=button) if state.hold_has_meaning(button):
            Play(state, effects).hold(button)
        case Tap(button=button) | Hold(button=button):
            # A hold that means nothing in this phase is the tap its down edge was (fine point
            # 1); a replay after an undo or another hold can bring a recorded hold into one.
            Play(state, effects).tap(button)
        case ArbiterAction(command=command, source=source, by=by):
            Arbiter(state, effects).command(command, source, by)
        case Chord():
            # A replay after an undo may bring a chord into a mode already open, or its
            # release after the mode was left: either then changes nothing.
            if state.phase is not Phase.ARBITER:
                ArbiterMode(state, effects).open()
        case ChordReleased():
            if state.phase is Phase.ARBITER:
                ArbiterMode(state, effects).chord_released()
        case PinDot():
            if state.phase is Phase.ARBITER:
                ArbiterMode(state, effects).pin_dot()
        case PinEntered(digest=digest):
            if state.phase is Phase.ARBITER:
                ArbiterMode(state, effects).pin_entered(digest)
        case Recover():
            Play(state, effects).recover()
        case DiceEvent(message=message):
            Dice(state, effects).message(message)
        case DiceDropped(count=count):
            Dice(state, effects).dropped(count)
        case StickOffered(offer=offer):
            ArbiterMode(state, effects).stick_offered(offer)
        case ProvisionOffered(offer=offer):
            ArbiterMode(state, effects).provision_offered(offer)
        case ArbiterHandover(pin=pin, chord_ns=chord_ns):
            ArbiterMode(state, effects).handed_over(pin, chord_ns)
        case _:
            assert_never(event)
    if state.stick_offer is not None and state.in_progress:
        # A game started here (or counts as played): a stick never ends a match in progress,
        # so what it offered is no more (SPEC §14.1).
        ArbiterMode(state, effects).stick_offer_ends()
    return state, effects


def state_json(state: MatchState) -> dict[str, object]:
    """The SPEC §9 state object at `state.now` (the arbiter's `status`, the simulator's output)."""
    def side(v: Side | None) -> str | None:
        return None if v is None else v.value

    moved = ({"moved_to": state.moved_to} if state.end_reason is EndReason.MOVED else {})
    return {
        "phase": state.phase.value,
        "game": state.game,
        "match_length": state.rules.length,
        "score": {"left": json_points(state.score.left),
                  "right": json_points(state.score.right)},
        "crawford_game": state.crawford_game,
        "cube": {"value": state.cube_value, "owner": side(state.cube_owner),
                 "enabled": state.cube_enabled},
        "running": side(state.running_side),
        "clock": {s.value: {"reserve_ms": state.reserve_at(s) // 1_000_000} for s in Side},
        "breaks_left": state.breaks_left.as_dict(),
        "winner": side(state.winner),
        "end_reason": None if state.end_reason is None else state.end_reason.value,
        "flag": side(state.flag),
        **moved,        # where a match ended as moved went (null: not said)
    }

"""The engine: button edges, arbiter commands and dice messages in; match state and effects out.

It adds to the match fold (`match.py`) what needs the history of the match:

- **gestures** (SPEC §3, fine points 1–4): debounce; a press acts as a tap at its down edge; if it
  is still down `hold_s` later and a hold means something in the phase it was pressed in, the
  match is recomputed from that down edge with the hold in place of the tap, and every input that
  came in meanwhile is applied again, in order;
- **undo** (§7, fine point 12): the last player action is taken out of the history and what came
  after it is applied again, so the time since is charged to whoever was running before it.

Both work the same way: the engine keeps the history of the events it folded, each with the match
state just before it, and replays from there. The engine is pure: `feed` and `advance` return a new
engine and the effects; nothing here reads a clock.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import assert_never

from . import match as m
from .arbiter import Undo
from .effects import (
    ArbiterCommand,
    DoubleOffered,
    DoubleTaken,
    Effect,
    GameEnded,
    GameStarted,
    MatchEnded,
    Refused,
    Rewound,
    TurnEnded,
    TurnEndReason,
    Undone,
)
from .match import ArbiterAction, DiceDropped, DiceEvent, Hold, MatchState, Recover, Tap
from .reasons import Reason
from .rules import EndReason, MatchRules
from .sides import Button


@dataclass(frozen=True)
class ButtonEdge:
    """A raw edge of a button, at the instant it happened (ns, monotonic)."""

    t: int
    button: Button
    pressed: bool

    def describe(self) -> str:
        return f"{'down' if self.pressed else 'up'} {self.button}"


Input = ButtonEdge | ArbiterAction | DiceEvent | DiceDropped | Recover


@dataclass(frozen=True)
class Press:
    down_at: int
    entry_serial: int          # the history entry of its tap
    recognised: bool = False   # it has been down for hold_s


def edge_taken(down: bool, last_edge_at: int | None, pressed: bool, t: int,
               debounce_ns: int) -> bool:
    """SPEC fine point 3: an edge at `t` counts only when it changes the button's state (`down`)
    and comes at least `debounce_ns` after the last accepted edge (None: there was none)."""
    return pressed != down and (last_edge_at is None or t - last_edge_at >= debounce_ns)


@dataclass(frozen=True)
class ButtonState:
    last_edge_at: int | None = None   # the last accepted edge, for debounce
    press: Press | None = None        # the press in progress while down

    @property
    def down(self) -> bool:
        return self.press is not None


@dataclass(frozen=True)
class Entry:
    """One event of the history, the match state just before it, and what it did."""

    serial: int
    event: m.Event
    before: MatchState
    first_seq: int              # the stream number of its first effect
    effects: tuple[Effect, ...]
    prev: Entry | None

    @property
    def effective(self) -> bool:
        return any(not e.inert for e in self.effects)

    @property
    def player_action(self) -> str | None:
        """What an undo of this entry takes back, if it is one of the undoable player actions
        (a turn switch, a double, a take, a game start, a confirmed result)."""
        if not isinstance(self.event, (Tap, Hold)):   # a hold that meant nothing acted as a tap
            return None
        for e in self.effects:
            if isinstance(e, GameStarted):
                return f"the start of game {e.game}"
            if isinstance(e, DoubleOffered):
                return f"{e.doubler}'s double to {e.value}"
            if isinstance(e, DoubleTaken):
                return f"{e.taker}'s take"
            if isinstance(e, GameEnded):
                return f"the result of game {e.game} ({e.result.describe()})"
            if isinstance(e, TurnEnded) and e.reason is TurnEndReason.SWITCH:
                return f"{e.side}'s turn switch"
        return None


def _entries_since(log: Entry | None, stop: Entry) -> list[Entry]:
    """The entries after `stop`, oldest first."""
    later = []
    while log is not None and log is not stop:
        later.append(log)
        log = log.prev
    later.reverse()
    return later


@dataclass(frozen=True)
class Engine:
    match: MatchState
    buttons: tuple[tuple[Button, ButtonState], ...]
    log: Entry | None = None     # the newest history entry
    serials: int = 0             # history entries created so far
    seq: int = 0                 # effects reported so far

    def _with(self, **changes: object) -> Engine:
        """A copy with `changes`: `dataclasses.replace` without its cost on the hot path."""
        new = object.__new__(Engine)
        new.__dict__.update(self.__dict__)
        new.__dict__.update(changes)
        return new

    @staticmethod
    def start(rules: MatchRules, at: int = 0) -> Engine:
        return Engine(m.start(rules, at), tuple((b, ButtonState()) for b in Button))

    # --- reading ----------------------------------------------------------------------------

    @property
    def rules(self) -> MatchRules:
        return self.match.rules

    @property
    def now(self) -> int:
        return self.match.now

    def button(self, button: Button) -> ButtonState:
        return dict(self.buttons)[button]

    def _hold_due(self) -> tuple[int, Button] | None:
        """The earliest instant a pressed button becomes a hold, and the button."""
        due: tuple[int, Button] | None = None
        for button, state in self.buttons:
            press = state.press
            if press is not None and not press.recognised:
                at = press.down_at + self.rules.hold_ns
                if due is None or at < due[0]:
                    due = (at, button)
        return due

    def next_deadline(self) -> int | None:
        """The next instant a timer fires: a hold recognised, a flag, a break's end."""
        hold = self._hold_due()
        due = self.match.next_deadline()
        if hold is not None and (due is None or hold[0] < due):
            return hold[0]
        return due

    def state_json(self) -> dict[str, object]:
        return m.state_json(self.match)

    # --- time -------------------------------------------------------------------------------

    def advance(self, t: int) -> tuple[Engine, list[Effect]]:
        """The engine at `t`, every timer due up to `t` fired at its own instant, in order."""
        engine, out = self, []
        while True:
            hold = engine._hold_due()
            due = engine.match.next_deadline()
            if hold is not None and hold[0] <= t and (due is None or hold[0] <= due):
                engine, effects = engine._recognise_hold(hold[1], hold[0])
            elif due is not None and due <= t:
                state, effects = m.advance(engine.match, due)
                engine = engine._with(match=state, seq=engine.seq + len(effects))
            else:
                break
            out += effects
        if engine.match.now != t:
            engine = engine._with(match=m.advance(engine.match, t)[0])
        return engine, out

    # --- inputs -----------------------------------------------------------------------------

    def feed(self, event: Input) -> tuple[Engine, list[Effect]]:
        """Apply one input at its instant; timers due up to that instant fire first."""
        engine, out = self.advance(event.t)
        match event:
            case ButtonEdge():
                engine, effects = engine._edge(event)
            case ArbiterAction(command=Undo()):
                engine, effects = engine._undo(event.t)
            case Recover():
                # After an outage every button is up and no press is pending.
                engine = engine._with(buttons=tuple((b, ButtonState()) for b, _ in engine.buttons))
                engine, effects = engine._fold(event)
            case ArbiterAction() | DiceEvent() | DiceDropped():
                engine, effects = engine._fold(event)
            case _:
                assert_never(event)
        return engine, out + effects

    def _with_button(self, button: Button, state: ButtonState) -> Engine:
        return self._with(buttons=tuple((b, state if b is button else s)
                                           for b, s in self.buttons))

    def _edge(self, edge: ButtonEdge) -> tuple[Engine, list[Effect]]:
        current = self.button(edge.button)
        if not edge_taken(current.down, current.last_edge_at, edge.pressed, edge.t,
                          self.rules.debounce_ns):
            return self, []          # a repeated edge, or a bounce
        if not edge.pressed:
            return self._with_button(edge.button, ButtonState(edge.t, None)), []
        engine, effects = self._fold(Tap(edge.t, edge.button))
        press = Press(edge.t, engine.serials - 1)
        return engine._with_button(edge.button, ButtonState(edge.t, press)), effects

    def _fold(self, event: m.Event) -> tuple[Engine, list[Effect]]:
        """Fold one event into the match and the history."""
        state, effects = m.apply(self.match, event)
        entry = Entry(self.serials, event, self.match, self.seq, tuple(effects), self.log)
        return self._with(match=state, log=entry, serials=self.serials + 1,
                       seq=self.seq + len(effects)), effects

    def _find(self, serial: int) -> Entry | None:
        entry = self.log
        while entry is not None and entry.serial > serial:
            entry = entry.prev
        return entry if entry is not None and entry.serial == serial else None

    def _replay(self, start: Entry, first: m.Event | None, later: list[Entry], at: int,
                why: str) -> tuple[Engine, list[Effect]]:
        """Rebuild the history from `start` (replaced by `first`, or dropped when None), then
        the `later` entries again, and bring the match to `at`."""
        out: list[Effect] = [Rewound(at, start.first_seq, start.event.t, why)]
        state, log = start.before, start.prev
        items = ([(start.serial, first)] if first is not None else [])
        items += [(e.serial, e.event) for e in later]
        for serial, event in items:
            state, timers = m.advance(state, event.t)
            out += timers
            after, effects = m.apply(state, event)
            log = Entry(serial, event, state, self.seq + len(out), tuple(effects), log)
            out += effects
            state = after
        state, timers = m.advance(state, at)
        out += timers
        return self._with(match=state, log=log, seq=self.seq + len(out)), out

    def _recognise_hold(self, button: Button, at: int) -> tuple[Engine, list[Effect]]:
        press = self.button(button).press
        assert press is not None
        engine = self._with_button(button, replace(self.button(button),
                                                   press=replace(press, recognised=True)))
        entry = engine._find(press.entry_serial)
        if entry is None:
            return engine, []        # an undo took its tap away
        hold = Hold(press.down_at, button)
        later = _entries_since(engine.log, entry)
        if not entry.before.hold_has_meaning(button):
            # The tap's effect stands (fine point 1). The history still learns that the press
            # was a hold, so that a replay after an undo judges it again where it may mean more.
            return engine._relabel(entry, hold, later), []
        return engine._replay(entry, hold, later, at, f"{button} held")

    def _relabel(self, entry: Entry, event: m.Event, later: list[Entry]) -> Engine:
        """The same history with `entry`'s event replaced by one that acts the same there."""
        log = replace(entry, event=event)
        for e in later:
            log = replace(e, prev=log)
        return self._with(log=log)

    def _undo(self, t: int) -> tuple[Engine, list[Effect]]:
        said = ArbiterCommand(t, "undo")
        state = self.match
        if state.end_reason in (EndReason.FLAG, EndReason.DISQUALIFIED, EndReason.CHALLENGES,
                                EndReason.ABANDONED):
            return self._report([said, Refused(t, "undo", f"the match was lost on "
                                                          f"{state.end_reason.value}",
                                               Reason.UNDO_MATCH_LOST)])
        target = self.log
        while target is not None and target.player_action is None:
            target = target.prev
        if target is None:
            return self._report([said, Refused(t, "undo", "nothing to undo",
                                               Reason.UNDO_NOTHING)])
        later = _entries_since(self.log, target)
        if state.end_reason is EndReason.SCORE and not any(
                isinstance(e, MatchEnded) for e in target.effects):
            return self._report([said, Refused(t, "undo", "the match was ended by the arbiter; "
                                                          "undo cannot reach past that",
                                               Reason.UNDO_PAST_ARBITER)])
        what = target.player_action
        engine, out = self._replay(target, None, [e for e in later if e.effective], t, "undo")
        tail: list[Effect] = [said, Undone(t, what or "")]
        return engine._with(seq=engine.seq + len(tail)), out + tail

    def _report(self, effects: list[Effect]) -> tuple[Engine, list[Effect]]:
        return self._with(seq=self.seq + len(effects)), effects

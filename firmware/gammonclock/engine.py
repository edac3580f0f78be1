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
from .arbiter_mode import abandons_match, panel_request
from .durations import format_clock
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
    Shown,
    TurnEnded,
    TurnEndReason,
    Undone,
)
from .match import ArbiterAction, DiceDropped, DiceEvent, Hold, MatchState, Recover, Tap
from .match_state import MenuItem, PanelStage, Phase, copy_state
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
    chord: bool = False        # one of a chord of all three buttons, recognised (SPEC §13.4)


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
        """Whether an undo's replay keeps it: it changed something. The arbiter's mode changes
        its own state with every press (a PIN dot, a step of the menu) and says so in inert
        effects, so its presses and the chord are always kept."""
        return any(not e.inert for e in self.effects) or isinstance(
            self.event, (m.Chord, m.ChordReleased)) or (
            isinstance(self.event, (Tap, Hold)) and self.before.phase is Phase.ARBITER)

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

    def _chord_due(self) -> int | None:
        """The instant all three buttons, down together, become the arbiter's chord (SPEC
        §13.4): `chord_s` after the last went down. Only with a PIN, and not in the arbiter's
        mode already."""
        if self.rules.arbiter_pin is None or self.match.phase is Phase.ARBITER:
            return None
        presses = [state.press for _, state in self.buttons]
        if any(p is None or p.chord for p in presses):
            return None
        return max(p.down_at for p in presses if p is not None) + self.rules.chord_ns

    def _timer_due(self) -> tuple[int, Button | None] | None:
        """The engine's own next timer: a hold (with its button) before a chord (None) due at
        the same instant."""
        hold = self._hold_due()
        chord = self._chord_due()
        if chord is not None and (hold is None or chord < hold[0]):
            return chord, None
        return hold

    def next_deadline(self) -> int | None:
        """The next instant a timer fires: a hold or a chord recognised, a flag, a break's end,
        the arbiter's PIN or menu running out."""
        mine = self._timer_due()
        due = self.match.next_deadline()
        if mine is not None and (due is None or mine[0] < due):
            return mine[0]
        return due

    def state_json(self) -> dict[str, object]:
        return m.state_json(self.match)

    # --- time -------------------------------------------------------------------------------

    def advance(self, t: int) -> tuple[Engine, list[Effect]]:
        """The engine at `t`, every timer due up to `t` fired at its own instant, in order."""
        engine, out = self, []
        while True:
            mine = engine._timer_due()
            due = engine.match.next_deadline()
            if mine is not None and mine[0] <= t and (due is None or mine[0] <= due):
                instant, button = mine
                engine, effects = (engine._recognise_hold(button, instant) if button is not None
                                   else engine._recognise_chord(instant))
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
                engine, effects = engine._undo(event.t, event.source, event.by)
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
            engine = self._with_button(edge.button, ButtonState(edge.t, None))
            if current.press is not None and current.press.chord and engine._chord_released():
                return engine._fold(m.ChordReleased(edge.t))
            return engine, []
        request = panel_request(self.match, edge.button)
        engine, effects = self._fold(Tap(edge.t, edge.button))
        press = Press(edge.t, engine.serials - 1)
        engine = engine._with_button(edge.button, ButtonState(edge.t, press))
        if request is MenuItem.UNDO:
            engine, more = engine._undo(edge.t, "panel", None)
            effects = effects + more
            refusal = next((e for e in more if isinstance(e, Refused)), None)
            if refusal is not None:
                engine = engine._panel_refused(refusal.reason)
        elif request is MenuItem.NEXT_MATCH:
            # The device loads its match file (SPEC §13.4): a request, not a change of this
            # match, so no replay ever repeats it.
            engine, more = engine._report([Shown(
                edge.t, "the next match: " + ("abandon this one and load the match file"
                                              if abandons_match(engine.match)
                                              else "load the match file"),
                Reason.NEXT_MATCH_REQUESTED)])
            effects = effects + more
        return engine, effects

    def _panel_refused(self, reason: Reason | None) -> Engine:
        """The menu says why its undo was refused until the next press (`arbiter_mode` does so
        for the commands the match folds itself)."""
        panel = self.match.panel
        if panel is None:
            return self
        match = copy_state(self.match)
        match.panel = replace(panel, refused=reason)
        return self._with(match=match)

    def _chord_released(self) -> bool:
        """Whether the last button of a recognised chord just went up in the PIN's wait."""
        panel = self.match.panel
        return (panel is not None and panel.stage is PanelStage.HELD
                and not any(s.press is not None and s.press.chord for _, s in self.buttons))

    def _with_presses(self, **marks: bool) -> Engine:
        """Every press in progress with `marks` set (`Press.recognised`, `Press.chord`)."""
        return self._with(buttons=tuple(
            (b, replace(state, press=replace(state.press, **marks))
             if state.press is not None else state) for b, state in self.buttons))

    def _recognise_chord(self, at: int) -> tuple[Engine, list[Effect]]:
        """The chord (SPEC §13.4): what its down edges did (and their holds) is undone, and the
        match goes into the arbiter's mode as of the earliest of them; other inputs since are
        applied again on top. Locked after three failed PINs: the presses stay what they were."""
        presses = [state.press for _, state in self.buttons]
        locked = self.match.chord_locked_until
        if locked is not None and at < locked:
            # Marked, so that it is not recognised again; a hold still to come still comes.
            return self._with_presses(chord=True)._report([Shown(
                at, f"arbiter chord locked for {format_clock(locked - at)}",
                Reason.CHORD_LOCKED)])
        # Its presses are the chord's now: none of them becomes a hold any more.
        engine = self._with_presses(recognised=True, chord=True)
        taps = [e for p in presses if p is not None
                and (e := engine._find(p.entry_serial)) is not None]
        if not taps:                 # an undo took their taps away: the mode opens now
            return engine._fold(m.Chord(at))
        start = min(taps, key=lambda e: e.serial)
        chord_serials = {e.serial for e in taps}
        later = [e for e in _entries_since(engine.log, start) if e.serial not in chord_serials]
        return engine._replay(start, m.Chord(start.event.t), later, at, "arbiter chord")

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

    def _undo(self, t: int, source: str | None = None,
              by: str | None = None) -> tuple[Engine, list[Effect]]:
        said = ArbiterCommand(t, "undo", source, by)
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

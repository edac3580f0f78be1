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

- the **pin pad** (SPEC §13.4): while the arbiter enters the PIN, and until every button pressed
  then is up again, the edges are the pad's, not the match's. It debounces them per button (fine
  point 3) and keeps which button was pressed in memory only (`PadKeys`): the match folds a dot
  per press (`PinDot`) and, at the end of the entry, the digest of the letters (`PinEntered`).
  What it did with an edge, without the button, is a `PinKey`: the input the session journals
  for that edge (`Engine.recorded`) and that a replay feeds back, to the same match. The pad's
  presses never reach the engine's `buttons`: when the pad gives the buttons back (the next
  edge after its last press is released, out of the PIN's stage), every button is up, its
  debounce counted from the pad's last accepted edge.
- the **chord's reach** (issue 20): a chord undoes what its down edges did, but only those made
  within the last `CHORD_REACH` history entries when it is recognised; an older one (a button
  held through a pause while the others were tapped many times) is part of the chord but its tap
  stands, and the arbiter's mode opens as of the earliest edge within reach (or at the chord's
  instant). So a snapshot never keeps more than that many entries for a chord to come.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from enum import Enum
from typing import assert_never

from gammonclock.durations import format_clock
from gammonclock.sides import Button

from . import match as m
from .arbiter import Undo
from .arbiter_mode import abandons_match, panel_request
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
from .match import (
    ArbiterAction,
    ArbiterHandover,
    DiceDropped,
    DiceEvent,
    Hold,
    MatchState,
    ProvisionOffered,
    Recover,
    StickOffered,
    Tap,
)
from .match_state import MenuItem, PanelStage, Phase, copy_state
from .pin import MAX_PIN, PinCheck
from .reasons import Reason
from .rules import EndReason, MatchRules

# History entries a chord reaches back to undo its down edges (see the module's docstring). A
# chord's three edges come within a second or two: two entries apart, a few more with dice.
CHORD_REACH = 32


@dataclass(frozen=True)
class ButtonEdge:
    """A raw edge of a button, at the instant it happened (ns, monotonic)."""

    t: int
    button: Button
    pressed: bool

    def describe(self) -> str:
        return f"{'down' if self.pressed else 'up'} {self.button}"


class PinKeyKind(str, Enum):
    """What the pin pad did with an edge (the journal's `key`)."""

    DOT = "dot"            # a press of the PIN: a dot on the panels
    PRESS = "press"        # a press that is no letter (past the 8th, or after the entry ended)
    RELEASE = "release"    # a release
    END = "end"            # a release that ends the entry (a cube hold, the 8th press): digest
    BOUNCE = "bounce"      # an edge debounce ignores


@dataclass(frozen=True)
class PinKey:
    """An edge of the pin pad as the journal keeps it: what it did, never which button."""

    t: int
    key: PinKeyKind
    digest: str | None = None    # END: the digest of the letters entered (pin.py)

    def describe(self) -> str:
        return f"PIN {self.key.value}"


Input = (ButtonEdge | PinKey | ArbiterAction | DiceEvent | DiceDropped | Recover | StickOffered
         | ProvisionOffered | ArbiterHandover)


@dataclass(frozen=True)
class PadHold:
    """The pin pad as a replay knows it too (no button): the presses it took and has not seen
    released, and its last accepted edge."""

    down: int
    last_edge_at: int


@dataclass(frozen=True)
class PadPress:
    down_at: int
    letter: int | None           # its place among the letters entered (None: no letter)


@dataclass(frozen=True)
class PadKeys:
    """The pin pad's buttons, in memory only (never journaled, never in a snapshot): each
    button's last accepted edge and press in progress, and the letters entered, in order."""

    last_edge_at: tuple[tuple[Button, int | None], ...]
    presses: tuple[tuple[Button, PadPress], ...] = ()
    letters: tuple[Button, ...] = ()

    def press(self, button: Button) -> PadPress | None:
        return dict(self.presses).get(button)

    def edge_at(self, button: Button) -> int | None:
        return dict(self.last_edge_at).get(button)


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
        effects, so its presses and the chord are always kept; so is a stick's offer (what the
        menu lists) and a hand-over (whose arbiter's PIN the panels judge by)."""
        return any(not e.inert for e in self.effects) or isinstance(
            self.event, (m.Chord, m.ChordReleased, m.PinDot, m.PinEntered,
                         m.StickOffered, m.ProvisionOffered, m.ArbiterHandover)) or (
            isinstance(self.event, (Tap, Hold)) and self.before.phase is Phase.ARBITER)

    @property
    def player_action(self) -> str | None:
        """What an undo of this entry takes back, if it is one of the undoable player actions
        (a turn switch, a double, a take, a game start, a confirmed result)."""
        undone = self.undone(0)
        return None if undone is None else undone.what

    def undone(self, t: int) -> Undone | None:
        """The `Undone` an undo at `t` of this entry reports (None: not a player action): the
        action in English and as fields (whose press, which game, the cube's value, the result,
        when it was made)."""
        if not isinstance(self.event, (Tap, Hold)):   # a hold that meant nothing acted as a tap
            return None
        pressed, made = self.event.button.side, self.event.t
        for e in self.effects:
            if isinstance(e, GameStarted):
                return Undone(t, f"the start of game {e.game}", "start", pressed, e.game,
                              made_at=made)
            if isinstance(e, DoubleOffered):
                return Undone(t, f"{e.doubler}'s double to {e.value}", "double", e.doubler,
                              self.before.game, e.value, made_at=made)
            if isinstance(e, DoubleTaken):
                return Undone(t, f"{e.taker}'s take", "take", e.taker, self.before.game,
                              e.value, made_at=made)
            if isinstance(e, GameEnded):
                return Undone(t, f"the result of game {e.game} ({e.result.describe()})",
                              "result", pressed, e.game, result=e.result, made_at=made)
            if isinstance(e, TurnEnded) and e.reason is TurnEndReason.SWITCH:
                return Undone(t, f"{e.side}'s turn switch", "switch", e.side, self.before.game,
                              made_at=made)
        return None


def _entries_since(log: Entry | None, stop: Entry) -> list[Entry]:
    """The entries after `stop`, oldest first."""
    later = []
    while log is not None and log is not stop:
        later.append(log)
        log = log.prev
    later.reverse()
    return later


def _entry_digest(check: PinCheck, letters: tuple[Button, ...]) -> str:
    """The digest an entry is journaled and judged with. A keyed hash on a clock that was not
    given its device key's pepper (the shell gives it; only a card that cannot read its key
    leaves it out, and the resume says so) cannot compute one: the entry then fails, as a
    wrong PIN, with an empty digest that no hash matches, rather than stopping the clock."""
    return check.digest(letters) if check.can_digest else ""


@dataclass(frozen=True)
class Engine:
    match: MatchState
    buttons: tuple[tuple[Button, ButtonState], ...]
    log: Entry | None = None     # the newest history entry
    serials: int = 0             # history entries created so far
    seq: int = 0                 # effects reported so far
    pad: PadHold | None = None   # the pin pad holds the buttons (SPEC §13.4)
    # … and which they are: in memory only (see the module doc), never in a repr or a log
    keys: PadKeys | None = field(default=None, repr=False, compare=False)
    recorded: Input | None = None   # the last input fed, as the journal keeps it

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
        for b, state in self.buttons:        # (not a dict built at every edge)
            if b is button:
                return state
        raise KeyError(button)

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
        engine = engine._with(recorded=event)
        match event:
            case ButtonEdge():
                engine, effects = engine._edge(event)
            case PinKey():
                engine, effects = engine._pin_key(event)
            case ArbiterAction(command=Undo()):
                engine, effects = engine._undo(event.t, event.source, event.by)
            case Recover():
                # After an outage every button is up and no press is pending.
                engine = engine._with(buttons=tuple((b, ButtonState()) for b, _ in engine.buttons),
                                      pad=None, keys=None)
                engine, effects = engine._fold(event)
            case (ArbiterAction() | DiceEvent() | DiceDropped() | StickOffered()
                  | ProvisionOffered() | ArbiterHandover()):
                engine, effects = engine._fold(event)
            case _:
                assert_never(event)
        return engine, out + effects

    def _with_button(self, button: Button, state: ButtonState) -> Engine:
        return self._with(buttons=tuple((b, state if b is button else s)
                                           for b, s in self.buttons))

    def _edge(self, edge: ButtonEdge) -> tuple[Engine, list[Effect]]:
        if self._pad_takes():
            return self._pad_edge(edge)
        if self.pad is not None:
            # The pad gives the buttons back: all up, debounced from its last edge.
            at = self.pad.last_edge_at
            return self._with(buttons=tuple((b, ButtonState(at, None)) for b, _ in self.buttons),
                              pad=None, keys=None)._edge(edge)
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
        elif request is MenuItem.CONTINUE_STICK:
            # The device continues the match the stick offered (SPEC §13.5): the arbiter's
            # act, confirmed here after the PIN; a request, as the next match is.
            offer = self.match.stick_offer
            engine, more = engine._report([Shown(
                edge.t, "continue the match the USB stick offers: "
                + (offer.describe() if offer is not None else "none")
                + ("; this match ends abandoned" if engine.match.play_phase
                   is not Phase.MATCH_OVER else ""),
                Reason.CONTINUE_STICK_REQUESTED)])
            effects = effects + more
        elif request is MenuItem.PROVISION_STICK:
            # The device takes the provisioning stick's files (issue 32): the arbiter's act,
            # confirmed here after the PIN; a request, as the next match is.
            provision = self.match.provision_offer
            engine, more = engine._report([Shown(
                edge.t, "take the provisioning stick: "
                + (provision.describe() if provision is not None else "none"),
                Reason.PROVISION_REQUESTED)])
            effects = effects + more
        return engine, effects

    # --- the pin pad (SPEC §13.4) -----------------------------------------------------------

    def _in_pin_entry(self) -> bool:
        """The arbiter is entering the PIN (and the PIN is a hash: a journal of before keeps
        its taps as button edges, as it was played)."""
        panel, check = self.match.panel, self.rules.arbiter_pin
        return (self.match.phase is Phase.ARBITER and panel is not None
                and panel.stage is PanelStage.PIN and check is not None
                and check.legacy_pin is None)

    def _pad_takes(self) -> bool:
        """Whether the pin pad takes the edges now: in the PIN's entry, and until every button
        pressed then is up."""
        return self._in_pin_entry() or (self.pad is not None and self.pad.down > 0)

    def _pad_started(self) -> Engine:
        """The engine with the pad holding the buttons: a press still down (one begun while
        the chord was held) is the pad's from now on, and no longer one that becomes a hold."""
        if self.pad is not None:
            return self
        down = [(b, s) for b, s in self.buttons if s.press is not None]
        last = max((s.last_edge_at for _, s in self.buttons if s.last_edge_at is not None),
                   default=self.now)
        keys = PadKeys(tuple((b, s.last_edge_at) for b, s in self.buttons),
                       tuple((b, PadPress(s.press.down_at, None)) for b, s in down
                             if s.press is not None))
        return self._with(buttons=tuple((b, ButtonState(s.last_edge_at, None))
                                        for b, s in self.buttons),
                          pad=PadHold(len(down), last), keys=keys)

    def _pad_edge(self, edge: ButtonEdge) -> tuple[Engine, list[Effect]]:
        """An edge the pin pad takes: what it means, without the button, folded as the
        journal will say it (`_pin_key`)."""
        engine = self._pad_started()
        keys = engine.keys
        assert keys is not None
        button, t = edge.button, edge.t
        press = keys.press(button)
        if not edge_taken(press is not None, keys.edge_at(button), edge.pressed, t,
                          self.rules.debounce_ns):
            return engine._pin_key(PinKey(t, PinKeyKind.BOUNCE))
        edges = tuple((b, t if b is button else at) for b, at in keys.last_edge_at)
        if edge.pressed:
            letter = engine._in_pin_entry() and len(keys.letters) < MAX_PIN
            keys = PadKeys(edges, keys.presses + ((button, PadPress(
                t, len(keys.letters) if letter else None)),),
                keys.letters + ((button,) if letter else ()))
            key = PinKey(t, PinKeyKind.DOT if letter else PinKeyKind.PRESS)
        else:
            assert press is not None
            keys = PadKeys(edges, tuple((b, p) for b, p in keys.presses if b is not button),
                           keys.letters)
            key = PinKey(t, PinKeyKind.RELEASE)
            check = self.rules.arbiter_pin
            if engine._in_pin_entry() and check is not None:
                letters = keys.letters
                if button is Button.CUBE and t - press.down_at >= self.rules.hold_ns:
                    # The cube held: the end of the entry, and no letter itself.
                    if press.letter is not None:
                        letters = letters[:press.letter] + letters[press.letter + 1:]
                    key = PinKey(t, PinKeyKind.END, _entry_digest(check, letters))
                elif len(letters) >= MAX_PIN:
                    key = PinKey(t, PinKeyKind.END, _entry_digest(check, letters))
            if key.key is PinKeyKind.END or not engine._in_pin_entry():
                keys = replace(keys, letters=())        # forgotten as soon as judged
        return engine._with(keys=keys)._pin_key(key)

    def _pin_key(self, key: PinKey) -> tuple[Engine, list[Effect]]:
        """A pin pad's edge, as the live pad made it or a replay reads it from the journal:
        the same match either way."""
        engine = self._pad_started()._with(recorded=key)
        pad = engine.pad
        assert pad is not None
        if key.key is PinKeyKind.BOUNCE:
            return engine, []
        pressed = key.key in (PinKeyKind.DOT, PinKeyKind.PRESS)
        engine = engine._with(pad=PadHold(max(0, pad.down + (1 if pressed else -1)), key.t))
        if key.key is PinKeyKind.DOT:
            return engine._fold(m.PinDot(key.t))
        if key.key is PinKeyKind.END:
            return engine._fold(m.PinEntered(key.t, key.digest or ""))
        return engine, []

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
        applied again on top. Locked after three failed PINs: undone all the same, but the
        match goes on as if those edges had never been (`_locked_chord`)."""
        locked = self.match.chord_locked_until
        if locked is not None and at < locked:
            check = self.rules.arbiter_pin
            if check is not None and check.locked_chord_stands:
                # A journal from before issue 31, as it was played: marked, so that it is not
                # recognised again; its taps stand and a hold still to come still comes.
                return self._with_presses(chord=True)._report([Shown(
                    at, f"arbiter chord locked for {format_clock(locked - at)}",
                    Reason.CHORD_LOCKED)])
            return self._locked_chord(at, locked)
        # Its presses are the chord's now: none of them becomes a hold any more.
        engine = self._with_presses(recognised=True, chord=True)
        taps = engine._chord_taps()
        if not taps:                 # an undo took their taps away (or out of reach): now
            return engine._fold(m.Chord(at))
        start = min(taps, key=lambda e: e.serial)
        return engine._replay(start, m.Chord(start.event.t), engine._after_chord(taps, start),
                              at, "arbiter chord")

    def _locked_chord(self, at: int, locked: int) -> tuple[Engine, list[Effect]]:
        """A chord during a lockout (SPEC §13.4) is undone like any chord: what its down edges
        did within reach, holds included, is taken out of the history and the inputs since are
        applied again, and none of its presses becomes a hold any more. No arbiter's mode
        opens and nothing pauses: the match is what it would be had those edges never come, so
        the time since the earliest of them is charged to whoever was running before it (a
        locked chord stops no clock: it is never free time). The panels say how long the
        lockout still lasts."""
        engine = self._with_presses(recognised=True, chord=True)
        shown = Shown(at, f"arbiter chord locked for {format_clock(locked - at)}",
                      Reason.CHORD_LOCKED, (("left_ns", locked - at),))
        taps = engine._chord_taps()
        if not taps:
            return engine._report([shown])
        start = min(taps, key=lambda e: e.serial)
        engine, undone = engine._replay(start, None, engine._after_chord(taps, start), at,
                                        "arbiter chord locked")
        engine, said = engine._report([shown])
        return engine, undone + said

    def _chord_taps(self) -> list[Entry]:
        """The history entries of the chord's down edges that a chord recognised now undoes
        (within `CHORD_REACH`; an undo may have taken some away)."""
        return [e for _, state in self.buttons if (p := state.press) is not None
                and self.in_chord_reach(p) and (e := self._find(p.entry_serial)) is not None]

    def _after_chord(self, taps: list[Entry], start: Entry) -> list[Entry]:
        """The entries after `start` that are not the chord's own: applied again on top."""
        chord_serials = {e.serial for e in taps}
        return [e for e in _entries_since(self.log, start) if e.serial not in chord_serials]

    def in_chord_reach(self, press: Press) -> bool:
        """Whether a chord recognised now would undo this press's tap (`CHORD_REACH`)."""
        return self.serials - press.entry_serial <= CHORD_REACH

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
        if state.end_reason is EndReason.MOVED:
            # The match goes on on another clock: nothing of it is this clock's to take back.
            return self._report([said, Refused(t, "undo", "the match went on on another clock",
                                               Reason.UNDO_MATCH_MOVED)])
        if state.end_reason in (EndReason.FLAG, EndReason.DISQUALIFIED, EndReason.CHALLENGES,
                                EndReason.ABANDONED):
            return self._report([said, Refused(t, "undo", f"the match was lost on "
                                                          f"{state.end_reason.value}",
                                               Reason.UNDO_MATCH_LOST,
                                               (("end", state.end_reason.value),))])
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
        undone = target.undone(t)
        assert undone is not None
        engine, out = self._replay(target, None, [e for e in later if e.effective], t, "undo")
        tail: list[Effect] = [said, undone]
        return engine._with(seq=engine.seq + len(tail)), out + tail

    def _report(self, effects: list[Effect]) -> tuple[Engine, list[Effect]]:
        return self._with(seq=self.seq + len(effects)), effects

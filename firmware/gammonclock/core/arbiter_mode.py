"""The arbiter at the panels (SPEC §13.4): the PIN and the menu, as transitions of the match.

The engine recognises the chord (all three buttons held `chord_s` after the last went down) and
folds it as a `Chord` event at its earliest down edge, in place of what those edges did; its
release is a `ChordReleased` event. From there on every press is this module's:

- `HELD`: the chord is still down; a tap is ignored.
- `PIN`: each press is a dot (`PinDot`); which button it was stays in the engine's pin pad.
  The entry ends with a deliberate gesture, never at the PIN's length: the release of a cube
  press held `hold_s` (that press is no letter), or of the 8th press. The pad then gives the
  digest of the letters (`PinEntered`, pin.py), which is compared with the PIN's hash: right
  opens the menu; wrong, or no end within 30 s of the release, is a failed attempt: play
  resumes as if the clocks had never stopped (the whole span charged to the side whose clock
  was running), and the third failure in a row locks the chord: 5 minutes, then 15, then 60
  (and 60 after), until a right PIN. A chord during a lockout is undone but opens nothing
  (the engine's `_locked_chord`). A journal written before the PIN was hashed replays as it
  was played: its taps are letters, judged at the PIN's length, and lockouts are 5 minutes
  (`legacy_pin`).
- the menu: left = previous / −, right = next / +, cube tap = choose / set / yes, cube hold =
  resume play (one gesture from anywhere but a confirmation, where the tap's "yes" stands).
  A change is set in `EDIT`, asked in `CONFIRM` and applied as the arbiter command of §7 it is,
  journaled with `source = "panel"`; "moved" (the match went on on another clock, SPEC §13.5:
  the panels cannot type a table, so it names none) ends the match and closes the menu. Undo
  and the next match are confirmed here and carried out by the engine (which has the history)
  and the device (which has the match file): `panel_request`. 120 s without a press closes the
  menu; the match stays paused.

Pure, like every transition: it changes its own copy of the state and reports effects.
"""

from __future__ import annotations

from dataclasses import replace
from fractions import Fraction

from gammonclock.durations import NS_PER_MIN, NS_PER_S, format_clock
from gammonclock.sides import Button, Side

from . import arbiter as cmd
from .arbiter_actions import Arbiter
from .effects import Paused, Refused, Shown
from .match_state import (
    MatchState,
    MenuItem,
    PanelMode,
    PanelStage,
    Phase,
    ProvisionOffer,
    StickOffer,
)
from .pin import MAX_PIN, PIN_LETTERS, PinCheck
from .reasons import Reason
from .rules import EndReason
from .transition import Step

PIN_WINDOW_NS = 30 * NS_PER_S        # from the chord's release to the PIN's last tap
MENU_IDLE_NS = 120 * NS_PER_S        # without a press, the menu closes (still paused)
LOCKOUT_NS = 5 * NS_PER_MIN          # the chord after three failed attempts in a row (old journals)
# The lockouts in a row (since the last right PIN): 5 minutes, then 15, then 60, and 60 after.
LOCKOUTS_NS = (5 * NS_PER_MIN, 15 * NS_PER_MIN, 60 * NS_PER_MIN)
FAILURES_TO_LOCK = 3
ADJUST_STEP_NS = 10 * NS_PER_S       # one arrow tap on a clock
MAX_CUBE_CHOICE = 64                 # the physical cube's top face; the socket sets more

# The menu without a stick's offer.
PLAIN_MENU = tuple(item for item in MenuItem
                   if item not in (MenuItem.CONTINUE_STICK, MenuItem.PROVISION_STICK))
# The menu a journal written before issue 31 was played on (no "match moved"): its presses
# replay on it (`PinCheck.menu_without_moved`).
MENU_BEFORE_MOVED = tuple(item for item in PLAIN_MENU if item is not MenuItem.MOVED)

# The menu's items that set a value before they are confirmed (the rest confirm at once).
EDITED = frozenset({MenuItem.ADJUST_LEFT, MenuItem.ADJUST_RIGHT, MenuItem.SCORE, MenuItem.CUBE})
ADJUSTED = {MenuItem.ADJUST_LEFT: Side.LEFT, MenuItem.ADJUST_RIGHT: Side.RIGHT}


def pin_buttons(pin: str) -> tuple[Button, ...]:
    """The buttons of a PIN as the config writes it ("LRCLR")."""
    return tuple(PIN_LETTERS[letter] for letter in pin.upper())


def lockout_ns(lockouts: int) -> int:
    """The length of a lockout after `lockouts` earlier ones since the last right PIN."""
    return LOCKOUTS_NS[min(lockouts, len(LOCKOUTS_NS) - 1)]


def cube_choices() -> tuple[tuple[int, Side | None], ...]:
    """The cube's positions the menu offers, in order: in the middle, then each value owned by
    left and by right."""
    choices: list[tuple[int, Side | None]] = [(1, None)]
    value = 2
    while value <= MAX_CUBE_CHOICE:
        choices += [(value, Side.LEFT), (value, Side.RIGHT)]
        value *= 2
    return tuple(choices)


CUBE_CHOICES = cube_choices()


def menu_items(state: MatchState) -> tuple[MenuItem, ...]:
    """The menu's items now, in order: a USB stick's offer (SPEC §13.5) second, after resume,
    while one stands and no game of this match is in progress; the rest as they always were,
    but "match moved" in a journal written before it existed. The offer is a journaled input
    (`StickOffered`) and the menu's version is in the header, so a replay lists what the
    arbiter saw."""
    check = state.rules.arbiter_pin
    base = MENU_BEFORE_MOVED if check is not None and check.menu_without_moved else PLAIN_MENU
    offered = ((MenuItem.CONTINUE_STICK,) if offers_stick(state) else ()) + \
        ((MenuItem.PROVISION_STICK,) if offers_provision(state) else ())
    return (base[0], *offered, *base[1:])


def offers_stick(state: MatchState) -> bool:
    """Whether the menu lists a stick's offer now (a stick never ends a match in progress)."""
    return state.stick_offer is not None and not state.in_progress


def offers_provision(state: MatchState) -> bool:
    """Whether the menu lists a provisioning stick's offer now: never while a game is in
    progress (it stands for after the match, issue 32)."""
    return state.provision_offer is not None and not state.in_progress


def panel_request(state: MatchState, button: Button) -> MenuItem | None:
    """The confirmation a tap of `button` gives now to what the match fold cannot do itself:
    `UNDO` (the engine's, with the history), `NEXT_MATCH` (the device's, with the file) or
    `CONTINUE_STICK` (the device's, with the journal it copied off the stick)."""
    panel = state.panel
    if (state.phase is Phase.ARBITER and panel is not None and panel.stage is PanelStage.CONFIRM
            and button is Button.CUBE
            and panel.item in (MenuItem.UNDO, MenuItem.NEXT_MATCH, MenuItem.CONTINUE_STICK,
                               MenuItem.PROVISION_STICK)):
        return panel.item
    return None


def abandons_match(state: MatchState) -> bool:
    """Whether loading the next match now ends a match in progress (SPEC §13.2)."""
    return state.in_progress


class ArbiterMode(Step):
    """The chord, its release, a press or a deadline in the arbiter's mode."""

    # --- the chord ---------------------------------------------------------------------------

    def open(self) -> None:
        """The chord, at its earliest down edge: every clock stops here."""
        s = self.s
        froze = self.clock_runs()
        if froze:
            assert s.turn is not None
            s.turn = s.turn.frozen(self.t)
            self.out.append(Paused(self.t, "arbiter chord"))
        s.panel = PanelMode(self.t, s.phase, froze, PanelStage.HELD, None)
        s.phase = Phase.ARBITER
        self.show("arbiter: release the buttons, then the PIN", Reason.PIN_ENTRY)

    def chord_released(self) -> None:
        """All three buttons are up: the PIN's 30 seconds start."""
        panel = self.panel
        if panel.stage is PanelStage.HELD:
            self.s.panel = replace(panel, stage=PanelStage.PIN,
                                   deadline=self.t + PIN_WINDOW_NS)
            self.show("arbiter: enter the PIN" if self.legacy_pin is not None
                      else "arbiter: enter the PIN, then hold cube", Reason.PIN_ENTRY)

    @property
    def legacy_pin(self) -> str | None:
        """The clear PIN of a journal written before the PIN was hashed (None since)."""
        check = self.s.rules.arbiter_pin
        return check.legacy_pin if check is not None else None

    @property
    def panel(self) -> PanelMode:
        assert self.s.panel is not None
        return self.s.panel

    def show(self, text: str, reason: Reason) -> None:
        self.out.append(Shown(self.t, text, reason))

    # --- presses and deadlines ---------------------------------------------------------------

    def press(self, button: Button, held: bool) -> None:
        panel = self.panel
        if panel.stage is PanelStage.HELD:
            self.ignore(f"tap {button}", Reason.CHORD_HELD, "release all three buttons first",
                        pressed=str(button))
        elif panel.stage is PanelStage.PIN:
            if self.legacy_pin is not None:
                self.pin_tap(button)
            else:                 # only an undo's replay brings a tap here: a dot, no letter
                self.pin_dot()
        else:
            self.s.panel = replace(panel, deadline=self.t + MENU_IDLE_NS, refused=None)
            if held:          # only a cube hold means something here: resume play
                self.command(cmd.Resume())
            else:
                self.menu_tap(button)

    def timeout(self) -> None:
        if self.panel.stage is PanelStage.PIN:
            self.fail(Reason.PIN_TIMEOUT, "no PIN within 30 s")
        else:
            self.close_menu("arbiter's menu closed")

    def outage(self) -> None:
        """Back after an outage with the mode open (the buttons are all up now): a PIN not yet
        entered is a failed attempt, charged up to the last record's instant (the outage itself
        is nobody's); an open menu closes as its timeout closes it. Recovery then pauses a clock
        that runs, as after any outage."""
        if self.panel.stage in (PanelStage.HELD, PanelStage.PIN):
            self.fail(Reason.PIN_TIMEOUT, "the power went before the PIN", "outage")
        else:
            self.close_menu("arbiter's menu closed by a restart")

    def close_menu(self, said: str) -> None:
        """The menu closes: a clock the chord stopped stays paused (a cube hold resumes it);
        a break's overrun up to now is its taker's all the same."""
        self.run_break_under_panel()
        s, panel = self.s, self.panel
        if panel.froze_turn:
            s.phase, s.resume_phase, s.panel = Phase.PAUSED, panel.back_to, None
            self.show(f"{said}: paused", Reason.MENU_TIMEOUT)
        else:
            self.leave_panel(charge=False, by="arbiter")
            self.show(said, Reason.MENU_TIMEOUT)

    # --- the PIN -----------------------------------------------------------------------------

    def pin_dot(self) -> None:
        """A press of the PIN: one more dot (at most 8), never the button."""
        panel = self.panel
        if panel.stage is PanelStage.PIN and panel.dots < MAX_PIN:
            self.s.panel = replace(panel, dots=panel.dots + 1)
            self.show("PIN " + "*" * (panel.dots + 1), Reason.PIN_DOT)

    def pin_entered(self, digest: str) -> None:
        """The entry ended: its digest against the PIN's hash (in constant time)."""
        s, panel = self.s, self.panel
        if panel.stage is not PanelStage.PIN:
            return
        assert s.rules.arbiter_pin is not None
        if s.rules.arbiter_pin.matches(digest):
            self.open_menu()
        else:
            self.fail(Reason.PIN_WRONG, "wrong PIN")

    def open_menu(self) -> None:
        s = self.s
        s.pin_failures = s.lockouts = 0
        s.panel = replace(self.panel, stage=PanelStage.MENU, entered=(), dots=0,
                          item=MenuItem.RESUME, deadline=self.t + MENU_IDLE_NS)
        self.show("arbiter's menu", Reason.ARBITER_MENU)

    def pin_tap(self, button: Button) -> None:
        """A tap of the PIN in a journal written before the PIN was hashed, as it was played
        then: a letter, judged at the PIN's length."""
        s, panel = self.s, self.panel
        assert self.legacy_pin is not None
        pin = pin_buttons(self.legacy_pin)
        entered = panel.entered + (button,)
        if len(entered) < len(pin):
            s.panel = replace(panel, entered=entered)
            self.show("PIN " + "*" * len(entered), Reason.PIN_DOT)
        elif entered == pin:
            self.open_menu()
        else:
            self.fail(Reason.PIN_WRONG, "wrong PIN")

    def fail(self, reason: Reason, why: str, case: str = "") -> None:
        """A failed attempt: journaled, play resumes charged from the chord, and the third in a
        row locks the chord."""
        s = self.s
        s.pin_failures += 1
        if s.pin_failures >= FAILURES_TO_LOCK:
            s.pin_failures = 0
            if self.legacy_pin is not None:
                lock = LOCKOUT_NS
            else:
                lock = lockout_ns(s.lockouts)
                s.lockouts += 1
            s.chord_locked_until = self.t + lock
            why += f"; the chord is locked for {format_clock(lock)}"
            facts: dict[str, str | int] = {"locked": format_clock(lock)}
        else:
            why += f" ({s.pin_failures} of {FAILURES_TO_LOCK} before a lockout)"
            facts = {"failures": s.pin_failures, "of": FAILURES_TO_LOCK}
        if case:
            facts["case"] = case
        self.refuse("the arbiter's PIN", reason, why, **facts)
        self.leave_panel(charge=True, by="arbiter's PIN failed")

    # --- the menu ----------------------------------------------------------------------------

    def menu_tap(self, button: Button) -> None:
        panel = self.panel
        if panel.stage is PanelStage.MENU:
            if button is Button.CUBE:
                self.choose(panel.item)
                return
            step = -1 if button is Button.LEFT else 1
            items = menu_items(self.s)
            item = items[(items.index(panel.item) + step) % len(items)]
            self.to(PanelStage.MENU, item=item)
        elif panel.stage is PanelStage.INFO:
            self.to(PanelStage.MENU)
        elif panel.stage is PanelStage.EDIT:
            self.edit(button)
        elif button is Button.CUBE:                       # CONFIRM: yes
            self.apply(panel.item)
        else:                                             # CONFIRM: no, back a step
            self.to(PanelStage.EDIT if panel.item in EDITED else PanelStage.MENU)

    def to(self, stage: PanelStage, **changes: object) -> None:
        self.s.panel = replace(self.panel, stage=stage, **changes)  # type: ignore[arg-type]
        self.show(f"arbiter's menu: {self.panel.stage.value} {self.panel.item.value}",
                  Reason.ARBITER_MENU)

    def choose(self, item: MenuItem) -> None:
        s = self.s
        if item is MenuItem.RESUME:
            self.command(cmd.Resume())
        elif item in ADJUSTED:
            self.to(PanelStage.EDIT, delta_ns=0)
        elif item is MenuItem.SCORE:
            self.to(PanelStage.EDIT, score=s.score, score_side=Side.LEFT)
        elif item is MenuItem.CUBE:
            self.to(PanelStage.EDIT, cube_value=s.cube_value, cube_owner=s.cube_owner)
        elif item is MenuItem.INFO:
            self.to(PanelStage.INFO)
        else:                      # undo, end the break, the next match: asked at once
            self.to(PanelStage.CONFIRM)

    def edit(self, button: Button) -> None:
        s, panel = self.s, self.panel
        item = panel.item
        if item in ADJUSTED:
            if button is Button.CUBE:
                self.set_or_back(panel.delta_ns != 0)
                return
            shown = s.reserve_at(ADJUSTED[item])
            step = ADJUST_STEP_NS if button is Button.RIGHT else -ADJUST_STEP_NS
            self.to(PanelStage.EDIT, delta_ns=max(-shown, panel.delta_ns + step))
        elif item is MenuItem.SCORE:
            assert panel.score is not None
            if button is Button.CUBE:
                if panel.score_side is Side.LEFT:
                    self.to(PanelStage.EDIT, score_side=Side.RIGHT)
                else:
                    self.set_or_back(panel.score != s.score)
                return
            side = panel.score_side
            points = panel.score[side] + (1 if button is Button.RIGHT else -1)
            if Fraction(0) <= points < s.rules.length:
                self.to(PanelStage.EDIT, score=panel.score.with_(side, points))
            else:
                self.to(PanelStage.EDIT)
        else:                                             # the cube
            if button is Button.CUBE:
                self.set_or_back((panel.cube_value, panel.cube_owner)
                                 != (s.cube_value, s.cube_owner))
                return
            here = (panel.cube_value, panel.cube_owner)
            index = CUBE_CHOICES.index(here) if here in CUBE_CHOICES else 0
            index = (index + (1 if button is Button.RIGHT else -1)) % len(CUBE_CHOICES)
            value, owner = CUBE_CHOICES[index]
            self.to(PanelStage.EDIT, cube_value=value, cube_owner=owner)

    def set_or_back(self, changed: bool) -> None:
        """The cube tap on a value: asked before it applies; unchanged, back to the list."""
        self.to(PanelStage.CONFIRM if changed else PanelStage.MENU)

    def apply(self, item: MenuItem) -> None:
        """The confirmed change, as the arbiter command it is (undo and the next match are the
        engine's and the device's: `panel_request`)."""
        panel = self.panel
        if item in ADJUSTED:
            self.command(cmd.Adjust(ADJUSTED[item], panel.delta_ns))
        elif item is MenuItem.SCORE:
            assert panel.score is not None
            self.command(cmd.SetScore(panel.score.left, panel.score.right))
        elif item is MenuItem.CUBE:
            self.command(cmd.SetCube(panel.cube_value, panel.cube_owner))
        elif item is MenuItem.END_BREAK:
            self.command(cmd.EndBreak())
        elif item is MenuItem.MOVED:
            self.command(cmd.Moved())
            if self.s.end_reason is EndReason.MOVED:
                # Nothing is left to do here: the panels say where the match is now.
                self.leave_panel(charge=False, by="arbiter")
                return
        if self.s.phase is Phase.ARBITER:
            self.to(PanelStage.MENU)       # a refusal stays with it (`command`)

    # --- a USB stick's offer (SPEC §13.5) ----------------------------------------------------

    def stick_offered(self, offer: StickOffer | None) -> None:
        """The device offers a stick's continuation here (or none any more). Never while a
        game of this match is in progress: the device refuses the stick then, and a replay of
        such an input changes nothing. An arbiter looking at the old offer in the menu is
        taken back to the list, so that no confirmation carries over to another offer."""
        s = self.s
        if offer is not None and s.in_progress:
            self.refuse("the USB stick's offer", Reason.MATCH_IN_PROGRESS,
                        "a match is in progress here")
            return
        s.stick_offer = offer
        self._leave_offer_item()
        self.show("USB stick: no offer" if offer is None
                  else f"USB stick offers {offer.describe()}", Reason.STICK_OFFERED)

    def provision_offered(self, offer: ProvisionOffer | None) -> None:
        """The device offers a provisioning stick's table and hall here (or none any more,
        issue 32). Never while a game is in progress: the device refuses the stick then, and a
        replay of such an input changes nothing. An arbiter looking at the old offer is taken
        back to the list."""
        s = self.s
        if offer is not None and s.in_progress:
            self.refuse("the provisioning stick's offer", Reason.MATCH_IN_PROGRESS,
                        "a match is in progress here")
            return
        s.provision_offer = offer
        self._leave_item(MenuItem.PROVISION_STICK, offers_provision(s))
        self.show("provisioning stick: no offer" if offer is None
                  else f"USB stick offers {offer.describe()}", Reason.PROVISION_OFFERED)

    def stick_offer_ends(self) -> None:
        """A game of this match started (or counts as played): the stick's offer ends."""
        self.s.stick_offer = None
        self._leave_offer_item()
        self.show("USB stick's offer ended: a game started here", Reason.STICK_OFFER_ENDED)

    # --- a match continued on this clock (SPEC §13.5, §14.1) ---------------------------------

    def handed_over(self, pin: PinCheck | None, chord_ns: int) -> None:
        """From here on the arbiter at these panels is this clock's: its PIN and its chord. The
        old clock's arbiter is not at these panels: an arbiter's mode still open there closes
        as an outage closes it (the continuing clock's `Recover` follows at the same instant),
        and what the old clock offered from its stick is not offered here. The PIN's failures
        and lockouts start afresh: they counted attempts at the old clock's PIN, and this
        clock's arbiter has failed nothing (docs/decisions.md)."""
        s = self.s
        if s.phase is Phase.ARBITER and s.panel is not None:
            self.outage()
        s.rules = s.rules.handed_over_to(pin, chord_ns)
        s.pin_failures = s.lockouts = 0
        s.chord_locked_until = None
        s.stick_offer = s.provision_offer = None
        self.out.append(Shown(self.t, "the arbiter at these panels is this clock's: "
                              + ("its PIN" if pin is not None
                                 else "no PIN, the chord means nothing here"),
                              Reason.ARBITER_HANDED_OVER,
                              (("pin", "set" if pin is not None else "none"),)))

    def _leave_offer_item(self) -> None:
        self._leave_item(MenuItem.CONTINUE_STICK, offers_stick(self.s))

    def _leave_item(self, item: MenuItem, still_listed: bool) -> None:
        """An arbiter looking at an offer's `item` (listed, or asked to confirm) is taken back
        to the list: to it when it is `still_listed` (another offer), else to resume."""
        panel = self.s.panel
        if self.s.phase is Phase.ARBITER and panel is not None and panel.item is item \
                and panel.stage in (PanelStage.MENU, PanelStage.CONFIRM):
            self.s.panel = replace(panel, stage=PanelStage.MENU,
                                   item=item if still_listed else MenuItem.RESUME)

    def command(self, command: cmd.Command) -> None:
        """`command` as the arbiter at the panels gave it; a refusal stays on the panels (the
        players' notices leave an arbiter's refusals to the arbiter) until the next press."""
        said = len(self.out)
        Arbiter(self.s, self.out).command(command, source="panel")
        refusal = next((e for e in self.out[said:] if isinstance(e, Refused)), None)
        if refusal is not None and self.s.panel is not None:
            self.s.panel = replace(self.s.panel, refused=refusal.reason)

"""What turns the match into light and sound: the two panels and the buzzer.

Both are `service.Presenter`s: the loop calls `present(engine, t, effects)` after every step and
again at the instant each asks for (the next digit change, the end of a notice, the next burn-in
move, the moment the running reserve reaches the low-time warning). Nothing here polls.
"""

from __future__ import annotations

from collections.abc import Callable

from gammonclock.core.effects import Effect, FlagFell
from gammonclock.core.engine import Engine
from gammonclock.core.match_state import Phase
from gammonclock.sides import Pair, Side

from .bus_writer import BusWriter
from .buzzer import Buzzer
from .compose import Picture
from .notices import opening_dice
from .panels import Panel, next_shift_at, shift_at
from .redraw import settled
from .screens import PanelView, idle_view, in_language, notice_for, panel_view
from .views import SideClocks, TableInfo

NOTICE_NS = 3_000_000_000       # a notice (a refusal, a hint) stays this long
IDLE_REDRAW_NS = 10_000_000_000  # the idle screen looks again for the network address
SIDES = tuple(Side)             # `present` loops over these (the enum's own iterator: 4 calls)


def _show(panel: Panel, picture: Picture, t: int) -> None:
    """`picture` on `panel`: composed for a `Panel`, drawn for a stand-in that takes images."""
    if isinstance(panel, Panel):
        panel.show_picture(picture, t)
    else:
        panel.show(picture.image(), t)


def _earliest(*instants: int | None) -> int | None:
    present = [t for t in instants if t is not None]
    return min(present) if present else None


class PanelPresenter:
    """Both panels: each shows the match as its player faces it."""

    def __init__(self, panels: Pair[Panel], alert: Callable[[], str | None] | None = None,
                 language: Callable[[], str] | None = None,
                 info: Callable[[], TableInfo] | None = None) -> None:
        self.panels = panels
        self.info = info                    # the table as the arbiter's menu shows it
        self.alert = alert                  # a standing problem to show (the journal failing)
        self.language = language or (lambda: "en")   # the panels' language (SPEC §15)
        self.notice: str | None = None
        self.notice_until = 0
        self._drawn: dict[Side, tuple[PanelView, Picture]] = {}
        # The view each panel shows and its language (the terminal simulator's text of it): both
        # replaced in one assignment once both are worked out, so that a reader on another
        # thread (`shown_both`) never takes one panel's new view beside the other's old one.
        self._shown: dict[Side, tuple[PanelView, str]] = {}
        self.opening: tuple[int, ...] = ()   # the reader's opening roll (the state keeps no such)

    def present(self, engine: Engine, t: int, effects: list[Effect]) -> int | None:
        for effect in effects:
            text = notice_for(effect)
            if text is not None:
                self.notice, self.notice_until = text, t + NOTICE_NS
        notice = self.notice if t < self.notice_until else None
        self.opening = opening_dice(self.opening, effects)
        alert = self.alert() if self.alert else None
        if alert:
            notice = alert
        state = engine.match
        info = self.info() if self.info is not None and state.phase is Phase.ARBITER else None
        changes: list[int | None] = []
        lang = self.language()
        pictures: list[Picture] = []
        shown_now: dict[Side, tuple[PanelView, str]] = {}
        # Both sides' clocks by the instant shown: worked out once for both panels.
        clocks: dict[int, SideClocks] = {}
        for side in SIDES:
            # A picture that would stand for a nanosecond (the delay at a press) is skipped: the
            # frame shows what follows, and the next redraw is the next real change.
            shown, change = settled(state, side, t)
            changes.append(change)
            at = clocks.get(shown)
            if at is None:
                at = clocks[shown] = SideClocks(state, shown, self.opening)
            view = panel_view(state, side, shown, notice, lang, self.opening, info, at)
            drawn = self._drawn.get(side)
            picture = drawn[1] if drawn and drawn[0] == view else Picture(view)
            if isinstance(self.panels[side], Panel):
                picture.pages_at(shift_at(t))    # composed before either frame is handed over
            pictures.append(picture)
            self._drawn[side] = (view, picture)
            shown_now[side] = (view, lang)
        self._shown = shown_now
        # Both frames handed over back to back: the bus writer takes them while this thread is
        # done with the press (not competing with it for the GIL while the second is composed).
        for side, picture in zip(SIDES, pictures, strict=True):
            _show(self.panels[side], picture, t)
        return _earliest(*changes, next_shift_at(t),
                         self.notice_until if notice and not alert else None)

    def show_message(self, view: PanelView, t: int = 0) -> None:
        """A fixed screen on both panels (a config error, a match loaded)."""
        lang = self.language()
        self._show_both(in_language(view, lang), lang, t)

    def present_idle(self, idle: dict[str, object], t: int) -> int | None:
        """No match loaded: the table, the event, the address, "waiting for the next match"."""
        addresses = idle.get("addresses")
        lang = self.language()
        self._show_both(idle_view(str(idle.get("table", "")), str(idle.get("event", "")),
                                  [str(a) for a in addresses]
                                  if isinstance(addresses, list) else [], lang), lang, t)
        return t + IDLE_REDRAW_NS

    def notify(self, text: str, t: int) -> None:
        """A notice on the bottom line for a while (the clock stays in view)."""
        self.notice, self.notice_until = text, t + NOTICE_NS

    def _show_both(self, view: PanelView, lang: str, t: int) -> None:
        picture = Picture(view)
        self._shown = dict.fromkeys(Side, (view, lang))
        for side in Side:
            self._drawn.pop(side, None)
            _show(self.panels[side], picture, t)

    def shown(self, side: Side) -> tuple[PanelView, str] | None:
        """The view the panel facing `side` was last given, and the language it is in (None
        before the first): what the terminal simulator writes as text."""
        return self._shown.get(side)

    def shown_both(self) -> tuple[tuple[PanelView, str] | None, tuple[PanelView, str] | None]:
        """`shown` of the left and the right panel, both from one `present` (the terminal
        simulator reads them on its own thread while the loop presents)."""
        shown = self._shown               # one read: `present` replaces the dict whole
        return shown.get(Side.LEFT), shown.get(Side.RIGHT)

    def hold(self) -> bool:
        """Hold both panels' frames in their bus writers until `release` (the loop renders
        beside the journal's sync); False, holding nothing, when a panel draws without a
        writer (its frames are then drawn after the sync)."""
        writers = self._writers()
        if writers is None:
            return False
        for writer in writers:
            writer.hold()
        return True

    def release(self) -> None:
        """The journal holds what the held frames show: let them go to the glass."""
        for writer in self._writers() or []:
            writer.release()

    def _writers(self) -> list[BusWriter] | None:
        writers: list[BusWriter] = []
        for side in Side:
            # The panel's own bus writer (None: it draws inside `show`; a stand-in panel).
            writer = getattr(self.panels[side], "_writer", None)
            if not isinstance(writer, BusWriter):
                return None
            if writer not in writers:
                writers.append(writer)
        return writers

    def flush(self, timeout: float = 1.0) -> bool:
        """Wait until both panels' frames are on the glass (panels drawn by a bus writer);
        whether both are."""
        return all([self.panels[side].flush(timeout) for side in Side])

    def close(self) -> None:
        """Both panels: their last frames written (bounded), their pictures left on the glass."""
        for side in Side:
            self.panels[side].close()


class BuzzerPresenter:
    """A short tone when the running reserve drops to the low-time mark, and at a flag."""

    def __init__(self, buzzer: Buzzer, low_time_ns: int) -> None:
        self.buzzer = buzzer
        self.low_time_ns = low_time_ns
        self._warned: tuple[Side, int] | None = None   # the turn already warned

    def present(self, engine: Engine, t: int, effects: list[Effect]) -> int | None:
        if any(isinstance(e, FlagFell) for e in effects):
            self.buzzer.flag()
        turn = engine.match.turn
        flag_at = turn.flag_at() if turn is not None else None
        if turn is None or flag_at is None:
            return None
        warn_at = flag_at - self.low_time_ns
        this_turn = (turn.side, turn.started_at)
        if t < warn_at:
            return warn_at
        if self._warned != this_turn and t < flag_at:
            self._warned = this_turn
            self.buzzer.low_time()
        return None

    def close(self) -> None:
        self.buzzer.close()

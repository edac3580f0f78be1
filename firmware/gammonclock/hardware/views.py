"""What each panel shows, as a value (pure: no PIL, no device, no clock reads).

Each of the two panels faces one player: their own reserve large, the opponent's below, the names,
the score and the match length, the cube, whose turn it is, and a screen for every phase (SPEC §3).
`panel_view` turns the match state at an instant into a `PanelView` — exactly what one panel shows,
as a value the service can compare; `drawing.render` draws it. The panel's geometry is here because
the view fits its text to it (the config error, the notices) and the drawing draws within it.

Every text is said in the panel's language (`lang`, SPEC §15; the words are in `texts.py`);
names are shown as written. Shown times round down: a player never sees more time than they have.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import MISSING, dataclass, field, fields, replace
from enum import Enum
from functools import lru_cache
from typing import TypedDict

from gammonclock.config.problems import said
from gammonclock.core.arbiter_mode import abandons_match
from gammonclock.core.match import MatchState, Phase
from gammonclock.core.match_state import MenuItem, PanelMode, PanelStage
from gammonclock.core.reasons import Reason
from gammonclock.core.rules import EndReason, Family, GameResult, ResultKind, format_score
from gammonclock.core.timecontrol import TimeControl, TimeMode, Turn
from gammonclock.durations import NS_PER_S, format_seconds
from gammonclock.sides import Side

from . import glyphs
from .glyphs import TINY
from .texts import DEFAULT, TEXTS, Text, localized, say, say_lines
from .texts import length as length_words
from .texts import points as points_words

WIDTH, HEIGHT = 128, 64
MARGIN = 2                      # blank on every side: `panels.py` shifts the picture within it
INNER_W, INNER_H = WIDTH - 2 * MARGIN, HEIGHT - 2 * MARGIN

TENTHS_BELOW_NS = 20 * NS_PER_S  # below 20 s a reserve shows tenths
TENTH_NS = NS_PER_S // 10

# `notice_for`'s answer to the cube tap between games: `panel_view` expands it into the info
# page from the state (the engine's text of it is too long for a panel, and side-neutral).
INFO_PAGE = "info page"


# --- the view --------------------------------------------------------------------------------

class Layout(str, Enum):
    CLOCK = "clock"          # own reserve large; the opponent's line (or two status lines) below
    MESSAGE = "message"      # a title band, two lines and a footer: result entry, pause, the end
    COUNTDOWN = "countdown"  # a title band over large digits: a break
    TEXT = "text"            # a title band over small print: a bad config
    MENU = "menu"            # MESSAGE with a small-print footer: the arbiter's PIN and menu


@dataclass(frozen=True)
class Clock:
    """One side's clock as a panel shows it."""

    reserve: str           # M:SS; tenths below 20 s; H:MM:SS from an hour
    running: bool = False  # the turn marker
    delay: str = ""        # the running delay, whole seconds (empty when none runs)
    cube: str = ""         # the cube's value when this side owns it
    name: str = ""         # with the opponent's clock (the header names the facing player)
    dice: tuple[int, ...] = ()   # this side's roll of its running turn (a dice reader's)


@dataclass(frozen=True)
class PanelView:
    """Exactly what one panel shows; equal views render to equal images."""

    layout: Layout
    header: str = ""                          # top row, left: the facing player's name
    header_right: str = ""                    # top row, right: score and length (CRAWFORD)
    own: Clock | None = None                  # CLOCK: large
    opponent: Clock | None = None             # CLOCK: the line below
    status: tuple[str, ...] = ()              # CLOCK: small print below (with a small opponent)
    title: str = ""                           # the inverted band of the other layouts
    big: str = ""                             # COUNTDOWN: the large digits
    lines: tuple[tuple[str, str], ...] = ()   # MESSAGE: (left, right); TEXT: small print
    footer: str = ""                          # MESSAGE: how to go on
    opening: tuple[tuple[str, int], ...] = ()  # CLOCK: the opening dice, each with whose it is
    notice: str | None = None                 # a transient text over the bottom of the screen
    # A fixed screen made elsewhere (a match loaded, a config refused) made again in another
    # language: `in_language`. Not part of what is shown, so not compared.
    remake: Callable[[str], PanelView] | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True)
class TableInfo:
    """What the arbiter's menu shows of the table that the match does not know (SPEC §13.4):
    the presenter gives it."""

    table: str = ""
    addresses: tuple[str, ...] = ()
    version: str = ""
    journal: str = ""


# --- shown times (round down) ----------------------------------------------------------------

def format_reserve(ns: int, tenths: bool = True) -> str:
    """A reserve as shown: `H:MM:SS` from an hour, `M:SS` from 20 s, `S.t` below (`M:SS` still
    without `tenths`); rounded down."""
    ns = max(0, ns)
    if ns < TENTHS_BELOW_NS and tenths:
        seconds, tenth = divmod(ns // TENTH_NS, 10)
        return f"{seconds}.{tenth}"
    minutes, seconds = divmod(ns // NS_PER_S, 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}:{minutes:02d}:{seconds:02d}" if hours else f"{minutes}:{seconds:02d}"


def format_countdown(ns: int) -> str:
    """A break's time left, `M:SS`, rounded down."""
    minutes, seconds = divmod(max(0, ns) // NS_PER_S, 60)
    return f"{minutes}:{seconds:02d}"


def _delay_text(turn: Turn, t: int) -> str:
    if not turn.running:
        return ""
    left = turn.delay_left_at(t)
    return str(left // NS_PER_S) if left > 0 else ""


# --- the dice (SPEC §8, §15) -------------------------------------------------------------------

def _running_roll(state: MatchState, side: Side, opening: tuple[int, ...]) -> tuple[int, ...]:
    """The dice `side` rolled in its running turn: the reader's counted roll of this turn; in
    the first turn of a backgammon-family game, the opening roll it plays (both dice)."""
    turn = state.turn
    if turn is None or turn.side is not side or not turn.running:
        return ()
    if state.last_roll is not None and state.last_roll.counted:
        return state.last_roll.dice
    plays_opening = (state.phase is Phase.RUNNING and state.turn_number == 1
                     and state.rules.family is not Family.LONGGAMMON)
    return opening if plays_opening and len(opening) == 2 else ()


def _white(state: MatchState) -> Side | None:
    """The side playing white in the game in progress or the next one, where the clock knows
    it (longgammon after its first game); None where it does not (backgammon)."""
    return state.white if state.white is not None else state.must_start


def _opening_labels(state: MatchState, facing: Side, opening: tuple[int, ...],
                    lang: str) -> tuple[tuple[str, int], ...]:
    """The opening dice as shown between games: the first is white's, the second black's (SPEC
    §8), each with the name of its player when the clock knows who plays white, else the
    colour."""
    if state.phase is not Phase.BETWEEN_GAMES or not opening:
        return ()
    white = _white(state)
    if white is None:
        owners = (say("dice.white", lang), say("dice.black", lang))
    else:
        owners = (state.rules.names[white], state.rules.names[white.other])
    return tuple(zip(owners, opening[:2], strict=False))


# --- which clocks a screen shows (shared by panel_view and redraw.next_change_at) ------------

def shown_sides(state: MatchState, facing: Side) -> tuple[Side, ...]:
    """The sides whose reserve (with its running delay) the clock layout shows on this panel."""
    phase = state.phase
    if phase in (Phase.RUNNING, Phase.BETWEEN_GAMES):
        return _BOTH[facing]
    if phase is Phase.CUBE_OFFERED:
        # The taker's panel gives the opponent's line to the question; the doubler watches both.
        assert state.offer is not None
        return (facing,) if facing is not state.offer.doubler else (facing, facing.other)
    if phase is Phase.BREAK and state.brk is not None and state.brk.overrun:
        return _BOTH[facing]
    return ()       # the other phases have screens of their own, with no running clock


_BOTH = {side: (side, side.other) for side in Side}     # the facing side first


_ClockFacts = tuple[str, str, bool, str, str, tuple[int, ...]]   # see `SideClocks._read`


class SideClocks:
    """Each side's clock at instant `t` as the clock screens show it. A side's reserve, running
    delay, cube and roll are the same on both panels (large on its player's own, on the line
    below on the other's: only the tenths and the name differ), so the presenter works them
    out once a press and hands them to both panels' `panel_view` (issue 20: a press's CPU)."""

    __slots__ = ("_facts", "opening", "state", "t")

    def __init__(self, state: MatchState, t: int, opening: tuple[int, ...] = ()) -> None:
        self.state, self.t, self.opening = state, t, opening
        self._facts: dict[Side, _ClockFacts] = {}

    def serves(self, state: MatchState, t: int, opening: tuple[int, ...]) -> bool:
        """Whether these are the clocks of `state` at `t` (with this opening roll)."""
        return self.state is state and self.t == t and self.opening == opening

    def clock(self, side: Side, named: bool) -> Clock:
        """`side`'s clock: large on its own panel (in tenths below 20 s), or `named` on the
        line below on the other panel (whole seconds: a panel facing a waiting player is not
        redrawn ten times a second, bus time, benchmarks/bench_bus.py)."""
        facts = self._facts.get(side)
        if facts is None:
            facts = self._facts[side] = self._read(side)
        tenths, seconds, running, delay, cube, dice = facts
        return _new_clock(seconds if named else tenths, running, delay, cube,
                          self.state.rules.names[side] if named else "", dice)

    def _read(self, side: Side) -> _ClockFacts:
        """The reserve as shown in tenths and in seconds (one text from 20 s), whether it
        runs, its delay, the cube, the roll."""
        state, t = self.state, self.t
        turn = state.turn if state.turn is not None and state.turn.side is side else None
        reserve = state.reserve_at(side, t)
        seconds = format_reserve(reserve, tenths=False)
        tenths = format_reserve(reserve) if reserve < TENTHS_BELOW_NS else seconds
        return (tenths, seconds, turn is not None and turn.running,
                _delay_text(turn, t) if turn is not None else "",
                str(state.cube_value) if state.cube_owner is side else "",
                _running_roll(state, side, self.opening))


def _new_clock(reserve: str, running: bool, delay: str, cube: str, name: str,
               dice: tuple[int, ...]) -> Clock:
    """`Clock(...)` without a frozen dataclass's `__init__` (a `setattr` a field): four clocks
    are made at every press, as `_clock_view` makes views."""
    clock = object.__new__(Clock)
    clock.__dict__.update(reserve=reserve, running=running, delay=delay, cube=cube, name=name,
                          dice=dice)
    return clock


def _time_control_words(tc: TimeControl, lang: str) -> str:
    """The time control in a few characters, for the ready screen: "12s delay"."""
    if tc.mode is TimeMode.NONE or tc.delay_ns == 0:
        return say("tc.none", lang)
    key = {TimeMode.DELAY: "tc.delay", TimeMode.BRONSTEIN: "tc.bronstein",
           TimeMode.FISCHER: "tc.fischer"}[tc.mode]
    return say(key, lang, s=format_seconds(tc.delay_ns))


# --- panel_view ------------------------------------------------------------------------------

def panel_view(state: MatchState, facing: Side, t: int, notice: str | None = None,
               lang: str = DEFAULT, opening: tuple[int, ...] = (),
               info: TableInfo | None = None, clocks: SideClocks | None = None) -> PanelView:
    """What the panel facing `facing` shows at `t` (the state brought to `t` or just before), in
    the language `lang`.

    `notice` is a transient text (from `notice_for`) laid over the bottom of the screen, said in
    `lang` if it is one of the panels' own; the service decides how long it stays. `opening` is
    the dice reader's opening roll of the next or current game, in the order read (white's die
    first: `notices.opening_dice` gathers it from the effects, since the state keeps only the
    last message); the running player's roll is the state's. `info` is what the arbiter's menu
    shows of the table (both panels show the arbiter's mode alike). `clocks`: both sides' clocks
    at `t`, worked out once for both panels (`SideClocks`; made here when not given or not of
    this state, instant and opening roll).
    """
    if state.phase is Phase.ARBITER:
        view = arbiter_view(state, t, lang, info or TableInfo())
        return replace(view, notice=localized(notice, lang)) if notice else view
    if notice == INFO_PAGE:
        if state.phase is Phase.BETWEEN_GAMES:
            return _info_view(state, facing, t, lang)
        notice = None          # the info page belongs between games; it lapses when play starts
    if clocks is None or not clocks.serves(state, t, opening):
        clocks = SideClocks(state, t, opening)
    view = _phase_view(state, facing, t, lang, opening, clocks)
    return replace(view, notice=localized(notice, lang)) if notice else view


class _Header(TypedDict):
    header: str
    header_right: str


def _header(state: MatchState, facing: Side, lang: str) -> _Header:
    return {"header": state.rules.names[facing],
            "header_right": _score_words(format_score(state.score[facing]),
                                         format_score(state.score[facing.other]),
                                         state.crawford_game, state.rules.length, lang)}


@lru_cache(maxsize=256)
def _score_words(own: str, opp: str, crawford: bool, length: int, lang: str) -> str:
    """The header's score, said once per score (every frame of a game shows the same)."""
    return say("header.crawford" if crawford else "header.score", lang,
               own=own, opp=opp, length=length)


def _phase_view(state: MatchState, facing: Side, t: int, lang: str,
                opening: tuple[int, ...], clocks: SideClocks) -> PanelView:
    phase, names, other = state.phase, state.rules.names, facing.other
    head = _header(state, facing, lang)

    if phase is Phase.RESULT_ENTRY:
        return _result_view(state, facing, head, lang)
    if phase is Phase.MATCH_OVER:
        return _match_over_view(state, facing, head, lang)
    if phase is Phase.PAUSED:
        return PanelView(Layout.MESSAGE, **head, title=say("pause.title", lang),
                         lines=_reserve_lines(state, facing, t),
                         footer=say("pause.how", lang))
    if phase is Phase.BREAK and state.brk is not None and not state.brk.overrun:
        asker = state.brk.side
        title = (say("break.yours", lang) if asker is facing
                 else say("break.theirs", lang, name=names[asker]))
        return PanelView(Layout.COUNTDOWN, **head, title=title,
                         big=format_countdown(state.brk.ends_at - t))

    shown = shown_sides(state, facing)
    own = clocks.clock(facing, named=False)
    opponent = clocks.clock(other, named=True) if other in shown else None
    status: tuple[str, ...] = ()
    if phase is Phase.BETWEEN_GAMES:
        white_starts = state.must_start is facing
        # Ready (SPEC §13.2): before the first game the time control is on the panels too.
        first = (_time_control_words(state.rules.time, lang) if state.match_started_at is None
                 else say("ready.game", lang, n=state.game))
        status = (say("ready.white" if white_starts else "ready.tap", lang, first=first),)
    elif phase is Phase.CUBE_OFFERED:
        assert state.offer is not None
        value = 2 * state.offer.value
        if state.offer.doubler is facing:
            status = (say("cube.you_double", lang, value=value),)
        else:
            status = (say("cube.doubles", lang, name=names[other], value=value),
                      say("cube.how", lang))
    elif phase is Phase.BREAK:       # the break is over and its taker is late: their time runs
        assert state.brk is not None
        late = state.brk.side
        status = (say("break.over", lang) if late is facing
                  else say("break.late", lang, name=names[late]),)
    return _clock_view(head, own, opponent, status, _opening_labels(state, facing, opening, lang))


# Every field's default: `_clock_view` starts from them.
_DEFAULTS = {f.name: f.default for f in fields(PanelView) if f.default is not MISSING}


def _clock_view(head: _Header, own: Clock, opponent: Clock | None, status: tuple[str, ...],
                opening: tuple[tuple[str, int], ...]) -> PanelView:
    """`PanelView(Layout.CLOCK, **head, own=..., ...)` without a frozen dataclass's `__init__`
    (a `setattr` a field, fourteen of them): each panel's view is made at every press and every
    change of the digits."""
    view = object.__new__(PanelView)
    view.__dict__.update(_DEFAULTS, layout=Layout.CLOCK, **head, own=own, opponent=opponent,
                         status=status, opening=opening)
    return view


def _reserve_lines(state: MatchState, facing: Side, t: int) -> tuple[tuple[str, str], ...]:
    names = state.rules.names
    return tuple((names[s], format_reserve(state.reserve_at(s, t)))
                 for s in (facing, facing.other))


def _info_view(state: MatchState, facing: Side, t: int, lang: str) -> PanelView:
    left = state.breaks_left
    return PanelView(Layout.MESSAGE, **_header(state, facing, lang),
                     title=say("info.title", lang, n=state.game),
                     lines=_reserve_lines(state, facing, t),
                     footer=say("info.breaks", lang, a=left[facing], b=left[facing.other]))


_KINDS = {kind: f"kind.{kind.value}" for kind in ResultKind}


def _result_words(result: GameResult, state: MatchState, lang: str
                  ) -> tuple[tuple[str, str], ...]:
    points = points_words(result.points, lang)
    if result.winner is None:
        return say_lines("result.draw", lang, points=points)
    return say_lines("result.win", lang, name=state.rules.names[result.winner],
                     kind=say(_KINDS[result.kind], lang), points=points)


def _result_view(state: MatchState, facing: Side, head: _Header, lang: str) -> PanelView:
    entry = state.entry
    assert entry is not None
    how = say("result.how_holder" if entry.holder is facing else "result.how_other", lang)
    return PanelView(Layout.MESSAGE, **head, title=say("result.title", lang),
                     lines=_result_words(entry.proposal, state, lang), footer=how)


def _match_over_view(state: MatchState, facing: Side, head: _Header, lang: str) -> PanelView:
    names, score, winner = state.rules.names, state.score, state.winner
    if state.end_reason is EndReason.MOVED:
        # Never resumed here (SPEC §13.5): where it went, the score it went at, no clock.
        where = (say("over.moved_to", lang, table=state.moved_to) if state.moved_to is not None
                 else say("over.moved_away", lang))
        if state.moved_to is not None and len(where) > glyphs.SMALL.chars(INNER_W):
            where = state.moved_to      # a long table id: the table is what must be read
        at = f"{format_score(score[facing])}-{format_score(score[facing.other])}"  # as the header
        return PanelView(Layout.MESSAGE, **head, title=say("over.moved", lang),
                         lines=((where, ""), (say("over.score", lang), at)),
                         footer=say("over.moved_how", lang))
    if state.end_reason is EndReason.ABANDONED:
        return PanelView(Layout.MESSAGE, **head, title=say("over.abandoned", lang),
                         lines=((say("over.score", lang), f"{format_score(score.left)}-"
                                                          f"{format_score(score.right)}"),
                                (say("over.by_arbiter", lang), "")))
    if winner is None:
        first = (say("over.tie", lang), f"{format_score(score.left)}-{format_score(score.right)}")
    else:
        first = (say("result.wins", lang, name=names[winner]),
                 f"{format_score(score[winner])}-{format_score(score[winner.other])}")
    loser = winner.other if winner is not None else None
    reason = state.end_reason
    if reason is EndReason.FLAG and state.flag is not None:
        return PanelView(Layout.MESSAGE, **head, title=say("over.flag", lang),
                         lines=((say("over.time_up", lang, name=names[state.flag]),
                                 format_reserve(state.reserve_at(state.flag))), first))
    if reason is EndReason.DISQUALIFIED and loser is not None:
        why = say("over.disqualified", lang, name=names[loser])
    elif reason is EndReason.CHALLENGES and loser is not None:
        why = say("over.challenges", lang, name=names[loser])
    else:
        why = say("over.by_score", lang)
    return PanelView(Layout.MESSAGE, **head, title=say("over.title", lang),
                     lines=(first, (why, "")))


# --- the arbiter at the panels (SPEC §13.4) ----------------------------------------------------

_ITEM_TITLES = {item: f"arbiter.item.{item.value}" for item in MenuItem}
_ADJUSTED = {MenuItem.ADJUST_LEFT: Side.LEFT, MenuItem.ADJUST_RIGHT: Side.RIGHT}


def arbiter_view(state: MatchState, t: int, lang: str, info: TableInfo) -> PanelView:
    """The arbiter's mode, the same on both panels: the top row says how to resume from
    anywhere, the title where the arbiter is, the footer what each button does there (L, C, R:
    the letters the PIN is written in)."""
    panel = state.panel
    assert panel is not None
    stage = panel.stage
    menu = stage in (PanelStage.MENU, PanelStage.EDIT, PanelStage.INFO)
    head: _Header = {"header": say("arbiter.header", lang),
                     "header_right": say("arbiter.hold", lang) if menu else ""}
    if stage is PanelStage.HELD:
        return PanelView(Layout.MENU, **head, title=say("arbiter.title", lang),
                         lines=say_lines("arbiter.held", lang))
    if stage is PanelStage.PIN:
        dots = "*" * (panel.dots + len(panel.entered)) or "-"
        return PanelView(Layout.MENU, **head, title=say("arbiter.title.pin", lang),
                         lines=say_lines("arbiter.pin", lang, text=dots),
                         footer=say("arbiter.how.pin", lang))
    if stage is PanelStage.INFO:
        return PanelView(Layout.TEXT, **head, title=say(_ITEM_TITLES[MenuItem.INFO], lang),
                         lines=tuple((line, "") for line in _info_lines(info, lang)))
    item = panel.item
    if stage is PanelStage.MENU:
        lines = _about(state, item, t, lang)
        if panel.refused is not None:
            lines = ((say("arbiter.refused", lang), ""), (_refusal_words(panel.refused, lang), ""))
        return PanelView(Layout.MENU, **head, title=say(_ITEM_TITLES[item], lang), lines=lines,
                         footer=say("arbiter.how.menu", lang))
    lines = _draft(state, panel, t, lang, marked=stage is PanelStage.EDIT)
    if stage is PanelStage.EDIT:
        return PanelView(Layout.MENU, **head, title=say(_ITEM_TITLES[item], lang), lines=lines,
                         footer=say(_edit_how(panel), lang))
    return PanelView(Layout.MENU, **head, title=say("arbiter.title.confirm", lang),
                     lines=lines, footer=say("arbiter.how.confirm", lang))


def _about(state: MatchState, item: MenuItem, t: int, lang: str
           ) -> tuple[tuple[str, str], ...]:
    """The menu's item and what it stands at now."""
    names = state.rules.names
    if item in _ADJUSTED:
        side = _ADJUSTED[item]
        return ((names[side], format_reserve(state.reserve_at(side, t))), ("", ""))
    if item is MenuItem.SCORE:
        return tuple((names[s], format_score(state.score[s])) for s in Side)
    if item is MenuItem.CUBE:
        return ((say("arbiter.cube", lang),
                 _cube_words(state.cube_value, state.cube_owner, state, lang)), ("", ""))
    if item is MenuItem.END_BREAK:
        assert state.panel is not None
        return say_lines("arbiter.about.break" if state.panel.back_to is Phase.BREAK
                         else "arbiter.about.no_break", lang)
    if item is MenuItem.NEXT_MATCH:
        return say_lines("arbiter.about.abandon" if abandons_match(state)
                         else "arbiter.about.next", lang)
    if item is MenuItem.CONTINUE_STICK:
        offer = state.stick_offer
        if offer is None:           # the menu lists the item only with an offer
            return (("", ""), ("", ""))
        return say_lines("arbiter.about.stick", lang, table=offer.table or "?",
                         score=offer.score, left=offer.left, right=offer.right)
    if item is MenuItem.PROVISION_STICK:
        provision = state.provision_offer
        if provision is None:       # the menu lists the item only with an offer
            return (("", ""), ("", ""))
        return say_lines("arbiter.about.provision", lang, table=provision.table,
                         host=provision.host)
    return say_lines(f"arbiter.about.{item.value}", lang)


def _draft(state: MatchState, panel: PanelMode, t: int, lang: str, marked: bool
           ) -> tuple[tuple[str, str], ...]:
    """The change being set (EDIT, `marked`: the score being changed in brackets) or asked
    (CONFIRM)."""
    names, item = state.rules.names, panel.item
    if item in _ADJUSTED:
        side = _ADJUSTED[item]
        new = max(0, state.reserve_at(side, t) + panel.delta_ns)
        sign = "-" if panel.delta_ns < 0 else "+"
        return ((names[side], format_reserve(new)),
                (say("arbiter.change", lang), sign + format_countdown(abs(panel.delta_ns))))
    if item is MenuItem.SCORE:
        assert panel.score is not None
        score = panel.score
        return tuple((names[s], f"[{format_score(score[s])}]"
                      if marked and s is panel.score_side else format_score(score[s]))
                     for s in Side)
    if item is MenuItem.CUBE:
        return ((say("arbiter.cube", lang),
                 _cube_words(panel.cube_value, panel.cube_owner, state, lang)), ("", ""))
    if item is MenuItem.UNDO:
        return say_lines("arbiter.ask.undo", lang)
    if item is MenuItem.END_BREAK:
        return say_lines("arbiter.ask.break", lang)
    if item is MenuItem.CONTINUE_STICK:
        # Whether the match here ends (ready: abandoned, the arbiter's act) or is over.
        offer = state.stick_offer
        return say_lines("arbiter.ask.stick_over" if state.play_phase is Phase.MATCH_OVER
                         else "arbiter.ask.stick", lang,
                         table=(offer.table if offer is not None else "") or "?")
    if item is MenuItem.PROVISION_STICK:
        provision = state.provision_offer
        return say_lines("arbiter.ask.provision", lang,
                         table=provision.table if provision is not None else "?")
    if item is MenuItem.MOVED:
        return say_lines("arbiter.ask.moved", lang)
    return _about(state, item, t, lang)      # the next match: what it does, once more


def _refusal_words(reason: Reason, lang: str) -> str:
    """Why the menu's last change was refused (the arbiter's console has the engine's words;
    the panels say the reasons a change from the menu can meet)."""
    key = f"arbiter.refused.{reason.value}"
    return say(key if key in TEXTS else "arbiter.refused.other", lang)


def _edit_how(panel: PanelMode) -> str:
    if panel.item in _ADJUSTED:
        return "arbiter.how.adjust"
    if panel.item is MenuItem.SCORE:
        return ("arbiter.how.score_left" if panel.score_side is Side.LEFT
                else "arbiter.how.score_right")
    return "arbiter.how.cube"


def _cube_words(value: int, owner: Side | None, state: MatchState, lang: str) -> str:
    if owner is None:
        return f"{value} {say('arbiter.middle', lang)}"
    return f"{value} {state.rules.names[owner]}"


def _info_lines(info: TableInfo, lang: str) -> list[str]:
    unknown = say("arbiter.info.none", lang)
    return [say("arbiter.info.table", lang, table=info.table or unknown),
            say("idle.ip", lang, addresses=", ".join(info.addresses)) if info.addresses
            else say("idle.no_network", lang),
            say("arbiter.info.version", lang, text=info.version or unknown),
            info.journal or unknown]


# --- fixed screens (no match on the panels, or over it for a while) ---------------------------

def in_language(view: PanelView, lang: str) -> PanelView:
    """A fixed screen made elsewhere (in English: `lang` defaults so) said in `lang`."""
    return view.remake(lang) if view.remake is not None else view


def message_view(title: str, lines: list[str], header: str = "gammonclock",
                 lang: str = DEFAULT) -> PanelView:
    """A screen of small print under a title (a match loaded, a stick's exports): up to four
    lines, each wrapped to the panel's width. A title of the panels' own (`texts.TEXTS`, given
    in English) is said in `lang`, and so is a line that is a `texts.Text`; other lines are
    shown as given."""
    width = TINY.chars(INNER_W)
    wrapped = [part for line in lines
               for part in glyphs.wrap(localized(line, lang), width, 4)][:4]
    return PanelView(Layout.TEXT, header=header, title=localized(title, lang),
                     lines=tuple((line, "") for line in wrapped),
                     remake=lambda other: message_view(title, lines, header, other))


def message_fits(lines: Sequence[str], lang: str = DEFAULT) -> bool:
    """Whether `lines` fit a message screen whole in `lang` (four wrapped lines, none cut)."""
    width = TINY.chars(INNER_W)
    wrapped = [part for line in lines for part in glyphs.wrap(localized(line, lang), width, 5)]
    return len(wrapped) <= 4


def idle_view(table: str, event: str, addresses: list[str], lang: str = DEFAULT) -> PanelView:
    """No match loaded (SPEC §13.2): the table, the event, where the device is on the network,
    and that it waits for the next match."""
    lines = [event] if event else []
    lines.append(say("idle.ip", lang, addresses=", ".join(addresses)) if addresses
                 else say("idle.no_network", lang))
    lines.append(say("idle.waiting", lang))
    return replace(message_view(say("idle.title", lang, table=table), lines),
                   remake=lambda other: idle_view(table, event, addresses, other))


def next_match_view(names: tuple[str, str], length: int, reserve: str,
                    lang: str = DEFAULT) -> PanelView:
    """A match loaded (SPEC §13.2): who plays, to how many points, with how much time each
    (`reserve` as shown, e.g. "14:00")."""
    lines = [say("next.match", lang, left=names[0], right=names[1],
                 length=length_words(length, lang)),
             say("next.time", lang, time=reserve)]
    return replace(message_view(say("title.next_match", lang), lines),
                   remake=lambda other: next_match_view(names, length, reserve, other))


def config_error_view(message: str, title: str = "CONFIG ERROR",
                      lang: str = DEFAULT) -> PanelView:
    """The screen for a config the clock refuses (both panels): its first problem, and how many
    more there are. `title` names the kind of problem (a journal it cannot read, too). All is
    said in `lang`: the problem too when it can say itself (a `Text`, a config's `Problem`s, a
    ConfigError's lines as `problems.Told`), the file names, keys and values as written."""
    shown = message.said_in(lang) if isinstance(message, Text) else said(message, lang)
    problems = ([line for line in shown.splitlines() if line.strip()]
                or [say("error.no_details", lang)])
    width = TINY.chars(INNER_W)
    more = len(problems) - 1
    lines = glyphs.wrap(problems[0], width, 3 if more else 4)
    if more:
        lines.append(say("error.more_one", lang) if more == 1
                     else say("error.more", lang, n=more))
    return PanelView(Layout.TEXT, header="gammonclock", title=localized(title, lang),
                     lines=tuple((line, "") for line in lines),
                     remake=lambda other: config_error_view(message, title, other))

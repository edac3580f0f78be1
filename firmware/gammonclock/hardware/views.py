"""What each panel shows, as a value (pure: no PIL, no device, no clock reads).

Each of the two panels faces one player: their own reserve large, the opponent's below, the names,
the score and the match length, the cube, whose turn it is, and a screen for every phase (SPEC §3).
`panel_view` turns the match state at an instant into a `PanelView` — exactly what one panel shows,
as a value the service can compare; `drawing.render` draws it. The panel's geometry is here because
the view fits its text to it (the config error, the notices) and the drawing draws within it.

Shown times round down: a player never sees more time than they have.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from enum import Enum
from fractions import Fraction
from typing import TypedDict

from ..durations import NS_PER_S, format_seconds
from ..match import MatchState, Phase
from ..rules import EndReason, GameResult, ResultKind, format_score
from ..sides import Side
from ..timecontrol import TimeControl, TimeMode, Turn
from . import glyphs
from .glyphs import TINY

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


@dataclass(frozen=True)
class Clock:
    """One side's clock as a panel shows it."""

    reserve: str           # M:SS; tenths below 20 s; H:MM:SS from an hour
    running: bool = False  # the turn marker
    delay: str = ""        # the running delay, whole seconds (empty when none runs)
    cube: str = ""         # the cube's value when this side owns it
    name: str = ""         # with the opponent's clock (the header names the facing player)


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
    notice: str | None = None                 # a transient text over the bottom of the screen


# --- shown times (round down) ----------------------------------------------------------------

def format_reserve(ns: int) -> str:
    """A reserve as shown: `H:MM:SS` from an hour, `M:SS` from 20 s, `S.t` below; rounded down."""
    ns = max(0, ns)
    if ns < TENTHS_BELOW_NS:
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


# --- which clocks a screen shows (shared by panel_view and redraw.next_change_at) ------------

def shown_sides(state: MatchState, facing: Side) -> tuple[Side, ...]:
    """The sides whose reserve (with its running delay) the clock layout shows on this panel."""
    phase = state.phase
    if phase in (Phase.RUNNING, Phase.BETWEEN_GAMES):
        return (facing, facing.other)
    if phase is Phase.CUBE_OFFERED:
        # The taker's panel gives the opponent's line to the question; the doubler watches both.
        assert state.offer is not None
        return (facing,) if facing is not state.offer.doubler else (facing, facing.other)
    if phase is Phase.BREAK and state.brk is not None and state.brk.overrun:
        return (facing, facing.other)
    return ()       # the other phases have screens of their own, with no running clock


def _clock(state: MatchState, side: Side, t: int, named: bool) -> Clock:
    turn = state.turn if state.turn is not None and state.turn.side is side else None
    return Clock(
        reserve=format_reserve(state.reserve_at(side, t)),
        running=turn is not None and turn.running,
        delay=_delay_text(turn, t) if turn is not None else "",
        cube=str(state.cube_value) if state.cube_owner is side else "",
        name=state.rules.names[side] if named else "")


def _time_control_words(tc: TimeControl) -> str:
    """The time control in a few characters, for the ready screen: "12s delay"."""
    if tc.mode is TimeMode.NONE or tc.delay_ns == 0:
        return "no delay"
    seconds = format_seconds(tc.delay_ns)
    return {TimeMode.DELAY: f"{seconds}s delay", TimeMode.BRONSTEIN: f"{seconds}s Bronstein",
            TimeMode.FISCHER: f"+{seconds}s a move"}[tc.mode]


# --- panel_view ------------------------------------------------------------------------------

def panel_view(state: MatchState, facing: Side, t: int, notice: str | None = None) -> PanelView:
    """What the panel facing `facing` shows at `t` (the state brought to `t` or just before).

    `notice` is a transient text (from `notice_for`) laid over the bottom of the screen; the
    service decides how long it stays.
    """
    if notice == INFO_PAGE:
        if state.phase is Phase.BETWEEN_GAMES:
            return _info_view(state, facing, t)
        notice = None          # the info page belongs between games; it lapses when play starts
    view = _phase_view(state, facing, t)
    return replace(view, notice=notice) if notice else view


class _Header(TypedDict):
    header: str
    header_right: str


def _header(state: MatchState, facing: Side) -> _Header:
    own, opp = state.score[facing], state.score[facing.other]
    score = f"{format_score(own)}-{format_score(opp)} to {state.rules.length}"
    if state.crawford_game:
        score = "CRAWFORD " + score
    return {"header": state.rules.names[facing], "header_right": score}


def _phase_view(state: MatchState, facing: Side, t: int) -> PanelView:
    phase, names, other = state.phase, state.rules.names, facing.other
    head = _header(state, facing)

    if phase is Phase.RESULT_ENTRY:
        return _result_view(state, facing, head)
    if phase is Phase.MATCH_OVER:
        return _match_over_view(state, head)
    if phase is Phase.PAUSED:
        return PanelView(Layout.MESSAGE, **head, title="PAUSED",
                         lines=_reserve_lines(state, facing, t), footer="hold cube to resume")
    if phase is Phase.BREAK and state.brk is not None and not state.brk.overrun:
        asker = state.brk.side
        title = "BREAK: tap to end" if asker is facing else f"BREAK: {names[asker]}"
        return PanelView(Layout.COUNTDOWN, **head, title=title,
                         big=format_countdown(state.brk.ends_at - t))

    shown = shown_sides(state, facing)
    own = _clock(state, facing, t, named=False)
    opponent = _clock(state, other, t, named=True) if other in shown else None
    status: tuple[str, ...] = ()
    if phase is Phase.BETWEEN_GAMES:
        white_starts = state.must_start is facing
        how = "you play white" if white_starts else "tap to start"
        # Ready (SPEC §13.2): before the first game the time control is on the panels too.
        first = (_time_control_words(state.rules.time) if state.match_started_at is None
                 else f"game {state.game}")
        status = (f"{first}: {how}",)
    elif phase is Phase.CUBE_OFFERED:
        assert state.offer is not None
        value = 2 * state.offer.value
        if state.offer.doubler is facing:
            status = (f"you double to {value}",)
        else:
            status = (f"{names[other]} doubles to {value}", "tap=take  hold=pass")
    elif phase is Phase.BREAK:       # the break is over and its taker is late: their time runs
        assert state.brk is not None
        late = state.brk.side
        status = ("break over: press clock" if late is facing else f"{names[late]} is late",)
    return PanelView(Layout.CLOCK, **head, own=own, opponent=opponent, status=status)


def _reserve_lines(state: MatchState, facing: Side, t: int) -> tuple[tuple[str, str], ...]:
    names = state.rules.names
    return tuple((names[s], format_reserve(state.reserve_at(s, t)))
                 for s in (facing, facing.other))


def _info_view(state: MatchState, facing: Side, t: int) -> PanelView:
    left = state.breaks_left
    return PanelView(Layout.MESSAGE, **_header(state, facing), title=f"GAME {state.game} NEXT",
                     lines=_reserve_lines(state, facing, t),
                     footer=f"breaks left {left[facing]}-{left[facing.other]}")


def _points(points: Fraction) -> str:
    return f"{format_score(points)} point" + ("" if points == 1 else "s")


def _result_words(result: GameResult, state: MatchState) -> tuple[tuple[str, str], ...]:
    if result.winner is None:
        return (("draw", ""), ("", f"{_points(result.points)} each"))
    kind = "pass" if result.kind is ResultKind.PASS else result.kind.value
    return ((f"{state.rules.names[result.winner]} wins", kind), ("", _points(result.points)))


def _result_view(state: MatchState, facing: Side, head: _Header) -> PanelView:
    entry = state.entry
    assert entry is not None
    how = "cube=next tap=cancel" if entry.holder is facing else "cube=next tap=OK"
    return PanelView(Layout.MESSAGE, **head, title="RESULT?",
                     lines=_result_words(entry.proposal, state), footer=how)


def _match_over_view(state: MatchState, head: _Header) -> PanelView:
    names, score, winner = state.rules.names, state.score, state.winner
    if state.end_reason is EndReason.ABANDONED:
        return PanelView(Layout.MESSAGE, **head, title="ABANDONED",
                         lines=(("score", f"{format_score(score.left)}-"
                                          f"{format_score(score.right)}"),
                                ("by the arbiter", "")))
    if winner is None:
        first = ("tie", f"{format_score(score.left)}-{format_score(score.right)}")
    else:
        first = (f"{names[winner]} wins",
                 f"{format_score(score[winner])}-{format_score(score[winner.other])}")
    loser = winner.other if winner is not None else None
    reason = state.end_reason
    if reason is EndReason.FLAG and state.flag is not None:
        return PanelView(Layout.MESSAGE, **head, title="FLAG",
                         lines=((f"{names[state.flag]}: time up",
                                 format_reserve(state.reserve_at(state.flag))), first))
    if reason is EndReason.DISQUALIFIED and loser is not None:
        why = f"{names[loser]} disqualified"
    elif reason is EndReason.CHALLENGES and loser is not None:
        why = f"{names[loser]}: 3 challenges lost"
    else:
        why = "by score"
    return PanelView(Layout.MESSAGE, **head, title="MATCH OVER", lines=(first, (why, "")))


def message_view(title: str, lines: list[str], header: str = "gammonclock") -> PanelView:
    """A screen of small print under a title (a match loaded, a stick's exports): up to four
    lines, each wrapped to the panel's width."""
    width = TINY.chars(INNER_W)
    wrapped = [part for line in lines for part in glyphs.wrap(line, width, 4)][:4]
    return PanelView(Layout.TEXT, header=header, title=title,
                     lines=tuple((line, "") for line in wrapped))


def idle_view(table: str, event: str, addresses: list[str]) -> PanelView:
    """No match loaded (SPEC §13.2): the table, the event, where the device is on the network,
    and that it waits for the next match."""
    lines = [event] if event else []
    lines.append("IP " + ", ".join(addresses) if addresses else "no network")
    lines.append("waiting for the next match")
    return message_view(f"TABLE {table}", lines)


def config_error_view(message: str, title: str = "CONFIG ERROR") -> PanelView:
    """The screen for a config the clock refuses (both panels): its first problem, and how many
    more there are. `title` names the kind of problem (a journal it cannot read, too)."""
    problems = [line for line in message.splitlines() if line.strip()] or ["(no details)"]
    width = TINY.chars(INNER_W)
    more = len(problems) - 1
    lines = glyphs.wrap(problems[0], width, 3 if more else 4)
    if more:
        lines.append(f"(+{more} more problem{'s' if more > 1 else ''})")
    return PanelView(Layout.TEXT, header="gammonclock", title=title,
                     lines=tuple((line, "") for line in lines))

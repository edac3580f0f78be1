"""What each panel shows, and the picture of it (pure: no device, no clock reads).

Each of the two panels faces one player: their own reserve large, the opponent's below, the names,
the score and the match length, the cube, whose turn it is, and a screen for every phase (SPEC §3).
`panel_view` turns the match state at an instant into a `PanelView` — exactly what one panel shows,
as a value the service can compare — and `render` draws it, in the bundled bitmap font, into a
128×64 1-bit image with a blank margin that `panels.py` shifts the picture within (burn-in).
`next_change_at` says when the digits a panel shows change next, so the service redraws exactly
then and sleeps in between.

Shown times round down: a player never sees more time than they have.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from enum import Enum
from fractions import Fraction
from typing import TypedDict

from PIL import Image, ImageDraw

from ..durations import NS_PER_S
from ..effects import (
    ChallengeDecided,
    CubeSet,
    DiceRolled,
    Effect,
    Ignored,
    OvertimeGiven,
    Recovered,
    Refused,
    ReserveChanged,
    ScoreChanged,
    Shown,
    Undone,
    Warned,
)
from ..match import MatchState, Phase
from ..rules import EndReason, GameResult, ResultKind, format_score
from ..sides import Side
from ..timecontrol import Turn
from . import glyphs
from .glyphs import BIG, MEDIUM, SMALL, TINY, Face

WIDTH, HEIGHT = 128, 64
MARGIN = 2                      # blank on every side: `panels.py` shifts the picture within it
INNER_W, INNER_H = WIDTH - 2 * MARGIN, HEIGHT - 2 * MARGIN

TENTHS_BELOW_NS = 20 * NS_PER_S  # below 20 s a reserve shows tenths
_TENTH_NS = NS_PER_S // 10
_HOUR_NS = 3600 * NS_PER_S

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
        seconds, tenth = divmod(ns // _TENTH_NS, 10)
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


# --- which clocks a screen shows (shared by panel_view and next_change_at) -------------------

def _shown_sides(state: MatchState, facing: Side) -> tuple[Side, ...]:
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

    shown = _shown_sides(state, facing)
    own = _clock(state, facing, t, named=False)
    opponent = _clock(state, other, t, named=True) if other in shown else None
    status: tuple[str, ...] = ()
    if phase is Phase.BETWEEN_GAMES:
        white_starts = state.must_start is facing
        status = (f"game {state.game}: " + ("you play white" if white_starts
                                            else "tap to start"),)
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


def config_error_view(message: str) -> PanelView:
    """The screen for a config the clock refuses (both panels): its first problem, and how many
    more there are."""
    problems = [line for line in message.splitlines() if line.strip()] or ["(no details)"]
    width = TINY.chars(INNER_W)
    more = len(problems) - 1
    lines = glyphs.wrap(problems[0], width, 3 if more else 4)
    if more:
        lines.append(f"(+{more} more problem{'s' if more > 1 else ''})")
    return PanelView(Layout.TEXT, header="gammonclock", title="CONFIG ERROR",
                     lines=tuple((line, "") for line in lines))


# --- next_change_at --------------------------------------------------------------------------

def _next_step_down(value: int, step: int) -> int | None:
    """For a shown value falling 1 ns per ns and shown as `value // step`: how long until what
    is shown changes (it drops below the multiple of `step` it stands on), or None at zero."""
    whole = value // step
    return value - whole * step + 1 if whole > 0 else None


def _reserve_change(turn: Turn, t: int) -> int | None:
    """The instant the shown reserve of a running turn changes next (after its delay)."""
    delay = turn.delay_left_at(t)
    reserve = turn.reserve_at(t)
    step = _TENTH_NS if reserve < TENTHS_BELOW_NS else NS_PER_S
    wait = _next_step_down(reserve, step)
    return None if wait is None else t + delay + wait


def _delay_change(turn: Turn, t: int) -> int | None:
    delay = turn.delay_left_at(t)
    if delay <= 0:
        return None
    wait = _next_step_down(delay, NS_PER_S)
    return t + (wait if wait is not None else delay)   # the last second: gone when it runs out


def next_change_at(state: MatchState, facing: Side, t: int) -> int | None:
    """The instant after `t` at which the digits this panel shows change next (a running
    reserve, its delay, a break's countdown), or None when nothing on it changes with time.

    Timers that change the phase (a flag, the end of a break) are the engine's `next_deadline`;
    a notice's lapse is the service's, and so is the picture's next burn-in move
    (`panels.next_shift_at`). A notice laid over the opponent's line does not hide its changes
    here: the redraw then finds the same picture, and `Panel.show` sends nothing.
    """
    phase = state.phase
    if phase is Phase.BREAK and state.brk is not None and not state.brk.overrun:
        wait = _next_step_down(state.brk.ends_at - t, NS_PER_S)
        return None if wait is None else t + wait
    turn = state.turn
    if turn is None or not turn.running or turn.side not in _shown_sides(state, facing):
        return None
    due = [c for c in (_reserve_change(turn, t), _delay_change(turn, t)) if c is not None]
    return min(due) if due else None


# --- notices ---------------------------------------------------------------------------------

_NOTICE_CHARS = 2 * TINY.chars(INNER_W - 4)    # two lines in the notice box


def _short(reason: str) -> str:
    """An engine's reason cut to what fits a notice: parentheses first, then the tail after ': '."""
    if len(reason) > _NOTICE_CHARS and "(" in reason:
        reason = reason.split("(", 1)[0].rstrip()
    if len(reason) > _NOTICE_CHARS and ": " in reason:
        reason = reason.split(": ", 1)[0]
    return reason


def notice_for(effect: Effect) -> str | None:
    """A short transient text for the effects the players need told, else None.

    Refusals of an arbiter's command are the arbiter's business (their console shows them).
    """
    if isinstance(effect, Refused):
        if effect.what.endswith("'s double") or effect.what.endswith("'s break"):
            return _short(effect.why)
        return None
    if isinstance(effect, Ignored):
        why = effect.why
        if why.startswith("out of turn"):
            return "out of turn: not your clock"
        if "plays white and starts" in why:
            return "white starts: black presses"
        if why == "the doubler waits for the answer":
            return "waiting for take or pass"
        if why == "paused":
            return "paused: hold cube to resume"
        if why.endswith("'s break"):
            return "break: its taker ends it"
        return None
    if isinstance(effect, Shown):
        return INFO_PAGE if effect.text.startswith("score ") else _short(effect.text)
    if isinstance(effect, Recovered):
        return ("recovered: paused, hold cube to resume" if effect.paused
                else "recovered after an outage")
    if isinstance(effect, OvertimeGiven):
        return f"flag: overtime +{format_countdown(effect.amount)}"
    if isinstance(effect, DiceRolled) and effect.turn == 0:
        return "opening " + ("die " if len(effect.dice) == 1 else "roll ") + \
            "-".join(map(str, effect.dice))
    if isinstance(effect, DiceRolled) and effect.early:
        return "early roll: logged"
    if isinstance(effect, Warned):
        return _short(f"warning: {effect.text}")
    if isinstance(effect, ChallengeDecided):
        return "challenge " + ("upheld" if effect.upheld else f"rejected ({effect.rejected})")
    if isinstance(effect, Undone):
        return "arbiter: undo"
    if isinstance(effect, ReserveChanged):
        return "arbiter: time changed"
    if isinstance(effect, ScoreChanged):
        return "arbiter: score changed"
    if isinstance(effect, CubeSet):
        return "arbiter: cube set"
    return None


# --- render ----------------------------------------------------------------------------------

ON, OFF = 255, 0   # a "1" image stores a lit pixel as 255; drawing with 1 would store 1, which
                   # `tobytes` hides but `ImageChops.difference` against a loaded PNG does not


class _Canvas:
    """Drawing in the area inside the margin (x 0..INNER_W-1, y 0..INNER_H-1)."""

    def __init__(self) -> None:
        self.image = Image.new("1", (WIDTH, HEIGHT), OFF)
        self.draw = ImageDraw.Draw(self.image)

    def text(self, x: int, y: int, text: str, face: Face, fill: int = ON) -> None:
        if text:
            self.draw.text((MARGIN + x, MARGIN + y), glyphs.printable(text, face),
                           font=face.font, fill=fill)

    def right(self, x_end: int, y: int, text: str, face: Face, fill: int = ON) -> int:
        """Text ending at `x_end`; returns where it starts."""
        x = x_end - face.span(text)
        self.text(x, y, text, face, fill)
        return x

    def centred(self, y: int, text: str, face: Face, fill: int = ON) -> None:
        text = glyphs.clip(text, face, INNER_W)
        self.text((INNER_W - face.span(text)) // 2, y, text, face, fill)

    def box(self, x0: int, y0: int, x1: int, y1: int, filled: bool = True) -> None:
        self.draw.rectangle((MARGIN + x0, MARGIN + y0, MARGIN + x1, MARGIN + y1),
                            fill=ON if filled else None, outline=ON)

    def triangle(self, x: int, y_mid: int, half: int) -> None:
        """The turn marker: a solid triangle pointing right at the running clock."""
        self.draw.polygon([(MARGIN + x, MARGIN + y_mid - half), (MARGIN + x, MARGIN + y_mid + half),
                           (MARGIN + x + half, MARGIN + y_mid)], fill=ON)

    def badge(self, x_end: int, y: int, text: str, face: Face, filled: bool) -> int:
        """A number in a box ending at `x_end` (filled: the delay; outlined: the cube);
        returns its left edge."""
        x0 = x_end - face.span(text) - 4
        self.box(x0, y, x_end - 1, y + face.height, filled)
        self.text(x0 + 2, y, text, face, fill=OFF if filled else ON)
        return x0


def _draw_header(c: _Canvas, view: PanelView) -> None:
    right = glyphs.clip(view.header_right, TINY, INNER_W)
    c.right(INNER_W, 0, right, TINY)
    room = INNER_W - TINY.span(right) - (TINY.width if right else 0)
    c.text(0, 0, glyphs.clip(view.header, TINY, room), TINY)


def _draw_own(c: _Canvas, clock: Clock) -> None:
    if clock.running:
        c.triangle(0, 20, 7)
    if len(clock.reserve) <= 5:
        c.text(10, 3, clock.reserve, BIG)
    else:                       # H:MM:SS does not fit in the large digits
        c.text(10, 8, clock.reserve, MEDIUM)
    if clock.delay:
        c.badge(INNER_W, 9, clock.delay, SMALL, filled=True)
    if clock.cube:
        c.badge(INNER_W, 23, clock.cube, SMALL, filled=False)


def _draw_line(c: _Canvas, y: int, clock: Clock, face: Face) -> None:
    """The opponent's line: marker, name, then cube, delay and reserve from the right."""
    half = (face.height - 4) // 2
    if clock.running:
        c.triangle(0, y + face.height // 2 - 1, half)
    x = c.right(INNER_W, y, clock.reserve, face)
    if clock.delay:
        x = c.badge(x - 3, y, clock.delay, face, filled=True)
    if clock.cube:
        x = c.badge(x - 3, y, clock.cube, face, filled=False)
    left = half + 3
    c.text(left, y, glyphs.clip(clock.name, face, x - 3 - left), face)


def _draw_notice(c: _Canvas, text: str) -> None:
    c.box(0, 38, INNER_W - 1, INNER_H - 1)
    lines = glyphs.wrap(glyphs.printable(text, TINY), TINY.chars(INNER_W - 4), 2)
    for i, line in enumerate(lines):
        c.centred((45 if len(lines) == 1 else 41 + 9 * i), line, TINY, fill=OFF)


def _draw_title(c: _Canvas, title: str) -> None:
    c.box(0, 10, INNER_W - 1, 22)
    c.centred(11, title, SMALL, fill=OFF)


def render(view: PanelView) -> Image.Image:
    """The 128×64 1-bit picture of `view`, drawn inside a blank margin of `MARGIN` pixels."""
    c = _Canvas()
    _draw_header(c, view)
    if view.layout is Layout.CLOCK:
        if view.own is not None:
            _draw_own(c, view.own)
        if view.status:
            rows: list[Clock | str] = [view.opponent] if view.opponent else []
            rows += view.status
            for i, row in enumerate(rows[:2]):
                y = 41 + 10 * i
                if isinstance(row, Clock):
                    _draw_line(c, y, row, TINY)
                else:
                    c.text(0, y, glyphs.clip(row, TINY, INNER_W), TINY)
        elif view.opponent is not None:
            _draw_line(c, 44, view.opponent, SMALL)
    else:
        _draw_title(c, view.title)
        if view.layout is Layout.COUNTDOWN:
            text = glyphs.clip(view.big, BIG, INNER_W)
            c.text((INNER_W - BIG.span(text)) // 2, 25, text, BIG)
        elif view.layout is Layout.TEXT:
            for i, (line, _) in enumerate(view.lines[:4]):
                c.text(0, 25 + 9 * i, glyphs.clip(line, TINY, INNER_W), TINY)
        else:
            for i, (left, right) in enumerate(view.lines[:2]):
                y = 25 + 12 * i
                right = glyphs.clip(right, SMALL, INNER_W)
                x = c.right(INNER_W, y, right, SMALL)
                c.text(0, y, glyphs.clip(left, SMALL, x - (SMALL.width if right else 0)), SMALL)
            if view.footer:
                c.centred(48, view.footer, SMALL)
    if view.notice:
        _draw_notice(c, view.notice)
    return c.image

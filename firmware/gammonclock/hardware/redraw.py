"""When the digits a panel shows change next (pure: no PIL, no device, no clock reads).

`next_change_at` says when, so the service redraws exactly then and sleeps in between;
`settled` says which instant's picture to draw, so that a press is drawn once, with its final
content.
"""

from __future__ import annotations

from gammonclock.core.match import MatchState, Phase
from gammonclock.core.timecontrol import Turn
from gammonclock.durations import NS_PER_S
from gammonclock.sides import Side

from .views import TENTH_NS, TENTHS_BELOW_NS, shown_sides

# After a press, a picture that would stand for less than this is not drawn: no frame reaches the
# glass that fast (a changed rectangle takes about a millisecond on the bus).
GLIMPSE_NS = NS_PER_S // 1000


def _next_step_down(value: int, step: int) -> int | None:
    """For a shown value falling 1 ns per ns and shown as `value // step`: how long until what
    is shown changes (it drops below the multiple of `step` it stands on), or None at zero."""
    whole = value // step
    return value - whole * step + 1 if whole > 0 else None


Changes = tuple[int | None, int | None, int | None]   # see `_turn_changes`

# The answers of `_turn_changes` for the turn last asked about (frozen: the same object, the same
# turn), by instant: both panels ask at the same instants (at a press, `settled` on each asks at
# the press and at the nanosecond after). A few at most: a running turn is asked at every redraw.
_known: tuple[Turn | None, dict[int, Changes]] = (None, {})
KNOWN_INSTANTS = 4


def _turn_changes(turn: Turn, t: int) -> Changes:
    """When the shown digits of the running `turn` change next after `t`: its delay, its
    reserve below 20 s in tenths (the player's own large clock), its reserve in seconds (the
    line below); None where they do not. The reserve runs after the delay."""
    global _known
    known_turn, known = _known
    if known_turn is not turn or len(known) >= KNOWN_INSTANTS:
        known = {}
        _known = (turn, known)
    changes = known.get(t)
    if changes is None:
        changes = known[t] = _changes(turn, t)
    return changes


def _changes(turn: Turn, t: int) -> Changes:
    """`_turn_changes`, worked out."""
    delay = turn.delay_left_at(t)
    reserve = turn.reserve_at(t)
    if delay > 0:
        wait = _next_step_down(delay, NS_PER_S)
        delay_change: int | None = t + (wait if wait is not None else delay)   # the last
    else:                                                  # second: gone when it runs out
        delay_change = None
    seconds = _next_step_down(reserve, NS_PER_S)
    tenths = _next_step_down(reserve, TENTH_NS) if reserve < TENTHS_BELOW_NS else seconds
    return (delay_change, None if tenths is None else t + delay + tenths,
            None if seconds is None else t + delay + seconds)


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
    if turn is None or not turn.running or turn.side not in shown_sides(state, facing):
        return None
    delay, tenths, seconds = _turn_changes(turn, t)
    # Tenths only on the large clock of the player the panel faces (views.SideClocks).
    reserve = tenths if turn.side is facing else seconds
    if delay is None or reserve is None:
        return reserve if delay is None else delay
    return min(delay, reserve)


def settled(state: MatchState, facing: Side, t: int) -> tuple[int, int | None]:
    """The instant whose picture this panel shows at `t`, and the instant its digits change
    after that (as `next_change_at`, or None).

    Usually (t, next_change_at(t)). At the instant a clock shown here starts running (a press, a
    resume), its delay stands exactly on a whole second and would show "12" for 1 ns before
    "11": then the panel shows at once what follows, and the next redraw is the next real
    change — one frame per press.
    """
    shown, change = t, next_change_at(state, facing, t)
    turn = state.turn
    if turn is None or turn.since != t:
        return shown, change
    while change is not None and change - t < GLIMPSE_NS:
        shown, change = change, next_change_at(state, facing, change)
    return shown, change

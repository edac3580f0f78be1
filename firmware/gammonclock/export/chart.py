"""Charts for the HTML report, drawn with matplotlib's Agg backend into PNG bytes.

`reserve_series` follows both reserves through the match from the surviving effects, as the
displays showed them: flat while a clock is stopped or inside its simple delay, falling one second
per second while it runs, with a step at every penalty, refund or overtime. The figures are built
with `matplotlib.figure.Figure` on a `FigureCanvasAgg`, so pyplot's global state and any
interactive backend are never touched.
"""

from __future__ import annotations

import io
from typing import TYPE_CHECKING

from gammonclock.core.effects import (
    OvertimeGiven,
    Paused,
    ReserveChanged,
    ResultEntryCancelled,
    ResultEntryStarted,
    Resumed,
    TurnEnded,
    TurnStarted,
)
from gammonclock.core.timecontrol import Turn
from gammonclock.durations import NS_PER_MIN
from gammonclock.sides import Side
from gammonclock.words import language, number, say

from .model import MatchRecord
from .stats import FACES, DiceStats

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

Series = dict[Side, list[tuple[int, int]]]     # (instant ns, reserve ns) per side


def _knee(turn: Turn, t: int) -> int | None:
    """The instant the turn's simple delay ran out between its last start and `t`, if it did."""
    since = turn.since
    if since is None:
        return None
    left = turn.delay_left_at(since)
    return since + left if left and since + left < t else None


def reserve_series(match: MatchRecord) -> Series:
    mode = match.rules.time.mode
    points: Series = {s: [(match.origin_t, match.rules.reserve_ns)] for s in Side}
    # The turn in progress: the engine's own `Turn`, its reserve at the start moved by penalties
    # and overtime as they come.
    run: Turn | None = None

    def mark(side: Side, t: int, value: int) -> None:
        points[side].append((t, value))

    def catch_up(t: int) -> None:
        if run is not None and (knee := _knee(run, t)) is not None:
            mark(run.side, knee, run.start_reserve)

    for item in match.effects:
        e, t = item.effect, item.effect.t
        if isinstance(e, TurnStarted):
            run = Turn.begin(e.side, t, e.reserve, mode, e.delay)
            mark(e.side, t, e.reserve)
        elif isinstance(e, (Paused, ResultEntryStarted)) and run is not None and run.running:
            catch_up(t)
            mark(run.side, t, run.reserve_at(t))
            run = run.frozen(t)
        elif isinstance(e, (Resumed, ResultEntryCancelled)) and run is not None:
            if not run.running:
                run = run.resumed(t)
                mark(run.side, t, run.reserve_at(t))
        elif isinstance(e, (ReserveChanged, OvertimeGiven)):
            side = e.side
            change = e.change if isinstance(e, ReserveChanged) else e.amount
            if run is not None and run.side is side:
                catch_up(t)
                before = run.reserve_at(t)
                run, _ = run.with_reserve_change(t, change)
                after = run.reserve_at(t)
            else:
                after = e.reserve if isinstance(e, ReserveChanged) else change
                before = after - change
            mark(side, t, before)
            mark(side, t, after)
        elif isinstance(e, TurnEnded):
            catch_up(t)
            mark(e.side, t, e.reserve_after - e.refund)
            if e.refund:
                mark(e.side, t, e.reserve_after)
            run = None
    end = match.end_t
    catch_up(end)
    for side in Side:
        shown = run.reserve_at(end) if run is not None and run.side is side \
            else points[side][-1][1]
        mark(side, end, shown)
    return {s: sorted(p, key=lambda x: x[0]) for s, p in points.items()}


def _label(text: str) -> str:
    """Text for matplotlib as it is: no mathtext, no hidden legend entries."""
    return text.replace("$", r"\$")


def _png(fig: Figure) -> bytes:
    """The figure as PNG bytes, rendered by the Agg canvas (no "Software" text chunk)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    FigureCanvasAgg(fig)      # attaches itself as fig.canvas
    out = io.BytesIO()
    fig.savefig(out, format="png", metadata={"Software": None})
    return out.getvalue()


def _decimal_ticks(ax: Axes, lang: str) -> None:
    """Russian ticks with a decimal comma ("2,5"), as the axis formats them otherwise."""
    if language(lang) != "ru":
        return
    from matplotlib.ticker import FuncFormatter

    for axis in (ax.xaxis, ax.yaxis):
        axis.set_major_formatter(FuncFormatter(lambda x, _: number(f"{x:g}", lang)))


COLOURS = {Side.LEFT: "#1f5fa8", Side.RIGHT: "#c0392b"}


def reserves_png(match: MatchRecord, lang: str = "en") -> bytes:
    """Both reserves over the match, in minutes of match time; games, breaks and pauses marked."""
    from matplotlib.figure import Figure

    series = reserve_series(match)
    origin = match.origin_t
    fig = Figure(figsize=(10, 4.2), dpi=100, layout="constrained")
    ax = fig.add_subplot()
    for side in Side:
        xs = [(t - origin) / NS_PER_MIN for t, _ in series[side]]
        ys = [r / NS_PER_MIN for _, r in series[side]]
        ax.plot(xs, ys, color=COLOURS[side], linewidth=1.6,
                label=_label(say("c.legend", lang, side=say(f"side.{side.value}", lang),
                                 name=match.name(side))))
    for brk in match.breaks:
        end = brk.end_t if brk.end_t is not None else match.end_t
        ax.axvspan((brk.start_t - origin) / NS_PER_MIN, (end - origin) / NS_PER_MIN,
                   color="#999999", alpha=0.25, linewidth=0)
    for pause in match.pauses:
        end = pause.end_t if pause.end_t is not None else match.end_t
        ax.axvspan((pause.start_t - origin) / NS_PER_MIN, (end - origin) / NS_PER_MIN,
                   color="#e0b040", alpha=0.3, linewidth=0)
    started = [g for g in match.games if g.start_t is not None]
    every = max(1, len(started) // 12)          # label at most a dozen games
    for n, game in enumerate(started):
        assert game.start_t is not None
        x = (game.start_t - origin) / NS_PER_MIN
        ax.axvline(x, color="#555555", linewidth=0.6, linestyle=":")
        if n % every == 0:
            ax.annotate(say("c.game", lang, n=game.number), (x, 1),
                        xycoords=("data", "axes fraction"),
                        xytext=(2, -10), textcoords="offset points", fontsize=8,
                        color="#555555")
    ax.set_xlabel(say("c.match_time", lang))
    ax.set_ylabel(say("c.reserve", lang))
    ax.set_ylim(bottom=0)
    ax.set_xlim(left=0)
    ax.grid(True, alpha=0.3)
    ax.legend(loc="lower left")
    ax.set_title(say("c.reserves_title", lang))
    _decimal_ticks(ax, lang)
    return _png(fig)


def dice_png(per_side: dict[Side, DiceStats], names: dict[Side, str],
             lang: str = "en") -> bytes:
    """Face counts per player."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(7, 3.2), dpi=100, layout="constrained")
    ax = fig.add_subplot()
    width = 0.38
    for n, side in enumerate(Side):
        xs = [f + (n - 0.5) * width for f in FACES]
        ax.bar(xs, per_side[side].faces, width, color=COLOURS[side],
               label=_label(say("c.legend", lang, side=say(f"side.{side.value}", lang),
                                name=names[side])))
    ax.set_xticks(list(FACES))
    ax.set_xlabel(say("c.face", lang))
    ax.set_ylabel(say("c.count", lang))
    ax.legend(loc="best", fontsize=8)
    ax.set_title(say("c.dice_title", lang))
    return _png(fig)

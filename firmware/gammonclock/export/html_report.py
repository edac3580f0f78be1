"""The director's report: one self-contained HTML page (styles inline, charts as data: PNGs).

Every text that comes from the journal (player names, arbiter texts, the file name) is escaped.
The page depends on nothing outside itself and shows the same figures as the JSON export.
"""

from __future__ import annotations

import base64
from collections.abc import Callable, Iterable, Sequence
from fractions import Fraction
from html import escape

from ..durations import NS_PER_S, format_clock
from ..journal import Verdict
from ..rules import format_score
from ..sides import Pair, Side
from .chart import dice_png, reserves_png
from .csv_out import dice_text
from .model import MatchRecord
from .stats import FACES, DiceStats, TimeStats, counted, dice_stats, time_stats
from .text import iso_utc

STYLE = """
body { font-family: system-ui, -apple-system, "Segoe UI", Helvetica, Arial, sans-serif;
       margin: 2em auto; max-width: 1100px; color: #222; padding: 0 1em; }
h1 { margin-bottom: 0.2em; } h2 { margin-top: 1.6em; border-bottom: 1px solid #ccc; }
table { border-collapse: collapse; margin: 0.5em 0; }
th, td { border: 1px solid #ccc; padding: 0.25em 0.6em; text-align: left; vertical-align: top; }
th { background: #f0f0f0; } td.n { text-align: right; font-variant-numeric: tabular-nums; }
.note { background: #fff4d6; border: 1px solid #e0b040; padding: 0.5em 1em; }
.bad { background: #fde2e2; border-color: #c0392b; }
.muted { color: #777; } img { max-width: 100%; height: auto; }
code { font-size: 0.9em; word-break: break-all; }
"""


def _e(value: object) -> str:
    return escape(str(value), quote=True)


def _dur(ns: int | None) -> str:
    """A duration for people: "14.2 s" below a minute, "3:05.1" above; tenths rounded down."""
    if ns is None:
        return ""
    if abs(ns) < 60 * NS_PER_S:
        tenths = ns // (NS_PER_S // 10)
        return f"{tenths // 10}.{tenths % 10} s"
    return format_clock(ns)


def _score(score: Pair[Fraction]) -> str:
    return f"{format_score(score.left)}–{format_score(score.right)}"


def _table(head: Sequence[str] | None, rows: Iterable[Sequence[str]],
           numeric: Iterable[int] = ()) -> str:
    """A table; cells are already-escaped HTML; columns in `numeric` are right-aligned."""
    right = set(numeric)
    out = ["<table>"]
    if head is not None:
        out.append("<tr>" + "".join(f"<th>{h}</th>" for h in head) + "</tr>")
    for row in rows:
        cells = "".join(f'<td class="n">{c}</td>' if i in right else f"<td>{c}</td>"
                        for i, c in enumerate(row))
        out.append(f"<tr>{cells}</tr>")
    out.append("</table>")
    return "\n".join(out)


def _img(png: bytes, alt: str) -> str:
    data = base64.b64encode(png).decode("ascii")
    return f'<img src="data:image/png;base64,{data}" alt="{_e(alt)}">'


class _Page:
    def __init__(self, match: MatchRecord, verdict: Verdict | None) -> None:
        self.m = match
        self.verdict = verdict

    def who(self, side: Side | None) -> str:
        if side is None:
            return "—"
        return f"{_e(self.m.name(side))} <span class=\"muted\">({side.value})</span>"

    def when(self, wall: int | None, t: int | None) -> str:
        if wall is None or t is None:
            return ""
        return (f"{_e(iso_utc(wall)[11:19])} "
                f"<span class=\"muted\">({_e(format_clock(t - self.m.origin_t))})</span>")

    # --- sections ---------------------------------------------------------------------------

    def summary(self) -> str:
        m, rules = self.m, self.m.rules
        tc = rules.time
        delay = f", {tc.mode.value} {_dur(tc.delay_ns)}" if tc.mode.value != "none" else ""
        state = m.replayed.engine.state_json()
        if m.result is not None:
            who = (f"{self.who(m.result.winner)} wins" if m.result.winner else "no winner (tie)")
            result = f"{who} {_e(_score(m.result.score))} ({_e(m.result.reason.value)})"
        else:
            score = state["score"]
            result = (f"not finished: {_e(state['phase'])}, game {_e(state['game'])}, score "
                      f"{_e(score['left'])}–{_e(score['right'])}")  # type: ignore[index]
        read = m.read
        rows = [
            ("Players", f"{self.who(Side.LEFT)} v {self.who(Side.RIGHT)}"),
            ("Discipline", f"{_e(rules.discipline.name)}, match to {rules.length}"
                           + (f", from {_e(_score(rules.start_score))}"
                              if any(rules.start_score) else "")),
            ("Time control", f"reserve {_e(format_clock(rules.reserve_ns))} each{_e(delay)}, "
                             f"flag: {_e(tc.flag_rule.value.replace('_', ' '))}"),
            ("Result", result),
            ("Games played", str(sum(1 for g in m.games if g.result is not None))),
            ("Played", f"{_e(iso_utc(read.header.wall))} to {_e(iso_utc(m.end_wall))} "
                       f"(match time {_e(format_clock(m.end_t - m.origin_t))})"),
            ("Journal", f"<code>{_e(read.path)}</code>: {read.count} records, "
                        f"last seal <code>{_e(read.last.mac)}</code>"),
        ]
        if self.verdict is not None:
            rows.append(("Seal check", _e(self.verdict.message if self.verdict.intact
                                          else f"TAMPERED: {self.verdict.message}")))
        body = _table(None, [(f"<b>{k}</b>", v) for k, v in rows])
        notes = list(m.notes)
        if self.verdict is not None and not self.verdict.intact:
            notes.insert(0, f"The journal failed its seal check: {self.verdict.message}")
        if notes:
            items = "".join(f"<li>{_e(n)}</li>" for n in notes)
            body += f'<div class="note bad"><b>About this journal</b><ul>{items}</ul></div>'
        return body

    def games(self) -> str:
        m = self.m
        if not m.games:
            return "<p>No game was played.</p>"
        rows = []
        for g in m.games:
            res = g.result
            if res is None:
                result = ("in progress" if g.match_ended is None
                          else f"match over ({_e(g.match_ended)})")
                pts, by = "", ""
            else:
                winner = self.who(res.winner) if res.winner else "draw"
                result = f"{winner} — {_e(res.kind.value)}"
                pts = _e(format_score(res.points))
                by = ("arbiter" if g.by_arbiter
                      else f"entered by {_e(m.name(g.entered_by))}" if g.entered_by else "")
            cube = "; ".join(f"{_e(m.name(t.side))} {_e(t.cube)}" for t in m.turns
                             if t.game == g.number and t.cube)
            rows.append((str(g.number), self.when(g.start_wall, g.start_t),
                         self.who(g.starter) if g.starter else "—",
                         "yes" if g.crawford else "", result, pts,
                         _e(_score(g.score_after)) if g.score_after else "",
                         str(sum(1 for t in m.turns if t.game == g.number and t.is_move)),
                         cube, by))
        return _table(("Game", "Started (UTC, match time)", "First to play", "Crawford",
                       "Result", "Points", "Score after", "Turns", "Cube", "Entered"),
                      rows, numeric=(5, 7))

    def times(self) -> str:
        stats: dict[Side, TimeStats] = {s: time_stats(self.m, s) for s in Side}

        def longest(s: TimeStats) -> str:
            t = s.longest
            return "" if t is None else f"{_dur(t.span)} (game {t.game}, turn {t.number})"

        lines: list[tuple[str, Callable[[TimeStats], str]]] = [
            ("Turns (moves and cube decisions)", lambda s: str(s.turns)),
            ("Total think time", lambda s: _dur(s.total)),
            ("Charged to the reserve", lambda s: _dur(s.charged)),
            ("Delay used", lambda s: _dur(s.delay_used)),
            ("Median think", lambda s: _dur(s.median)),
            ("Longest think", longest),
            ("Late from breaks", lambda s: _dur(s.overrun) if s.overrun else "—"),
            ("Reserve left", lambda s: format_clock(s.reserve_left)),
        ]
        rows = [(label, *(_e(f(stats[s])) for s in Side)) for label, f in lines]
        return _table(("", self.who(Side.LEFT), self.who(Side.RIGHT)), rows, numeric=(1, 2))

    def arbiter(self) -> str:
        acts = self.m.arbiter
        if not acts:
            return "<p>No arbiter action.</p>"
        rows = []
        for a in acts:
            outcome = ("refused: " + a.refused if a.refused is not None
                       else "; ".join(e.describe() for e in a.outcome))
            rows.append((self.when(a.wall, a.t), f"<code>{_e(a.command)}</code>",
                         "penalty" if a.penalty else "", _e(outcome)))
        return _table(("When (UTC, match time)", "Command", "", "What it did"), rows)

    def breaks(self) -> str:
        m = self.m
        out = []
        if m.breaks:
            out.append(_table(("Player", "Started", "Length", "Late by"), [
                (self.who(b.side), self.when(b.start_wall, b.start_t),
                 _dur(b.end_t - b.start_t) if b.end_t is not None else "not ended",
                 _dur(b.overrun) if b.overrun else "") for b in m.breaks], numeric=(2, 3)))
        else:
            out.append("<p>No break was taken.</p>")
        if m.pauses:
            out.append("<h3>Pauses</h3>")
            out.append(_table(("Started", "Length", "By", "Resumed by"), [
                (self.when(p.start_wall, p.start_t),
                 _dur(p.end_t - p.start_t) if p.end_t is not None else "not resumed",
                 _e(p.by), _e(p.resumed_by or "")) for p in m.pauses], numeric=(1,)))
        if m.incidents:
            out.append("<h3>Flags, outages and the end</h3>")
            out.append(_table(("When", "What"), [
                (self.when(i.wall, i.t), _e(i.text)) for i in m.incidents]))
        return "\n".join(out)

    def dice(self) -> str:
        m = self.m
        overall = dice_stats(counted(m.rolls))
        per: dict[Side, DiceStats] = {s: dice_stats(counted(m.rolls, s)) for s in Side}
        voided = sum(1 for r in m.rolls if r.voided)

        def line(label: str, d: DiceStats) -> tuple[str, ...]:
            rate = "" if d.doubles_rate is None else f"{d.doubles_rate:.1%} ({d.doubles}/{d.pairs})"
            chi = "" if d.chi_square is None else f"{d.chi_square:.2f}"
            p = "" if d.p_value is None else f"{d.p_value:.3f}"
            return (label, *(str(c) for c in d.faces), str(d.dice), _e(rate), chi, p)

        unknown = overall.dice - sum(per[s].dice for s in Side)
        rows = [line(self.who(s), per[s]) for s in Side] + [line("<b>All dice</b>", overall)]
        parts = [
            _table(("", *map(str, FACES), "Dice", "Doubles", "χ²", "p"), rows,
                   numeric=range(1, 11)),
            f"<p><b>Are the dice fair?</b> {_e(overall.reading())}</p>",
            "<p class=\"muted\">Pearson's chi-square test of the face counts against fair dice "
            "(5 degrees of freedom, scipy.stats.chisquare); fair dice roll doubles 1 time in 6"
            + ("" if overall.doubles_p_value is None
               else f" (exact binomial test of this match's doubles: p = "
                    f"{overall.doubles_p_value:.3f})")
            + f". {overall.rolls} throws; {voided} void throws struck from the record"
            + (f"; {unknown} opening dice whose roller the reader did not name count only in "
               f"“All dice”" if unknown else "") + ".</p>",
        ]
        for s in Side:
            if per[s].dice:
                parts.append(f"<p>{self.who(s)}: {_e(per[s].reading())}</p>")
        names = {s: m.name(s) for s in Side}
        parts.append(_img(dice_png(per, names), "dice faces per player"))
        return "\n".join(parts)

    def turns(self) -> str:
        m = self.m
        rows = [(str(t.game), str(t.number), self.who(t.side), self.when(t.start_wall, t.start_t),
                 _e(_dur(t.span)), _e(_dur(t.charged)),
                 _e(format_clock(t.reserve_after)) if t.reserve_after is not None else "",
                 _e(t.reason or "open"), _e(t.cube), _e(dice_text(t))) for t in m.turns]
        table = _table(("Game", "Turn", "Player", "Started", "Think", "Charged", "Reserve after",
                        "Ended by", "Cube", "Dice"), rows, numeric=(0, 1, 4, 5, 6))
        return (f"<details><summary>All {len(m.turns)} turns</summary>\n{table}\n"
                f"</details>")

    def render(self) -> str:
        m = self.m
        title = f"{m.name(Side.LEFT)} v {m.name(Side.RIGHT)}"
        sections = [
            f"<h1>{_e(title)}</h1>",
            f"<p class=\"muted\">gammonclock match report — {_e(m.rules.discipline.name)} to "
            f"{m.rules.length}</p>",
            self.summary(),
            "<h2>Games</h2>", self.games(),
            "<h2>Time</h2>", self.times(),
            _img(reserves_png(m), "both reserves over the match"),
            "<h2>Penalties and arbiter actions</h2>", self.arbiter(),
            "<h2>Breaks</h2>", self.breaks(),
        ]
        if m.rolls:
            sections += ["<h2>Dice</h2>", self.dice()]
        sections += ["<h2>Turns</h2>", self.turns()]
        body = "\n".join(sections)
        return (f"<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
                f"<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
                f"<title>{_e(title)} — match report</title>\n<style>{STYLE}</style>\n</head>\n"
                f"<body>\n{body}\n</body>\n</html>\n")


def render_html(match: MatchRecord, verdict: Verdict | None = None) -> str:
    return _Page(match, verdict).render()

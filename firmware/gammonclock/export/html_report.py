"""The director's report: one self-contained HTML page (styles inline, charts as data: PNGs).

Every text that comes from the journal (player names, arbiter texts, the file name) is escaped.
The page depends on nothing outside itself and shows the same figures as the JSON export.
Printed, it is the match's record for signing: the particulars, the result, the arbiter's
actions and a line for the arbiter's and both players' signatures fit on one or two A4 pages
(the list of every turn is left out of print).
"""

from __future__ import annotations

import base64
from collections.abc import Callable, Iterable, Sequence
from fractions import Fraction
from html import escape

from ..durations import NS_PER_S, format_clock
from ..effects import ReserveChanged
from ..journal import Verdict
from ..rules import format_score
from ..sides import Pair, Side
from .chart import dice_png, reserves_png
from .csv_out import dice_text
from .model import AGAINST, SANCTIONS, ArbiterAct, MatchRecord
from .particulars import particulars
from .stats import FACES, DiceStats, TimeStats, counted, dice_stats, time_stats
from .text import NO_KEY_GIVEN, integrity_text, iso_utc

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
.unchecked { font-weight: bold; color: #8a5a00; }
.given { color: #1e6b30; } .taken { color: #a02a1e; }
.signatures { display: flex; gap: 1.5em; margin-top: 1em; }
.signatures div { flex: 1; border-top: 1px solid #222; padding-top: 0.3em; margin-top: 3.2em; }
.signatures b { display: block; }
@media print {
  @page { size: A4; margin: 12mm 12mm 12mm 12mm; }
  body { margin: 0; max-width: none; padding: 0; font-size: 9pt; }
  h1 { font-size: 15pt; margin: 0; } h2 { font-size: 11pt; margin: 0.9em 0 0.3em; }
  h2, h3 { break-after: avoid; } h3 { font-size: 10pt; margin: 0.6em 0 0.2em; }
  table { margin: 0.3em 0; width: 100%; } th, td { padding: 1px 5px; }
  tr { break-inside: avoid; } p { margin: 0.3em 0; } img { max-height: 55mm; width: auto; }
  .screen-only, details { display: none; }
  .sign-block { break-inside: avoid; }
  .head { display: flex; gap: 1.2em; align-items: flex-start; } .head > div { flex: 1; }
  .games .side, .games .mt { display: none; }
}
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


def _img(png: bytes, alt: str, css: str = "") -> str:
    data = base64.b64encode(png).decode("ascii")
    css = f' class="{css}"' if css else ""
    return f'<img src="data:image/png;base64,{data}" alt="{_e(alt)}"{css}>'


def _wall_text(wall: int) -> str:
    """A wall-clock instant for people: 2024-05-01 10:00:00 UTC."""
    return iso_utc(wall)[:19].replace("T", " ") + " UTC"


def reserve_changes(acts: Iterable[ArbiterAct], side: Side) -> tuple[int, int]:
    """The time the arbiter gave `side` and took from it (both ≥ 0 ns), as their acts did."""
    changes = [e.change for a in acts for e in a.outcome
               if isinstance(e, ReserveChanged) and e.side is side]
    return sum(c for c in changes if c > 0), -sum(c for c in changes if c < 0)


def _kind(act: ArbiterAct) -> str:
    css = ("given" if act.category == "time given"
           else "taken" if act.category in AGAINST else "")
    label = _e(act.category) + (" (refused)" if act.refused is not None else "")
    return f'<span class="{css}">{label}</span>' if css and act.refused is None else label


class _Page:
    def __init__(self, match: MatchRecord, verdict: Verdict | None,
                 no_check: str = NO_KEY_GIVEN) -> None:
        self.m = match
        self.verdict = verdict
        self.no_check = no_check

    def who(self, side: Side | None) -> str:
        if side is None:
            return "—"
        return f"{_e(self.m.name(side))} <span class=\"muted side\">({side.value})</span>"

    def when(self, wall: int | None, t: int | None) -> str:
        if wall is None or t is None:
            return ""
        return (f"{_e(iso_utc(wall)[11:19])} "
                f"<span class=\"muted mt\">({_e(format_clock(t - self.m.origin_t))})</span>")

    # --- sections ---------------------------------------------------------------------------

    def particulars(self) -> str:
        p = particulars(self.m)
        rows = [
            ("Event", _e(p.event) if p.event else '<span class="muted">none given</span>'),
            ("Round", _e(p.round) if p.round else '<span class="muted">none given</span>'),
            ("Table", _e(p.table_text)),
            ("Players", f"{self.who(Side.LEFT)} v {self.who(Side.RIGHT)}"),
            ("Discipline", _e(p.discipline)),
            ("Length", _e(p.length)),
            ("Time control", _e(p.time_control)),
            ("Breaks", _e(p.breaks)),
            ("Started", _e(_wall_text(p.started_wall))),
            ("Ended" if p.finished else "Journal ends",
             _e(_wall_text(p.ended_wall)) + ("" if p.finished
                                             else ' <span class="muted">(not finished)</span>')),
            ("Wall clock synchronised", _e(p.synchronised_text)),
        ]
        return _table(None, [(f"<b>{k}</b>", v) for k, v in rows])

    def summary(self) -> str:
        m = self.m
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
            ("Result", result),
            ("Games played", str(sum(1 for g in m.games if g.result is not None))),
            ("Match time", _e(format_clock(m.end_t - m.origin_t))),
            ("Journal", f"<code>{_e(read.path)}</code>: {read.count} records, "
                        f"last seal <code>{_e(read.last.mac)}</code>"),
            ("Seal check", self.integrity()),
        ]
        body = _table(None, [(f"<b>{k}</b>", v) for k, v in rows])
        notes = list(m.notes)
        if self.verdict is not None and not self.verdict.intact:
            notes.insert(0, f"The journal failed its check: {self.verdict.message}")
        if notes:
            items = "".join(f"<li>{_e(n)}</li>" for n in notes)
            body += f'<div class="note bad"><b>About this journal</b><ul>{items}</ul></div>'
        return body

    def integrity(self) -> str:
        """The journal's verdict (`gammonclock verify`'s words); the seals not checked (another
        device's journal, or no key), plainly so."""
        if self.verdict is None or (self.verdict.intact and not self.verdict.sealed):
            return (f'<span class="unchecked">'
                    f'{_e(integrity_text(self.verdict, self.no_check))}</span>')
        return _e(integrity_text(self.verdict, self.no_check))

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
                         _kind(a), _e(outcome), _e(a.author.text())))
        return self.arbiter_totals() + _table(
            ("When (UTC, match time)", "Command", "Kind", "What it did", "By"), rows)

    def arbiter_totals(self) -> str:
        """Per player: the time the arbiter gave and took, and the penalties, in one line each."""
        lines = []
        for side in Side:
            parts = []
            given, taken = reserve_changes(self.m.arbiter, side)
            if given:
                parts.append(f'<span class="given">time given +{_e(_dur(given))}</span>')
            if taken:
                parts.append(f'<span class="taken">time taken −{_e(_dur(taken))}</span>')
            for category in SANCTIONS:
                n = sum(1 for a in self.m.arbiter
                        if a.side is side and a.refused is None and a.category == category)
                if n:
                    parts.append(f'<span class="taken">{_e(category)} ×{n}</span>')
            if parts:
                lines.append(f"<li>{self.who(side)}: {', '.join(parts)}</li>")
        return f"<ul>{''.join(lines)}</ul>" if lines else ""

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
        # Printed, the table above says it: the page stays within two sheets.
        parts.append(_img(dice_png(per, names), "dice faces per player", "screen-only"))
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

    def signatures(self) -> str:
        """Lines to sign on the printed report: the arbiter's, then each player's by name."""
        boxes = ['<div><b>Arbiter</b>name: ______________________</div>']
        boxes += [f"<div><b>{_e(self.m.name(side))}</b>{side.value} player</div>"
                  for side in Side]
        return ('<div class="sign-block"><h2>Signatures</h2>'
                '<p>The result and the arbiter actions above are confirmed by:</p>'
                f'<div class="signatures">{"".join(boxes)}</div>'
                '<p class="muted">Place and date: ______________________</p></div>')

    def render(self) -> str:
        m = self.m
        title = f"{m.name(Side.LEFT)} v {m.name(Side.RIGHT)}"
        p = particulars(m)
        where = ", ".join(x for x in (p.event, p.round) if x)
        sections = [
            f"<h1>{_e(title)}</h1>",
            f"<p class=\"muted\">gammonclock match report — {_e(m.rules.discipline.name)} to "
            f"{m.rules.length}" + (f" — {_e(where)}" if where else "")
            + (f" — table {_e(p.table)}" if p.table else "") + "</p>",
            '<div class="head"><div>', "<h2>The match</h2>", self.particulars(), "</div><div>",
            "<h2>Result</h2>", self.summary(), "</div></div>",
            "<h2>Games</h2>", f'<div class="games">{self.games()}</div>',
            "<h2>Arbiter actions</h2>", self.arbiter(),
            "<h2>Time</h2>", self.times(),
            _img(reserves_png(m), "both reserves over the match"),
            "<h2>Breaks</h2>", self.breaks(),
        ]
        if m.rolls:
            sections += ["<h2>Dice</h2>", self.dice()]
        sections += [self.signatures(), '<h2 class="screen-only">Turns</h2>', self.turns()]
        body = "\n".join(sections)
        return (f"<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
                f"<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
                f"<title>{_e(title)} — match report</title>\n<style>{STYLE}</style>\n</head>\n"
                f"<body>\n{body}\n</body>\n</html>\n")


def render_html(match: MatchRecord, verdict: Verdict | None = None,
                no_check: str = NO_KEY_GIVEN) -> str:
    """The report; `no_check` says why the seals were not checked when `verdict` is None."""
    return _Page(match, verdict, no_check).render()

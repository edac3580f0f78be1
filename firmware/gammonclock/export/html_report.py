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

from gammonclock.config.problems import said
from gammonclock.core.effects import ReserveChanged
from gammonclock.core.rules import EndReason
from gammonclock.durations import NS_PER_S, format_clock
from gammonclock.journal.verify import Verdict
from gammonclock.sides import Pair, Side

from .. import words
from .chart import dice_png, reserves_png
from .csv_out import cube_text, dice_text
from .model import AGAINST, SANCTIONS, ArbiterAct, Incident, MatchRecord
from .particulars import particulars
from .stats import FACES, DiceStats, TimeStats, counted, dice_stats, time_stats
from .text import NO_KEY_GIVEN, Standing, integrity_text, iso_utc, standing

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
.verdict { margin: 0 0 1em; padding: 0.4em 1em; border: 1px solid #ccc; }
.verdict.tampered { background: #c0392b; color: #fff; border-color: #7b1d12;
                    font-size: 1.25em; padding: 0.8em 1em; }
.verdict.tampered b { font-size: 1.4em; display: block; }
.verdict { -webkit-print-color-adjust: exact; print-color-adjust: exact; }
.verdict.not-checked { background: #fff4d6; border-color: #e0b040; }
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
  tr { break-inside: avoid; } p { margin: 0.3em 0; } img { max-height: 40mm; width: auto; }
  .screen-only, details, .method { display: none; }
  .sign-block { break-inside: avoid; } .signatures div { margin-top: 2.4em; }
  .head { display: flex; gap: 1.2em; align-items: flex-start; } .head > div { flex: 1; }
  .games .side, .games .mt { display: none; } .games table { font-size: 8pt; }
}
"""


def _e(value: object) -> str:
    return escape(str(value), quote=True)


def _dur(ns: int | None, lang: str = "en") -> str:
    """A duration for people: "14.2 s" below a minute, "3:05.1" above; tenths rounded down
    (Russian: "14,2 с", "3:05,1")."""
    if ns is None:
        return ""
    if abs(ns) < 60 * NS_PER_S:
        tenths = ns // (NS_PER_S // 10)
        return words.seconds(f"{tenths // 10}.{tenths % 10}", lang)
    return words.number(format_clock(ns), lang)


def _score(score: Pair[Fraction], lang: str = "en") -> str:
    return f"{words.number(score.left, lang)}–{words.number(score.right, lang)}"


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


def _wall_text(wall: int, lang: str = "en") -> str:
    """A wall-clock instant for people: 2024-05-01 10:00:00 UTC; 1 мая 2024 г., 10:00:00 UTC."""
    if words.language(lang) == "en":
        return iso_utc(wall)[:19].replace("T", " ") + " UTC"
    return words.say("r.utc", lang, date=words.date(wall, lang), time=iso_utc(wall)[11:19])


def reserve_changes(acts: Iterable[ArbiterAct], side: Side) -> tuple[int, int]:
    """The time the arbiter gave `side` and took from it (both ≥ 0 ns), as their acts did."""
    changes = [e.change for a in acts for e in a.outcome
               if isinstance(e, ReserveChanged) and e.side is side]
    return sum(c for c in changes if c > 0), -sum(c for c in changes if c < 0)


def _kind(act: ArbiterAct, lang: str = "en") -> str:
    css = ("given" if act.category == "time given"
           else "taken" if act.category in AGAINST else "")
    label = (_e(words.word_or_self("cat", act.category, lang))
             + (words.say("a.refused_mark", lang) if act.refused is not None else ""))
    return f'<span class="{css}">{label}</span>' if css and act.refused is None else label


class _Page:
    def __init__(self, match: MatchRecord, verdict: Verdict | None,
                 no_check: str = NO_KEY_GIVEN, lang: str | None = None) -> None:
        self.m = match
        self.verdict = verdict
        self.no_check = no_check
        self.lang = words.language(lang or match.config.device.language)

    def t(self, key: str, **args: object) -> str:
        """The catalogue's text `key` in the report's language (not escaped)."""
        return words.say(key, self.lang, **args)

    def n(self, value: object) -> str:
        """A number or a clock's time with the report's decimal sign."""
        return words.number(value, self.lang)

    def dur(self, ns: int | None) -> str:
        return _dur(ns, self.lang)

    def who(self, side: Side | None) -> str:
        if side is None:
            return "—"
        return (f"{_e(self.m.name(side))} "
                f"<span class=\"muted side\">({_e(words.side(side.value, self.lang))})</span>")

    def when(self, wall: int | None, t: int | None) -> str:
        if wall is None or t is None:
            return ""
        return (f"{_e(iso_utc(wall)[11:19])} "
                f"<span class=\"muted mt\">({_e(self.n(format_clock(t - self.m.origin_t)))})"
                f"</span>")

    # --- sections ---------------------------------------------------------------------------

    def particulars(self) -> str:
        p = particulars(self.m, self.lang)
        t = self.t
        none = f'<span class="muted">{_e(t("r.none_given"))}</span>'
        rows = [
            (t("r.event"), _e(p.event) if p.event else none),
            (t("r.round"), _e(p.round) if p.round else none),
            (t("r.table"), _e(p.table_text)),
            (t("r.players"), _e(t("r.vs", left="{left}", right="{right}")).format(
                left=self.who(Side.LEFT), right=self.who(Side.RIGHT))),
            (t("r.discipline"), _e(p.discipline)),
            (t("r.length"), _e(p.length)),
            (t("r.time_control"), _e(p.time_control)),
            (t("r.breaks"), _e(p.breaks)),
            (t("r.started"), _e(_wall_text(p.started_wall, self.lang))),
            (t("r.ended") if p.finished else t("r.journal_ends"),
             _e(_wall_text(p.ended_wall, self.lang))
             + ("" if p.finished
                else f' <span class="muted">{_e(t("r.not_finished"))}</span>')),
            (t("r.synchronised"), _e(p.synchronised_text)),
        ]
        return _table(None, [(f"<b>{_e(k)}</b>", v) for k, v in rows])

    def summary(self) -> str:
        m, t = self.m, self.t
        state = m.replayed.engine.state_json()
        moved_to = m.replayed.engine.match.moved_to
        if m.result is not None and m.result.reason is EndReason.MOVED:
            # No result here: the match went on on another clock, whose journal has it.
            result = _e(t("r.moved_line", how=words.ended_words("moved", moved_to, self.lang),
                          score=_score(m.result.score, self.lang)))
        elif m.result is not None:
            who = (_e(t("r.wins", who="{who}")).format(who=self.who(m.result.winner))
                   if m.result.winner else _e(t("r.tie")))
            result = _e(t("r.result_line", who="{who}", score="{score}", reason="{reason}")).format(
                who=who, score=_e(_score(m.result.score, self.lang)),
                reason=_e(words.word_or_self("end", m.result.reason.value, self.lang)))
        else:
            score = state["score"]
            result = _e(t("r.unfinished",
                          phase=words.word_or_self("phase", str(state["phase"]), self.lang),
                          game=state["game"],
                          score=f"{self.n(score['left'])}–{self.n(score['right'])}"))  # type: ignore[index]
        read = m.read
        rows = [
            (t("r.result"), result),
            (t("r.games_played"), str(sum(1 for g in m.games if g.result is not None))),
            (t("r.match_time"), _e(self.n(format_clock(m.end_t - m.origin_t)))),
            (t("r.journal"), _e(t("r.journal_line", path="{path}",
                                  records=words.counted("records", read.count, self.lang),
                                  mac="{mac}")).format(
                path=f"<code>{_e(read.path)}</code>", mac=f"<code>{_e(read.last.mac)}</code>")),
            (t("r.seal_check"), self.integrity()),
        ]
        body = _table(None, [(f"<b>{_e(k)}</b>", v) for k, v in rows])
        notes = [said(note, self.lang) for note in m.notes]
        if self.verdict is not None and not self.verdict.intact:
            notes.insert(0, t("r.failed_check", message=said(self.verdict.message, self.lang)))
        if notes:
            items = "".join(f"<li>{_e(n)}</li>" for n in notes)
            body += (f'<div class="note bad"><b>{_e(t("r.about_journal"))}</b>'
                     f'<ul>{items}</ul></div>')
        return body

    def verdict_first(self) -> str:
        """The journal's verdict, first on the page (SPEC §14.1): a tampered journal's (written
        only with --allow-tampered) in a banner that says the report is not a valid record."""
        text = integrity_text(self.verdict, self.no_check, self.lang)
        stands = standing(self.verdict)
        if stands is Standing.TAMPERED:
            return (f'<div class="verdict tampered" role="alert"><b>{_e(text)}</b>'
                    f'{_e(self.t("r.tampered_banner"))}</div>')
        css = "verdict" if stands is Standing.INTACT else "verdict not-checked"
        return f'<p class="{css}">{_e(self.t("r.verdict", check=text))}</p>'

    def integrity(self) -> str:
        """The journal's verdict (`gammonclock verify`'s words); the seals not checked (another
        device's journal, or no key), plainly so."""
        text = integrity_text(self.verdict, self.no_check, self.lang)
        if self.verdict is None or (self.verdict.intact and not self.verdict.sealed):
            return f'<span class="unchecked">{_e(text)}</span>'
        return _e(text)

    def games(self) -> str:
        m, t = self.m, self.t
        if not m.games:
            return f"<p>{_e(t('r.no_game'))}</p>"
        rows = []
        for g in m.games:
            res = g.result
            if res is None:
                result = _e(t("r.in_progress") if g.match_ended is None
                            else t("r.match_over_in", why=words.ended_words(
                                g.match_ended, m.replayed.engine.match.moved_to, self.lang)))
                pts, by = "", ""
            else:
                winner = self.who(res.winner) if res.winner else _e(t("r.draw"))
                result = f"{winner} — {_e(words.word_or_self('kind', res.kind.value, self.lang))}"
                pts = _e(self.n(res.points))
                by = (_e(t("r.arbiter_entered")) if g.by_arbiter
                      else _e(t("r.entered_by", name=m.name(g.entered_by))) if g.entered_by
                      else "")
            cube = "; ".join(f"{_e(m.name(u.side))} {_e(cube_text(u.cube, self.lang))}"
                             for u in m.turns if u.game == g.number and u.cube)
            rows.append((str(g.number), self.when(g.start_wall, g.start_t),
                         self.who(g.starter) if g.starter else "—",
                         _e(t("r.yes")) if g.crawford else "", result, pts,
                         _e(_score(g.score_after, self.lang)) if g.score_after else "",
                         str(sum(1 for u in m.turns if u.game == g.number and u.is_move)),
                         cube, by))
        return _table(tuple(_e(t(k)) for k in (
            "r.game", "r.started_at", "r.first_to_play", "r.crawford", "r.result", "r.points",
            "r.score_after", "r.turns", "r.cube", "r.entered")), rows, numeric=(5, 7))

    def times(self) -> str:
        stats: dict[Side, TimeStats] = {s: time_stats(self.m, s) for s in Side}
        t, dur = self.t, self.dur

        def longest(s: TimeStats) -> str:
            u = s.longest
            return "" if u is None else t("t.longest_at", span=dur(u.span), game=u.game,
                                          turn=u.number)

        lines: list[tuple[str, Callable[[TimeStats], str]]] = [
            (t("t.turns"), lambda s: str(s.turns)),
            (t("t.total"), lambda s: dur(s.total)),
            (t("t.charged"), lambda s: dur(s.charged)),
            (t("t.delay_used"), lambda s: dur(s.delay_used)),
            (t("t.median"), lambda s: dur(s.median)),
            (t("t.longest"), longest),
            (t("t.late"), lambda s: dur(s.overrun) if s.overrun else "—"),
            (t("t.reserve_left"), lambda s: self.n(format_clock(s.reserve_left))),
        ]
        rows = [(_e(label), *(_e(f(stats[s])) for s in Side)) for label, f in lines]
        return _table(("", self.who(Side.LEFT), self.who(Side.RIGHT)), rows, numeric=(1, 2))

    def arbiter(self) -> str:
        acts, t = self.m.arbiter, self.t
        if not acts:
            return f"<p>{_e(t('a.none'))}</p>"
        rows = []
        for a in acts:
            outcome = (t("a.refused", why=words.why(a.refused_reason, a.refused, self.lang,
                                                      a.refused_facts))
                       if a.refused is not None
                       else "; ".join(words.describe(e, self.lang) for e in a.outcome))
            rows.append((self.when(a.wall, a.t), f"<code>{_e(a.command)}</code>",
                         _kind(a, self.lang), _e(outcome), _e(author_text(a, self.lang))))
        return self.arbiter_totals() + _table(
            tuple(_e(t(k)) for k in ("a.when", "a.command", "a.kind", "a.did", "a.by")), rows)

    def arbiter_totals(self) -> str:
        """Per player: the time the arbiter gave and took, and the penalties, in one line each."""
        lines = []
        for side in Side:
            parts = []
            given, taken = reserve_changes(self.m.arbiter, side)
            if given:
                parts.append(f'<span class="given">{_e(self.t("a.given", time=self.dur(given)))}'
                             f'</span>')
            if taken:
                parts.append(f'<span class="taken">{_e(self.t("a.taken", time=self.dur(taken)))}'
                             f'</span>')
            for category in SANCTIONS:
                n = sum(1 for a in self.m.arbiter
                        if a.side is side and a.refused is None and a.category == category)
                if n:
                    parts.append(f'<span class="taken">'
                                 f'{_e(words.word_or_self("cat", category, self.lang))} ×{n}'
                                 f'</span>')
            if parts:
                lines.append(f"<li>{self.who(side)}: {', '.join(parts)}</li>")
        return f"<ul>{''.join(lines)}</ul>" if lines else ""

    def breaks(self) -> str:
        m, t, dur = self.m, self.t, self.dur
        out = []
        if m.breaks:
            out.append(_table(tuple(_e(t(k)) for k in ("b.player", "b.started", "b.length",
                                                        "b.late")), [
                (self.who(b.side), self.when(b.start_wall, b.start_t),
                 _e(dur(b.end_t - b.start_t) if b.end_t is not None else t("b.not_ended")),
                 _e(dur(b.overrun)) if b.overrun else "") for b in m.breaks], numeric=(2, 3)))
        else:
            out.append(f"<p>{_e(t('b.none'))}</p>")
        if m.pauses:
            out.append(f"<h3>{_e(t('r.h.pauses'))}</h3>")
            out.append(_table(tuple(_e(t(k)) for k in ("b.started", "b.length", "b.by",
                                                        "b.resumed_by")), [
                (self.when(p.start_wall, p.start_t),
                 _e(dur(p.end_t - p.start_t) if p.end_t is not None else t("b.not_resumed")),
                 _e(words.word_or_self("by", p.by, self.lang)),
                 _e(words.word_or_self("by", p.resumed_by, self.lang) if p.resumed_by else ""))
                for p in m.pauses], numeric=(1,)))
        if m.incidents:
            out.append(f"<h3>{_e(t('r.h.incidents'))}</h3>")
            out.append(_table((_e(t("b.when")), _e(t("b.what"))), [
                (self.when(i.wall, i.t), _e(self.incident(i))) for i in m.incidents]))
        return "\n".join(out)

    def incident(self, incident: Incident) -> str:
        """An incident's line in the report's language (its effect's words)."""
        if words.language(self.lang) == "en" or incident.effect is None:
            return incident.text
        return words.describe(incident.effect, self.lang)

    def dice(self) -> str:
        m, t, lang = self.m, self.t, self.lang
        overall = dice_stats(counted(m.rolls))
        per: dict[Side, DiceStats] = {s: dice_stats(counted(m.rolls, s)) for s in Side}
        voided = sum(1 for r in m.rolls if r.voided)

        def line(label: str, d: DiceStats) -> tuple[str, ...]:
            rate = ("" if d.doubles_rate is None
                    else f"{words.percent(d.doubles_rate, 1, lang)} ({d.doubles}/{d.pairs})")
            chi = "" if d.chi_square is None else self.n(f"{d.chi_square:.2f}")
            p = "" if d.p_value is None else self.n(f"{d.p_value:.3f}")
            return (label, *(str(c) for c in d.faces), str(d.dice), _e(rate), chi, p)

        unknown = overall.dice - sum(per[s].dice for s in Side)
        rows = [line(self.who(s), per[s]) for s in Side] + [line(f"<b>{_e(t('d.all'))}</b>",
                                                                 overall)]
        binomial = ("" if overall.doubles_p_value is None
                    else t("d.binomial", p=self.n(f"{overall.doubles_p_value:.3f}")))
        parts = [
            _table(("", *map(str, FACES), _e(t("d.dice")), _e(t("d.doubles")), "χ²", "p"), rows,
                   numeric=range(1, 11)),
            f"<p><b>{_e(t('d.fair'))}</b> {_e(overall.reading(lang))}</p>",
            "<p class=\"muted method\">" + _e(t("d.method") + binomial
                                       + t("d.throws", throws=overall.rolls, voided=voided)
                                       + (t("d.unknown", n=unknown) if unknown else "")
                                       + ".") + "</p>",
        ]
        for s in Side:
            if per[s].dice:
                parts.append(f"<p>{self.who(s)}: {_e(per[s].reading(lang))}</p>")
        names = {s: m.name(s) for s in Side}
        # Printed, the table above says it: the page stays within two sheets.
        parts.append(_img(dice_png(per, names, lang), t("d.faces_alt"), "screen-only"))
        return "\n".join(parts)

    def turns(self) -> str:
        m, t = self.m, self.t
        rows = [(str(u.game), str(u.number), self.who(u.side), self.when(u.start_wall, u.start_t),
                 _e(self.dur(u.span)), _e(self.dur(u.charged)),
                 _e(self.n(format_clock(u.reserve_after))) if u.reserve_after is not None else "",
                 _e(words.word_or_self("reason", u.reason, self.lang) if u.reason
                    else t("tn.open")),
                 _e(cube_text(u.cube, self.lang)), _e(dice_text(u, self.lang)))
                for u in m.turns]
        table = _table(tuple(_e(t(k)) for k in (
            "r.game", "tn.turn", "tn.player", "tn.started", "tn.think", "tn.charged",
            "tn.reserve_after", "tn.ended_by", "r.cube", "tn.dice")), rows,
            numeric=(0, 1, 4, 5, 6))
        return (f"<details><summary>{_e(t('tn.all', n=len(m.turns)))}</summary>\n{table}\n"
                f"</details>")

    def signatures(self) -> str:
        """Lines to sign on the printed report: the arbiter's, then each player's by name."""
        t = self.t
        boxes = [f'<div><b>{_e(t("s.arbiter"))}</b>{_e(t("s.name"))}</div>']
        boxes += [f"<div><b>{_e(self.m.name(side))}</b>"
                  f"{_e(t('s.player', side=words.side(side.value, self.lang)))}</div>"
                  for side in Side]
        return (f'<div class="sign-block"><h2>{_e(t("r.h.signatures"))}</h2>'
                f'<p>{_e(t("s.confirm"))}</p>'
                f'<div class="signatures">{"".join(boxes)}</div>'
                f'<p class="muted">{_e(t("s.place"))}</p></div>')

    def page_title(self, title: str) -> str:
        """The window's title; a tampered journal's says so before the match."""
        said = self.t("r.title", title=title)
        if standing(self.verdict) is Standing.TAMPERED:
            return self.t("r.title_tampered", title=said)
        return said

    def render(self) -> str:
        m, t, lang = self.m, self.t, self.lang
        title = t("r.vs", left=m.name(Side.LEFT), right=m.name(Side.RIGHT))
        p = particulars(m, lang)
        where = ", ".join(x for x in (p.event, p.round) if x)
        discipline = words.word_or_self("discipline", m.rules.discipline.name, lang)
        length = words.up_to(m.rules.length, lang)
        sections = [
            self.verdict_first(),
            f"<h1>{_e(title)}</h1>",
            f"<p class=\"muted\">{_e(t('r.subtitle', discipline=discipline, length=length))}"
            + (f" — {_e(where)}" if where else "")
            + (_e(t("r.subtitle_table", table=p.table)) if p.table else "") + "</p>",
            '<div class="head"><div>', f"<h2>{_e(t('r.h.match'))}</h2>", self.particulars(),
            "</div><div>", f"<h2>{_e(t('r.h.result'))}</h2>", self.summary(), "</div></div>",
            f"<h2>{_e(t('r.h.games'))}</h2>", f'<div class="games">{self.games()}</div>',
            f"<h2>{_e(t('r.h.arbiter'))}</h2>", self.arbiter(),
            f"<h2>{_e(t('r.h.time'))}</h2>", self.times(),
            _img(reserves_png(m, lang), t("c.reserves_alt")),
            f"<h2>{_e(t('r.h.breaks'))}</h2>", self.breaks(),
        ]
        if m.rolls:
            sections += [f"<h2>{_e(t('r.h.dice'))}</h2>", self.dice()]
        sections += [self.signatures(), f'<h2 class="screen-only">{_e(t("r.h.turns"))}</h2>',
                     self.turns()]
        body = "\n".join(sections)
        return (f"<!DOCTYPE html>\n<html lang=\"{lang}\">\n<head>\n<meta charset=\"utf-8\">\n"
                f"<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
                f"<title>{_e(self.page_title(title))}</title>\n<style>{STYLE}</style>\n"
                f"</head>\n<body>\n{body}\n</body>\n</html>\n")


def author_text(act: ArbiterAct, lang: str) -> str:
    """Who gave an arbiter command: "socket: anna"; "сокет: anna"."""
    if words.language(lang) == "en":
        return act.author.text()
    source, by = act.author.source, act.author.by
    if source is None and by is None:
        return words.say("author.unknown", lang)
    return ": ".join(part for part in (words.word_or_self("author", source, lang) if source
                                       else words.say("author.unknown", lang), by) if part)


def render_html(match: MatchRecord, verdict: Verdict | None = None,
                no_check: str = NO_KEY_GIVEN, lang: str | None = None) -> str:
    """The report; `no_check` says why the seals were not checked when `verdict` is None;
    `lang` ("en", "ru"; None: the match's `[display] language`) the language it is in."""
    return _Page(match, verdict, no_check, lang).render()

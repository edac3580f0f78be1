"""The whole match as one JSON document, for machines.

Instants are given three ways: `t_ns` (engine ns, the journal's own clock), `match_time_ns`
(since the journal's header) and `utc` (ISO 8601). Durations are integer ns. `seal` ties the
document to its journal: the number of records read and the mac of the last one (a journal that
grew since still has that mac at that place; `gammonclock verify` checks the journal itself);
`verdict`, the document's first key, says whether the journal verifies (SPEC §14.1): `standing`
is "intact", "seal not checked", "another device" or "TAMPERED" (a tampered journal is exported
only with `--allow-tampered`, and `tampered` is then true), `check` the verdict in words.
`seal.check` is the verdict in the words `gammonclock verify` prints ("intact: N records",
"TAMPERED: …", "sealed by another device (key id …)…", "seal not checked: no device key given…");
`seal.verified` the same in fields (`intact`: the chain, and the seals when checked, hold; `seal`:
"checked", "another device" or "not checked"; `sealed_by`: another device's key id).
`particulars` is the report's head (event, round, table, whether the wall clock was synchronised:
null when not known); each arbiter action has its `category` ("time given", "time taken", …: an
`add` is no penalty) and its author (`source`, `by`, and `author` in words, "unknown" for older
journals).
"""

from __future__ import annotations

import hashlib
import json
import re
from fractions import Fraction
from pathlib import Path
from typing import Any

from gammonclock.core.rules import EndReason
from gammonclock.journal.verify import Verdict
from gammonclock.sides import Pair, Side

from .. import __version__
from .model import ArbiterAct, Break, Game, MatchRecord, Pause, Roll, Turn
from .particulars import particulars
from .stats import DiceStats, counted, dice_stats, time_stats
from .text import NO_KEY_GIVEN, Standing, integrity_text, iso_utc, points, standing

FORMAT = "gammonclock-export"
FORMAT_VERSION = 1


def _when(match: MatchRecord, t: int | None, wall: int | None) -> dict[str, Any] | None:
    if t is None or wall is None:
        return None
    return {"t_ns": t, "match_time_ns": t - match.origin_t, "utc": iso_utc(wall)}


def _score(score: Pair[Fraction]) -> dict[str, int | float]:
    return {"left": points(score.left), "right": points(score.right)}


def _side(side: Side | None) -> str | None:
    return None if side is None else side.value


def _roll(match: MatchRecord, r: Roll) -> dict[str, Any]:
    return {"at": _when(match, r.t, r.wall), "dice": list(r.dice), "side": _side(r.side),
            "roller": _side(r.roller), "game": r.game, "move": r.move, "early": r.early,
            "voided": r.voided}


def _turn(match: MatchRecord, t: Turn) -> dict[str, Any]:
    return {
        "game": t.game, "turn": t.number, "move": t.move, "side": t.side.value,
        "player": match.name(t.side), "start": _when(match, t.start_t, t.start_wall),
        "end": _when(match, t.end_t, t.end_wall), "end_reason": t.reason,
        "reserve_before_ns": t.reserve_before, "delay_ns": t.delay, "think_ns": t.span,
        "delay_used_ns": t.delay_used, "charged_ns": t.charged, "refund_ns": t.refund,
        "reserve_after_ns": t.reserve_after, "cube": t.cube or None,
        "opening": None if t.opening is None else list(t.opening.dice),
        "dice": [list(r.dice) for r in t.rolls if not r.voided],
    }


def _game(match: MatchRecord, g: Game) -> dict[str, Any]:
    result = None
    if g.result is not None:
        result = {"winner": _side(g.result.winner), "winner_name": match.name(g.result.winner),
                  "kind": g.result.kind.value, "points": points(g.result.points)}
    return {
        "game": g.number, "start": _when(match, g.start_t, g.start_wall),
        "end": _when(match, g.end_t, g.end_wall), "starter": _side(g.starter),
        "white": _side(g.white), "crawford": g.crawford, "result": result,
        "score_after": None if g.score_after is None else _score(g.score_after),
        "by_arbiter": g.by_arbiter, "entered_by": _side(g.entered_by),
        "match_ended": g.match_ended,
        "cancelled_entries": g.cancelled_entries, "next_is_crawford": g.next_crawford,
        "turns": sum(1 for t in match.turns if t.game == g.number and t.is_move),
        "cube_actions": [{"turn": t.number, "side": t.side.value, "action": t.cube}
                         for t in match.turns if t.game == g.number and t.cube],
        "opening": [list(r.dice) for r in g.opening if not r.voided],
    }


def _act(match: MatchRecord, a: ArbiterAct) -> dict[str, Any]:
    return {"at": _when(match, a.t, a.wall), "command": a.command, "category": a.category,
            "side": _side(a.side), "penalty": a.penalty, "refused": a.refused,
            "outcome": [e.as_dict() for e in a.outcome], "source": a.author.source,
            "by": a.author.by, "author": a.author.text()}


def _particulars(match: MatchRecord) -> dict[str, Any]:
    p = particulars(match, "en")      # the JSON is a machine's: English words
    return {"event": p.event or None, "round": p.round or None, "table": p.table,
            "players": {"left": p.left, "right": p.right}, "discipline": p.discipline,
            "length": p.length, "time_control": p.time_control, "breaks": p.breaks,
            "started_utc": iso_utc(p.started_wall), "ended_utc": iso_utc(p.ended_wall),
            "finished": p.finished, "wall_clock_synchronized": p.wall_clock_synchronized,
            "wall_clock_synchronized_text": p.synchronised_text}


def _break(match: MatchRecord, b: Break) -> dict[str, Any]:
    return {"side": b.side.value, "player": match.name(b.side),
            "start": _when(match, b.start_t, b.start_wall),
            "planned_end_t_ns": b.planned_end_t, "end": _when(match, b.end_t, b.end_wall),
            "overrun_from_t_ns": b.overrun_t, "overrun_ns": b.overrun,
            "breaks_left": b.breaks_left.as_dict()}


def _pause(match: MatchRecord, p: Pause) -> dict[str, Any]:
    return {"by": p.by, "start": _when(match, p.start_t, p.start_wall),
            "end_t_ns": p.end_t, "resumed_by": p.resumed_by,
            "duration_ns": None if p.end_t is None else p.end_t - p.start_t}


def _dice(d: DiceStats) -> dict[str, Any]:
    return {"throws": d.rolls, "dice": d.dice, "faces": dict(zip("123456", d.faces, strict=True)),
            "two_dice_throws": d.pairs, "doubles": d.doubles, "doubles_rate": d.doubles_rate,
            "doubles_p_value": d.doubles_p_value, "chi_square": d.chi_square,
            "p_value": d.p_value, "enough_dice": d.enough, "reading": d.reading()}


def _times(match: MatchRecord, side: Side) -> dict[str, Any]:
    s = time_stats(match, side)
    longest = s.longest
    return {"turns": s.turns, "think_ns": s.total, "charged_ns": s.charged,
            "delay_used_ns": s.delay_used, "median_think_ns": s.median,
            "longest_think": None if longest is None else {
                "ns": longest.span, "game": longest.game, "turn": longest.number},
            "break_overrun_ns": s.overrun, "reserve_left_ns": s.reserve_left}


def seal(match: MatchRecord) -> dict[str, Any]:
    read = match.read
    blob = Path(read.path).read_bytes()[:read.size]
    return {"records": read.count, "last_seq": read.last.seq, "last_mac": read.last.mac,
            "bytes": read.size, "sha256": hashlib.sha256(blob).hexdigest()}


def document(match: MatchRecord, verdict: Verdict | None = None,
             no_check: str = NO_KEY_GIVEN) -> dict[str, Any]:
    """The export as plain JSON values (lists, dicts, str, int, float, bool, None)."""
    rules, header = match.rules, match.read.header
    rolls_present = bool(match.rolls)
    stands = standing(verdict)
    doc: dict[str, Any] = {
        # Said first (SPEC §14.1): whether the journal verifies, before anything it holds.
        "verdict": {"standing": stands.value, "tampered": stands is Standing.TAMPERED,
                    "check": integrity_text(verdict, no_check)},
        "format": FORMAT, "format_version": FORMAT_VERSION, "exported_by": __version__,
        "journal": {"file": Path(match.path).name, "path": match.path,
                    "started": _when(match, header.t, header.wall),
                    "ended": _when(match, match.end_t, match.end_wall),
                    "notes": match.notes, "effects": match.effects_total,
                    "effects_standing": len(match.effects)},
        "seal": {**seal(match), "verified": None if verdict is None else {
            "intact": verdict.intact, "records": verdict.records, "message": verdict.message,
            "seal": verdict.seal, "sealed_by": verdict.sealed_by},
            "check": integrity_text(verdict, no_check)},
        "particulars": _particulars(match),
        "handover": None if match.handover is None else match.handover.as_json(),
        "header": {k: without_pin(v) for k, v in header.data.items()},
        "players": rules.names.as_dict(),
        "discipline": rules.discipline.name,
        "rules": {
            "length": rules.length, "family": rules.family.value, "cube": rules.cube,
            "crawford": rules.crawford_active, "start_score": _score(rules.start_score),
            "time_mode": rules.time.mode.value, "reserve_ns": rules.reserve_ns,
            "delay_ns": rules.time.delay_ns, "flag_rule": rules.time.flag_rule.value,
            "overtime_ns": rules.time.overtime_ns, "breaks_per_player": rules.breaks_per_player,
            "break_ns": rules.break_ns},
        "result": None if match.result is None else {
            "winner": _side(match.result.winner), "winner_name": match.name(match.result.winner),
            "reason": match.result.reason.value, "score": _score(match.result.score),
            **({"moved_to": match.replayed.engine.match.moved_to}
               if match.result.reason is EndReason.MOVED else {})},
        "games": [_game(match, g) for g in match.games],
        "turns": [_turn(match, t) for t in match.turns],
        "time_stats": {s.value: _times(match, s) for s in Side},
        "arbiter_actions": [_act(match, a) for a in match.arbiter],
        "breaks": [_break(match, b) for b in match.breaks],
        "pauses": [_pause(match, p) for p in match.pauses],
        "incidents": [{"at": _when(match, i.t, i.wall), "kind": i.kind, "text": i.text}
                      for i in match.incidents],
        "dice": {
            "recorded": rolls_present,
            "rolls": [_roll(match, r) for r in match.rolls],
            "stats": None if not rolls_present else {
                "overall": _dice(dice_stats(counted(match.rolls))),
                **{s.value: _dice(dice_stats(counted(match.rolls, s))) for s in Side}},
        },
        "final_state": match.replayed.engine.state_json(),
    }
    return doc


def render_json(match: MatchRecord, verdict: Verdict | None = None,
                no_check: str = NO_KEY_GIVEN) -> str:
    return json.dumps(document(match, verdict, no_check), indent=2, ensure_ascii=False) + "\n"


# The arbiter's PIN (SPEC §13.4) as a config writes it; an export may reach the players.
_PIN_LINE = re.compile(r'(?m)^([ \t]*pin[ \t]*=[ \t]*)("[^"\n]*"|\'[^\'\n]*\')')


def without_pin(value: object) -> object:
    """A header value with the arbiter's PIN hidden in any config text it holds."""
    return _PIN_LINE.sub(r'\1"(hidden)"', value) if isinstance(value, str) else value

"""Results back (SPEC §14): every finished match's result, recomputed by the hall from the journal
it archived (never typed), per-round completion against the rounds it pushed, and the event's
standings, for the director's page and the pairing software.

- A result is the export's own reading of the journal (`export.read_match`: the replay through
  the engine), taken in a worker thread when the archive has verified the journal, beside its
  verdict: round (the match's `[event] round`), event, table, players, length, final score,
  winner, how it ended (`score`, `flag`, `forfeit`, `disqualified`, `challenges`, `abandoned`;
  `unfinished` for a journal that stops before the match is over), games played, match time,
  the journal's verdict (`intact`, `TAMPERED`, `seal not checked`) and its archive path.
- A table's journal is untrusted: every text is cut to a bound (names to the config's own 24,
  the event and round to the view's), at most `MAX_RESULTS` results are held (more are not
  collected, and the log says so), at most `MAX_ROUNDS` pushed rounds are remembered.
- A TAMPERED journal's result is listed, flagged (`journal` says TAMPERED), and never counted
  in the standings: the standings list it as excluded, for the arbiter to decide; so is an
  abandoned match (no winner: the director decides). A journal whose seals were not checked
  (no key for the table) is counted, and says so.
- A round is complete when every table pushed in it has reported a finished match of that round
  (its `[event] round` and its table); the tables still playing are listed with the score and
  the reserves their cards show.
- CSV cells are escaped against formula injection: a cell starting with `=`, `+`, `-`, `@`, a
  tab or a carriage return gets a leading `'`.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterable
from dataclasses import dataclass, replace
from fractions import Fraction
from pathlib import Path
from typing import Any

from gammonclock.config.converters import MAX_NAME_LENGTH
from gammonclock.config.loading import ConfigError
from gammonclock.core.effects import MatchEnded
from gammonclock.core.rules import json_points
from gammonclock.errors import GammonclockError
from gammonclock.export import ExportError, read_match  # the export's reading: no parser of our own
from gammonclock.journal.durable import write_atomically
from gammonclock.journal.records import JournalError

from .accounts import TABLE_ID
from .archive import Verified, journal_of
from .messages import MAX_EVENT_NAME, natural_key
from .standings import SWISS, standings

RESULT_COLUMNS = ("round", "table", "left", "right", "length", "left_score", "right_score",
                  "winner", "ended_by", "journal")
MAX_RESULTS = 5000          # results held; a journal past it is not collected (logged)
MAX_ROUNDS = 200            # pushed rounds remembered
MAX_ROUND_NAME = 40
MAX_TEXT = 300              # an error's or a verdict's words
ROUNDS_FILE = "pushed-rounds.json"    # in the archive folder (the archive lists folders only)
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")

INTACT, TAMPERED, NOT_CHECKED, UNREADABLE = "intact", "TAMPERED", "seal not checked", "unreadable"


def cut(text: object, bound: int) -> str:
    """A text from a journal, one line, at most `bound` characters."""
    value = " ".join(str(text).split()) if text is not None else ""
    return value[:bound]


def points(value: Fraction | int) -> int | float:
    return json_points(Fraction(value))


def verdict_word(verified: Verified) -> str:
    if verified.ok:
        return INTACT if verified.sealed else NOT_CHECKED
    return TAMPERED if verified.tampered else UNREADABLE


@dataclass(frozen=True)
class Result:
    table: str
    journal: str                  # the archive path, TABLE/NAME
    verdict: str                  # INTACT, TAMPERED, NOT_CHECKED, UNREADABLE
    verdict_text: str
    event: str = ""
    round: str = ""
    left: str = ""
    right: str = ""
    length: int = 0
    left_score: int | float = 0
    right_score: int | float = 0
    winner: str = ""              # "left", "right" or "" (none: abandoned, a tie, unfinished)
    ended_by: str = ""            # EndReason's value, "forfeit" or "unfinished"
    games: int = 0
    match_ms: int = 0
    started_wall_ms: int = 0
    ended_wall_ms: int = 0
    error: str = ""               # the journal could not be read as a match

    @property
    def finished(self) -> bool:
        return not self.error and self.ended_by not in ("", "unfinished")

    @property
    def counted(self) -> bool:
        """Counted in the standings: finished other than abandoned (the arbiter's: no winner,
        for the director to decide), and its journal not tampered with."""
        return (self.finished and self.ended_by != "abandoned"
                and self.verdict in (INTACT, NOT_CHECKED))

    @property
    def winner_name(self) -> str:
        return {"left": self.left, "right": self.right}.get(self.winner, "")

    @property
    def score_text(self) -> str:
        """Challonge's score string, left first: "7-3"."""
        return f"{self.left_score}-{self.right_score}"

    def as_json(self) -> dict[str, Any]:
        return {"round": self.round, "event": self.event, "table": self.table,
                "left": self.left, "right": self.right, "length": self.length,
                "left_score": self.left_score, "right_score": self.right_score,
                "score": self.score_text, "winner": self.winner,
                "winner_name": self.winner_name, "ended_by": self.ended_by,
                "games": self.games, "match_s": round(self.match_ms / 1000),
                "started_wall_ms": self.started_wall_ms, "ended_wall_ms": self.ended_wall_ms,
                "journal": self.journal, "verdict": self.verdict,
                "verdict_text": self.verdict_text, "counted": self.counted,
                "error": self.error}


def collect(path: Path, verified: Verified) -> Result | None:
    """The result an archived journal holds (read and replayed as the export reads it), or None
    for a copy that is not a match's own (cut short, or a second journal under a taken name:
    the one under the name reports). Runs in a worker thread."""
    if verified.cut_short or journal_of(path.name) != path.name:
        return None
    where = f"{verified.table}/{path.name}"
    base = Result(verified.table, where, verdict_word(verified),
                  cut(verified.message, MAX_TEXT))
    try:
        match = read_match(path, effects=False)
    except (ExportError, JournalError, ConfigError, GammonclockError, ValueError,
            KeyError, TypeError, RecursionError) as exc:
        return replace(base, error=cut(exc, MAX_TEXT))
    rules, config, ended = match.rules, match.config, match.result
    score = ended.score if ended is not None else match.replayed.engine.match.score
    games = sum(1 for g in match.games if g.result is not None or g.match_ended is not None)
    first = next((g for g in match.games if g.start_t is not None), None)
    start_t = first.start_t if first is not None and first.start_t is not None else \
        match.origin_t
    start_wall = first.start_wall if first is not None and first.start_wall is not None else \
        match.read.header.wall
    return replace(
        base, event=cut(config.event.name, MAX_EVENT_NAME),
        round=cut(config.event.round, MAX_ROUND_NAME),
        left=cut(rules.names.left, MAX_NAME_LENGTH), right=cut(rules.names.right, MAX_NAME_LENGTH),
        length=int(rules.length), left_score=points(score.left), right_score=points(score.right),
        winner=ended.winner.value if ended is not None and ended.winner is not None else "",
        ended_by=_ended_by(match) if ended is not None else "unfinished",
        games=games, match_ms=max(0, (match.end_t - start_t) // 1_000_000),
        started_wall_ms=start_wall // 1_000_000, ended_wall_ms=match.end_wall // 1_000_000)


def _ended_by(match: Any) -> str:
    """How the match ended: EndReason's value, or `forfeit` when the arbiter's forfeit of a game
    ended it (a match lost by a forfeited game ends by score)."""
    ended: MatchEnded = match.result
    for act in reversed(match.arbiter):
        if act.refused is None and any(e is ended for e in act.outcome):
            if act.name == "forfeit":
                return "forfeit"
            break
    return str(ended.reason.value)


@dataclass(frozen=True)
class Pushed:
    event: str
    round: str
    tables: tuple[str, ...]
    at_ms: int


class Results:
    """Every result the archive holds, and the rounds the hall pushed (kept in `ROUNDS_FILE` in
    the archive folder, so that a restarted hall still knows them)."""

    def __init__(self, archive: Path) -> None:
        self.archive = archive
        self.by_path: dict[str, Result] = {}
        self.rounds: dict[str, Pushed] = {}        # by round name, in push order
        self.dropped = 0
        self.form = SWISS       # the event's format (`--format`: standings_web sets it)

    # --- what the hall tells it -----------------------------------------------------------------

    def take(self, path: str, result: Result) -> bool:
        """Hold a result; False when `MAX_RESULTS` are held already (not collected)."""
        if path not in self.by_path and len(self.by_path) >= MAX_RESULTS:
            self.dropped += 1
            return False
        self.by_path[path] = result
        return True

    def forget(self, path: str) -> None:
        self.by_path.pop(path, None)

    def pushed(self, event: str, round_name: str, tables: Iterable[str], at_ms: int) -> None:
        """A round pushed (its good rows' tables). Pushed again, the round is the latest push."""
        name = cut(round_name, MAX_ROUND_NAME)
        tables = tuple(dict.fromkeys(t for t in tables if TABLE_ID.fullmatch(t)))
        if not tables:
            return
        self.rounds.pop(name, None)
        while len(self.rounds) >= MAX_ROUNDS:
            self.rounds.pop(next(iter(self.rounds)))
        self.rounds[name] = Pushed(cut(event, MAX_EVENT_NAME), name, tables, at_ms)
        self._save()

    def _save(self) -> None:
        data = [{"event": p.event, "round": p.round, "tables": list(p.tables), "at_ms": p.at_ms}
                for p in self.rounds.values()]
        self.archive.mkdir(parents=True, exist_ok=True)
        write_atomically(self.archive / ROUNDS_FILE,
                         json.dumps(data, ensure_ascii=False).encode("utf-8"))

    def load(self) -> str | None:
        """The rounds pushed before a restart; what is wrong with the file, if anything."""
        path = self.archive / ROUNDS_FILE
        try:
            if path.stat().st_size > 4 << 20:
                return f"{path}: too large; the pushed rounds are not known"
            data = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return None
        except (OSError, ValueError) as exc:
            return f"{path}: {exc}; the pushed rounds are not known"
        if not isinstance(data, list):
            return f"{path}: not a list; the pushed rounds are not known"
        for item in data[-MAX_ROUNDS:]:
            if isinstance(item, dict) and isinstance(item.get("tables"), list):
                name = cut(item.get("round"), MAX_ROUND_NAME)
                tables = tuple(t for t in item["tables"]
                               if isinstance(t, str) and TABLE_ID.fullmatch(t))
                at = item.get("at_ms")
                self.rounds.pop(name, None)
                self.rounds[name] = Pushed(cut(item.get("event"), MAX_EVENT_NAME), name,
                                           tables, at if type(at) is int else 0)
        return None

    # --- what it says ----------------------------------------------------------------------------

    def results(self) -> list[Result]:
        """Every result, by round (pushed order first), then table, then when it ended."""
        order = {name: i for i, name in enumerate(self.rounds)}
        return sorted(self.by_path.values(), key=lambda r: (
            order.get(r.round, len(order)), r.round, natural_key(r.table), r.ended_wall_ms,
            r.journal))

    def reported(self, round_name: str, table: str) -> Result | None:
        """The table's latest finished result of that round."""
        return self._latest_finished().get((round_name, table))

    def _latest_finished(self) -> dict[tuple[str, str], Result]:
        """Each (round, table)'s latest finished result, in one pass over the results."""
        latest: dict[tuple[str, str], Result] = {}
        for r in self.by_path.values():
            key = (r.round, r.table)
            if r.finished and (key not in latest or (r.ended_wall_ms, r.journal) > (
                    latest[key].ended_wall_ms, latest[key].journal)):
                latest[key] = r
        return latest

    def round_status(self, cards: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
        """Each pushed round: complete or not, its results and its tables still playing (each
        with its card's score and reserves)."""
        out, latest = [], self._latest_finished()
        for pushed in self.rounds.values():
            playing, reported = [], []
            for table in pushed.tables:
                result = latest.get((pushed.round, table))
                if result is not None:
                    reported.append(table)
                else:
                    playing.append(_playing(table, cards.get(table)))
            out.append({"round": pushed.round, "event": pushed.event,
                        "tables": list(pushed.tables), "reported": reported,
                        "playing": playing, "complete": not playing,
                        "pushed_ms": pushed.at_ms})
        return out

    def standings(self, form: str | None = None, event: str | None = None) -> dict[str, Any]:
        """The standings under FORM's tie-breaks (default: the event's; standings.py), of
        EVENT's results (default: all): per player, its matches, wins, points for and against,
        each round's result and its place; what is not counted listed as excluded, with why."""
        return standings(self.results(), form or self.form, list(self.rounds), event)


def _playing(table: str, card: dict[str, Any] | None) -> dict[str, Any]:
    state = _dict((card or {}).get("state"))
    score, clock = _dict(state.get("score")), _dict(state.get("clock"))

    def reserve(side: str) -> int | None:
        value = clock.get(side)
        ms = value.get("reserve_ms") if isinstance(value, dict) else None
        return ms if type(ms) is int else None

    players = _dict(state.get("players"))
    return {"table": table, "online": bool((card or {}).get("online")),
            "phase": cut(state.get("phase"), 40),
            "left": cut(players.get("left"), 64), "right": cut(players.get("right"), 64),
            "left_score": score.get("left"), "right_score": score.get("right"),
            "match_length": state.get("match_length"),
            "left_ms": reserve("left"), "right_ms": reserve("right"),
            "running": state.get("running") if state.get("running") in ("left", "right")
            else None, "reserves_at_ms": (card or {}).get("reserves_at_ms")}


def _dict(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


# --- CSV -----------------------------------------------------------------------------------------

def safe_cell(value: object) -> str:
    """A CSV cell a spreadsheet does not run: a leading `=`, `+`, `-`, `@`, tab or CR quoted
    with `'`."""
    text = str(value)
    return "'" + text if text.startswith(FORMULA_START) else text


def csv_text(header: Iterable[str], rows: Iterable[Iterable[object]]) -> str:
    """The CSV the hall gives out: CRLF, a number as it is (a point difference is negative),
    every text cell made safe."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")
    writer.writerow([safe_cell(h) for h in header])
    for row in rows:
        writer.writerow([cell if isinstance(cell, int | float) else safe_cell(cell)
                         for cell in row])
    return out.getvalue()


def journal_cell(result: Result) -> str:
    """The `journal` column: the verdict, then the archive path (`intact table-1/match-….jsonl`,
    `TAMPERED table-1/…`, `seal not checked table-1/…`)."""
    return f"{result.verdict} {result.journal}"


def results_csv(results: Iterable[Result]) -> str:
    return csv_text(RESULT_COLUMNS, (
        (r.round, r.table, r.left, r.right, r.length, r.left_score, r.right_score,
         r.winner_name, r.ended_by if not r.error else "unreadable", journal_cell(r))
        for r in results))


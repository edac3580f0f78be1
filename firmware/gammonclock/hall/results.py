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
- Whether a result counts is counting.py's one rule (SPEC §14.1): counted only from a journal
  that verifies with its table's own key and is the pairing pushed to that table (or the match
  the director moved onto it), the only one of its match and of its pairing; everything else
  that finished is held, listed with its reason, until the director accepts it (`accept`:
  a decision in the hall's journal, decisions.py); TAMPERED, unreadable and abandoned are never
  counted. The standings count exactly the results `counted` says (standings.py).
- Results are keyed by the match (its chain of journals across hand-overs), never by table and
  round: a spare's own result stands beside the match moved onto it.
- A round is complete when every table pushed in it has reported: a counted or held result of
  that round whose match started on that table; the tables still playing its match are listed
  with the score and the reserves their cards show, and a table whose card shows another match
  (a round before still playing there, or over and this round's not loaded yet) or none is
  listed as waiting, never as playing this round.
- The rounds (`round_names`): every round pushed or named by a result, in the order they began
  (a pushed round when it was pushed, another when its first match started).
- A player's id is the pairing's (`left_id`, `right_id` of the row pushed to the table the
  match started on), given to a result only when it is that pairing (`matched`): a journal
  never names an id, so no table can put its result under another table's player.
- A bye the director pushed (pairings.py) is a result as it is (`ended_by = bye`, no table, no
  journal), counted on the director's word (SPEC §14.1): the standings score it (standings.py).
- The rounds pushed are kept with each row's pairing (`ROUNDS_FILE`); a file an older hall wrote
  (tables, no rows) still loads: its rounds' results are then held ("pairing not kept").
- `/api/results.csv` lists the counted results only (the pairing software takes it as it is);
  the JSON and the page list every result and why it does or does not count.
- CSV cells are escaped against formula injection: a cell starting with `=`, `+`, `-`, `@`, a
  tab or a carriage return gets a leading `'`.
"""

from __future__ import annotations

import csv
import hashlib
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
from .continuation import Refused
from .counting import (
    INTACT,
    NOT_CHECKED,
    TAMPERED,
    UNREADABLE,
    Link,
    Pushed,
    Reason,
    RoundKey,
    Standing,
    assess,
    conflict,
    links_of,
)
from .decisions import Decision, HallDecisions
from .messages import MAX_EVENT_NAME, natural_key
from .pairings import PLAYER_ID, Bye, PairedMatch
from .standings import SWISS, standings

RESULT_COLUMNS = ("round", "table", "left", "right", "length", "left_score", "right_score",
                  "winner", "ended_by", "journal", "left_id", "right_id")
BYE = "bye"                 # a bye's `ended_by`
MAX_RESULTS = 5000          # results held; a journal past it is not collected (logged)
MAX_ROUNDS = 200            # pushed rounds remembered
MAX_ROUND_NAME = 40
MAX_BYES = 1000             # a round's byes kept (a CSV has at most 1 000 rows)
MAX_TEXT = 300              # an error's or a verdict's words
ROUNDS_FILE = "pushed-rounds.json"    # in the archive folder (the archive lists folders only)
# What `load` reads back: every round `_save` may write (MAX_ROUNDS rounds of at most 1 000
# rows, ~200 bytes a row in Cyrillic with its ids, and MAX_BYES byes, ~80 bytes each), so that
# a restarted hall never forgets them all.
MAX_ROUNDS_FILE = 64 << 20
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


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
    discipline: str = ""          # the discipline's name (`backgammon`, `longgammon`, …)
    sha256: str = ""              # of the archived file, as it was read
    links: tuple[Link, ...] = ()  # the header's `continues` (and `before`s), newest first
    # Where it stands (counting.assess; a result not yet set against the pairings is held)
    standing: Standing = Standing.HELD
    reason: Reason | None = None
    accepted_by: str = ""
    accepted_at_ms: int = 0
    chain: str = ""               # its match: the first journal, TABLE/NAME
    origin: str = ""              # the table its pairing was pushed to
    matched: bool = False         # its pairing's (players, length, event, round)
    left_id: str = ""             # the players' ids, its pairing's (only when `matched`)
    right_id: str = ""

    @property
    def bye(self) -> bool:
        """A bye the director pushed (no table, no journal, no opponent)."""
        return self.ended_by == BYE and not self.journal

    @property
    def finished(self) -> bool:
        return not self.error and self.ended_by not in ("", "unfinished")

    @property
    def counted(self) -> bool:
        """Counted in the standings: the one rule (counting.py), or accepted by the director."""
        return self.standing in (Standing.COUNTED, Standing.ACCEPTED)

    @property
    def winner_name(self) -> str:
        return {"left": self.left, "right": self.right}.get(self.winner, "")

    @property
    def score_text(self) -> str:
        """Challonge's score string, left first: "7-3"."""
        return f"{self.left_score}-{self.right_score}"

    def as_json(self) -> dict[str, Any]:
        held = self.reason.as_json() if self.reason is not None and \
            self.standing in (Standing.HELD, Standing.ACCEPTED) else None
        return {"round": self.round, "event": self.event, "table": self.table,
                "left": self.left, "right": self.right, "length": self.length,
                "discipline": self.discipline,
                "left_score": self.left_score, "right_score": self.right_score,
                "score": self.score_text, "winner": self.winner,
                "winner_name": self.winner_name, "ended_by": self.ended_by,
                "games": self.games, "match_s": round(self.match_ms / 1000),
                "started_wall_ms": self.started_wall_ms, "ended_wall_ms": self.ended_wall_ms,
                "journal": self.journal, "verdict": self.verdict,
                "verdict_text": self.verdict_text, "counted": self.counted,
                "standing": self.standing.value, "held": held,
                "why": None if self.reason is None else self.reason.as_json(),
                "why_text": "" if self.reason is None else self.reason.text,
                "accepted": {"by": self.accepted_by, "at_ms": self.accepted_at_ms}
                if self.standing is Standing.ACCEPTED else None,
                "chain": self.chain, "sha256": self.sha256, "error": self.error,
                "left_id": self.left_id, "right_id": self.right_id, "bye": self.bye}


def collect(path: Path, verified: Verified) -> Result | None:
    """The result an archived journal holds (read and replayed as the export reads it), or None
    for a copy that is not a match's own (cut short, or a second journal under a taken name:
    the one under the name reports). Runs in a worker thread."""
    if verified.cut_short or journal_of(path.name) != path.name:
        return None
    where = f"{verified.table}/{path.name}"
    try:
        digest = file_sha256(path)
    except OSError as exc:
        return Result(verified.table, where, UNREADABLE, cut(exc.strerror or exc, MAX_TEXT),
                      error=cut(exc.strerror or exc, MAX_TEXT))
    base = Result(verified.table, where, verdict_word(verified),
                  cut(verified.message, MAX_TEXT), sha256=digest)
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
        started_wall_ms=start_wall // 1_000_000, ended_wall_ms=match.end_wall // 1_000_000,
        discipline=rules.discipline.name, links=links_of(match.read.header.data))


def file_sha256(path: Path) -> str:
    """The SHA-256 of a file, read a MiB at a time (a journal is at most 16 MiB)."""
    digest = hashlib.sha256()
    with path.open("rb") as f:
        while block := f.read(1 << 20):
            digest.update(block)
    return digest.hexdigest()


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


class Results:
    """Every result the archive holds, and the rounds the hall pushed (kept in `ROUNDS_FILE` in
    the archive folder, so that a restarted hall still knows them), each result set against
    them and the director's decisions (counting.py) whenever it is asked for."""

    def __init__(self, archive: Path, decisions: HallDecisions | None = None,
                 keys_dir: Path | None = None) -> None:
        self.archive = archive
        self.decisions = decisions if decisions is not None else HallDecisions(None)
        self.keys_dir = keys_dir
        self.by_path: dict[str, Result] = {}
        self.rounds: dict[RoundKey, Pushed] = {}   # by (event, round name), in push order
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

    def pushed(self, event: str, round_name: str, rows: Iterable[PairedMatch], at_ms: int,
               byes: Iterable[Bye] = ()) -> None:
        """A round pushed (its good rows, its byes). Pushed again (say, a second batch of
        tables), each table's pairing is the latest pushed to it, and the tables pushed before
        stay (their retained match is still that round's); so do its byes."""
        key = (cut(event, MAX_EVENT_NAME), cut(round_name, MAX_ROUND_NAME))
        fresh = {row.table: _kept_row(row) for row in rows if TABLE_ID.fullmatch(row.table)}
        given = merged_byes((), byes)
        if not fresh and not given:
            return
        before = self.rounds.pop(key, None)
        kept: dict[str, PairedMatch] = {}
        if before is not None:
            kept.update(before.rows or {})
        kept.update(fresh)
        tables = tuple(dict.fromkeys((*(before.tables if before else ()), *kept)))
        while len(self.rounds) >= MAX_ROUNDS:
            self.rounds.pop(next(iter(self.rounds)))
        self.rounds[key] = Pushed(*key, tables, at_ms, kept,
                                  merged_byes(before.byes if before else (), given))
        self._save()

    def _save(self) -> None:
        data = [{"event": p.event, "round": p.round, "tables": list(p.tables), "at_ms": p.at_ms,
                 **({"rows": [row.as_json() for row in p.rows.values()]}
                    if p.rows is not None else {}),
                 **({"byes": [bye.as_json() for bye in p.byes]} if p.byes else {})}
                for p in self.rounds.values()]
        self.archive.mkdir(parents=True, exist_ok=True)
        write_atomically(self.archive / ROUNDS_FILE,
                         json.dumps(data, ensure_ascii=False).encode("utf-8"))

    def load(self) -> str | None:
        """The rounds pushed before a restart; what is wrong with the file, if anything. A
        round an older hall wrote has no `rows`: its results are held (pairing not kept)."""
        path = self.archive / ROUNDS_FILE
        try:
            if path.stat().st_size > MAX_ROUNDS_FILE:
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
                key = (cut(item.get("event"), MAX_EVENT_NAME),
                       cut(item.get("round"), MAX_ROUND_NAME))
                tables = tuple(t for t in item["tables"]
                               if isinstance(t, str) and TABLE_ID.fullmatch(t))
                at = item.get("at_ms")
                self.rounds.pop(key, None)
                self.rounds[key] = Pushed(*key, tables, at if type(at) is int else 0,
                                          _rows_of(item.get("rows")), _byes_of(item.get("byes")))
        return None

    # --- what it says ----------------------------------------------------------------------------

    def results(self) -> list[Result]:
        """Every result, set against the pairings and the decisions (counting.py), each with its
        pairing's player ids when it is that pairing, and each bye pushed; by round (in the
        order they began), then table (a round's byes after its tables), then when it ended."""
        collected = list(self.by_path.values())
        order = {name: i for i, name in enumerate(self.round_names(collected))}

        def key(r: Result) -> tuple[Any, ...]:
            return (order.get(r.round, len(order)), r.round, r.bye, natural_key(r.table),
                    r.ended_wall_ms, r.journal, r.left)

        assessed = assess(sorted(collected, key=key), self.rounds, self.decisions.decisions,
                          self.keys_dir)
        return sorted([self._with_ids(r) for r in assessed] + self._byes(), key=key)

    def _with_ids(self, r: Result) -> Result:
        """R with its pairing's player ids, when it is that pairing (the row pushed to the
        table its match started on, for its event and round): never from the journal."""
        pushed = self.rounds.get((r.event, r.round))
        row = pushed.rows.get(r.origin) if r.matched and pushed and pushed.rows else None
        if row is None or (row.left, row.right) != (r.left, r.right):
            return r
        return replace(r, left_id=row.left_id, right_id=row.right_id)

    def _byes(self) -> list[Result]:
        """Each bye pushed, as a result the standings count (the director's word)."""
        return [Result("", "", "", "", event=p.event, round=p.round, left=bye.player,
                       winner="left", ended_by=BYE, started_wall_ms=p.at_ms,
                       ended_wall_ms=p.at_ms, standing=Standing.COUNTED,
                       left_id=bye.player_id)
                for p in self.rounds.values() for bye in p.byes]

    def round_names(self, results: Iterable[Result] | None = None) -> list[str]:
        """Every round pushed or named by a result (RESULTS: default, every result held), once
        each, in the order they began: a pushed round when it was (last) pushed, another when
        its first match started; pushed rounds keep their push order among themselves."""
        began: dict[str, tuple[int, int]] = {}
        for i, p in enumerate(self.rounds.values()):
            began[p.round] = min(began.get(p.round, (p.at_ms, i)), (p.at_ms, i))
        unpushed: dict[str, int] = {}
        for r in (results if results is not None else self.by_path.values()):
            if r.round not in began:
                unpushed[r.round] = min(unpushed.get(r.round, r.started_wall_ms),
                                        r.started_wall_ms)
        return sorted([*began, *unpushed], key=lambda name: (
            *(began[name] if name in began else (unpushed[name], len(self.rounds))),
            natural_key(name)))

    def round_status(self, cards: dict[str, dict[str, Any]],
                     results: list[Result] | None = None) -> list[dict[str, Any]]:
        """Each pushed round: complete or not, its tables that reported (a counted or held
        result of that round whose match started there), its tables still playing its match
        (each with its card's score and reserves) and its tables waiting: whose card shows
        another match (`after`: the round whose pairing it is, when one is; `over`: that match
        is over) or none; its byes."""
        given = results if results is not None else self.results()
        reported_by: set[tuple[str, str, str]] = {
            (r.event, r.round, r.origin) for r in given
            if r.standing in (Standing.COUNTED, Standing.ACCEPTED, Standing.HELD)}
        round_of = {r.journal: r.round for r in given if r.journal}
        out = []
        for pushed in self.rounds.values():
            playing, waiting, reported = [], [], []
            for table in pushed.tables:
                if (pushed.event, pushed.round, table) in reported_by:
                    reported.append(table)
                    continue
                shown = _playing(table, cards.get(table))
                on = self._on_card(pushed, table, shown, round_of, _dict(cards.get(table)))
                if on is None:
                    playing.append(shown)
                else:
                    waiting.append({**shown, **on})
            out.append({"round": pushed.round, "event": pushed.event,
                        "tables": list(pushed.tables), "reported": reported,
                        "playing": playing, "waiting": waiting,
                        "complete": not playing and not waiting,
                        "byes": [bye.as_json() for bye in pushed.byes],
                        "pushed_ms": pushed.at_ms})
        return out

    def _on_card(self, pushed: Pushed, table: str, shown: dict[str, Any],
                 round_of: dict[str, str], card: dict[str, Any]) -> dict[str, Any] | None:
        """None when TABLE's card may be playing PUSHED's match (its players and length are the
        row's, or nothing is known of it: no state, an older hall's round); else what it shows
        instead: `after` (the round whose pairing at TABLE the card's match is, "" for none),
        `over` (that match is over), `idle` (no match loaded)."""
        state = _dict(card.get("state"))
        row = pushed.rows.get(table) if pushed.rows is not None else None
        if row is None or not state:
            return None
        if not isinstance(state.get("players"), dict):
            return {"after": "", "over": False, "idle": True}
        journal = state.get("journal")
        before = round_of.get(f"{table}/{journal}") if isinstance(journal, str) else None
        over = before is not None or state.get("phase") == "match_over"
        if before == pushed.round or (before is None and _is_row(row, shown)):
            return None          # its match (a TAMPERED result of it is no report: it waits)
        if before is None:
            before = next((p.round for p in reversed(self.rounds.values())
                           if p is not pushed and p.rows is not None and table in p.rows
                           and _is_row(p.rows[table], shown)), "")
        return {"after": before, "over": over, "idle": False}

    def standings(self, form: str | None = None, event: str | None = None,
                  results: list[Result] | None = None) -> dict[str, Any]:
        """The standings under FORM's tie-breaks (default: the event's; standings.py), of
        EVENT's results (default: all): per player, its matches, wins, points for and against,
        each round's result and its place; what is not counted listed as excluded, with why."""
        data = standings(results if results is not None else self.results(),
                         form or self.form, self.round_names(), event)
        return {**data, "keys_dir": self.keys_dir is not None}

    # --- the director's word --------------------------------------------------------------------

    def accept(self, journal: str, sha256: str, by: str, on_disk: str) -> tuple[Result, Decision]:
        """The director accepts a held result (the journal and the SHA-256 the page showed;
        ON_DISK: the file's SHA-256 now): recorded in the hall's journal (decisions.py, synced)
        before it counts. Refused (a code, said on the page) for a result that is not held, a
        file that is not the one shown, or one whose match or pairing counts another result
        already. OSError when the decision could not be written (nothing counts then)."""
        assessed = self.results()
        result = next((r for r in assessed if r.journal == journal), None)
        if result is None:
            raise Refused(f"no result from {journal[:200]!r}", "no_result",
                          journal=journal[:200])
        if result.standing is not Standing.HELD:
            code = "already_counted" if result.counted else "not_acceptable"
            raise Refused(f"{journal}: {result.standing.value}; only a held result is "
                          "accepted", code, journal=journal, other=journal)
        if not sha256 or result.sha256 != sha256 or on_disk != sha256:
            raise Refused(f"{journal} is not the file the page showed (its SHA-256 differs): "
                          "reload the results", "changed", journal=journal)
        other = conflict(result, assessed)
        if other is not None:
            raise Refused(f"{other.journal} counts already for this match or pairing",
                          "already_counted", journal=journal, other=other.journal)
        why = result.reason.code.value if result.reason is not None else ""
        decision = self.decisions.record("accepted", by, journal=journal, sha256=sha256,
                                         table=result.table, held=why)
        return result, decision


def _kept_row(row: PairedMatch) -> PairedMatch:
    """A pushed row as the results compare it: its names cut as a journal's are; an id that
    is not one is dropped (a file read back)."""
    return PairedMatch(row.table, cut(row.left, MAX_NAME_LENGTH), cut(row.right, MAX_NAME_LENGTH),
                       row.length, cut(row.discipline, 40), _id(row.left_id), _id(row.right_id))


def _id(value: object) -> str:
    return value if isinstance(value, str) and PLAYER_ID.fullmatch(value) else ""


def merged_byes(before: Iterable[Bye], given: Iterable[Bye]) -> tuple[Bye, ...]:
    """A round's byes: BEFORE's, then GIVEN's (a player's bye once: by its id, else its name),
    each name cut as a journal's, at most `MAX_BYES`."""
    out: dict[tuple[str, str], Bye] = {}
    for bye in (*before, *given):
        kept = Bye(cut(bye.player, MAX_NAME_LENGTH), _id(bye.player_id))
        if kept.player and len(out) < MAX_BYES:
            out[("id", kept.player_id) if kept.player_id else ("name", kept.player)] = kept
    return tuple(out.values())


def _byes_of(value: object) -> tuple[Bye, ...]:
    """A round's byes as the file kept them."""
    if not isinstance(value, list):
        return ()
    return merged_byes((), (Bye(item["player"], str(item.get("player_id") or ""))
                            for item in value[:MAX_BYES]
                            if isinstance(item, dict) and isinstance(item.get("player"), str)))


def _is_row(row: PairedMatch, shown: dict[str, Any]) -> bool:
    """The card (`_playing`'s) shows ROW's match: its players and length."""
    return (cut(shown.get("left"), MAX_NAME_LENGTH), cut(shown.get("right"), MAX_NAME_LENGTH),
            shown.get("match_length")) == (row.left, row.right, row.length)


def _rows_of(value: object) -> dict[str, PairedMatch] | None:
    """A round's rows as the file kept them (None: an older hall's round, no rows)."""
    if not isinstance(value, list):
        return None
    rows: dict[str, PairedMatch] = {}
    for item in value[:1000]:
        if not isinstance(item, dict):
            continue
        table, length = item.get("table"), item.get("length")
        if isinstance(table, str) and TABLE_ID.fullmatch(table) and type(length) is int:
            rows[table] = _kept_row(PairedMatch(table, str(item.get("left", "")),
                                                str(item.get("right", "")), length,
                                                str(item.get("discipline") or ""),
                                                _id(item.get("left_id")),
                                                _id(item.get("right_id"))))
    return rows


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
    """The counted results (what the standings count; the pairing software takes them as they
    are): a held, TAMPERED or unfinished result is on the page and in the JSON, not here. A
    bye: no table, no right player, no length or journal, 0-0, its player the winner."""
    return csv_text(RESULT_COLUMNS, (
        (r.round, r.table, r.left, r.right, "" if r.bye else r.length, r.left_score,
         r.right_score, r.winner_name, r.ended_by if not r.error else "unreadable",
         "" if r.bye else journal_cell(r), r.left_id, r.right_id)
        for r in results if r.counted))


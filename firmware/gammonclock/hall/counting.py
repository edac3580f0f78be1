"""The one rule of what counts (SPEC §14.1 "A table's account speaks only for that table"), pure:
each finished match's result, read from a journal a table's account sent (results.py), is
*counted*, *held* for the director, or *not counted*; the standings count exactly what is
counted (or accepted), and `/api/results.json` says the same of each result.

Counted, only when all of these hold:
- its journal verifies with that table's own device key (`KEYS/TABLE.key`, TABLE the account it
  came from: the archive folder); a journal sealed by another key is TAMPERED (archive.py);
- its players and length (and discipline, when the row gave one), event and round are those of
  the pairing pushed to that table for that round; or, for a match the director moved onto it,
  of the pairing pushed to the table the match started on: each hand-over its header names
  (`continues`, and `continues.before` for a match moved again) must be a `moved` decision of
  the director (decisions.py) naming the table it came from, the table it went to, the journal
  and its last record;
- it is the only finished journal of its match (its chain), and the only match with a result
  for that pairing.
Held, with its reason, is everything else that finished: no key, no pairing or round pushed,
not the pairing, a hand-over the director did not make, a second finished journal of one match
(two clocks played it: a fork), a second match for one pairing. A held result counts once the
director accepts it on the page: an `accepted` decision naming the journal and its SHA-256 (a
different file under that name later is not accepted by it). Never counted: a TAMPERED or
unreadable journal (the arbiter brings the clock's card: the record is false), an abandoned
match (no winner), one player on both sides. Not a result: a match not finished, and a journal
that ended as moved (its match goes on in another journal).

A match is its chain of journals: the first journal (`TABLE/NAME`), found by following the
header's `continues` from journal to journal: a clock's own continuation of a damaged journal
(no `handover`: the same table) and the hand-overs the director made. A hand-over no decision
backs is not followed: another table's header cannot make its journal part of someone else's
match (and so hold that match's result as a fork).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gammonclock.core.rules import EndReason

from .pairings import Bye, PairedMatch

if TYPE_CHECKING:              # results.py imports this module: the types only
    from .decisions import Decision
    from .results import Result

# An archived journal's verdict, as the results say it (results.verdict_word).
INTACT, TAMPERED, NOT_CHECKED, UNREADABLE = "intact", "TAMPERED", "seal not checked", "unreadable"
# How a journal ended (`Result.ended_by` holds EndReason's value): moved, its match goes on in
# another journal; abandoned, no winner (issue 31).
MOVED_END = EndReason.MOVED.value
ABANDONED_END = EndReason.ABANDONED.value
MAX_LINKS = 8               # hand-overs followed back through `continues.before`
MAX_FIELD = 160             # a header's file name or a table as the hall repeats it


class Standing(Enum):
    """Where a result stands."""

    COUNTED = "counted"          # verified, its pairing's, the only one of its match
    ACCEPTED = "accepted"        # held, and accepted by the director: counted
    HELD = "held"                # for the director to accept (its reason says why)
    NOT_COUNTED = "not_counted"  # never: TAMPERED, unreadable, abandoned, one player twice
    PLAYING = "playing"          # not finished: not a result yet
    MOVED = "moved"              # ended as moved: its match goes on in another journal


class Why(Enum):
    """Why a result is held (the first group) or not counted (the second)."""

    NO_KEYS_DIR = "no_keys_dir"            # the hall was given no --keys-dir
    NO_KEY = "no_key"                      # no KEYS/TABLE.key
    NOT_MOVED = "not_moved"                # a hand-over the director did not make
    NO_ROUND = "no_round"                  # the match file names no round
    ROUND_NOT_PUSHED = "round_not_pushed"  # its round (of its event) was not pushed here
    PAIRING_NOT_KEPT = "pairing_not_kept"  # pushed by a hall that kept no rows
    NO_PAIRING = "no_pairing"              # its round pushed nothing to its table
    NOT_THE_PAIRING = "not_the_pairing"    # players, length or discipline differ
    FORK = "fork"                          # another finished journal of the same match
    PAIRING_TAKEN = "pairing_taken"        # another match's result for the same pairing
    TAMPERED = "tampered"
    UNREADABLE = "unreadable"
    ABANDONED = "abandoned"
    SAME_PLAYER = "same_player"


Field = str | int


@dataclass(frozen=True)
class Reason:
    """Why, as a code and its fields (the page words it in its language: texts.json's
    `results.why.CODE`), and in English (the log, the CSV reader, an older page)."""

    code: Why
    fields: dict[str, Field] = field(default_factory=dict)

    def as_json(self) -> dict[str, Field]:
        return {**self.fields, "code": self.code.value}

    @property
    def text(self) -> str:
        f = self.fields
        return {
            Why.NO_KEYS_DIR: "the hall was started without --keys-dir: it cannot check the "
                             "journal's seals",
            Why.NO_KEY: f"no key for {f.get('table')} ({f.get('key')}): the journal's seals "
                        "cannot be checked",
            Why.NOT_MOVED: f"it continues {f.get('file')} of {f.get('source')}, which the "
                           f"director did not move to {f.get('to')}",
            Why.NO_ROUND: "the match file names no round",
            Why.ROUND_NOT_PUSHED: f"round {f.get('round')} of {f.get('event') or '—'} was not "
                                  "pushed from this hall",
            Why.PAIRING_NOT_KEPT: f"round {f.get('round')} was pushed by a hall that did not "
                                  "keep its pairings",
            Why.NO_PAIRING: f"round {f.get('round')} pushed no match to {f.get('table')}",
            Why.NOT_THE_PAIRING: f"not the pairing pushed to {f.get('table')}: "
                                 f"{f.get('left')} v {f.get('right')} to {f.get('length')}"
                                 + (f", {f.get('discipline')}" if f.get("discipline") else ""),
            Why.FORK: f"another journal of the same match finished too ({f.get('other')}): "
                      "two clocks played one match",
            Why.PAIRING_TAKEN: f"another match has a result for this pairing ({f.get('other')})",
            Why.TAMPERED: "TAMPERED",
            Why.UNREADABLE: str(f.get("detail") or "unreadable"),
            Why.ABANDONED: "abandoned",
            Why.SAME_PLAYER: "one player on both sides",
        }[self.code]


@dataclass(frozen=True)
class Link:
    """One `continues` of a journal's header: the journal it goes on from, the table that
    journal was on (a hand-over's `table`; "" for a clock's own continuation: the same table),
    and its last record."""

    file: str
    table: str
    handover: bool
    seq: int | None


def links_of(header: Mapping[str, Any]) -> tuple[Link, ...]:
    """The `continues` of a journal's header and each `before` in it, newest first (at most
    MAX_LINKS; an entry that is not one ends them)."""
    out: list[Link] = []
    at: object = header.get("continues")
    while isinstance(at, dict) and len(out) < MAX_LINKS:
        name, table, seq = at.get("file"), at.get("table"), at.get("seq")
        if not isinstance(name, str) or not name:
            break
        handover = at.get("handover") is True
        out.append(Link(_cut(name), _cut(table) if handover and isinstance(table, str) else "",
                        handover, seq if type(seq) is int else None))
        at = at.get("before")
    return tuple(out)


def _cut(text: str) -> str:
    return " ".join(text.split())[:MAX_FIELD]


@dataclass(frozen=True)
class Pushed:
    """A round the hall pushed: its event, name, tables in push order, and each table's pairing
    (`rows`; None for a round an older hall pushed, which kept only its tables); its byes (the
    director's word: each counts as it is, results.py)."""

    event: str
    round: str
    tables: tuple[str, ...]
    at_ms: int
    rows: Mapping[str, PairedMatch] | None = None
    byes: tuple[Bye, ...] = ()


@dataclass(frozen=True)
class Chain:
    """A result's match: its first journal (`TABLE/NAME`), the table its pairing was pushed to
    (`origin`), and the hand-over no decision backs, if any."""

    first: str
    origin: str
    unbacked: Link | None = None
    unbacked_to: str = ""


def chain_of(table: str, name: str, links: Sequence[Link],
             moves: Mapping[tuple[str, str, str], Decision]) -> Chain:
    """Follow the journal's hand-overs back to its match's first journal; stop at one the
    director did not make (a `moved` decision of its source, target, journal and last seq)."""
    holder, first = table, name
    for link in links:
        if link.handover:
            move = moves.get((link.table, holder, link.file))
            seq = move.fields.get("seq") if move is not None else None
            if move is None or (type(seq) is int and seq != link.seq):
                return Chain(f"{holder}/{first}", holder, link, holder)
            holder = link.table
        first = link.file
    return Chain(f"{holder}/{first}", holder)


RoundKey = tuple[str, str]            # (event, round): an archive may hold two events' rounds


def assess(results: Iterable[Result], rounds: Mapping[RoundKey, Pushed],
           decisions: Iterable[Decision], keys_dir: Path | None) -> list[Result]:
    """Each result with where it stands (`standing`, `reason`, `accepted_by`), its match
    (`chain`) and the table its pairing was pushed to (`origin`), in the order given."""
    accepted: dict[tuple[str, str], Decision] = {}
    moves: dict[tuple[str, str, str], Decision] = {}
    for d in decisions:
        if d.kind == "accepted":
            accepted.setdefault((d.get("journal"), d.get("sha256")), d)
        elif d.kind == "moved":
            moves[(d.get("source"), d.get("to"), d.get("journal"))] = d   # the latest
    out = [_own(r, rounds, accepted, moves, keys_dir) for r in results]
    # One match, one result: a second finished journal of a chain is a fork.
    by_chain: dict[str, list[int]] = defaultdict(list)
    for i, r in enumerate(out):
        if r.standing in (Standing.COUNTED, Standing.ACCEPTED, Standing.HELD):
            by_chain[r.chain].append(i)
    _hold_others(out, by_chain.values(), Why.FORK)
    # One pairing, one match: a second match's result for it is held.
    by_pairing: dict[tuple[str, str, str], list[int]] = defaultdict(list)
    for i, r in enumerate(out):
        if r.matched and r.standing in (Standing.COUNTED, Standing.ACCEPTED):
            by_pairing[(r.event, r.round, r.origin)].append(i)
    _hold_others(out, by_pairing.values(), Why.PAIRING_TAKEN)
    return out


def _hold_others(out: list[Result], groups: Iterable[list[int]], why: Why) -> None:
    for group in groups:
        if len(group) < 2:
            continue
        for i in group:
            if out[i].standing is Standing.COUNTED:
                others = [out[j].journal for j in group if j != i]
                out[i] = replace(out[i], standing=Standing.HELD, reason=Reason(
                    why, {"other": others[0], "others": len(others)}))


def _own(r: Result, rounds: Mapping[RoundKey, Pushed], accepted: Mapping[tuple[str, str], Decision],
         moves: Mapping[tuple[str, str, str], Decision], keys_dir: Path | None) -> Result:
    """A result's standing on its own (before it is set against the others)."""
    table, _, name = r.journal.partition("/")
    chain = chain_of(table, name, r.links, moves)
    r = replace(r, chain=chain.first, origin=chain.origin)
    if r.error:
        return _not_counted(r, Reason(Why.UNREADABLE, {"detail": r.error}))
    if r.verdict == TAMPERED:
        return _not_counted(r, Reason(Why.TAMPERED))
    if not r.finished:
        return replace(r, standing=Standing.PLAYING)
    if r.verdict not in (INTACT, NOT_CHECKED):
        return _not_counted(r, Reason(Why.UNREADABLE, {"detail": r.verdict_text}))
    if r.ended_by == MOVED_END:
        return replace(r, standing=Standing.MOVED)
    if r.ended_by == ABANDONED_END:
        return _not_counted(r, Reason(Why.ABANDONED))
    if r.left == r.right:
        return _not_counted(r, Reason(Why.SAME_PLAYER))
    pairing = _pairing_reason(r, chain.origin, rounds) if chain.unbacked is None else None
    r = replace(r, matched=chain.unbacked is None and pairing is None)
    reason = _key_reason(r, keys_dir)
    if reason is None and chain.unbacked is not None:
        link = chain.unbacked
        reason = Reason(Why.NOT_MOVED, {"file": link.file, "source": link.table,
                                        "to": chain.unbacked_to})
    reason = reason or pairing
    decision = accepted.get((r.journal, r.sha256))
    if decision is not None:
        return replace(r, standing=Standing.ACCEPTED, reason=reason, accepted_by=decision.by,
                       accepted_at_ms=decision.at_ms)
    if reason is not None:
        return replace(r, standing=Standing.HELD, reason=reason)
    return replace(r, standing=Standing.COUNTED)


def _not_counted(r: Result, reason: Reason) -> Result:
    return replace(r, standing=Standing.NOT_COUNTED, reason=reason)


def _key_reason(r: Result, keys_dir: Path | None) -> Reason | None:
    if r.verdict == INTACT:
        return None
    if keys_dir is None:
        return Reason(Why.NO_KEYS_DIR)
    return Reason(Why.NO_KEY, {"table": r.table, "key": f"{keys_dir}/{r.table}.key"})


def _pairing_reason(r: Result, origin: str, rounds: Mapping[RoundKey, Pushed]
                    ) -> Reason | None:
    """Why the result is not the pairing pushed to ORIGIN for its round; None when it is."""
    if not r.round:
        return Reason(Why.NO_ROUND)
    pushed = rounds.get((r.event, r.round))
    if pushed is None:
        return Reason(Why.ROUND_NOT_PUSHED, {"round": r.round, "event": r.event})
    if pushed.rows is None:
        return Reason(Why.PAIRING_NOT_KEPT, {"round": r.round})
    row = pushed.rows.get(origin)
    if row is None:
        return Reason(Why.NO_PAIRING, {"round": r.round, "table": origin})
    if (row.left, row.right, row.length) != (r.left, r.right, r.length) or (
            row.discipline and row.discipline != r.discipline):
        return Reason(Why.NOT_THE_PAIRING, {**row.as_json(), "round": r.round})
    return None


def conflict(r: Result, assessed: Iterable[Result]) -> Result | None:
    """Another result that counts for R's match, or (when R is its pairing's) for R's pairing:
    accepting R would count one match, or one pairing, twice."""
    for other in assessed:
        if other.journal == r.journal or not other.counted:
            continue
        if other.chain == r.chain or (r.matched and other.matched and (
                other.event, other.round, other.origin) == (r.event, r.round, r.origin)):
            return other
    return None

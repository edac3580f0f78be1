"""The event's standings (SPEC §14 "Results"), pure: from the results the hall recomputed from the
archived journals (results.py), each player's matches, wins, points for and against, each
round's result (opponent, W/L, score), and a ranking with the tie-breaks of the event's format.

What counts is counting.py's one rule, and nothing else: the standings count exactly the results
whose `counted` is true (`/api/results.json` says the same of each), and list every other
result that finished under `excluded`, with its reason as a code and fields (`held`: the
director may accept it; else never counted: TAMPERED, unreadable, abandoned, one player on both
sides). Whatever ended it, a counted match counts the same: a win, a loss (or, for a match tied
at its length, a draw: half a win each), and the journal's final score as points (a match lost
on the flag, by disqualification or by challenges gives the winner the match length: the
engine's `lose_match`).
- A bye (a pairings row with no table and no right player, pushed by the director: results.py)
  is the common Swiss rule's: a match won, with no points for or against and no opponent (it
  adds nothing to Buchholz, Sonneborn-Berger or head-to-head); `played` counts it, `byes`
  says how many. A forfeit before any play (a player did not come) is the arbiter's
  `disqualify` or `forfeit` at the table: a finished match like any other.
- A player is its id when its pairing gave one (`left_id`, `right_id`: two players of one name
  are two), else its name exactly as the pairings wrote it (the journal's, spaces collapsed);
  a player given an id in one round and none in another is two.
- The standings are of every result the archive holds, or of one event's (its match files'
  `[event] name`, as the round form gave it): an archive that holds two events' journals
  names both (`events`).

The ranking (`TIE_BREAKS`), each step only among the players still tied by all before it;
players tied by every step share the place (listed by name):
- Swiss: score (wins, a draw half), Buchholz (the sum of each opponent's score, once per
  match), Sonneborn-Berger (the sum of the scores of the opponents beaten, half of those
  drawn with), point difference (points for less against), head-to-head (score in the
  matches among the tied players).
- Round robin: score, head-to-head among the tied, point difference, points for.
- When a later step leaves fewer players tied than head-to-head was taken among, head-to-head
  (and the steps after it) is taken again among those few only (as UEFA's rules do): of three
  tied in a circle of wins, the two left tied by points are ordered by their own match.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from gammonclock.core.rules import json_points
from gammonclock.errors import GammonclockError

from .counting import Standing

if TYPE_CHECKING:              # results.py imports this module: the type only
    from .results import Result

SWISS, ROUND_ROBIN = "swiss", "round-robin"
FORMATS = (SWISS, ROUND_ROBIN)
SCORE, BUCHHOLZ, SONNEBORN_BERGER = "score", "buchholz", "sonneborn_berger"
POINT_DIFFERENCE, POINTS_FOR, HEAD_TO_HEAD = "point_difference", "points_for", "head_to_head"
TIE_BREAKS = {SWISS: (SCORE, BUCHHOLZ, SONNEBORN_BERGER, POINT_DIFFERENCE, HEAD_TO_HEAD),
              ROUND_ROBIN: (SCORE, HEAD_TO_HEAD, POINT_DIFFERENCE, POINTS_FOR)}
WIN, LOSS, DRAW = "W", "L", "D"
WORTH = {WIN: Fraction(1), DRAW: Fraction(1, 2), LOSS: Fraction(0)}


class StandingsError(GammonclockError, ValueError):
    """A format the standings do not know."""


@dataclass(frozen=True)
class Meeting:
    """One match as one player saw it (a bye: no opponent)."""

    round: str
    table: str
    opponent: str
    outcome: str                 # WIN, LOSS, DRAW
    scored: Fraction
    conceded: Fraction
    ended_by: str
    journal: str
    opponent_key: PlayerKey | None = None     # None: a bye
    opponent_id: str = ""

    @property
    def bye(self) -> bool:
        return self.opponent_key is None

    def as_json(self) -> dict[str, Any]:
        return {"opponent": self.opponent, "opponent_id": self.opponent_id,
                "result": self.outcome, "bye": self.bye,
                "for": json_points(self.scored), "against": json_points(self.conceded),
                "table": self.table, "ended_by": self.ended_by, "journal": self.journal}

    @property
    def text(self) -> str:
        """The CSV's cell: `W 7-3 v Boris`, `W bye`."""
        if self.bye:
            return f"{self.outcome} bye"
        return (f"{self.outcome} {json_points(self.scored)}-{json_points(self.conceded)} "
                f"v {self.opponent}")


PlayerKey = tuple[str, str]     # ("id", ID) or ("name", NAME): never one for the other


def player_key(name: str, player_id: str) -> PlayerKey:
    """Who a player is: its id when its pairing gave one, else its name."""
    return ("id", player_id) if player_id else ("name", name)


@dataclass
class Player:
    name: str
    player_id: str = ""
    meetings: list[Meeting] = field(default_factory=list)

    @property
    def key(self) -> PlayerKey:
        return player_key(self.name, self.player_id)

    @property
    def order(self) -> tuple[str, str]:
        """Listed by name among the tied (then by id: two of one name)."""
        return self.name, self.player_id

    def count(self, outcome: str) -> int:
        return sum(1 for m in self.meetings if m.outcome == outcome)

    @property
    def score(self) -> Fraction:
        return sum((WORTH[m.outcome] for m in self.meetings), Fraction(0))

    @property
    def points_for(self) -> Fraction:
        return sum((m.scored for m in self.meetings), Fraction(0))

    @property
    def points_against(self) -> Fraction:
        return sum((m.conceded for m in self.meetings), Fraction(0))


def standings(results: Iterable[Result], form: str = SWISS,
              rounds: Sequence[str] = (), event: str | None = None) -> dict[str, Any]:
    """The standings of RESULTS (in the order the hall lists them) under FORM's tie-breaks;
    ROUNDS: the pushed rounds' names, in push order (the rounds' columns come in this order,
    then any other round in the order its first result came); EVENT: only its results (its
    match files' `[event] name`; None: every event's). `events` lists every event named."""
    if form not in FORMATS:
        raise StandingsError(f"format {form!r} is not one of {', '.join(FORMATS)}")
    given = list(results)
    events = sorted({r.event for r in given})
    counted, excluded = select(r for r in given if event is None or r.event == event)
    players: dict[PlayerKey, Player] = {}
    named = list(dict.fromkeys(r.round for r in counted))
    order = [r for r in rounds if r in named] + [r for r in named if r not in rounds]
    for r in counted:
        if r.bye:
            _player(players, r.left, r.left_id).meetings.append(Meeting(
                r.round, "", "", WIN, Fraction(0), Fraction(0), r.ended_by, ""))
            continue
        left = Fraction(r.left_score)
        right = Fraction(r.right_score)
        outcome = {"left": (WIN, LOSS), "right": (LOSS, WIN)}.get(r.winner, (DRAW, DRAW))
        for (name, mine_id), (other, other_id), mine, scored, conceded in (
                ((r.left, r.left_id), (r.right, r.right_id), outcome[0], left, right),
                ((r.right, r.right_id), (r.left, r.left_id), outcome[1], right, left)):
            _player(players, name, mine_id).meetings.append(Meeting(
                r.round, r.table, other, mine, scored, conceded, r.ended_by, r.journal,
                player_key(other, other_id), other_id))
    measure = measures(players)
    places = rank(players, form, measure)
    return {"format": form, "tie_breaks": list(TIE_BREAKS[form]), "event": event,
            "events": events, "rounds": order,
            "players": [_player_json(measure, p, place, shared, decided, order)
                        for place, shared, decided, p in places],
            "excluded": excluded}


def _player(players: dict[PlayerKey, Player], name: str, player_id: str) -> Player:
    """The player of that id (else that name); its name the latest given."""
    key = player_key(name, player_id)
    player = players.setdefault(key, Player(name, player_id))
    player.name = name
    return player


def select(results: Iterable[Result]) -> tuple[list[Result], list[dict[str, Any]]]:
    """The results that count (`counted`: counting.py's rule), and the finished ones that do
    not, each with why: its code (`counting.Why`) and fields, in English too (`why`)."""
    counted: list[Result] = []
    excluded: list[dict[str, Any]] = []
    for r in results:
        if r.counted:
            counted.append(r)
        elif r.standing in (Standing.HELD, Standing.NOT_COUNTED) and r.reason is not None:
            excluded.append({"journal": r.journal, "table": r.table, "round": r.round,
                             "verdict": r.verdict, "code": r.reason.code.value,
                             "fields": r.reason.fields, "why": r.reason.text,
                             "held": r.standing is Standing.HELD})
    return counted, excluded


# --- the ranking ---------------------------------------------------------------------------------

Measure = Callable[[Player, Sequence[Player]], Fraction]


def measures(players: dict[PlayerKey, Player]) -> dict[str, Measure]:
    """Each tie-break's value of a player, among GROUP (the players tied with it so far); a bye
    has no opponent: it adds nothing to Buchholz, Sonneborn-Berger or head-to-head."""
    scores = {key: p.score for key, p in players.items()}

    def buchholz(p: Player, group: Sequence[Player]) -> Fraction:
        return sum((scores[m.opponent_key] for m in p.meetings if m.opponent_key is not None),
                   Fraction(0))

    def sonneborn_berger(p: Player, group: Sequence[Player]) -> Fraction:
        return sum((scores[m.opponent_key] * WORTH[m.outcome] for m in p.meetings
                    if m.opponent_key is not None), Fraction(0))

    def head_to_head(p: Player, group: Sequence[Player]) -> Fraction:
        tied = {q.key for q in group}
        return sum((WORTH[m.outcome] for m in p.meetings if m.opponent_key in tied),
                   Fraction(0))

    return {SCORE: lambda p, g: p.score, BUCHHOLZ: buchholz, SONNEBORN_BERGER: sonneborn_berger,
            POINT_DIFFERENCE: lambda p, g: p.points_for - p.points_against,
            POINTS_FOR: lambda p, g: p.points_for, HEAD_TO_HEAD: head_to_head}


def rank(players: dict[PlayerKey, Player], form: str, measure: dict[str, Measure] | None = None
         ) -> list[tuple[int, bool, str, Player]]:
    """Each player with its place, whether the place is shared, and the tie-break that set it
    apart from the player above ("" for the first and for a shared place), best first."""
    measure = measure or measures(players)
    steps_of = TIE_BREAKS[form]
    again = steps_of[steps_of.index(HEAD_TO_HEAD):]
    ordered: list[tuple[list[Player], str]] = []

    def split(group: list[Player], steps: Sequence[str], decided: str, met: int) -> None:
        if len(group) > 1 and not steps and len(group) < met:
            steps = again             # fewer still tied: head-to-head among them, and on
        if len(group) == 1 or not steps:
            ordered.append((sorted(group, key=lambda p: p.order), decided))
            return
        if steps[0] == HEAD_TO_HEAD:
            met = len(group)
        value = {p.key: measure[steps[0]](p, group) for p in group}
        levels = sorted(set(value.values()), reverse=True)
        for i, level in enumerate(levels):
            split([p for p in group if value[p.key] == level], steps[1:],
                  steps[0] if i else decided, met)

    split(sorted(players.values(), key=lambda p: p.order), steps_of, "", len(players) + 1)
    out: list[tuple[int, bool, str, Player]] = []
    for group, decided in ordered:
        place = len(out) + 1
        for i, p in enumerate(group):
            out.append((place, len(group) > 1, "" if i else decided, p))
    return out


def _player_json(measure: dict[str, Measure], p: Player, place: int, shared: bool,
                 decided: str, rounds: Sequence[str]) -> dict[str, Any]:
    by_round: dict[str, list[dict[str, Any]]] = {}
    for m in p.meetings:
        by_round.setdefault(m.round, []).append(m.as_json())
    return {"rank": place, "shared": shared, "decided_by": decided, "player": p.name,
            "player_id": p.player_id, "byes": sum(1 for m in p.meetings if m.bye),
            "played": len(p.meetings), "wins": p.count(WIN), "draws": p.count(DRAW),
            "losses": p.count(LOSS), "score": json_points(p.score),
            "points_for": json_points(p.points_for),
            "points_against": json_points(p.points_against),
            "point_difference": json_points(p.points_for - p.points_against),
            "buchholz": json_points(measure[BUCHHOLZ](p, ())),
            "sonneborn_berger": json_points(measure[SONNEBORN_BERGER](p, ())),
            "rounds": {r: by_round[r] for r in rounds if r in by_round},
            "round_texts": {r: "; ".join(m.text for m in p.meetings if m.round == r)
                            for r in rounds if r in by_round}}

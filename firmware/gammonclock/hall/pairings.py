"""A round's pairings (SPEC §14): a CSV `table,left,right,length[,discipline][,left_id,right_id]`,
one match file per row, each checked by the same parser a clock uses before it is pushed to
`P/TABLE/match`.

A row with a problem is reported with its line and what is allowed; the good rows go out all the
same (a typo at one table does not hold up the hall).

- `left_id`, `right_id` (optional): each player's id, as the pairing software knows them
  (`PLAYER_ID`: 1–32 of A-Z a-z 0-9 `_ . -`, the first a letter or digit, so never a
  spreadsheet's formula). The hall keeps them with the row (never in the match file: a table
  cannot say them); the results and the standings key a player by its id when the row gave
  one, so two players of one name are two. One id twice in a round, or on both sides of a row,
  is refused.
- A **bye**: a row with `table` and `right` empty gives `left` (and `left_id`) a bye; its length
  and discipline may be left empty and are not used. Nothing is pushed to a table; the hall
  keeps it with the round, and it counts as the director's word (SPEC §14.1): a result
  `ended_by = bye`. A player given a bye who is also paired in the round (by id, else by name),
  or given two, is refused.
"""

from __future__ import annotations

import csv
import io
import json
import re
from dataclasses import dataclass, field
from typing import Any

from gammonclock.config.converters import Name
from gammonclock.config.loading import ConfigError, parse_match_config
from gammonclock.config.problems import said
from gammonclock.words import LANGUAGES

from .accounts import TABLE_ID

COLUMNS = ("table", "left", "right", "length")
OPTIONAL = ("discipline", "left_id", "right_id")
MAX_ROWS = 1000
PLAYER_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,31}")    # a player's id (`left_id`)


@dataclass(frozen=True)
class PairedMatch:
    """What a good row pushed to its table, as the clock's parser read it: the players, the
    length and (when the row gave one) the discipline; the hall's results hold a finished
    journal to it (counting.py)."""

    table: str
    left: str
    right: str
    length: int
    discipline: str = ""        # "" when the row gave none
    left_id: str = ""           # the players' ids ("" when the row gave none)
    right_id: str = ""

    def as_json(self) -> dict[str, Any]:
        ids = {"left_id": self.left_id, "right_id": self.right_id}
        return {"table": self.table, "left": self.left, "right": self.right,
                "length": self.length, "discipline": self.discipline,
                **(ids if self.left_id or self.right_id else {})}


@dataclass(frozen=True)
class Bye:
    """A bye a row gave (no table, no opponent): the player's name and id ("" when none)."""

    player: str
    player_id: str = ""

    def as_json(self) -> dict[str, Any]:
        return {"player": self.player, "player_id": self.player_id}


@dataclass(frozen=True)
class Pairing:
    line: int
    table: str
    toml: str | None = None
    error: str | None = None
    # the error as a code and its fields, for the page to say in its language (words.py)
    code: str | None = None
    fields: dict[str, Any] = field(default_factory=dict)
    match: PairedMatch | None = None      # a good row's match (with `toml`)
    bye: Bye | None = None                # a good bye row's (no `toml`: nothing is pushed)


def toml_string(text: str) -> str:
    """A TOML basic string (JSON's escapes are TOML's)."""
    return json.dumps(text, ensure_ascii=False)


def match_toml(left: str, right: str, length: int, discipline: str | None,
               event: str = "", round_name: str = "") -> str:
    lines = ["# pushed by gammonclock hall", "[match]"]
    if discipline:
        lines.append(f"discipline = {toml_string(discipline)}")
    lines += [f"length = {length}", "", "[players]", f"left = {toml_string(left)}",
              f"right = {toml_string(right)}"]
    if event or round_name:
        lines += ["", "[event]", f"name = {toml_string(event)}",
                  f"round = {toml_string(round_name)}"]
    return "\n".join(lines) + "\n"


def parse_pairings(text: str, event: str = "", round_name: str = "",
                   known: set[str] | None = None) -> list[Pairing]:
    """Every row of the CSV, each a match file or an error naming its line. `known` tables
    let a bare number `12` stand for a known `table-12`."""
    rows = list(csv.reader(io.StringIO(text.lstrip("\ufeff"))))
    if not rows:
        return [Pairing(1, "", error="the CSV is empty; its first line is the header "
                                     "table,left,right,length[,discipline]", code="empty")]
    header = [h.strip().lower() for h in rows[0]]
    missing = [c for c in COLUMNS if c not in header]
    unknown = [h for h in header if h and h not in COLUMNS + OPTIONAL]
    if missing or unknown:
        what = (f"missing column(s) {', '.join(missing)}" if missing
                else f"unknown column(s) {', '.join(unknown)}")
        return [Pairing(1, "", error=f"line 1: {what}; the header is "
                                     "table,left,right,length and optionally discipline, "
                                     "left_id, right_id",
                        code="columns_missing" if missing else "columns_unknown",
                        fields={"columns": ", ".join(missing or unknown)})]
    if len(rows) - 1 > MAX_ROWS:
        return [Pairing(1, "", error=f"{len(rows) - 1} rows; at most {MAX_ROWS}",
                        code="too_many_rows", fields={"rows": len(rows) - 1, "max": MAX_ROWS})]
    out: list[Pairing] = []
    seen: dict[str, int] = {}
    for number, row in enumerate(rows[1:], start=2):
        if not any(cell.strip() for cell in row):
            continue
        out.append(_row(number, dict(zip(header, (c.strip() for c in row), strict=False)),
                        len(row) - len(header), seen, event, round_name, known or set()))
    if not out:
        out.append(Pairing(2, "", error="no pairings under the header", code="no_rows"))
    return players_once(out)


def _row(number: int, cells: dict[str, str], extra: int, seen: dict[str, int], event: str,
         round_name: str, known: set[str]) -> Pairing:
    if is_bye(cells):
        return bye_row(number, cells, extra)
    table = cells.get("table", "")
    if table.isdigit() and table not in known and f"table-{table}" in known:
        table = f"table-{table}"

    def bad(why: str, code: str, **fields: Any) -> Pairing:
        return Pairing(number, table, error=f"line {number}: {why}", code=code,
                       fields={"line": number, **fields})

    if extra > 0:
        return bad(f"{extra} cell(s) more than the header has", "extra_cells", n=extra)
    if TABLE_ID.fullmatch(table) is None:
        return bad(f"table {table!r} is not a table id (1–32 of A-Z a-z 0-9 _ -)", "bad_table",
                   table=repr(table))
    if table in seen:
        return bad(f"table {table} is paired twice (also on line {seen[table]})",
                   "paired_twice", table=table, also=seen[table])
    seen[table] = number
    left, right = cells.get("left", ""), cells.get("right", "")
    if not left or not right:
        return bad("both players need a name (left, right)", "no_names")
    length_text = cells.get("length", "")
    if not length_text.isdigit() or not 1 <= int(length_text) <= 99:
        return bad(f"length {length_text!r} is not a match length; use a number from 1 to 99",
                   "bad_length", length=repr(length_text))
    ids = player_ids(cells)
    if isinstance(ids, BadId):
        return bad(ids.why, ids.code, id=ids.id)
    text = match_toml(left, right, int(length_text), cells.get("discipline") or None, event,
                      round_name)
    try:
        config = parse_match_config(text, f"line {number}")
    except ConfigError as exc:
        # The clock's own words for its match file, in each language the page speaks.
        return bad(str(exc).replace("\n", "; "), "config",
                   problem={"en": str(exc).replace("\n", "; "),
                            **{lang: "; ".join(said(p, lang) for p in exc.problems)
                               for lang in LANGUAGES if lang != "en"}})
    rules = config.rules
    return Pairing(number, table, toml=text, match=PairedMatch(
        table, rules.names.left, rules.names.right, int(rules.length),
        rules.discipline.name if cells.get("discipline") else "", *ids))


# --- players' ids and byes -----------------------------------------------------------------------

@dataclass(frozen=True)
class BadId:
    """What is wrong with a row's player ids: its words, code and the id (as `repr` shows it)."""

    why: str
    code: str
    id: str


def player_ids(cells: dict[str, str]) -> tuple[str, str] | BadId:
    """The row's `left_id` and `right_id` ("" when not given), or what is wrong with them."""
    ids = cells.get("left_id", ""), cells.get("right_id", "")
    for given in ids:
        if given and PLAYER_ID.fullmatch(given) is None:
            shown = repr(given[:40])
            return BadId(f"{shown} is not a player id (1–32 of A-Z a-z 0-9 _ . -, the first a "
                         "letter or digit)", "bad_player_id", shown)
    if ids[0] and ids[0] == ids[1]:
        return BadId(f"player id {ids[0]} is on both sides", "same_player_id", ids[0])
    return ids


def is_bye(cells: dict[str, str]) -> bool:
    """A bye row: no table, no right player, a left one."""
    return not cells.get("table") and not cells.get("right") and bool(cells.get("left"))


def bye_row(number: int, cells: dict[str, str], extra: int) -> Pairing:
    """A bye row read: its player (a name as a match file's, its id if given), or its problem."""
    def bad(why: str, code: str, **fields: Any) -> Pairing:
        return Pairing(number, "", error=f"line {number}: {why}", code=code,
                       fields={"line": number, **fields})

    if extra > 0:
        return bad(f"{extra} cell(s) more than the header has", "extra_cells", n=extra)
    if cells.get("right_id"):
        return bad("a bye (no table, no right player) has no right_id", "bye_right_id")
    ids = player_ids(cells)
    if isinstance(ids, BadId):
        return bad(ids.why, ids.code, id=ids.id)
    try:
        name = Name().check(cells.get("left", ""))
    except ValueError as exc:
        problem = exc.args[0] if exc.args else exc
        return bad(str(problem), "config", problem={lang: said(problem, lang)
                                                    for lang in LANGUAGES})
    return Pairing(number, "", bye=Bye(name, ids[0]))


def players_once(rows: list[Pairing]) -> list[Pairing]:
    """Each player once in a round: a row whose player id another row has already, or a bye
    whose player (its id, else its name) is paired or given a bye in another row, is refused
    (the later row, naming the earlier line)."""
    ids: dict[str, int] = {}
    names: dict[str, int] = {}
    for row in rows:
        if row.match is not None:
            for side in (row.match.left_id, row.match.right_id):
                if side:
                    ids.setdefault(side, row.line)
            for side in (row.match.left, row.match.right):
                names.setdefault(side, row.line)
    out = []
    for row in rows:
        twice = _twice(row, ids, names)
        out.append(row if twice is None else Pairing(
            row.line, row.table, error=f"line {row.line}: {twice[0]} is paired twice "
                                       f"(also on line {twice[1]})", code="player_twice",
            fields={"line": row.line, "player": twice[0], "also": twice[1]}))
    return out


def _twice(row: Pairing, ids: dict[str, int], names: dict[str, int]) -> tuple[str, int] | None:
    """The player of ROW another row has (and that row's line), or None."""
    if row.match is not None:
        for side in (row.match.left_id, row.match.right_id):
            if side and ids[side] != row.line:
                return side, ids[side]
        return None
    if row.bye is None:
        return None
    key, seen = (row.bye.player_id, ids) if row.bye.player_id else (row.bye.player, names)
    if key in seen and seen[key] != row.line:
        return key, seen[key]
    seen[key] = row.line
    return None

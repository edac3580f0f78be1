"""A round's pairings (SPEC §14): a CSV `table,left,right,length[,discipline]`, one match file per
row, each checked by the same parser a clock uses before it is pushed to `P/TABLE/match`.

A row with a problem is reported with its line and what is allowed; the good rows go out all the
same (a typo at one table does not hold up the hall).
"""

from __future__ import annotations

import csv
import io
import json
from dataclasses import dataclass, field
from typing import Any

from gammonclock.config.loading import ConfigError, parse_match_config
from gammonclock.config.problems import said
from gammonclock.words import LANGUAGES

from .accounts import TABLE_ID

COLUMNS = ("table", "left", "right", "length")
OPTIONAL = ("discipline",)
MAX_ROWS = 1000


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

    def as_json(self) -> dict[str, Any]:
        return {"table": self.table, "left": self.left, "right": self.right,
                "length": self.length, "discipline": self.discipline}


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
                                     "table,left,right,length and optionally discipline",
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
    return out


def _row(number: int, cells: dict[str, str], extra: int, seen: dict[str, int], event: str,
         round_name: str, known: set[str]) -> Pairing:
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
        rules.discipline.name if cells.get("discipline") else ""))

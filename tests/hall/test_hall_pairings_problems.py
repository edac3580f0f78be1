"""Issue 32, a pushed round's rows: a row with several problems reported only its first, and a table
paired twice had its first row pushed anyway. Now every problem of a row is reported (each with
its code and fields, for the page's languages), and a table on more than one line refuses the
whole round, every one of those lines naming them all (hall/pairings.py)."""

from __future__ import annotations

import pytest

from gammonclock.hall.pairings import parse_pairings

HEAD = "table,left,right,length,discipline\n"


@pytest.mark.parametrize(("row", "codes"), [
    ("t1,Anna,Boris,7,", []),
    ("t 1,Anna,Boris,7,", ["bad_table"]),
    ("t 1,,Boris,0,", ["bad_table", "no_names", "bad_length"]),
    ("t1,,,abc,chess", ["no_names", "bad_length", "config"]),
    (",,Boris,100,", ["bad_table", "no_names", "bad_length"]),
    ("t1,Anna,Boris,7,chess", ["config"]),
    ("t1,Anna,Boris,7,,extra", ["extra_cells"]),
    ("t!,Anna,,7,chess,extra", ["extra_cells", "bad_table", "no_names", "config"]),
])
def test_every_problem_of_a_row_is_reported(row: str, codes: list[str]) -> None:
    [pairing] = parse_pairings(HEAD + row + "\n")
    assert [p.code for p in pairing.problems] == codes
    if not codes:
        assert pairing.error is None and pairing.toml is not None
        return
    assert pairing.toml is None and pairing.match is None
    assert pairing.code == codes[0]                        # the first, as before
    # The English is every problem after its line; each problem has its own fields.
    assert pairing.error == "line 2: " + "; ".join(p.error for p in pairing.problems)
    said = pairing.problems_json()
    assert [p["code"] for p in said] == codes
    assert all(p["fields"]["line"] == 2 for p in said)
    for problem in said:
        if problem["code"] == "config":
            assert problem["fields"]["problem"]["en"] == problem["error"]
            assert "недопустимое значение" in problem["fields"]["problem"]["ru"]


@pytest.mark.parametrize(("rows", "twice", "lines"), [
    (["t1,A,B,7", "t2,C,D,7", "t1,E,F,7"], {2: "2, 4", 4: "2, 4"}, "t1"),
    (["t1,A,B,7", "t1,C,D,7", "t1,E,F,7"], {2: "2, 3, 4", 3: "2, 3, 4", 4: "2, 3, 4"}, "t1"),
    # A bare number stands for its known table: the same table.
    (["12,A,B,7", "table-12,C,D,7", "t3,E,F,7"], {2: "2, 3", 3: "2, 3"}, "table-12"),
    # A row with a problem of its own is named as a duplicate too.
    (["t1,A,,7", "t1,C,D,7", "t2,E,F,7"], {2: "2, 3", 3: "2, 3"}, "t1"),
    # Two tables twice: each line names its own table's lines.
    (["t1,A,B,7", "t2,C,D,7", "t1,E,F,7", "t2,G,H,7"],
     {2: "2, 4", 4: "2, 4", 3: "3, 5", 5: "3, 5"}, "t1, t2"),
])
def test_a_table_paired_twice_refuses_the_round(rows: list[str], twice: dict[int, str],
                                                lines: str) -> None:
    pairings = parse_pairings(HEAD + "\n".join(rows) + "\n", known={"table-12"})
    assert all(p.toml is None and p.match is None for p in pairings), "nothing is pushed"
    for pairing in pairings:
        codes = [p.code for p in pairing.problems]
        if pairing.line in twice:
            [problem] = [p for p in pairing.problems if p.code == "paired_twice"]
            assert problem.fields["lines"] == twice[pairing.line]
            assert problem.fields["table"] == pairing.table
            assert problem.fields["also"] != pairing.line
            assert f"paired on lines {twice[pairing.line]}" in (pairing.error or "")
        else:
            assert codes == ["round_refused"], codes
            assert pairing.problems[0].fields == {"tables": lines}


def test_rows_without_a_table_id_are_not_duplicates() -> None:
    pairings = parse_pairings(HEAD + ",A,B,7\n,C,D,7\nt1,E,F,7\n")
    assert [[p.code for p in r.problems] for r in pairings] == [["bad_table"], ["bad_table"], []]
    assert pairings[2].toml is not None                    # the good row still goes

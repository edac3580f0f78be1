"""The hall's retained `P/T/moved` as both sides read it (wire.Moved, hall/PROTOCOL.md): what the
hall writes is read back as it was; anything else is refused naming the field."""

from __future__ import annotations

import pytest

from gammonclock.wire import Moved


def test_what_the_hall_writes_the_clock_reads_back() -> None:
    moved = Moved("match-0003-table-1-Анна-Boris.jsonl", "table-9", "director",
                  "2026-12-07T19:00:00.000Z")
    assert Moved.parse(moved.payload()) == moved


@pytest.mark.parametrize(("payload", "field"), [
    (b"[]", "object"),
    (b"{}", "`journal`"),
    (b'{"journal": "match-1.jsonl"}', "`to`"),
    (b'{"journal": "match-1.jsonl", "to": 9}', "`to`"),
    (b'{"journal": "", "to": "table-9"}', "`journal`"),
    (b'{"journal": "match-1.jsonl", "to": "table-9", "by": ["x"]}', "`by`"),
    (b'{"journal": "m.jsonl", "to": "' + b"t" * 33 + b'"}', "`to`"),
    (b'{"journal": NaN, "to": "table-9"}', "not JSON"),
    (b"\xff", "not JSON"),
    (b"{" * 5000, "longer than"),
])
def test_anything_else_is_refused_naming_what(payload: bytes, field: str) -> None:
    with pytest.raises(ValueError, match=field):
        Moved.parse(payload)


def test_a_journal_that_is_no_journals_name_is_refused() -> None:
    for name in ("../x.jsonl", "match-1", ".hidden.jsonl", "a\nb.jsonl"):
        payload = Moved(name, "table-9", "director", "").payload()
        with pytest.raises(ValueError, match="`journal` must be a journal's name"):
            Moved.parse(payload)

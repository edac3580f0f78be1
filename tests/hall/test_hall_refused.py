"""A director's action the hall refuses says why as a code the page words in its language
(hall/continuation.py `Refused`), the same code whatever else is wrong with the request."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from gammonclock.cli.main import build_parser
from gammonclock.hall.actions import MAX_COMMAND
from gammonclock.hall.continuation import NoWholeCopy, Refused
from gammonclock.hall.run import options_of
from gammonclock.hall.server import Hall


def _hall(tmp_path: Path) -> Hall:
    secret = tmp_path / "hall.password"
    secret.write_text("s3cret\n", encoding="utf-8")
    options, _ = options_of(build_parser().parse_args(
        ["hall", "--broker", "mqtt://127.0.0.1:1883", "--password-file", str(secret),
         "--archive", str(tmp_path)]))
    return Hall(options)


def test_a_refused_command_carries_the_code_of_what_refused_it(tmp_path: Path) -> None:
    """Checked before any message goes out (no broker is needed): a command too long for any
    table is `command_length` (its bound in `fields`) even to an unknown table, whose own
    refusal is `no_table`; a table's name from the request is shown cut."""
    hall = _hall(tmp_path)
    with pytest.raises(Refused) as long:
        asyncio.run(hall.command("table-x" * 100, "x" * (MAX_COMMAND + 1), "director"))
    assert (long.value.code, long.value.fields) == ("command_length", {"max": MAX_COMMAND})
    assert str(long.value) == f"a command is one line of 1 to {MAX_COMMAND} characters"
    with pytest.raises(Refused) as blank:
        asyncio.run(hall.command("table-1", " \t ", "director"))
    assert blank.value.code == "command_length"
    with pytest.raises(Refused) as unknown:
        asyncio.run(hall.command("table-x" * 100, "status", "director"))
    assert (unknown.value.code, unknown.value.fields) == ("no_table", {})
    assert len(str(unknown.value)) < 100 and isinstance(unknown.value, ValueError)


def test_a_move_from_a_table_the_hall_holds_nothing_of_is_refused_with_its_code(
        tmp_path: Path) -> None:
    hall = _hall(tmp_path)
    with pytest.raises(NoWholeCopy) as none:
        asyncio.run(hall.move("t" * 5000, "table-2", "director", live=True))
    assert none.value.code == "no_copy" and isinstance(none.value, Refused)
    assert none.value.fields == {"table": "t" * 40} and len(str(none.value)) < 200

"""`gammonclock hall add-table ID` (SPEC §14) with the real `mosquitto_passwd` and, where a
login tells, the real broker: it makes a table's account and never takes or changes the
director's, nor an existing table's without `--replace`.

A missing `mosquitto_passwd` or `mosquitto` fails these tests (mqtt_helpers.find_binary): it never
skips them.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from mqtt_helpers import DIRECTOR, Broker, find_binary, logs_in

DIRECTOR_PASSWORD = "director-pw"


def add_table(tmp_path: Path, table: str, *more: str, password_file: Path | None = None
              ) -> subprocess.CompletedProcess[str]:
    find_binary("mosquitto_passwd")         # fails the test, with the reason, when missing
    return subprocess.run(
        [sys.executable, "-m", "gammonclock", "hall", "add-table", table, "--password-file",
         str(password_file or tmp_path / "passwords" / table), "--mosquitto-passwd",
         str(tmp_path / "broker" / "passwd"), *more],
        capture_output=True, text=True, timeout=30)


@pytest.fixture
def broker(tmp_path: Path) -> Broker:
    """The director's account in the password file (the broker not started yet)."""
    return Broker(tmp_path / "broker", {DIRECTOR: DIRECTOR_PASSWORD})


@pytest.mark.parametrize("name", [
    "hall", "HALL", "Hall",                                 # the director's account
    "hall-hall", "Hall-Director",                           # client id gammonclock-hall-…
    "gammonclock-hall-hall", "gammonclock-table-1",         # a client id as an account
])
def test_a_name_of_the_directors_is_refused_and_changes_nothing(tmp_path: Path, broker: Broker,
                                                                name: str) -> None:
    passwd = tmp_path / "broker" / "passwd"
    before = passwd.read_bytes()
    done = add_table(tmp_path, name)
    assert done.returncode == 2
    assert done.stderr.startswith(f"gammonclock hall add-table: {name!r} cannot be a table's "
                                  f"account: ")
    assert done.stdout == ""                # no [hall] section that hands out the account
    assert passwd.read_bytes() == before
    assert not (tmp_path / "passwords").exists()
    broker.start()
    try:
        assert logs_in(broker, DIRECTOR, DIRECTOR_PASSWORD)
    finally:
        broker.stop()


def test_add_table_hall_says_why(tmp_path: Path, broker: Broker) -> None:
    done = add_table(tmp_path, "hall")
    assert done.stderr == ("gammonclock hall add-table: 'hall' cannot be a table's account: the "
                           "director's account in hall/acl; name the table otherwise (e.g. "
                           "table-1)\n")


@pytest.mark.parametrize("name", ["bad id", "../x", "table:1", "#", "+", "x" * 33, "стол-1",
                                  "table-1\n"])
def test_a_name_that_is_not_a_table_id_is_refused(tmp_path: Path, broker: Broker,
                                                  name: str) -> None:
    passwd = tmp_path / "broker" / "passwd"
    before = passwd.read_bytes()
    done = add_table(tmp_path, name, password_file=tmp_path / "table.password")
    assert done.returncode == 2 and "is not a table id" in done.stderr
    assert done.stdout == "" and passwd.read_bytes() == before
    assert not (tmp_path / "table.password").exists()


def test_an_existing_table_account_is_kept_unless_replace(tmp_path: Path, broker: Broker
                                                          ) -> None:
    passwd = tmp_path / "broker" / "passwd"
    first = add_table(tmp_path, "table-7")
    assert first.returncode == 0, first.stderr
    old_password = (tmp_path / "passwords" / "table-7").read_text().strip()
    with_table = passwd.read_bytes()

    # Again with another password file (a slip, or someone else's): refused, nothing changes.
    other = tmp_path / "other.password"
    other.write_text("another-password\n")
    again = add_table(tmp_path, "table-7", password_file=other)
    assert again.returncode == 2 and again.stdout == ""
    assert again.stderr == (
        f"gammonclock hall add-table: account table-7 is already in {passwd}; its password is "
        f"unchanged. To give it the password in {other}, run again with --replace (the table "
        f"then needs that file as its hall.password)\n")
    assert passwd.read_bytes() == with_table
    broker.start()
    try:
        assert logs_in(broker, "table-7", old_password)
        assert not logs_in(broker, "table-7", "another-password")
    finally:
        broker.stop()

    # With --replace: the account takes the file's password; the director's is untouched.
    replaced = add_table(tmp_path, "table-7", "--replace", password_file=other)
    assert replaced.returncode == 0, replaced.stderr
    assert 'username = "table-7"' in replaced.stdout
    broker.start()
    try:
        assert logs_in(broker, "table-7", "another-password")
        assert not logs_in(broker, "table-7", old_password)
        assert logs_in(broker, DIRECTOR, DIRECTOR_PASSWORD)
    finally:
        broker.stop()


def test_replace_never_reaches_the_directors_account(tmp_path: Path, broker: Broker) -> None:
    done = add_table(tmp_path, "hall", "--replace")
    assert done.returncode == 2 and "cannot be a table's account" in done.stderr
    broker.start()
    try:
        assert logs_in(broker, DIRECTOR, DIRECTOR_PASSWORD)
    finally:
        broker.stop()


def test_a_new_table_beside_the_director_gets_its_account(tmp_path: Path, broker: Broker
                                                          ) -> None:
    done = add_table(tmp_path, "Table_12")
    assert done.returncode == 0, done.stderr
    assert 'username = "Table_12"' in done.stdout
    password = (tmp_path / "passwords" / "Table_12").read_text().strip()
    broker.start()
    try:
        assert logs_in(broker, "Table_12", password)
        assert logs_in(broker, DIRECTOR, DIRECTOR_PASSWORD)
    finally:
        broker.stop()

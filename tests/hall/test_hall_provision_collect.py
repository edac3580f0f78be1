"""`gammonclock hall provision --collect STICK…` (issue 32): the key a clock kept (it had sealed
journals before) comes back on its provisioning stick as `returned.key` + `returned.table` and
becomes KEYS_DIR/TABLE.key, so that its journals verify at the hall. It may change only that
table's key; over a different key only when that key is the one this very stick offered (the
clock declined it), or with `--replace`. Garbage (not a key, a table id that is not one, a
link, a huge file, a folder that is not) is refused naming the file, and nothing changes.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Callable
from pathlib import Path

import pytest

from gammonclock.hall.archive import verify_archived
from hall_provision_helpers import Stick, contents, provision
from move_helpers import sealed_lines


def key_text(key: bytes) -> str:
    return key.hex() + "\n"


def new_key() -> bytes:
    return secrets.token_bytes(32)


@pytest.fixture
def stick(tmp_path: Path) -> Stick:
    """table-1 provisioned: its stick's folder (its key offered, kept at the hall)."""
    done = provision(tmp_path, "table-1", "--to", str(tmp_path / "sticks"))
    assert done.returncode == 0, done.stderr
    return Stick(tmp_path / "sticks" / "table-1")


def collect(tmp_path: Path, *sticks: Path, more: tuple[str, ...] = ()) -> tuple[int, str, str]:
    done = provision(tmp_path, "--collect", *map(str, sticks), *more)
    return done.returncode, done.stdout, done.stderr


def test_a_kept_key_comes_back_and_the_clocks_journal_verifies(tmp_path: Path,
                                                               stick: Stick) -> None:
    keys = tmp_path / "hall" / "keys"
    own = new_key()                                # the clock's own, its journals sealed so
    journal = tmp_path / "archive" / "table-1" / "match-1.jsonl"
    journal.parent.mkdir(parents=True)
    sealed_lines(journal, own)
    assert verify_archived(journal, "table-1", keys).message.startswith("TAMPERED")
    stick.returned("table-1", key_text(own))
    code, out, err = collect(tmp_path, stick.root)
    assert code == 0, err
    assert out == (f"table-1: its own key taken in place of the one the stick offered "
                   f"({stick.root}, {keys / 'table-1.key'})\n")
    assert (keys / "table-1.key").read_text() == key_text(own)
    assert oct(os.stat(keys / "table-1.key").st_mode & 0o777) == "0o640"
    verdict = verify_archived(journal, "table-1", keys)
    assert verdict.ok and verdict.verified, verdict.message
    # Again: the hall holds it already, nothing to do.
    code, out, _ = collect(tmp_path, stick.root)
    assert code == 0 and "the hall holds this key already, unchanged" in out


def test_a_different_key_is_refused_unless_replace(tmp_path: Path, stick: Stick) -> None:
    keys = tmp_path / "hall" / "keys"
    held = new_key()                    # e.g. a key collected before, its journals verified
    (keys / "table-1.key").write_text(key_text(held))
    stick.returned("table-1", key_text(new_key()))
    before = contents(tmp_path / "hall")
    code, out, err = collect(tmp_path, stick.root)
    assert code == 2 and out == ""
    assert err == (f"gammonclock hall provision: {stick.root}: the hall holds another key for "
                   f"table-1 (journals it sealed verify only with it); nothing changed. "
                   f"--replace takes the stick's key instead\n")
    assert contents(tmp_path / "hall") == before
    code, out, err = collect(tmp_path, stick.root, more=("--replace",))
    assert code == 0, err
    assert "its key taken in place of the hall's (--replace)" in out
    assert (keys / "table-1.key").read_text() == (stick.folder / "returned.key").read_text()


def test_a_key_for_a_table_the_hall_has_none_of_is_taken(tmp_path: Path) -> None:
    root = tmp_path / "stick"
    (root / "gammonclock" / "provision").mkdir(parents=True)
    own = new_key()
    Stick(root).returned("table-9", key_text(own))
    code, out, err = collect(tmp_path, root)
    assert code == 0, err
    assert out.startswith("table-9: its key taken")
    assert (tmp_path / "hall" / "keys" / "table-9.key").read_text() == key_text(own)


def _huge(stick: Stick) -> None:
    (stick.folder / "returned.key").write_text("ab" * 100_000)


def _link(stick: Stick) -> None:
    (stick.folder / "returned.key").unlink()
    os.symlink(stick.folder / "device.key", stick.folder / "returned.key")


def _linked_folder(stick: Stick) -> None:
    real = stick.root / "elsewhere"
    stick.folder.rename(real)
    os.symlink(real, stick.folder)


def _no_table(stick: Stick) -> None:
    (stick.folder / "returned.table").unlink()


def _fifo(stick: Stick) -> None:
    (stick.folder / "returned.key").unlink()
    os.mkfifo(stick.folder / "returned.key")


HOSTILE: list[tuple[str, Callable[[Stick], None], str]] = [
    ("not hex", lambda s: (s.folder / "returned.key").write_text("zz" * 32 + "\n"),
     "returned.key: the device key is not hex text"),
    ("short", lambda s: (s.folder / "returned.key").write_text("ab" * 16 + "\n"),
     "returned.key: the device key holds 16 bytes; a device key has at least 32"),
    ("empty", lambda s: (s.folder / "returned.key").write_text(""),
     "returned.key: the device key is empty"),
    ("huge", _huge, "returned.key: 200000 bytes, more than a returned file holds (4096)"),
    ("a link", _link, "returned.key: is not a plain file (a link or another kind of file is "
                      "refused)"),
    ("a fifo", _fifo, "returned.key: is not a plain file"),
    ("a linked folder", _linked_folder, "gammonclock/provision: is not a folder (a link"),
    ("a slash", lambda s: (s.folder / "returned.table").write_text("../table-1\n"),
     "returned.table: '../table-1' is not a table id"),
    ("the director", lambda s: (s.folder / "returned.table").write_text("hall\n"),
     "returned.table: 'hall' cannot be a table's account"),
    ("long table", lambda s: (s.folder / "returned.table").write_text("t" * 100),
     "returned.table: 100 bytes, more than a returned file holds (64)"),
    ("binary table", lambda s: (s.folder / "returned.table").write_bytes(b"\xff\xfe\n"),
     "returned.table: holds no table id"),
    ("no table", _no_table, "returned.table: is not there (no key was returned on this "
                            "stick)"),
]


@pytest.mark.parametrize(("what", "spoil", "said"), HOSTILE, ids=[h[0] for h in HOSTILE])
def test_garbage_on_a_stick_is_refused_naming_the_file_and_nothing_changes(
        tmp_path: Path, stick: Stick, what: str, spoil: Callable[[Stick], None],
        said: str) -> None:
    stick.returned("table-1", key_text(new_key()))
    spoil(stick)
    before = contents(tmp_path / "hall")
    code, out, err = collect(tmp_path, stick.root, more=("--replace",))
    assert code == 2 and out == "", what
    assert err.startswith(f"gammonclock hall provision: {stick.root}/gammonclock/provision"), err
    assert said in err, err
    assert contents(tmp_path / "hall") == before


def test_one_bad_stick_among_good_ones_changes_nothing(tmp_path: Path, stick: Stick) -> None:
    good = tmp_path / "good"
    (good / "gammonclock" / "provision").mkdir(parents=True)
    Stick(good).returned("table-2", key_text(new_key()))
    stick.returned("table-1", "not a key\n")
    not_a_folder = tmp_path / "a-file"
    not_a_folder.write_text("x")
    before = contents(tmp_path / "hall")
    code, _, err = collect(tmp_path, good, stick.root, not_a_folder)
    assert code == 2
    assert err.count("gammonclock hall provision: ") == 2
    assert f"{not_a_folder}: is not a folder (the stick's root)" in err
    assert contents(tmp_path / "hall") == before


def test_two_sticks_with_two_keys_for_one_table_are_refused(tmp_path: Path) -> None:
    sticks = []
    for name in ("a", "b"):
        root = tmp_path / name
        (root / "gammonclock" / "provision").mkdir(parents=True)
        Stick(root).returned("table-5", key_text(new_key()))
        sticks.append(root)
    code, _, err = collect(tmp_path, *sticks)
    assert code == 2 and f"another key for table-5 than {sticks[0]}'s" in err
    assert not (tmp_path / "hall" / "keys").exists()


def test_collect_takes_sticks_not_tables(tmp_path: Path, stick: Stick) -> None:
    done = provision(tmp_path, "table-1", "--collect", str(stick.root))
    assert done.returncode == 2 and "--collect takes sticks' folders, not tables" in done.stderr

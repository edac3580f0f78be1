"""One verdict, one vocabulary (issue 19, item 5): `gammonclock verify` and `gammonclock export`
say the same words of a journal — intact; TAMPERED; sealed by another device (its key id); seal
not checked (no key) — the chain (checksums, links, sequence, replay) checked in every case.
`verify` exits 0 when the chain holds and only the seal could not be checked, 1 when tampered."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from gammonclock.cli.main import main
from gammonclock.hall.archive import verify_archived
from gammonclock.journal.key import key_id, load_or_create_key, read_key
from journal_helpers import bodies_of, journaled_run, sealed

Change = Callable[[list[bytes]], list[bytes]]


def _byte_changed(lines: list[bytes]) -> list[bytes]:
    """One byte of record 5 changed (its body, so its checksum no longer holds)."""
    line = lines[5]
    assert b'"boot":"test-boot"' in line
    return [*lines[:5], line.replace(b'"boot":"test-boot"', b'"boot":"test-booT"'), *lines[6:]]


TORN = 30      # bytes of a half-written last line


CHANGES: dict[str, tuple[Change, str | None]] = {
    # name: (the change, what is wrong; None: intact)
    "intact": (lambda lines: lines, None),
    "one byte changed": (_byte_changed,
                         "line 6: record 5 was altered (checksum does not match)"),
    "a record removed": (lambda lines: lines[:5] + lines[6:], "line 6: record 5 was removed"),
    "a torn last line": (lambda lines: lines + [lines[-1][:TORN]], None),
}

KEYS = ("own key", "another device's key", "no key")


def _journal(tmp_path: Path, change: Change) -> tuple[Path, int]:
    """A journal of a played match, changed; and its whole records (before the change)."""
    path, _, _ = journaled_run(tmp_path)
    lines = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(b"".join(change(lines)))
    return path, len(lines)


def _state_dir(tmp_path: Path, which: str) -> Path:
    """The state folder `--state-dir` names: the journal's own key, another's, or none."""
    if which == "own key":
        return tmp_path / "state"
    if which == "another device's key":
        load_or_create_key(tmp_path / "other")
        return tmp_path / "other"
    (tmp_path / "empty").mkdir()
    return tmp_path / "empty"


def _expected(tmp_path: Path, which: str, state: Path, wrong: str | None, records: int,
              change: str) -> str:
    if wrong is not None:
        return f"TAMPERED: {wrong}"
    intact = f"intact: {records} records"
    if change == "a torn last line":
        intact += f"; a torn last line of {TORN} bytes was dropped"
    if which == "own key":
        return intact
    if which == "another device's key":
        return (f"sealed by another device (key id {key_id(read_key(tmp_path / 'state'))}; "
                f"this device's key id {key_id(read_key(state))}): seal not checked; "
                f"chain {intact}")
    return (f"seal not checked: no device key given ({state / 'device.key'} is not there); "
            f"chain {intact}")


@pytest.mark.parametrize("change", list(CHANGES))
@pytest.mark.parametrize("which", KEYS)
def test_verify_and_export_say_the_same_verdict(tmp_path, capsys, monkeypatch, which, change):
    monkeypatch.delenv("GAMMONCLOCK_STATE_DIR", raising=False)
    edit, wrong = CHANGES[change]
    path, records = _journal(tmp_path, edit)
    state = _state_dir(tmp_path, which)
    expected = _expected(tmp_path, which, state, wrong, records, change)

    code = main(["verify", str(path), "--state-dir", str(state)])
    said = capsys.readouterr().out.splitlines()
    assert code == (1 if wrong else 0), said
    assert len(said) == 1
    if wrong:
        assert said[0] == f"{path}: {expected}"
    else:    # the verdict, then the match it replayed
        assert said[0] == f"{path}: {expected}; match: backgammon to 7, Anna v Boris, 0-4, " \
                          f"running"

    out = tmp_path / "export.json"
    export = ["export", str(path), "--format", "json", "--out", str(out), "--state-dir",
              str(state)]
    if wrong:       # refused, the verdict first (SPEC §14.1); allowed, written and marked
        assert main(export) == 1 and not out.exists()
        assert capsys.readouterr().err.splitlines()[0] == f"gammonclock: {path}: {expected}"
        assert main([*export, "--allow-tampered"]) == 1
        assert capsys.readouterr().err.splitlines()[0] == f"gammonclock: {path}: {expected}"
    else:
        assert main(export) == 0
        assert capsys.readouterr().out.splitlines()[0] == f"{path}: {expected}"
    assert json.loads(out.read_text(encoding="utf-8"))["seal"]["check"] == expected


def test_a_header_naming_another_key_over_records_sealed_with_this_one_is_tampered(
        tmp_path, capsys):
    """Changing the key id in the header (and its checksum) does not pass the journal off as
    another device's: the records after it are sealed with this device's key."""
    path, _, _ = journaled_run(tmp_path)
    lines = path.read_bytes().splitlines(keepends=True)
    header = bodies_of(path)[0]
    header["data"]["key_id"] = "0123456789abcdef"
    forged = sealed(bytes(32), [header])          # a checksum that holds, a seal that does not
    state = tmp_path / "state"
    # The links still hold: record 1's `prev` is the old header's mac, which the forger keeps.
    old_mac = json.loads(lines[0])["mac"]
    path.write_bytes(forged.replace(json.loads(forged)["mac"].encode(), old_mac.encode())
                     + b"".join(lines[1:]))
    assert main(["verify", str(path), "--state-dir", str(state)]) == 1
    assert capsys.readouterr().out == (f"{path}: TAMPERED: line 1: record 0 was altered (it "
                                       f"names another device's key; the records after it are "
                                       f"sealed with this one)\n")


def test_the_halls_archive_says_another_devices_journal_in_the_same_words(tmp_path):
    path, _, _ = journaled_run(tmp_path)
    keys = tmp_path / "keys"
    keys.mkdir()
    (keys / "table-1.key").write_bytes((tmp_path / "state" / "device.key").read_bytes())
    own = verify_archived(path, "table-1", keys)
    assert own.ok and own.sealed and own.message.startswith("intact: ")
    load_or_create_key(tmp_path / "other")
    (keys / "table-1.key").write_bytes((tmp_path / "other" / "device.key").read_bytes())
    # At the hall a journal sealed by another key than its table's is TAMPERED (SPEC §14.1:
    # a table's account speaks only with what that table's own key proves), naming both keys.
    other = verify_archived(path, "table-1", keys)
    assert not other.ok and other.tampered
    assert other.message.startswith(f"TAMPERED: sealed by another device's key (key id "
                                    f"{key_id(read_key(tmp_path / 'state'))}), not table-1's")

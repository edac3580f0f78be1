"""A hostile provisioning stick changes nothing (issue 32, SPEC §14.1): its device.toml may hold
only `[table]` id/event and `[hall]`, its file names stay inside the provision folder (no '..',
no absolute path, no link out), every file is a plain one of a bounded size, a bad key file
is refused, and a stick pulled out mid-read, or a state folder that fails mid-write, leaves the
clock's settings whole. A fresh clock (no PIN, no journal: it would take a good stick at once)
on mock hardware (venue_helpers)."""

from __future__ import annotations

import errno
import os
from collections.abc import Callable
from pathlib import Path

import pytest

from gammonclock.config.loading import PROVISIONED
from gammonclock.device.build import Device
from gammonclock.journal.key import read_key
from lifecycle_helpers import on_loop
from provision_helpers import (
    PROVISION,
    ask_clock,
    clock_in,
    new_key,
    plug,
    state_files,
    stick_toml,
    write_stick,
)
from usb_stick_helpers import fail
from venue_helpers import DEVICE_TEXT, Venue

URL = "mqtt://127.0.0.1:1883"


@pytest.fixture
def fresh(venues: Callable[[str], Venue], tmp_path: Path) -> Device:
    return clock_in(venues(DEVICE_TEXT), tmp_path)


def good(stick: Path) -> Path:
    return write_stick(stick, None, "table-1", key=new_key())


def rewrite(text: str) -> Callable[[Path], None]:
    return lambda folder: (folder / "device.toml").write_text(text, encoding="utf-8")


def link(name: str, target: str) -> Callable[[Path], None]:
    def make(folder: Path) -> None:
        (folder / name).unlink(missing_ok=True)
        (folder / name).symlink_to(target)
    return make


def write(name: str, data: bytes) -> Callable[[Path], None]:
    return lambda folder: (folder / name).write_bytes(data)


GOOD = stick_toml("table-1", URL)
SECRET = "/etc/hostname"

# (name, what is done to a good stick's provision folder, a fragment of the refusal)
HOSTILE: list[tuple[str, Callable[[Path], None], str]] = [
    ("an [arbiter] section", rewrite(GOOD + '\n[arbiter]\npin = "LLLL"\n'),
     "device.toml: arbiter: a provisioning stick sets only [table], [hall]"),
    ("a [hardware] section", rewrite(GOOD + '\n[hardware]\npin_factory = "mock"\n'),
     "device.toml: hardware: a provisioning stick sets only [table], [hall]"),
    ("[journal] state_dir", rewrite(GOOD + '\n[journal]\nstate_dir = "/tmp"\n'),
     "device.toml: journal: a provisioning stick sets only"),
    ("table.match_file", rewrite(GOOD.replace('[hall]', f'match_file = "{SECRET}"\n[hall]')),
     "device.toml: table.match_file: a provisioning stick sets only id, event of [table]"),
    ("an unknown [hall] key", rewrite(GOOD + 'client_id = "x"\n'),
     "device.toml: hall.client_id: a provisioning stick sets only broker, username, "
     "password_file, ca_file, prefix of [hall]"),
    ("a password file up a folder", rewrite(GOOD.replace('"hall.password"', '"../x"')),
     "device.toml: hall.password_file: ../x: must be the name of a file next to device.toml"),
    ("an absolute password file", rewrite(GOOD.replace('"hall.password"', f'"{SECRET}"')),
     f"hall.password_file: {SECRET}: must be the name of a file next to device.toml"),
    ("the key as the password file", rewrite(GOOD.replace('"hall.password"', '"device.key"')),
     "hall.password_file: device.key: must be the name of a file next to device.toml"),
    ("the record's name as the password", rewrite(GOOD.replace('"hall.password"',
                                                               '"provision.json"')),
     "hall.password_file: provision.json: must be the name of a file next to device.toml"),
    ("the password as the CA", rewrite(GOOD.replace('mqtt://', 'mqtts://')
                                       + 'ca_file = "hall.password"\n'),
     "hall.ca_file: hall.password: must be the name of a file next to device.toml"),
    ("a bad table id", rewrite(GOOD.replace('"table-1"', '"../etc"', 1)),
     "device.toml: table.id"),
    ("no table id", rewrite(GOOD.replace('id = "table-1"\n', '')),
     "device.toml: table.id: required on a provisioning stick"),
    ("not TOML", rewrite("[table\n"), "device.toml"),
    ("a linked password file", link("hall.password", SECRET),
     "hall.password: cannot read it: it is a link"),
    ("a linked device.toml", link("device.toml", SECRET), "device.toml: cannot read it"),
    ("a linked key", link("device.key", SECRET), "device.key: cannot read it"),
    ("a folder as the password", lambda f: ((f / "hall.password").unlink(),
                                            (f / "hall.password").mkdir()),
     "hall.password: not a plain file"),
    ("no password file", lambda f: (f / "hall.password").unlink(),
     "hall.password: not on the stick"),
    ("a huge device.toml", rewrite(GOOD + "#" * 10_000 + "\n"),
     "device.toml: larger than 4096 bytes"),
    ("a huge password", write("hall.password", b"x" * 5000),
     "hall.password: larger than 1024 bytes"),
    ("a short key", write("device.key", b"abcd\n"), "device.key: the device key holds 2 bytes"),
    ("a key that is not hex", write("device.key", b"z" * 64 + b"\n"),
     "device.key: the device key is not hex text"),
    ("a device.toml not UTF-8", write("device.toml", b"[table]\nid = \"\xff\"\n"),
     "device.toml: not UTF-8 text"),
]


@pytest.mark.parametrize(("name", "spoil", "said"), HOSTILE, ids=[row[0] for row in HOSTILE])
def test_a_hostile_stick_changes_nothing(fresh: Device, tmp_path: Path, name: str,
                                         spoil: Callable[[Path], None], said: str) -> None:
    before, key = state_files(fresh.table.state_dir), read_key(fresh.table.state_dir)
    stick = tmp_path / "stick"
    spoil(good(stick))
    answer = plug(fresh, stick)
    assert not answer["ok"], answer
    refusal = [line for line in answer["said"] if line.startswith("NOT provisioned: ")]
    assert len(refusal) == 1 and said in refusal[0], answer["said"]
    assert "nothing" in refusal[0]                  # … was taken
    assert state_files(fresh.table.state_dir) == before
    assert read_key(fresh.table.state_dir) == key
    assert not (fresh.table.state_dir / PROVISIONED).exists()
    assert fresh.table.table_id == "pi-3"


def test_a_linked_provision_folder_is_not_read(fresh: Device, tmp_path: Path) -> None:
    elsewhere = good(tmp_path / "elsewhere")
    stick = tmp_path / "stick"
    (stick / "gammonclock").mkdir(parents=True)
    (stick / PROVISION).symlink_to(elsewhere, target_is_directory=True)
    answer = plug(fresh, stick)
    assert not answer["ok"]
    assert any("is a link" in line for line in answer["said"]), answer["said"]
    assert not (fresh.table.state_dir / PROVISIONED).exists()


def test_a_stick_pulled_mid_read_leaves_the_old_settings_whole(
        fresh: Device, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    first = tmp_path / "first"
    write_stick(first, None, "table-1", key=new_key())
    assert plug(fresh, first)["ok"]
    kept = state_files(fresh.table.state_dir)
    second = tmp_path / "second"
    write_stick(second, None, "table-2", key=new_key())
    # The stick goes on its 3rd read (the password's, after device.toml's two): EIO on.
    fail(monkeypatch, second, "read", 3, errno.EIO)
    answer = plug(fresh, second)
    assert not answer["ok"], answer
    assert any("Input/output error" in line for line in answer["said"]), answer["said"]
    assert state_files(fresh.table.state_dir) == kept
    assert fresh.table.table_id == "table-1"


def test_a_state_folder_failing_mid_write_keeps_the_old_set(
        fresh: Device, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    first = tmp_path / "first"
    write_stick(first, None, "table-1", key=new_key())
    assert plug(fresh, first)["ok"]
    state = fresh.table.state_dir
    kept = (state / PROVISIONED / "device.toml").read_text()
    key = read_key(state)
    second = tmp_path / "second"
    write_stick(second, None, "table-2", key=new_key())
    real = os.replace

    def full(src: object, dst: object, *args: object, **kw: object) -> None:
        if str(dst).endswith(f"/{PROVISIONED}"):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(dst))
        real(src, dst, *args, **kw)                   # type: ignore[arg-type]
    offered = plug(fresh, second)          # provisioned already: only offered now
    assert offered["ok"] and "NOT taken" in offered["said"][-2], offered
    monkeypatch.setattr(os, "replace", full)
    answer = on_loop(fresh, lambda: ask_clock(state, ["provision"]))   # the arbiters' group
    monkeypatch.setattr(os, "replace", real)
    assert not answer["ok"], answer
    assert "No space left on device" in answer["error"], answer
    assert (state / PROVISIONED / "device.toml").read_text() == kept
    assert read_key(state) == key and fresh.table.table_id == "table-1"
    assert [p.name for p in state.iterdir() if p.name.startswith(("provisioned-", ".prov"))] \
        == [os.readlink(state / PROVISIONED)]           # nothing of the second set is left

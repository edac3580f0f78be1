"""The table id of a cloned card (issue 21): a director flashes one card and clones it for 40
tables, so every clone has the same host name. Without `[table] id`, a clock whose host name is a
stock one (raspberrypi, …) takes `pi-` and its Pi's serial number instead, and shows it on the
idle panels; a host name someone chose is kept (SPEC §13.1's default)."""

from __future__ import annotations

import re
import shutil
import socket
from pathlib import Path

import pytest

from gammonclock.config import table_id as table_id_module
from gammonclock.config.loading import parse_device_config
from gammonclock.config.table_id import default_table_id
from gammonclock.device.build import _idle_state
from gammonclock.hardware.glyphs import SMALL
from gammonclock.hardware.views import INNER_W, idle_view

TABLE_ID = re.compile(r"[A-Za-z0-9_-]{1,32}")
DEVICE_TOML = """\
[hardware]
pin_factory = "mock"

[table]
event = "Moscow Open"

[hall]
broker = "mqtt://10.0.0.2:1883"
"""
CPUINFO = """\
processor\t: 0
BogoMIPS\t: 108.00
Features\t: fp asimd evtstrm crc32 cpuid
CPU implementer\t: 0x41

Revision\t: c03115
Serial\t\t: {serial}
Model\t\t: Raspberry Pi 4 Model B Rev 1.5
"""


def flashed_card(root: Path, hostname: str = "raspberrypi") -> Path:
    """The files of one card as the director prepared it: its host name, machine id (made at
    its first boot, before it was cloned) and device config with no `[table] id`."""
    (root / "etc" / "gammonclock").mkdir(parents=True)
    (root / "etc" / "hostname").write_text(hostname + "\n")
    (root / "etc" / "machine-id").write_text("3d1219c7c4c5404aaa1f6d2a48adfda4\n")
    (root / "etc" / "gammonclock" / "device.toml").write_text(DEVICE_TOML)
    return root


def clone_on_a_pi(card: Path, root: Path, serial: str, where: str = "devicetree") -> Path:
    """`card` cloned and put in a Pi whose serial number is `serial`: the kernel shows it in the
    device tree (NUL-terminated) and in /proc/cpuinfo."""
    shutil.copytree(card, root)
    if where == "devicetree":
        tree = root / "sys" / "firmware" / "devicetree" / "base"
        tree.mkdir(parents=True)
        (tree / "serial-number").write_bytes(serial.encode() + b"\0")
    else:
        (root / "proc").mkdir()
        (root / "proc" / "cpuinfo").write_text(CPUINFO.format(serial=serial))
    return root


def boot(root: Path, monkeypatch: pytest.MonkeyPatch):
    """The device config as the clock of `root` reads it at boot."""
    hostname = (root / "etc" / "hostname").read_text().strip()
    monkeypatch.setattr(table_id_module, "SYSTEM_ROOT", root)
    monkeypatch.setattr(socket, "gethostname", lambda: hostname)
    device_toml = root / "etc" / "gammonclock" / "device.toml"
    return parse_device_config(device_toml.read_text(), str(device_toml)).device


def test_two_clocks_cloned_from_one_card_get_different_table_ids(tmp_path, monkeypatch):
    card = flashed_card(tmp_path / "card")
    one = boot(clone_on_a_pi(card, tmp_path / "one", "10000000a1b2c3d4"), monkeypatch)
    two = boot(clone_on_a_pi(card, tmp_path / "two", "10000000deadbeef", where="cpuinfo"),
               monkeypatch)
    assert (one.table_id, two.table_id) == ("pi-a1b2c3d4", "pi-deadbeef")
    # the hall's account follows the table id (the shipped ACL expects it)
    assert one.hall is not None and one.hall.username == "pi-a1b2c3d4"
    # the idle panels show it, whole
    for device in (one, two):
        assert _idle_state(device)()["table"] == device.table_id
        for lang in ("en", "ru"):
            title = idle_view(device.table_id, device.table_event, [], lang).title
            assert device.table_id in title and len(title) <= SMALL.chars(INNER_W), title


def test_a_table_id_set_in_the_device_config_wins(tmp_path, monkeypatch):
    card = flashed_card(tmp_path / "card")
    config = card / "etc" / "gammonclock" / "device.toml"
    config.write_text(config.read_text().replace("[table]\n", '[table]\nid = "table-12"\n'))
    device = boot(clone_on_a_pi(card, tmp_path / "one", "10000000a1b2c3d4"), monkeypatch)
    assert device.table_id == "table-12"


def test_a_host_name_someone_chose_is_still_the_table_id(tmp_path, monkeypatch):
    card = flashed_card(tmp_path / "card", hostname="table-12")
    device = boot(clone_on_a_pi(card, tmp_path / "one", "10000000a1b2c3d4"), monkeypatch)
    assert device.table_id == "table-12"


@pytest.mark.parametrize("hostname", ["raspberrypi", "RaspberryPi", "raspberrypi.local",
                                      "ubuntu", "debian", "dietpi", "localhost", "gammonclock",
                                      "", "стол"])
def test_a_stock_host_name_gives_the_serial(tmp_path, hostname):
    root = clone_on_a_pi(flashed_card(tmp_path / "card"), tmp_path / "pi", "10000000A1B2C3D4")
    assert default_table_id(hostname, root) == "pi-a1b2c3d4"


def test_a_pi_5s_serial_and_a_serial_of_zeros(tmp_path):
    card = flashed_card(tmp_path / "card")
    pi5 = clone_on_a_pi(card, tmp_path / "pi5", "7a1e2f3c4b5d6e70")
    assert default_table_id("raspberrypi", pi5) == "pi-4b5d6e70"
    # a board whose kernel shows no serial (zeros): the machine id, as on a PC
    zeros = clone_on_a_pi(card, tmp_path / "zeros", "0000000000000000", where="cpuinfo")
    assert default_table_id("raspberrypi", zeros) == "host-3d1219c7"


def test_without_a_serial_the_machine_id_and_without_either_the_host_name(tmp_path):
    pc = flashed_card(tmp_path / "pc")
    assert default_table_id("raspberrypi", pc) == "host-3d1219c7"
    (pc / "etc" / "machine-id").write_text("\n")       # an image before its first boot
    assert default_table_id("raspberrypi", pc) == "raspberrypi"
    assert default_table_id("", pc) == "gammonclock"


@pytest.mark.parametrize("serial", ["10000000a1b2c3d4", "ffffffffffffffff", "00000000000000ab",
                                    "abc-def_0123456789"])
def test_every_derived_id_is_a_valid_table_id(tmp_path, serial):
    root = clone_on_a_pi(flashed_card(tmp_path / "card"), tmp_path / "pi", serial)
    table_id = default_table_id("raspberrypi", root)
    assert TABLE_ID.fullmatch(table_id) and table_id.startswith("pi-"), table_id

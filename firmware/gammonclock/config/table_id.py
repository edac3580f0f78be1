"""A table's id when its device config sets none (SPEC §13.1): the host's short name, or for a
stock host name (which every clone of one card shares) the Pi's serial number or the machine id."""

from __future__ import annotations

import re
from pathlib import Path

TABLE_ID_LENGTH = 32
DEFAULT_TABLE_ID = "gammonclock"   # for a host whose name has none of the allowed characters


def table_id_from_host(hostname: str) -> str:
    """The host's short name, kept to the allowed characters of a table id."""
    short = hostname.split(".", 1)[0]
    return re.sub(r"[^A-Za-z0-9_-]", "", short)[:TABLE_ID_LENGTH] or DEFAULT_TABLE_ID


# Host names that name no table: an image's default, which every card flashed from it and every
# clone of one card share (Raspberry Pi OS and its Imager, Ubuntu, Debian, DietPi), and ours.
STOCK_HOST_NAMES = frozenset({"raspberrypi", "ubuntu", "debian", "dietpi", "localhost",
                              DEFAULT_TABLE_ID})
SYSTEM_ROOT = Path("/")            # where the machine's files are read (tests: a made-up root)
SERIAL_FILES = ("sys/firmware/devicetree/base/serial-number", "proc/cpuinfo")
MACHINE_ID_FILE = "etc/machine-id"
MACHINE_DIGITS = 8                 # of a serial number or machine id, in a table id


def machine_serial(root: Path) -> str | None:
    """The board's serial number, lower-case (a Pi's: 16 hex digits, in its device tree and in
    /proc/cpuinfo's `Serial` line); None without one, or all zeros."""
    for name in SERIAL_FILES:
        try:
            text = (root / name).read_text(encoding="ascii", errors="replace")
        except OSError:
            continue
        if name.endswith("cpuinfo"):
            found = re.search(r"^Serial\s*:\s*(\S+)", text, re.MULTILINE)
            text = found.group(1) if found else ""
        serial = re.sub(r"[^a-z0-9]", "", text.lower())
        if len(serial) >= MACHINE_DIGITS and serial.strip("0"):
            return serial
    return None


def machine_id(root: Path) -> str | None:
    """systemd's machine id (32 hex digits, made at the first boot of an image); None without
    one. A card cloned after its first boot has its original's."""
    try:
        text = (root / MACHINE_ID_FILE).read_text(encoding="ascii").strip().lower()
    except (OSError, UnicodeDecodeError):
        return None
    return text if re.fullmatch(r"[0-9a-f]{32}", text) and text.strip("0") else None


def default_table_id(hostname: str, root: Path = SYSTEM_ROOT) -> str:
    """The table id when the device config sets none: the host's short name (SPEC §13.1), but
    for a stock host name, which every clone of one card shares: `pi-` and the last 8 digits of
    the Pi's serial number (e.g. `pi-1a2b3c4d`), elsewhere `host-` and the first 8 of the
    machine id; the host name only when the machine has neither."""
    from_host = table_id_from_host(hostname)
    if from_host.lower() not in STOCK_HOST_NAMES:
        return from_host
    serial = machine_serial(root)
    if serial is not None:
        return f"pi-{serial[-MACHINE_DIGITS:]}"
    identity = machine_id(root)
    if identity is not None:
        return f"host-{identity[:MACHINE_DIGITS]}"
    return from_host

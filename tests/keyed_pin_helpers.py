"""The arbiter's PIN kept keyed in a journal's header (SPEC §13.4): the device config with a PIN,
the matches loaded on it, the hash a journal's header holds (`header_hash`) and the one the
engine judges with (`live_check`). The keyed PIN's and the restart's tests use them."""

from __future__ import annotations

import re
from pathlib import Path

from gammonclock.core.pin import PinCheck
from gammonclock.journal.reader import read_header

PIN = "LRCL"

DEVICE_TEXT = f"""\
[hardware]
pin_factory = "mock"

[table]
id = "T12"

[arbiter]
pin = "{PIN}"
"""
MATCH_TEXT = '[match]\nlength = 5\n\n[players]\nleft = "Анна"\nright = "Boris"\n'
OTHER_MATCH = MATCH_TEXT.replace("Boris", "Carla")


def header_hash(path: Path) -> str:
    """The pin_hash a journal's header holds (in its device config, or its one config)."""
    header = read_header(path).data
    texts = [header.get("device") or "", header["config"]]
    found = [m[1] for text in texts for m in re.finditer(r'pin_hash = "([^"]+)"', text)]
    assert len(found) == 1, texts
    return found[0]


def live_check(session) -> PinCheck:
    check = session.engine.rules.arbiter_pin
    assert check is not None
    return check

"""`python -m gammonclock.pin [PIN] [--key FILE]`: a pin_hash for the device config (SPEC §13.4).

    python -m gammonclock.pin --key /var/lib/gammonclock/device.key   # asks the PIN; keyed
    python -m gammonclock.pin LRCLR                                   # unkeyed

Without PIN (or with `-`) the PIN is asked without echo at a terminal, else read as the first
line of standard input: a PIN on the command line is seen by every login (`ps`, /proc) and kept
in the shell's history.

The hash and its rules are the core's (`core/pin.py`); this command only reads the device key
(the journal's, `journal/journal.py`), which the pure core never touches.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Sequence
from pathlib import Path

from gammonclock.core.pin import make_hash, pepper_of
from gammonclock.journal.key import KeyRefused, key_in_file

USAGE = ("usage: python -m gammonclock.pin [PIN] [--key FILE]   (PIN: 4-8 letters of L, R, C, "
         "asked when left out; FILE: the clock's device.key, in its state folder)")


def main(argv: Sequence[str] | None = None) -> int:
    """Print a pin_hash for the device config: keyed by the device key in `--key FILE` (the
    clock's state folder's device.key: the hash is then useless on any other clock), unkeyed
    without it (said on stderr)."""
    args = list(sys.argv[1:] if argv is None else argv)
    pins, key_file = [], None
    while args:
        word = args.pop(0)
        if word == "--key" and args and key_file is None:
            key_file = args.pop(0)
        else:
            pins.append(word)
    if not pins or pins == ["-"]:
        pins = [_asked()]
    if len(pins) != 1 or not re.fullmatch(r"[LRC]{4,8}", pins[0].upper()):
        print(USAGE, file=sys.stderr)
        return 2
    pepper = None
    if key_file is not None:
        try:
            pepper = pepper_of(key_in_file(Path(key_file)))
        except OSError as exc:
            print(f"gammonclock.pin: {key_file}: cannot read the device key: "
                  f"{exc.strerror or exc}", file=sys.stderr)
            return 1
        except KeyRefused as exc:
            print(f"gammonclock.pin: {exc}", file=sys.stderr)
            return 1
    else:
        print("gammonclock.pin: no --key: this hash is NOT keyed by the device key, so anyone "
              "with a journal can search the 9 801 PINs for it; give --key "
              "STATE_DIR/device.key for a keyed one", file=sys.stderr)
    print(f'pin_hash = "{make_hash(pins[0].upper(), pepper=pepper)}"')
    return 0


def _asked() -> str:
    """The PIN from the terminal without echo (asked twice), or stdin's first line; "" when
    the two differ or nothing came (the usage then says what a PIN is)."""
    if sys.stdin.isatty():
        import getpass

        first = getpass.getpass("PIN (4-8 of L, R, C): ")
        return first.strip() if getpass.getpass("again: ") == first else ""
    return sys.stdin.readline(64).strip()


if __name__ == "__main__":
    sys.exit(main())

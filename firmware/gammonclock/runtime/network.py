"""Where this device is on the network, for the idle panels (SPEC §13.2): the director walks up
to a table and reads the address to reach it.

The addresses are read from the kernel's routing table (`/proc/net/fib_trie`): no socket is
opened (the service may not be allowed one) and nothing is sent.
"""

from __future__ import annotations

import ipaddress
from pathlib import Path

FIB_TRIE = Path("/proc/net/fib_trie")


def local_addresses(fib_trie: Path = FIB_TRIE) -> list[str]:
    """This host's IPv4 addresses, loopback and link-local left out, in a stable order; [] when
    the table cannot be read (no network, not Linux)."""
    try:
        lines = fib_trie.read_text(encoding="ascii", errors="replace").splitlines()
    except OSError:
        return []
    found: set[ipaddress.IPv4Address] = set()
    for previous, line in zip(lines, lines[1:], strict=False):
        # A host's own address is a leaf "|-- A.B.C.D" followed by "/32 host LOCAL".
        if line.strip() == "/32 host LOCAL" and "|--" in previous:
            try:
                address = ipaddress.IPv4Address(previous.split("|--")[1].strip())
            except ValueError:
                continue
            if not (address.is_loopback or address.is_link_local):
                found.add(address)
    return [str(a) for a in sorted(found)]

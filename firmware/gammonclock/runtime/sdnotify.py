"""systemd's service notifications (`sd_notify`), in the few lines the protocol needs.

Under a `Type=notify` unit, systemd passes the path of a datagram socket in `$NOTIFY_SOCKET`
(a leading `@` names a socket in the abstract namespace) and, with `WatchdogSec=`, the interval in
`$WATCHDOG_USEC` (for the process in `$WATCHDOG_PID`, when set). The service sends newline-
separated `KEY=VALUE` lines: `READY=1` once it serves, `WATCHDOG=1` at least every interval (the
clock sends it from its own loop, so a loop that hangs is restarted), `STOPPING=1` when it begins
to stop, `STATUS=…` for `systemctl status`. Outside systemd every call does nothing.
"""

from __future__ import annotations

import logging
import os
import socket
from collections.abc import Mapping

log = logging.getLogger(__name__)


class Notifier:
    """Sends notifications to systemd; inert when the process was not started by a notify unit."""

    def __init__(self, environ: Mapping[str, str] | None = None) -> None:
        env = os.environ if environ is None else environ
        address = env.get("NOTIFY_SOCKET", "")
        if address.startswith("@"):
            address = "\0" + address[1:]
        self._address = address or None
        self.watchdog_ns = _watchdog_ns(env)
        self._failed = False

    @property
    def active(self) -> bool:
        return self._address is not None

    def ready(self, status: str = "") -> None:
        self._send("READY=1" + (f"\nSTATUS={status}" if status else ""))

    def watchdog(self) -> None:
        if self.watchdog_ns is not None:
            self._send("WATCHDOG=1")

    def stopping(self) -> None:
        self._send("STOPPING=1")

    def status(self, text: str) -> None:
        self._send(f"STATUS={text}")

    def _send(self, message: str) -> None:
        if self._address is None:
            return
        try:
            with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM | socket.SOCK_CLOEXEC) as sock:
                # Never wait: a notify socket that is not read must not stop the clock's loop.
                sock.sendto(message.encode(), socket.MSG_DONTWAIT, self._address)
        except OSError as exc:            # systemd gone: nothing to tell, and the clock goes on
            if not self._failed:
                log.warning("cannot notify systemd at %r: %s", self._address, exc)
            self._failed = True


def _watchdog_ns(env: Mapping[str, str]) -> int | None:
    """The watchdog interval in ns, if systemd watches this very process."""
    usec = env.get("WATCHDOG_USEC", "")
    pid = env.get("WATCHDOG_PID", "")
    if not usec.isdigit() or int(usec) == 0:
        return None
    if pid and pid != str(os.getpid()):
        return None
    return int(usec) * 1000

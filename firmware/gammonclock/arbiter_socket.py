"""The arbiter's interface on the device (SPEC §7): a local control socket and its client.

`gammonclock run` listens on a Unix socket in its state directory (`arbiter.sock`, mode 0660: the
service's user and group only). One connection carries one request line and gets one JSON reply:

    deduct left 30s  ->  {"ok": true, "said": ["arbiter: deduct left 30s",
                           "left's reserve -30 s -> 13:12.4"], "state": {...}}
    status           ->  {"ok": true, "state": {...}}        (the SPEC §9 state, as now)
    dedct left 30s   ->  {"ok": false, "error": "unknown arbiter command 'dedct'; …"}

A command is stamped when it arrives and goes through the service's queue like a press, so it is
journaled before it acts and its reply says what it did (or why it was refused).
`gammonclock arbiter WORDS…` is the client.
"""

from __future__ import annotations

import json
import logging
import os
import socket
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .arbiter import ArbiterSyntaxError, parse_command
from .effects import Refused
from .match import ArbiterAction
from .service import ClockService, Reply

log = logging.getLogger(__name__)

SOCKET_NAME = "arbiter.sock"
REPLY_TIMEOUT_S = 5.0
MAX_REQUEST = 4096


def socket_path(state_dir: str | Path) -> Path:
    return Path(state_dir) / SOCKET_NAME


def handle(service: ClockService, line: str, clock_ns: Callable[[], int] = time.monotonic_ns,
           timeout_s: float = REPLY_TIMEOUT_S) -> dict[str, Any]:
    """The reply to one request line."""
    words = line.split()
    if words[:1] == ["status"] and len(words) == 1:
        return {"ok": True, "state": service.status()}
    try:
        command = parse_command(words)
    except ArbiterSyntaxError as exc:
        return {"ok": False, "error": str(exc)}
    reply = Reply()
    service.submit(ArbiterAction(clock_ns(), command), reply)
    effects = reply.wait(timeout_s)
    if effects is None:
        return {"ok": False, "error": "the clock did not answer in time; see its log"}
    refused = [e for e in effects if isinstance(e, Refused)]
    answer: dict[str, Any] = {"ok": not refused, "said": [e.describe() for e in effects],
                              "state": service.status()}
    if refused:
        answer["error"] = "; ".join(f"{e.what}: {e.why}" for e in refused)
    return answer


class ArbiterServer:
    """Serves the control socket on its own thread until `close()`."""

    def __init__(self, path: Path, service: ClockService) -> None:
        self.path = path
        self.service = service
        if path.exists() or path.is_symlink():
            path.unlink()          # a socket left by a previous run (a crash, a power cut)
        self._sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._sock.bind(str(path))
        os.chmod(path, 0o660)
        self._sock.listen(4)
        self._sock.settimeout(0.5)   # so close() is noticed; accept() waits, it does not spin
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, name="arbiter-socket", daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self._sock.accept()
            except TimeoutError:
                continue
            except OSError:
                return                 # closed
            with conn:
                try:
                    conn.settimeout(REPLY_TIMEOUT_S)
                    request = _read_line(conn)
                    answer = handle(self.service, request)
                    log.info("arbiter: %s -> %s", request, "ok" if answer["ok"] else
                             answer.get("error"))
                    conn.sendall(json.dumps(answer).encode() + b"\n")
                except (OSError, UnicodeDecodeError, ValueError) as exc:
                    log.warning("arbiter socket: a request failed: %s", exc)

    def close(self) -> None:
        self._stop.set()
        self._sock.close()
        self._thread.join(timeout=2)
        try:
            self.path.unlink()
        except OSError:
            pass


def _read_line(conn: socket.socket) -> str:
    data = b""
    while b"\n" not in data and len(data) < MAX_REQUEST:
        chunk = conn.recv(1024)
        if not chunk:
            break
        data += chunk
    return data.split(b"\n", 1)[0].decode("utf-8").strip()


def ask(path: Path, words: list[str], timeout_s: float = REPLY_TIMEOUT_S + 2) -> dict[str, Any]:
    """Send one request to a running clock; raises OSError when none listens at `path`."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
        conn.settimeout(timeout_s)
        conn.connect(str(path))
        conn.sendall(" ".join(words).encode() + b"\n")
        data = b""
        while not data.endswith(b"\n"):
            chunk = conn.recv(65536)
            if not chunk:
                break
            data += chunk
    answer: dict[str, Any] = json.loads(data)
    return answer

"""The arbiter's interface on the device (SPEC §7): a local control socket and its client.

`gammonclock run` listens on a Unix socket in its state directory (`arbiter.sock`, mode 0660: the
service's user and group only). One connection carries one request line and gets one JSON reply.
The line is the command's words, or a JSON object with a request id (what `gammonclock arbiter`
sends):

    deduct left 30s                                  (for socat/nc users: no id)
    {"id": "5f0c…", "command": "deduct left 30s"}

and the reply says which of these it is (`outcome`), so a client never has to guess:

    acted        {"ok": true, "outcome": "acted", "said": ["arbiter: deduct left 30s", …],
                  "state": {...}}
    refused      {"ok": false, "outcome": "refused", "refused": true, "error": "deduct: …",
                  "said": [...], "state": {...}}       (the engine's reasons; journaled)
    not applied  {"ok": false, "outcome": "not applied", "applied": false, "error": "…"}
                  (the clock was busy, or did not take it in time: it never will)
    unknown      {"ok": false, "outcome": "unknown", "error": "queued, outcome unknown: …"}
                  (the clock took it but did not say what it did in time: check `status`)
    status       {"ok": true, "state": {...}}          (the SPEC §9 state, now; idle: the table)
    bad request  {"ok": false, "error": "unknown arbiter command 'dedct'; …"}   (nothing done)

The next match (SPEC §13.2) comes as `{"id", "command": "new-match [--force]", "text": TOML,
"file": NAME}`: the match file's text, read on the device's config and loaded on the clock's loop
in order with the presses; refused mid-match unless `--force`. `usb-stick DIR` (from the root
helper that mounted a stick at DIR) exports the journals to the stick and loads its next match.

A request with an id gets it back (`"id"`), and a repeated id gets the first answer again
(`"repeated": true`) without acting twice: the server remembers the last `remembered_ids` ids.

Limits, so that no client can hold up the clock or another client: each connection is served on
its own thread, at most `max_handlers` at once (beyond that, after a short wait, a "busy" reply
that acted on nothing); the whole request line must arrive within `request_deadline_s` of the
connection; a line longer than `max_request` bytes, or not UTF-8 text, or holding a control
character, is refused whole. Only the first line is a request: what follows its newline is
ignored. Replies are sent with MSG_NOSIGNAL: a client gone away is a warning, never a SIGPIPE.

A command is stamped when it arrives and goes through the service's queue like a press, so it is
journaled before it acts and its reply says what it did (or why it was refused).

`gammonclock arbiter WORDS…` is the client (`ask`). Its exit status:
    0  the clock acted (or answered `status`)
    1  the clock refused the command (the reason is printed)
    2  bad words (not a command, not UTF-8, too long), or a reply that is not one
    3  no clock answers at the socket
    4  the command was not applied (the clock was busy or did not take it in time), or its outcome
       is unknown: check with `gammonclock arbiter status` before repeating it
    5  this login may not use the socket (not in the service's or the arbiters' group)
"""

from __future__ import annotations

import json
import logging
import os
import socket
import stat
import tempfile
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gammonclock import words
from gammonclock.core.arbiter import Command, parse_command
from gammonclock.core.effects import Effect, Undone
from gammonclock.core.match import ArbiterAction
from gammonclock.errors import GammonclockError

from .arbiter_requests import (
    NO_SIGNAL,
    Awaited,
    Limits,
    NotTaken,
    Request,
    RequestError,
    _not_applied,
    _replayed_commands,
    _shown,
    _unknown,
    parse_request,
    refusal_text,
    refusals,
    reply_language,
    said_lines,
    submit_and_wait,
)
from .arbiter_words import syntax_error_said
from .inbox import Reply, Task
from .lifecycle import LoadOutcome, Table, load_next_match
from .service import ClockService

log = logging.getLogger(__name__)

SOCKET_NAME = "arbiter.sock"
LISTEN_BACKLOG = 128
RUNTIME_DIR = "/run/gammonclock"     # the unit's RuntimeDirectory=


def socket_path(state_dir: str | Path) -> Path:
    return Path(state_dir) / SOCKET_NAME


def _runtime_directory() -> str:
    """systemd's `$RUNTIME_DIRECTORY` (the first, if the unit names several), or ""."""
    return os.environ.get("RUNTIME_DIRECTORY", "").split(":")[0]


def serving_path(state_dir: str | Path) -> Path:
    """Where the clock serves its socket: the unit's runtime directory (`/run/gammonclock`, made
    by systemd for the service and gone when it stops), else the state folder."""
    return socket_path(_runtime_directory() or state_dir)


def simulator_socket_path() -> Path:
    """Where this login's interactive simulator serves its socket (its journals are in a
    temporary folder, but `gammonclock arbiter` finds it here without being told)."""
    return Path(tempfile.gettempdir()) / f"gammonclock-simulator-{os.getuid()}" / SOCKET_NAME


def private_folder(path: Path) -> bool:
    """Whether `path` is a folder of this login's alone: a real folder (not a link), owned by
    this login, that nobody else may enter. The simulator's folder is in the shared /tmp, where
    another login could make it first and serve a socket of its own there: an arbiter's
    `new-match` would then go to it, and its made-up replies come back."""
    try:
        info = os.lstat(path)
    except OSError:
        return False
    return (stat.S_ISDIR(info.st_mode) and info.st_uid == os.getuid()
            and stat.S_IMODE(info.st_mode) & 0o077 == 0)


def someone_serves(path: Path) -> bool:
    """Whether a clock answers at `path` now."""
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
            probe.settimeout(0.5)
            probe.connect(str(path))
        return True
    except OSError:
        return False


def asking_path(state_dir: str | Path | None, default_state_dir: str | Path) -> Path:
    """Where `gammonclock arbiter` asks: the state folder it is told, else the service's runtime
    directory when a clock serves there, else this login's interactive simulator when one
    runs (answers there: a simulator killed without its clean-up leaves its socket file),
    else the default state folder."""
    if state_dir is not None:
        return socket_path(state_dir)
    runtime = _runtime_directory()
    if runtime:
        return socket_path(runtime)
    try:
        if socket_path(RUNTIME_DIR).exists():
            return socket_path(RUNTIME_DIR)
    except PermissionError:           # it is there, but this login may not look in: say so
        return socket_path(RUNTIME_DIR)
    simulator = simulator_socket_path()
    if private_folder(simulator.parent) and simulator.exists() and someone_serves(simulator):
        return simulator
    return socket_path(default_state_dir)








# --- answers ----------------------------------------------------------------------------------

@dataclass
class _Outcome:
    """What became of the command sent under one request id."""

    words: list[str]
    done: threading.Event = field(default_factory=threading.Event)
    answer: dict[str, Any] | None = None
    awaited: Awaited | None = None    # while its outcome may still arrive


class _Outcomes:
    """The last ids' outcomes, so that a retried request is answered, not applied again."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._lock = threading.Lock()
        self._by_id: OrderedDict[str, _Outcome] = OrderedDict()

    def claim(self, request_id: str, words: list[str]) -> tuple[_Outcome, bool]:
        """The outcome for this id, and whether this request is its first."""
        with self._lock:
            known = self._by_id.get(request_id)
            if known is not None:
                return known, False
            outcome = self._by_id[request_id] = _Outcome(words)
            if len(self._by_id) > self.size:
                self._forget_oldest_finished()
            return outcome, True

    def forget(self, request_id: str) -> None:
        """The command was not applied: a retry with this id may apply it."""
        with self._lock:
            self._by_id.pop(request_id, None)

    def _forget_oldest_finished(self) -> None:
        # One in flight is never forgotten: its retry must still find it.
        for request_id, outcome in self._by_id.items():
            if outcome.done.is_set():
                del self._by_id[request_id]
                return


def say(key: str, service: ClockService, **args: object) -> str:
    """The socket's own answer `key` in the match's language (English without a match)."""
    return words.say(key, reply_language(service), **args)


class Responder:
    """The answer to one request line; any thread (one per connection)."""

    def __init__(self, service: ClockService, limits: Limits = Limits(),
                 clock_ns: Callable[[], int] = time.monotonic_ns, table: Table | None = None,
                 on_stick: Callable[[Path], dict[str, Any]] | None = None,
                 on_provision: Callable[[], dict[str, Any]] | None = None) -> None:
        self.service = service
        self.limits = limits
        self.clock_ns = clock_ns
        self.table = table                # None: this clock takes no next match (a test rig)
        self.on_stick = on_stick
        self.on_provision = on_provision  # `provision`: take the provisioning stick's offer
        self._outcomes = _Outcomes(limits.remembered_ids)

    def respond(self, line: bytes, peer: str | None = None) -> dict[str, Any]:
        """The answer to one request line; `peer` is the login that sent it (journaled as the
        command's author)."""
        try:
            request = parse_request(line, self.limits.max_request)
        except RequestError as exc:
            return {"ok": False, "error": str(exc)}
        answer = self._answer(request, peer)
        if request.id is not None:
            answer["id"] = request.id
        return answer

    def _answer(self, request: Request, peer: str | None = None) -> dict[str, Any]:
        if request.words == ["status"]:
            return {"ok": True, "state": self.service.status()}
        if request.match_text is not None and request.words[:1] != ["new-match"]:
            return {"ok": False, "error": say("sock.text_not_new_match", self.service)}
        if request.words[:1] == ["usb-stick"]:
            return self._stick(request.words[1:])
        if request.words == ["provision"] and self.on_provision is not None:
            return self.on_provision()     # the arbiter's group takes the stick's offer
        action: Callable[[], tuple[dict[str, Any], Awaited | None]]
        if request.words[:1] == ["continue"]:          # SPEC §13.5 (continuation.py)
            from .continuation import socket_request
            action = lambda: socket_request(self, request, peer)     # noqa: E731
        elif request.words[:1] == ["new-match"]:
            problem = self._new_match_problem(request)
            if problem is not None:
                return {"ok": False, "error": problem}
            action = lambda: self._load(request, peer)      # noqa: E731
        else:
            try:
                command = parse_command(request.words)
            except ValueError as exc:     # ArbiterSyntaxError, and any number `int` refuses
                return {"ok": False,
                        "error": syntax_error_said(exc, reply_language(self.service))}
            action = lambda: self._apply(command, peer)     # noqa: E731
        if request.id is None:
            return action()[0]
        outcome, first = self._outcomes.claim(request.id, request.words)
        if not first:
            return self._repeat(request, outcome)
        try:
            answer, outcome.awaited = action()
            if answer.get("applied") is False:
                self._outcomes.forget(request.id)
            outcome.answer = answer
            return dict(answer)
        finally:
            outcome.done.set()

    def _apply(self, command: Command, peer: str | None = None
               ) -> tuple[dict[str, Any], Awaited | None]:
        """Submit the command to the loop and wait, bounded, for what it did: the answer, and
        the Awaited still to deliver the outcome when that is unknown yet (else None)."""
        action = ArbiterAction(self.clock_ns(), command, "socket", peer)
        return self._on_loop(action, "command", command.describe(),
                             lambda reply: self._acted(reply.effects,
                                                       reply_language(self.service)))

    def _on_loop(self, item: ArbiterAction | Task, not_done: str, what: str,
                 answer: Callable[[Reply], dict[str, Any]]
                 ) -> tuple[dict[str, Any], Awaited | None]:
        """Submit `item` to the loop and wait, bounded, for it: the answer (`not_done`, a
        "sock.not_done.*" id, says what did not happen when the loop turned it away or never
        took it), and the Awaited still to deliver the outcome when that is unknown yet (else
        None). Said in the match's language."""
        lang = reply_language(self.service)
        waited = submit_and_wait(self.service, item, answer, self.limits.reply_timeout_s,
                                 self.limits.outcome_grace_s)
        undone = words.say(f"sock.not_done.{not_done}", lang)
        if waited is NotTaken.BUSY:
            return _not_applied(words.say("sock.busy", lang, not_done=undone), busy=True), None
        if isinstance(waited, NotTaken):
            return _not_applied(words.say("sock.late", lang, not_done=undone)), None
        settled = waited.settled()
        if settled is None:
            return _unknown(what, lang), waited
        return settled, None

    # --- the next match (SPEC §13.2) ------------------------------------------------------------

    def _new_match_problem(self, request: Request) -> str | None:
        if self.table is None:
            return say("sock.no_table", self.service)
        if request.words[1:] not in ([], ["--force"]):
            return say("sock.new_match_usage", self.service)
        if request.match_text is None:
            return say("sock.new_match_text", self.service)
        return None

    def _load(self, request: Request, peer: str | None = None
              ) -> tuple[dict[str, Any], Awaited | None]:
        """Load the match file of a new-match request on the clock's loop."""
        assert self.table is not None and request.match_text is not None
        table, text = self.table, request.match_text
        name, force, at = request.file or "<new-match>", "--force" in request.words, \
            self.clock_ns()
        return self.run_loading(lambda: load_next_match(self.service, table, text, name,
                                                        force=force, at=at, source="socket",
                                                        by=peer), at)

    def run_loading(self, load: Callable[[], LoadOutcome], at: int
                    ) -> tuple[dict[str, Any], Awaited | None]:
        """Run a load on the clock's loop and wait for what it did."""
        return self._on_loop(Task(at, load), "match", "new-match",
                             self._loaded)

    def _loaded(self, reply: Reply) -> dict[str, Any]:
        outcome = reply.value
        if not isinstance(outcome, LoadOutcome):      # the load failed (its bug is in the log)
            return {"ok": False, "outcome": "unknown",
                    "error": say("sock.load_failed", self.service, error=repr(outcome))}
        answer: dict[str, Any] = {"ok": outcome.ok,
                                  "outcome": "acted" if outcome.ok else "refused",
                                  "said": outcome.said, "state": self.service.status()}
        if not outcome.ok:
            answer["refused"] = True
            answer["error"] = outcome.error
            answer["reason"] = outcome.reason.value if outcome.reason else None
        return answer

    def _stick(self, words: list[str]) -> dict[str, Any]:
        if self.on_stick is None:
            return {"ok": False, "error": say("sock.no_stick", self.service)}
        if len(words) != 1:
            return {"ok": False, "error": say("sock.stick_usage", self.service)}
        return self.on_stick(Path(words[0]))

    def _repeat(self, request: Request, outcome: _Outcome) -> dict[str, Any]:
        if outcome.words != request.words:
            return {"ok": False, "error": say("sock.id_reused", self.service,
                                              id=repr(request.id))}
        if not outcome.done.wait(self.limits.longest_answer_s + 1) or outcome.answer is None:
            return {"ok": False, "outcome": "unknown", "repeated": True,
                    "error": say("sock.first_waits", self.service)}
        if outcome.awaited is not None:         # it was unknown: has its outcome come since?
            settled = outcome.awaited.settled()
            if settled is not None:
                outcome.answer, outcome.awaited = settled, None
        return {**outcome.answer, "repeated": True}

    def _acted(self, effects: list[Effect], lang: str = "en") -> dict[str, Any]:
        """The answer to a command the loop applied; its words in `lang` (the match's)."""
        if any(isinstance(e, Undone) for e in effects):
            return self._undone(effects, lang)
        refused = refusals(effects)
        answer: dict[str, Any] = {"ok": not refused, "outcome": "refused" if refused else "acted",
                                  "said": said_lines(effects, lang),
                                  "state": self.service.status()}
        if refused:
            answer["refused"] = True
            answer["error"] = refusal_text(refused, lang)
        return answer

    def _undone(self, effects: list[Effect], lang: str = "en") -> dict[str, Any]:
        """An undo acted: the arbiter's commands made after the undone action were applied
        again; those that no longer apply there (a `resume` of a pause that is gone) are listed
        apart. Neither makes the undo a refusal."""
        again, dropped = _replayed_commands(effects, lang)
        # `language`: the client labels the two lists in it (cli/arbiter.py)
        return {"ok": True, "outcome": "acted", "said": said_lines(effects, lang),
                "reapplied": again, "no_longer_applied": dropped, "language": lang,
                "state": self.service.status()}


# --- the server -------------------------------------------------------------------------------

class RequestTimeout(GammonclockError):
    """The request line did not arrive whole within the connection's deadline."""


def _give_to_group(path: Path, group: str) -> None:
    """Let `group` (config `arbiter.socket_group`: the arbiters' logins) use the socket. The
    service's user must be in that group; if it cannot be done, the clock serves its own group
    only and says why."""
    import grp

    try:
        os.chown(path, -1, grp.getgrnam(group).gr_gid)
    except KeyError:
        log.error("arbiter socket: no group %r on this system (arbiter.socket_group); only the "
                  "service's group may use %s", group, path)
    except OSError as exc:
        log.error("arbiter socket: cannot give %s to group %r (%s); is the service's user in "
                  "that group?", path, group, exc.strerror)


class ArbiterServer:
    """Serves the control socket until `close()`: one thread accepts, each connection is served
    on its own short-lived thread (at most `limits.max_handlers` at once)."""

    def __init__(self, path: Path, service: ClockService, limits: Limits = Limits(),
                 clock_ns: Callable[[], int] = time.monotonic_ns, group: str | None = None,
                 table: Table | None = None,
                 on_stick: Callable[[Path], dict[str, Any]] | None = None,
                 on_provision: Callable[[], dict[str, Any]] | None = None) -> None:
        self.path = path
        self.limits = limits
        self.responder = Responder(service, limits, clock_ns, table, on_stick, on_provision)
        self.turned_away = 0
        if path.exists() or path.is_symlink():
            path.unlink()          # a socket left by a previous run (a crash, a power cut)
        self._sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._sock.bind(str(path))
        os.chmod(path, 0o660)
        if group is not None:
            _give_to_group(path, group)
        self._sock.listen(LISTEN_BACKLOG)
        self._sock.settimeout(0.5)   # so close() is noticed; accept() waits, it does not spin
        self._slots = threading.BoundedSemaphore(limits.max_handlers)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._accept, name="arbiter-socket", daemon=True)
        self._thread.start()

    def _accept(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self._sock.accept()
            except TimeoutError:
                continue
            except OSError:
                return                 # closed
            if self._stop.is_set():
                conn.close()
                return
            deadline = time.monotonic() + self.limits.request_deadline_s
            if not self._slots.acquire(timeout=self.limits.slot_wait_s):
                self._turn_away(conn)
                continue
            try:
                threading.Thread(target=self._serve, args=(conn, deadline),
                                 name="arbiter-client", daemon=True).start()
            except RuntimeError:       # no thread to be had: the client hears it, no more
                self._slots.release()
                self._turn_away(conn)

    def _turn_away(self, conn: socket.socket) -> None:
        self.turned_away += 1
        if self.turned_away == 1 or self.turned_away % 100 == 0:
            log.warning("arbiter socket: %d clients at once; turned one away (%d so far)",
                        self.limits.max_handlers, self.turned_away)
        with conn:
            self._send_quietly(conn, _not_applied(say("sock.turned_away", self.responder.service,
                                                      n=self.limits.max_handlers), busy=True))

    def _serve(self, conn: socket.socket, deadline: float) -> None:
        request = b""
        try:
            with conn:
                try:
                    request = _read_line(conn, deadline, self.limits.max_request)
                    answer = self.responder.respond(request, peer_login(conn))
                except RequestTimeout:
                    lang = reply_language(self.responder.service)
                    waited = words.seconds(f"{self.limits.request_deadline_s:g}", lang)
                    answer = {"ok": False, "error": words.say("sock.no_line", lang, time=waited)}
                except RequestError as exc:
                    answer = {"ok": False, "error": str(exc)}
                except OSError:
                    raise
                except Exception as exc:   # a bug must cost one reply, never the server
                    log.exception("arbiter socket: the request %s failed", _shown(request))
                    answer = {"ok": False, "outcome": "unknown",
                              "error": say("sock.failed", self.responder.service,
                                           error=repr(exc))}
                log.info("arbiter: %s -> %s", _shown(request),
                         answer.get("outcome", "ok" if answer["ok"] else answer.get("error")))
                _send(conn, answer, self.limits.send_timeout_s)
        except OSError as exc:
            log.warning("arbiter socket: the client of %s went away before its reply: %s",
                        _shown(request), exc)
        except Exception:
            log.exception("arbiter socket: the reply to %s failed", _shown(request))
        finally:
            self._slots.release()

    def _send_quietly(self, conn: socket.socket, answer: dict[str, Any]) -> None:
        try:
            _send(conn, answer, self.limits.send_timeout_s)
        except OSError:
            pass

    def close(self) -> None:
        self._stop.set()
        try:        # wake accept() now rather than at its next timeout
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as wake:
                wake.settimeout(0.1)
                wake.connect(str(self.path))
        except OSError:
            pass
        self._thread.join(timeout=2)
        self._sock.close()                           # after the join: its descriptor is free
        try:
            self.path.unlink()
        except OSError:
            pass


def peer_login(conn: socket.socket) -> str | None:
    """The login of the process at the other end of a Unix socket (SO_PEERCRED: the kernel's
    word, not the client's), or its uid when it has no name; None where the kernel cannot say."""
    import pwd
    import struct

    try:
        creds = conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    except (OSError, AttributeError):
        return None
    _, uid, _ = struct.unpack("3i", creds)
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return f"uid {uid}"


def _read_line(conn: socket.socket, deadline: float, max_request: int) -> bytes:
    """The request up to its first newline (or the client's end of sending), all of it within
    `deadline` (time.monotonic), however slowly its bytes come."""
    data = b""
    while True:
        newline = data.find(b"\n")
        if newline >= 0:
            return data[:newline]
        if len(data) > max_request:
            raise RequestError(f"the request is longer than {max_request} bytes; nothing was "
                               "done")
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise RequestTimeout
        conn.settimeout(remaining)
        try:
            chunk = conn.recv(max_request + 1)
        except TimeoutError:
            raise RequestTimeout from None
        if not chunk:
            return data
        data += chunk


def _send(conn: socket.socket, answer: dict[str, Any], timeout_s: float) -> None:
    conn.settimeout(timeout_s)
    data = json.dumps(answer).encode() + b"\n"
    while data:
        sent = conn.send(data, NO_SIGNAL)
        data = data[sent:]
    try:
        conn.shutdown(socket.SHUT_WR)   # the reply is whole, even if the request was not read
    except OSError:
        pass


"""A hostile or broken arbiter client against the control socket (issue 7, items 6 and 7)."""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import sys
import threading
import time
import unicodedata
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given
from hypothesis import strategies as st

from device_helpers import reply_line
from gammonclock.cli.main import main
from gammonclock.core.arbiter import ArbiterSyntaxError, Command, Deduct, parse_command
from gammonclock.core.engine import Engine, Input
from gammonclock.core.match import ArbiterAction
from gammonclock.core.rules import MatchRules
from gammonclock.device.build import Device
from gammonclock.journal.reader import read_journal
from gammonclock.runtime.arbiter_client import BadReply, ReplyLost, ask
from gammonclock.runtime.arbiter_requests import MAX_REQUEST, Limits
from gammonclock.runtime.arbiter_socket import ArbiterServer, Responder, socket_path
from gammonclock.runtime.inbox import Reply
from gammonclock.runtime.service import ClockService
from gammonclock.runtime.session import Session
from gammonclock.sides import Side
from gammonclock.sim.simulate import VirtualClock
from property_helpers import property_settings

ROOT = Path(__file__).resolve().parents[2]
MOCK = (ROOT / "config" / "backgammon.toml").read_text().replace(
    'pin_factory = "lgpio"', 'pin_factory = "mock"')
FULL_RESERVE_MS = 14 * 60_000
S = 1_000_000_000
MS = 1_000_000


@pytest.fixture(autouse=True)
def sigpipe_ignored() -> Iterator[None]:
    """`cli.main` restores SIGPIPE's default for a client command; in this process it would turn
    a test client's write to a closed socket into the death of pytest."""
    yield
    signal.signal(signal.SIGPIPE, signal.SIG_IGN)


def raw(path: Path, request: bytes, timeout_s: float = 20) -> bytes:
    """Send bytes as they are and read the reply up to its newline (or the end)."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
        conn.settimeout(timeout_s)
        conn.connect(str(path))
        conn.sendall(request)
        return reply_line(conn)


def journaled_commands(device: Device) -> list[str]:
    records = read_journal(device.session.journal.path).records
    return [r.data["input"]["command"] for r in records if r.kind == "input"]


def eventually(check: Callable[[], bool], timeout_s: float = 20) -> bool:
    """Whether `check` comes true within a generous time (work done on other threads)."""
    give_up = time.monotonic() + timeout_s
    while not check():
        if time.monotonic() > give_up:
            return False
        time.sleep(0.01)
    return True


def left_reserve_ms(path: Path) -> int:
    reserve: int = ask(path, ["status"])["state"]["clock"]["left"]["reserve_ms"]
    return reserve


# --- many clients at once ---------------------------------------------------------------------

def test_an_idle_connection_does_not_hold_up_another_client(running):
    _, state_dir = running
    path = socket_path(state_dir)
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as idle:
        idle.connect(str(path))            # says nothing
        answer = ask(path, ["status"])
        # Served while the idle one still waits for its line: nothing has come back to it yet.
        idle.setblocking(False)
        with pytest.raises(BlockingIOError):
            idle.recv(1)
    assert answer["ok"] is True


def test_two_hundred_clients_at_once_all_get_the_state(running):
    _, state_dir = running
    path = socket_path(state_dir)
    start = threading.Barrier(200)
    answers: list[object] = []

    def client() -> None:
        start.wait()
        try:
            answers.append(ask(path, ["status"])["ok"])
        except Exception as exc:   # counted, not raised on a thread
            answers.append(repr(exc))

    threads = [threading.Thread(target=client) for _ in range(200)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert answers == [True] * 200


# --- the size of a request --------------------------------------------------------------------

@pytest.mark.parametrize("request_line", [
    b"deduct left 30s" + b" " * (MAX_REQUEST + 900) + b"\n",   # cut at the limit, it would act
    b"deduct left 30s" + b" " * (MAX_REQUEST + 1 - 15) + b"\n",  # one byte over
    b"deduct left 30s" + b" " * (MAX_REQUEST + 900),            # and no newline at all
], ids=["900-over", "1-over", "no-newline"])
def test_a_request_over_the_limit_is_refused_whole(running, request_line):
    device, state_dir = running
    answer = json.loads(raw(socket_path(state_dir), request_line))
    assert answer["ok"] is False
    assert str(MAX_REQUEST) in answer["error"]
    assert journaled_commands(device) == []
    assert left_reserve_ms(socket_path(state_dir)) == FULL_RESERVE_MS


def test_a_request_of_exactly_the_limit_is_served(running):
    device, state_dir = running
    answer = json.loads(raw(socket_path(state_dir), b"deduct left 30s" + b" " * (MAX_REQUEST - 15)
                            + b"\n"))
    assert answer["ok"] is True
    assert journaled_commands(device) == ["deduct left 30s"]


# --- text that is not UTF-8 -------------------------------------------------------------------

def test_a_request_that_is_not_utf8_gets_an_error_reply(running):
    device, state_dir = running
    answer = json.loads(raw(socket_path(state_dir), b"warn left \xff\n"))
    assert answer["ok"] is False
    assert "UTF-8" in answer["error"]
    assert journaled_commands(device) == []


def test_the_client_refuses_words_that_are_not_utf8(running, capsys):
    device, state_dir = running
    # `gammonclock arbiter warn left $'\xff'`: Python's argv holds a lone surrogate.
    status = main(["arbiter", "--state-dir", str(state_dir), "warn", "left", "\udcff"])
    assert status == 2
    assert "UTF-8" in capsys.readouterr().err
    assert journaled_commands(device) == []
    assert ask(socket_path(state_dir), ["status"])["ok"] is True


# --- a client that goes away -------------------------------------------------------------------

@pytest.mark.parametrize("request_bytes", [b"status\n", b"deduct left 30s\n", b"dedu", b""],
                         ids=["status", "command", "half", "nothing"])
def test_a_client_that_vanishes_before_its_reply_stops_nothing(running, caplog, request_bytes):
    device, state_dir = running
    path = socket_path(state_dir)
    for _ in range(5):
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
            conn.connect(str(path))
            conn.sendall(request_bytes)
    assert ask(path, ["status"])["ok"] is True
    assert ask(path, ["warn", "left", "still", "here"])["ok"] is True
    acted = 5 if request_bytes == b"deduct left 30s\n" else 0
    expected = Counter(["deduct left 30s"] * acted + ["warn left still here"])
    assert eventually(lambda: Counter(journaled_commands(device)) == expected)
    assert left_reserve_ms(path) == FULL_RESERVE_MS - acted * 30_000
    # At most a warning on the handler's thread: never an error, never the server.
    assert not [r for r in caplog.records if r.levelname in ("ERROR", "CRITICAL")]
    if acted:      # its reply came after the loop applied it, long after the client closed
        assert any("went away" in r.getMessage() for r in caplog.records)

def test_a_client_that_sends_a_byte_at_a_time_is_cut_off_while_others_are_served(running,
                                                                                  tmp_path):
    device, state_dir = running
    path = tmp_path / "slow.sock"
    server = ArbiterServer(path, device.service, Limits(request_deadline_s=1.0))
    loris_heard: list[bytes] = []

    def loris() -> None:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
            conn.connect(str(path))
            conn.settimeout(0.5)
            for byte in b"deduct left 30s\n":      # 8 s at this pace: longer than the deadline
                try:
                    conn.send(bytes([byte]))
                except OSError:
                    # The server answered and closed between two bytes (a loaded machine's
                    # timing): its answer still waits to be read.
                    loris_heard.append(conn.recv(65536))
                    return
                try:
                    loris_heard.append(conn.recv(65536))
                    return                         # an answer (or the end) before the line
                except TimeoutError:
                    continue
                except OSError:
                    return

    slow = threading.Thread(target=loris)
    slow.start()
    try:
        served = [ask(path, ["status"])["ok"] for _ in range(3)]
        slow.join(timeout=30)
    finally:
        server.close()
    assert served == [True] * 3
    assert not slow.is_alive()
    answer = json.loads(loris_heard[0])
    assert answer["ok"] is False and "did not arrive within 1 s" in answer["error"]
    assert journaled_commands(device) == []


# --- a command the clock does not answer in time ----------------------------------------------

QUICK = Limits(reply_timeout_s=0.05, outcome_grace_s=0.05)


def test_a_command_the_loop_did_not_take_in_time_is_never_applied_later(tmp_path, capsys):
    clock = VirtualClock(1_000 * S)         # the host clock stands still until moved
    session = Session(Engine.start(MatchRules.defaults("backgammon", 7), at=0))
    service = ClockService(session, [], origin=clock.ns, clock_ns=clock)   # its loop stands
    server = ArbiterServer(socket_path(tmp_path), service, QUICK, clock_ns=clock)
    try:
        answer = ask(socket_path(tmp_path), ["deduct", "left", "30s"])
        assert main(["arbiter", "--state-dir", str(tmp_path), "deduct", "left", "30s"]) == 4
    finally:
        server.close()
    assert answer["ok"] is False and answer["applied"] is False
    assert answer["outcome"] == "not applied" and "NOT applied" in answer["error"]
    assert "NOT applied" in capsys.readouterr().err
    clock.move_to(clock.ns + 10 * MS)
    service.step()                            # the loop gets there at last: applies nothing
    assert service.waiting() == 0
    assert session.engine.state_json()["clock"]["left"]["reserve_ms"] == FULL_RESERVE_MS


class FakeLoop:
    """The service as the socket sees it, with a loop that takes a command at once, later, or
    never, and says what it did at once, later, or never."""

    def __init__(self, *, takes: bool = True, answers_after_s: float | None = 0.0,
                 accepts: bool = True) -> None:
        self.takes, self.answers_after_s, self.accepts = takes, answers_after_s, accepts
        self.session = None            # no match: the replies are in English
        self.submitted: list[Input] = []
        self.applied: list[Input] = []
        self.replies: list[Reply] = []

    def submit(self, event: Input, reply: Reply | None = None) -> bool:
        assert reply is not None
        self.submitted.append(event)
        self.replies.append(reply)
        if not self.accepts:
            return False
        if self.takes and reply.take():
            self.applied.append(event)
            if self.answers_after_s is not None:
                threading.Timer(self.answers_after_s, reply.deliver, [[]]).start()
        return True

    def status(self) -> dict[str, object]:
        return {"phase": "scripted"}


@pytest.mark.parametrize("loop, outcome_grace_s, outcome, exit_status", [
    (dict(), 0.05, "acted", 0),
    (dict(answers_after_s=0.3), 30, "acted", 0),        # taken: its late answer is awaited
    (dict(takes=False), 0.05, "not applied", 4),         # withdrawn: it never will be
    (dict(answers_after_s=None), 0.05, "unknown", 4),    # taken, and no word of it
    (dict(accepts=False), 0.05, "not applied", 4),       # the clock's inbox is full
], ids=["at-once", "late", "never-taken", "taken-silent", "inbox-full"])
def test_every_command_reply_says_what_became_of_it(tmp_path, capsys, loop, outcome_grace_s,
                                                     outcome, exit_status):
    service = FakeLoop(**loop)
    limits = Limits(reply_timeout_s=0.05, outcome_grace_s=outcome_grace_s)
    server = ArbiterServer(socket_path(tmp_path), service, limits)    # type: ignore[arg-type]
    try:
        answer = ask(socket_path(tmp_path), ["deduct", "left", "30s"])
        status = main(["arbiter", "--state-dir", str(tmp_path), "deduct", "left", "30s"])
    finally:
        server.close()
    assert answer["outcome"] == outcome
    assert answer["ok"] is (outcome == "acted")
    assert status == exit_status
    err = capsys.readouterr().err
    if outcome == "unknown":
        assert "outcome unknown" in err and "arbiter status" in err
    if not loop.get("takes", True):
        assert not any(reply.take() for reply in service.replies)   # the loop comes: too late
        assert service.applied == []


def test_a_refusal_is_marked_as_one(running):
    _, state_dir = running
    answer = ask(socket_path(state_dir), ["deduct", "left", "10m"])
    assert (answer["ok"], answer["outcome"], answer["refused"]) == (False, "refused", True)


# --- request ids: a retry is never applied twice ----------------------------------------------

def json_request(request_id: str, command: str) -> bytes:
    return json.dumps({"id": request_id, "command": command}).encode() + b"\n"


def test_a_repeated_request_id_gets_the_first_answer_and_acts_once(running):
    device, state_dir = running
    path = socket_path(state_dir)
    first = json.loads(raw(path, json_request("r-1", "deduct left 30s")))
    again = json.loads(raw(path, json_request("r-1", "deduct left 30s")))
    assert first["ok"] is True and first["id"] == "r-1"
    assert again == {**first, "repeated": True}
    assert journaled_commands(device) == ["deduct left 30s"]
    other = json.loads(raw(path, json_request("r-1", "deduct left 20s")))
    assert other["ok"] is False and "already used" in other["error"]
    assert journaled_commands(device) == ["deduct left 30s"]


def test_a_client_that_lost_its_reply_retries_with_its_id_and_the_command_acts_once(running):
    device, state_dir = running
    path = socket_path(state_dir)
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:   # sends, and goes away
        conn.connect(str(path))
        conn.sendall(json_request("lost-1", "deduct left 30s"))
    # The retry comes once the first request has acted (else it would simply be the first).
    deadline = time.monotonic() + 10
    while journaled_commands(device) != ["deduct left 30s"] and time.monotonic() < deadline:
        time.sleep(0.01)
    answer = ask(path, ["deduct", "left", "30s"], request_id="lost-1")
    assert answer["ok"] is True and answer["repeated"] is True
    assert journaled_commands(device) == ["deduct left 30s"]
    assert left_reserve_ms(path) == FULL_RESERVE_MS - 30_000


def test_a_command_not_applied_may_be_sent_again_with_its_id():
    service = FakeLoop(takes=False)
    responder = Responder(service, QUICK)                              # type: ignore[arg-type]
    request = json_request("again", "deduct left 30s").strip()
    assert responder.respond(request)["outcome"] == "not applied"
    service.takes = True
    answer = responder.respond(request)
    assert answer["outcome"] == "acted" and "repeated" not in answer
    assert len(service.applied) == 1


def test_a_repeat_of_an_unknown_outcome_reports_it_once_it_has_come():
    service = FakeLoop(answers_after_s=None)
    responder = Responder(service, QUICK)                              # type: ignore[arg-type]
    request = json_request("slow", "deduct left 30s").strip()
    assert responder.respond(request)["outcome"] == "unknown"
    service.replies[0].deliver([])
    answer = responder.respond(request)
    assert (answer["outcome"], answer["repeated"]) == ("acted", True)
    assert len(service.applied) == 1


# --- the client against a broken clock --------------------------------------------------------

class FakeClock:
    """A socket that answers each connection as scripted: `empty` (closes after reading),
    `reset` (closes without reading), or the bytes to send. Records each request line."""

    def __init__(self, path: Path, script: list[str | bytes]) -> None:
        self.requests: list[bytes] = []
        self._sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._sock.bind(str(path))
        self._sock.listen(8)
        self._thread = threading.Thread(target=self._serve, args=(script,), daemon=True)
        self._thread.start()

    def _serve(self, script: list[str | bytes]) -> None:
        for step in script:
            conn, _ = self._sock.accept()
            with conn:
                conn.settimeout(10)
                if step == "reset":
                    self.requests.append(conn.recv(65536, socket.MSG_PEEK))
                    continue                          # unread data: the client gets a reset
                data = b""
                while b"\n" not in data:
                    data += conn.recv(65536)
                self.requests.append(data)
                if isinstance(step, bytes):
                    conn.sendall(step)

    def close(self) -> None:
        self._thread.join(timeout=10)
        self._sock.close()


def ids_sent(requests: list[bytes]) -> list[str]:
    return [json.loads(r)["id"] for r in requests]


@pytest.mark.parametrize("script, error, exit_status", [
    (["empty", b'{"ok": true, "state": {}}\n'], None, 0),
    (["reset", b'{"ok": true, "state": {}}\n'], None, 0),
    (["empty", "empty"], "without a reply", 2),
    (["reset", "reset"], "no reply came", 4),
    ([b"<html>\n"], "not JSON", 2),
    ([b"[1, 2]\n"], "not an answer", 2),
    ([b'{"ok": true, "id": "someone else"}\n'], "another request", 2),
], ids=["empty-then-answer", "reset-then-answer", "empty-twice", "reset-twice", "not-json",
        "not-an-object", "other-id"])
def test_the_client_on_a_broken_reply(tmp_path, capsys, script, error, exit_status):
    path = socket_path(tmp_path)
    fake = FakeClock(path, script)
    try:
        if error is None:
            assert ask(path, ["status"]) == {"ok": True, "state": {}}
        else:
            with pytest.raises((BadReply, ReplyLost), match=error):
                ask(path, ["status"])
    finally:
        fake.close()
    if len(script) == 2:
        sent = ids_sent(fake.requests)
        assert len(sent) == 2 and sent[0] == sent[1]          # the retry carries the same id
    path.unlink()
    fake = FakeClock(path, script)
    try:
        assert main(["arbiter", "--state-dir", str(tmp_path), "status"]) == exit_status
    finally:
        fake.close()
    if error is not None:
        assert error in capsys.readouterr().err


def test_the_client_refuses_a_command_too_long_to_send(running, capsys):
    device, state_dir = running
    assert main(["arbiter", "--state-dir", str(state_dir), "warn", "left",
                 "x" * (MAX_REQUEST + 1)]) == 2
    assert "longer than" in capsys.readouterr().err
    assert journaled_commands(device) == []


def test_no_clock_is_exit_3_whether_the_socket_file_is_there_or_not(tmp_path, capsys):
    stale = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    stale.bind(str(socket_path(tmp_path)))     # a socket file nobody listens on
    stale.close()
    assert main(["arbiter", "--state-dir", str(tmp_path), "status"]) == 3
    socket_path(tmp_path).unlink()
    assert main(["arbiter", "--state-dir", str(tmp_path), "status"]) == 3
    assert capsys.readouterr().err.count("no clock answers") == 2


# --- more clients than handlers ---------------------------------------------------------------

def test_beyond_the_handlers_a_client_hears_busy_at_once_and_nothing_is_done(running, tmp_path):
    device, _ = running
    path = tmp_path / "small.sock"
    server = ArbiterServer(path, device.service, Limits(max_handlers=2, slot_wait_s=0.05,
                                                        request_deadline_s=60))
    idle = [socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) for _ in range(2)]
    try:
        for conn in idle:
            conn.connect(str(path))
        answer = json.loads(raw(path, b"deduct left 30s\n"))
        for conn in idle:
            conn.close()                       # their handlers end: room again
        served = ask(path, ["deduct", "left", "30s"])
    finally:
        server.close()
    assert (answer["ok"], answer["busy"], answer["applied"]) == (False, True, False)
    assert served["ok"] is True
    assert journaled_commands(device) == ["deduct left 30s"]


# --- what a request may be --------------------------------------------------------------------

@pytest.mark.parametrize("request_line, error", [
    (b'{"id": "a", "command": "warn left \\udcff"}', "not UTF-8"),
    (b'{"id": "a", "command": "warn left a\\u0000b"}', "control character"),
    (b"warn left a\x00b", "control character"),
    (b'{"id": "a", "command": "warn left x", "force": true}', "unknown key 'force'"),
    (b'{"id": "a b", "command": "undo"}', "'id' must be"),
    (b'{"id": 7, "command": "undo"}', "'id' must be"),
    (b'{"id": "a"}', "'command' must be"),
    (b'{"id": "a", "command": ["undo"]}', "'command' must be"),
    (b'["undo"]', "unknown arbiter command"),        # only an object is JSON here
    (b"{" * 3000, "not a JSON object"),
    (b"\xc3", "not UTF-8"),
    (b"", "no command"),
], ids=lambda v: v if isinstance(v, str) else None)
def test_a_malformed_request_is_refused_with_the_reason(request_line, error):
    service = FakeLoop()
    answer = Responder(service).respond(request_line)            # type: ignore[arg-type]
    assert answer["ok"] is False and error in answer["error"]
    assert service.submitted == []


WORDS = ["deduct", "left", "right", "30s", "-1m", "add", "adjust", "warn", "status", "score",
         "1", "0", "cube", "2", "3", "pause", "undo", "{", "}", "\x00", "é", "\t", "\r", "",
         '"', "\\", "forfeit", "challenge", "upheld", "10m"]


def request_lines() -> st.SearchStrategy[bytes]:
    words = st.lists(st.sampled_from(WORDS), max_size=5).map(" ".join)
    command = st.one_of(words, st.text(max_size=40))
    json_object = st.dictionaries(
        st.sampled_from(["id", "command", "x"]),
        st.one_of(command, st.integers(), st.none(), st.lists(st.integers(), max_size=2)),
        max_size=3).map(json.dumps)
    with_id = st.builds(lambda i, c: json.dumps({"id": i, "command": c}),
                        st.text("abc-_:.Z9 é", min_size=0, max_size=70), command)
    text = st.one_of(words, command, json_object, with_id).map(lambda t: t.encode("utf-8",
                                                                                  "surrogatepass"))
    padded = st.builds(lambda t, n: t + b" " * n, text,
                       st.sampled_from([MAX_REQUEST - 96, MAX_REQUEST - 16, MAX_REQUEST]))
    return st.one_of(st.binary(max_size=80), text, padded,
                     st.builds(bytes.__add__, text, st.binary(max_size=8)))


def expected_command(line: bytes) -> Command | None:
    """What a request line must make the clock do, worked out on its own: a command, or nothing
    (status, or any request that is not whole, valid UTF-8 text and a valid command)."""
    if len(line) > MAX_REQUEST:
        return None
    try:
        text = line.decode("utf-8").strip()
    except UnicodeDecodeError:
        return None
    if text.startswith("{"):
        try:
            obj = json.loads(text)
        except (ValueError, RecursionError):
            return None
        if (not isinstance(obj, dict) or set(obj) - {"id", "command"}
                or not isinstance(obj.get("command"), str)
                or ("id" in obj and not (isinstance(obj["id"], str) and 0 < len(obj["id"]) <= 64
                                         and all(c.isascii() and (c.isalnum() or c in "-_.:")
                                                 for c in obj["id"])))):
            return None
        text = obj["command"]
    if any(unicodedata.category(c) in ("Cc", "Cs") and c not in " \t" for c in text):
        return None
    if text.split() == ["status"]:
        return None
    try:
        return parse_command(text.split())
    except ArbiterSyntaxError:
        return None


@property_settings(150)
@given(request_lines())
def test_fuzz_every_request_gets_a_reply_and_only_a_valid_command_acts(line):
    line = line.split(b"\n", 1)[0]         # the server hands on what precedes the newline
    service = FakeLoop()
    answer = Responder(service).respond(line)                    # type: ignore[arg-type]
    json.dumps(answer)                                            # a JSON reply, always
    assert isinstance(answer["ok"], bool)
    assert answer["ok"] or isinstance(answer["error"], str)
    expected = expected_command(line)
    assert [e.command for e in service.submitted
            if isinstance(e, ArbiterAction)] == ([expected] if expected else [])
    assert answer["ok"] is (expected is not None or answer.get("state") == {"phase": "scripted"})


@property_settings(40, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(request=request_lines())
def test_fuzz_over_the_real_socket_every_request_gets_a_json_reply(running, request):
    device, state_dir = running
    before = len(journaled_commands(device))
    answer = json.loads(raw(socket_path(state_dir), request + b"\n"))
    assert isinstance(answer["ok"], bool)
    acted = len(journaled_commands(device)) - before
    assert acted == (1 if expected_command(request.split(b"\n", 1)[0]) else 0)


def test_the_deduct_table_entry_is_a_deduct():   # the fuzz oracle's own sanity
    assert expected_command(b'{"id": "x", "command": "deduct left 30s"}') == \
        Deduct(Side.LEFT, 30 * S)
    assert expected_command(b"deduct left 30s" + b" " * (MAX_REQUEST - 14)) is None


# --- SIGPIPE at its default, and a fault inside the server ------------------------------------

VANISHING_CLIENTS = """
import signal, socket, sys, tempfile, time
from pathlib import Path
from gammonclock.runtime.arbiter_client import ask
from gammonclock.runtime.arbiter_socket import ArbiterServer
signal.signal(signal.SIGPIPE, signal.SIG_DFL)     # as a careless `main` might leave it

class Service:
    def status(self):
        return {"padding": "x" * 100_000}          # more than a socket buffer takes at once

path = Path(tempfile.mkdtemp()) / "arbiter.sock"
server = ArbiterServer(path, Service())
for _ in range(50):
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
        conn.connect(str(path))
        conn.sendall(b"status\\n")
time.sleep(0.5)
print(ask(path, ["status"])["ok"])
server.close()
"""


def test_the_server_never_raises_sigpipe_even_at_its_default_disposition():
    done = subprocess.run([sys.executable, "-c", VANISHING_CLIENTS], capture_output=True,
                          text=True, timeout=60)
    assert (done.returncode, done.stdout.strip()) == (0, "True"), done.stderr


class FaultyService(FakeLoop):
    def __init__(self) -> None:
        super().__init__()
        self.faults = 1

    def status(self) -> dict[str, object]:
        if self.faults:
            self.faults -= 1
            raise ZeroDivisionError("a bug")
        return super().status()


def test_a_fault_in_the_server_costs_one_reply_not_the_server(tmp_path, caplog):
    server = ArbiterServer(socket_path(tmp_path), FaultyService())   # type: ignore[arg-type]
    try:
        first = ask(socket_path(tmp_path), ["status"])
        second = ask(socket_path(tmp_path), ["status"])
    finally:
        server.close()
    assert first["ok"] is False and "ZeroDivisionError" in first["error"]
    assert second == {"ok": True, "state": {"phase": "scripted"}}

"""The director's page against a hostile network (SPEC §14, issue 18 items 5 and 6): half-open
connections under the usual open-file limit, requests for a name that is not the hall's (DNS
rebinding), a POST without the page's token, a card that is not JSON. Against a real hall (in a
thread, or `gammonclock hall` in a process of its own) and a real Mosquitto."""

from __future__ import annotations

import asyncio
import http.client
import json
import logging
import math
import os
import resource
import select
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from gammonclock.hall.connections import GuardedSite, Limits, QuietLog
from gammonclock.hall.web import PageHosts, card_json, host_name, snapshot_json
from hall_web_helpers import (
    P,
    RunningHall,
    clock_state,
    finished_journal,
    iso,
    publish,
    table_client,
)
from mqtt_helpers import DIRECTOR, Broker, free_port

ROOT = Path(__file__).resolve().parents[2]


def strict_json(text: str | bytes) -> Any:
    """JSON as a browser reads it: NaN and Infinity are not JSON."""
    def refuse(name: str) -> Any:
        raise ValueError(f"{name} is not JSON")
    return json.loads(text, parse_constant=refuse)


# --- half-open connections -----------------------------------------------------------------------

class HallProcess:
    """`gammonclock hall` in a process of its own, started under an open-file limit of 1 024
    (soft and hard: the usual default), its log in a file."""

    def __init__(self, broker: Broker, folder: Path, *more: str,  # noqa: F811
                 nofile: tuple[int, int] = (1024, 1024)) -> None:
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.archive = folder / "archive"
        self.log_path, self.out_path = folder / "hall.log", folder / "hall.out"
        command = [sys.executable, "-m", "gammonclock", "hall", "--broker", broker.url,
                   "--user", DIRECTOR, "--password-file", str(broker.password_file(DIRECTOR)),
                   "--http", f"127.0.0.1:{self.port}", "--archive", str(self.archive), *more]
        with self.log_path.open("wb") as log, self.out_path.open("wb") as out:
            self.process = subprocess.Popen(
                command, stdout=out, stderr=log, cwd=ROOT,
                preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_NOFILE, nofile))

    def wait_ready(self) -> None:
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            assert self.process.poll() is None, self.log_path.read_text()
            try:
                with urllib.request.urlopen(self.base + "/api/cards", timeout=2) as answer:
                    if strict_json(answer.read())["broker"]["connected"]:
                        return
            except OSError:
                pass
            time.sleep(0.1)
        raise AssertionError("the hall did not start: " + self.log_path.read_text())

    def open_files(self) -> int:
        return len(os.listdir(f"/proc/{self.process.pid}/fd"))

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(5)


class HalfOpen:
    """Connections that never finish their request: from 40 other loopback addresses and from
    127.0.0.1 itself, some saying nothing at all, some the slow start of a header. Opened in
    batches, each made before the next (as fast as the server takes them; a burst would only
    overflow the kernel's accept queue)."""

    BATCH = 50

    def __init__(self, port: int, count: int, sources: int = 40, own: int = 100) -> None:
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        if soft < count + 256:
            resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, count + 1024), hard))
        self.sockets: list[socket.socket] = []
        self.closed: set[int] = set()
        self.made = 0
        for first in range(0, count, self.BATCH):
            batch = []
            for n in range(first, min(count, first + self.BATCH)):
                s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
                s.setblocking(False)
                source = "127.0.0.1" if n < own else f"127.0.{1 + n % sources}.{2 + n % 7}"
                s.bind((source, 0))
                s.connect_ex(("127.0.0.1", port))
                batch.append(s)
            self.sockets += batch
            self._wait(batch, timeout=2.0)

    def _wait(self, batch: list[socket.socket], timeout: float) -> None:
        pending = {s.fileno(): s for s in batch}
        poller = select.poll()
        for fd in pending:
            poller.register(fd, select.POLLOUT)
        deadline = time.monotonic() + timeout
        while pending and time.monotonic() < deadline:
            for fd, _event in poller.poll(100):
                s = pending.pop(fd)
                poller.unregister(fd)
                if s.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR) == 0:
                    self.made += 1
                    if fd % 3 == 0:                  # a third start a header and stop there
                        try:
                            s.send(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
                        except OSError:
                            pass

    def still_open(self, poke: bool = False) -> int:
        """How many the server has not closed yet (no end of file, no reset). `poke`: send a
        byte on each first: a connection that the kernel completed while the server's accept
        queue was full never reached the server at all, and learns so (a reset) only when it
        sends."""
        for n, s in enumerate(self.sockets):
            if n in self.closed:
                continue
            try:
                if poke:
                    s.send(b"G")
                while s.recv(4096):                   # an answer (408, 400) may come first
                    pass
                self.closed.add(n)                    # the end of the stream
            except BlockingIOError:                   # nothing to read: still open
                pass
            except OSError:                           # reset
                self.closed.add(n)
        return len(self.sockets) - len(self.closed)

    def close(self) -> None:
        for s in self.sockets:
            s.close()


def test_half_open_connections_neither_take_the_page_down_nor_lose_a_journal(
        broker: Broker, tmp_path: Path) -> None:  # noqa: F811
    """1 100 half-open connections against a hall under a 1 024 open-file limit: the director's
    requests are answered within seconds, a journal sent meanwhile is archived, every half-open
    connection is closed after the header deadline (1 s here), and the log stays a few lines."""
    journal, _state = finished_journal(tmp_path)
    hall = HallProcess(broker, tmp_path, "--page-header-timeout", "1")
    flood: HalfOpen | None = None
    table = table_client(broker, "table-1")   # first: paho's select() wants a low fd
    try:
        hall.wait_ready()
        flood = HalfOpen(hall.port, 1100)
        peak = hall.open_files()
        publish(table, f"{P}/table-1/journal", {"journal": journal.name,
                                                 "text": journal.read_text()})
        answered = []
        for _ in range(4):                            # the director's page, meanwhile
            started = time.monotonic()
            with urllib.request.urlopen(hall.base + "/api/cards", timeout=5) as answer:
                assert answer.status == 200
                strict_json(answer.read())
            answered.append(time.monotonic() - started)
            peak = max(peak, hall.open_files())
        archived = hall.archive / "table-1" / journal.name
        deadline = time.monotonic() + 10
        while not archived.exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        assert archived.exists(), "the journal sent during the flood was not archived"
        assert archived.read_text() == journal.read_text()
        # The header deadline (1 s) closes every one of them, wherever it stopped.
        deadline = time.monotonic() + 3
        while hall.open_files() > 40 and time.monotonic() < deadline:
            time.sleep(0.1)
        assert hall.open_files() <= 40, f"the hall still holds {hall.open_files()} files"
        flood.still_open(poke=True)              # (it may reach the server now: 1 s more)
        deadline = time.monotonic() + 4
        while (left := flood.still_open()) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert left == 0, f"{left} connections still open"
        assert peak <= 512 + 160, f"the hall held {peak} files at the peak"
        assert flood.made >= 1000, f"only {flood.made} of 1100 connections were made"
        with urllib.request.urlopen(hall.base + "/api/cards", timeout=5) as answer:
            assert answer.status == 200
    finally:
        table.disconnect()
        table.loop_stop()
        if flood is not None:
            flood.close()
        hall.stop()
    log = hall.log_path.read_bytes()
    assert len(log) < 8000 and log.count(b"\n") < 60, log.decode(errors="replace")[-3000:]
    assert b"Traceback" not in log
    assert max(answered) < 5, answered


def test_the_hall_raises_its_open_file_limit_to_the_hard_one(broker: Broker,  # noqa: F811
                                                             tmp_path: Path) -> None:
    hall = HallProcess(broker, tmp_path, nofile=(256, 2048))
    try:
        hall.wait_ready()
        limits = Path(f"/proc/{hall.process.pid}/limits").read_text()
    finally:
        hall.stop()
    [line] = [x for x in limits.splitlines() if x.startswith("Max open files")]
    assert line.split()[3:5] == ["2048", "2048"], line


def test_page_arguments(tmp_path: Path) -> None:
    from gammonclock.hall.run import UsageError, options_of
    from hall_web_helpers import hall_args
    _options, page = options_of(hall_args(tmp_path, page_host=["Hall.Local", "[fe80::1]",
                                                           "10.0.0.9"]))
    assert page.limits == Limits()
    for host in ("hall.local:8080", "[fe80::1]:8080", "10.0.0.9", "localhost:8080"):
        assert page.hosts.allows(host), host
    assert not page.hosts.allows("evil.example:8080")
    _options, page = options_of(hall_args(tmp_path, page_header_timeout=1.5))
    assert (page.limits.header_s, page.limits.idle_s) == (1.5, 1.5)
    for bad in ({"page_host": ["hall.local:8080"]}, {"page_host": ["a b"]},
                {"page_header_timeout": 0.0}, {"page_header_timeout": 1e9}):
        with pytest.raises(UsageError, match="--page-h"):
            options_of(hall_args(tmp_path, **bad))


# --- the page's own names (DNS rebinding) -------------------------------------------------------

ROUTES = [("GET", "/"), ("GET", "/static/hall.js"), ("GET", "/static/hall.css"),
          ("GET", "/events"), ("GET", "/api/cards"), ("GET", "/api/archive"),
          ("GET", "/archive/table-1/match-1.jsonl"), ("GET", "/no/such/page"),
          ("POST", "/api/round"), ("POST", "/api/cmd"), ("POST", "/api/dismiss"),
          ("POST", "/api/dismiss-all")]


def request(port: int, method: str, path: str, host: str | None,
            headers: dict[str, str] | None = None, body: Any = None) -> tuple[int, bytes]:
    """One request with exactly this Host header (None: none at all); the status and the start
    of the body (a stream is not read to its end)."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        connection.putrequest(method, path, skip_host=True, skip_accept_encoding=True)
        if host is not None:
            connection.putheader("Host", host)
        data = json.dumps(body).encode() if body is not None else b""
        for name, value in {**({"Content-Type": "application/json"} if method == "POST"
                               else {}), **(headers or {})}.items():
            connection.putheader(name, value)
        connection.putheader("Content-Length", str(len(data)))
        connection.endheaders(data)
        answer = connection.getresponse()
        return answer.status, answer.read(300) if answer.status != 200 or not path.startswith(
            "/events") else b""
    finally:
        connection.close()


@pytest.fixture
def hall(broker: Broker, tmp_path: Path) -> Iterator[RunningHall]:  # noqa: F811
    with RunningHall(broker, tmp_path / "archive") as running:
        yield running


@pytest.mark.parametrize("method, path", ROUTES)
def test_every_route_answers_only_to_the_halls_own_names(hall: RunningHall, method: str,
                                                         path: str) -> None:
    port = hall.port
    body = {"table": "table-1", "command": "pause", "key": "x", "csv": ""}
    headers = {"X-Hall-Token": hall.token}
    for foreign in (f"evil.example:{port}", "evil.example", f"localhost.evil.example:{port}",
                    f"127.0.0.1.nip.io:{port}", f"hall.local:{port}", "", None):
        status, text = request(port, method, path, foreign, headers, body)
        assert status in (421, 400), (foreign, status)
        if status == 421:
            assert b"own names" in text and b"--page-host" in text
    for own in (f"127.0.0.1:{port}", f"localhost:{port}", f"LOCALHOST:{port}", f"[::1]:{port}",
                f"127.8.9.10:{port}", "127.0.0.1"):
        status, _text = request(port, method, path, own, headers, body)
        assert status != 421, (own, status)


def test_a_name_given_with_page_host_is_answered(broker: Broker, tmp_path: Path) -> None:  # noqa: F811
    with RunningHall(broker, tmp_path / "archive",
                     hosts=PageHosts.of("127.0.0.1", ["hall.local"])) as running:
        assert request(running.port, "GET", "/api/cards", f"hall.local:{running.port}")[0] == 200
        assert request(running.port, "GET", "/api/cards", f"hall.lan:{running.port}")[0] == 421


@pytest.mark.parametrize("bind, names, host, ok", [
    ("127.0.0.1", (), "localhost:8080", True),
    ("127.0.0.1", (), "127.0.0.1", True),
    ("127.0.0.1", (), "127.45.0.3:8080", True),
    ("127.0.0.1", (), "[::1]:8080", True),
    ("127.0.0.1", (), "evil.example:8080", False),
    ("127.0.0.1", (), "10.0.0.2:8080", False),          # not this bind's address
    ("127.0.0.1", ("hall.local",), "HALL.LOCAL.:8080", True),
    ("10.0.0.2", (), "10.0.0.2:8080", True),
    ("10.0.0.2", (), "localhost:8080", False),          # not reachable on that bind
    ("10.0.0.2", ("hall.local",), "hall.local", True),
    ("0.0.0.0", (), "10.0.0.2:8080", True),             # an address is never a rebinding name
    ("0.0.0.0", (), "[fe80::1]:8080", True),
    ("0.0.0.0", (), "localhost:8080", True),
    ("0.0.0.0", (), "evil.example:8080", False),
    ("0.0.0.0", ("hall.local",), "hall.local:8080", True),
    ("::", (), "hall.local:8080", False),
    ("127.0.0.1", (), "127.0.0.1:80:80", False),
    ("127.0.0.1", (), "[::1", False),
    ("127.0.0.1", (), "127.0.0.1@evil.example", False),
    ("127.0.0.1", (), None, False),
])
def test_the_names_a_bind_answers_to(bind: str, names: tuple[str, ...], host: str | None,
                                     ok: bool) -> None:
    assert PageHosts.of(bind, names).allows(host) is ok


def test_host_names() -> None:
    assert host_name("[::1]:8080") == "::1"
    assert host_name("Hall.Local.") == "hall.local"
    assert host_name("a b") is None and host_name("") is None and host_name("x:y") is None


# --- the page's token ---------------------------------------------------------------------------

def test_a_post_without_the_pages_token_is_refused(hall: RunningHall, broker: Broker) -> None:  # noqa: F811
    received: list[dict[str, Any]] = []
    table = table_client(broker, "table-1")
    table.on_message = lambda _c, _u, msg: received.append(json.loads(msg.payload))
    table.subscribe(f"{P}/table-1/cmd", qos=1)
    try:
        publish(table, f"{P}/table-1/state", clock_state())
        hall.wait(lambda: "table-1" in hall.hall.view.tables, "the table seen")
        for token in (None, "", "guess", hall.token[:-1]):
            with pytest.raises(urllib.error.HTTPError) as refused:
                hall.post("/api/cmd", {"table": "table-1", "command": "deduct left 1s",
                                       "wait": 0}, token=token)
            assert refused.value.code == 403
            assert "token" in json.loads(refused.value.read())["error"]
        time.sleep(0.3)
        assert received == []
        hall.post("/api/cmd", {"table": "table-1", "command": "deduct left 1s", "wait": 0})
        hall.wait(lambda: len(received) == 1, "the command with the token reached the table")
    finally:
        table.disconnect()
        table.loop_stop()
    # The page carries it; so does the stream's snapshot (a page open across a restart).
    with urllib.request.urlopen(hall.base + "/", timeout=5) as page:
        assert f'<meta name="hall-token" content="{hall.token}">' in page.read().decode()
        assert page.headers["X-Frame-Options"] == "DENY"
    with urllib.request.urlopen(hall.base + "/events", timeout=5) as stream:
        stream.readline()
        snapshot = strict_json(stream.readline().decode().removeprefix("data: "))
    assert snapshot["token"] == hall.token


def _flags(table: Any, count: int, journal: str = "match-1.jsonl") -> None:
    for seq in range(1, count + 1):
        publish(table, f"{P}/table-1/events",
                {"journal": journal, "seq": seq, "at": iso(),
                 "effects": [{"kind": "flag_fell", "side": "left"},
                             {"kind": "challenge_decided", "side": "right", "upheld": True}]})


def test_mark_all_seen(hall: RunningHall, broker: Broker) -> None:  # noqa: F811
    table = table_client(broker, "table-1")
    try:
        publish(table, f"{P}/table-1/state", clock_state())
        _flags(table, 6)
        hall.wait(lambda: hall.hall.view.events_counted == 6, "the events")
    finally:
        table.disconnect()
        table.loop_stop()
    assert len([n for n in hall.card("table-1")["needs"] if n["key"]]) >= 2
    answer = hall.post("/api/dismiss-all", {"table": "table-1"})
    assert answer["ok"] and answer["dismissed"] >= 2
    assert [n for n in hall.card("table-1")["needs"] if n["key"]] == []
    with pytest.raises(urllib.error.HTTPError) as unknown:
        hall.post("/api/dismiss-all", {"table": "table-9"})
    assert unknown.value.code == 404
    with pytest.raises(urllib.error.HTTPError) as untokened:
        hall.post("/api/dismiss-all", {"table": "table-1"}, token=None)
    assert untokened.value.code == 403


# --- a card that is not JSON --------------------------------------------------------------------

def test_a_state_with_nan_is_refused_at_the_door_and_spoils_nothing(
        hall: RunningHall, broker: Broker) -> None:  # noqa: F811
    """NaN and 1e999 are not JSON: the hall refuses the state that holds them, counts it on its
    table's card, and keeps the table's last good state; the other table's card moves on."""
    clients = [table_client(broker, t) for t in ("table-1", "table-2")]
    try:
        publish(clients[0], f"{P}/table-1/state", clock_state("table-1", seq=5), retain=True)
        publish(clients[1], f"{P}/table-2/state", clock_state("table-2"), retain=True)
        hall.wait(lambda: {"table-1", "table-2"} <= set(hall.hall.view.tables), "both seen")
        text = json.dumps(clock_state("table-1", seq=9)).replace(
            '"reserve_ms": 600000', '"reserve_ms": NaN').replace('"game": 2', '"game": 1e999')
        publish(clients[0], f"{P}/table-1/state", text, retain=True)
        publish(clients[1], f"{P}/table-2/state", clock_state("table-2", seq=8), retain=True)
        hall.wait(lambda: hall.hall.view.table("table-1").bad_messages == 1
                  and (hall.hall.view.table("table-2").state or {}).get("seq") == 8,
                  "the NaN refused, table-2's seq 8 taken")
        cards = {c["table"]: c for c in strict_json(
            urllib.request.urlopen(hall.base + "/api/cards", timeout=5).read())["cards"]}
    finally:
        for client in clients:
            client.disconnect()
            client.loop_stop()
    assert cards["table-1"]["state"]["seq"] == 5                 # the last good state, kept
    assert cards["table-1"]["state"]["clock"]["left"]["reserve_ms"] == 600_000
    assert cards["table-1"]["bad_messages"] == 1
    assert [n for n in cards["table-1"]["needs"] if n["kind"] == "bad"]
    assert cards["table-2"]["state"]["seq"] == 8 and cards["table-2"]["bad_messages"] == 0


def events_of(stream: Any, until: Any, seconds: float = 5.0) -> dict[str, dict[str, Any]]:
    """The cards of the page's stream (its snapshot, then its updates), each table's last, read
    strictly (as a browser's JSON.parse), until `until(cards)`."""
    seen: dict[str, dict[str, Any]] = {}
    deadline = time.monotonic() + seconds
    while not until(seen):
        assert time.monotonic() < deadline, seen
        line = stream.readline().decode()
        if line.startswith("data: "):
            for card in strict_json(line.removeprefix("data: ")).get("cards", []):
                seen[card["table"]] = card
    return seen


def test_a_card_with_nan_spoils_only_its_own_table(hall: RunningHall, broker: Broker) -> None:  # noqa: F811
    """A NaN that reaches a card (none comes from a table: its state is refused at the door,
    above; one made by the hall's own view) turns that card alone into a stub that says so: the
    page's snapshot, its updates and /api/cards stay JSON, and the other table's card is whole,
    in the same update as the stub and after it."""
    clients = [table_client(broker, t) for t in ("table-1", "table-2")]
    try:
        publish(clients[0], f"{P}/table-1/state", clock_state("table-1", seq=5), retain=True)
        publish(clients[1], f"{P}/table-2/state", clock_state("table-2"), retain=True)
        hall.wait(lambda: {"table-1", "table-2"} <= set(hall.hall.view.tables), "both seen")

        async def spoil() -> None:       # on the hall's loop, as the view's own work is
            for table in ("table-1", "table-2"):
                view = hall.hall.view.table(table)
                if table == "table-1":
                    view.state = {**(view.state or {}), "game": math.inf,
                                  "clock": {"left": {"reserve_ms": math.nan}}}
                hall.hall.changed(table)    # one update with both cards

        with urllib.request.urlopen(hall.base + "/events", timeout=5) as stream:
            events_of(stream, lambda seen: {"table-1", "table-2"} <= set(seen))
            asyncio.run_coroutine_threadsafe(spoil(), hall.loop).result(5)
            publish(clients[1], f"{P}/table-2/state", clock_state("table-2", seq=8),
                    retain=True)
            seen = events_of(stream, lambda seen: seen.get("table-1", {}).get("error")
                             and seen.get("table-2", {}).get("state", {}).get("seq") == 8)
        with urllib.request.urlopen(hall.base + "/events", timeout=5) as stream:
            snapshot = events_of(stream, lambda seen: {"table-1", "table-2"} <= set(seen))
        cards = {c["table"]: c for c in strict_json(
            urllib.request.urlopen(hall.base + "/api/cards", timeout=5).read())["cards"]}
    finally:
        for client in clients:
            client.disconnect()
            client.loop_stop()
    for page in (seen, snapshot, cards):
        assert page["table-1"]["state"] == {}
        assert page["table-1"]["error"].startswith("this table's card cannot be shown")
        assert [n["kind"] for n in page["table-1"]["needs"]] == ["bad"]
        assert page["table-2"]["state"] == clock_state("table-2", seq=8,
                                                       at=page["table-2"]["state"]["at"])
        assert "error" not in page["table-2"]


def test_card_json_never_emits_nan() -> None:
    good = {"table": "t2", "state": {"seq": 1}, "needs": []}
    bad = {"table": "t1", "state": {"clock": math.nan, "x": math.inf}, "needs": []}
    stub = strict_json(card_json(bad))
    assert stub["table"] == "t1" and stub["needs"][0]["kind"] == "bad"
    assert "cannot be shown" in stub["error"]
    both = strict_json(snapshot_json({"server_now_ms": 1, "cards": [bad, good]}))
    assert [c["table"] for c in both["cards"]] == ["t1", "t2"]
    assert both["cards"][1] == good and both["server_now_ms"] == 1


# --- the log ------------------------------------------------------------------------------------

def test_the_log_says_a_kind_once_per_window_with_the_count_left_out() -> None:
    now = [0.0]
    quiet = QuietLog(10.0, clock=lambda: now[0])
    records = []

    def say(message: str, *args: Any, exc: BaseException | None = None) -> bool:
        record = logging.LogRecord("asyncio", logging.ERROR, __file__, 1, message, args,
                                   (type(exc), exc, None) if exc else None)
        shown = quiet.filter(record)
        if shown:
            records.append(record.getMessage())
            assert record.exc_info is None
        return shown

    assert say("socket.accept() out of system resource\nsocket: <fd=5>",
               exc=OSError(24, "Too many open files"))
    for n in range(500):
        now[0] += 0.01
        assert not say(f"socket.accept() out of system resource\nsocket: <fd={n}>")
    assert say("page: a request for host %s refused", "'evil'")     # another kind: shown
    now[0] = 10.5
    assert say("socket.accept() out of system resource\nsocket: <fd=9>")
    assert records == ["socket.accept() out of system resource: OSError: [Errno 24] Too many "
                       "open files", "page: a request for host 'evil' refused",
                       "socket.accept() out of system resource (and 500 more like this in the "
                       "last 10 s)"]


# --- the deadlines of a connection ----------------------------------------------------------------

FAST = Limits(header_s=0.8, idle_s=0.8, body_s=0.8, stall_s=0.8)


@pytest.fixture
def fast_hall(broker: Broker, tmp_path: Path) -> Iterator[RunningHall]:  # noqa: F811
    with RunningHall(broker, tmp_path / "archive", limits=FAST) as running:
        yield running


def _raw(hall: RunningHall, receive_buffer: int | None = None) -> socket.socket:
    s = socket.socket()
    if receive_buffer is not None:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, receive_buffer)
    s.connect(("127.0.0.1", hall.port))
    s.settimeout(5)
    return s


def _closed_within(s: socket.socket, seconds: float) -> float:
    """Read until the server closes; the time it took (fails past SECONDS)."""
    started = time.monotonic()
    s.settimeout(seconds)
    try:
        while s.recv(65536):
            pass
    except ConnectionResetError:
        pass
    except TimeoutError:
        raise AssertionError(f"still open after {seconds} s") from None
    return time.monotonic() - started


def _gate(hall: RunningHall) -> Any:
    assert hall._runner is not None
    [site] = [s for s in hall._runner.sites if isinstance(s, GuardedSite)]
    return site.gate


def test_a_request_whose_headers_never_end_is_closed(fast_hall: RunningHall) -> None:
    with _raw(fast_hall) as s:
        s.sendall(b"GET /api/cards HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        for _ in range(3):                            # a byte now and then is not enough
            time.sleep(0.2)
            s.sendall(b"X-A: b\r\n")
        assert _closed_within(s, 2.0) < 1.5
    with _raw(fast_hall) as s:                          # blank lines do not start the clock
        for _ in range(6):
            s.sendall(b"\r\n")
            time.sleep(0.05)
        assert _closed_within(s, 2.0) < 1.5
    assert _gate(fast_hall).counts.late >= 2


def test_a_kept_alive_connection_is_closed_when_idle_or_slow(fast_hall: RunningHall) -> None:
    request = b"GET /api/cards HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
    for then in (b"", b"GET /api/cards HTTP/1.1\r\n"):    # nothing; a second request, slowly
        with _raw(fast_hall) as s:
            s.sendall(request)
            assert s.recv(65536).startswith(b"HTTP/1.1 200")
            s.sendall(then)
            assert _closed_within(s, 3.0) < 2.0


def test_a_body_that_never_comes_is_answered_408(fast_hall: RunningHall) -> None:
    with _raw(fast_hall) as s:
        s.sendall(b"POST /api/cmd HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json"
                  b"\r\nX-Hall-Token: " + fast_hall.token.encode() + b"\r\n"
                  b"Content-Length: 100\r\n\r\n{\"table\": ")
        started = time.monotonic()
        answer = s.recv(65536)
        assert answer.startswith(b"HTTP/1.1 408"), answer[:200]
        assert time.monotonic() - started < 2.0


def test_a_page_that_reads_nothing_of_its_stream_is_dropped(fast_hall: RunningHall) -> None:
    """The stream itself lives on; a peer that stops reading it holds nothing for long."""
    hall = fast_hall.hall
    card_of = hall.view.card
    hall.view.card = lambda table: {**card_of(table), "padding": "x" * 200_000}  # type: ignore[method-assign]
    hall.view.table("table-1")
    with _raw(fast_hall, receive_buffer=4096) as s:
        s.sendall(b"GET /events HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        fast_hall.wait(lambda: len(hall.listeners) == 1, "the stream open")
        time.sleep(1.2)                                # past the header deadline: still open
        assert len(hall.listeners) == 1
        for _ in range(40):                            # 8 MB it never reads
            fast_hall.loop.call_soon_threadsafe(hall.changed, "table-1")
            time.sleep(0.02)
        fast_hall.wait(lambda: not hall.listeners, "the stream dropped", timeout=5)
    assert _gate(fast_hall).counts.stalled == 1


def test_the_gate_counts_out_a_connection_admitted_by_evicting_its_addresss_last() -> None:
    """Review of issue 18: admitting a connection by evicting the only waiting one from its own
    address left it in a set the map no longer held, so it was never counted out: repeated, the
    gate refused every connection."""
    import asyncio

    from gammonclock.hall.connections import Gate, GuardedConnection, Limits

    gate = Gate(lambda: asyncio.Protocol(), Limits(per_address=1, total=16))

    def arriving(address: str) -> GuardedConnection:
        connection = GuardedConnection(gate)
        connection.address = address
        return connection

    for n in range(16):
        assert gate.admit(arriving(f"10.0.0.{n}"))
    newcomer = arriving("10.0.0.0")          # its address's only connection is evicted for it
    assert gate.admit(newcomer) and gate.open == 16
    gate.release(newcomer)
    assert gate.open == 15

"""Every route of the director's page, walked from the app's own router (a route added later is
tried too), against a real hall and Mosquitto: a foreign Host is refused (DNS rebinding), an
action without the page's token is refused and reaches no table, the page's password guards all
but the spectators' pages, and the archive serves nothing outside a table's journals."""

from __future__ import annotations

import base64
import http.client
import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from hall_web_helpers import RunningHall
from mqtt_helpers import Broker

PUBLIC = ("/public", "/overlay/", "/public/assets/")   # no password (SPEC §14): spectators'
SAMPLES = {"table": "table-1", "name": "match-1.jsonl", "filename": "hall.js"}


def routes(hall: RunningHall) -> list[tuple[str, str]]:
    """(method, a path) of every route the page's app has, its parameters filled in."""
    found = set()
    for route in hall.app.router.routes():
        info = route.resource.get_info() if route.resource is not None else {}
        path = info.get("path") or info.get("formatter") or info.get("prefix")
        if path is None or route.method == "HEAD":
            continue
        if "prefix" in info:                      # the static folder: one of its files
            path = path.rstrip("/") + "/hall.js"
        path = re.sub(r"\{(\w+)(:[^}]*)?\}", lambda m: SAMPLES.get(m[1], "x"), path)
        found.add((route.method, path))
    assert ("POST", "/api/cmd") in found and ("GET", "/overlay/table-1") in found, found
    return sorted(found)


def request(port: int, method: str, path: str, host: str | None,
            headers: dict[str, str] | None = None) -> tuple[int, bytes]:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=20)
    try:
        connection.putrequest(method, path, skip_host=True, skip_accept_encoding=True)
        if host is not None:
            connection.putheader("Host", host)
        body = b"{}" if method == "POST" else b""
        for name, value in {**({"Content-Type": "application/json"} if method == "POST"
                               else {}), **(headers or {})}.items():
            connection.putheader(name, value)
        connection.putheader("Content-Length", str(len(body)))
        connection.endheaders(body)
        answer = connection.getresponse()
        # a stream (/events) is answered and left unread
        return answer.status, answer.read(300) if path != "/events" else b""
    finally:
        connection.close()


def basic(password: str) -> dict[str, str]:
    return {"Authorization": "Basic " + base64.b64encode(f"td:{password}".encode()).decode()}


@pytest.fixture
def guarded(broker: Broker, tmp_path: Path) -> Iterator[RunningHall]:  # noqa: F811
    with RunningHall(broker, tmp_path / "archive", password="page-secret") as running:
        yield running


def test_every_route_refuses_a_foreign_host(guarded: RunningHall) -> None:
    port = guarded.port
    for method, path in routes(guarded):
        for foreign in (f"evil.example:{port}", f"127.0.0.1.nip.io:{port}", None):
            status, _ = request(port, method, path, foreign,
                                {"X-Hall-Token": guarded.token, **basic("page-secret")})
            # a request with no Host at all may be refused by HTTP itself (400); a name, never
            # but by the hall's check (a handler's own 400 would hide a missing one)
            allowed = (421, 400) if foreign is None else (421,)
            assert status in allowed, (method, path, foreign, status)


def test_every_route_but_the_spectators_asks_the_pages_password(guarded: RunningHall) -> None:
    from gammonclock.hall.web import GUESSES

    guarded.app[GUESSES].allowed = 10_000     # many wrong passwords here: none held back
    port, own = guarded.port, f"127.0.0.1:{guarded.port}"
    for method, path in routes(guarded):
        for wrong in ({}, basic("guess"), basic("page-secret ")):
            status, _ = request(port, method, path, own, {"X-Hall-Token": guarded.token, **wrong})
            if path.startswith(PUBLIC):
                assert status != 401, (method, path, status)
            else:
                assert status == 401, (method, path, wrong, status)


def test_every_action_asks_the_pages_token(guarded: RunningHall) -> None:
    port, own = guarded.port, f"127.0.0.1:{guarded.port}"
    posts = [path for method, path in routes(guarded) if method == "POST"]
    assert {"/api/round", "/api/cmd", "/api/move", "/api/dismiss"} <= set(posts), posts
    for path in posts:
        for token in (None, "", "guess", guarded.token[:-1]):
            headers = basic("page-secret") | ({} if token is None else {"X-Hall-Token": token})
            status, text = request(port, "POST", path, own, headers)
            assert status == 403, (path, token, status)
            assert "token" in json.loads(text)["error"], (path, text)


@pytest.mark.parametrize("path", [
    "/archive/table-1/..%2F..%2Fpushed-rounds.json",
    "/archive/table-1/../hall-decisions.jsonl",
    "/archive/..%2Fetc/passwd",
    "/archive/table-1/%2e%2e%2fhall-decisions.jsonl",
    "/archive/.live/table-1%2Fmatch-1.jsonl",
    "/archive/table-1/.match-1.jsonl.tmp-1-abcd",
    "/archive/table-1/match-1.jsonl%00.txt",
    "/archive/table-1/match-1.jsonl/..",
    "/archive/table%2F1/match-1.jsonl",
])
def test_the_archive_serves_a_tables_journals_and_nothing_else(guarded: RunningHall,
                                                               path: str) -> None:
    archive = guarded.options.archive
    (archive / "table-1").mkdir(parents=True, exist_ok=True)
    (archive / ".live" / "table-1").mkdir(parents=True, exist_ok=True)
    for secret in (archive / "pushed-rounds.json", archive / "hall-decisions.jsonl",
                   archive / "table-1" / ".match-1.jsonl.tmp-1-abcd",
                   archive / ".live" / "table-1" / "match-1.jsonl"):
        secret.write_text("SECRET\n")
    (archive / "table-1" / "match-1.jsonl").write_text("a journal\n")
    own = f"127.0.0.1:{guarded.port}"
    assert request(guarded.port, "GET", "/archive/table-1/match-1.jsonl", own,
                   basic("page-secret"))[0] == 200
    status, text = request(guarded.port, "GET", path, own, basic("page-secret"))
    assert status in (400, 404), (path, status)
    assert b"SECRET" not in text



def status_from(source: str, port: int, headers: dict[str, str]) -> int:
    """GET /api/cards from the local address `source` (127.0.0.2: another machine, as the hall
    sees it)."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=20,
                                            source_address=(source, 0))
    try:
        connection.request("GET", "/api/cards", headers={"Host": f"127.0.0.1:{port}",
                                                         **headers})
        answer = connection.getresponse()
        answer.read()
        return answer.status
    finally:
        connection.close()


def test_wrong_passwords_from_one_address_make_it_wait_and_no_other(
        guarded: RunningHall) -> None:
    from gammonclock.hall.web import GUESSES

    guesses = guarded.app[GUESSES]
    now = [1000.0]
    guesses.clock = lambda: now[0]          # the page's minute, moved by the test
    port = guarded.port
    assert status_from("127.0.0.1", port, {}) == 401        # a browser's first request
    for n in range(guesses.allowed):
        assert status_from("127.0.0.1", port, basic(f"guess-{n}")) == 401
    # the right password too must wait now: a guesser who found it learns nothing yet
    assert status_from("127.0.0.1", port, basic("page-secret")) == 429
    assert status_from("127.0.0.1", port, basic("guess-x")) == 429
    # another address is not held back by this one's guesses
    assert status_from("127.0.0.2", port, basic("page-secret")) == 200
    now[0] += guesses.window_s - 1
    assert status_from("127.0.0.1", port, basic("page-secret")) == 429
    now[0] += 1.001
    assert status_from("127.0.0.1", port, basic("page-secret")) == 200


def test_the_wrong_passwords_remembered_are_bounded_and_buy_no_more_guesses() -> None:
    from gammonclock.hall.connections import WrongPasswords

    now = [0.0]
    guesses = WrongPasswords(allowed=3, window_s=60, clock=lambda: now[0])
    for n in range(WrongPasswords.MAX_ADDRESSES + 100):
        address = f"10.{n >> 16}.{(n >> 8) & 255}.{n & 255}"
        if guesses.wait_s(address) == 0:
            guesses.wrong(address)
    assert len(guesses._wrong) == WrongPasswords.MAX_ADDRESSES
    # every place held within its minute: a new address waits as a held one does
    assert guesses.wait_s("10.99.0.1") == 61
    for _ in range(3):
        guesses.wrong("10.99.0.1")
    assert len(guesses._wrong) == WrongPasswords.MAX_ADDRESSES
    now[0] = 60.5                          # the first places' minutes are over
    assert guesses.wait_s("10.99.0.1") == 0
    for _ in range(3):
        guesses.wrong("10.99.0.1")
    assert guesses.wait_s("10.99.0.1") == 61
    assert len(guesses._wrong) == WrongPasswords.MAX_ADDRESSES


def test_an_ipv6_guesser_counts_by_its_64() -> None:
    from gammonclock.hall.connections import WrongPasswords

    guesses = WrongPasswords(allowed=3, window_s=60, clock=lambda: 0.0)
    for host in ("2001:db8:1:2::1", "2001:db8:1:2::2", "2001:db8:1:2:ffff::9"):
        guesses.wrong(host)
    assert guesses.wait_s("2001:db8:1:2::77") == 61        # the same /64
    assert guesses.wait_s("2001:db8:1:3::1") == 0          # another
    assert WrongPasswords.who("::ffff:10.0.0.5") == "10.0.0.5"

def test_every_action_refuses_a_key_it_does_not_know(guarded: RunningHall) -> None:
    """A misspelt key is refused with what the route takes, never passed over (a `"lve": true`
    on a move would otherwise be a move without the confirmation, said nowhere)."""
    own = f"127.0.0.1:{guarded.port}"
    posts = [path for method, path in routes(guarded) if method == "POST"]
    for path in posts:
        connection = http.client.HTTPConnection("127.0.0.1", guarded.port, timeout=20)
        try:
            connection.request("POST", path, body=json.dumps({"table": "table-1",
                                                              "lve": True}),
                               headers={"Host": own, "Content-Type": "application/json",
                                        "X-Hall-Token": guarded.token,
                                        **basic("page-secret")})
            answer = connection.getresponse()
            text = answer.read().decode()
        finally:
            connection.close()
        assert answer.status == 400, (path, answer.status, text)
        assert "unknown key 'lve'" in text and f"{path} takes" in text, (path, text)

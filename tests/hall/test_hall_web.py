"""The director's side of the hall (SPEC §14), against a real Mosquitto (tests/mqtt_helpers.py):
the view de-duplicates events and shows states, a round is pushed as retained match files, a
command gets its reply, finished journals are archived and verified, the page asks for a
password off loopback, `hall add-table` makes a working account, and mqtts:// works."""

from __future__ import annotations

import json
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from gammonclock.hall.archive import ArchiveError, store, verify_archived
from gammonclock.hall.pairings import parse_pairings
from gammonclock.hall.run import UsageError, http_address, options_of
from gammonclock.hall.view import HallView
from gammonclock.wire import BrokerURL, BrokerURLError
from hall_web_helpers import (
    P,
    RunningHall,
    clock_state,
    finished_journal,
    hall_args,
    iso,
    publish,
    table_client,
)
from mqtt_helpers import DIRECTOR, Broker, Collector, free_port

ROOT = Path(__file__).resolve().parents[2]
# --- the view, without a broker ----------------------------------------------------------------

def _event(seq: int, journal: str = "j1.jsonl", *effects: dict[str, Any]) -> bytes:
    return json.dumps({"journal": journal, "seq": seq, "at": iso(),
                       "effects": list(effects) or [{"kind": "turn_ended"}]}).encode()


@pytest.mark.parametrize("deliveries, counted, duplicates", [
    ([(1, "a"), (2, "a"), (3, "a")], 3, 0),
    ([(1, "a"), (1, "a"), (2, "a"), (1, "a")], 2, 2),
    ([(1, "a"), (1, "b"), (2, "b"), (2, "b")], 3, 1),   # a new match restarts seq: another key
])
def test_events_count_once_per_journal_and_seq(deliveries: list[tuple[int, str]], counted: int,
                                               duplicates: int) -> None:
    view = HallView(P)
    for seq, journal in deliveries:
        view.receive(f"{P}/t1/events", _event(seq, journal), 0)
    assert (view.events_counted, view.duplicates) == (counted, duplicates)
    assert view.card("t1")["events"] == counted


def test_an_older_state_never_winds_a_card_back() -> None:
    view = HallView(P)
    now = time.time_ns() // 1_000_000
    view.receive(f"{P}/t1/state", json.dumps(clock_state(seq=9, at=iso(now))).encode(), now)
    view.receive(f"{P}/t1/state", json.dumps(clock_state(seq=4, at=iso(now - 5000))).encode(),
                 now, retained=True)
    assert view.card("t1")["state"]["seq"] == 9


@pytest.mark.parametrize("messages, kinds", [
    ([("state", clock_state(flag="left", phase="match_over", running=None))], ["flag"]),
    ([("state", clock_state(phase="paused", running=None))], ["paused"]),
    ([("state", clock_state(phase="arbiter", running=None))], ["paused"]),   # the chord
    ([("state", clock_state(phase="break", running="right"))], ["overrun"]),
    ([("state", clock_state(phase="break", running=None))], []),
    ([("online", "0")], ["offline"]),
    ([("online", "0"), ("online", "1")], []),
    ([("cmd/reply", {"id": "x", "ok": False, "reason": "no such side"})], ["refused"]),
    ([("notice", {"ok": False, "error": "match.length: 0 is out of range", "at": "x"})],
     ["notice"]),
    ([("events", {"journal": "j", "seq": 3, "at": "x",
                  "effects": [{"kind": "challenge_decided", "side": "left", "upheld": False}]})],
     ["challenge"]),
    ([("state", clock_state()), ("events", {"journal": "j", "seq": 3, "at": "x",
                                            "effects": [{"kind": "flag_fell", "side": "right"}]})],
     ["flag"]),
])
def test_what_needs_the_director(messages: list[tuple[str, Any]], kinds: list[str]) -> None:
    view = HallView(P)
    for what, payload in messages:
        view.receive(f"{P}/t1/{what}",
                     (payload if isinstance(payload, str) else json.dumps(payload)).encode(), 0)
    assert [n["kind"] for n in view.card("t1")["needs"]] == kinds


def test_an_alert_goes_when_the_director_has_seen_it() -> None:
    view = HallView(P)
    view.receive(f"{P}/t1/cmd/reply", b'{"id": "x", "ok": false, "reason": "busy"}', 0)
    [need] = view.card("t1")["needs"]
    assert need["text"] == "command refused: busy"
    assert view.dismiss("t1", need["key"]) and view.card("t1")["needs"] == []


@pytest.mark.parametrize("topic, payload", [
    (f"{P}/t1/events", b'{"journal": "j"}'),
    (f"{P}/t1/events", b'{"journal": "j", "seq": "3"}'),
    (f"{P}/t1/state", b"[1, 2]"),
    (f"{P}/t1/online", b"yes"),
    (f"{P}/t1/state", b"\xff not json"),
])
def test_a_malformed_message_is_refused_naming_its_topic(topic: str, payload: bytes) -> None:
    with pytest.raises(ValueError, match=topic):
        HallView(P).receive(topic, payload, 0)


def test_a_state_on_a_skewed_clock_counts_from_the_halls_clock() -> None:
    view = HallView(P)
    hall_now = 1_700_000_000_000
    table_clock = hall_now - 180_000          # the Pi is three minutes behind
    view.receive(f"{P}/t1/state", json.dumps(clock_state(at=iso(table_clock))).encode(),
                 hall_now + 40)
    assert view.card("t1")["reserves_at_ms"] == hall_now + 40


# --- pairings and the archive, without a broker ------------------------------------------------

@pytest.mark.parametrize("csv_text, expected", [
    ("table,left,right,length\nt1,Anna,Boris,7\n", [("t1", None)]),
    ("table,left,right,length,discipline\nt1,A,B,5,longgammon\nt2,C,D,3,\n",
     [("t1", None), ("t2", None)]),
    ("table,left,right,length\nt1,A,B,0\n", [("t1", "length '0' is not a match length")]),
    ("table,left,right,length\nt1,A,,7\n", [("t1", "both players need a name")]),
    ("table,left,right,length\nt1,A,B,7\nt1,C,D,7\n",
     [("t1", "paired on lines 2, 3"), ("t1", "paired on lines 2, 3")]),
    ("table,left,right,length,discipline\nt1,A,B,7,chess\n", [("t1", "match.discipline")]),
    ("table,left,right,length\nt 1,A,B,7\n", [("t 1", "is not a table id")]),
    ("table,left,right\nt1,A,B\n", [("", "missing column(s) length")]),
    ("table,left,right,length\nt1,A,B,7,extra\n", [("t1", "1 cell(s) more")]),
    ("table,left,right,length\n12,A,B,7\n", [("table-12", None)]),   # known as table-12
])
def test_pairings_rows_and_their_errors(csv_text: str,
                                        expected: list[tuple[str, str | None]]) -> None:
    rows = parse_pairings(csv_text, "Open", "3", known={"table-12"})
    assert [r.table for r in rows] == [t for t, _ in expected]
    for row, (_table, error) in zip(rows, expected):
        if error is None:
            assert row.error is None and row.toml is not None
            assert 'round = "3"' in row.toml
        else:
            assert row.error is not None and error in row.error, row.error
            assert row.error.startswith("line ")


def test_a_player_name_with_quotes_survives_the_match_file() -> None:
    [row] = parse_pairings('table,left,right,length\nt1,"Ann ""the Shark"" O\'Neil",Борис,7\n')
    assert row.toml is not None
    assert 'left = "Ann \\"the Shark\\" O\'Neil"' in row.toml and 'right = "Борис"' in row.toml


def test_the_archive_never_overwrites(tmp_path: Path) -> None:
    first, new = store(tmp_path, "t1", "match-a.jsonl", "one\n")
    again, new_again = store(tmp_path, "t1", "match-a.jsonl", "one\n")
    other, new_other = store(tmp_path, "t1", "match-a.jsonl", "two\n")
    assert (new, new_again, new_other) == (True, False, True)
    assert first == again and other.name == "match-a.2.jsonl"
    assert first.read_text() == "one\n" and other.read_text() == "two\n"
    assert [p.name for p in (tmp_path / "t1").iterdir() if p.name.startswith(".")] == []


@pytest.mark.parametrize("table, name", [("t1", "../evil.jsonl"), ("t1", ".hidden.jsonl"),
                                         ("t1", "match.txt"), ("../t", "m.jsonl"),
                                         ("t1", "a/b.jsonl")])
def test_the_archive_refuses_names_that_leave_it(tmp_path: Path, table: str, name: str) -> None:
    with pytest.raises(ArchiveError):
        store(tmp_path, table, name, "x\n")


# --- arguments ---------------------------------------------------------------------------------

@pytest.mark.parametrize("url, ok", [("mqtt://10.0.0.2", True), ("mqtts://h:8884", True),
                                     ("http://h", False), ("mqtt://", False),
                                     ("mqtt://u:p@h", False), ("mqtt://h:99999", False)])
def test_broker_urls(url: str, ok: bool) -> None:
    if ok:
        BrokerURL.parse(url)
    else:
        with pytest.raises(BrokerURLError):
            BrokerURL.parse(url)


def test_off_loopback_the_page_needs_a_password(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="--page-password-file"):
        options_of(hall_args(tmp_path, http="0.0.0.0:8080"))
    assert options_of(hall_args(tmp_path))[1].password is None       # loopback: none asked
    page = tmp_path / "page"
    page.write_text("open sesame\n")
    assert options_of(hall_args(tmp_path, http="0.0.0.0:8080",
                            page_password_file=page))[1].password == "open sesame"
    with pytest.raises(UsageError, match="HOST:PORT"):
        http_address("8080")


# --- against the broker ------------------------------------------------------------------------

def test_the_hall_shows_state_and_counts_each_event_once(broker: Broker, tmp_path: Path) -> None:  # noqa: F811
    with RunningHall(broker, tmp_path / "archive") as hall:
        table = table_client(broker, "table-1")
        try:
            publish(table, f"{P}/table-1/online", "1", retain=True)
            publish(table, f"{P}/table-1/state", clock_state(seq=7), retain=True)
            for seq in (1, 2, 3, 2, 3, 4, 1):                    # republished after a reconnect
                publish(table, f"{P}/table-1/events",
                        json.loads(_event(seq, "match-1.jsonl")))
            hall.wait(lambda: hall.hall.view.events_counted + hall.hall.view.duplicates == 7,
                      "every event delivered")
        finally:
            table.disconnect()
            table.loop_stop()
        card = hall.card("table-1")
        assert card["online"] is True
        assert card["state"]["players"] == {"left": "Anna", "right": "Boris"}
        assert card["state"]["clock"]["left"]["reserve_ms"] == 600_000
        assert (card["events"], card["duplicates"]) == (4, 3)


def test_a_round_is_pushed_as_retained_match_files(broker: Broker, tmp_path: Path) -> None:  # noqa: F811
    csv_text = ("table,left,right,length,discipline\n"
                "table-1,Anna,Boris,7,\n"
                "table-2,Chen,Dora,5,longgammon\n"
                "table-3,Eve,,3,\n")
    with RunningHall(broker, tmp_path / "archive") as hall:
        answer = hall.post("/api/round", {"csv": csv_text, "event": "Open", "round": "2"})
    assert (answer["pushed"], answer["errors"]) == (2, 1)
    assert [r["acknowledged"] for r in answer["rows"] if r["ok"]] == [True, True]
    assert "both players need a name" in answer["rows"][2]["error"]
    # Each table, connecting afterwards, finds its own match retained (and may read no other's).
    for table, expected in (("table-1", 'left = "Anna"'), ("table-2", "longgammon")):
        with Collector(broker, table, f"{P}/{table}/match") as seen:
            message = seen.wait_for(lambda m: m.topic.endswith("/match"))
        assert message.retain and expected in message.text and 'round = "2"' in message.text


def test_a_command_gets_its_reply(broker: Broker, tmp_path: Path) -> None:  # noqa: F811
    received: list[dict[str, Any]] = []

    def answer(client: Any, _userdata: Any, msg: Any) -> None:
        request = json.loads(msg.payload)
        received.append(request)
        ok = request["command"].startswith("deduct")
        reply = ({"id": request["id"], "ok": True, "outcome": "deducted 30s from left"} if ok
                 else {"id": request["id"], "ok": False, "reason": "unknown command"})
        client.publish(f"{P}/table-1/cmd/reply", json.dumps(reply), qos=1)

    with RunningHall(broker, tmp_path / "archive") as hall:
        table = table_client(broker, "table-1")
        table.on_message = answer
        table.subscribe(f"{P}/table-1/cmd", qos=1)
        try:
            publish(table, f"{P}/table-1/state", clock_state())
            hall.wait(lambda: "table-1" in hall.hall.view.tables, "the table seen")
            good = hall.post("/api/cmd", {"table": "table-1", "command": "deduct  left 30s"})
            bad = hall.post("/api/cmd", {"table": "table-1", "command": "frobnicate"})
        finally:
            table.disconnect()
            table.loop_stop()
        assert good["reply"] == {"id": good["id"], "ok": True,
                                 "outcome": "deducted 30s from left"}
        assert bad["reply"]["ok"] is False
        assert received[0] == {"id": good["id"], "by": DIRECTOR, "command": "deduct left 30s"}
        assert [n["kind"] for n in hall.card("table-1")["needs"]] == ["refused"]
        with pytest.raises(urllib.error.HTTPError) as refused:
            hall.post("/api/cmd", {"table": "table-9", "command": "pause"})
        assert refused.value.code == 400


def test_finished_journals_are_archived_and_verified(broker: Broker, tmp_path: Path) -> None:  # noqa: F811
    journal, state = finished_journal(tmp_path)
    keys = tmp_path / "keys"
    keys.mkdir()
    (keys / "table-1.key").write_text((state / "device.key").read_text())
    text = journal.read_text()
    lines = text.splitlines(keepends=True)
    assert len(lines) > 3
    tampered = "".join(lines[:2] + lines[3:])           # a record removed
    with RunningHall(broker, tmp_path / "archive", keys_dir=keys) as hall:
        table = table_client(broker, "table-1")
        try:
            for name, body in ((journal.name, text), (journal.name, text),   # twice: kept once
                               ("match-x-table-1.jsonl", tampered)):
                publish(table, f"{P}/table-1/journal", {"journal": name, "text": body})
            hall.wait(lambda: len(hall.hall.archive) == 2, "two journals verified")
        finally:
            table.disconnect()
            table.loop_stop()
        verdicts = {v["name"]: v for v in hall.get("/api/archive")["archive"]}
        needs = [n["kind"] for n in hall.card("table-1")["needs"]]
    assert sorted(p.name for p in (tmp_path / "archive" / "table-1").iterdir()) == [
        journal.name, "match-x-table-1.jsonl"]
    assert (tmp_path / "archive" / "table-1" / journal.name).read_text() == text
    good = verdicts[journal.name]
    assert good["ok"] and good["sealed"] and good["message"].startswith("intact")
    assert "Anna v Boris" in good["summary"]
    bad = verdicts["match-x-table-1.jsonl"]
    assert not bad["ok"] and "TAMPERED" in bad["message"]
    assert needs == ["archive"]
    # Without the table's key: the seal is not checked, and the page says so.
    unsealed = verify_archived(tmp_path / "archive" / "table-1" / journal.name, "table-1", None)
    assert unsealed.ok and not unsealed.sealed and "seal not checked" in unsealed.message


def test_off_loopback_every_request_needs_the_password(broker: Broker, tmp_path: Path) -> None:  # noqa: F811
    with RunningHall(broker, tmp_path / "archive", password="open sesame") as hall:
        for path in ("/", "/api/cards", "/events"):
            with pytest.raises(urllib.error.HTTPError) as refused:
                urllib.request.urlopen(hall.base + path, timeout=5)
            assert refused.value.code == 401
            assert "Basic" in refused.value.headers["WWW-Authenticate"]
        with pytest.raises(urllib.error.HTTPError) as wrong:
            hall.get("/api/cards", auth="guess")
        assert wrong.value.code == 401
        assert "cards" in hall.get("/api/cards", auth="open sesame")
        with pytest.raises(urllib.error.HTTPError) as foreign:
            hall.post("/api/round", {"csv": ""}, auth="open sesame",
                      origin="http://evil.example")
        assert foreign.value.code == 403


def test_add_table_makes_an_account_the_broker_accepts(tmp_path: Path) -> None:
    folder = tmp_path / "broker"
    folder.mkdir()
    password_file = tmp_path / "passwords" / "table-7"
    done = subprocess.run([sys.executable, "-m", "gammonclock", "hall", "add-table", "table-7",
                           "--password-file", str(password_file), "--mosquitto-passwd",
                           str(folder / "passwd"), "--broker", "mqtt://10.0.0.2:1883"],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert 'username = "table-7"' in done.stdout and "[hall]" in done.stdout
    assert 'broker = "mqtt://10.0.0.2:1883"' in done.stdout
    assert oct(password_file.stat().st_mode & 0o777) == "0o600"
    password = password_file.read_text().strip()
    b = Broker(folder, {DIRECTOR: "director-pw"})       # the hall's account beside table-7's
    b.start()
    try:
        b.passwords["table-7"] = password
        c = b.client("table-7")
        c.disconnect()
        c.loop_stop()
        refused = subprocess.run([sys.executable, "-m", "gammonclock", "hall", "add-table",
                                  "bad id", "--password-file", str(password_file),
                                  "--mosquitto-passwd", str(folder / "passwd")],
                                 capture_output=True, text=True)
        assert refused.returncode == 2 and "not a table id" in refused.stderr
    finally:
        b.stop()


# --- TLS ---------------------------------------------------------------------------------------

def _certificates(folder: Path) -> tuple[Path, Path, Path]:
    """A self-signed CA and a server certificate for 127.0.0.1 that it signs."""
    import datetime as dt
    import ipaddress

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    now = dt.datetime.now(dt.UTC)

    def cert(subject: str, key: Any, issuer: str, signer: Any, ca: bool) -> Any:
        builder = (x509.CertificateBuilder()
                   .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, subject)]))
                   .issuer_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, issuer)]))
                   .public_key(key.public_key()).serial_number(x509.random_serial_number())
                   .not_valid_before(now - dt.timedelta(minutes=5))
                   .not_valid_after(now + dt.timedelta(days=1))
                   .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True))
        if not ca:
            builder = builder.add_extension(x509.SubjectAlternativeName(
                [x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), critical=False)
        return builder.sign(signer, hashes.SHA256())

    ca_key, server_key = ec.generate_private_key(ec.SECP256R1()), ec.generate_private_key(
        ec.SECP256R1())
    ca = cert("gammonclock test CA", ca_key, "gammonclock test CA", ca_key, True)
    server = cert("127.0.0.1", server_key, "gammonclock test CA", ca_key, False)
    paths = folder / "ca.pem", folder / "server.pem", folder / "server.key"
    paths[0].write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    paths[1].write_bytes(server.public_bytes(serialization.Encoding.PEM))
    paths[2].write_bytes(server_key.private_bytes(serialization.Encoding.PEM,
                                                  serialization.PrivateFormat.PKCS8,
                                                  serialization.NoEncryption()))
    return paths


class TLSBroker(Broker):
    """The shared test broker with a second, TLS listener."""

    def __init__(self, folder: Path, accounts: dict[str, str]) -> None:
        super().__init__(folder, accounts)
        self.tls_port = free_port()
        self.ca, self.cert, self.key = _certificates(folder)

    def config_text(self) -> str:
        return super().config_text() + "\n".join([
            f"listener {self.tls_port} 127.0.0.1", f"cafile {self.ca}",
            f"certfile {self.cert}", f"keyfile {self.key}", ""])


def test_mqtts_with_a_ca_file(tmp_path: Path) -> None:
    b = TLSBroker(tmp_path / "broker", {DIRECTOR: "director-pw", "table-1": "t1-pw"})
    b.start()
    try:
        url = f"mqtts://127.0.0.1:{b.tls_port}"
        with RunningHall(b, tmp_path / "archive", url=url, ca_file=str(b.ca)) as hall:
            table = b.client("table-1")
            try:
                publish(table, f"{P}/table-1/state", clock_state(seq=11))
                hall.wait(lambda: hall.card("table-1").get("state", {}).get("seq") == 11,
                          "the state over TLS")
            finally:
                table.disconnect()
                table.loop_stop()
        # A CA that did not sign the broker's certificate: no connection.
        other = _certificates(tmp_path)[0]
        with RunningHall(b, tmp_path / "archive2", url=url, ca_file=str(other),
                         connect=False) as stranger:
            time.sleep(2)
            assert not stranger.hall.client.connected
    finally:
        b.stop()

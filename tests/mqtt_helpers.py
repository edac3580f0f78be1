"""A real Mosquitto for the hall's tests (SPEC §14): started on a free localhost port with a
generated config, password file (`mosquitto_passwd -b`), the shipped ACL (hall/acl) and the
shipped config's client-id and queue settings (hall/mosquitto.conf): every client's id is its
account's name, so two clients of one account take each other's connection.

    from mqtt_helpers import Broker, Collector

    def test_something(broker: Broker):        # the fixture: tests/conftest.py
        url = broker.url                       # mqtt://127.0.0.1:PORT
        pw = broker.password_file("table-1")   # a file holding that account's password
        with Collector(broker, "hall", "gammonclock/#") as seen:
            ...
            seen.wait_for(lambda m: m.topic.endswith("/online"))

A missing `mosquitto` fails the test with a clear message: it never skips.
"""

from __future__ import annotations

import getpass
import os
import secrets
import shutil
import signal
import socket
import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
ACL_FILE = ROOT / "hall" / "acl"
SHIPPED_CONF = ROOT / "hall" / "mosquitto.conf"
# The shipped config's settings every test broker has too (the rest is per test: port, files).
from gammonclock.sim.hall_demo import SHIPPED_OPTIONS, shipped_options  # noqa: E402, F401

DIRECTOR = "hall"                       # the director's account in hall/acl
WATCHER = "watcher"                     # the tests' own account: reads everything, writes nothing
TABLES = ("table-1", "table-2")         # accounts the `broker` fixture creates
SEARCH_PATH = os.pathsep.join([os.environ.get("PATH", ""), "/usr/sbin", "/usr/local/sbin"])
MISSING = "mosquitto is not installed: run scripts/test-deps"


def find_binary(name: str) -> str:
    found = shutil.which(name, path=SEARCH_PATH)
    if found is None:
        pytest.fail(f"{name} not found: {MISSING}", pytrace=False)
    return found


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Broker:
    """One Mosquitto process in its own folder; `stop()`/`start()` keep the port, accounts and
    the persistence file (retained messages and queued QoS 1 messages survive a restart)."""

    def __init__(self, folder: Path, accounts: dict[str, str] | None = None,
                 acl: Path = ACL_FILE, tls: bool = False,
                 max_queued_messages: int | None = None) -> None:
        self.folder = folder
        self.max_queued_messages = max_queued_messages   # instead of the shipped bound
        self.tls = tls                  # mqtts:// with a CA made here (`ca_file`)
        self.folder.mkdir(parents=True, exist_ok=True)
        self.port = free_port()
        self.host = "127.0.0.1"
        self.acl = acl
        self.passwords: dict[str, str] = {}
        self.log_file = folder / "mosquitto.log"
        self._passwd_file = folder / "passwd"
        self._process: subprocess.Popen[bytes] | None = None
        self._binary = find_binary("mosquitto")
        self._passwd_binary = find_binary("mosquitto_passwd")
        for user, password in (accounts or {}).items():
            self.add_account(user, password)

    @property
    def url(self) -> str:
        return f"{'mqtts' if self.tls else 'mqtt'}://{self.host}:{self.port}"

    @property
    def ca_file(self) -> Path:
        return self.folder / "ca.pem"

    def _make_certificates(self) -> list[str]:
        """A CA and the broker's certificate for 127.0.0.1 (openssl), as listener options."""
        openssl = find_binary("openssl")
        key, csr, cert = (self.folder / n for n in ("server.key", "server.csr", "server.pem"))
        ca_key = self.folder / "ca.key"
        if not cert.exists():
            run = lambda *a: subprocess.run([openssl, *a], check=True,  # noqa: E731
                                            capture_output=True)
            run("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj",
                "/CN=gammonclock test CA", "-keyout", str(ca_key), "-out", str(self.ca_file))
            run("req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=127.0.0.1",
                "-keyout", str(key), "-out", str(csr))
            ext = self.folder / "san.ext"
            ext.write_text("subjectAltName=IP:127.0.0.1\n")
            run("x509", "-req", "-in", str(csr), "-CA", str(self.ca_file), "-CAkey",
                str(ca_key), "-CAcreateserial", "-days", "2", "-extfile", str(ext),
                "-out", str(cert))
        return [f"cafile {self.ca_file}", f"certfile {cert}", f"keyfile {key}"]

    @property
    def running(self) -> bool:
        return self._process is not None and self._process.poll() is None

    def add_account(self, user: str, password: str | None = None) -> str:
        """Create (or change) an account; a running broker reloads its files (SIGHUP)."""
        password = password or secrets.token_urlsafe(12)
        create = [] if self._passwd_file.exists() else ["-c"]
        subprocess.run([self._passwd_binary, *create, "-b", str(self._passwd_file), user,
                        password], check=True, capture_output=True)
        self._passwd_file.chmod(0o600)
        self.passwords[user] = password
        if self.running:
            assert self._process is not None
            self._process.send_signal(signal.SIGHUP)
            time.sleep(0.2)    # the reload is asynchronous; a login right after may still fail
        return password

    def password_file(self, user: str, password: str | None = None) -> Path:
        """A file holding USER's password (or PASSWORD, e.g. a wrong one), as `[hall]
        password_file` wants it."""
        path = self.folder / f"{user}.password"
        path.write_text((password if password is not None else self.passwords[user]) + "\n",
                        encoding="utf-8")
        return path

    def acl_file(self) -> Path:
        """The ACL the broker runs: the given one, plus (for the shipped one) the tests'
        WATCHER account, which reads every topic (the director's account is the hall's own:
        with client ids bound to accounts, a second client of `hall` would take its session)."""
        if self.acl != ACL_FILE:
            return self.acl
        path = self.folder / "acl"
        path.write_text(ACL_FILE.read_text(encoding="utf-8") + "\n# the tests' watcher\n"
                        f"user {WATCHER}\ntopic read gammonclock/#\n", encoding="utf-8")
        return path

    def config_text(self) -> str:
        if not self._passwd_file.exists():
            self.add_account(DIRECTOR)
        return "\n".join([
            f"listener {self.port} {self.host}",
            *(self._make_certificates() if self.tls else []),
            "allow_anonymous false",
            f"password_file {self._passwd_file}",
            f"acl_file {self.acl_file()}",
            *(line for line in shipped_options()
              if self.max_queued_messages is None or "max_queued_messages" not in line),
            *([f"max_queued_messages {self.max_queued_messages}"]
              if self.max_queued_messages is not None else []),
            "persistence true",
            f"persistence_location {self.folder}/",
            f"log_dest file {self.log_file}",
            "log_type error", "log_type warning", "log_type notice", "log_type information",
            "connection_messages true",
            f"user {getpass.getuser()}",   # as root, stay root: the folder is private to us
            "",
        ])

    def start(self, timeout: float = 10.0) -> None:
        assert not self.running, "the broker is already running"
        conf = self.folder / "mosquitto.conf"
        conf.write_text(self.config_text(), encoding="utf-8")
        self._process = subprocess.Popen([self._binary, "-c", str(conf)],
                                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self._process.poll() is not None:
                err = self._process.stderr.read().decode() if self._process.stderr else ""
                pytest.fail(f"mosquitto exited at start ({self._process.returncode}): {err}"
                            f"\n{self.log()}", pytrace=False)
            try:
                with socket.create_connection((self.host, self.port), timeout=0.2):
                    time.sleep(0.05 if self.tls else 0)
                    return
            except OSError:
                time.sleep(0.05)
        self.stop()
        pytest.fail(f"mosquitto did not listen on {self.port} within {timeout} s\n{self.log()}",
                    pytrace=False)

    def stop(self) -> None:
        """Stop it as a service stop would (SIGTERM: it saves its persistence file)."""
        process, self._process = self._process, None
        if process is None or process.poll() is not None:
            return
        process.send_signal(signal.SIGCONT)       # a paused one must hear the TERM
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        if process.stderr:
            process.stderr.close()

    def pause(self) -> None:
        """A broker that hangs (SIGSTOP): connections stay open, nothing is answered."""
        assert self._process is not None
        self._process.send_signal(signal.SIGSTOP)

    def resume(self) -> None:
        assert self._process is not None
        self._process.send_signal(signal.SIGCONT)

    def log(self) -> str:
        return self.log_file.read_text(errors="replace") if self.log_file.exists() else ""

    def wait_for_log(self, text: str, timeout: float = 5.0) -> str:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if text in (log := self.log()):
                return log
            time.sleep(0.05)
        raise AssertionError(f"{text!r} not in the broker's log within {timeout} s:\n"
                             f"{self.log()}")

    def client(self, user: str, client_id: str | None = None, mqtt5: bool = False,
               **connect: Any) -> Any:
        """A connected paho client of USER (its network thread started); disconnect it after.
        `mqtt5`: MQTT 5, whose PUBACK carries the broker's refusal ("Not authorized")."""
        import paho.mqtt.client as mqtt
        c = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id=client_id or "",
                        **({"protocol": mqtt.MQTTv5} if mqtt5 else
                           {"clean_session": True} if client_id is None else {}))
        c.username_pw_set(user, self.passwords[user])
        if self.tls:
            c.tls_set(ca_certs=str(self.ca_file))
        connected = threading.Event()
        c.on_connect = lambda *_a: connected.set()
        c.connect(self.host, self.port, **connect)
        c.loop_start()
        if not connected.wait(5):
            c.loop_stop()
            raise AssertionError(f"{user} could not connect to the test broker\n{self.log()}")
        return c


@dataclass(frozen=True)
class Message:
    topic: str
    payload: bytes
    retain: bool
    qos: int
    dup: bool = False       # the broker delivering it again (a PUBACK it never read), not a new
                            # publish of the sender's

    @property
    def text(self) -> str:
        return self.payload.decode("utf-8")

    def json(self) -> Any:
        import json
        return json.loads(self.payload)


class Collector:
    """A subscriber that keeps every message it receives; `wait_for` waits for one that
    matches. Use it as a context manager."""

    def __init__(self, broker: Broker, user: str = DIRECTOR, *topics: str,
                 client_id: str | None = None) -> None:
        self.broker = broker
        self.user = user
        self.topics = topics or ("#",)
        self.client_id = client_id
        self.messages: list[Message] = []
        self._changed = threading.Condition()
        self._subscribed = threading.Event()
        self._client: Any = None

    def __enter__(self) -> Collector:
        import paho.mqtt.client as mqtt
        c = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id=self.client_id or "",
                        clean_session=self.client_id is None)
        c.username_pw_set(self.user, self.broker.passwords[self.user])
        if self.broker.tls:
            c.tls_set(ca_certs=str(self.broker.ca_file))
        c.on_connect = self._on_connect
        c.on_subscribe = lambda *_a: self._subscribed.set()
        c.on_message = self._on_message
        c.connect(self.broker.host, self.broker.port)
        c.loop_start()
        self._client = c
        if not self._subscribed.wait(5):
            self.__exit__()
            raise AssertionError(f"{self.user} could not subscribe to {self.topics}\n"
                                 f"{self.broker.log()}")
        return self

    def __exit__(self, *_exc: object) -> None:
        if self._client is not None:
            self._client.disconnect()
            self._client.loop_stop()
            self._client = None

    def _on_connect(self, client: Any, _userdata: Any, _flags: Any, reason: Any,
                    _props: Any = None) -> None:
        if not reason.is_failure:
            client.subscribe([(t, 1) for t in self.topics])

    def _on_message(self, _client: Any, _userdata: Any, msg: Any) -> None:
        with self._changed:
            self.messages.append(Message(msg.topic, bytes(msg.payload), bool(msg.retain),
                                         int(msg.qos), bool(msg.dup)))
            self._changed.notify_all()

    def on(self, suffix: str) -> list[Message]:
        """The messages whose topic ends with /SUFFIX (e.g. "state", "cmd/reply")."""
        with self._changed:
            return [m for m in self.messages if m.topic.endswith("/" + suffix)]

    def wait_for(self, match: Callable[[Message], bool], timeout: float = 10.0) -> Message:
        deadline = time.monotonic() + timeout
        with self._changed:
            while True:
                for m in self.messages:
                    if match(m):
                        return m
                left = deadline - time.monotonic()
                if left <= 0:
                    shown = "\n".join(f"  {m.topic} {m.payload[:200]!r}"
                                      for m in self.messages[-20:])
                    raise AssertionError(f"no matching message within {timeout} s; last "
                                         f"received:\n{shown}")
                self._changed.wait(left)

    def wait_until(self, condition: Callable[[list[Message]], bool],
                   timeout: float = 10.0) -> list[Message]:
        """Wait until CONDITION holds for the list of every message received so far."""
        deadline = time.monotonic() + timeout
        with self._changed:
            while not condition(list(self.messages)):
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError(f"condition not met within {timeout} s; "
                                         f"{len(self.messages)} messages received")
                self._changed.wait(left)
            return list(self.messages)

    def publish(self, topic: str, payload: str | bytes, qos: int = 1,
                retain: bool = False) -> None:
        """Publish as this collector's user and wait for the broker's acknowledgement."""
        info = self._client.publish(topic, payload, qos=qos, retain=retain)
        info.wait_for_publish(5)


def start_broker(folder: Path, tables: tuple[str, ...] = TABLES, tls: bool = False,
                 max_queued_messages: int | None = None) -> Broker:
    """A running broker with the director's account and one account per table (`tls`: only
    mqtts://, its CA in `ca_file`; `max_queued_messages`: another bound than the shipped one)."""
    b = Broker(folder, {DIRECTOR: secrets.token_urlsafe(12)}, tls=tls,
               max_queued_messages=max_queued_messages)
    b.add_account(WATCHER)
    for table in tables:
        b.add_account(table)
    b.start()
    return b


def puback_reason(client: Any, topic: str, payload: str | bytes, retain: bool = False) -> str:
    """Publish at QoS 1 with an MQTT 5 client (`Broker.client(…, mqtt5=True)`) and return the
    broker's PUBACK reason: "Success", or "Not authorized" for a topic its ACL refuses."""
    done = threading.Event()
    reasons: dict[int, str] = {}

    def on_publish(_c: Any, _u: Any, mid: int, reason: Any, _p: Any = None) -> None:
        reasons[mid] = str(reason)
        done.set()
    client.on_publish = on_publish
    info = client.publish(topic, payload, qos=1, retain=retain)
    assert done.wait(10), "no PUBACK"
    return reasons[info.mid]


def logs_in(broker: Broker, user: str, password: str) -> bool:
    """Whether the broker (running) takes USER with PASSWORD: its CONNACK says so."""
    import paho.mqtt.client as mqtt
    answered, ok = threading.Event(), []

    def on_connect(_c: Any, _u: Any, _f: Any, reason: Any, _p: Any = None) -> None:
        ok.append(not reason.is_failure)
        answered.set()

    c = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2)
    c.username_pw_set(user, password)
    c.on_connect = on_connect
    c.connect(broker.host, broker.port)
    c.loop_start()
    try:
        assert answered.wait(5), f"no CONNACK for {user}\n{broker.log()}"
        return ok == [True]
    finally:
        c.disconnect()
        c.loop_stop()

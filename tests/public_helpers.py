"""The spectators' Mosquitto for the tests: a real broker from the shipped hall/broker/public.conf
(line for line, its ports and files moved: `public_broker_config`) and its two shipped ACLs, on
two free localhost ports, with the hall's publishing account; and a spectator's
MQTT-over-WebSocket client (paho, transport="websockets", anonymous unless given a user name).

A missing `mosquitto` fails the test with a clear message: it never skips.
"""

from __future__ import annotations

import getpass
import os
import secrets
import shutil
import socket
import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import pytest

from gammonclock.hall.public import (
    PUBLIC_PORT,
    PUBLIC_USER,
    WEBSOCKET_PORT,
    PublicOptions,
    PublicPublisher,
    public_broker_config,
)
from gammonclock.hall.public_web import PublicPage
from gammonclock.hall.web import make_app
from gammonclock.wire import BrokerURL
from hall_web_helpers import RunningHall
from mqtt_helpers import SEARCH_PATH, Broker, find_binary, free_port

T = TypeVar("T")

ROOT = Path(__file__).resolve().parents[1]
BROKER_FILES = ROOT / "firmware" / "gammonclock" / "hall" / "broker"


class PublicBroker:
    """One spectators' Mosquitto in FOLDER: `publish_port` (the hall, with its account) and
    `websocket_port` (anonymous browsers) on WEBSOCKET_INTERFACE (`lo`; None: every address,
    as shipped)."""

    def __init__(self, folder: Path, websocket_interface: str | None = "lo") -> None:
        self.folder = folder
        self.websocket_interface = websocket_interface
        folder.mkdir(parents=True, exist_ok=True)
        self.publish_port = free_port()
        self.websocket_port = free_port()
        self.password = secrets.token_urlsafe(12)
        self.log_file = folder / "public-mosquitto.log"
        self._process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"mqtt://127.0.0.1:{self.publish_port}"

    @property
    def websocket(self) -> str:
        return f"ws://127.0.0.1:{self.websocket_port}/"

    def options(self, delay_s: float = 0.0) -> PublicOptions:
        return PublicOptions(BrokerURL.parse(self.url), self.password, PUBLIC_USER,
                             delay_s=delay_s)

    def write_config(self) -> Path:
        """The shipped public.conf and ACLs in FOLDER, the account made: the config's path."""
        passwd = self.folder / "public.passwd"
        subprocess.run([find_binary("mosquitto_passwd"), "-c", "-b", str(passwd), PUBLIC_USER,
                        self.password], check=True, capture_output=True)
        acls = {}
        for name in ("public-hall.acl", "public-spectators.acl"):
            acls[name] = self.folder / name
            acls[name].write_text((BROKER_FILES / name).read_text(encoding="utf-8"),
                                  encoding="utf-8")
        conf = self.folder / "public.conf"
        conf.write_text("\n".join([
            *public_broker_config(self.publish_port, self.websocket_port,
                                  password_file=str(passwd),
                                  hall_acl=str(acls["public-hall.acl"]),
                                  spectators_acl=str(acls["public-spectators.acl"]),
                                  websocket_interface=self.websocket_interface),
            f"log_dest file {self.log_file}", "log_type all", "connection_messages true",
            f"user {getpass.getuser()}", ""]), encoding="utf-8")
        return conf

    def start(self, timeout: float = 10.0) -> None:
        conf = self.write_config()
        self._process = subprocess.Popen([find_binary("mosquitto"), "-c", str(conf)],
                                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self._process.poll() is not None:
                err = self._process.stderr.read().decode() if self._process.stderr else ""
                pytest.fail(f"the public mosquitto exited at start: {err}\n{self.log()}",
                            pytrace=False)
            try:
                for port in (self.publish_port, self.websocket_port):
                    with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                        pass
                return
            except OSError:
                time.sleep(0.05)
        self.stop()
        pytest.fail(f"the public mosquitto did not listen within {timeout} s\n{self.log()}",
                    pytrace=False)

    def stop(self) -> None:
        process, self._process = self._process, None
        if process is None or process.poll() is not None:
            return
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        if process.stderr:
            process.stderr.close()

    def log(self) -> str:
        return self.log_file.read_text(errors="replace") if self.log_file.exists() else ""


class Spectator:
    """An anonymous MQTT-over-WebSocket client of the public broker (paho), with every message
    it got, and what its subscriptions and publishes were answered."""

    def __init__(self, broker: PublicBroker, client_id: str = "", username: str | None = None,
                 password: str | None = None) -> None:
        import paho.mqtt.client as mqtt
        self.messages: list[Any] = []
        self.lock = threading.Lock()
        self.connected = threading.Event()
        self.disconnected = threading.Event()
        self.refused: list[str] = []         # a CONNACK that refused, in words
        self.client = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id=client_id,
                                  transport="websockets", clean_session=True)
        if username is not None:
            self.client.username_pw_set(username, password)
        self.client.on_connect = self._connect
        self.client.on_disconnect = lambda *_a: self.disconnected.set()
        self.client.on_message = self._message
        self.client.connect("127.0.0.1", broker.websocket_port)
        self.client.loop_start()
        if not self.connected.wait(5):
            self.close()
            raise AssertionError(f"a spectator could not connect\n{broker.log()}")

    def _connect(self, _client: Any, _userdata: Any, _flags: Any, reason: Any,
                 _properties: Any) -> None:
        if getattr(reason, "is_failure", False):
            self.refused.append(str(reason))
        self.connected.set()

    def _message(self, _client: Any, _userdata: Any, message: Any) -> None:
        with self.lock:
            self.messages.append(message)

    def subscribe(self, *filters: str) -> None:
        done = threading.Event()
        self.client.on_subscribe = lambda *_a: done.set()
        self.client.subscribe([(f, 0) for f in filters])
        assert done.wait(5), "no SUBACK"

    def wait_for(self, test: Any, timeout: float = 5.0, what: str = "a message") -> Any:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self.lock:
                for message in self.messages:
                    if test(message):
                        return message
            time.sleep(0.02)
        with self.lock:
            seen = [(m.topic, m.payload[:200]) for m in self.messages]
        raise AssertionError(f"{what} did not come within {timeout} s; got {seen}")

    def close(self) -> None:
        self.client.disconnect()
        self.client.loop_stop()


class PublicHall(RunningHall):
    """The hall with its public view published to PUBLIC (after DELAY_S) and its pages
    pointing browsers there."""

    def __init__(self, broker: Broker, public: PublicBroker, archive: Path,
                 delay_s: float = 0.0, password: str | None = None) -> None:
        super().__init__(broker, archive, password=password)
        self.publisher = PublicPublisher(self.hall, public.options(delay_s))
        self.app = make_app(self.hall, password, token=self.token,
                            public=PublicPage(True, public.websocket, delay_s))

    async def _start(self) -> None:
        await super()._start()
        self.publisher.start()

    async def _stop(self) -> None:
        self.publisher.stop()
        await super()._stop()

    def __enter__(self) -> PublicHall:
        super().__enter__()
        self.wait(lambda: self.publisher.client.connected, "the publisher connected")
        return self


# --- the spectators' broker in a network namespace (test_hall_public_firewall.py) ---------------

FIREWALL = ROOT / "scripts" / "public-firewall"
CLONE_NEWNET = 0x40000000


def in_namespace(name: str, work: Callable[[], T]) -> T:
    """WORK run in a thread that entered the network namespace NAME (`ip netns add`): the
    sockets it makes, and the threads it starts, are that namespace's; the test's own thread
    stays in the machine's."""
    import ctypes
    import os
    got: list[T] = []
    failed: list[BaseException] = []

    def run() -> None:
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            fd = os.open(f"/run/netns/{name}", os.O_RDONLY)
            try:
                if libc.setns(fd, CLONE_NEWNET) != 0:
                    raise OSError(ctypes.get_errno(), f"setns into {name}")
            finally:
                os.close(fd)
            got.append(work())
        except BaseException as exc:        # handed to the caller's thread
            failed.append(exc)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(120)
    if failed:
        raise failed[0]
    assert got, f"the work in namespace {name} did not end within 120 s"
    return got[0]


@dataclass
class Flood:
    """What one source address got when it opened many TCP connections and said nothing."""

    held: list[socket.socket]
    refused: int
    other_errors: list[str]

    def close(self) -> None:
        for held in self.held:
            held.close()
        self.held = []


class NamespacedBroker:
    """The spectators' Mosquitto (the shipped public.conf and ACLs, its WebSocket listener on
    every address as shipped, on the shipped ports 1884 and 9001) alone in a network namespace,
    reached over a veth pair from a second namespace holding the clients' addresses, IPv4 and
    IPv6 (BROKER_V6 has one address in each of two /64s). Needs root, `ip`, `nft`, `unshare`
    and Mosquitto: without one of them the test fails naming it."""

    BROKER_V4, BROKER_V6 = "192.0.2.1", ("2001:db8:1::1", "2001:db8:2::1")

    def __init__(self, folder: Path, clients_v4: list[str], clients_v6: list[str]) -> None:
        self.folder = folder
        tag = f"{os.getpid()}-{secrets.token_hex(3)}"
        self.broker_ns, self.clients_ns = f"gc-pub-broker-{tag}", f"gc-pub-clients-{tag}"
        self.clients_v4, self.clients_v6 = clients_v4, clients_v6
        self.public = PublicBroker(folder, websocket_interface=None)
        self.public.publish_port, self.public.websocket_port = PUBLIC_PORT, WEBSOCKET_PORT
        self._process: subprocess.Popen[bytes] | None = None
        self._made: list[str] = []

    @staticmethod
    def missing() -> list[str]:
        lacking = [] if os.geteuid() == 0 else [
            "root (network namespaces and nftables need it: run the tests as root)"]
        for tool, package in (("ip", "iproute2"), ("nft", "nftables"),
                              ("unshare", "util-linux"), ("mosquitto", "mosquitto")):
            if shutil.which(tool, path=SEARCH_PATH) is None:
                lacking.append(f"{tool} (Debian's {package}: scripts/test-deps installs it)")
        return lacking

    def __enter__(self) -> NamespacedBroker:
        lacking = self.missing()
        if lacking:
            pytest.fail("the firewall's test cannot run here: missing " + "; ".join(lacking),
                        pytrace=False)
        try:
            self._network()
            self._start()
        except BaseException:
            self.__exit__()
            raise
        return self

    def ip(self, *args: str) -> None:
        done = subprocess.run([find_binary("ip"), *args], capture_output=True, text=True)
        assert done.returncode == 0, f"ip {' '.join(args)}: {done.stderr}"

    def _network(self) -> None:
        for name in (self.broker_ns, self.clients_ns):
            self.ip("netns", "add", name)
            self._made.append(name)
            self.ip("-n", name, "link", "set", "lo", "up")
        self.ip("-n", self.broker_ns, "link", "add", "vb", "type", "veth", "peer", "name", "vc",
                "netns", self.clients_ns)
        self.ip("-n", self.broker_ns, "addr", "add", f"{self.BROKER_V4}/24", "dev", "vb")
        for address in self.BROKER_V6:
            self.ip("-n", self.broker_ns, "addr", "add", f"{address}/64", "dev", "vb", "nodad")
        for address in self.clients_v4:
            self.ip("-n", self.clients_ns, "addr", "add", f"{address}/24", "dev", "vc")
        for address in self.clients_v6:
            self.ip("-n", self.clients_ns, "addr", "add", f"{address}/64", "dev", "vc", "nodad")
        for name, link in ((self.broker_ns, "vb"), (self.clients_ns, "vc")):
            self.ip("-n", name, "link", "set", link, "up")

    def _start(self, timeout: float = 10.0) -> None:
        conf = self.public.write_config()
        self._process = subprocess.Popen(
            [find_binary("ip"), "netns", "exec", self.broker_ns, find_binary("mosquitto"),
             "-c", str(conf)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self._process.poll() is not None:
                err = self._process.stderr.read().decode() if self._process.stderr else ""
                pytest.fail(f"the namespace's mosquitto exited at start: {err}\n"
                            f"{self.public.log()}", pytrace=False)
            if in_namespace(self.clients_ns, self._listens):
                return
            time.sleep(0.05)
        pytest.fail(f"the namespace's mosquitto did not listen within {timeout} s\n"
                    f"{self.public.log()}", pytrace=False)

    def _listens(self) -> bool:
        try:
            with socket.create_connection((self.BROKER_V4, WEBSOCKET_PORT), timeout=0.5):
                return True
        except OSError:
            return False

    def in_broker(self, *command: str) -> subprocess.CompletedProcess[str]:
        """COMMAND run in the broker's namespace (and a mount namespace of its own, with empty
        /etc and /run/systemd: what it installs there leaves no trace on this machine)."""
        script = ("mount -t tmpfs gc-etc /etc && "
                  "{ [ ! -d /run/systemd ] || mount -t tmpfs gc-run /run/systemd; } && "
                  'exec "$@"')
        return subprocess.run(
            [find_binary("ip"), "netns", "exec", self.broker_ns, find_binary("unshare"),
             "--mount", "--propagation", "private", "sh", "-c", script, "sh", *command],
            capture_output=True, text=True, timeout=60, env={**os.environ, "PATH": SEARCH_PATH})

    def firewall(self, *args: str) -> str:
        """scripts/public-firewall ARGS as root runs it, in the broker's namespace: its words."""
        done = self.in_broker(str(FIREWALL), *args)
        assert done.returncode == 0, f"public-firewall {' '.join(args)}: {done.stderr}"
        return done.stdout

    def tables(self) -> str:
        done = self.in_broker(find_binary("nft"), "list", "tables")
        assert done.returncode == 0, done.stderr
        return done.stdout

    def flood(self, source: str, count: int, deadline_s: float = 30.0) -> Flood:
        """COUNT TCP connections from SOURCE to the WebSocket port, each left open without a
        word (no WebSocket handshake): those accepted are held, those reset counted."""
        family = socket.AF_INET6 if ":" in source else socket.AF_INET
        target = self.BROKER_V6[0] if family == socket.AF_INET6 else self.BROKER_V4

        def work() -> Flood:
            got = Flood([], 0, [])
            stop = time.monotonic() + deadline_s
            for _ in range(count):
                assert time.monotonic() < stop, (
                    f"{count} connections from {source} took more than {deadline_s} s "
                    f"({len(got.held)} held, {got.refused} refused)")
                held = socket.socket(family, socket.SOCK_STREAM)
                held.settimeout(2)
                try:
                    held.bind((source, 0))
                    held.connect((target, WEBSOCKET_PORT))
                    got.held.append(held)
                except ConnectionRefusedError:
                    got.refused += 1
                    held.close()
                except OSError as exc:
                    got.other_errors.append(repr(exc))
                    held.close()
            return got

        return in_namespace(self.clients_ns, work)

    def connack_s(self, source: str, timeout: float) -> float | None:
        """A spectator at SOURCE (paho over WebSockets, anonymous, as the page is): seconds to
        its CONNACK, or None when none came within TIMEOUT."""
        import paho.mqtt.client as mqtt
        target = f"[{self.BROKER_V6[1]}]" if ":" in source else self.BROKER_V4
        accepted = threading.Event()
        started = time.monotonic()

        def connected(_c: Any, _u: Any, _f: Any, reason: Any, _p: Any) -> None:
            if not getattr(reason, "is_failure", False):
                accepted.set()

        def work() -> Any:
            client = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, transport="websockets",
                                 clean_session=True)
            client.on_connect = connected
            client.connect_async(target.strip("[]"), WEBSOCKET_PORT, bind_address=source)
            client.loop_start()              # its thread in this namespace too
            return client

        client = in_namespace(self.clients_ns, work)
        try:
            return time.monotonic() - started if accepted.wait(timeout) else None
        finally:
            client.disconnect()
            client.loop_stop()

    def __exit__(self, *_exc: object) -> None:
        process, self._process = self._process, None
        if process is not None and process.poll() is None:
            process.terminate()
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        if process is not None and process.stderr:
            process.stderr.close()
        for name in reversed(self._made):
            subprocess.run([find_binary("ip"), "netns", "del", name], capture_output=True)
        self._made = []

"""The spectators' Mosquitto for the tests (hall/broker/public.conf): a real broker on two free
localhost ports, the hall's publishing account and the shipped public.acl; and a spectator's
MQTT-over-WebSocket client (paho, transport="websockets", anonymous).

A missing `mosquitto` fails the test with a clear message: it never skips.
"""

from __future__ import annotations

import getpass
import secrets
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from gammonclock.hall.public import (
    PUBLIC_USER,
    PublicOptions,
    PublicPublisher,
    public_broker_config,
)
from gammonclock.hall.public_web import PublicPage
from gammonclock.hall.web import make_app
from gammonclock.wire import BrokerURL
from hall_web_helpers import RunningHall
from mqtt_helpers import Broker, find_binary, free_port

ROOT = Path(__file__).resolve().parents[1]
PUBLIC_ACL = ROOT / "firmware" / "gammonclock" / "hall" / "broker" / "public.acl"


class PublicBroker:
    """One spectators' Mosquitto in FOLDER: `publish_port` (the hall, with its account) and
    `websocket_port` (anonymous browsers)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
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

    def start(self, timeout: float = 10.0) -> None:
        passwd = self.folder / "public.passwd"
        subprocess.run([find_binary("mosquitto_passwd"), "-c", "-b", str(passwd), PUBLIC_USER,
                        self.password], check=True, capture_output=True)
        acl = self.folder / "public.acl"
        acl.write_text(PUBLIC_ACL.read_text(encoding="utf-8"), encoding="utf-8")
        conf = self.folder / "public.conf"
        conf.write_text("\n".join([
            *public_broker_config(self.publish_port, self.websocket_port, str(passwd),
                                  str(acl)),
            f"log_dest file {self.log_file}", "log_type all", "connection_messages true",
            f"user {getpass.getuser()}", ""]), encoding="utf-8")
        self._process = subprocess.Popen([find_binary("mosquitto"), "-c", str(conf)],
                                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        deadline = time.monotonic() + timeout
        import socket
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

    def __init__(self, broker: PublicBroker, client_id: str = "") -> None:
        import paho.mqtt.client as mqtt
        self.messages: list[Any] = []
        self.lock = threading.Lock()
        self.connected = threading.Event()
        self.disconnected = threading.Event()
        self.client = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id=client_id,
                                  transport="websockets", clean_session=True)
        self.client.on_connect = lambda *_a: self.connected.set()
        self.client.on_disconnect = lambda *_a: self.disconnected.set()
        self.client.on_message = self._message
        self.client.connect("127.0.0.1", broker.websocket_port)
        self.client.loop_start()
        if not self.connected.wait(5):
            self.close()
            raise AssertionError(f"a spectator could not connect\n{broker.log()}")

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

"""The director's hall with its page, in a thread of its own (`RunningHall`: its asyncio loop,
its page on a free port, requests to the page), and what a table says to it: a §14 state
(`clock_state`), a table's own MQTT client and its messages, a real finished journal
(`finished_journal`), `gammonclock hall`'s arguments (`hall_args`). The hall's web, page,
alerts, public and archive tests use them."""

from __future__ import annotations

import argparse
import asyncio
import base64
import json
import subprocess
import sys
import threading
import time
import urllib.request
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from aiohttp import web

from gammonclock.hall.connections import Limits
from gammonclock.hall.server import Hall, HallOptions
from gammonclock.hall.web import TOKEN, PageHosts, make_app, start_page
from gammonclock.wire import BrokerURL
from mqtt_helpers import DIRECTOR, Broker, free_port

P = "gammonclock"
# Every wait of a test on a page in Chromium (Playwright's `timeout`, in ms): long enough for a
# loaded 2-core machine (a wait returns as soon as its condition holds; issue 32).
PAGE_WAIT_MS = 20_000


def iso(ms: int | None = None) -> str:
    ms = time.time_ns() // 1_000_000 if ms is None else ms
    return datetime.fromtimestamp(ms / 1000, UTC).isoformat(timespec="milliseconds")


def clock_state(table: str = "table-1", *, seq: int = 5, running: str | None = "left",
                phase: str = "running", flag: str | None = None, left_ms: int = 600_000,
                right_ms: int = 540_000, at: str | None = None, **more: Any) -> dict[str, Any]:
    """A §14 state as a clock publishes it."""
    return {"phase": phase, "game": 2, "match_length": 7, "score": {"left": 3, "right": 2},
            "crawford_game": False, "cube": {"value": 2, "owner": "right", "enabled": True},
            "running": running, "clock": {"left": {"reserve_ms": left_ms},
                                          "right": {"reserve_ms": right_ms}},
            "breaks_left": {"left": 1, "right": 1}, "winner": None, "end_reason": None,
            "flag": flag, "table": table, "event": "Spring Open",
            "players": {"left": "Anna", "right": "Boris"}, "journal": "match-1.jsonl",
            "seq": seq, "at": at or iso(), "online": True, **more}


class RunningHall:
    """`gammonclock hall` in a thread of its own (its asyncio loop, its page on a free port)."""

    def __init__(self, broker: Broker, archive: Path, keys_dir: Path | None = None,  # noqa: F811
                 password: str | None = None, ca_file: str | None = None,
                 url: str | None = None, connect: bool = True, hosts: PageHosts | None = None,
                 limits: Limits | None = None) -> None:
        self.connect = connect
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.options = HallOptions(BrokerURL.parse(url or broker.url), DIRECTOR,
                                   broker.passwords[DIRECTOR], P, ca_file, archive, keys_dir,
                                   client_id=f"hall-test-{self.port}")
        self.password = password
        self.loop = asyncio.new_event_loop()
        self.hall = Hall(self.options)
        self.app = make_app(self.hall, password, hosts=hosts, limits=limits)
        self.token = self.app[TOKEN]
        self._started = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._runner: web.AppRunner | None = None

    def _run(self) -> None:
        asyncio.set_event_loop(self.loop)
        self.loop.run_until_complete(self._start())
        self._started.set()
        self.loop.run_forever()

    async def _start(self) -> None:
        await self.hall.start()
        self._runner = await start_page(self.app, "127.0.0.1", self.port)

    async def _stop(self) -> None:
        await self.hall.stop()
        if self._runner is not None:
            await self._runner.cleanup()

    def __enter__(self) -> RunningHall:
        self._thread.start()
        assert self._started.wait(10), "the hall did not start"
        if self.connect:
            try:
                self.wait(lambda: self.hall.client.connected, "the hall connected to the broker")
            except AssertionError:
                self.__exit__()
                raise
        return self

    def __exit__(self, *_exc: object) -> None:
        asyncio.run_coroutine_threadsafe(self._stop(), self.loop).result(10)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(10)

    def wait(self, condition: Any, what: str, timeout: float = 10.0) -> None:
        deadline = time.monotonic() + timeout
        while not condition():
            if time.monotonic() > deadline:
                raise AssertionError(f"not within {timeout} s: {what}")
            time.sleep(0.02)

    def get(self, path: str, auth: str | None = None) -> Any:
        request = urllib.request.Request(self.base + path, headers=_auth(auth))
        with urllib.request.urlopen(request, timeout=20) as response:
            return json.loads(response.read())

    def post(self, path: str, body: dict[str, Any], auth: str | None = None,
             origin: str | None = None, token: str | None = "the page's") -> Any:
        headers = {"Content-Type": "application/json", **_auth(auth)}
        if origin:
            headers["Origin"] = origin
        if token is not None:
            headers["X-Hall-Token"] = self.token if token == "the page's" else token
        request = urllib.request.Request(self.base + path, json.dumps(body).encode(), headers)
        with urllib.request.urlopen(request, timeout=30) as response:
            return json.loads(response.read())

    def card(self, table: str) -> dict[str, Any]:
        cards = {c["table"]: c for c in self.get("/api/cards")["cards"]}
        return cards.get(table, {})

    def call(self, work: Any) -> Any:
        """WORK run on the hall's loop (its state is the loop's)."""
        async def run() -> Any:
            return work()
        return asyncio.run_coroutine_threadsafe(run(), self.loop).result(10)


def _auth(password: str | None) -> dict[str, str]:
    if password is None:
        return {}
    return {"Authorization": "Basic " + base64.b64encode(f"td:{password}".encode()).decode()}


def table_client(broker: Broker, table: str, password: str | None = None) -> Any:  # noqa: F811
    """A table's own MQTT client (its broker account), connected."""
    if password is not None:
        broker.passwords[table] = password
    return broker.client(table)


def publish(client: Any, topic: str, payload: Any, retain: bool = False) -> None:
    text = payload if isinstance(payload, str) else json.dumps(payload)
    client.publish(topic, text, qos=1, retain=retain).wait_for_publish(5)


def hall_args(tmp_path: Path, **over: Any) -> Any:
    secret = tmp_path / "pw"
    secret.write_text("s3cret\n")
    values = {"broker": "mqtt://127.0.0.1:1883", "user": "hall", "password_file": secret,
              "ca_file": None, "prefix": "gammonclock", "http": "127.0.0.1:8080",
              "page_password_file": None, "archive": tmp_path / "a", "keys_dir": None,
              "page_host": None, "page_header_timeout": None, **over}
    return argparse.Namespace(**values)


def finished_journal(tmp_path: Path) -> tuple[Path, Path]:
    """A real finished journal (gammonclock simulate) and the state folder with its key."""
    state = tmp_path / "state"
    journal = tmp_path / "match-20250101-100000-table-1-Anna-Boris.jsonl"
    config = tmp_path / "match.toml"
    config.write_text('[match]\nlength = 1\n[players]\nleft = "Anna"\nright = "Boris"\n')
    script = tmp_path / "s.script"
    script.write_text("0 tap left\n1 arbiter forfeit right\n")
    done = subprocess.run([sys.executable, "-m", "gammonclock", "simulate", "--config",
                           str(config), "--script", str(script), "--journal", str(journal),
                           "--state-dir", str(state), "--json"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return journal, state


# --- the page in headless Chromium --------------------------------------------------------------

PHONE = {"width": 390, "height": 844}
DESKTOP = {"width": 1280, "height": 800}


def open_page(browser: Any, hall: RunningHall, viewport: dict[str, int] = DESKTOP) -> Any:
    page = browser.new_page(viewport=viewport)
    page.goto(hall.base + "/")
    return page


def seconds(clock: str) -> int:
    """A reserve as the page shows it ("9:59", "1:02:03") in seconds (text compares "9:59" above
    "10:00")."""
    total = 0
    for part in clock.split(":"):
        total = total * 60 + int(part)
    return total


RECORDERS = """
window.__notes = [];
window.__beeps = 0;
window.__sounds = [];
window.__asked = 0;
class FakeNotification {
  constructor(title, options) {
    window.__notes.push({ title, body: options.body, tag: options.tag, at: performance.now() });
  }
  static requestPermission() { window.__asked += 1; return Promise.resolve("granted"); }
}
FakeNotification.permission = "granted";
window.Notification = FakeNotification;
class FakeAudio {
  constructor() { this.currentTime = 0; this.destination = {}; }
  resume() { return Promise.resolve(); }
  createGain() {
    const ramp = () => {};
    return { gain: { setValueAtTime: ramp, exponentialRampToValueAtTime: ramp },
             connect: (x) => x };
  }
  createOscillator() {
    // A beep's first tone starts 20 ms ahead (hall_alerts.js): one sound in __sounds, with the
    // page's clock then and its first tone.
    const tone = { frequency: {}, connect: (x) => x, stop: () => {}, start: (at) => {
      window.__beeps += 1;
      if (at < 0.05) window.__sounds.push({ at: performance.now(), hz: tone.frequency.value });
    } };
    return tone;
  }
}
window.AudioContext = FakeAudio;
"""


def event(seq: int, *effects: dict[str, Any]) -> dict[str, Any]:
    return {"journal": "match-1.jsonl", "seq": seq, "at": iso(), "effects": list(effects)}


def notes(page: Any) -> list[dict[str, str]]:
    return list(page.evaluate("() => window.__notes"))


def journal_event(journal: str, seq: int, after: int, records: list[str]) -> bytes:
    """An `events` message carrying a journal's lines (the hall keeps a live copy of them)."""
    return json.dumps({"journal": journal, "seq": seq, "after": after, "at": "x",
                       "effects": [], "records": records}).encode()

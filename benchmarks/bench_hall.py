"""Benchmark: 200 tables into one Mosquitto and one `gammonclock hall` (SPEC §14).

Run it as a plain script from the repository root (Mosquitto installed: scripts/test-deps)::

    .venv/bin/python benchmarks/bench_hall.py [--tables 200] [--speed 20] [--play 20]
                                              [--outage 30] [--after 15]

The tables are light fakes in this process, one MQTT connection and account each, publishing
what a clock publishes (hall/PROTOCOL.md: `online` with its last will, a retained `state` after
every press, one `events` message per journal record) at SPEED times real play (a turn of 10 to
20 s takes 0.5 to 1 s at 20×). Like the real clock each keeps its journal and the position the
broker acknowledged, and after a reconnect publishes again, in order, every event not yet
acknowledged. The hall is the real one (hall_server + hall_web on its asyncio loop) and the
latency is measured where the director sees it: a reader of the page's server-sent event stream
(`/events`), from the instant a table published a press to the instant the page's stream carries
that table's card with that press's state (or a later one).

Phases: play (latency p50/p99); the broker stopped for OUTAGE s and restarted while the tables
go on playing; a table killed (its connection cut: its last will says offline) and restarted;
play on; then every table's events must be in the hall's view exactly once by `(journal, seq)`.
Then a table with a wrong password must be refused and a table publishing under another table's
topic must be refused by the ACL (hall/acl). It prints the figures and exits 1 if a check fails.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import socket
import sys
import tempfile
import threading
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import paho.mqtt.client as mqtt
from aiohttp import ClientSession, ClientTimeout, web
from paho.mqtt.enums import CallbackAPIVersion, MQTTProtocolVersion

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "firmware"), str(ROOT / "tests")]

from gammonclock.hall_mqtt import BrokerURL  # noqa: E402
from gammonclock.hall_server import Hall, HallOptions  # noqa: E402
from gammonclock.hall_web import make_app  # noqa: E402
from mqtt_helpers import DIRECTOR, Broker, free_port  # noqa: E402

P = "gammonclock"
WINDOW = 50                      # unacknowledged events a table keeps in flight


def now_ns() -> int:
    return time.time_ns()


def iso(ns: int) -> str:
    return datetime.fromtimestamp(ns / 1e9, UTC).isoformat(timespec="milliseconds")


class BenchBroker(Broker):
    """The tests' broker, with the queue limit hall/mosquitto.conf ships (a hall away for a
    moment must not lose the backlog of 200 tables) and accounts made in one pass."""

    def config_text(self) -> str:
        return super().config_text() + "max_queued_messages 0\n"

    def add_accounts(self, names: list[str]) -> None:
        import subprocess
        passwd = self.folder / "passwd"
        self.passwords.update({name: f"pw-{name}" for name in names})
        with passwd.open("w") as f:                   # in clear, then hashed in place (-U)
            f.writelines(f"{user}:{password}\n" for user, password in self.passwords.items())
        subprocess.run([self._passwd_binary, "-U", str(passwd)], check=True)


class FakeTable:
    """A clock as the broker sees it: a journal of events, the acknowledged position, a
    retained state after every press."""

    def __init__(self, broker: Broker, name: str, speed: float, rng: random.Random) -> None:
        self.broker, self.name, self.speed, self.rng = broker, name, speed, rng
        self.journal = f"match-20250101-100000-{name}-A-B.jsonl"
        self.events: list[dict[str, Any]] = []        # seq = index + 1
        self.pressed_ns: dict[int, int] = {}
        self.acked: set[int] = set()
        self.acked_upto = 0                           # every seq up to it acknowledged
        self.sent_upto = 0
        self.mids: dict[int, int] = {}                # mid -> seq
        self.early: set[int] = set()
        self.in_hand = 0
        self.generation = 0                           # bumped at each (re)connect
        self.lock = threading.Lock()
        self.connected = False
        self.running = "left"
        self.reserves = {"left": 840_000, "right": 840_000}
        self.next_press = time.monotonic() + rng.uniform(0.0, 1.0)
        self.client = self._client()

    def _client(self) -> mqtt.Client:
        c = mqtt.Client(CallbackAPIVersion.VERSION2, client_id=f"bench-{self.name}",
                        clean_session=True)
        c.username_pw_set(self.name, self.broker.passwords[self.name])
        c.will_set(f"{P}/{self.name}/online", "0", qos=1, retain=True)
        c.reconnect_delay_set(1, 2)
        c.max_queued_messages_set(0)
        c.max_inflight_messages_set(WINDOW + 10)
        c.on_connect = self._on_connect
        c.on_disconnect = self._on_disconnect
        c.on_publish = self._on_publish
        return c

    def start(self) -> None:
        self.client.connect_async(self.broker.host, self.broker.port, keepalive=10)
        self.client.loop_start()

    def kill(self) -> None:
        """As a clock that loses power: the connection drops without a goodbye."""
        self.client.loop_stop()
        sock = self.client.socket()
        if isinstance(sock, socket.socket):
            sock.shutdown(socket.SHUT_RDWR)
            sock.close()
        with self.lock:
            self.connected = False

    def restart(self) -> None:
        """A new process: only the journal and the acknowledged position are kept."""
        with self.lock:
            self.sent_upto, self.mids = self.acked_upto, {}
            self.generation += 1
        self.client = self._client()
        self.start()

    def stop(self) -> None:
        self.client.disconnect()
        self.client.loop_stop()

    def _on_connect(self, client: mqtt.Client, _u: Any, _f: Any, reason: Any, _p: Any) -> None:
        if reason.is_failure:
            return
        client.publish(f"{P}/{self.name}/online", "1", qos=1, retain=True)
        with self.lock:
            self.connected = True
            self.sent_upto, self.mids = self.acked_upto, {}   # again from the broker's position
            self.generation += 1
        self._publish_state()

    def _on_disconnect(self, *_a: Any) -> None:
        with self.lock:
            self.connected = False

    def _on_publish(self, _c: Any, _u: Any, mid: int, _r: Any, _p: Any) -> None:
        with self.lock:
            seq = self.mids.pop(mid, None)
            if seq is None:
                self.early.add(mid)           # acknowledged before pump() noted its mid
                return
            self._ack(seq)

    def _ack(self, seq: int) -> None:
        self.acked.add(seq)
        while self.acked_upto + 1 in self.acked:
            self.acked_upto += 1

    def press(self) -> None:
        """A turn ends: the running side's reserve drops, the other side runs."""
        t = now_ns()
        side, other = self.running, "right" if self.running == "left" else "left"
        self.reserves[side] = max(0, self.reserves[side] - self.rng.randint(2_000, 9_000))
        self.running = other
        with self.lock:
            seq = len(self.events) + 1
            self.events.append({"journal": self.journal, "seq": seq, "at": iso(t),
                                "effects": [{"kind": "turn_ended", "side": side},
                                            {"kind": "turn_started", "side": other}]})
            self.pressed_ns[seq] = t
        self._publish_state()

    def _publish_state(self) -> None:
        seq = len(self.events)
        state = {"phase": "running", "game": 1, "match_length": 7,
                 "score": {"left": 0, "right": 0}, "crawford_game": False,
                 "cube": {"value": 1, "owner": None, "enabled": True}, "running": self.running,
                 "clock": {s: {"reserve_ms": ms} for s, ms in self.reserves.items()},
                 "breaks_left": {"left": 1, "right": 1}, "winner": None, "end_reason": None,
                 "flag": None, "table": self.name, "event": "bench",
                 "players": {"left": "A", "right": "B"}, "journal": self.journal, "seq": seq,
                 "at": iso(now_ns()), "online": True}
        self.client.publish(f"{P}/{self.name}/state", json.dumps(state), qos=1, retain=True)

    def pump(self) -> None:
        """Publish the next events from the last position sent, WINDOW unacknowledged at most."""
        with self.lock:          # never held while paho is called: paho holds its own locks
            if not self.connected:            # while it calls on_publish
                return
            room = WINDOW - len(self.mids) - self.in_hand
            batch = self.events[self.sent_upto:self.sent_upto + max(0, room)]
            self.sent_upto += len(batch)
            self.in_hand += len(batch)
            generation = self.generation
        for event in batch:
            info = self.client.publish(f"{P}/{self.name}/events", json.dumps(event), qos=1)
            with self.lock:
                self.in_hand -= 1
                if generation != self.generation:
                    continue                  # reconnected meanwhile: it is sent again
                if info.mid in self.early:
                    self.early.discard(info.mid)
                    self._ack(event["seq"])
                else:
                    self.mids[info.mid] = event["seq"]

    def due(self, speed_turn_s: tuple[float, float]) -> bool:
        if time.monotonic() < self.next_press:
            return False
        self.next_press = time.monotonic() + self.rng.uniform(*speed_turn_s)
        return True


class PageReader:
    """The page's stream read as a browser would: for every card, the state's seq per table."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.seen_seq: dict[str, int] = {}
        self.arrivals: list[tuple[str, int, int]] = []       # (table, seq, ns)
        self.lock = threading.Lock()
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_until_complete,
                                       args=(self._read(),), daemon=True)

    async def _read(self) -> None:
        async with ClientSession(timeout=ClientTimeout(total=None)) as session:
            async with session.get(self.url) as response:
                event = ""
                async for raw in response.content:
                    line = raw.decode().rstrip("\n")
                    if line.startswith("event: "):
                        event = line[7:]
                    elif line.startswith("data: ") and event in ("cards", "snapshot"):
                        t = now_ns()
                        for card in json.loads(line[6:])["cards"]:
                            seq = (card.get("state") or {}).get("seq")
                            if isinstance(seq, int):
                                with self.lock:
                                    if seq > self.seen_seq.get(card["table"], -1):
                                        self.seen_seq[card["table"]] = seq
                                        self.arrivals.append((card["table"], seq, t))


class HallThread:
    def __init__(self, broker: Broker, archive: Path) -> None:
        self.port = free_port()
        options = HallOptions(BrokerURL.parse(broker.url), DIRECTOR, broker.passwords[DIRECTOR],
                              P, None, archive, None, client_id="bench-hall")
        self.hall = Hall(options)
        self.loop = asyncio.new_event_loop()
        self.ready = threading.Event()
        threading.Thread(target=self._run, daemon=True).start()
        self.ready.wait(10)

    def _run(self) -> None:
        asyncio.set_event_loop(self.loop)

        async def start() -> None:
            await self.hall.start()
            runner = web.AppRunner(make_app(self.hall))
            await runner.setup()
            await web.TCPSite(runner, "127.0.0.1", self.port).start()
        self.loop.run_until_complete(start())
        self.ready.set()
        self.loop.run_forever()


def latencies(tables: list[FakeTable], reader: PageReader, since_ns: int,
              until_ns: int) -> list[float]:
    """ms from each press in [since, until) to the first page message showing it."""
    with reader.lock:
        arrivals = list(reader.arrivals)
    first_shown: dict[str, list[tuple[int, int]]] = {}
    for table, seq, t in arrivals:
        first_shown.setdefault(table, []).append((seq, t))
    out = []
    for table in tables:
        shown = first_shown.get(table.name, [])
        for seq, pressed in table.pressed_ns.items():
            if not since_ns <= pressed < until_ns:
                continue
            at = next((t for s, t in shown if s >= seq and t >= pressed), None)
            if at is not None:
                out.append((at - pressed) / 1e6)
    return out


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(p / 100 * len(ordered)))] if ordered else float("nan")


def watch_backlog(hall: Hall, tables: list[FakeTable], backlog: dict[str, int], since: float,
                  out: list[float]) -> None:
    """The time from the broker's restart until the hall has every event of the outage."""
    while time.monotonic() - since < 120:
        if all(len(hall.view.table(t.name).seen) >= backlog[t.name] for t in tables):
            out.append(time.monotonic() - since)
            return
        time.sleep(0.05)


def play(tables: list[FakeTable], seconds: float, turn_s: tuple[float, float]) -> None:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        for table in tables:
            if table.due(turn_s):
                table.press()
            table.pump()
        time.sleep(0.01)


def drain(tables: list[FakeTable], timeout: float) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        for table in tables:
            table.pump()
        if all(t.acked_upto == len(t.events) for t in tables):
            return True
        time.sleep(0.05)
    return False


def refused_login(broker: Broker, user: str, password: str) -> str:
    c = mqtt.Client(CallbackAPIVersion.VERSION2, protocol=MQTTProtocolVersion.MQTTv5)
    c.username_pw_set(user, password)
    result: list[str] = []
    done = threading.Event()

    def on_connect(_c: Any, _u: Any, _f: Any, reason: Any, _p: Any) -> None:
        result.append(str(reason))
        done.set()
    c.on_connect = on_connect
    c.connect(broker.host, broker.port)
    c.loop_start()
    done.wait(5)
    c.loop_stop()
    return result[0] if result else "no answer"


def acl_refusal(broker: Broker, hall: Hall) -> tuple[str, bool]:
    """table-2 publishes under table-1: the broker's answer, and whether the hall saw it."""
    c = mqtt.Client(CallbackAPIVersion.VERSION2, protocol=MQTTProtocolVersion.MQTTv5)
    c.username_pw_set("table-2", broker.passwords["table-2"])
    answer: list[str] = []
    acked = threading.Event()
    c.on_publish = lambda _c, _u, _m, reason, _p: (answer.append(str(reason)), acked.set())
    c.connect(broker.host, broker.port)
    c.loop_start()
    forged = {"journal": "forged.jsonl", "seq": 1, "at": iso(now_ns()), "effects": []}
    c.publish(f"{P}/table-1/events", json.dumps(forged), qos=1)
    acked.wait(5)
    time.sleep(0.5)
    c.disconnect()
    c.loop_stop()
    seen = ("forged.jsonl", 1) in hall.view.table("table-1").seen
    return (answer[0] if answer else "no answer"), seen


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tables", type=int, default=200)
    parser.add_argument("--speed", type=float, default=20.0)
    parser.add_argument("--play", type=float, default=20.0, help="seconds of play measured")
    parser.add_argument("--outage", type=float, default=30.0, help="seconds the broker is down")
    parser.add_argument("--after", type=float, default=15.0, help="seconds of play after it")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    turn_s = (10 / args.speed, 20 / args.speed)
    rng = random.Random(args.seed)
    failures: list[str] = []
    with tempfile.TemporaryDirectory(prefix="bench-hall-") as tmp:
        broker = BenchBroker(Path(tmp) / "broker", {DIRECTOR: "director-pw"})
        names = [f"table-{n}" for n in range(1, args.tables + 1)]
        broker.add_accounts(names)
        broker.start()
        hall_thread = HallThread(broker, Path(tmp) / "archive")
        hall = hall_thread.hall
        reader = PageReader(f"http://127.0.0.1:{hall_thread.port}/events")
        reader.thread.start()
        tables = [FakeTable(broker, name, args.speed, random.Random(rng.random()))
                  for name in names]
        t0 = time.monotonic()
        for table in tables:
            table.start()
        while sum(t.connected for t in tables) < len(tables) and time.monotonic() - t0 < 60:
            time.sleep(0.1)
        print(f"{len(tables)} tables connected in {time.monotonic() - t0:.1f} s; "
              f"a turn every {turn_s[0]:.2f}-{turn_s[1]:.2f} s ({args.speed:g}x)")

        start_ns = now_ns()
        play(tables, args.play, turn_s)
        played_ns = now_ns()
        time.sleep(1.0)
        measured = latencies(tables, reader, start_ns, played_ns)
        presses = sum(1 for t in tables for p in t.pressed_ns.values() if start_ns <= p < played_ns)
        p50, p99 = percentile(measured, 50), percentile(measured, 99)
        print(f"press -> page (SSE): {len(measured)} of {presses} presses, "
              f"p50 {p50:.0f} ms, p99 {p99:.0f} ms, max {max(measured):.0f} ms "
              f"({presses / args.play:.0f} presses/s)")
        if not p99 < 1000:
            failures.append(f"p99 press->page {p99:.0f} ms is not under 1 s")

        broker.stop()
        down_ns = now_ns()
        print(f"broker stopped for {args.outage:g} s; the tables play on")
        play(tables, args.outage, turn_s)
        broker.start()
        up = time.monotonic()
        backlog = {t.name: len(t.events) for t in tables}      # published during the outage
        caught: list[float] = []
        threading.Thread(target=watch_backlog, args=(hall, tables, backlog, up, caught),
                         daemon=True).start()
        victim = tables[4]
        play(tables, 3.0, turn_s)
        victim.kill()
        time.sleep(1.0)
        offline_seen = hall.view.table(victim.name).online is False
        play(tables, 2.0, turn_s)                 # it is down: its presses stay in its journal
        victim.restart()
        play(tables, args.after, turn_s)
        drained = drain(tables, 60)
        deadline = time.monotonic() + 30
        total = sum(len(t.events) for t in tables)
        while hall.view.events_counted < total and time.monotonic() < deadline:
            time.sleep(0.1)
        caught_up = caught[0] if caught else float("nan")
        missing = sum(len(set(range(1, len(t.events) + 1))
                          - {s for j, s in hall.view.table(t.name).seen if j == t.journal})
                      for t in tables)
        extra = hall.view.events_counted - total
        print(f"after the outage: {total} events published by the tables, "
              f"{hall.view.events_counted} counted by the hall ({missing} missing, "
              f"{extra} extra), {hall.view.duplicates} duplicate deliveries dropped; "
              f"the outage's backlog ({sum(backlog.values())} events) all in the hall "
              f"{caught_up:.1f} s after the broker's restart")
        after = latencies(tables, reader, down_ns + int(args.outage * 1e9) + 5_000_000_000,
                          now_ns())
        print(f"press -> page after the restart: p50 {percentile(after, 50):.0f} ms, "
              f"p99 {percentile(after, 99):.0f} ms")
        print(f"killed and restarted {victim.name}: the hall saw it offline: {offline_seen}; "
              f"its {len(victim.events)} events counted once each: "
              f"{len(hall.view.table(victim.name).seen) == len(victim.events)}")
        if not drained or missing or extra:
            failures.append(f"events not exactly once: {missing} missing, {extra} extra")
        if not offline_seen:
            failures.append("the killed table's last will did not reach the hall")

        wrong = refused_login(broker, "table-1", "not-the-password")
        print(f"table-1 with a wrong password: {wrong}")
        if "uccess" in wrong:
            failures.append("a wrong password was accepted")
        answer, seen = acl_refusal(broker, hall)
        print(f"table-2 publishing under table-1: broker says {answer!r}; the hall saw it: "
              f"{seen}")
        if seen or "authori" not in answer.lower():
            failures.append("the ACL let a table publish under another's topic")

        for table in tables:
            table.stop()
        hall_thread.loop.call_soon_threadsafe(hall_thread.loop.stop)
        broker.stop()
    for failure in failures:
        print(f"FAILED: {failure}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

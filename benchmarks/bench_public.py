"""Benchmark: the spectators' view (SPEC §14) — N tables into the tables' Mosquitto, one
`gammonclock hall` (its own process, as deployed) publishing the public view to the spectators'
Mosquitto (hall/broker/public.conf), and M spectators on its WebSocket listener.

Run it as a plain script from the repository root (Mosquitto installed: scripts/test-deps)::

    .venv/bin/python benchmarks/bench_public.py [--tables 200] [--subscribers 1000]
                                                [--seconds 30] [--turn 2,14] [--measuring 50]

The tables are light (one MQTT connection of a bench account allowed to write every table's
topics, publishing the §14 state a clock publishes after each press: a turn of 2 to 14 s each);
the hall is the real command, `python -m gammonclock hall … --public-broker …`, in a process of
its own whose CPU is read from /proc. The spectators are raw MQTT 3.1.1-over-WebSocket clients on
asyncio sockets (the browser page's protocol: anonymous, subscribe to PREFIX-public/live, the
hall's stream of changed views), spread over a few processes; `--measuring` of them decode
every view and time it, the rest read and count what they are sent (the broker's work is the
same for each).

Latency is press to public page: from the instant a table publishes the state of a press to the
instant a spectator has the view of that press (the press's number is in the view: the left
reserve is 10 000 000 ms less it).

Phases: play without spectators (the hall's CPU, both brokers'); the spectators connect; play
with them (the same, and the latency). Target: p99 < 1 s and the hall's CPU unchanged by the
spectators (it publishes once per change whoever reads). Exits 1 if a view was lost for a
measuring spectator or the p99 is over the target.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import json
import multiprocessing
import os
import random
import secrets
import struct
import subprocess
import sys
import tempfile
import threading
import time
from multiprocessing.connection import Connection
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "firmware"), str(ROOT / "tests"), str(ROOT / "benchmarks")]

import paho.mqtt.client as mqtt  # noqa: E402
from paho.mqtt.enums import CallbackAPIVersion  # noqa: E402

from mqtt_helpers import ACL_FILE, DIRECTOR, Broker, free_port  # noqa: E402
from public_helpers import PublicBroker  # noqa: E402

P = "gammonclock"
ROOT_TOPIC = f"{P}-public"
BENCH = "bench-tables"
BASE_MS = 10_000_000
TARGET_P99_MS = 1000.0
PROCESSES = 4               # the spectators' processes


# --- the spectators ----------------------------------------------------------------------------

def _mqtt_string(text: str) -> bytes:
    data = text.encode()
    return struct.pack("!H", len(data)) + data


def _packet(first: int, body: bytes) -> bytes:
    length, n = bytearray(), len(body)
    while True:
        digit, n = n % 128, n // 128
        length.append(digit | (128 if n else 0))
        if not n:
            break
    return bytes([first]) + bytes(length) + body


def _ws_frame(payload: bytes) -> bytes:
    """A client's binary frame (masked, as RFC 6455 wants from a client)."""
    mask = secrets.token_bytes(4)
    head = bytes([0x82])
    n = len(payload)
    head += bytes([0x80 | n]) if n < 126 else bytes([0x80 | 126]) + struct.pack("!H", n)
    return head + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload))


class Spectator:
    """One browser: WebSocket, CONNECT, SUBSCRIBE; then reads. A measuring one decodes every
    PUBLISH and notes (table, press, arrival)."""

    def __init__(self, port: int, measuring: bool) -> None:
        self.port, self.measuring = port, measuring
        self.got: list[tuple[str, int, int]] = []      # table, press, time_ns
        self.bytes = 0
        self.ready = asyncio.Event()

    async def run(self) -> None:
        reader, writer = await asyncio.open_connection("127.0.0.1", self.port)
        key = base64.b64encode(secrets.token_bytes(16)).decode()
        writer.write((f"GET / HTTP/1.1\r\nHost: 127.0.0.1:{self.port}\r\nUpgrade: websocket\r\n"
                      f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\n"
                      "Sec-WebSocket-Version: 13\r\nSec-WebSocket-Protocol: mqtt\r\n\r\n")
                     .encode())
        head = await reader.readuntil(b"\r\n\r\n")
        assert b" 101 " in head.split(b"\r\n", 1)[0], head
        cid = f"bench-{secrets.token_hex(6)}"
        writer.write(_ws_frame(_packet(0x10, _mqtt_string("MQTT") + bytes([4, 2, 0, 60])
                                       + _mqtt_string(cid))))
        writer.write(_ws_frame(_packet(0x82, b"\x00\x01" + _mqtt_string(f"{ROOT_TOPIC}/live")
                                       + b"\x00")))
        await writer.drain()
        frames = b""                                   # WebSocket bytes not yet a frame
        stream = b""                                   # MQTT bytes not yet a packet
        while True:
            chunk = await reader.read(1 << 16)
            if not chunk:
                return
            self.bytes += len(chunk)
            if self.ready.is_set() and not self.measuring:
                continue                                # read and counted, not decoded
            frames += chunk
            now = time.time_ns()
            while len(frames) >= 2:
                n, at = frames[1] & 127, 2
                if n == 126:
                    if len(frames) < 4:
                        break
                    n, at = struct.unpack("!H", frames[2:4])[0], 4
                elif n == 127:
                    if len(frames) < 10:
                        break
                    n, at = struct.unpack("!Q", frames[2:10])[0], 10
                if len(frames) < at + n:
                    break
                stream += frames[at:at + n]
                frames = frames[at + n:]
            stream = self._packets(stream, now)

    def _packets(self, stream: bytes, now: int) -> bytes:
        while len(stream) >= 2:
            length, multiplier, at = 0, 1, 1
            while True:
                if at >= len(stream):
                    return stream
                digit = stream[at]
                at += 1
                length += (digit & 127) * multiplier
                multiplier *= 128
                if not digit & 128:
                    break
            if len(stream) < at + length:
                return stream
            first, body, stream = stream[0], stream[at:at + length], stream[at + length:]
            if first >> 4 == 9:
                self.ready.set()
            elif first >> 4 == 3:                      # the stream: the views of a flush
                topic_n = struct.unpack("!H", body[:2])[0]
                for view in json.loads(body[2 + topic_n:])["views"]:
                    left = (view.get("clock") or {}).get("left") or {}
                    if isinstance(left.get("reserve_ms"), int):
                        self.got.append((view["table"], BASE_MS - left["reserve_ms"], now))
        return stream


def spectators_process(conn: Connection, port: int, count: int, measuring: int) -> None:
    async def main() -> None:
        crowd = [Spectator(port, i < measuring) for i in range(count)]
        tasks = []
        for i, one in enumerate(crowd):
            tasks.append(asyncio.ensure_future(one.run()))
            if i % 50 == 49:
                await asyncio.sleep(0.05)            # not all at once at the listener
        await asyncio.wait_for(asyncio.gather(*(c.ready.wait() for c in crowd)), 60)
        conn.send(("ready", count))
        await asyncio.get_running_loop().run_in_executor(None, conn.recv)   # "stop"
        for task in tasks:
            task.cancel()
        conn.send(("got", [g for c in crowd for g in c.got], sum(c.bytes for c in crowd)))
    asyncio.run(main())


# --- the tables --------------------------------------------------------------------------------

class Tables:
    """N tables' states through one connection: after each press, the state a clock publishes
    (the running side changes; the left reserve says the press's number)."""

    def __init__(self, broker: Broker, names: list[str], turn_s: tuple[float, float],
                 rng: random.Random) -> None:
        self.names, self.turn_s, self.rng = names, turn_s, rng
        self.pressed: dict[tuple[str, int], int] = {}
        self.presses = dict.fromkeys(names, 0)
        self.client = mqtt.Client(CallbackAPIVersion.VERSION2, client_id=BENCH)
        self.client.username_pw_set(BENCH, broker.passwords[BENCH])
        connected = threading.Event()
        self.client.on_connect = lambda *_a: connected.set()
        self.client.max_queued_messages_set(0)
        self.client.max_inflight_messages_set(1000)
        self.client.connect(broker.host, broker.port)
        self.client.loop_start()
        assert connected.wait(10), "the tables could not connect"

    def state(self, name: str) -> str:
        n = self.presses[name]
        return json.dumps({
            "phase": "running", "lifecycle": "in_progress", "game": 1, "match_length": 7,
            "score": {"left": 0, "right": 0}, "crawford_game": False,
            "cube": {"value": 1, "owner": None, "enabled": True},
            "running": "left" if n % 2 else "right",
            "clock": {"left": {"reserve_ms": BASE_MS - n}, "right": {"reserve_ms": 840_000}},
            "breaks_left": {"left": 1, "right": 1}, "winner": None, "end_reason": None,
            "flag": None, "table": name, "event": "Bench Open",
            "players": {"left": f"Left {name}", "right": f"Right {name}"},
            "journal": f"match-{name}.jsonl", "seq": n, "at": iso_now(), "online": True})

    def press(self, name: str) -> None:
        self.presses[name] += 1
        self.pressed[name, self.presses[name]] = time.time_ns()
        self.client.publish(f"{P}/{name}/state", self.state(name), qos=1, retain=True)

    def play(self, seconds: float) -> int:
        """Every table presses after a turn of TURN_S; the number of presses."""
        now = time.monotonic()
        due = {n: now + self.rng.uniform(0, self.turn_s[1]) for n in self.names}
        end, count = now + seconds, 0
        while (now := time.monotonic()) < end:
            for name, at in due.items():
                if at <= now:
                    self.press(name)
                    count += 1
                    due[name] = now + self.rng.uniform(*self.turn_s)
            time.sleep(0.005)
        return count

    def stop(self) -> None:
        self.client.disconnect()
        self.client.loop_stop()


def iso_now() -> str:
    from datetime import UTC, datetime
    return datetime.now(UTC).isoformat(timespec="milliseconds")


# --- measuring ---------------------------------------------------------------------------------

def cpu_s(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


def phase(tables: Tables, seconds: float, pids: dict[str, int]) -> tuple[int, dict[str, float]]:
    before = {name: cpu_s(pid) for name, pid in pids.items()}
    t0 = time.monotonic()
    presses = tables.play(seconds)
    time.sleep(1.0)                                   # the last presses' views arrive
    wall = time.monotonic() - t0
    return presses, {name: (cpu_s(pid) - before[name]) / wall * 100 for name, pid in pids.items()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tables", type=int, default=200)
    parser.add_argument("--subscribers", type=int, default=1000)
    parser.add_argument("--measuring", type=int, default=50,
                        help="spectators that decode and time every view (default: 50)")
    parser.add_argument("--seconds", type=float, default=30.0, help="of play, per phase")
    parser.add_argument("--turn", default="2,14", help="a turn's seconds, from,to")
    args = parser.parse_args(argv)
    turn = tuple(float(x) for x in args.turn.split(","))
    assert len(turn) == 2
    with tempfile.TemporaryDirectory(prefix="bench-public-") as tmp:
        return _bench(args, (turn[0], turn[1]), Path(tmp))


def _bench(args: argparse.Namespace, turn: tuple[float, float], tmp: Path) -> int:
    names = [f"table-{i + 1}" for i in range(args.tables)]
    acl = tmp / "acl"
    acl.write_text(ACL_FILE.read_text() + f"\nuser {BENCH}\ntopic readwrite {P}/#\n")
    broker = Broker(tmp / "tables-broker", acl=acl)
    for user in (DIRECTOR, BENCH):
        broker.add_account(user)
    broker.start()
    public = PublicBroker(tmp / "public-broker")
    public.start()
    hall = None
    crowd: list[tuple[multiprocessing.process.BaseProcess, Connection]] = []
    tables = None
    try:
        secret = tmp / "hall.password"
        secret.write_text(broker.passwords[DIRECTOR] + "\n")
        public_secret = tmp / "public.password"
        public_secret.write_text(public.password + "\n")
        http = free_port()
        hall = subprocess.Popen(
            [sys.executable, "-m", "gammonclock", "hall", "--broker", broker.url,
             "--password-file", str(secret), "--http", f"127.0.0.1:{http}",
             "--archive", str(tmp / "archive"), "--public-broker", public.url,
             "--public-password-file", str(public_secret)],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
            env={**os.environ, "PYTHONPATH": str(ROOT / "firmware")})
        assert hall.stdout is not None
        for line in hall.stdout:
            if "spectators:" in line:
                break
        else:
            print("the hall did not start", file=sys.stderr)
            return 1
        threading.Thread(target=lambda: [None for _ in hall.stdout], daemon=True).start()  # type: ignore[union-attr]
        pids = {"the hall": hall.pid, "tables' mosquitto": broker._process.pid,  # type: ignore[union-attr]
                "spectators' mosquitto": public._process.pid}  # type: ignore[union-attr]
        tables = Tables(broker, names, turn, random.Random(1))
        for name in names:                            # every table on the page first
            tables.press(name)
        time.sleep(2.0)
        print(f"bench_public: {args.tables} tables (a turn of {turn[0]:g}-{turn[1]:g} s), "
              f"{args.subscribers} spectators over WebSockets ({args.measuring} timing every "
              f"view), {args.seconds:g} s of play a phase; machine of {os.cpu_count()} cores")

        presses0, cpu0 = phase(tables, args.seconds, pids)
        rss0 = {name: rss_mb(pid) for name, pid in pids.items()}

        ctx = multiprocessing.get_context("spawn")
        # The timing spectators in a process of their own (a busy reader's own backlog is not
        # the broker's latency); the others spread over the rest.
        timing = min(args.measuring, args.subscribers)
        rest = args.subscribers - timing
        per = [timing] + [rest // (PROCESSES - 1) + (1 if i < rest % (PROCESSES - 1) else 0)
                          for i in range(PROCESSES - 1)]
        measuring = [timing] + [0] * (PROCESSES - 1)
        t_connect = time.monotonic()
        for count, measured in zip(per, measuring, strict=True):
            if not count:
                continue
            mine, theirs = ctx.Pipe()
            process = ctx.Process(target=spectators_process,
                                  args=(theirs, public.websocket_port, count, measured),
                                  daemon=True)
            process.start()
            crowd.append((process, mine))
        for _process, conn in crowd:
            if not conn.poll(90):
                print("the spectators did not all connect within 90 s", file=sys.stderr)
                return 1
            conn.recv()
        connect_s = time.monotonic() - t_connect
        since = time.time_ns()
        presses1, cpu1 = phase(tables, args.seconds, pids)
        rss1 = {name: rss_mb(pid) for name, pid in pids.items()}
        got: list[tuple[str, int, int]] = []
        received_bytes = 0
        for _process, conn in crowd:
            conn.send("stop")
        for _process, conn in crowd:
            _, some, size = conn.recv()
            got.extend(some)
            received_bytes += size

        latencies = [(at - tables.pressed[(table, n)]) / 1e6 for table, n, at in got
                     if (table, n) in tables.pressed and tables.pressed[(table, n)] >= since]
        expected = sum(1 for (_t, _n), at in tables.pressed.items() if at >= since)
        views_per_spectator = len(latencies) / max(1, args.measuring)
        p50 = percentile(latencies, 50) if latencies else float("nan")
        p99 = percentile(latencies, 99) if latencies else float("nan")
        print(f"spectators connected: {args.subscribers} in {connect_s:.1f} s; during play "
              f"they were sent {received_bytes / 1e6:.1f} MB")
        print(f"press -> public page (no delay; {len(latencies)} views at {args.measuring} "
              f"timing spectators, {views_per_spectator:.0f} each of {expected} presses): "
              f"p50 {p50:.0f} ms, p99 {p99:.0f} ms, max {max(latencies or [0]):.0f} ms "
              f"(target p99 < {TARGET_P99_MS:.0f} ms)")
        for label, presses, cpu, rss in (("without spectators", presses0, cpu0, rss0),
                                         ("with spectators", presses1, cpu1, rss1)):
            print(f"{label}: {presses} presses; CPU (% of one core) " + ", ".join(
                f"{name} {cpu[name]:.1f}%" for name in pids) + "; RSS " + ", ".join(
                f"{name} {rss[name]:.0f} MB" for name in pids))
        change = cpu1["the hall"] - cpu0["the hall"] * presses1 / max(1, presses0)
        print(f"the hall's CPU with the spectators less without (scaled to the presses): "
              f"{change:+.1f} points of one core")
        ok = bool(latencies) and p99 < TARGET_P99_MS and views_per_spectator >= expected * 0.99
        if not ok:
            print("bench_public: FAILED (a view lost, or p99 over the target)", file=sys.stderr)
        return 0 if ok else 1
    finally:
        for process, conn in crowd:
            if process.is_alive():
                process.terminate()
            process.join(5)
            conn.close()
        if tables is not None:
            tables.stop()
        if hall is not None:
            hall.terminate()
            try:
                hall.wait(10)
            except subprocess.TimeoutExpired:
                hall.kill()
        public.stop()
        broker.stop()


if __name__ == "__main__":
    sys.exit(main())

"""The dice reader over loop://, a pty pair and a local TCP peer: whole lines in, events out."""

from __future__ import annotations

import logging
import os
import queue
import socket
import threading
import time
from collections.abc import Iterator

import pytest
import serial

from gammonclock.core.dice import Roll, Void
from gammonclock.core.match import DiceEvent
from gammonclock.hardware.dice_reader import DiceReader
from gammonclock.sides import Side

LOGGER = "gammonclock.hardware.dice"


class Events:
    """The reader's sink: a queue, read with a timeout."""

    def __init__(self) -> None:
        self.queue: queue.Queue[DiceEvent] = queue.Queue()

    def put(self, event: DiceEvent) -> None:
        self.queue.put(event)

    def take(self, n: int, timeout: float = 2.0) -> list[DiceEvent]:
        deadline = time.monotonic() + timeout
        got = []
        for _ in range(n):
            got.append(self.queue.get(timeout=max(0.0, deadline - time.monotonic())))
        return got

    def none_within(self, seconds: float) -> bool:
        try:
            self.queue.get(timeout=seconds)
        except queue.Empty:
            return True
        return False


class FastWait:
    """The back-off's wait: records what was asked and waits a thousandth of it."""

    def __init__(self) -> None:
        self.asked: list[float] = []

    def __call__(self, stop: threading.Event, seconds: float) -> bool:
        self.asked.append(seconds)
        return stop.wait(seconds / 1000)

    def until(self, count: int, timeout: float = 5.0) -> None:
        deadline = time.monotonic() + timeout
        while len(self.asked) < count:
            assert time.monotonic() < deadline, f"only {len(self.asked)} waits: {self.asked}"
            time.sleep(0.001)


class LoopOpener:
    """Opens a fresh loop:// port per connection and keeps it, so the test can write into it."""

    def __init__(self) -> None:
        self.ports: list[serial.SerialBase] = []

    def __call__(self, port: str, baudrate: int, timeout: float) -> serial.SerialBase:
        opened = serial.serial_for_url("loop://", baudrate=baudrate, timeout=timeout)
        self.ports.append(opened)
        return opened


@pytest.fixture
def readers() -> Iterator[list[DiceReader]]:
    """Readers made by a test, stopped after it whatever happened; none may outlive it."""
    made: list[DiceReader] = []
    yield made
    for reader in made:
        assert reader.stop(2.0), "the reader's thread did not end"
        assert not reader.running


def started(readers: list[DiceReader], reader: DiceReader) -> DiceReader:
    readers.append(reader)
    reader.start()
    return reader


def messages(events: list[DiceEvent]) -> list[object]:
    return [e.message for e in events]


def garbage(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if "garbage" in r.getMessage()]


# --- loop:// --------------------------------------------------------------------------------------


def test_lines_become_events_at_the_instant_of_their_terminator(readers):
    events, opener = Events(), LoopOpener()
    reader = started(readers, DiceReader("loop://", 9600, events.put, opener=opener))
    assert reader.wait_connected(2.0)
    before = time.monotonic_ns()
    opener.ports[0].write(b"ROLL 3 4\nroll l 6 6\r\nVOID\nROLL 5\nROLL R 2 1\n")
    got = events.take(5)
    after = time.monotonic_ns()
    assert messages(got) == [Roll((3, 4)), Roll((6, 6), Side.LEFT), Void(), Roll((5,)),
                             Roll((2, 1), Side.RIGHT)]
    times = [e.t for e in got]
    assert times == sorted(times) and before <= times[0] and times[-1] <= after
    assert events.none_within(0.05)


def test_a_fragment_is_kept_across_read_timeouts_until_its_terminator(readers):
    events, opener = Events(), LoopOpener()
    reader = started(readers, DiceReader("loop://", 9600, events.put, opener=opener,
                                         read_timeout_s=0.01))
    assert reader.wait_connected(2.0)
    opener.ports[0].write(b"ROLL 2")
    assert events.none_within(0.08)              # eight read timeouts: still no line
    terminator_sent = time.monotonic_ns()
    opener.ports[0].write(b" 1\r\n")
    (event,) = events.take(1)
    assert event.message == Roll((2, 1))
    assert event.t >= terminator_sent            # the instant of the terminator, not the start


def test_garbage_is_logged_with_its_raw_text_and_skipped(readers, caplog):
    events, opener = Events(), LoopOpener()
    # Eleven lines at once are more than a human rolls: room for them all, this test is not
    # about the rate limit.
    reader = started(readers, DiceReader("loop://", 9600, events.put, opener=opener,
                                         burst_lines=20))
    assert reader.wait_connected(2.0)
    bad = [b"\xff\xfe\x00\x81\n",     # binary
           b"HELLO 1 2\n",            # wrong word
           b"ROLL 7 1\n",             # a die out of range
           b"ROLL 0\n",
           b"ROLL L 3\n",             # a side needs two dice
           b"ROLL 1 2 3\n",
           b"VOID now\n",
           b"\n",                     # empty lines
           b"\r\n",
           b"A" * 300 + b"\n"]        # longer than any message
    with caplog.at_level(logging.WARNING, logger=LOGGER):
        for line in bad:
            opener.ports[0].write(line)
        opener.ports[0].write(b"ROLL 6 5\n")
        assert messages(events.take(1)) == [Roll((6, 5))]
    logged = garbage(caplog)
    assert len(logged) == len(bad)
    for raw in [b"\xff\xfe\x00\x81\n", b"HELLO 1 2\n", b"ROLL 7 1\n", b"\r\n"]:
        assert any(repr(raw) in text for text in logged), raw
    assert any("longer than 128 bytes" in text for text in logged)
    assert reader.running and reader.connected


def test_a_failing_sink_is_logged_and_the_reader_goes_on(readers, caplog):
    got: list[DiceEvent] = []

    def sink(event: DiceEvent) -> None:
        if not got:
            got.append(event)
            raise queue.Full
        got.append(event)

    opener = LoopOpener()
    reader = started(readers, DiceReader("loop://", 9600, sink, opener=opener))
    assert reader.wait_connected(2.0)
    with caplog.at_level(logging.ERROR, logger=LOGGER):
        opener.ports[0].write(b"ROLL 1 1\nROLL 2 2\n")
        deadline = time.monotonic() + 2.0
        while len(got) < 2 and time.monotonic() < deadline:
            time.sleep(0.001)
    assert messages(got) == [Roll((1, 1)), Roll((2, 2))]
    assert any("not delivered" in r.getMessage() for r in caplog.records)


class UnpluggedPort:
    """A port whose adapter was pulled out: reads fail, yet `closed` stays False."""

    closed = False

    def __init__(self, before: bytes) -> None:
        self.before = before
        self.close_calls = 0

    in_waiting = 0

    def read(self, size: int = 1) -> bytes:
        if self.before:
            chunk, self.before = self.before[:size], self.before[size:]
            return chunk
        raise serial.SerialException("device reports readiness to read but returned no data "
                                     "(device disconnected or multiple access on port?)")

    def close(self) -> None:
        self.close_calls += 1


def test_an_unplugged_port_is_closed_and_reopened_without_its_fragment(readers, caplog):
    events, wait, loop = Events(), FastWait(), LoopOpener()
    first, second = UnpluggedPort(b"ROLL 1 1\n"), UnpluggedPort(b"ROLL 4")
    opened: list[object] = []

    def opener(port: str, baudrate: int, timeout: float):
        """Two adapters pulled out one after the other, then one that works."""
        result = [first, second][len(opened)] if len(opened) < 2 else loop(port, baudrate,
                                                                           timeout)
        opened.append(result)
        return result

    with caplog.at_level(logging.INFO, logger=LOGGER):
        reader = started(readers, DiceReader("/dev/ttyUSB0", 9600, events.put, wait=wait,
                                             opener=opener))
        assert messages(events.take(1)) == [Roll((1, 1))]
        wait.until(2)
        assert reader.wait_connected(2.0) and len(opened) == 3
        loop.ports[0].write(b" 4\nROLL 2 2\n")
        assert messages(events.take(1)) == [Roll((2, 2))]     # never "ROLL 4 4"
    assert (first.close_calls, second.close_calls) == (1, 1)
    assert wait.asked[:2] == [0.5, 0.5]                       # after each loss: the first step
    text = [r.getMessage() for r in caplog.records]
    assert len([t for t in text if "lost /dev/ttyUSB0" in t]) == 2
    assert any("dropped the unfinished line b'ROLL 4'" in t for t in text)
    assert len([t for t in text if "connected to /dev/ttyUSB0" in t]) == 3


# --- back-off and stop ----------------------------------------------------------------------------


def free_tcp_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_back_off_doubles_to_ten_seconds_and_is_logged_once(readers, caplog):
    events, wait = Events(), FastWait()
    url = f"socket://127.0.0.1:{free_tcp_port()}"
    with caplog.at_level(logging.DEBUG, logger=LOGGER):
        reader = started(readers, DiceReader(url, 9600, events.put, wait=wait))
        wait.until(8)
        assert reader.stop(2.0)
    assert wait.asked[:8] == [0.5, 1.0, 2.0, 4.0, 8.0, 10.0, 10.0, 10.0]
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1 and f"cannot open {url}" in warnings[0].getMessage()
    assert len([r for r in caplog.records if "still cannot open" in r.getMessage()]) >= 7
    assert not reader.connected and events.none_within(0)


def test_a_bad_url_is_reported_and_retried_without_stopping(readers, caplog):
    events, wait = Events(), FastWait()
    with caplog.at_level(logging.WARNING, logger=LOGGER):
        reader = started(readers, DiceReader("nonsense://dice", 9600, events.put, wait=wait))
        wait.until(3)
    assert reader.running
    assert any("cannot open nonsense://dice" in r.getMessage() for r in caplog.records)


def test_start_returns_at_once_while_the_port_takes_long_to_open(readers):
    release = threading.Event()
    opener = LoopOpener()

    def slow(port: str, baudrate: int, timeout: float):
        release.wait(5.0)
        return opener(port, baudrate, timeout)

    reader = DiceReader("loop://", 9600, Events().put, opener=slow)
    readers.append(reader)
    began = time.monotonic()
    reader.start()
    assert time.monotonic() - began < 0.1
    assert not reader.connected
    release.set()
    assert reader.wait_connected(2.0)


@pytest.mark.parametrize("while_", ["reading", "backing off"])
def test_stop_is_prompt(readers, while_):
    if while_ == "reading":
        reader = started(readers, DiceReader("loop://", 9600, Events().put, opener=LoopOpener()))
        assert reader.wait_connected(2.0)
    else:   # the real wait, 30 s to the next attempt
        url = f"socket://127.0.0.1:{free_tcp_port()}"
        reader = started(readers, DiceReader(url, 9600, Events().put, backoff_initial_s=30))
        time.sleep(0.05)
    began = time.monotonic()
    assert reader.stop(2.0)
    assert time.monotonic() - began < 0.3
    assert not reader.running


# --- a pty pair -----------------------------------------------------------------------------------


def test_a_pty_delivers_lines_and_its_hang_up_is_survived(readers, caplog):
    master, slave = os.openpty()
    try:
        path = os.ttyname(slave)
        events, wait = Events(), FastWait()
        with caplog.at_level(logging.INFO, logger=LOGGER):
            reader = started(readers, DiceReader(path, 9600, events.put, wait=wait,
                                                 read_timeout_s=0.02))
            assert reader.wait_connected(2.0)      # opening flushes input: write after it
            os.write(master, b"ROLL 3 4\n")
            os.write(master, b"ROLL L 6")
            assert events.take(1)[0].message == Roll((3, 4))
            assert events.none_within(0.06)        # three read timeouts mid-line
            os.write(master, b" 6\r\n\xc0\xff\nVOID\n")
            assert messages(events.take(2)) == [Roll((6, 6), Side.LEFT), Void()]
            os.close(master)                       # the far end hangs up
            master = -1
            wait.until(1)
        assert reader.running                      # still trying, never stopped
        text = [r.getMessage() for r in caplog.records]
        assert any(f"lost {path}" in t for t in text)
        assert any("garbage b'\\xc0\\xff\\n'" in t for t in text)
    finally:
        if master >= 0:
            os.close(master)
        os.close(slave)


# --- a TCP peer over socket:// ------------------------------------------------------------------


def test_socket_reconnects_and_delivers_only_whole_lines(readers, caplog):
    server = socket.socket()
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    server.bind(("127.0.0.1", 0))                # bound, not listening: connections refused
    server.settimeout(5.0)
    url = f"socket://127.0.0.1:{server.getsockname()[1]}"
    events, wait = Events(), FastWait()
    try:
        with caplog.at_level(logging.INFO, logger=LOGGER):
            reader = started(readers, DiceReader(url, 9600, events.put, wait=wait))
            wait.until(2)                          # refused twice, backing off
            assert not reader.connected
            server.listen(1)

            first, _ = server.accept()
            assert reader.wait_connected(2.0)      # opening discards input: send after it
            first.sendall(b"ROLL 3 4\r\nROLL 5")   # a whole line and half of one
            assert messages(events.take(1)) == [Roll((3, 4))]
            first.close()                          # the peer goes away mid-line

            second, _ = server.accept()            # the reader came back
            assert reader.wait_connected(2.0)
            second.sendall(b" 6\nROLL 1 2\n")      # the rest of the old line, then a new one
            assert messages(events.take(1)) == [Roll((1, 2))]
            assert events.none_within(0.05)        # never "ROLL 5 6"
            second.close()
        text = [r.getMessage() for r in caplog.records]
        assert len([t for t in text if f"cannot open {url}" in t]) == 1
        assert len([t for t in text if f"connected to {url}" in t]) == 2
        assert any(f"lost {url}" in t and "socket disconnected" in t for t in text)
        assert any("dropped the unfinished line b'ROLL 5'" in t for t in text)
        assert any("garbage b' 6\\n'" in t for t in text)
    finally:
        server.close()

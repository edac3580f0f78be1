"""`gammonclock hall demo [--tables N]`: the whole hall on one machine, in one command (SPEC §14).

A private Mosquitto (Debian's `mosquitto`, not its system service) on a free port of 127.0.0.1,
with generated accounts, the shipped ACL and the shipped config's client-id and queue settings
(hall/broker/); N real clocks (`build_device` on mock pins and dummy panels, each with its own
state folder, account and `[hall]` section) whose players are robots pressing the mock pins as
people would; and `gammonclock hall` with its page, on 127.0.0.1. It prints the page's address
and a pairings CSV to push as the next round, and stops it all on Ctrl-C.

The robots play at the speed of people in a hurry (a move of 1 to 4 s, a double now and then, a
game of a few minutes), on the real clock: the page's live countdown is the table's. The last
table plays a short time control against a slow player, whose flag falls within a few minutes:
the page's red alert. Everything the director does on the page works on these clocks: a
command (`pause`, `deduct left 30s`, …) is answered by the table, a round pushed from the CSV
loads at the tables whose match is over, finished journals land in the archive and are checked
there against the clocks' own keys ("intact").
"""

from __future__ import annotations

import argparse
import getpass
import logging
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

from gammonclock.config.loading import parse_device_config
from gammonclock.core.match_state import Phase
from gammonclock.device.build import Device, build_device
from gammonclock.errors import GammonclockError
from gammonclock.hall.accounts import SEARCH_PATH
from gammonclock.runtime.service import LoopFailed
from gammonclock.sides import Button, Side

EXIT_BAD_INPUT = 2
MAX_TABLES = 24               # robots and clocks share this process: a demo, not a benchmark
DIRECTOR = "hall"             # the director's account in the shipped ACL
# The shipped mosquitto.conf's settings the demo's broker has too (the rest is the demo's own:
# where it listens, its files).
SHIPPED_OPTIONS = ("use_username_as_clientid", "max_queued_messages", "max_queued_bytes",
                   "max_packet_size")
PAIRS = [("Анна", "Борис"), ("Chen", "Dora"), ("Ильдар", "Мария"), ("Eve", "Frank"),
         ("Георгий", "Ольга"), ("Grace", "Hugo"), ("Дмитрий", "Елена"), ("Ivan", "Julia")]
EVENTS = {"en": "Hall demo", "ru": "Показ зала"}     # the event's name, in the demo's language
log = logging.getLogger(__name__)


class DemoError(GammonclockError):
    """The demo cannot start: the message says what to do."""


def shipped(name: str) -> str:
    """A file of hall/broker/ (the ACL, the example mosquitto.conf; hall/ links to them)."""
    return resources.files("gammonclock.hall").joinpath("broker", name).read_text(
        encoding="utf-8")


def shipped_options() -> list[str]:
    """The lines of the shipped mosquitto.conf that set SHIPPED_OPTIONS (every broker of ours
    has them: the demo's, the tests', the benchmarks')."""
    return [line.strip() for line in shipped("mosquitto.conf").splitlines()
            if line.split(" ", 1)[0] in SHIPPED_OPTIONS]


def free_port(preferred: int | None = None) -> int:
    """PREFERRED when nothing listens on it on 127.0.0.1, else any free port."""
    for port in ([preferred] if preferred else []) + [0]:
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
            return int(s.getsockname()[1])
    raise DemoError("no free port on 127.0.0.1")


def tool(name: str) -> str:
    found = shutil.which(name, path=SEARCH_PATH)
    if found is None:
        raise DemoError(f"{name} not found: install Debian's Mosquitto (sudo apt-get install -y "
                        f"mosquitto); the demo runs its own broker, not the system's service")
    return found


def _end_with_parent() -> None:
    """In the child before exec: SIGTERM when the demo's process ends (Linux's
    PR_SET_PDEATHSIG; elsewhere nothing)."""
    try:
        import ctypes
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGTERM)             # PR_SET_PDEATHSIG = 1
    except (OSError, AttributeError):
        pass


# --- the broker --------------------------------------------------------------------------------

class PrivateBroker:
    """Mosquitto in FOLDER on a free port of 127.0.0.1: only the accounts made here."""

    def __init__(self, folder: Path, accounts: list[str]) -> None:
        self.folder = folder
        self.port = free_port()
        self.passwords = {name: f"demo-{name}-{random.randrange(10**9):09d}"
                          for name in accounts}
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"mqtt://127.0.0.1:{self.port}"

    def password_file(self, user: str) -> Path:
        path = self.folder / f"{user}.password"
        path.write_text(self.passwords[user] + "\n", encoding="utf-8")
        path.chmod(0o600)
        return path

    def config_text(self) -> str:
        options = shipped_options()
        return "\n".join([
            f"listener {self.port} 127.0.0.1",
            "allow_anonymous false",
            f"password_file {self.folder / 'passwd'}",
            f"acl_file {self.folder / 'acl'}",
            *options,
            "persistence true",
            f"persistence_location {self.folder}/",
            f"log_dest file {self.folder / 'mosquitto.log'}",
            f"user {getpass.getuser()}",      # as root too: the folder is ours, not mosquitto's
            "",
        ])

    def start(self, timeout_s: float = 10.0) -> None:
        passwd = self.folder / "passwd"       # in clear, then hashed in place: no prompt
        passwd.write_text("".join(f"{u}:{p}\n" for u, p in self.passwords.items()),
                          encoding="utf-8")
        passwd.chmod(0o600)
        done = subprocess.run([tool("mosquitto_passwd"), "-U", str(passwd)],
                              capture_output=True, text=True)
        if done.returncode != 0:
            raise DemoError(f"mosquitto_passwd -U {passwd} failed: {done.stderr.strip()}")
        (self.folder / "acl").write_text(shipped("acl"), encoding="utf-8")
        conf = self.folder / "mosquitto.conf"
        conf.write_text(self.config_text(), encoding="utf-8")
        # Its own session: the terminal's Ctrl-C is the demo's, which stops the clocks and the
        # hall before the broker (the clocks would log the broker's loss); and it ends with
        # the demo even when the demo is killed.
        self.process = subprocess.Popen([tool("mosquitto"), "-c", str(conf)],
                                        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                        start_new_session=True, preexec_fn=_end_with_parent)
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                err = self.process.stderr.read().decode() if self.process.stderr else ""
                raise DemoError(f"mosquitto stopped at once ({self.process.returncode}): "
                                f"{err.strip()} (its log: {self.folder / 'mosquitto.log'})")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.2):
                    return
            except OSError:
                time.sleep(0.05)
        raise DemoError(f"mosquitto did not listen on 127.0.0.1:{self.port} within "
                        f"{timeout_s:g} s (its log: {self.folder / 'mosquitto.log'})")

    def stop(self) -> None:
        if self.process is None or self.process.poll() is not None:
            return
        self.process.terminate()
        try:
            self.process.wait(10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


# --- the tables ---------------------------------------------------------------------------------

@dataclass(frozen=True)
class DemoTable:
    """One table of the demo: its match, and how its robots play."""

    name: str
    left: str
    right: str
    discipline: str = "backgammon"
    length: int = 3
    per_point: str = "1m"
    slow: Side | None = None          # this player thinks past the delay every move
    language: str = "en"              # the panels' (and so the table's replies')

    @property
    def event(self) -> str:
        return EVENTS.get(self.language, EVENTS["en"])

    def match_text(self) -> str:
        return "\n".join([
            "[match]", f'discipline = "{self.discipline}"', f"length = {self.length}", "",
            "[display]", f'language = "{self.language}"', "",
            "[players]", f'left = "{self.left}"', f'right = "{self.right}"', "",
            "[time]", f'per_point = "{self.per_point}"', "",
            "[event]", f'name = "{self.event}"', 'round = "1"', ""])

    def device_text(self, broker: PrivateBroker, folder: Path) -> str:
        return "\n".join([
            "[hardware]", 'pin_factory = "mock"', "",
            "[table]", f'id = "{self.name}"', f'event = "{self.event}"',
            f'match_file = "{folder / "match.toml"}"', "",
            "[hall]", f'broker = "{broker.url}"', f'username = "{self.name}"',
            f'password_file = "{broker.password_file(self.name)}"', ""])


def demo_tables(count: int, language: str = "en") -> list[DemoTable]:
    tables = []
    for i in range(count):
        left, right = PAIRS[i % len(PAIRS)]
        last = i == count - 1 and count > 1
        tables.append(DemoTable(
            f"table-{i + 1}", left, right,
            discipline="longgammon" if i % 4 == 1 else "backgammon",
            per_point="10s" if last else "1m", slow=Side.RIGHT if last else None,
            language=language))
    return tables


def round_one_on_record(tables: list[DemoTable], archive: Path) -> None:
    """Round 1's pairings on the hall's record, as if the director had pushed them (the clocks
    load them from their match files at boot, to play at once): the hall's results hold each
    finished match to the pairing pushed to its table, so round 1 counts, as a pushed round
    does (SPEC §14.1), rather than waiting for the director to accept it."""
    from gammonclock.hall.pairings import PairedMatch
    from gammonclock.hall.results import Results

    archive.mkdir(parents=True, exist_ok=True)
    results = Results(archive)
    results.load()                    # a kept --folder: the rounds pushed before stay
    results.pushed(tables[0].event, "1",
                   [PairedMatch(t.name, t.left, t.right, t.length, t.discipline)
                    for t in tables], int(time.time() * 1000))


def next_round_csv(tables: list[DemoTable]) -> str:
    """The pairings of a round 2 (the page's "Push round"): the players change tables."""
    names = [t.left for t in tables] + [t.right for t in tables]
    shifted = names[1:] + names[:1]
    rows = [f"{t.name},{shifted[2 * i]},{shifted[2 * i + 1]},3,{t.discipline}"
            for i, t in enumerate(tables)]
    return "table,left,right,length,discipline\n" + "\n".join(rows) + "\n"


# --- the robots ---------------------------------------------------------------------------------

@dataclass
class Robots:
    """Both players of one table, pressing its mock pins (down, then up after a while) when the
    match in the clock says it is their turn to: a move of 1 to 4 s (the slow one's 14 to 18 s),
    now and then a double (taken mostly), now and then a game's end (held by the mover,
    confirmed by the other). A paused clock, a break, the arbiter or a finished match: they
    wait, as players do."""

    device: Device
    table: DemoTable
    rng: random.Random
    next_at: float = 0.0                             # time.monotonic() of the next decision
    releases: list[tuple[float, Button]] = field(default_factory=list)
    pondered: bool = False                           # the slow player has thought this turn

    def __post_init__(self) -> None:
        self.pins = {b: self.device.factory.pin(gpio)
                     for b, gpio in self.device.config.button_pins.items()}
        self.hold_s = self.device.config.hold_ns / 1e9

    def press(self, button: Button, now: float, held_s: float) -> None:
        self.pins[button].drive_low()                # buttons pull up: a press drives it low
        self.releases.append((now + held_s, button))

    def tap(self, button: Button, now: float) -> None:
        self.press(button, now, self.rng.uniform(0.08, 0.2))

    def hold(self, button: Button, now: float) -> None:
        self.press(button, now, self.hold_s + self.rng.uniform(0.3, 0.6))

    def think(self, now: float, low: float = 1.0, high: float = 4.0) -> None:
        self.next_at = now + self.rng.uniform(low, high)

    def step(self, now: float) -> None:
        for at, button in [r for r in self.releases if r[0] <= now]:
            self.pins[button].drive_high()
            self.releases.remove((at, button))
        if self.releases or now < self.next_at:
            return
        session = self.device.service.session
        if session is None:                          # idle: waiting for a match
            self.next_at = now + 1.0
            return
        self.decide(session.engine.match, now)

    def decide(self, match: object, now: float) -> None:
        from gammonclock.core.match_state import MatchState
        assert isinstance(match, MatchState)
        phase, running = match.phase, match.running_side
        if phase is Phase.BETWEEN_GAMES:
            opener = (match.must_start.other if match.must_start is not None
                      else self.rng.choice(list(Side)))
            self.tap(Button.of(opener), now)          # the lower opening die taps
            self.think(now)
        elif phase is Phase.RUNNING and running is not None:
            if running is self.table.slow and not self.pondered:
                self.pondered = True                  # past the delay, into the reserve
                self.next_at = now + self.rng.uniform(11.0, 15.0)
                return
            self.pondered = False
            chance = self.rng.random()
            if chance < 0.03 and match.turn_number > 6:
                self.hold(Button.of(running), now)    # borne off: the game's end
            elif (chance < 0.05 and match.cube_enabled and match.cube_value <= 2
                    and match.cube_owner in (None, running)):
                self.tap(Button.CUBE, now)            # a double (refused when illegal)
            else:
                self.tap(Button.of(running), now)     # the move is made
            self.think(now)
        elif phase is Phase.CUBE_OFFERED and running is not None:
            if self.rng.random() < 0.7:
                self.tap(Button.of(running), now)     # take
            else:
                self.hold(Button.of(running), now)    # pass
            self.think(now)
        elif phase is Phase.RESULT_ENTRY and match.entry is not None:
            self.tap(Button.of(match.entry.holder.other), now)   # the other confirms
            self.think(now, 4.0, 8.0)                            # and the dice are picked up
        else:                                         # paused, break, arbiter, match over
            self.next_at = now + 1.0


class RobotsThread:
    """One thread for every table's robots (ten decisions a second at most per table)."""

    def __init__(self, robots: list[Robots]) -> None:
        self.robots = robots
        self.stopped = threading.Event()
        self.thread = threading.Thread(target=self._run, name="robots", daemon=True)

    def _run(self) -> None:
        while not self.stopped.wait(0.05):
            now = time.monotonic()
            for robots in self.robots:
                try:
                    robots.step(now)
                except Exception:                    # one table's robot, not the demo
                    log.exception("%s: a robot failed", robots.table.name)
                    robots.next_at = now + 5.0

    def start(self) -> None:
        self.thread.start()

    def stop(self) -> None:
        self.stopped.set()
        self.thread.join(5)


# --- the clocks ---------------------------------------------------------------------------------

@contextmanager
def running_clock(table: DemoTable, broker: PrivateBroker, folder: Path,
                  keys: Path) -> Iterator[Device]:
    """A real clock for TABLE in FOLDER, its service loop on its own thread; its device key
    copied to KEYS (the hall checks its journals' seals with it)."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "match.toml").write_text(table.match_text(), encoding="utf-8")
    path = folder / "device.toml"
    text = table.device_text(broker, folder)
    path.write_text(text, encoding="utf-8")
    state = folder / "state"
    device = build_device(parse_device_config(text, str(path)), state,
                          socket_at=state / "arbiter.sock")
    def run() -> None:
        try:
            device.service.run()
        except LoopFailed as exc:   # logged and shown by the loop; the demo stops (as Ctrl-C)
            print(f"gammonclock hall demo: {table.name}: {exc}; stopping the demo",
                  file=sys.stderr, flush=True)
            os.kill(os.getpid(), signal.SIGINT)
    loop = threading.Thread(target=run, name=f"clock-{table.name}", daemon=True)
    loop.start()
    shutil.copyfile(state / "device.key", keys / f"{table.name}.key")
    try:
        yield device
    finally:
        device.service.stop()
        loop.join(10)
        device.close()


# --- the command --------------------------------------------------------------------------------

def demo(args: argparse.Namespace) -> int:
    tables_count: int = args.tables
    if not 1 <= tables_count <= MAX_TABLES:
        print(f"gammonclock hall demo: --tables {tables_count}: give 1 to {MAX_TABLES}",
              file=sys.stderr)
        return EXIT_BAD_INPUT
    try:
        from gammonclock.hall.run import PageOptions, http_address, serve_until_stopped
        from gammonclock.hall.server import HallOptions
        from gammonclock.hall.web import PageHosts, is_loopback
        from gammonclock.wire import BrokerURL
    except ImportError as exc:
        print(f"gammonclock hall demo: needs the `hall` extra: pip install -e '.[hall]' in the "
              f"checkout ({exc})", file=sys.stderr)
        return EXIT_BAD_INPUT
    logging.basicConfig(level=logging.WARNING, format="gammonclock hall demo: %(message)s")
    with ExitStack() as stack:
        folder = args.folder
        if folder is None:
            folder = Path(stack.enter_context(tempfile.TemporaryDirectory(
                prefix="gammonclock-hall-demo-")))
        folder = folder.resolve()
        folder.mkdir(parents=True, exist_ok=True)
        language: str = (getattr(args, "demo_language", None) or getattr(args, "language", None)
                         or "en")
        tables = demo_tables(tables_count, language)
        try:
            if args.http is None:
                host, port = "127.0.0.1", free_port(8080)
            else:
                host, port = http_address(args.http)
                if not is_loopback(host):
                    raise DemoError(f"--http {args.http}: the demo's page has no password, "
                                    "so it listens on loopback only (127.0.0.1:PORT)")
            broker = PrivateBroker(folder / "broker", [DIRECTOR] + [t.name for t in tables])
            broker.folder.mkdir(exist_ok=True)
            broker.start()
        except (DemoError, ValueError) as exc:
            print(f"gammonclock hall demo: {exc}", file=sys.stderr)
            return EXIT_BAD_INPUT
        stack.callback(broker.stop)
        public = PublicDemoBroker(folder / "public-broker")
        public.folder.mkdir(exist_ok=True)
        try:
            public.start()
        except DemoError as exc:
            print(f"gammonclock hall demo: the spectators' broker: {exc}", file=sys.stderr)
            return EXIT_BAD_INPUT
        stack.callback(public.stop)
        keys = folder / "keys"
        keys.mkdir(exist_ok=True)
        round_one_on_record(tables, folder / "archive")
        robots = []
        for i, table in enumerate(tables):
            device = stack.enter_context(running_clock(table, broker, folder / table.name, keys))
            robots.append(Robots(device, table, random.Random(i)))
        players = RobotsThread(robots)
        players.start()
        stack.callback(players.stop)
        csv = folder / "round-2.csv"
        csv.write_text(next_round_csv(tables), encoding="utf-8")
        kept = "" if args.folder else " (removed at the end; --folder DIR keeps it)"
        print("\n".join([
            f"gammonclock hall demo: {tables_count} clocks on mock pins, their players robots; "
            f"a private Mosquitto on {broker.url}",
            f"  folder:  {folder}{kept}",
            "  try:     a command on a card (pause, resume, deduct left 30s)",
            f"           \"Push round\" with {csv} (a table whose match is over loads it)",
            f"           {tables[-1].name}'s right player is slow: a flag within minutes"
            if tables_count > 1 else "",
            f"  archive: {folder / 'archive'} (finished journals, seals checked)",
            "  Ctrl-C stops it all."]).replace("\n\n", "\n"), flush=True)
        options = HallOptions(BrokerURL.parse(broker.url), DIRECTOR, broker.passwords[DIRECTOR],
                              "gammonclock", None, folder / "archive", keys)
        from gammonclock.hall.public import PUBLIC_USER, PublicOptions
        from gammonclock.hall.public_web import PublicPage
        page = PageOptions(host, port, None, PageHosts.of(host), language=language,
                           public=PublicPage(True, public.websocket))
        spectators = PublicOptions(BrokerURL.parse(public.url), public.passwords[PUBLIC_USER])
        previous = signal.getsignal(signal.SIGINT)
        try:
            if serve_until_stopped(options, page, "gammonclock hall demo", spectators) != 0:
                return 1
        finally:
            signal.signal(signal.SIGINT, previous)
        print("gammonclock hall demo: stopping the clocks, the hall and the broker", flush=True)
    return 0


class PublicDemoBroker(PrivateBroker):
    """The demo's spectators' broker (`gammonclock hall demo`): a private Mosquitto from the
    shipped public.conf and its two ACLs, on two free ports, its WebSocket listener on loopback."""

    def __init__(self, where: Path) -> None:
        from gammonclock.hall.public import PUBLIC_USER
        super().__init__(where, [PUBLIC_USER])
        self.websocket_port = free_port()

    @property
    def websocket(self) -> str:
        return f"ws://127.0.0.1:{self.websocket_port}/"

    def config_text(self) -> str:
        from gammonclock.hall.public import public_broker_config
        acls = {}
        for name in ("public-hall.acl", "public-spectators.acl"):
            acls[name] = self.folder / name
            acls[name].write_text(shipped(name), encoding="utf-8")
        return "\n".join([
            *public_broker_config(self.port, self.websocket_port,
                                  password_file=str(self.folder / "passwd"),
                                  hall_acl=str(acls["public-hall.acl"]),
                                  spectators_acl=str(acls["public-spectators.acl"])),
            f"log_dest file {self.folder / 'mosquitto.log'}",
            f"user {getpass.getuser()}", ""])

"""The clock as a device: the config's hardware around one `ClockService`.

`build_device` locks the state folder (one clock per folder), opens the match (recovering the
newest unfinished journal of the same config, or starting a new one), the pin factory
(explicitly, never a fallback), the buttons, both panels, the optional buzzer and dice reader,
and wires every input source to the service's queue. `gammonclock run` uses it on the Pi; the
interactive simulator uses the very same device with gpiozero's MockFactory pins pressed from the
keyboard and panels shown in a window or a terminal.
"""

from __future__ import annotations

import contextlib
import fcntl
import logging
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gammonclock import __version__
from gammonclock.config.loading import (
    Config,
    ConfigError,
    DeviceConfig,
    DeviceFile,
    HallConfig,
    device_part,
    load_match_config,
    with_provisioned,
)
from gammonclock.config.problems import message_of
from gammonclock.journal.records import JournalError
from gammonclock.runtime.lifecycle import PanelRequests, StartRefused, Table, device_key
from gammonclock.runtime.network import local_addresses
from gammonclock.runtime.provisioning import Provisioning
from gammonclock.runtime.service import ClockService
from gammonclock.runtime.session import Session, StampSource, system_stamps
from gammonclock.runtime.stick_handler import StickHandler
from gammonclock.sides import Pair, Side

__all__ = ["Device", "StartRefused", "StateInUse", "build_device", "dummy_panels",
           "lock_state_dir", "open_match", "show_refusal"]

log = logging.getLogger(__name__)

SETTLE_MARGIN_NS = 5_000_000   # a bounced button's level is read this long after debounce_ms
LOCK_FILE = "lock"


# --- one clock per state folder --------------------------------------------------------------

class StateInUse(JournalError):
    """Another clock holds the state folder: its socket and journal are left alone."""


@dataclass
class StateLock:
    """An exclusive `flock` on `STATE/lock`, held for the life of the device. The kernel drops
    it when the process ends, however it ends, so a crash leaves no stale lock."""

    path: Path
    fd: int | None

    def release(self) -> None:
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None


def lock_state_dir(state_dir: str | Path) -> StateLock:
    """Take the state folder's lock, or raise StateInUse naming the clock that holds it. A
    folder where the lock file can neither be made nor opened (a read-only card with none yet)
    is run unlocked: the clock must run, and it says so in the log."""
    path = Path(state_dir) / LOCK_FILE
    fd = _open_lock_file(path)
    if fd is None:
        log.warning("%s: cannot make the lock file; running without the state folder's lock",
                    path)
        return StateLock(path, None)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        holder = _pid_in(fd)
        os.close(fd)
        raise StateInUse(f"another gammonclock (pid {holder}) is using {state_dir}; stop it "
                         f"first") from None
    except OSError as exc:           # a file system without locks
        os.close(fd)
        log.warning("%s: cannot lock the state folder (%s); running without its lock", path,
                    exc.strerror)
        return StateLock(path, None)
    with contextlib.suppress(OSError):    # the pid is for the message above, when it can be
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
    return StateLock(path, fd)


def _open_lock_file(path: Path) -> int | None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        return os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError:
        pass
    try:
        return os.open(path, os.O_RDONLY)      # a read-only card: a read-only fd locks too
    except OSError:
        return None


def _pid_in(fd: int) -> str:
    try:
        text = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
    except OSError:
        text = ""
    return text if text.isdigit() else "unknown"


# --- the device --------------------------------------------------------------------------------

@dataclass
class Device:
    config: DeviceConfig
    table: Table
    service: ClockService
    factory: Any                          # the gpiozero pin factory
    panels: Pair[Any]                     # hardware.panels.Panel
    closers: list[Callable[[], None]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    problem: ConfigError | None = None    # a match file refused at boot (the clock is idle)
    provisioning: Provisioning | None = None  # a provisioning stick's (issue 32)
    hall: HallLinkSlot | None = None          # the hall link it runs now (restarted by a stick)

    @property
    def session(self) -> Session | None:
        """The match being played; None while idle."""
        return self.service.session

    def close(self) -> None:
        """Stop the input sources, journal the instant, leave the panels lit, give up the
        state folder (in that order)."""
        for close in self.closers:
            try:
                close()
            except Exception:   # shutting down: report and go on closing the rest
                log.exception("closing %r failed", close)


def open_match(config: Config, state_dir: str | Path, stamps: StampSource,
               clock_ns: Callable[[], int]) -> tuple[Session, int, list[str]]:
    """The session a boot with one config file (`run --config`) plays, and its time origin:
    the newest journal's match when it is not over (recovered, paused), else a new match of
    `config` at instant 0 (SPEC §13.2). Raises StartRefused for a bad device key or a journal
    it cannot understand."""
    device_file, boot_match = _boot_match(config, None)
    table = Table(device_file, state_dir, device_key(state_dir), stamps, clock_ns)
    boot = table.boot(boot_match)
    assert boot.opened is not None       # a parsed config is never refused
    return boot.opened.session, boot.opened.origin, boot.notes


def show_refusal(panels: Pair[Any], panel_text: str, lang: str = "en") -> None:
    """Both panels say why the clock does not start, in `lang` (the device's: no match is
    read)."""
    from gammonclock.hardware.presenters import PanelPresenter
    from gammonclock.hardware.views import config_error_view

    try:
        PanelPresenter(panels, language=lambda: lang).show_message(
            config_error_view(panel_text, "JOURNAL ERROR", lang))
    except Exception:   # a panel that fails must not hide the message in the log
        log.exception("cannot show the problem on the panels")


def dummy_panels() -> Pair[Any]:
    """Two panels on luma's `dummy` devices (mock hardware, tests, the simulator)."""
    from luma.core.device import dummy  # type: ignore[import-untyped]

    from gammonclock.hardware.panels import Panel
    return Pair(Panel.for_device(dummy(width=128, height=64, mode="1"), "left panel"),
                Panel.for_device(dummy(width=128, height=64, mode="1"), "right panel"))


MatchSource = Callable[[], Config] | None


def build_device(source: Config | DeviceFile, state_dir: str | Path, *,
                 match_path: str | None = None, panels: Pair[Any] | None = None,
                 stamps: StampSource | None = None,
                 clock_ns: Callable[[], int] = time.monotonic_ns,
                 socket_at: Path | None = None) -> Device:
    """Everything the config describes, wired to one service (not yet running).

    `source` is one file holding the device and a match (`run --config`: that match is the one
    loaded at boot), or a device config (`run --device`: the boot match is `match_path`, else
    its `table.match_file`, else none: idle). The arbiter's socket is at `socket_at` (the
    interactive simulator's), else in the runtime or state folder. Raises StateInUse (nothing
    touched) when another clock holds the state folder, and StartRefused (shown on the panels,
    the lock kept until its `release`) for a bad key or a journal it cannot understand."""
    lock = lock_state_dir(state_dir)
    try:
        device = _build(source, match_path, state_dir, lock, panels, stamps, clock_ns,
                        socket_at)
    except StartRefused as exc:
        exc.release = lock.release
        raise
    except BaseException:
        lock.release()
        raise
    return device


def _boot_match(source: Config | DeviceFile, match_path: str | None
                ) -> tuple[DeviceFile, MatchSource]:
    """The device file later match files are read on, and the match to load at boot."""
    if isinstance(source, Config):
        # The config's own device (the simulator's has mock pins whatever its text says); its
        # text's device tables are what later match files are laid over.
        data = device_part(source.text, source.path).data if source.text else {}
        return DeviceFile(source.path, source.text, source.device, data), lambda: source
    path = match_path or source.device.match_file     # device.toml's own, never a stick's
    if path is None:
        return source, None
    return source, lambda: load_match_config(path, source)


def _idle_state(config: DeviceConfig, table: Table | None = None
                ) -> Callable[[], dict[str, object]]:
    def state() -> dict[str, object]:      # the table as it is now (a stick may provision it)
        device = table.device.device if table is not None else config
        return {"phase": "idle", "table": device.table_id, "event": device.table_event,
                "addresses": local_addresses()}
    return state


def _provisioned(source: DeviceFile, state_dir: str | Path) -> DeviceFile:
    """`source` with what a provisioning stick gave this clock (issue 32); device.toml as it
    is when the kept set cannot be read (the log says why: the clock must run)."""
    try:
        return with_provisioned(source, state_dir)
    except ConfigError as exc:
        from gammonclock import words
        log.error("%s", words.say("prov.broken", error=exc))
        return source


class HallLinkSlot:
    """The hall link the clock runs now (none without a `[hall]`): closed and started again
    with a provisioning stick's `[hall]` (issue 32), one at a time, never on the loop."""

    def __init__(self, service: ClockService, table: Table, state_dir: str | Path,
                 signal: Any) -> None:
        self.service, self.table, self.state_dir, self.signal = service, table, state_dir, signal
        self._lock = threading.Lock()
        self._close: Callable[[], None] = lambda: None
        self.link: Any = None
        self._closed = False

    def start(self, hall: HallConfig | None) -> None:
        with self._lock:
            if self._closed:          # the device closed: no link starts after it
                return
            self._close()
            self._close, self.link = lambda: None, None
            if hall is not None:
                self._close, self.link = _start_hall_link(self.service, self.table, hall,
                                                          self.state_dir, self.signal)

    def close(self) -> None:
        with self._lock:
            self._closed = True
            self._close()
            self._close, self.link = lambda: None, None


def _build(source: Config | DeviceFile, match_path: str | None, state_dir: str | Path,
           lock: StateLock, panels: Pair[Any] | None, stamps: StampSource | None,
           clock_ns: Callable[[], int], socket_at: Path | None) -> Device:
    from gammonclock.hardware.buttons import ButtonBoard, make_pin_factory
    from gammonclock.hardware.buzzer import make_buzzer
    from gammonclock.hardware.notices import journal_alert
    from gammonclock.hardware.panels import Panel
    from gammonclock.hardware.presenters import BuzzerPresenter, PanelPresenter
    from gammonclock.hardware.views import TableInfo, config_error_view

    device_file, boot_match = _boot_match(source, match_path)
    base = device_file
    if isinstance(source, DeviceFile):
        device_file = _provisioned(device_file, state_dir)
    device_config = device_file.device
    factory = make_pin_factory(device_config.pin_factory)
    if panels is None:
        if device_config.pin_factory == "mock":
            panels = dummy_panels()
        else:
            panels = Pair(*(Panel.from_config(device_config.panels[side], f"{side} panel")
                            for side in Side))
    try:
        table = Table(device_file, state_dir, device_key(state_dir),
                      stamps or system_stamps(), clock_ns)
        boot = table.boot(boot_match)
    except StartRefused as exc:
        show_refusal(panels, exc.panel, device_config.language)
        factory.close()
        raise
    opened = boot.opened
    service: ClockService

    def alert() -> str | None:
        session = service.session
        return journal_alert(session.journal_error if session is not None else None)
    def language() -> str:          # the match's (SPEC §15), else the device's (idle)
        session = service.session
        return session.language if session is not None else device_config.language
    def table_info() -> TableInfo:   # what the arbiter's menu shows (SPEC §13.4)
        session = service.session
        journal = session.journal if session is not None else None
        return TableInfo(table.table_id, tuple(local_addresses()), __version__,
                         Path(journal.path).name if journal is not None else "")
    link = HallLinkSlot(None, table, state_dir, None)   # type: ignore[arg-type]
    provisioning = Provisioning(lambda: service, table, base, lambda hall: link.start(hall))
    presenters: list[Any] = [PanelPresenter(panels, alert=alert, language=language,
                                            info=table_info),
                             PanelRequests(lambda: service, table, _menu_match_file(
                                 source, match_path), provisioning)]
    buzzer = make_buzzer(device_config.buzzer_enabled, device_config.buzzer_pin, factory)
    presenters.append(BuzzerPresenter(buzzer, device_config.low_time_ns))
    # The hall's link only hears that something changed; there always is one to hear it, for
    # a provisioning stick may start the link later.
    from gammonclock.link.signal import HallSignal
    hall_signal = HallSignal()
    presenters.append(hall_signal)
    service = ClockService(opened.session if opened else None, presenters,
                           origin=opened.origin if opened else clock_ns(), clock_ns=clock_ns,
                           idle_state=_idle_state(device_config, table))
    link.service, link.signal = service, hall_signal
    device = Device(device_config, table, service, factory, panels, notes=boot.notes,
                    problem=boot.problem, provisioning=provisioning, hall=link)
    if boot.problem is not None:
        service.show_message(config_error_view(message_of(boot.problem), "MATCH REFUSED"))
    if device_config.dice_port:
        from gammonclock.hardware.dice_reader import DiceReader
        reader = DiceReader(device_config.dice_port, device_config.dice_baudrate,
                            service.submit, clock_ns=clock_ns)
        reader.start()
        device.closers.append(lambda: None if reader.stop() else None)
    from gammonclock.runtime.arbiter_socket import ArbiterServer, serving_path
    socket_at = socket_at or serving_path(state_dir)
    try:
        arbiter = ArbiterServer(socket_at, service,
                                group=device_config.arbiter_socket_group, table=table,
                                on_stick=StickHandler(service, table, provisioning),
                                on_provision=provisioning.socket_request)
        device.closers.append(arbiter.close)
    except OSError as exc:    # a read-only card: the clock runs without its control socket
        log.error("%s: cannot serve the arbiter's socket: %s", socket_at, exc.strerror or exc)
        device.notes.append(f"no arbiter socket: {exc.strerror or exc}")
    link.start(device_config.hall)
    device.closers.append(link.close)
    # A bounced button's level is read by the service's loop, in its time (never a wall timer).
    buttons = ButtonBoard(device_config.button_pins, factory, service.submit, clock_ns=clock_ns,
                          settle_ns=device_config.debounce_ns + SETTLE_MARGIN_NS,
                          schedule=service.call_at)
    # A loop that fails says so on both panels before the process exits to be restarted.
    service.fault_view = lambda text: config_error_view(text, "CLOCK FAILED", language())
    # Close in this order: no more inputs, apply those that arrived, journal the instant, and
    # only then let another clock have the folder. The match is ended in the loop's turn: a
    # loop still draining (a starved CPU) is waited for, never run beside.
    device.closers += [buttons.close, factory.close, service.close_session, lock.release]
    return device


def _menu_match_file(source: Config | DeviceFile, match_path: str | None) -> str | None:
    """The match file the arbiter's menu loads (SPEC §13.4): the one the clock booted with
    (`run --device D --config M`, else the device's table.match_file); a one-file config has
    none apart (its match sections are not a match file)."""
    if isinstance(source, Config):
        return None
    return match_path or source.device.match_file


def _start_hall_link(service: ClockService, table: Table, hall: HallConfig,
                     state_dir: str | Path, signal: Any) -> tuple[Callable[[], None], Any]:
    """Start the table's link to the hall; return what stops it, and the link. Without
    paho-mqtt the table plays on without the hall, and the log says what to install."""
    try:
        from gammonclock.link.client import HallLink
    except ImportError as exc:
        log.error("hall: cannot connect to %s: %s; install paho-mqtt (pip install "
                  "'gammonclock[hall]'). The table plays on without the hall", hall.broker, exc)
        return (lambda: None), None
    link = HallLink(service, table, hall, state_dir, signal=signal).start()
    return link.close, link

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
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .config import Config, ConfigError
from .engine import Engine
from .journal import (
    JournalError,
    JournalWriter,
    KeyRefused,
    load_or_create_key,
    open_or_defer,
    read_journal,
)
from .service import ClockService
from .session import (
    JournalHead,
    KeySource,
    Replayed,
    Session,
    StampSource,
    journal_header,
    journal_heads,
    journal_order,
    new_journal_path,
    next_match_no,
    replay,
    resume,
    system_stamps,
)
from .sides import Pair, Side

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

class StartRefused(JournalError):
    """The clock will not start a match on top of a problem it cannot judge: a bad device key,
    or a journal of this config it cannot understand. The file is kept untouched; `panel` is
    the short text for the panels, and `release` gives up the state folder's lock."""

    def __init__(self, message: str, panel: str) -> None:
        super().__init__(message)
        self.panel = panel
        self.release: Callable[[], None] = lambda: None


@dataclass
class Device:
    config: Config
    session: Session
    service: ClockService
    factory: Any                          # the gpiozero pin factory
    panels: Pair[Any]                     # hardware.panels.Panel
    closers: list[Callable[[], None]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

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
    """The session to run and its time origin: the newest journal of this very config (newest
    by the journals' own `match_no`, not by the wall clock) when its match is not over
    (recovered, paused), else a new journal and a new match at instant 0.

    A state folder that cannot be written (a read-only or full SD card) does not stop the
    clock: the journal is made when the disk works again, and the panels say so meanwhile.
    Raises StartRefused for a bad device key or a journal of this config it cannot understand.
    """
    key_of = _device_key(state_dir)
    checkpoint = config.device.checkpoint_ns
    heads = journal_order(journal_heads(state_dir))
    mine = [head for head in heads if head.config == config.text]
    if mine:
        replayed = _replay_for_resume(mine[-1])
        if replayed.engine.match.end_reason is None:
            session, notes = resume(replayed, key_of, stamps, checkpoint_ns=checkpoint)
            return (session, clock_ns() - session.engine.now,
                    [f"recovered {mine[-1].path}"] + notes)
    stamp = stamps()
    path = new_journal_path(state_dir, stamp.wall)
    header = journal_header(config.text, config.path, match_no=next_match_no(heads))

    def create() -> JournalWriter:
        return JournalWriter.create(new_journal_path(state_dir, stamp.wall), key_of(), header,
                                    0, stamp)
    journal, problem = open_or_defer(path, create, 0)
    session = Session(Engine.start(config.rules, at=0), journal, stamps, checkpoint)
    notes = [f"new match in {path}"]
    if problem is not None:
        session.journal_error = problem
        notes.append(f"the journal cannot be written now; its records wait in memory: "
                     f"{problem}")
    return session, clock_ns(), notes


def _device_key(state_dir: str | Path) -> KeySource:
    """The device key, or, when it cannot be made now (a read-only or full card), a function
    that tries again (the journal that needs it is then deferred, and says why); a key file
    that is there but bad is refused."""
    try:
        key = load_or_create_key(state_dir)
    except KeyRefused as exc:
        raise StartRefused(str(exc), "the device key is bad (see the log): move device.key "
                                     "away, then restart") from None
    except JournalError:
        return lambda: load_or_create_key(state_dir)
    return lambda: key


def _replay_for_resume(head: JournalHead) -> Replayed:
    """The match of the journal to resume; StartRefused when it cannot be understood, for a
    match must never silently start again at 0-0 beside an unfinished one."""
    path = head.path
    try:
        if head.problem is not None:
            raise JournalError(head.problem)
        return replay(read_journal(path))
    except (JournalError, ConfigError) as exc:
        raise StartRefused(
            f"{exc}\nThe clock starts nothing while this journal stands: move {path.name} out "
            f"of {path.parent} (keep it for the arbiter) and restart the clock to start a new "
            f"match, or run a firmware that can read it to resume this one.",
            "a journal cannot be read (see the log): move it out of journals/, then restart",
        ) from None


def show_refusal(panels: Pair[Any], panel_text: str) -> None:
    """Both panels say why the clock does not start."""
    from .hardware.presenters import PanelPresenter
    from .hardware.screens import config_error_view

    try:
        PanelPresenter(panels).show_message(config_error_view(panel_text, "JOURNAL ERROR"))
    except Exception:   # a panel that fails must not hide the message in the log
        log.exception("cannot show the problem on the panels")


def dummy_panels() -> Pair[Any]:
    """Two panels on luma's `dummy` devices (mock hardware, tests, the simulator)."""
    from luma.core.device import dummy  # type: ignore[import-untyped]

    from .hardware.panels import Panel
    return Pair(Panel.for_device(dummy(width=128, height=64, mode="1"), "left panel"),
                Panel.for_device(dummy(width=128, height=64, mode="1"), "right panel"))


def build_device(config: Config, state_dir: str | Path, *, panels: Pair[Any] | None = None,
                 stamps: StampSource | None = None,
                 clock_ns: Callable[[], int] = time.monotonic_ns) -> Device:
    """Everything the config describes, wired to one service (not yet running).

    Raises StateInUse (nothing touched) when another clock holds the state folder, and
    StartRefused (shown on the panels, the lock kept until its `release`) for a bad key or a
    journal it cannot understand."""
    lock = lock_state_dir(state_dir)
    try:
        device = _build(config, state_dir, lock, panels, stamps, clock_ns)
    except StartRefused as exc:
        exc.release = lock.release
        raise
    except BaseException:
        lock.release()
        raise
    return device


def _build(config: Config, state_dir: str | Path, lock: StateLock, panels: Pair[Any] | None,
           stamps: StampSource | None, clock_ns: Callable[[], int]) -> Device:
    from .hardware.buttons import ButtonBoard, make_pin_factory
    from .hardware.buzzer import make_buzzer
    from .hardware.notices import journal_alert
    from .hardware.panels import Panel
    from .hardware.presenters import BuzzerPresenter, PanelPresenter

    device_config = config.device
    factory = make_pin_factory(device_config.pin_factory)
    if panels is None:
        if device_config.pin_factory == "mock":
            panels = dummy_panels()
        else:
            panels = Pair(*(Panel.from_config(device_config.panels[side], f"{side} panel")
                            for side in Side))
    try:
        session, origin, notes = open_match(config, state_dir, stamps or system_stamps(),
                                            clock_ns)
    except StartRefused as exc:
        show_refusal(panels, exc.panel)
        factory.close()
        raise
    presenters: list[Any] = [PanelPresenter(panels,
                                            alert=lambda: journal_alert(session.journal_error))]
    buzzer = make_buzzer(device_config.buzzer_enabled, device_config.buzzer_pin, factory)
    presenters.append(BuzzerPresenter(buzzer, device_config.low_time_ns))
    service = ClockService(session, presenters, origin=origin, clock_ns=clock_ns)
    device = Device(config, session, service, factory, panels, notes=notes)
    if device_config.dice_port:
        from .hardware.dice_reader import DiceReader
        reader = DiceReader(device_config.dice_port, device_config.dice_baudrate,
                            service.submit, clock_ns=clock_ns)
        reader.start()
        device.closers.append(lambda: None if reader.stop() else None)
    from .arbiter_socket import ArbiterServer, serving_path
    try:
        arbiter = ArbiterServer(serving_path(state_dir), service,
                                group=device_config.arbiter_socket_group)
        device.closers.append(arbiter.close)
    except OSError as exc:    # a read-only card: the clock runs without its control socket
        log.error("%s: cannot serve the arbiter's socket: %s", serving_path(state_dir),
                  exc.strerror or exc)
        device.notes.append(f"no arbiter socket: {exc.strerror or exc}")
    # A bounced button's level is read by the service's loop, in its time (never a wall timer).
    buttons = ButtonBoard(device_config.button_pins, factory, service.submit, clock_ns=clock_ns,
                          settle_ns=config.rules.debounce_ns + SETTLE_MARGIN_NS,
                          schedule=service.call_at)
    # Close in this order: no more inputs, apply those that arrived, journal the instant, and
    # only then let another clock have the folder.
    device.closers += [buttons.close, factory.close, service.drain,
                       lambda: session.checkpoint(max(session.engine.now,
                                                      service.engine_time(clock_ns()))),
                       session.close, lock.release]
    return device

"""The clock as a device: the config's hardware around one `ClockService`.

`build_device` opens the match (recovering the newest unfinished journal of the same config, or
starting a new one), the pin factory (explicitly, never a fallback), the buttons, both panels, the
optional buzzer and dice reader, and wires every input source to the service's queue. `gammonclock
run` uses it on the Pi; the interactive simulator uses the very same device with gpiozero's
MockFactory pins pressed from the keyboard and panels shown in a window or a terminal.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .config import Config
from .engine import Engine
from .journal import JournalError, JournalWriter, load_or_create_key, read_journal
from .service import ClockService
from .session import (
    Session,
    StampSource,
    journal_header,
    latest_journal,
    new_journal_path,
    replay,
    resume,
    system_stamps,
)
from .sides import Pair, Side

log = logging.getLogger(__name__)

SETTLE_MARGIN_NS = 5_000_000   # a bounced button's level is read this long after debounce_ms


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
        """Stop the input sources, journal the instant, leave the panels lit (in that order)."""
        for close in self.closers:
            try:
                close()
            except Exception:   # shutting down: report and go on closing the rest
                log.exception("closing %r failed", close)


def open_match(config: Config, state_dir: str | Path, stamps: StampSource,
               clock_ns: Callable[[], int]) -> tuple[Session, int, list[str]]:
    """The session to run and its time origin: the newest journal of this very config when its
    match is not over (recovered, paused), else a new journal and a new match at instant 0."""
    key = load_or_create_key(state_dir)
    checkpoint = config.device.checkpoint_ns
    latest = latest_journal(state_dir)
    if latest is not None:
        replayed = None
        try:
            read = read_journal(latest)
            if read.header.data.get("config") == config.text:
                replayed = replay(read)
        except (JournalError, ValueError) as exc:
            log.warning("the newest journal %s cannot be resumed: %s", latest, exc)
        if replayed is not None and replayed.engine.match.end_reason is None:
            session, notes = resume(replayed, key, stamps, checkpoint_ns=checkpoint)
            return session, clock_ns() - session.engine.now, [f"recovered {latest}"] + notes
    stamp = stamps()
    path = new_journal_path(state_dir, stamp.wall)
    writer = JournalWriter.create(path, key, journal_header(config.text, config.path), 0, stamp)
    session = Session(Engine.start(config.rules, at=0), writer, stamps, checkpoint)
    return session, clock_ns(), [f"new match in {path}"]


def dummy_panels() -> Pair[Any]:
    """Two panels on luma's `dummy` devices (mock hardware, tests, the simulator)."""
    from luma.core.device import dummy  # type: ignore[import-untyped]

    from .hardware.panels import Panel
    return Pair(Panel.for_device(dummy(width=128, height=64, mode="1"), "left panel"),
                Panel.for_device(dummy(width=128, height=64, mode="1"), "right panel"))


def build_device(config: Config, state_dir: str | Path, *, panels: Pair[Any] | None = None,
                 stamps: StampSource | None = None,
                 clock_ns: Callable[[], int] = time.monotonic_ns) -> Device:
    """Everything the config describes, wired to one service (not yet running)."""
    from .hardware.buttons import ButtonBoard, make_pin_factory
    from .hardware.buzzer import make_buzzer
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
    session, origin, notes = open_match(config, state_dir, stamps or system_stamps(), clock_ns)
    presenters: list[Any] = [PanelPresenter(panels, alert=lambda: session.journal_error)]
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
    from .arbiter_socket import ArbiterServer, socket_path
    arbiter = ArbiterServer(socket_path(state_dir), service)
    device.closers.append(arbiter.close)
    buttons = ButtonBoard(device_config.button_pins, factory, service.submit, clock_ns=clock_ns,
                          settle_ns=config.rules.debounce_ns + SETTLE_MARGIN_NS)
    # Close in this order: no more inputs, apply those that arrived, journal the instant.
    device.closers += [buttons.close, factory.close, service.drain,
                       lambda: session.checkpoint(max(session.engine.now,
                                                      service.engine_time(clock_ns()))),
                       session.close]
    return device

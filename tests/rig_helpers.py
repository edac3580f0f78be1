"""A device stepped by hand on the fake clock (`Rig`, built by the `open_device` fixture of
tests/conftest.py): `build_device` with gpiozero's MockFactory pins and luma `dummy` panels,
driven by real pin edges; and the same edges fed straight to the engine (`direct`). The device
tests, the PIN tests (core, journal) and the arbiter's mode on the device use it."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from device_helpers import MOCK_TEXT
from gammonclock.config.loading import Config, parse_config
from gammonclock.core.engine import ButtonEdge, Engine
from gammonclock.core.rules import MatchRules
from gammonclock.device.build import Device
from gammonclock.runtime.service import GRACE_NS
from gammonclock.sides import Button, Side
from pin_helpers import FakeClock

S = 1_000_000_000
MS = 1_000_000
DOWN, UP = True, False


def mock_config(text: str = MOCK_TEXT) -> Config:
    return parse_config(text, "mock.toml")


@dataclass
class Rig:
    """A device stepped by hand on the fake clock; `edges` are what its pins did (engine time)."""

    device: Device
    clock: FakeClock
    edges: list[ButtonEdge] = field(default_factory=list)
    closed: bool = False

    @property
    def origin(self) -> int:
        return self.device.service.origin

    @property
    def engine(self) -> Engine:
        return self.device.session.engine

    def at(self, t: int) -> int | None:
        """Move the clock to engine instant `t` and let the service do what is due."""
        assert self.origin + t >= self.clock.ns, "the clock goes forward only"
        self.clock.ns = self.origin + t
        return self.device.service.step()

    def edge(self, t: int, button: Button, pressed: bool) -> None:
        """The pin of `button` changes at engine instant `t` (pressed: driven low)."""
        self.at(t)
        pin = self.device.factory.pin(self.device.config.button_pins[button])
        pin.drive_low() if pressed else pin.drive_high()
        self.edges.append(ButtonEdge(t, button, pressed))

    def play(self, edges: list[tuple[float, Button, bool]]) -> None:
        for seconds, button, pressed in edges:
            self.edge(round(seconds * S), button, pressed)

    def settle(self, t: int) -> Engine:
        """Everything up to `t` done; the device's engine brought to `t`."""
        self.at(t + GRACE_NS)
        return self.engine.advance(t)[0]


def presses(start: float, buttons: tuple[Button, ...]) -> list[tuple[float, Button, bool]]:
    """A tap of each of `buttons` from `start`, 0.5 s apart (each down 0.1 s)."""
    out = []
    for i, button in enumerate(buttons):
        t = start + 0.5 * i
        out += [(t, button, DOWN), (t + 0.1, button, UP)]
    return out


def pin_entry(start: float, buttons: tuple[Button, ...]) -> list[tuple[float, Button, bool]]:
    """A PIN's presses from `start`, then the cube held 2.5 s (the end of the entry); none for
    no buttons (the PIN's 30 s then run out)."""
    if not buttons:
        return []
    end = start + 0.5 * len(buttons)
    return presses(start, buttons) + [(end, Button.CUBE, DOWN), (end + 2.5, Button.CUBE, UP)]


def direct(rules: MatchRules, edges: list[ButtonEdge], t: int) -> Engine:
    """The same edges fed straight to the engine, brought to `t`."""
    engine = Engine.start(rules, at=0)
    for e in edges:
        engine, _ = engine.feed(e)
    return engine.advance(t)[0]


def close(rig: Rig) -> None:
    if rig.closed:
        return
    rig.closed = True
    rig.device.close()
    for side in Side:
        rig.device.panels[side].close()
    rig.device.factory.close()


def journal_of(rig: Rig) -> Path:
    journal = rig.device.session.journal
    assert journal is not None
    return Path(journal.path)

"""gpiozero's MockFactory pins on a fake clock, for the tests of the buttons, the hardware check
and the device.

    from pin_helpers import FakeClock

    def test_something(factory: MockFactory, clock: FakeClock):   # the fixtures: tests/conftest.py
        factory.pin(17).drive_low()            # a press at clock.ns
"""

from __future__ import annotations

from dataclasses import dataclass

import gpiozero.pins.mock
import pytest
from gpiozero.pins.mock import MockFactory

S = 1_000_000_000


@dataclass
class FakeClock:
    """One monotonic clock for a test: the code under test reads it in ns (`clock()`), the mock
    pins their change times and a factory its ticks in seconds (`clock.seconds`)."""

    ns: int = 1000 * S

    def seconds(self) -> float:
        return self.ns / S

    def __call__(self) -> int:
        return self.ns


def fake_clock(monkeypatch: pytest.MonkeyPatch, factory: MockFactory | None = None) -> FakeClock:
    """A FakeClock that gives the mock pins their change times, and `factory` its ticks."""
    fake = FakeClock()
    monkeypatch.setattr(gpiozero.pins.mock, "monotonic", fake.seconds)
    if factory is not None:
        monkeypatch.setattr(factory, "ticks", fake.seconds)
    return fake

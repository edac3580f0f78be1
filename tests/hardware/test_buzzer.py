"""The buzzer over gpiozero's MockFactory: patterns that never block, and errors that never stop."""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator

import pytest
from gpiozero.pins.mock import MockFactory, MockPin

from gammonclock.config.loading import DEFAULT_DEVICE
from gammonclock.hardware.buzzer import (
    FLAG,
    LOW_TIME,
    BeepPattern,
    GpioBuzzer,
    NullBuzzer,
    make_buzzer,
)

PIN = DEFAULT_DEVICE.buzzer_pin           # 18
# A first beep long enough that a return within it means "did not wait for the beeps" even on
# a loaded machine (a blocking call takes the whole pattern: 0.35 s).
CHIRP = BeepPattern(on_s=0.15, off_s=0.05, count=2)
LONG = BeepPattern(on_s=0.03, off_s=0.02, count=3)


@pytest.fixture
def factory() -> Iterator[MockFactory]:
    made = MockFactory()
    yield made
    made.reset()
    made.close()


@pytest.fixture
def buzzer(factory: MockFactory) -> Iterator[GpioBuzzer]:
    made = make_buzzer(True, PIN, factory, low_time=CHIRP, flag=LONG)
    assert isinstance(made, GpioBuzzer)
    yield made
    made.close()


def states(factory: MockFactory) -> list[bool]:
    return [s.state for s in factory.pin(PIN).states]


def test_the_default_patterns_are_short_and_distinct():
    assert LOW_TIME.duration_s < 0.5 < FLAG.duration_s < 3.0
    assert (LOW_TIME.count, FLAG.count) == (2, 3)
    assert FLAG.on_s > LOW_TIME.on_s


def test_low_time_beeps_twice_without_blocking(factory, buzzer):
    assert states(factory) == [False]
    started = time.monotonic()
    buzzer.low_time()
    assert time.monotonic() - started < CHIRP.on_s      # returned before the first beep ended
    assert buzzer.wait_idle(2.0)
    assert states(factory) == [False, True, False, True, False]
    assert factory.pin(PIN).state == 0


def test_flag_beeps_three_times_with_its_lengths(factory, buzzer):
    buzzer.flag()
    assert buzzer.wait_idle(2.0)
    recorded = factory.pin(PIN).states
    assert [s.state for s in recorded] == [False, True, False, True, False, True, False]
    # Each state's timestamp is the time since the previous change: on for on_s, off for off_s.
    on_times = [s.timestamp for s in recorded[2::2]]
    off_times = [s.timestamp for s in recorded[3::2]]
    assert all(LONG.on_s * 0.9 <= t < LONG.on_s + 0.5 for t in on_times)
    assert all(LONG.off_s * 0.9 <= t < LONG.off_s + 0.5 for t in off_times)


def test_a_new_pattern_cuts_the_old_one_short(factory, buzzer):
    buzzer.play(BeepPattern(on_s=5.0, off_s=5.0, count=3))    # would take 25 s
    deadline = time.monotonic() + 2.0
    while factory.pin(PIN).state != 1 and time.monotonic() < deadline:
        time.sleep(0.001)
    started = time.monotonic()
    buzzer.low_time()
    assert buzzer.wait_idle(2.0)
    assert time.monotonic() - started < 1.0
    assert states(factory)[-1] is False
    assert states(factory).count(True) == 1 + CHIRP.count


def test_silence_stops_at_once(factory, buzzer):
    buzzer.play(BeepPattern(on_s=5.0, off_s=5.0, count=2))
    buzzer.silence()
    assert buzzer.wait_idle(1.0)
    assert factory.pin(PIN).state == 0


def test_close_releases_the_pin(factory):
    made = make_buzzer(True, PIN, factory, low_time=CHIRP, flag=LONG)
    made.flag()
    made.close()
    assert factory.pin(PIN).state == 0
    # The pin is free for another device.
    make_buzzer(True, PIN, factory).close()


def test_a_disabled_buzzer_does_nothing_and_touches_no_pin(factory):
    made = make_buzzer(False, PIN, factory)
    assert isinstance(made, NullBuzzer)
    made.low_time()
    made.flag()
    made.silence()
    assert made.wait_idle(0)
    made.close()
    assert factory.pins == {}
    assert isinstance(make_buzzer(True, PIN, None), NullBuzzer)   # no pin factory at all


class BrokenPin(MockPin):
    """A pin whose output fails, as an I/O error on a real board would."""

    broken = True

    def _set_state(self, value):
        if BrokenPin.broken and value:
            raise OSError(5, "Input/output error")
        super()._set_state(value)


def test_a_pin_failing_while_beeping_is_logged_once_and_beeps_resume(caplog):
    factory = MockFactory(pin_class=BrokenPin)
    try:
        buzzer = make_buzzer(True, PIN, factory, low_time=CHIRP, flag=LONG)
        assert isinstance(buzzer, GpioBuzzer)
        with caplog.at_level(logging.INFO, logger="gammonclock.hardware.buzzer"):
            buzzer.low_time()                      # raises on the buzzer's thread: caught
            assert buzzer.wait_idle(2.0)
            buzzer.flag()
            assert buzzer.wait_idle(2.0)
            BrokenPin.broken = False
            buzzer.low_time()
            assert buzzer.wait_idle(2.0)
        errors = [r for r in caplog.records if r.levelno == logging.ERROR]
        assert len(errors) == 1 and "Input/output error" in errors[0].message
        assert any("works again" in r.message for r in caplog.records)
        assert [s.state for s in factory.pin(PIN).states] == [False, True, False, True, False]
        buzzer.close()
    finally:
        BrokenPin.broken = True
        factory.reset()
        factory.close()


def test_a_buzzer_that_cannot_be_set_up_is_logged_and_silent(factory, caplog):
    with caplog.at_level(logging.ERROR, logger="gammonclock.hardware.buzzer"):
        made = make_buzzer(True, 99, factory)      # no GPIO 99 on a Pi
    assert isinstance(made, NullBuzzer)
    assert any("GPIO 99 cannot be set up" in r.message for r in caplog.records)

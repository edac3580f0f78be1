"""The optional buzzer: short beep patterns for "low time" and "flag", never blocking the caller.

The reference build has an active buzzer (it sounds at a fixed pitch while its pin is high),
switched by a transistor on one GPIO, driven through gpiozero's `Buzzer` on the same explicit pin
factory as the buttons. A pattern plays on a short-lived thread of ours rather than gpiozero's
`beep()`, so that an error from the pin in the middle of a pattern is caught and logged here
instead of dying on gpiozero's blink thread. A new pattern replaces the one playing.

The buzzer is a courtesy: when it is disabled, or its pin cannot be set up, `make_buzzer` returns
a `NullBuzzer` and the clock goes on without sound.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass
from typing import Protocol

from gpiozero import Buzzer as GpiozeroBuzzer  # type: ignore[import-untyped]
from gpiozero.pins import Factory  # type: ignore[import-untyped]

log = logging.getLogger("gammonclock.hardware.buzzer")


@dataclass(frozen=True)
class BeepPattern:
    """`count` beeps of `on_s` seconds, `off_s` apart."""

    on_s: float
    off_s: float
    count: int

    @property
    def duration_s(self) -> float:
        return self.count * self.on_s + max(0, self.count - 1) * self.off_s


# Two short chirps: noticeable at the table without startling the next one.
LOW_TIME = BeepPattern(on_s=0.06, off_s=0.09, count=2)
# Three long beeps: the flag fell, the arbiter should come.
FLAG = BeepPattern(on_s=0.5, off_s=0.25, count=3)


class Buzzer(Protocol):
    def low_time(self) -> None:
        """The running side's reserve dropped below the config's `buzzer.low_time`."""

    def flag(self) -> None:
        """A flag fell."""

    def silence(self) -> None:
        """Stop the pattern playing, if any."""

    def wait_idle(self, timeout: float | None = None) -> bool:
        """Wait until no pattern plays (a flag beep before shutdown, tests)."""

    def close(self) -> None:
        """Silence and release the pin."""


class NullBuzzer:
    """No buzzer: every call does nothing."""

    def low_time(self) -> None:
        pass

    def flag(self) -> None:
        pass

    def silence(self) -> None:
        pass

    def wait_idle(self, timeout: float | None = None) -> bool:
        return True

    def close(self) -> None:
        pass


class GpioBuzzer:
    """An active buzzer on GPIO `pin` (BCM). Construction errors propagate (see make_buzzer);
    errors while playing are logged and the pattern stops."""

    def __init__(self, pin: int, factory: Factory, *, low_time: BeepPattern = LOW_TIME,
                 flag: BeepPattern = FLAG, log: logging.Logger = log) -> None:
        self._device = GpiozeroBuzzer(pin, initial_value=False, pin_factory=factory)
        self._patterns = {"low_time": low_time, "flag": flag}
        self._log = log
        self._lock = threading.Lock()
        self._generation = 0                  # the pattern allowed to touch the pin
        self._stop = threading.Event()        # wakes the playing pattern early
        self._thread: threading.Thread | None = None
        self._failed = False                  # log a failing pin once, not on every beep

    def low_time(self) -> None:
        self.play(self._patterns["low_time"])

    def flag(self) -> None:
        self.play(self._patterns["flag"])

    def play(self, pattern: BeepPattern) -> None:
        """Start `pattern` and return at once; a pattern still playing is cut short."""
        with self._lock:
            self._generation += 1
            generation = self._generation
            self._stop.set()                  # the old pattern's thread wakes and quits
            self._stop = threading.Event()
            self._thread = threading.Thread(target=self._run, name="gammonclock-buzzer",
                                            args=(pattern, generation, self._stop), daemon=True)
            self._thread.start()

    def _run(self, pattern: BeepPattern, generation: int, stop: threading.Event) -> None:
        if self._was_on(generation):
            # A pattern cut short left the buzzer on: a gap first, so the new one is heard.
            if not self._write(generation, False) or stop.wait(pattern.off_s):
                return
        for i in range(pattern.count):
            if not self._write(generation, True):
                return
            stopped = stop.wait(pattern.on_s)
            if not self._write(generation, False) or stopped:
                return
            if i + 1 < pattern.count and stop.wait(pattern.off_s):
                return

    def _was_on(self, generation: int) -> bool:
        with self._lock:
            try:
                return generation == self._generation and bool(self._device.value)
            except Exception:
                return False

    def _write(self, generation: int, on: bool) -> bool:
        """Set the pin if this pattern is still the current one; False: stop playing."""
        with self._lock:
            if generation != self._generation:
                return False
            try:
                if on:
                    self._device.on()
                else:
                    self._device.off()
            except Exception as exc:
                if not self._failed:
                    self._log.error("buzzer: the pin failed (%s: %s); beeps are skipped until "
                                    "it works again", type(exc).__name__, exc)
                self._failed = True
                return False
            if self._failed:
                self._log.info("buzzer: the pin works again")
                self._failed = False
            return True

    def silence(self) -> None:
        with self._lock:
            self._generation += 1
            self._stop.set()
            try:
                self._device.off()
            except Exception as exc:
                self._log.error("buzzer: cannot switch off (%s: %s)", type(exc).__name__, exc)

    def wait_idle(self, timeout: float | None = None) -> bool:
        """Wait until no pattern is playing; False if one still is after `timeout` seconds."""
        thread = self._thread
        if thread is not None:
            thread.join(timeout)
            return not thread.is_alive()
        return True

    def close(self) -> None:
        self.silence()
        self.wait_idle(1.0)
        try:
            self._device.close()
        except Exception as exc:
            self._log.error("buzzer: closing the pin failed (%s: %s)", type(exc).__name__, exc)


def make_buzzer(enabled: bool, pin: int, factory: Factory | None, *,
                low_time: BeepPattern = LOW_TIME, flag: BeepPattern = FLAG,
                log: logging.Logger = log) -> GpioBuzzer | NullBuzzer:
    """The buzzer of the config (`buzzer.enabled`, `pins.buzzer`), or a NullBuzzer when it is
    disabled or its pin cannot be set up (logged: the clock runs without sound)."""
    if not enabled or factory is None:
        return NullBuzzer()
    try:
        return GpioBuzzer(pin, factory, low_time=low_time, flag=flag, log=log)
    except Exception as exc:
        log.error("buzzer on GPIO %d cannot be set up (%s: %s); running without sound",
                  pin, type(exc).__name__, exc)
        return NullBuzzer()

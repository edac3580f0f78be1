"""The three buttons: every raw edge, timestamped at the instant it happened, into a sink.

Buttons wire a GPIO to ground and use the internal pull-up: released reads high, pressed low.
Nothing here debounces or recognises taps and holds — that is the engine's job, identical on
every backend and replayable from the journal (gpiozero's `bounce_time` differs between lgpio and
RPi.GPIO and MockPin ignores it, so it is never set). A callback does one thing: it calls
`sink(ButtonEdge(t, button, pressed))`, where the sink is normally a queue's `put`.

**The timestamp of an edge.** SPEC §2 charges a press at the instant of its edge, not when the
software got round to it. gpiozero passes a pin-level `when_changed(ticks, state)` callback the
backend's tick of the edge, comparable with `factory.ticks()` through `factory.ticks_diff()`:

- lgpio: the kernel's timestamp of the edge (gpio-cdev `timestamp_ns`, CLOCK_MONOTONIC unless a
  line asks for the realtime clock, which lgpio does not), passed in seconds; the factory's
  `ticks()` is `time.monotonic()`, the same clock;
- RPi.GPIO: no timestamp; gpiozero stamps the callback with `factory.ticks()` when it runs;
- MockPin: the `time.monotonic()` of the change.

So `t = clock_ns() - ticks_diff(factory.ticks(), ticks)`: the edge's age, measured on the
backend's own clock, taken from the `clock_ns` read in the callback. This puts the edge on the
`clock_ns` base (the service's monotonic clock, or a fake one in tests) without assuming the two
clocks share an epoch, and on RPi.GPIO it degrades to the clock read in the callback. An age that
cannot be right (negative, or older than `MAX_EDGE_AGE_NS`: a backend whose ticks are on another
clock) is replaced by the callback's own clock read, with one warning. Edges never go back in
time: the engine refuses an input before its last one, and lgpio may deliver edges of different
pins a little out of order, so each edge is at least as late as the one delivered before it.

**Settling after bounce.** The engine ignores an edge closer than `debounce_ms` to the last one it
accepted (fine point 3). When a release bounces — or a tap is shorter than that — the edge that
leaves the button up can be among the ignored ones, and the engine would believe the button still
down (and, `hold_s` later, held). So when two edges of a button come closer than `settle_ns`, the
board reads the pin once the edges have settled and, when the engine believes otherwise, delivers
its level as one more edge, which the engine takes.

That settle is a timer of the clock's loop (`schedule`, the service's `call_at`): due in service
time, run on the loop's thread in the order of the instants, it reads the pin and looks at the
engine as it stands then, so it is exact on a fake clock too. A button has one such call waiting
at most: a later bounce moves its instant on, and the call, run at the old instant, asks again for
the new one (so a chattering pin cannot grow the loop's timers). A board used on its own (no loop)
reads the pin on a wall-clock timer instead and always delivers the level to the sink.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any

from gpiozero import InputDevice  # type: ignore[import-untyped]
from gpiozero.pins import Factory  # type: ignore[import-untyped]

from gammonclock.config.loading import PIN_FACTORIES
from gammonclock.config.problems import Problem
from gammonclock.core.engine import ButtonEdge, Engine
from gammonclock.durations import NS_PER_S
from gammonclock.sides import Button

from .errors import HardwareError

# An edge older than this when its callback runs is a clock mix-up, not a slow callback.
MAX_EDGE_AGE_NS = 10 * NS_PER_S

log = logging.getLogger("gammonclock.hardware.buttons")

EdgeSink = Callable[[ButtonEdge], object]
# What the clock's loop calls at a settle's instant: given the engine then (None: no match
# loaded, when no edge is due), the edge to apply.
Settle = Callable[[Engine | None], ButtonEdge | None]
# Has the loop call a Settle at a monotonic instant (the service's `call_at`).
Schedule = Callable[[int, Settle], object]


def make_pin_factory(name: str) -> Factory:
    """The gpiozero pin factory `name` (lgpio | rpigpio | mock), created explicitly.

    Raises HardwareError naming the backend, the cause and what to do when it cannot be created;
    never falls back to another backend the way gpiozero's default factory does.
    """
    # The backend's module is imported only when chosen: off a Pi it is absent.
    import importlib

    backend = PIN_FACTORIES.get(name)   # the config's table: name, factory class, hint
    if backend is None:
        raise HardwareError(Problem("hw.pins.unknown", name=repr(name),
                                    names=", ".join(PIN_FACTORIES)))
    module, _, factory = backend.factory.rpartition(".")
    try:
        backend_class = getattr(importlib.import_module(module), factory)
    except ImportError as exc:   # off a Pi, or not installed
        raise HardwareError(Problem("hw.pins.failed", name=repr(name),
                                    error=f"{type(exc).__name__}: {exc}",
                                    hint=Problem(f"hw.pins.hint.{name}"))) from exc
    try:
        created: Factory = backend_class()
    except Exception as exc:   # lgpio.error / RuntimeError: no access, a wrong board, no pipe
        hint = (f"hw.pins.running_hint.{name}" if backend.running_hint
                else f"hw.pins.hint.{name}")
        raise HardwareError(Problem("hw.pins.failed", name=repr(name),
                                    error=f"{type(exc).__name__}: {exc}",
                                    hint=Problem(hint))) from exc
    return created


class ButtonBoard:
    """The buttons on their GPIOs (BCM numbers), each edge sent to `sink` as a ButtonEdge.

    `clock_ns` is the monotonic clock the engine runs on; `sink` is called from the backend's
    callback thread (or, with MockPin, the thread that drives the pin), so it must be
    thread-safe and quick: `queue.Queue.put` is. `schedule` (thread-safe too) runs the settle
    after bounce in the clock's loop; without it a wall-clock timer does (see the docstring).
    """

    def __init__(self, pins: Mapping[Button, int], factory: Factory, sink: EdgeSink,
                 clock_ns: Callable[[], int] = time.monotonic_ns,
                 log: logging.Logger = log, settle_ns: int | None = None,
                 schedule: Schedule | None = None) -> None:
        self._settle_ns = settle_ns
        self._schedule = schedule
        self._last_raw: dict[Button, int] = {}
        self._settle_due: dict[Button, int] = {}   # the instant of each button's settle to run
        # Buttons with a settle call in the loop: at most one each, however fast a pin chatters.
        self._settle_called: set[Button] = set()
        # The first edge after a settle's instant, when one came before the loop ran the settle:
        # the pin then no longer shows the level at that instant, but this edge tells it (the
        # pin was quiet for settle_ns before it, so it is a real change, not bounce).
        self._after_settle: dict[Button, bool] = {}
        self._settlers: dict[Button, threading.Timer] = {}
        self._factory = factory
        self._sink = sink
        self._clock_ns = clock_ns
        self._log = log
        self._lock = threading.Lock()    # one edge at a time, so timestamps stay in order
        self._last_t: int | None = None
        self._warned_clock = False
        self._devices: dict[Button, InputDevice] = {}
        # gpiozero keeps only a weak reference to a when_changed callable: we hold them here.
        self._callbacks: dict[Button, Callable[[Any, Any], None]] = {}
        used: dict[int, Button] = {}
        try:
            for button, gpio in pins.items():
                if gpio in used:
                    raise HardwareError(Problem("hw.pins.shared", button=button,
                                                other=used[gpio], gpio=gpio))
                used[gpio] = button
                self._attach(button, gpio)
        except BaseException:
            self.close()
            raise

    def _attach(self, button: Button, gpio: int) -> None:
        try:
            device = InputDevice(gpio, pull_up=True, pin_factory=self._factory)
        except Exception as exc:
            raise HardwareError(Problem("hw.pins.button_failed", button=button, gpio=gpio,
                                        error=f"{type(exc).__name__}: {exc}")) from exc
        self._devices[button] = device
        pin = device.pin
        assert pin is not None
        pin.bounce = None     # no backend debounce: the engine debounces (see the docstring)
        pin.edges = "both"

        def changed(ticks: Any, state: Any) -> None:
            self._edge(button, ticks, state)

        self._callbacks[button] = changed
        pin.when_changed = changed

    # --- callbacks ------------------------------------------------------------------------------

    def _edge(self, button: Button, ticks: Any, state: Any) -> None:
        try:
            with self._lock:
                t = self._edge_time(ticks)
                if self._last_t is not None and t < self._last_t:
                    t = self._last_t
                self._last_t = t
                # Pulled up, wired to ground: low is pressed.
                self._sink(ButtonEdge(t, button, not state))
                previous, self._last_raw[button] = self._last_raw.get(button), t
                if (self._settle_ns is not None and previous is not None
                        and t - previous < self._settle_ns):
                    self._settle_later(button, t + self._settle_ns)
                elif (button in self._settle_due and t > self._settle_due[button]
                        and button not in self._after_settle):
                    self._after_settle[button] = not state
        except Exception:
            # The callback runs on the backend's thread: an exception there would be lost or
            # stop that thread; the clock must go on.
            self._log.exception("button %s: edge not delivered", button)

    def _settle_later(self, button: Button, due: int) -> None:
        """Deliver the button's level once its edges have been quiet for `settle_ns` (at
        `due`); a later bounce moves the settle on. Called with the lock held."""
        self._settle_due[button] = due
        self._after_settle.pop(button, None)
        if self._schedule is not None:
            if button not in self._settle_called:   # else the pending call moves itself on
                self._settle_called.add(button)
                self._call_settle(button, due)
            return
        # A board used on its own (tests/hardware/test_buttons.py); the device always has a loop.
        assert self._settle_ns is not None
        if (old := self._settlers.get(button)) is not None:
            old.cancel()
        timer = threading.Timer(self._settle_ns / NS_PER_S, self._settled, (button,))
        timer.daemon = True
        self._settlers[button] = timer
        timer.start()

    def _call_settle(self, button: Button, due: int) -> None:
        """Have the loop run the button's settle at `due`. Called with the lock held."""
        assert self._schedule is not None
        self._schedule(due, lambda engine: self._settled_edge(button, due, engine))

    def _settled_edge(self, button: Button, due: int, engine: Engine | None) -> ButtonEdge | None:
        """The settle due at `due`, in the clock's loop: the pin's level as an edge at `due`
        when the engine believes otherwise; None when it agrees, when the board is closed, or
        when a later bounce moved the settle on (the call is then made again for that instant)."""
        with self._lock:
            device = self._devices.get(button)
            if device is None:
                return None
            if (moved := self._settle_due[button]) != due:
                self._call_settle(button, moved)
                return None
            del self._settle_due[button]
            self._settle_called.discard(button)
            after = self._after_settle.pop(button, None)
            # The level at `due`: the opposite of the first change after it, if one came while
            # the settle waited for the loop; else the pin as it reads now.
            pressed = (not after) if after is not None else bool(device.is_active)
        if engine is None or engine.button(button).down == pressed:
            return None
        return ButtonEdge(due, button, pressed)

    def _settled(self, button: Button) -> None:
        """The settle on a wall-clock timer (a board with no loop): the level, always."""
        try:
            with self._lock:
                device = self._devices.get(button)
                if device is None:
                    return                          # closed meanwhile
                self._settle_due.pop(button, None)
                t = max(self._clock_ns(), self._last_t or 0)
                self._last_t = t
                self._sink(ButtonEdge(t, button, bool(device.is_active)))
        except Exception:
            self._log.exception("button %s: settled level not delivered", button)

    def _edge_time(self, ticks: Any) -> int:
        """The instant of an edge with backend tick `ticks`, on the `clock_ns` base."""
        now_ticks = self._factory.ticks()
        now = self._clock_ns()
        if ticks is None:
            return now
        try:
            age = int(round(self._factory.ticks_diff(now_ticks, ticks) * NS_PER_S))
        except (TypeError, ValueError, OverflowError):
            age = -1
        if 0 <= age <= MAX_EDGE_AGE_NS:
            return now - age
        if not self._warned_clock:
            self._warned_clock = True
            self._log.warning("button edges: the backend's edge tick %r is %s ns from its clock; "
                              "using the time of the callback instead", ticks, age)
        return now

    # --- reading and closing ----------------------------------------------------------------------

    def is_pressed(self, button: Button) -> bool:
        """Whether `button` is down now (a button held at start-up, a self-test)."""
        return bool(self._devices[button].is_active)

    @property
    def buttons(self) -> tuple[Button, ...]:
        return tuple(self._devices)

    def close(self) -> None:
        """Stop the callbacks and release the pins; safe to call twice."""
        for timer in self._settlers.values():
            timer.cancel()
        for button, device in list(self._devices.items()):
            try:
                if device.pin is not None:
                    device.pin.when_changed = None
                device.close()
            except Exception:
                self._log.exception("button %s: closing its pin failed", button)
        self._devices.clear()
        self._callbacks.clear()

    def __enter__(self) -> ButtonBoard:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


__all__ = ["MAX_EDGE_AGE_NS", "ButtonBoard", "EdgeSink", "HardwareError", "make_pin_factory"]

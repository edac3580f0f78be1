"""The next match's rig (SPEC §13.2): the device file and the matches the lifecycle's tests load,
a monotonic clock three hours after boot (`uptime_clock`: engine and monotonic time differ), a
tap applied with the test as the loop's thread, and work that waits for the loop run beside it
(`on_loop`). The lifecycle's, the Russian words' and the keyed PIN's tests use it."""

from __future__ import annotations

import json
import threading
import time

from gammonclock.core.engine import ButtonEdge
from gammonclock.device.build import Device
from gammonclock.sides import Button

S = 1_000_000_000

DEVICE_TEXT = """\
[hardware]
pin_factory = "mock"

[buttons]
hold_s = 1.5

[table]
id = "T12"
event = "Moscow Open"
"""

MATCH_TEXT = """\
[match]
length = 5

[players]
left = "Анна"
right = "Boris"
"""

OTHER_MATCH = MATCH_TEXT.replace("Boris", "Carla").replace("length = 5", "length = 3")


UPTIME_NS = 3 * 3600 * S     # the Pi's monotonic clock is far from 0 when a match is loaded


def uptime_clock() -> int:
    return time.monotonic_ns() + UPTIME_NS


def now(device: Device) -> int:
    """The device's engine time now (what `service.apply` takes)."""
    return device.service.engine_time(device.service.clock_ns())


def tap(device: Device, button: Button) -> None:
    t = max(now(device), device.session.engine.now) if device.session else now(device)
    device.service.apply(ButtonEdge(t, button, True))
    device.service.apply(ButtonEdge(t + S // 10, button, False))


def on_loop(device: Device, work):
    """Run `work` (which waits for the loop) on a thread while this thread is the loop."""
    result: dict = {}
    thread = threading.Thread(target=lambda: result.setdefault("answer", work()))
    thread.start()
    deadline = time.monotonic() + 30
    while thread.is_alive() and time.monotonic() < deadline:
        device.service.grace_ns = device.service.timer_grace_ns = 0
        device.service.step()
        time.sleep(0.005)
    thread.join(timeout=1)
    return json.loads(json.dumps(result["answer"]))

"""A frame's writes to one OLED controller in one `I2C_RDWR` ioctl (luma's managed I²C serial).

luma's `i2c` serial sends every `command()` and every `data()` as an ioctl of its own: a changed
window costs two system calls (and on a Pi 30–100 µs of kernel each) plus smbus2's message set-up
twice. Here all the (commands, data) pairs of one frame are messages of one `I2C_RDWR` ioctl:
each message is a write transaction of its own on the wire — address, control byte (0x00
commands, 0x40 data, luma's own), the bytes — joined by a repeated START instead of a STOP and a
START. The bytes on the wire are the same, the kernel is entered once.

Why the controllers accept it: the SSD1306 (§8.1.5 of its datasheet), the SSD1309 and the SH1106
(§"I²C-bus interface") take a write transaction as START, slave address with R/W# = 0, control
byte, bytes; the I²C-bus specification (NXP UM10204 §3.1.10) makes a repeated START functionally
identical to a START, so each message is decoded as a transaction of its own, as with a STOP
between them. The Pi's `i2c-bcm2835` driver carries any number of write messages in one
transfer (only a read must come last), at most `I2C_RDWR_IOCTL_MAX_MSGS` (42) per ioctl.
"""

from __future__ import annotations

import ctypes
from collections.abc import Sequence
from typing import Any

MAX_MESSAGES = 42            # the kernel's I2C_RDWR_IOCTL_MAX_MSGS
MAX_MESSAGE_BYTES = 4096     # luma's own limit for one data transaction (its managed i2c)


def send_windows(serial: Any, writes: Sequence[tuple[bytes, bytes]]) -> bool:
    """Send each (commands, data) of `writes` through luma's managed i2c `serial` in as few
    `I2C_RDWR` ioctls as the kernel takes; False, sending nothing, when `serial` is not one
    (an emulator, luma's unmanaged bus: the caller sends through `command` and `data`)."""
    bus: Any = getattr(serial, "_bus", None)
    if not getattr(serial, "_managed", False) or not hasattr(bus, "i2c_rdwr"):
        return False
    address, command, data = serial._addr, serial._cmd_mode, serial._data_mode
    if any(len(c) > 32 or len(d) >= MAX_MESSAGE_BYTES for c, d in writes):
        return False                 # luma's limits: let its own calls split or refuse
    from smbus2 import i2c_msg

    def message(raw: bytes) -> Any:       # smbus2's i2c_msg.write, without its copies
        return i2c_msg(addr=address, flags=0, len=len(raw),
                       buf=ctypes.create_string_buffer(raw, len(raw)))

    messages: list[Any] = []
    for commands, payload in writes:
        messages.append(message(bytes((command,)) + commands))
        if payload:
            messages.append(message(bytes((data,)) + payload))
    for start in range(0, len(messages), MAX_MESSAGES):
        bus.i2c_rdwr(*messages[start:start + MAX_MESSAGES])
    return True

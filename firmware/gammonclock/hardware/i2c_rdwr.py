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
import struct
from collections.abc import Sequence
from functools import cache
from typing import Any

from smbus2 import smbus2 as _smbus2

MAX_MESSAGES = 42            # the kernel's I2C_RDWR_IOCTL_MAX_MSGS
MAX_MESSAGE_BYTES = 4096     # luma's own limit for one data transaction (its managed i2c)

_OWN_RDWR = _smbus2.SMBus.i2c_rdwr   # smbus2's own (a stand-in bus may bring its own)
_PREFIX = [bytes((b,)) for b in range(256)]   # a control byte as a message's first


@cache
def _layout(count: int) -> tuple[Any, struct.Struct]:
    """The ctypes array type of `count` smbus2 `i2c_msg`s (the kernel's `struct i2c_msg`:
    address, flags, length, buffer's address) and its native layout, to pack it in one go."""
    array = _smbus2.i2c_msg * count
    layout = struct.Struct("@" + "HHHP" * count)
    assert layout.size == ctypes.sizeof(array)
    return array, layout


def _messages(address: int, raw: Sequence[bytes]) -> tuple[Any, Any]:
    """The `i2c_msg` array of one write message per item of `raw` to `address`, and the one
    buffer holding all their bytes (keep both alive until the ioctl returns): two allocations
    and one packing, where smbus2's `i2c_msg.write` makes a buffer and a structure a message."""
    blob = b"".join(raw)
    buffer = ctypes.create_string_buffer(blob, len(blob))
    at = ctypes.addressof(buffer)
    fields: list[int] = []
    for message in raw:
        fields += (address, 0, len(message), at)
        at += len(message)
    array_type, layout = _layout(len(raw))
    array = array_type()
    layout.pack_into(array, 0, *fields)
    return array, buffer


def send_windows(serial: Any, writes: Sequence[tuple[bytes, bytes]]) -> bool:
    """Send each (commands, data) of `writes` through luma's managed i2c `serial` in as few
    `I2C_RDWR` ioctls as the kernel takes; False, sending nothing, when `serial` is not one
    (an emulator, luma's unmanaged bus: the caller sends through `command` and `data`)."""
    bus: Any = getattr(serial, "_bus", None)
    if not getattr(serial, "_managed", False) or not hasattr(bus, "i2c_rdwr"):
        return False
    command, data = _PREFIX[serial._cmd_mode], _PREFIX[serial._data_mode]
    raw: list[bytes] = []
    for commands, payload in writes:
        if len(commands) > 32 or len(payload) >= MAX_MESSAGE_BYTES:
            return False             # luma's limits: let its own calls split or refuse
        raw.append(command + commands)
        if payload:
            raw.append(data + payload)
    for start in range(0, len(raw), MAX_MESSAGES):
        _transfer(bus, serial._addr, raw[start:start + MAX_MESSAGES])
    return True


def _transfer(bus: Any, address: int, raw: Sequence[bytes]) -> None:
    """One `I2C_RDWR` ioctl of `raw`'s write messages to `address`: straight to the kernel when
    `bus` is smbus2's own `SMBus` (what its `i2c_rdwr` does, without copying the messages into
    a second array), else through the bus's `i2c_rdwr` (a stand-in with its own)."""
    messages, buffer = _messages(address, raw)
    if getattr(type(bus), "i2c_rdwr", None) is _OWN_RDWR:
        _smbus2.ioctl(bus.fd, _smbus2.I2C_RDWR,  # type: ignore[attr-defined]
                      _smbus2.i2c_rdwr_ioctl_data(msgs=messages, nmsgs=len(raw)))
    else:
        bus.i2c_rdwr(*messages)
    del buffer                      # (alive until here: the messages point into it)

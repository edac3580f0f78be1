"""A fake kernel under luma's managed I²C serial: both panels' serials over one fake smbus2 bus,
and a write transaction decoded as the panel's controller takes it."""

from __future__ import annotations

from typing import Any

import smbus2
from luma.core.interface.serial import i2c as luma_i2c

from gammonclock.hardware.i2c_emulator import ControllerMemory
from gammonclock.sides import Pair


def serials_on(bus: Any) -> Pair[Any]:
    """luma's `i2c` serials of the left (0x3C) and the right (0x3D) panel, both over `bus` (what
    `smbus2.SMBus(port)` returns while they are made)."""
    saved = smbus2.SMBus
    smbus2.SMBus = lambda port: bus
    try:
        return Pair(luma_i2c(port=1, address=0x3C), luma_i2c(port=1, address=0x3D))
    finally:
        smbus2.SMBus = saved


def decode_write(memory: ControllerMemory, raw: bytes) -> None:
    """One write transaction to a controller: a 0x00 control byte then commands, or 0x40 then
    display data."""
    if raw[0] == 0x00:
        memory.command(raw[1:])
    else:
        assert raw[0] == 0x40
        memory.data(raw[1:])

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
import threading
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


def _fields(items: Sequence[tuple[int, bytes]], at: int) -> list[int]:
    """The `i2c_msg` fields of one write message per (address, bytes) of `items`, their bytes
    one after the other from address `at`."""
    fields: list[int] = []
    for address, raw in items:
        fields += (address, 0, len(raw), at)
        at += len(raw)
    return fields


def _messages(items: Sequence[tuple[int, bytes]]) -> tuple[Any, Any]:
    """The `i2c_msg` array of one write message per (address, bytes) of `items`, and the one
    buffer holding all their bytes (keep both alive until the ioctl returns): two allocations
    and one packing, where smbus2's `i2c_msg.write` makes a buffer and a structure a message."""
    blob = b"".join([raw for _, raw in items])
    buffer = ctypes.create_string_buffer(blob, len(blob))
    array_type, layout = _layout(len(items))
    array = array_type()
    layout.pack_into(array, 0, *_fields(items, ctypes.addressof(buffer)))
    return array, buffer


def send_windows(serial: Any, writes: Sequence[tuple[bytes, bytes]]) -> bool:
    """Send each (commands, data) of `writes` through luma's managed i2c `serial` in as few
    `I2C_RDWR` ioctls as the kernel takes; False, sending nothing, when `serial` is not one
    (an emulator, luma's unmanaged bus: the caller sends through `command` and `data`)."""
    bus: Any = getattr(serial, "_bus", None)
    if not getattr(serial, "_managed", False) or not hasattr(bus, "i2c_rdwr"):
        return False
    command, data = _PREFIX[serial._cmd_mode], _PREFIX[serial._data_mode]
    address = serial._addr
    items: list[tuple[int, bytes]] = []
    for commands, payload in writes:
        if len(commands) > 32 or len(payload) >= MAX_MESSAGE_BYTES:
            return False             # luma's limits: let its own calls split or refuse
        items.append((address, command + commands))
        if payload:
            items.append((address, data + payload))
    batch: Batch | None = getattr(_gathering, "batch", None)
    if batch is not None:
        batch.add(bus, items)
        return True
    _transfer_all(bus, items)
    return True


def _transfer_all(bus: Any, items: Sequence[tuple[int, bytes]]) -> None:
    """`_transfer` of `items` in as few ioctls as the kernel takes (`MAX_MESSAGES` each)."""
    for start in range(0, len(items), MAX_MESSAGES):
        _transfer(bus, items[start:start + MAX_MESSAGES])


def _transfer(bus: Any, items: Sequence[tuple[int, bytes]]) -> None:
    """One `I2C_RDWR` ioctl of a write message per (address, bytes) of `items`: straight to the
    kernel when `bus` is smbus2's own `SMBus` (what its `i2c_rdwr` does, without copying the
    messages into a second array), else through the bus's `i2c_rdwr` (a stand-in's own)."""
    if getattr(type(bus), "i2c_rdwr", None) is not _OWN_RDWR:
        messages, buffer = _messages(items)
        bus.i2c_rdwr(*messages)
        del buffer                  # (alive until here: the messages point into it)
        return
    scratch: _Scratch = _scratch
    blob = b"".join([raw for _, raw in items])
    if len(blob) <= SCRATCH_BYTES and len(items) <= MAX_MESSAGES:
        # The thread's own buffers, made once: the bytes copied in, the messages packed over
        # the array the ioctl's argument already points at.
        scratch.blob[:len(blob)] = blob
        _layout(len(items))[1].pack_into(scratch.messages, 0,
                                         *_fields(items, scratch.address))
        scratch.request.nmsgs = len(items)
        _smbus2.ioctl(bus.fd, _smbus2.I2C_RDWR, scratch.request)  # type: ignore[attr-defined]
        return
    messages, buffer = _messages(items)       # more than the scratch holds (never a press)
    _smbus2.ioctl(bus.fd, _smbus2.I2C_RDWR,  # type: ignore[attr-defined]
                  _smbus2.i2c_rdwr_ioctl_data(msgs=messages, nmsgs=len(items)))
    del buffer


SCRATCH_BYTES = 4096          # a thread's buffer: both panels' full frames fit (2 × 1 030)


class _Scratch(threading.local):
    """A thread's buffers for its ioctls (each bus writer sends on its own thread): the
    messages' bytes, the `i2c_msg` array and the ioctl's argument pointing at it, made once
    instead of three ctypes objects an ioctl."""

    def __init__(self) -> None:
        self.blob = bytearray(SCRATCH_BYTES)
        # Exported to ctypes for good: the bytearray can never be resized (nor moved).
        self._view = (ctypes.c_char * SCRATCH_BYTES).from_buffer(self.blob)
        self.address = ctypes.addressof(self._view)
        self.messages = (_smbus2.i2c_msg * MAX_MESSAGES)()
        self.request = _smbus2.i2c_rdwr_ioctl_data(msgs=self.messages, nmsgs=0)


_scratch = _Scratch()


# --- several frames in one ioctl -----------------------------------------------------------------

_gathering = threading.local()


class Batch:
    """The frames of several panels on one I²C bus in one `I2C_RDWR` ioctl (its bus writer's,
    when both panels' frames of a press wait): while `gather`ing, `send_windows` on this thread
    queues its messages, each for the `owner` set then; `send` carries them in one ioctl when
    they fit in one (`MAX_MESSAGES`), else each owner's in its own. Every panel has a file of
    its own on the bus (luma opens one per device); an `I2C_RDWR` message carries its own
    address, so the first panel's file carries them all.

    A controller that does not acknowledge fails the whole ioctl (the kernel stops at the
    message it refused): then each owner's messages are sent again alone (the windows hold the
    same bytes: sending one twice changes nothing), so that an unplugged panel never keeps the
    other one from its frames; `send` returns the owners that failed alone, with the error."""

    def __init__(self) -> None:
        self.owner: object = None
        self._queued: list[tuple[object, Any, list[tuple[int, bytes]]]] = []

    def gather(self) -> Batch:
        """`with batch.gather():` queues this thread's `send_windows` in the batch (a context
        manager of its own rather than `contextlib`'s generator: one press, fewer calls)."""
        return self

    def __enter__(self) -> Batch:
        _gathering.batch = self
        return self

    def __exit__(self, *exc: object) -> None:
        _gathering.batch = None

    def add(self, bus: Any, items: list[tuple[int, bytes]]) -> None:
        self._queued.append((self.owner, bus, items))

    def send(self) -> list[tuple[object, Exception]]:
        """Carry what was queued; the owners whose messages failed, and why."""
        queued, self._queued = self._queued, []
        failed: list[tuple[object, Exception]] = []
        together = [item for _, _, items in queued for item in items]
        if len(queued) > 1 and len(together) <= MAX_MESSAGES:
            try:
                # On the first owner's bus: every panel of a batch is on the writer's bus, and
                # an I2C_RDWR message names its own address (whichever file it goes through).
                _transfer(queued[0][1], together)
                return failed
            except Exception:   # noqa: BLE001 - each owner's alone says whose it was
                pass
        for owner, bus, items in queued:
            try:
                _transfer_all(bus, items)
            except Exception as exc:   # noqa: BLE001 - the owner's failure, reported
                failed.append((owner, exc))
        return failed

"""A stand-in for an I²C bus with OLED controllers on it: what the panels cost and what they hold.

`EmulatedI2C` has the interface luma's `serial.i2c` gives its devices (`command(*cmd)`,
`data(list)`, `cleanup()`), so the real luma drivers and `partial.py`'s devices run on it
unchanged. It does two things a real bus does:

- **It takes time.** Every byte costs 9 clock periods (8 bits and the acknowledge) at the
  `EmulatedBus`'s speed; every transaction also costs its address byte, the control byte luma
  sends first (0x00 commands, 0x40 data) and START + STOP + the bus-free time, counted as 3
  further clock periods: `TRANSACTION_OVERHEAD_CLOCKS` = 21 in all. luma's managed `i2c` (the one
  `Panel.from_config` builds, on smbus2) sends a `command()` and a `data()` of up to 4 096 bytes
  as one transaction each; that is what is charged. Clock stretching, the kernel's ioctl and
  Python's own time are not charged here (they show in a benchmark's measured figures instead).
  The bus sleeps for that long (`sleep=True`, for benchmarks on a real writer thread) or only
  counts it (`sleep=False`, for tests).
- **It keeps the controller's memory.** `SSD1306Memory` (128 columns × 8 pages, horizontal and
  page addressing, the column/page window of 0x21/0x22) and `SH1106Memory` (132 columns × 8 pages,
  page addressing only) decode the command stream the way the datasheets say, so a test can
  compare what the glass would show with the frame that was meant.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from PIL import Image

BITS_PER_BYTE_CLOCKS = 9                 # 8 data bits + the acknowledge
TRANSACTION_OVERHEAD_CLOCKS = 2 * BITS_PER_BYTE_CLOCKS + 3   # address + control byte, START/STOP
PAGES = 8                                # 64 rows of 8 pixels
SH1106_COLUMNS = 132                     # the SH1106's RAM is wider than the 128-pixel glass

# Commands with argument bytes (the datasheets' "double byte" and longer commands). Everything
# else is one byte. A stream decoded with the wrong table would take an argument for a command.
SSD1306_ARGUMENTS = {0x20: 1, 0x21: 2, 0x22: 2, 0x26: 6, 0x27: 6, 0x29: 5, 0x2A: 5, 0x81: 1,
                     0x8D: 1, 0xA3: 2, 0xA8: 1, 0xD3: 1, 0xD5: 1, 0xD9: 1, 0xDA: 1, 0xDB: 1}
# The SH1106 has no 0x20/0x21/0x22; luma's sh1106 still sends 0x8D 0x14 (a charge pump of the
# SSD1306's), read here as one command so that 0x14 is not taken for a column address.
SH1106_ARGUMENTS = {0x81: 1, 0x8D: 1, 0xA8: 1, 0xAD: 1, 0xD3: 1, 0xD5: 1, 0xD9: 1, 0xDA: 1,
                    0xDB: 1}


def transaction_clocks(payload_bytes: int) -> int:
    """Clock periods one write transaction of `payload_bytes` (after the control byte) takes."""
    return TRANSACTION_OVERHEAD_CLOCKS + BITS_PER_BYTE_CLOCKS * payload_bytes


def _split(commands: Sequence[int], arguments: dict[int, int]) -> list[tuple[int, ...]]:
    """A command stream as (command, *arguments) tuples."""
    out: list[tuple[int, ...]] = []
    i = 0
    while i < len(commands):
        n = arguments.get(commands[i], 0)
        out.append(tuple(commands[i:i + 1 + n]))
        i += 1 + n
    return out


class _PageRam:
    """What both controllers share: `columns` × 8 pages of RAM, an address pointer, and page
    addressing's commands (0xB0+page, the column's low nibble 0x0n and high nibble 0x1n, of
    which the SSD1306 reads 3 bits and the SH1106 4)."""

    columns: int
    high_nibble_mask: int

    def __init__(self) -> None:
        self.ram = [bytearray(self.columns) for _ in range(PAGES)]
        self.column = 0
        self.page = 0

    def _page_addressing(self, command: int) -> None:
        if 0xB0 <= command <= 0xB7:
            self.page = command & 0x07
        elif command <= 0x0F:
            self.column = (self.column & 0xF0) | command
        elif command <= 0x1F:
            self.column = (self.column & 0x0F) | ((command & self.high_nibble_mask) << 4)


class SSD1306Memory(_PageRam):
    """The SSD1306's (and SSD1309's) graphic RAM and address pointer."""

    columns = 128
    high_nibble_mask = 0x07

    def __init__(self) -> None:
        super().__init__()
        self.mode = 2                    # page addressing after reset (luma sets horizontal)
        self.column_window = (0, self.columns - 1)
        self.page_window = (0, PAGES - 1)

    def command(self, commands: Sequence[int]) -> None:
        for command, *args in _split(commands, SSD1306_ARGUMENTS):
            if command == 0x20 and args:
                self.mode = args[0] & 0x03
            elif command == 0x21 and len(args) == 2:
                self.column_window = (args[0] & 0x7F, args[1] & 0x7F)
                self.column = self.column_window[0]
            elif command == 0x22 and len(args) == 2:
                self.page_window = (args[0] & 0x07, args[1] & 0x07)
                self.page = self.page_window[0]
            else:
                self._page_addressing(command)

    def data(self, data: Sequence[int]) -> None:
        for byte in data:
            self.ram[self.page][self.column] = byte
            self._advance()

    def _advance(self) -> None:
        first_column, last_column = self.column_window
        if self.mode == 2:                       # page mode: wraps within the page
            self.column = 0 if self.column >= self.columns - 1 else self.column + 1
            return
        if self.mode == 1:                       # vertical mode: down the page window first
            if self.page < self.page_window[1]:
                self.page += 1
                return
            self.page = self.page_window[0]
            self.column = first_column if self.column >= last_column else self.column + 1
            return
        if self.column < last_column:            # horizontal mode
            self.column += 1
            return
        self.column = first_column
        self.page = self.page_window[0] if self.page >= self.page_window[1] else self.page + 1

    def pages(self) -> list[bytes]:
        """What the glass shows, page by page (128 bytes each)."""
        return [bytes(page) for page in self.ram]


class SH1106Memory(_PageRam):
    """The SH1106's 132-column RAM; the 128-pixel glass shows it from column `offset` on."""

    columns = SH1106_COLUMNS
    high_nibble_mask = 0x0F

    def __init__(self, offset: int = 2) -> None:
        super().__init__()
        self.offset = offset

    def command(self, commands: Sequence[int]) -> None:
        for command, *_ in _split(commands, SH1106_ARGUMENTS):
            self._page_addressing(command)

    def data(self, data: Sequence[int]) -> None:
        for byte in data:
            if self.column < self.columns:       # past the last column the writes are lost
                self.ram[self.page][self.column] = byte
            self.column += 1

    def pages(self) -> list[bytes]:
        return [bytes(page[self.offset:self.offset + 128]) for page in self.ram]


ControllerMemory = SSD1306Memory | SH1106Memory


def memory_for(driver: str) -> ControllerMemory:
    """The controller memory of a luma driver's name (ssd1306, ssd1309, sh1106)."""
    return SH1106Memory() if driver == "sh1106" else SSD1306Memory()


def image_of(pages: Sequence[bytes]) -> Image.Image:
    """The 128×64 picture that `pages` light (bit i of a page's byte is row 8·page + i)."""
    image = Image.new("1", (len(pages[0]), 8 * len(pages)), 0)
    pixels = image.load()
    assert pixels is not None
    for p, page in enumerate(pages):
        for x, byte in enumerate(page):
            for bit in range(8):
                if byte >> bit & 1:
                    pixels[x, 8 * p + bit] = 255
    return image


@dataclass
class Transaction:
    """One write on the bus: when it ended (the bus's clock), for whom, how many bytes."""

    end: float
    address: int
    payload: int
    busy: float


@dataclass
class EmulatedBus:
    """One I²C bus: a speed, a lock (one transaction at a time), a log of what it carried.

    `clock` is the bus's time in seconds (time.perf_counter by default). With `sleep`, every
    transaction blocks its caller for its duration, as the kernel's I²C write does (and, like it,
    without holding Python's GIL); without, the bus only counts.
    """

    speed_hz: int = 400_000
    sleep: bool = True
    clock: Callable[[], float] = time.perf_counter
    transactions: list[Transaction] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def seconds(self, payload_bytes: int) -> float:
        return transaction_clocks(payload_bytes) / self.speed_hz

    def carry(self, address: int, payload_bytes: int) -> None:
        """Charge one transaction of `payload_bytes` to `address`."""
        busy = self.seconds(payload_bytes)
        with self._lock:
            start = self.clock()
            if self.sleep:
                end = start + busy
                while (left := end - self.clock()) > 0:
                    time.sleep(left)
            self.transactions.append(Transaction(self.clock() if self.sleep else start + busy,
                                                 address, payload_bytes, busy))

    def total_bytes(self) -> int:
        """Bytes on the wire: payload, control and address bytes."""
        return sum(t.payload + 2 for t in self.transactions)

    def busy_seconds(self) -> float:
        return sum(t.busy for t in self.transactions)


class EmulatedI2C:
    """luma's serial interface on an `EmulatedBus`, with the controller memory at `address`.

    `fail` (for tests) is asked before every transaction; an exception it returns is raised as
    luma's `i2c` raises a bus error.
    """

    def __init__(self, bus: EmulatedBus, memory: ControllerMemory, address: int = 0x3C,
                 fail: Callable[[], Exception | None] | None = None) -> None:
        self.bus = bus
        self.memory = memory
        self.address = address
        self.fail = fail
        self.commands = 0
        self.data_bytes = 0
        self.closed = False

    def _check(self) -> None:
        error = self.fail() if self.fail else None
        if error is not None:
            raise error

    def command(self, *cmd: int) -> None:
        assert len(cmd) <= 32, "luma's i2c sends at most 32 command bytes at once"
        self._check()
        self.bus.carry(self.address, len(cmd))
        self.memory.command(cmd)
        self.commands += 1

    def data(self, data: Sequence[int]) -> None:
        for start in range(0, len(data), 4096):      # luma's managed i2c: 4 KiB a transaction
            block = data[start:start + 4096]
            self._check()
            self.bus.carry(self.address, len(block))
            self.memory.data(block)
            self.data_bytes += len(block)

    def cleanup(self) -> None:
        self.closed = True

"""luma's OLED drivers sending only what changed: the pages and columns that differ from the glass.

luma.oled's `ssd1306.display()` (and `sh1106`'s) sends the whole 1 024-byte frame on every update,
where a running clock changes 10–36 bytes. These subclasses keep the bytes last sent (what the
controller holds) and send the changed rectangle through the controller's own addressing:

- SSD1306/SSD1309 (horizontal addressing, which luma's set-up selects): set column address 0x21
  and set page address 0x22 open a window, and the data fills it column by column, page by page.
  Each run of changed bytes gets a window; neighbouring ones share one when that costs fewer
  bytes (a running clock's digits: one window; an arrow at the left and a badge at the right of
  the same rows: two). A window of one page is addressed in page addressing instead (3 command
  bytes, not 6; the mode switched at most once a frame).
- SH1106 (page addressing only): per run of changed bytes, 0xB0+page and the column's low and
  high nibble (0x0n, 0x1n), counted from its 2-column offset in the 132-column RAM; the bytes.

A frame comes as a PIL image (`display`) or already in the controller's bytes (`display_pages`:
what `compose.Picture` gives, no transposing); a frame's windows leave in one `I2C_RDWR` ioctl
on luma's managed I²C serial (`i2c_rdwr.py`), each a transaction of its own.

A full frame is sent instead after the device was (re)opened, after `invalidate()` (the panel
asks for it at a burn-in move), and when most of the frame changed (a new screen: a window per
page would cost about as much, and a full frame leaves nothing to doubt). `stale_all()` marks the
whole glass for rewriting in small pieces (`rewrite_step()`), which the bus writer does while the
bus is otherwise idle, so that a byte a glitch corrupted cannot stay on the glass.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from functools import cache, lru_cache
from typing import TYPE_CHECKING, Any

from luma.oled import device as oled  # type: ignore[import-untyped]
from PIL import Image

from . import i2c_rdwr

PAGE_ROWS = 8
COMMAND_OVERHEAD = 3       # a transaction: address byte, control byte, START/STOP (≈ 1 byte)
FULL_SHARE = 0.5           # a plan costing more than this share of a full frame sends a full one
GREEDY_WINDOWS = 16        # more changed runs than this: merged per page before the search
REWRITE_COLUMNS = 32       # a rewrite piece: 32 columns of one page (≈ 3.7 ms at 100 kHz)

# A byte with its bits in the opposite order (a page's column upside down).
REVERSED_BITS = bytes(int(f"{b:08b}"[::-1], 2) for b in range(256))

Pages = list[bytes]
Span = tuple[int, int]                # first and last column, inclusive


def page_bytes(image: Image.Image) -> Pages:
    """The controller's bytes of a mode-"1" picture: one bytes object of `width` per page."""
    pages = image.height // PAGE_ROWS
    # Packed with the bits reversed ("1;R": the first pixel in bit 0), as the controller reads
    # a column: no translation table pass.
    columns = image.transpose(Image.Transpose.TRANSPOSE).tobytes("raw", "1;R")
    return [columns[p::pages] for p in range(pages)]


@cache
def _runs_pattern(gap: int) -> re.Pattern[bytes]:
    """A run of differing bytes (non-zero in the XOR of two pages) and those that follow it
    with at most `gap` - 1 equal ones between: one run (sending those costs less)."""
    return re.compile(rb"[^\x00](?:\x00{0,%d}[^\x00])*" % (gap - 1))


def changed_runs(old: bytes, new: bytes, gap: int) -> list[Span]:
    """The column runs where `old` and `new` differ; runs closer than `gap` unchanged bytes are
    one run (sending the bytes between costs less than another window)."""
    if old == new:
        return []
    if len(old) != len(new):
        raise ValueError(f"pages of {len(old)} and {len(new)} bytes")
    # The XOR of the two pages, in C: its non-zero bytes are the differing columns.
    diff = (int.from_bytes(old, "little") ^ int.from_bytes(new, "little")).to_bytes(
        len(new), "little")
    if gap < 1:                          # every differing column its own run
        return [(c, c) for c, byte in enumerate(diff) if byte]
    return [(m.start(), m.end() - 1) for m in _runs_pattern(gap).finditer(diff)]


def changed_page_runs(old: Pages, new: Pages, gap: int) -> list[list[Span]]:
    """`changed_runs` of every page (the pages that are equal cost a comparison)."""
    if len(old) != len(new):
        raise ValueError(f"frames of {len(old)} and {len(new)} pages")
    return [[] if a == b else changed_runs(a, b, gap) for a, b in zip(old, new, strict=True)]


def frame_runs(old: bytes, new: bytes, width: int, gap: int) -> list[list[Span]]:
    """`changed_page_runs` of two frames given whole (page-major, `width` bytes a page), found
    in C: one XOR of the frames, then from each run's first differing byte the next `gap`
    equal ones (`bytes.find`) end it, and the next differing byte starts the next (`lstrip`);
    no scan a byte at a time in Python or in the regular expression engine."""
    if len(old) != len(new) or len(new) % width:
        raise ValueError(f"frames of {len(old)} and {len(new)} bytes, pages of {width}")
    return _diff_runs(int.from_bytes(old, "little") ^ int.from_bytes(new, "little"),
                      old, new, width, gap)


def _diff_runs(xor: int, old: bytes, new: bytes, width: int, gap: int) -> list[list[Span]]:
    """`frame_runs` given the XOR of the two frames as integers (the driver keeps the glass's)."""
    size = len(new)
    runs: list[list[Span]] = [[] for _ in range(size // width)]
    if gap < 1:                          # every differing column its own run
        for column, byte in enumerate(xor.to_bytes(size, "little") if xor else b""):
            if byte:
                runs[column // width].append((column % width, column % width))
        return runs
    spans = _diff_spans(xor, width, gap)
    if spans is None:                    # a run over a page's end: page by page
        return [changed_runs(old[p:p + width], new[p:p + width], gap)
                for p in range(0, size, width)]
    for page, first, last in spans:
        runs[page].append((first, last))
    return runs


PageSpan = tuple[int, int, int]       # page, first and last column


def _diff_spans(xor: int, width: int, gap: int) -> list[PageSpan] | None:
    """The runs of `_diff_runs` (`gap` ≥ 1) in order, each with its page; None when one runs
    over a page's end."""
    spans: list[PageSpan] = []
    if not xor:
        return spans
    # Only the span from the first differing byte to the last is scanned: its ends are the
    # integer's lowest and highest set bits (a strip over the equal bytes around a press's few
    # changed ones cost more than the rest of the plan).
    start = ((xor & -xor).bit_length() - 1) >> 3
    size = ((xor.bit_length() + 7) >> 3) - start
    diff = (xor >> 8 * start).to_bytes(size, "little")
    equal = bytes(gap)
    first = 0
    while True:
        after = diff.find(equal, first)          # the gap that ends the run (none: the end)
        last = start + (after if after >= 0 else size) - 1
        page = (start + first) // width
        if last // width != page:
            return None
        spans.append((page, start + first - page * width, last - page * width))
        if after < 0:
            return spans
        # The next differing byte: one follows the gap (the span ends on one).
        first = size - len(diff[after + gap:].lstrip(b"\0"))


Window = tuple[int, int, Span]        # first page, last page, columns


def window_cost(window: Window, command_bytes: int, one_page_bytes: int | None = None) -> int:
    """Bytes on the bus of one window: its command (`one_page_bytes` for a window of one page
    when it is addressed apart: the SSD1306's page addressing), its data, two transactions'
    overhead."""
    first, last, (left, right) = window
    command = one_page_bytes if one_page_bytes is not None and first == last else command_bytes
    return command + 2 * COMMAND_OVERHEAD + (last - first + 1) * (right - left + 1)


def merged_windows(runs: Sequence[Sequence[Span]], command_bytes: int,
                   one_page_bytes: int | None = None) -> list[Window]:
    """The changed runs of every page as windows, neighbouring ones merged into their bounding
    window while that costs fewer bytes than sending them apart (greedy: the best merge first;
    `window_cost`'s command bytes)."""
    windows: list[Window] = [(p, p, run) for p, page in enumerate(runs) for run in page]
    if len(windows) <= 1:
        return windows
    if len(windows) > GREEDY_WINDOWS:
        # The greedy search costs the cube of the windows (72 one-byte runs in stripes: a
        # quarter of a second here, seconds on a Pi, holding the GIL): each page's runs become
        # their page's bounding run first, at most a window a page to merge.
        windows = [(p, p, (page[0][0], page[-1][1])) for p, page in enumerate(runs) if page]
    while True:
        best: tuple[int, int, int, Window] | None = None
        for i, a in enumerate(windows):
            for j in range(i + 1, len(windows)):
                b = windows[j]
                if b[0] > a[1] + 1 or a[0] > b[1] + 1:
                    continue                      # not on touching pages
                merged = (min(a[0], b[0]), max(a[1], b[1]),
                          (min(a[2][0], b[2][0]), max(a[2][1], b[2][1])))
                saving = (window_cost(a, command_bytes, one_page_bytes)
                          + window_cost(b, command_bytes, one_page_bytes)
                          - window_cost(merged, command_bytes, one_page_bytes))
                if saving > 0 and (best is None or saving > best[0]):
                    best = (saving, i, j, merged)
        if best is None:
            return sorted(windows)
        _, i, j, merged = best
        windows = [w for k, w in enumerate(windows) if k not in (i, j)] + [merged]


PLANS_CACHED = 1024        # plans kept: a press changes the same few cells every time


@lru_cache(maxsize=PLANS_CACHED)
def _cheapest_plan(spans: tuple[PageSpan, ...], pages: int, frame_bytes: int, command_bytes: int,
                   one_page_bytes: int | None, merge: bool) -> tuple[Window, ...] | None:
    """The windows to send for the changed `spans` (each run with its page) of a frame, or None
    when a full frame is the better choice (`FULL_SHARE`). Kept by its arguments: a press
    changes the same cells (the turn markers, a delay's digits) at every turn, so the search
    runs once per shape of change, not once per frame."""
    full = FULL_SHARE * frame_bytes
    if sum(last - first + 1 for _, first, last in spans) > full:
        return None           # the changed bytes alone cost more than the share: no search
    if merge:
        runs: list[list[Span]] = [[] for _ in range(pages)]
        for page, first, last in spans:
            runs[page].append((first, last))
        plan = merged_windows(runs, command_bytes, one_page_bytes)
    else:
        plan = [(page, page, (first, last)) for page, first, last in spans]
    cost = sum(window_cost(w, command_bytes, one_page_bytes) for w in plan)
    return None if cost > full else tuple(plan)


class PartialUpdates:
    """The part shared by the drivers: the bytes on the glass, the plan, the counters.

    A mixin before the luma driver class: luma's constructor already calls `display()` (to clear
    the panel), so the attributes start as class attributes.
    """

    _held: bytes | None = None               # the bytes the controller holds, as last sent
                                             # (page-major, `width` a page)
    _held_value = 0                          # and as an integer (little-endian)
    _stale: tuple[tuple[int, int], ...] = ()  # (page, first column) pieces still to rewrite
    full_frames = 0
    partial_frames = 0
    bytes_sent = 0                           # payload bytes of display() and rewrite_step()

    # provided by luma's device / the driver
    _serial_interface: Any
    rotate: int
    mode: str
    size: tuple[int, int]
    width: int

    def _after_init(self) -> None:
        # The set-up cleared the panel with a full frame; the first picture is full too.
        self._held = None
        self.full_frames = self.partial_frames = self.bytes_sent = 0

    def invalidate(self) -> None:
        """Send the next frame whole (a burn-in move, a doubt about the glass)."""
        self._held = None

    def stale_all(self) -> None:
        """Mark the whole glass for rewriting, piece by piece, by `rewrite_step`."""
        if self._held is not None:
            self._stale = tuple((p, c) for p in range(len(self._held) // self.width)
                                for c in range(0, self.width, REWRITE_COLUMNS))

    @property
    def rewriting(self) -> bool:
        """Whether pieces of the glass are still waiting to be rewritten."""
        return bool(self._stale) and self._held is not None

    def rewrite_step(self) -> bool:
        """Rewrite one piece of the glass with the bytes it should hold; whether more remain."""
        if not self.rewriting:
            return False
        assert self._held is not None
        (page, first), *rest = self._stale
        last = min(first + REWRITE_COLUMNS, self.width) - 1
        # Dropped before the write: a failing write must not be retried forever.
        self._stale = tuple(rest)
        self._send(self._held, [(page, page, (first, last))])
        return bool(rest)

    def display(self, image: Image.Image) -> None:
        assert image.mode == self.mode
        assert image.size == self.size
        self._display(b"".join(page_bytes(self.preprocess(image))))

    def display_pages(self, frame: bytes) -> None:
        """`display` for a frame already in the controller's bytes, page-major (what
        `compose.Picture.pages_at` gives). Upside down (`rotate` 2, what `preprocess` does to
        an image): the last byte first, each byte's bits reversed (its rows bottom up)."""
        assert len(frame) == self.width * self.size[1] // PAGE_ROWS
        if self.rotate == 2:
            frame = frame[::-1].translate(REVERSED_BITS)
        elif self.rotate != 0:
            raise ValueError(f"rotate {self.rotate}: the frame's bytes are landscape")
        self._display(frame)

    def _display(self, frame: bytes) -> None:
        held, self._held = self._held, None      # unknown while the write is under way
        value = int.from_bytes(frame, "little")
        plan = None if held is None else self._plan(held, frame, self._held_value ^ value)
        if plan is None:
            self._send_full(frame)
            self.full_frames += 1
            self._stale = ()
        elif plan:
            self._send(frame, plan)
            self.partial_frames += 1
        self._held, self._held_value = frame, value

    def _plan(self, held: bytes, frame: bytes, xor: int) -> Sequence[Window] | None:
        """The windows to send, or None when a full frame is the better choice (`xor`: the
        two frames' integers XORed)."""
        if not xor:
            return []
        # What another window on the page costs.
        gap = (self.one_page_bytes or self.command_bytes) + 2 * COMMAND_OVERHEAD
        spans = _diff_spans(xor, self.width, gap)
        if spans is None:        # a run over a page's end (none in the clock's screens)
            runs = _diff_runs(xor, held, frame, self.width, gap)
            spans = [(p, first, last) for p, page in enumerate(runs) for first, last in page]
        return _cheapest_plan(tuple(spans), len(frame) // self.width, len(frame),
                              self.command_bytes, self.one_page_bytes, self.merges_windows)

    command_bytes = 6
    one_page_bytes: int | None = None      # a one-page window's command, when it differs
    merges_windows = True                  # neighbouring runs share a window when cheaper

    def _transmit(self, writes: list[tuple[bytes, bytes]]) -> None:
        """Each (commands, data) pair to the controller: on luma's managed I²C serial, all of
        them in one `I2C_RDWR` ioctl (`i2c_rdwr.send_windows`); on another serial (an emulator),
        through its `command` and `data`."""
        if not i2c_rdwr.send_windows(self._serial_interface, writes):
            for command, payload in writes:
                self.command(*command)
                self.data(list(payload))

    def _send(self, frame: bytes, plan: Sequence[Window]) -> None:
        raise NotImplementedError

    def _send_full(self, frame: bytes) -> None:
        raise NotImplementedError

    if TYPE_CHECKING:   # luma's device provides these (declared here only for the type checker)
        def preprocess(self, image: Image.Image) -> Image.Image: ...
        def command(self, *cmd: int) -> None: ...
        def data(self, data: Any) -> None: ...


class _WindowAddressing(PartialUpdates):
    """SSD1306/SSD1309: one column/page window per group of changed pages.

    A window of several pages is opened in horizontal addressing (luma's set-up: 0x21 first
    last, 0x22 first last: 6 bytes); a window of one page in page addressing (0xB0+page, the
    column's low and high nibble: 3 bytes; the datasheets' "Set Memory Addressing Mode" 0x20,
    0x02 page / 0x00 horizontal). A frame sends the windows of the mode the controller is in
    first, then switches (2 bytes) at most once for the others: ≥ 1 byte saved a one-page window
    even when it needs the switch. Full frames and the rewrite's pieces go the same way."""

    _colstart: int
    _page_mode = False         # the controller's mode as last sent (luma's set-up: horizontal)

    command_bytes = 6          # 0x21 first last 0x22 first last
    one_page_bytes = 3         # 0xB0+page, low nibble, high nibble

    def _after_init(self) -> None:
        super()._after_init()
        self._page_mode = False

    def _send(self, frame: bytes, plan: Sequence[Window]) -> None:
        writes: list[tuple[bytes, bytes]] = []
        width, colstart = self.width, self._colstart
        one_page = [w for w in plan if w[0] == w[1]]
        several = [w for w in plan if w[0] != w[1]]
        groups = ((True, one_page), (False, several))
        for page_mode, windows in groups if self._page_mode else groups[::-1]:
            if not windows:
                continue
            switch = b"" if page_mode == self._page_mode else (
                PAGE_MODE if page_mode else HORIZONTAL_MODE)
            self._page_mode = page_mode
            for first_page, last_page, (first, last) in windows:
                if page_mode:
                    column = colstart + first
                    command = switch + bytes((0xB0 + first_page, column & 0x0F,
                                              0x10 | column >> 4))
                    at = first_page * width
                    payload = frame[at + first:at + last + 1]
                else:
                    command = switch + bytes((0x21, colstart + first, colstart + last,
                                              0x22, first_page, last_page))
                    payload = b"".join(frame[p * width + first:p * width + last + 1]
                                       for p in range(first_page, last_page + 1))
                switch = b""
                writes.append((command, payload))
                self.bytes_sent += len(payload)
        self._transmit(writes)

    def _send_full(self, frame: bytes) -> None:
        self._send(frame, [(0, len(frame) // self.width - 1, (0, self.width - 1))])


PAGE_MODE = bytes((0x20, 0x02))         # Set Memory Addressing Mode: page
HORIZONTAL_MODE = bytes((0x20, 0x00))   # and horizontal (luma's set-up)


class _PageAddressing(PartialUpdates):
    """SH1106: page addressing only; each changed page gets its own address and bytes."""

    _page_address_offset: int

    command_bytes = 3          # 0xB0+page, low nibble, high nibble
    merges_windows = False     # every run its own address

    def _send(self, frame: bytes, plan: Sequence[Window]) -> None:
        writes: list[tuple[bytes, bytes]] = []
        width = self.width
        for page, _, (first, last) in plan:
            column = self._page_address_offset + first
            payload = frame[page * width + first:page * width + last + 1]
            writes.append((bytes((0xB0 + page, column & 0x0F, 0x10 | column >> 4)), payload))
            self.bytes_sent += len(payload)
        self._transmit(writes)

    def _send_full(self, frame: bytes) -> None:
        self._send(frame, [(p, p, (0, self.width - 1)) for p in range(len(frame) // self.width)])


class ssd1306(_WindowAddressing, oled.ssd1306):  # type: ignore[misc]
    """luma.oled's ssd1306, sending only the changed rectangle."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._after_init()


class ssd1309(_WindowAddressing, oled.ssd1309):  # type: ignore[misc]
    """luma.oled's ssd1309 (the ssd1306's command set), sending only the changed rectangle."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._after_init()


class sh1106(_PageAddressing, oled.sh1106):  # type: ignore[misc]
    """luma.oled's sh1106, sending only the changed columns of the changed pages."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._after_init()


DRIVERS: dict[str, Callable[..., PartialUpdates]] = {"ssd1306": ssd1306, "ssd1309": ssd1309,
                                            "sh1106": sh1106}

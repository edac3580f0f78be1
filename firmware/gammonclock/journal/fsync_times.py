"""How long the journal's syncs take (issue 24: the card's health): a bounded ring of one-minute
histograms, so the p99 over the last hour costs O(1) per sync and a fixed amount of memory
however many syncs an hour brings.

A sync is the `os.fdatasync` a press waits for (`JournalWriter._sync_data`): since issue 20 the
journal is appended into zeros filled ahead (`prealloc`), so it writes the record's data alone;
when no zeros are ahead (a fill failed, a full card) it also writes the file's new size. The
fill's own `fsync`, off the press path, is not timed here. (The module keeps its name from when
every sync was an `fsync`; so does the health message's key, `fsync_p99_ms`: hall/PROTOCOL.md.)

Each minute of the last `MINUTES` has a histogram of `BINS` logarithmic bins (4 per doubling,
from 1 µs up: a bin's upper edge is at most 19 % above any duration in it); a sync adds 1 to one
bin of the current minute's (a minute's histogram is cleared when the ring comes round to it
again). `p99_ms` sums the minutes within the hour and answers the upper edge of the bin that
holds the 99th percentile: never less than the true figure, at most 19 % more.

Written by the thread that writes the journal, read by the hall link's publisher: the counts are
plain ints under one lock (a sync already costs milliseconds; the lock, nanoseconds).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

MINUTES = 60
SUB_BINS = 4                    # per doubling of the duration
OCTAVES = 38                    # 1 µs .. 2**38 µs (~76 h): any sync fits
BINS = OCTAVES * SUB_BINS


def bin_of(micros: int) -> int:
    """The bin of a duration in µs: 4 per doubling, exact below 4 µs."""
    if micros < SUB_BINS:
        return max(0, micros)
    octave = micros.bit_length() - 1                   # 2**octave <= micros
    sub = (micros >> (octave - 2)) & (SUB_BINS - 1)    # the 2 bits below the top one
    return min(BINS - 1, octave * SUB_BINS + sub)


def upper_edge_us(index: int) -> int:
    """The largest duration (µs) bin `index` holds."""
    if index < 2 * SUB_BINS:
        return min(index, SUB_BINS - 1)     # bins 4..7 hold nothing (2 and 3 µs are exact)
    octave, sub = divmod(index, SUB_BINS)
    return ((SUB_BINS + sub + 1) << (octave - 2)) - 1


class SyncTimes:
    """The last hour's sync durations, as histograms per minute (module doc)."""

    def __init__(self, monotonic_ns: Callable[[], int] = time.monotonic_ns) -> None:
        self.monotonic_ns = monotonic_ns
        self._lock = threading.Lock()
        self._bins = [[0] * BINS for _ in range(MINUTES)]
        self._minute = [-1] * MINUTES          # which minute each slot holds now
        self.count = 0                         # syncs ever recorded (a figure for the card)

    def add(self, duration_ns: int) -> None:
        """One sync took `duration_ns`."""
        minute = self.monotonic_ns() // 60_000_000_000
        slot = minute % MINUTES
        index = bin_of(max(0, duration_ns) // 1000)
        with self._lock:
            if self._minute[slot] != minute:
                self._bins[slot] = [0] * BINS   # once a minute at most: O(1) amortised
                self._minute[slot] = minute
            self._bins[slot][index] += 1
            self.count += 1

    def p99_ms(self) -> float | None:
        """The 99th percentile of the last hour's syncs in ms (the upper edge of its bin), or
        None when there was none in the hour."""
        minute = self.monotonic_ns() // 60_000_000_000
        total = [0] * BINS
        with self._lock:
            for slot in range(MINUTES):
                if 0 <= minute - self._minute[slot] < MINUTES:
                    for i, n in enumerate(self._bins[slot]):
                        total[i] += n
        count = sum(total)
        if count == 0:
            return None
        wanted = count - count // 100      # the rank of the 99th percentile (1-based)
        seen = 0
        for i, n in enumerate(total):
            seen += n
            if seen >= wanted:
                return round(upper_edge_us(i) / 1000, 3)
        return None      # not reached: the counts add up to `count`

    def in_the_hour(self) -> int:
        """How many syncs the last hour's histograms hold."""
        minute = self.monotonic_ns() // 60_000_000_000
        with self._lock:
            return sum(sum(self._bins[slot]) for slot in range(MINUTES)
                       if 0 <= minute - self._minute[slot] < MINUTES)


# The process's journal writers record here (JournalWriter.sync_times); the health reader reads it.
SYNC_TIMES = SyncTimes()

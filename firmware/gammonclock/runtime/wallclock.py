"""Whether this device's wall clock was synchronised when a match started (issue 12): a Pi has no
real-time clock and often no network at a venue, so the wall-clock times in a journal may be
those of the last shutdown. The journal's header records what the system knew, and the report
shows it.

systemd-timesyncd (Raspberry Pi OS's time service) creates `/run/systemd/timesync/synchronized`
once the clock has been synchronised since boot; a system without it cannot say.
"""

from __future__ import annotations

from pathlib import Path

TIMESYNC = Path("/run/systemd/timesync")


def wall_clock_synchronized(timesync: Path = TIMESYNC) -> bool | None:
    """True once timesyncd synchronised the clock since boot, False while it has not, None
    when no time service here says (not systemd-timesyncd)."""
    try:
        if (timesync / "synchronized").exists():
            return True
        return False if timesync.is_dir() else None
    except OSError:
        return None

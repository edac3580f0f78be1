"""The table's health readers (issue 24) against a Pi 3's, a Pi 4's and a Pi 5's files and command
outputs (tests/data/health/README.md says what each holds), off a Pi, and the journal's sync
(fdatasync) durations (a bounded ring of per-minute histograms)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from gammonclock import __version__
from gammonclock.journal.fsync_times import BINS, MINUTES, SyncTimes, bin_of, upper_edge_us
from gammonclock.journal.records import GENESIS
from gammonclock.journal.writer import JournalWriter
from gammonclock.runtime.health import (
    NOT_A_PI,
    Backlog,
    FakeSystem,
    HostSystem,
    parse_throttled,
    read_health,
    read_sync,
    read_throttled,
)
from health_helpers import DATA, STATE, Clock, recorded


def health_of(board: str) -> dict[str, object]:
    times = SyncTimes(Clock())
    return read_health(recorded(board), STATE, sync_times=times,
                       backlog=lambda: Backlog(3, 0), at="2026-12-02T03:31:40.000Z").as_json()


# --- the three boards ----------------------------------------------------------------------------

def test_a_pi_3_that_sagged_since_boot_but_is_fine_now():
    h = health_of("pi3")
    assert h["pi"] == "Raspberry Pi 3 Model B Rev 1.2"
    assert h["throttled"] == {
        "raw": "0x50000", "under_voltage": False, "under_voltage_since_boot": True,
        "freq_capped": False, "freq_capped_since_boot": False,
        "throttled": False, "throttled_since_boot": True,
        "soft_temp_limit": False, "soft_temp_limit_since_boot": False}
    assert h["cpu_temp_c"] == 54.8
    assert h["clock"] == {"synchronized": True, "source": "systemd-timesyncd 10.0.0.2"}
    assert h["uptime_s"] == 86523
    assert h["disk"] == {"free_bytes": 3_100_000_000, "total_bytes": 29_800_000_000}
    assert h["version"] == __version__
    assert h["hall_backlog"] == {"records": 3, "journals": 0}


def test_a_healthy_pi_4_whose_clock_is_not_synchronised():
    h = health_of("pi4")
    assert h["pi"] == "Raspberry Pi 4 Model B Rev 1.4"
    throttled = h["throttled"]
    assert isinstance(throttled, dict) and throttled["raw"] == "0x0"
    assert not any(v for k, v in throttled.items() if k != "raw")
    assert h["cpu_temp_c"] == 47.7
    assert h["clock"] == {"synchronized": False, "source": "systemd-timesyncd 10.0.0.2"}
    assert h["uptime_s"] == 1234


def test_a_pi_5_under_voltage_now_read_from_vcgencmd_with_chrony():
    system = recorded("pi5")
    assert not any("get_throttled" in path for path in system.files)   # vcgencmd's, then
    h = health_of("pi5")
    throttled = h["throttled"]
    assert isinstance(throttled, dict)
    assert throttled["raw"] == "0x50005"
    assert throttled["under_voltage"] and throttled["under_voltage_since_boot"]
    assert throttled["throttled"] and throttled["throttled_since_boot"]
    assert not throttled["freq_capped"] and not throttled["soft_temp_limit"]
    assert h["cpu_temp_c"] == 61.5
    assert h["clock"] == {"synchronized": True, "source": "chrony 10.0.0.2"}


def test_the_words_of_a_pi_5():
    lines = read_health(recorded("pi5"), STATE, sync_times=SyncTimes(Clock())).lines()
    assert "supply and throttling: 0x50005: now under voltage, throttled; since boot under " \
           "voltage, throttled" in lines
    assert "CPU temperature: 61.5 °C" in lines
    assert "wall clock: synchronised by chrony 10.0.0.2" in lines
    assert "journal sync (fdatasync): unknown" in lines


# --- the readers' rules --------------------------------------------------------------------------

@pytest.mark.parametrize(("text", "raw"), [
    ("throttled=0x50005\n", 0x50005), ("50005\n", 0x50005), ("0\n", 0), ("throttled=0x0", 0),
    ("e0008", 0xE0008), ("throttled=0x80000", 0x80000)])
def test_both_forms_of_the_throttling_word_are_read(text, raw):
    found = parse_throttled(text)
    assert found is not None and found.raw == raw


@pytest.mark.parametrize("text", ["", "throttled=", "error=1 error_msg=\"x\"", "0x", "zz",
                                  "123456789"])
def test_anything_else_is_not_a_throttling_word(text):
    assert parse_throttled(text) is None


def test_sysfs_is_read_before_vcgencmd_and_another_soc_node_is_found():
    both = FakeSystem({"/sys/devices/platform/soc/soc:firmware/get_throttled": "4\n"},
                      {"vcgencmd get_throttled": "throttled=0x50005\n"})
    found = read_throttled(both)
    assert found is not None and found.raw == 4
    other = FakeSystem({"/sys/devices/platform/soc@107c000000/soc@107c000000:firmware/"
                        "get_throttled": "10000\n"})
    found = read_throttled(other)
    assert found is not None and found.since_boot("under_voltage")
    assert not found.now("under_voltage")
    assert read_throttled(FakeSystem()) is None


def test_off_a_pi_the_pi_figures_say_not_a_pi_and_nothing_is_invented():
    # A PC has a thermal zone 0 and may have a vcgencmd-named script: neither is read.
    pc = FakeSystem({"/sys/class/thermal/thermal_zone0/temp": "38000\n",
                     "/proc/device-tree/model": "QEMU Virt Machine\0",
                     "/proc/uptime": "100.5 10.0\n"},
                    {"vcgencmd get_throttled": "throttled=0x50005\n"})
    health = read_health(pc, STATE, sync_times=SyncTimes(Clock()))
    h = health.as_json()
    assert h["pi"] is None and h["throttled"] is None and h["cpu_temp_c"] is None
    assert h["clock"] == {"synchronized": None, "source": None}
    assert h["disk"] is None and h["fsync_p99_ms"] is None and h["hall_backlog"] is None
    lines = health.lines()
    assert f"board: {NOT_A_PI}" in lines
    assert f"supply and throttling: {NOT_A_PI}" in lines
    assert f"CPU temperature: {NOT_A_PI}" in lines
    assert "wall clock: unknown" in lines


def test_a_chrony_that_has_no_source_is_not_synchronised():
    text = ("Reference ID    : 00000000 ()\nStratum         : 0\nLeap status     : "
            "Not synchronised\n")
    assert read_sync(FakeSystem(commands={"chronyc -n tracking": text})).synchronized is False


def test_the_timesyncd_flag_file_alone_says_synchronised():
    sync = read_sync(FakeSystem({"/run/systemd/timesync/synchronized": ""}))
    assert (sync.synchronized, sync.source) == (True, "systemd-timesyncd")


def test_a_command_that_is_missing_or_fails_reads_as_absent(tmp_path):
    host = HostSystem()
    assert host.run(["gammonclock-no-such-command"]) is None
    assert host.run(["false"]) is None
    assert host.run(["echo", "throttled=0x0"]) == "throttled=0x0\n"
    assert host.read_text(str(tmp_path / "absent")) is None
    assert host.disk(str(tmp_path / "absent")) is None


def test_this_machine_is_read_without_failing(tmp_path):
    health = read_health(HostSystem(), tmp_path, sync_times=SyncTimes(Clock()))
    h = health.as_json()
    free, total = h["disk"]["free_bytes"], h["disk"]["total_bytes"]   # type: ignore[index]
    assert 0 <= free <= total
    if not Path("/proc/device-tree/model").exists():
        assert h["pi"] is None and h["throttled"] is None


# --- the sync ring -------------------------------------------------------------------------------

def test_every_duration_falls_in_a_bin_whose_upper_edge_holds_it_within_19_percent():
    for micros in [*range(0, 3000), 10_000, 49_999, 50_000, 1_000_000, 2**37]:
        edge = upper_edge_us(bin_of(micros))
        assert micros <= edge <= max(micros * 1.25, micros + 1), micros
    assert bin_of(2**60) == BINS - 1


def test_the_p99_of_the_hour_is_the_slow_ones_when_more_than_1_in_100_are_slow():
    clock = Clock()
    times = SyncTimes(clock)
    assert times.p99_ms() is None
    for _ in range(97):
        times.add(2_000_000)          # 2 ms
    for _ in range(3):
        times.add(80_000_000)         # 80 ms
    p99 = times.p99_ms()
    assert p99 is not None and 80 <= p99 < 96
    for _ in range(900):              # now 3 in 1000 are slow: the p99 is a fast one
        times.add(2_000_000)
    p99 = times.p99_ms()
    assert p99 is not None and 2 <= p99 < 2.5


def test_a_slow_minute_leaves_the_p99_after_an_hour_and_memory_stays_bounded():
    clock = Clock()
    times = SyncTimes(clock)
    for _ in range(100):
        times.add(200_000_000)        # one bad minute: 200 ms
    for minute in range(1, 3 * MINUTES):
        clock.ns += 60_000_000_000
        for _ in range(10):
            times.add(1_000_000)
        p99 = times.p99_ms()
        assert p99 is not None
        assert (p99 >= 200) == (minute < MINUTES), minute
    assert times.in_the_hour() == 10 * MINUTES
    assert len(times._bins) == MINUTES and all(len(b) == BINS for b in times._bins)


def test_the_journals_syncs_are_said_as_the_fdatasyncs_they_are(tmp_path, monkeypatch):
    """The journal writer times each sync: its `fdatasync` (issue 20: into zeros filled ahead,
    the data alone), and the words say so; the message keeps its keys (`fsync_p99_ms`,
    `fsyncs_in_hour`: the hall reads them, hall/PROTOCOL.md)."""
    calls: list[str] = []
    for name in ("fsync", "fdatasync"):
        real = getattr(os, name)
        monkeypatch.setattr(os, name, lambda fd, name=name, real=real: (calls.append(name),
                                                                         real(fd))[1])
    times = SyncTimes(Clock())
    fd = os.open(tmp_path / "j.jsonl", os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o640)
    writer = JournalWriter(tmp_path / "j.jsonl", b"k" * 32, fd, 0, GENESIS)
    writer.sync_times = times
    writer.sync()
    writer.sync()
    writer.close()
    assert calls == ["fdatasync", "fdatasync"] and times.count == 2
    health = read_health(recorded("pi5"), STATE, sync_times=times)
    assert health.fsync_p99_ms is not None
    said = [line for line in health.lines() if line.startswith("journal")]
    assert said == [f"journal sync (fdatasync): {health.fsync_p99_ms:g} ms (p99 of 2 in the "
                    f"last hour)"]
    assert not any("fsync" in line.replace("fdatasync", "") for line in health.lines())
    message = health.as_json()
    assert (message["fsync_p99_ms"], message["fsyncs_in_hour"]) == (health.fsync_p99_ms, 2)


# --- recording a board for the tests ------------------------------------------------------------

@pytest.mark.parametrize("board", sorted(p.name for p in DATA.iterdir() if p.is_dir()))
def test_a_recording_of_a_board_reads_back_as_the_same_health(board: str, tmp_path: Path) -> None:
    """What `--record DIR` keeps of a board is a folder of tests/data/health's shape: read back,
    it gives the very health the board gave (so a real Pi's sources become a test by a copy)."""
    from gammonclock.runtime.health import RecordingSystem

    times = SyncTimes(Clock())
    live = read_health(RecordingSystem(recorded(board), tmp_path), STATE, sync_times=times,
                       at="2026-12-02T03:31:40.000Z").as_json()
    files = {"/" + str(p.relative_to(tmp_path / "files")): p.read_text(encoding="utf-8")
             for p in (tmp_path / "files").rglob("*") if p.is_file()}
    commands = {p.name: p.read_text(encoding="utf-8") for p in (tmp_path / "commands").iterdir()}
    again = FakeSystem(files, commands, {STATE: (3_100_000_000, 29_800_000_000)})
    assert read_health(again, STATE, sync_times=times,
                       at="2026-12-02T03:31:40.000Z").as_json() == live
    assert live["pi"] is not None                       # it was read as a Pi, not "not a Pi"


def test_the_health_command_records_this_machine_and_refuses_bad_words(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from gammonclock.runtime.health import main

    assert main([str(tmp_path), "--record", str(tmp_path / "rec")]) == 0
    out = capsys.readouterr().out
    assert "board: " in out and f"recorded in {tmp_path / 'rec'}" in out
    assert main(["--record"]) == 2 and main(["--bogus"]) == 2
    assert "usage: python -m gammonclock.runtime.health" in capsys.readouterr().err

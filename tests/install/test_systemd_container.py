"""The clock under a real systemd (issue 21): a Debian 12 (bookworm, Raspberry Pi OS's base) root
made with debootstrap and cached, booted with `systemd-nspawn --boot` and no network
(--private-network), the clock installed in it by `scripts/install --offline` from a bundle for
this machine's architecture (its code and wheels, in scripts/bundle's layout), `[hardware]
pin_factory = "mock"` (no Pi), then checked from outside through `nsenter`: READY and the status
text, the service's groups (the unit names none), the control socket for an arbiter's login and
refused for another, `arbiter new-match`, `kill -9` → restarted and the match recovered, SIGSTOP →
the watchdog's restart, a start that fails saying why in `systemctl status`, a read-only state
folder (the clock serves, its records wait in memory), the USB stick's helper unit started by
hand on a stick (an ext4 image on a loop device made outside, passed in: a container gets no loop
device of its own), SIGTERM → a clean stop with an intact journal, and a second install run that
changes nothing.

Needs root and the tools scripts/test-deps installs (debootstrap, systemd-container); without them
it fails and says what is missing, never skips. The root is cached in $GAMMONCLOCK_TEST_CACHE
(default /var/cache/gammonclock-test), keyed by its suite, mirror and package list; the wheels
likewise, keyed by pyproject.toml's requirements. Each run boots the cached root read-only with a
tmpfs on top (--volatile=overlay): the cache is never changed by a run."""

from __future__ import annotations

import json
import os
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from container_helpers import (
    BUNDLE_INSIDE,
    ROOT,
    Container,
    booted,
    loop_stick,
)

DEVICE = "/etc/gammonclock/device.toml"
ARBITER, OTHER = "arb", "other"
WATCHDOG_S, RESTART_S = 10, 2             # the unit's WatchdogSec= and RestartSec=
TABLE = "table-7"                         # [table] id, set in the device.toml: the stick's file
NEXT_ON_THE_STICK = '[match]\nlength = 3\n\n[players]\nleft = "Vera"\nright = "Gleb"\n'
MATCH = '[match]\nlength = 5\n\n[players]\nleft = "Anna"\nright = "Boris"\n'

figures: dict[str, float] = {}            # seconds, printed at the end (and kept in CACHE)


@pytest.fixture
def stick(tmp_path: Path) -> Iterator[str]:
    """A USB stick: an ext4 image with gammonclock/TABLE.toml (the next match) on a loop device.
    ext4 keeps owners: its gammonclock/ is writable by all, for the clock's exports."""
    files = tmp_path / "stick-files"
    (files / "gammonclock").mkdir(parents=True)
    (files / "gammonclock" / f"{TABLE}.toml").write_text(NEXT_ON_THE_STICK)
    (files / "gammonclock").chmod(0o777)
    with loop_stick(tmp_path, files) as device:
        yield device


@pytest.fixture
def container(tmp_path: Path, stick: str) -> Iterator[Container]:
    with booted(tmp_path, figures, stick=stick) as box:
        yield box


# --- the checks ----------------------------------------------------------------------------------

def realtime_us(box: Container, since_us: int, text: str, timeout: float) -> int:
    """When the journal's first line holding `text` (logged after `since_us`) was written."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        out = box.ok("journalctl", "--output=json", "--no-pager",
                     f"--since=@{since_us / 1e6:.6f}")
        for line in out.splitlines():
            entry = json.loads(line)
            if text in str(entry.get("MESSAGE", "")):
                return int(entry["__REALTIME_TIMESTAMP"])
        time.sleep(0.5)
    raise AssertionError(f"no journal line with {text!r} within {timeout} s")


def wait_active_after(box: Container, old_pid: str, timeout: float) -> dict[str, str]:
    """The unit back up (active) with a main process other than `old_pid`."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        now = box.show("ActiveState", "MainPID", "NRestarts", "StatusText")
        if now["ActiveState"] == "active" and now["MainPID"] not in ("0", old_pid):
            return now
        time.sleep(0.2)
    raise AssertionError(f"not active again within {timeout} s: {now}; "
                         f"{box.run('journalctl', '-u', 'gammonclock', '-n', '30').stdout}")


def status_as(box: Container, login: str) -> dict[str, object]:
    return json.loads(box.ok("gammonclock", "arbiter", "--json", "status", user=login))


def install(box: Container) -> str:
    """The installer run as a director runs it from the bundle: unpacked, then its own copy."""
    box.ok("tar", "-xzf", BUNDLE_INSIDE, "-C", "/root")
    started = time.monotonic()
    out = box.ok("/root/gammonclock-bundle/code/scripts/install", "--offline", BUNDLE_INSIDE,
                 "--arbiter", ARBITER, timeout=900)
    figures.setdefault("first install (offline), s", time.monotonic() - started)
    return out


@pytest.mark.slow
def test_the_clock_under_a_real_systemd(container: Container) -> None:
    box = container
    for login in (ARBITER, OTHER):
        box.ok("useradd", "--create-home", login)

    # The install, offline: no network in the container, the bundle's wheels only.
    assert box.run("getent", "group", "gpio").returncode == 2          # Debian has no gpio
    first = install(box)
    assert "lgpio comes from the bundle's wheels" in first             # no python3-lgpio here
    assert "created the system group gpio" in first
    assert "install: done: " in first
    box.ok("sed", "-i", 's/^pin_factory = "lgpio"/pin_factory = "mock"/', DEVICE)
    box.ok("sed", "-i", f's/^# id = "table-12"/id = "{TABLE}"/', DEVICE)
    assert 'pin_factory = "mock"' in box.ok("cat", DEVICE)
    assert f'id = "{TABLE}"' in box.ok("cat", DEVICE)

    # READY: `systemctl start` of a Type=notify unit returns once the clock has said READY=1.
    box.ok("systemctl", "start", "gammonclock", timeout=120)
    up = box.show("ActiveState", "SubState", "StatusText", "MainPID", "NRestarts")
    assert (up["ActiveState"], up["SubState"], up["NRestarts"]) == ("active", "running", "0")
    assert up["StatusText"].startswith("between_games, game 1, score 0-0"), up
    # The device groups come from the user's (the unit names none): the running clock has them.
    groups = {box.ok("getent", "group", name).split(":")[2]
              for name in ("gpio", "i2c", "dialout", "gammonclock-arbiters")}
    process = box.ok("cat", f"/proc/{up['MainPID']}/status")
    held = next(line for line in process.splitlines() if line.startswith("Groups:")).split()[1:]
    assert groups <= set(held), (groups, held)

    # The control socket: the arbiter's login may use it, another login is refused.
    assert status_as(box, ARBITER)["lifecycle"] == "ready"
    refused = box.run("gammonclock", "arbiter", "status", user=OTHER)
    assert refused.returncode != 0
    assert "this login may not use the clock's socket" in refused.stderr

    # A new match, then a score to recover.
    box.ok("tee", f"/home/{ARBITER}/next.toml", stdin=MATCH)
    box.ok("chown", ARBITER, f"/home/{ARBITER}/next.toml")
    loaded = box.ok("gammonclock", "arbiter", "new-match", f"/home/{ARBITER}/next.toml",
                    user=ARBITER)
    assert "next match loaded: Anna-Boris, 5 points" in loaded
    box.ok("gammonclock", "arbiter", "score", "2", "1", user=ARBITER)
    before = status_as(box, ARBITER)
    assert (before["score"], before["match_length"]) == ({"left": 2, "right": 1}, 5)

    # kill -9: restarted after RestartSec, the match recovered from its journal as it was.
    killed_at = time.time()
    box.ok("systemctl", "kill", "--kill-whom=main", "--signal=KILL", "gammonclock")
    again = wait_active_after(box, up["MainPID"], timeout=RESTART_S + 30)
    figures["kill -9 to active again, s"] = time.time() - killed_at
    assert again["NRestarts"] == "1"
    assert again["StatusText"] == "between_games, game 1, score 2-1", again
    assert status_as(box, ARBITER) == {**before, "lifecycle": "ready"}
    realtime_us(box, int(killed_at * 1e6), "gammonclock: recovered /var/lib/gammonclock/"
                "journals/", timeout=10)

    # SIGSTOP, a hung loop: the watchdog kills it within WatchdogSec, restarts it RestartSec on.
    stopped_at = time.time()
    box.ok("systemctl", "kill", "--kill-whom=main", "--signal=STOP", "gammonclock")
    caught = realtime_us(box, int(stopped_at * 1e6), "Watchdog timeout", WATCHDOG_S + 10)
    restarted = realtime_us(box, int(stopped_at * 1e6), "Scheduled restart job",
                            WATCHDOG_S + RESTART_S + 10)
    figures["SIGSTOP to the watchdog, s"] = caught / 1e6 - stopped_at
    figures["SIGSTOP to the restart, s"] = restarted / 1e6 - stopped_at
    assert caught / 1e6 - stopped_at <= WATCHDOG_S + 0.5, figures
    assert restarted / 1e6 - stopped_at <= WATCHDOG_S + RESTART_S + 1, figures
    after = wait_active_after(box, again["MainPID"], timeout=30)
    assert after["NRestarts"] == "2"
    assert status_as(box, ARBITER) == {**before, "lifecycle": "ready"}

    # A start that fails says why in `systemctl status` (the clock's STATUS=, kept through the
    # restarts) and in the journal, not only a restart counter.
    box.ok("sed", "-i", 's/^pin_factory = "mock"/pin_factory = "bogus"/', DEVICE)
    assert box.run("systemctl", "restart", "gammonclock").returncode != 0
    why = 'hardware.pin_factory: "bogus" is not one of: lgpio, rpigpio, mock'
    shown = box.run("systemctl", "status", "--no-pager", "gammonclock").stdout
    assert f'Status: "failed to start: {DEVICE}: {why}"' in shown, shown
    assert why in box.ok("journalctl", "-u", "gammonclock", "--no-pager")
    box.ok("sed", "-i", 's/^pin_factory = "bogus"/pin_factory = "mock"/', DEVICE)
    box.ok("systemctl", "restart", "gammonclock", timeout=120)
    assert box.show("StatusText")["StatusText"] == "between_games, game 1, score 2-1"

    # A state folder that turned read-only (an SD card that failed; a drop-in makes it so for the
    # service alone): the clock still starts and serves, its records wait in memory, and says so.
    dropin = "/etc/systemd/system/gammonclock.service.d/read-only-state.conf"
    box.ok("mkdir", "-p", str(Path(dropin).parent))
    box.ok("tee", dropin, stdin="[Service]\nReadOnlyPaths=/var/lib/gammonclock\n")
    box.ok("systemctl", "daemon-reload")
    read_only_at = time.time()
    box.ok("systemctl", "restart", "gammonclock", timeout=120)
    realtime_us(box, int(read_only_at * 1e6), "the journal cannot be written now; its records "
                "wait in memory", timeout=10)
    assert "Read-only file system" in box.ok("journalctl", "-u", "gammonclock", "-n", "5")
    assert status_as(box, ARBITER) == {**before, "lifecycle": "ready"}
    box.ok("rm", dropin)
    box.ok("systemctl", "daemon-reload")
    box.ok("systemctl", "restart", "gammonclock", timeout=120)
    assert box.show("StatusText")["StatusText"] == "between_games, game 1, score 2-1"

    # The USB stick's helper, started by hand as udev starts it: it mounts the stick, the clock
    # exports its matches onto it and loads the next match from it, then it unmounts.
    name = Path(box.stick).name
    box.ok("systemctl", "start", f"gammonclock-usb@{name}.service", timeout=300)
    said = box.ok("journalctl", "-u", f"gammonclock-usb@{name}", "--no-pager", "--output=cat")
    assert "1 match exported, 1 in progress" in said, said
    assert "next match loaded: Vera-Gleb, 3 points" in said, said
    assert box.run("findmnt", "--mountpoint", f"/run/gammonclock/usb/{name}").returncode == 1
    assert box.run("test", "-e", f"/run/gammonclock/usb/{name}").returncode == 1
    box.ok("mount", "-o", "ro", box.stick, "/mnt")
    try:
        exported = box.ok("find", f"/mnt/gammonclock/exports/{TABLE}", "-type", "f").split()
    finally:
        box.ok("umount", "/mnt")
    assert [f for f in exported if "Anna-Boris" in f and f.endswith(".jsonl")], exported

    # SIGTERM (systemctl stop): STOPPING, the journal closed, exit 0, nothing restarted.
    box.ok("systemctl", "stop", "gammonclock", timeout=60)
    down = box.show("ActiveState", "Result", "ExecMainCode", "ExecMainStatus")
    assert down == {"ActiveState": "inactive", "Result": "success", "ExecMainCode": "1",
                    "ExecMainStatus": "0"}, down
    journals = box.ok("sh", "-c", "ls /var/lib/gammonclock/journals/*Anna-Boris*.jsonl").split()
    assert len(journals) == 1
    verified = box.ok("gammonclock", "verify", journals[0], user=ARBITER)
    assert "chain intact" in verified and "Anna v Boris, 2-1" in verified

    # The second install run changes nothing.
    started = time.monotonic()
    second = box.ok("/root/gammonclock-bundle/code/scripts/install", "--offline", BUNDLE_INSIDE,
                    "--arbiter", ARBITER, timeout=300)
    figures["second install, s"] = time.monotonic() - started
    assert "install: nothing changed: everything was already done" in second, second
    # And online, as on a Debian 12 card with network: the real apt-cache knows no python3-lgpio,
    # so lgpio stays PyPI's (the pi extra, installed already); apt-get is not called (a stand-in
    # records it) and nothing changes.
    box.ok("tee", "/usr/local/sbin/apt-get",
           stdin='#!/bin/sh\necho "apt-get $*" >> /root/apt-get.calls\nexit 1\n')
    box.ok("chmod", "0755", "/usr/local/sbin/apt-get")
    online = box.ok("/root/gammonclock-bundle/code/scripts/install", "--arbiter", ARBITER,
                    timeout=300)
    assert ("install: python3-lgpio: not in this distribution's archive (Raspberry Pi OS has "
            "it): lgpio comes from PyPI instead (the pi extra)") in online.splitlines(), online
    assert "install: nothing changed: everything was already done" in online, online
    assert box.run("test", "-e", "/root/apt-get.calls").returncode == 1
    assert box.run("systemctl", "is-enabled", "gammonclock").stdout.strip() == "enabled"


def test_test_deps_installs_what_this_test_needs():
    script = (ROOT / "scripts/test-deps").read_text(encoding="utf-8")
    for tool, package in (("debootstrap", "debootstrap"), ("systemd-nspawn", "systemd-container")):
        assert (f'command -v {tool} >/dev/null 2>&1 || missing="$missing {package}"'
                in script), tool


def test_ci_says_first_that_it_needs_root():
    """.ci/run as another login stops at once, before half an hour of tests that end in this
    test's failure."""
    other = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
    # The script given on standard input, from /: the other login need not be able to read the
    # clone (a home folder is 0700 on Debian 12, and bash then exits 126 before the script runs).
    run = subprocess.run([*(other if os.geteuid() == 0 else []), "bash", "-s"],
                         input=(ROOT / ".ci/run").read_text(encoding="utf-8"), cwd="/",
                         capture_output=True, text=True, timeout=60)
    assert (run.returncode, run.stdout) == (1, "")
    assert run.stderr.startswith("ci: run it as root (sudo .ci/run)")

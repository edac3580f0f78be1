"""The USB stick's root-side helper (`gammonclock usb-stick TARGET`, SPEC §13.3) with a fake
`run` that records the commands and a fake `ask` standing in for the clock; and the udev rule
and the unit that start it."""

from __future__ import annotations

import errno
import io
import os
import pwd
import re
import subprocess
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from gammonclock.runtime.arbiter_client import ReplyLost
from gammonclock.runtime.usb_mount import usb_stick_main

ROOT = Path(__file__).resolve().parents[2]
DEVICE = "/dev/sda1"
ME = pwd.getpwuid(os.getuid())
OWNED = f"nosuid,nodev,noexec,nosymfollow,uid={ME.pw_uid},gid={ME.pw_gid},umask=027"
SAID: dict[str, Any] = {"ok": True, "said": ["3 matches exported, 1 in progress",
                             "next match loaded: Anna–Boris, 11 points"]}


@dataclass
class Fake:
    """The commands run and the clock asked, in order, with the answers they give."""

    fs_type: str = "vfat"
    blkid_status: int = 0
    fails: dict[str, tuple[int, str]] = field(default_factory=dict)   # command: (status, stderr)
    answer: dict[str, Any] | BaseException = field(default_factory=lambda: SAID)
    log: list[list[str]] = field(default_factory=list)
    mounted: Path | None = None
    # What the kernel would mount on and unmount: the folder the target leads to when the
    # command runs (a descriptor's folder for /proc/self/fd/N, wherever its name now leads).
    mounted_on: Path | None = None
    unmounted: Path | None = None
    # Run just before mount: a swap of the checked folders, as the clock's user could make it.
    before_mount: Callable[[], None] | None = None

    def run(self, args: Sequence[str], *, capture_output: bool, text: bool, check: bool,
            pass_fds: Collection[int] = ()) -> subprocess.CompletedProcess[str]:
        assert capture_output and text and not check
        if args[0] == "mount" and self.before_mount is not None:
            self.before_mount()
        self.log.append([self._shown(arg, pass_fds) for arg in args])
        status, stderr = self.fails.get(args[0], (0, ""))
        if args[0] == "blkid":
            found = f"{self.fs_type}\n" if self.fs_type else ""
            return subprocess.CompletedProcess(args, self.blkid_status, found, "")
        if args[0] == "mount" and not status:
            self.mounted = Path(self.log[-1][-1])
            self.mounted_on = Path(os.path.realpath(args[-1]))
        if args[0] == "umount" and not status:
            self.unmounted = Path(os.path.realpath(args[-1]))
        return subprocess.CompletedProcess(args, status, "", stderr)

    @staticmethod
    def _shown(arg: str, pass_fds: Collection[int]) -> str:
        """`arg` with a /proc/self/fd/N in it as the folder N is (N given to the command)."""
        opened = re.match(r"/proc/self/fd/(\d+)", arg)
        if opened is None:
            return arg
        assert int(opened[1]) in pass_fds, (arg, pass_fds)     # else the command has no N
        return os.readlink(opened[0]) + arg[opened.end():]

    def ask(self, words: list[str]) -> dict[str, Any]:
        self.log.append(["ask", *words])
        assert self.mounted is None or self.mounted.is_dir()
        if isinstance(self.answer, BaseException):
            raise self.answer
        return self.answer


@pytest.fixture
def mount_root(tmp_path: Path) -> Path:
    (tmp_path / "run").mkdir()          # the clock's RuntimeDirectory: the clock is running
    return tmp_path / "run" / "usb"


def helper(fake: Fake, mount_root: Path, target: str = DEVICE, user: str = ME.pw_name
           ) -> tuple[int, list[str]]:
    out = io.StringIO()
    status = usb_stick_main(target, fake.ask, run=fake.run, mount_root=mount_root,
                            service_user=user, out=out)
    return status, out.getvalue().splitlines()


def commands(mount_point: Path, options: str, fs_type: str = "vfat") -> list[list[str]]:
    return [["blkid", "-o", "value", "-s", "TYPE", DEVICE],
            ["mount", "-c", "-t", fs_type, "-o", options, DEVICE, str(mount_point)],
            ["ask", "usb-stick", str(mount_point)],
            ["sync"],
            ["umount", "-c", str(mount_point)]]


def open_fds() -> list[str]:
    return sorted(os.listdir("/proc/self/fd"))


PLAIN = "nosuid,nodev,noexec,nosymfollow"


@pytest.mark.parametrize(("fs_type", "options"), [
    ("vfat", OWNED), ("exfat", OWNED), ("ntfs", OWNED), ("ntfs3", OWNED),
    ("ext4", PLAIN), ("ext2", PLAIN),
])
def test_a_stick_is_mounted_asked_about_synced_and_unmounted(mount_root: Path, fs_type: str,
                                                             options: str) -> None:
    fake = Fake(fs_type)
    before = open_fds()
    status, out = helper(fake, mount_root)
    assert status == 0
    assert open_fds() == before                     # the folders' descriptors closed
    assert fake.log == commands(mount_root / "sda1", options, fs_type)
    assert out == SAID["said"]
    assert not (mount_root / "sda1").exists()       # the mount point is gone again


FAILURES = [
    # (what, the fake, the commands after blkid, the message)
    ("no file system", Fake(fs_type="", blkid_status=2), [],
     f"{DEVICE}: no file system found on the stick (format it as FAT32 or exFAT): blkid exit "
     f"status 2"),
    ("blkid finds nothing it knows", Fake(fs_type=""), [],
     f"{DEVICE}: no file system found on the stick (format it as FAT32 or exFAT)"),
    *((f"a stick of {fs} is never mounted", Fake(fs_type=fs), [],
       f"{DEVICE}: the stick's file system is {fs!r}; only exfat, ext2, ext3, ext4, ntfs, "
       "ntfs3, vfat are mounted (format it as FAT32 or exFAT)")
      for fs in ("btrfs", "hfsplus", "udf", "squashfs", "iso9660", "cramfs", "xfs")),
    ("mount fails", Fake(fails={"mount": (32, "mount: /run/x: wrong fs type, bad option.\n")}),
     ["mount"], f"{DEVICE}: cannot mount the stick (vfat): mount: /run/x: wrong fs type, "
                f"bad option."),
]


@pytest.mark.parametrize(("fake", "then", "message"), [f[1:] for f in FAILURES],
                         ids=[f[0] for f in FAILURES])
def test_a_stick_that_cannot_be_mounted_is_said_and_left_alone(mount_root: Path, fake: Fake,
                                                               then: list[str],
                                                               message: str) -> None:
    before = open_fds()
    status, out = helper(fake, mount_root)
    assert open_fds() == before
    assert status == 1
    assert [c[0] for c in fake.log[1:]] == then          # never asked, never unmounted
    assert out == [f"gammonclock usb-stick: {message}"]
    assert not (mount_root / "sda1").exists()


ASK_FAILURES = [
    ("no clock", ConnectionRefusedError(errno.ECONNREFUSED, "Connection refused"),
     "no clock answers (Connection refused): is gammonclock.service running? (systemctl "
     "status gammonclock)"),
    ("no reply", ReplyLost("whether `usb-stick` was applied is unknown"),
     "the clock did not answer: whether `usb-stick` was applied is unknown"),
    ("refused", {"ok": False, "said": ["1 match exported"], "error": "the stick is full: …"},
     "the clock refused: the stick is full: …"),
]


@pytest.mark.parametrize(("answer", "message"), [f[1:] for f in ASK_FAILURES],
                         ids=[f[0] for f in ASK_FAILURES])
def test_the_stick_is_unmounted_whatever_the_clock_says(mount_root: Path, answer: Any,
                                                       message: str) -> None:
    fake = Fake(answer=answer)
    status, out = helper(fake, mount_root)
    assert status == 1
    assert fake.log == commands(mount_root / "sda1", OWNED)
    assert out[-1] == f"gammonclock usb-stick: {message}"
    assert not (mount_root / "sda1").exists()


def test_a_stick_that_cannot_be_unmounted_is_said(mount_root: Path) -> None:
    fake = Fake(fails={"umount": (32, "umount: /run/x: target is busy.")})
    status, out = helper(fake, mount_root)
    assert status == 1
    assert out == [*SAID["said"], f"gammonclock usb-stick: {mount_root / 'sda1'}: cannot "
                                  f"unmount the stick; do not pull it out yet: umount: /run/x: "
                                  f"target is busy."]
    assert (mount_root / "sda1").is_dir()           # still mounted: its mount point stays


@pytest.mark.parametrize("planted", ["usb", "usb/sda1"])
def test_a_mount_point_that_is_a_link_is_not_mounted_on(mount_root: Path, tmp_path: Path,
                                                        planted: str) -> None:
    """The clock's user owns the RuntimeDirectory: a link planted there as `usb` or `usb/sda1`
    (to /etc, say) must not have root mount the stick where it leads."""
    target = tmp_path / "etc"
    target.mkdir()
    if planted == "usb/sda1":
        mount_root.mkdir()
    link = mount_root.parent / planted
    link.symlink_to(target, target_is_directory=True)
    fake = Fake()
    status, out = helper(fake, mount_root)
    assert status == 1
    assert [c[0] for c in fake.log] == ["blkid"]                # never mounted, never asked
    assert out == [f"gammonclock usb-stick: {link}: not a folder but a link or a file: the "
                   f"stick is not mounted through it; remove it, then insert the stick again"]
    assert list(target.iterdir()) == []                         # nothing made where it leads


@pytest.mark.parametrize("swapped", ["usb", "usb/sda1"])
def test_a_link_swapped_in_after_the_check_does_not_redirect_the_mount(mount_root: Path,
                                                                      tmp_path: Path,
                                                                      swapped: str) -> None:
    """Between the check of `usb/sda1` and the mount, a link to /etc takes the checked
    folder's place (the checked one renamed away): root mounts on the folder it checked, and
    makes nothing where the link leads. The clock's user can swap `usb` (its RuntimeDirectory is
    the clock's): then the unmount and the removal are in the checked `usb/` too. It cannot
    swap `usb/sda1` (`usb/` is root's alone, see below), but if it could, the mount still
    would not follow."""
    etc = tmp_path / "etc"
    (etc / "sda1").mkdir(parents=True)
    name = mount_root.parent / swapped
    checked = name.with_name(name.name + "-checked")
    point = (checked / "sda1") if swapped == "usb" else checked

    def swap() -> None:
        name.rename(checked)
        name.symlink_to(etc if swapped == "usb" else etc / "sda1", target_is_directory=True)

    fake = Fake(before_mount=swap)
    before = open_fds()
    status, out = helper(fake, mount_root)
    assert (status, out) == (0, SAID["said"])
    assert open_fds() == before
    assert fake.mounted_on == point                           # the folder checked, not /etc's
    assert fake.log[1] == ["mount", "-c", "-t", "vfat", "-o", OWNED, DEVICE, str(point)]
    if swapped == "usb":
        assert fake.unmounted == point
        assert not point.exists()                             # removed where it was made
    assert list(etc.iterdir()) == [etc / "sda1"]              # /etc's own folder left alone
    assert list((etc / "sda1").iterdir()) == []


@pytest.mark.parametrize("mode", [0o775, 0o757, 0o777])
def test_a_usb_folder_others_may_write_in_is_not_mounted_in(mount_root: Path, mode: int) -> None:
    """Another user (the clock's) who may write in `usb/` could swap `usb/sda1` after the mount
    and have the unmount follow a link."""
    mount_root.mkdir()
    mount_root.chmod(mode)
    fake = Fake()
    before = open_fds()
    status, out = helper(fake, mount_root)
    assert status == 1 and [c[0] for c in fake.log] == ["blkid"]
    assert open_fds() == before
    assert out == [f"gammonclock usb-stick: {mount_root}: not a folder of uid {os.geteuid()} "
                   f"alone (owner uid {os.geteuid()}, mode {mode:04o}): another user could swap "
                   f"the mount point in it; remove it, then insert the stick again"]
    assert not (mount_root / "sda1").exists()


def test_a_missing_command_is_said(mount_root: Path) -> None:
    def run(args: Sequence[str], **kw: Any) -> subprocess.CompletedProcess[str]:
        raise FileNotFoundError(errno.ENOENT, "No such file or directory", args[0])

    out = io.StringIO()
    status = usb_stick_main(DEVICE, Fake().ask, run=run, mount_root=mount_root, out=out)
    assert status == 1
    assert out.getvalue() == (f"gammonclock usb-stick: {DEVICE}: no file system found on the "
                              f"stick (format it as FAT32 or exFAT): cannot run blkid: No such "
                              f"file or directory\n")


def test_no_clock_running_means_no_mount(tmp_path: Path) -> None:
    fake = Fake()
    status, out = helper(fake, tmp_path / "run" / "usb")
    assert status == 1
    assert [c[0] for c in fake.log] == ["blkid"]
    assert out == [f"gammonclock usb-stick: no clock is running ({tmp_path / 'run'} is missing): "
                   f"start it (systemctl start gammonclock), then insert the stick again"]


def test_a_fat_stick_needs_the_clock_user(mount_root: Path) -> None:
    fake = Fake()
    status, out = helper(fake, mount_root, user="no-such-user-gammonclock")
    assert status == 1 and [c[0] for c in fake.log] == ["blkid"]
    assert out == ["gammonclock usb-stick: no user 'no-such-user-gammonclock' to own the "
                   "stick's files: run the installer (scripts/install)"]


@pytest.mark.parametrize(("answer", "status", "out"), [
    (SAID, 0, SAID["said"]),
    ({"ok": False, "error": "no match to load"}, 1,
     ["gammonclock usb-stick: the clock refused: no match to load"]),
])
def test_a_folder_is_only_asked_about(tmp_path: Path, mount_root: Path, answer: dict[str, Any],
                                      status: int, out: list[str]) -> None:
    fake = Fake(answer=answer)
    assert helper(fake, mount_root, str(tmp_path)) == (status, out)
    assert fake.log == [["ask", "usb-stick", str(tmp_path)]]


@pytest.mark.parametrize("target", ["/tmp/no-such-folder-gammonclock", "/dev/../etc/passwd",
                                    "sda1"])
def test_neither_a_folder_nor_a_device(mount_root: Path, target: str) -> None:
    fake = Fake()
    assert helper(fake, mount_root, target) == (
        1, [f"gammonclock usb-stick: {target}: neither a folder nor a device (/dev/sda1, …)"])
    assert fake.log == []


# --- the udev rule and the unit -----------------------------------------------------------------

def settings(path: Path) -> list[str]:
    return [line for line in path.read_text().splitlines() if line and not line.startswith("#")]


def test_the_udev_rule_starts_the_unit_for_a_usb_file_system() -> None:
    [rule] = settings(ROOT / "systemd" / "90-gammonclock-usb.rules")
    pairs = set(re.findall(r'([A-Z_]+(?:\{[A-Z_]+\})?)(==|\+?=)"([^"]*)"', rule))
    assert pairs == {("ACTION", "==", "add"), ("SUBSYSTEM", "==", "block"),
                     ("ENV{ID_BUS}", "==", "usb"), ("ENV{ID_FS_USAGE}", "==", "filesystem"),
                     ("ENV{UDISKS_IGNORE}", "=", "1"), ("TAG", "+=", "systemd"),
                     ("ENV{SYSTEMD_WANTS}", "+=", "gammonclock-usb@%k.service")}
    assert "RUN" not in rule                # udev would kill a long copy, and hide the mount


def test_the_unit_mounts_in_the_hosts_namespace() -> None:
    unit = settings(ROOT / "systemd" / "gammonclock-usb@.service")
    assert "Type=oneshot" in unit and "User=root" in unit and "After=gammonclock.service" in unit
    assert "ExecStart=/opt/gammonclock/.venv/bin/gammonclock usb-stick /dev/%I" in unit
    assert "TimeoutStartSec=10min" in unit
    namespaced = re.compile(r"(Private(Mounts|Tmp|Devices|Network)|Protect(System|Home|Kernel"
                            r"\w*|Hostname|Proc|Clock)|ReadOnlyPaths|InaccessiblePaths|"
                            r"TemporaryFileSystem|BindPaths)=")
    assert [line for line in unit if namespaced.match(line)] == []


# `systemd-analyze verify` of the unit: scripts/check-unit, which CI runs (it installs systemd).

"""The root-side helper of the USB stick (SPEC §13.3): `gammonclock usb-stick TARGET`.

udev starts `gammonclock-usb@sda1.service` (root, oneshot) when a stick with a file system is
plugged in; that unit runs `gammonclock usb-stick /dev/sda1`, which:

1. finds the stick's file system type (`blkid`),
2. mounts it under `/run/gammonclock/usb/sda1`, inside the clock's RuntimeDirectory, so the
   sandboxed clock (ProtectSystem=strict) sees it and may write there; `nosuid,nodev,noexec`
   and `nosymfollow` (the kernel follows no link on the stick: nothing reads or writes off it
   through one), and for FAT, exFAT and NTFS owned by the clock's user. The clock's user owns
   the RuntimeDirectory, so `usb/` and `usb/sda1` must be real folders there, never links: root
   mounts nothing where a link would lead,
3. asks the running clock over its socket (`usb-stick DIR`) to export its matches and load the
   next one, and prints what the clock said (the unit's log),
4. syncs, unmounts (always, also when the clock did not answer) and removes the mount point.

`gammonclock usb-stick DIR` with a folder only asks the clock (a stick mounted by hand, or a
folder standing in for one). Every command goes through `run`, so tests give a fake that records
them.
"""

from __future__ import annotations

import os
import pwd
import re
import stat
import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Protocol, TextIO

from .errors import GammonclockError

__all__ = ["MOUNT_OPTIONS", "OWNED_FILE_SYSTEMS", "usb_stick_main"]

# Nothing on a stick is run, is a device, or is a link followed (Linux 5.10+, util-linux 2.38:
# Raspberry Pi OS Bookworm).
MOUNT_OPTIONS = "nosuid,nodev,noexec,nosymfollow"
# File systems without Unix owners: the mount gives every file to the clock's user.
OWNED_FILE_SYSTEMS = frozenset({"vfat", "exfat", "ntfs", "ntfs3"})
DEVICE_NAME = re.compile(r"[A-Za-z0-9_.:-]{1,64}")      # a kernel name: sda1, mmcblk1p1


class Runner(Protocol):
    """`subprocess.run` as this module calls it."""

    def __call__(self, args: Sequence[str], *, capture_output: bool, text: bool,
                 check: bool) -> subprocess.CompletedProcess[str]: ...


class _Failed(GammonclockError):
    """A step that failed; the message is the line to print."""


def usb_stick_main(target: str, ask: Callable[[list[str]], dict[str, Any]], *,
                   run: Runner = subprocess.run,
                   mount_root: Path = Path("/run/gammonclock/usb"),
                   service_user: str = "gammonclock", out: TextIO | None = None) -> int:
    """Mount the stick `target` (a device) or take the folder `target`, have the clock export
    and load from it, and say what happened on `out` (default: sys.stdout as it is at the call,
    so a test's capture sees it). Exit status 0 when all went well, else 1.
    """
    out = out if out is not None else sys.stdout
    if Path(target).is_dir():
        return _ask_clock(target, ask, out)
    if Path(target).parent != Path("/dev") or not DEVICE_NAME.fullmatch(Path(target).name):
        return _say(out, f"{target}: neither a folder nor a device (/dev/sda1, …)")
    try:
        return _with_stick_mounted(target, ask, run, mount_root, service_user, out)
    except _Failed as exc:
        return _say(out, str(exc))


def _with_stick_mounted(device: str, ask: Callable[[list[str]], dict[str, Any]],
                        run: Runner, mount_root: Path, service_user: str, out: TextIO) -> int:
    fs_type = _file_system(device, run)
    options = _mount_options(fs_type, service_user)
    mount_point = _mount_point(mount_root, device)
    _command(run, ["mount", "-t", fs_type, "-o", options, device, str(mount_point)],
             f"{device}: cannot mount the stick ({fs_type})", lambda: _rmdir(mount_point))
    try:
        asked = _ask_clock(str(mount_point), ask, out)
    finally:
        unmounted = _unmount(mount_point, run, out)
    return max(asked, unmounted)


def _mount_point(mount_root: Path, device: str) -> Path:
    """`mount_root/NAME`, made. Its parent is the clock's RuntimeDirectory: systemd makes it
    when the clock starts and removes it when it stops, so none means no clock to ask (and a
    folder made here by root would outlive the clock)."""
    if not mount_root.parent.is_dir():
        raise _Failed(f"no clock is running ({mount_root.parent} is missing): start it "
                      f"(systemctl start gammonclock), then insert the stick again")
    mount_point = mount_root / Path(device).name
    for folder in (mount_root, mount_point):
        try:
            os.mkdir(folder, 0o755)         # never through a link: an existing name is kept
        except FileExistsError:
            pass
        except OSError as exc:
            raise _Failed(f"{mount_point}: cannot make the mount point: {exc.strerror or exc}"
                          ) from None
        if not stat.S_ISDIR(os.lstat(folder).st_mode):
            raise _Failed(f"{folder}: not a folder but a link or a file: the stick is not "
                          f"mounted through it; remove it, then insert the stick again")
    return mount_point


def _file_system(device: str, run: Runner) -> str:
    """The stick's file system type, as blkid finds it."""
    nothing = f"{device}: no file system found on the stick (format it as FAT32 or exFAT)"
    fs_type = _command(run, ["blkid", "-o", "value", "-s", "TYPE", device], nothing).strip()
    if not fs_type:
        raise _Failed(nothing)
    return fs_type


def _mount_options(fs_type: str, service_user: str) -> str:
    """The mount options: never run or open a device from a stick; FAT, exFAT and NTFS have no
    owners, so the mount makes the clock's user the owner (its group reads, others nothing).
    Other file systems (ext4, …) keep their own owners and modes: the clock's user then needs
    write access to the stick's `gammonclock/` folder, given when the stick was prepared."""
    if fs_type not in OWNED_FILE_SYSTEMS:
        return MOUNT_OPTIONS
    try:
        user = pwd.getpwnam(service_user)
    except KeyError:
        raise _Failed(f"no user {service_user!r} to own the stick's files: run the installer "
                      f"(scripts/install)") from None
    return f"{MOUNT_OPTIONS},uid={user.pw_uid},gid={user.pw_gid},umask=027"


def _ask_clock(folder: str, ask: Callable[[list[str]], dict[str, Any]], out: TextIO) -> int:
    """Have the clock export to and load from `folder`; print what it said."""
    try:
        answer = ask(["usb-stick", folder])
    except OSError as exc:
        return _say(out, f"no clock answers ({exc.strerror or exc}): is gammonclock.service "
                         f"running? (systemctl status gammonclock)")
    except Exception as exc:    # the client's errors (no reply, a bad reply): say it, unmount
        return _say(out, f"the clock did not answer: {exc}")
    for line in answer.get("said") or []:
        print(line, file=out)
    if answer.get("ok"):
        return 0
    return _say(out, f"the clock refused: {answer.get('error', 'no reason given')}")


def _unmount(mount_point: Path, run: Runner, out: TextIO) -> int:
    """sync, umount, remove the mount point; 0, or 1 with what failed said."""
    try:
        _command(run, ["sync"], "sync failed")
        _command(run, ["umount", str(mount_point)],
                 f"{mount_point}: cannot unmount the stick; do not pull it out yet")
    except _Failed as exc:
        return _say(out, str(exc))
    _rmdir(mount_point)
    return 0


def _command(run: Runner, args: list[str], failure: str,
             on_failure: Callable[[], None] | None = None) -> str:
    """Run `args`; its output, or _Failed with `failure` and what the command said."""
    try:
        done = run(args, capture_output=True, text=True, check=False)
    except OSError as exc:
        why = f"cannot run {args[0]}: {exc.strerror or exc}"
    else:
        if done.returncode == 0:
            return done.stdout or ""
        why = (done.stderr or "").strip() or f"{args[0]} exit status {done.returncode}"
    if on_failure is not None:
        on_failure()
    raise _Failed(f"{failure}: {why}")


def _rmdir(path: Path) -> None:
    try:
        path.rmdir()
    except OSError:
        pass            # not empty or still mounted: leave it rather than guess


def _say(out: TextIO, message: str) -> int:
    print(f"gammonclock usb-stick: {message}", file=out)
    return 1

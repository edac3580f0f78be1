"""The root-side helper of the USB stick (SPEC §13.3): `gammonclock usb-stick TARGET`.

udev starts `gammonclock-usb@sda1.service` (root, oneshot) when a stick with a file system is
plugged in; that unit runs `gammonclock usb-stick /dev/sda1`, which:

1. finds the stick's file system type (`blkid`) and mounts only the ones sticks are formatted
   with (`MOUNTED_FILE_SYSTEMS`): a stick anyone can plug in never reaches a less-used kernel
   driver (hfsplus, udf, squashfs, btrfs, …) with an image crafted for its bugs,
2. mounts it under `/run/gammonclock/usb/sda1`, inside the clock's RuntimeDirectory, so the
   sandboxed clock (ProtectSystem=strict) sees it and may write there; `nosuid,nodev,noexec`
   and `nosymfollow` (the kernel follows no link on the stick: nothing reads or writes off it
   through one), and for FAT, exFAT and NTFS owned by the clock's user. The clock's user owns
   the RuntimeDirectory, so `usb/` and `usb/sda1` must be real folders there, never links: root
   mounts nothing where a link would lead. The folders are opened as themselves (O_PATH,
   O_NOFOLLOW) when checked, and mount(8) is given the checked folder (`/proc/self/fd/N`, not
   canonicalised), never its name again: a link swapped in after the check cannot redirect it,
3. asks the running clock over its socket (`usb-stick DIR`) to export its matches and load the
   next one, and prints what the clock said (the unit's log),
4. syncs, unmounts (always, also when the clock did not answer) and removes the mount point,
   both in the checked `usb/` folder (`/proc/self/fd/N/sda1`), not through its name.

`gammonclock usb-stick DIR` with a folder only asks the clock (a stick mounted by hand, or a
folder standing in for one). Every command goes through `run`, so tests give a fake that records
them.
"""

from __future__ import annotations

import errno
import os
import pwd
import re
import stat
import subprocess
import sys
from collections.abc import Callable, Collection, Sequence
from pathlib import Path
from typing import Any, Protocol, TextIO

from gammonclock.errors import GammonclockError

__all__ = ["MOUNTED_FILE_SYSTEMS", "MOUNT_OPTIONS", "OWNED_FILE_SYSTEMS", "usb_stick_main"]

# Nothing on a stick is run, is a device, or is a link followed (Linux 5.10+, util-linux 2.38:
# Raspberry Pi OS Bookworm).
MOUNT_OPTIONS = "nosuid,nodev,noexec,nosymfollow"
# File systems without Unix owners: the mount gives every file to the clock's user.
OWNED_FILE_SYSTEMS = frozenset({"vfat", "exfat", "ntfs", "ntfs3"})
# The only file systems mounted: what sticks come formatted with, and ext2/3/4 for a stick a
# Linux machine prepared. A stick is anyone's: its image reaches the kernel's driver as root.
MOUNTED_FILE_SYSTEMS = OWNED_FILE_SYSTEMS | {"ext2", "ext3", "ext4"}
DEVICE_NAME = re.compile(r"[A-Za-z0-9_.:-]{1,64}")      # a kernel name: sda1, mmcblk1p1


class Runner(Protocol):
    """`subprocess.run` as this module calls it."""

    def __call__(self, args: Sequence[str], *, capture_output: bool, text: bool,
                 check: bool, pass_fds: Collection[int] = ...
                 ) -> subprocess.CompletedProcess[str]: ...


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
    point = _MountPoint(mount_root, device)
    try:
        # -c: mount(8) hands the kernel /proc/self/fd/N as it is, which is the folder checked
        # (its name may lead elsewhere by now); canonicalised, it would be a name again.
        _command(run, ["mount", "-c", "-t", fs_type, "-o", options, device, point.checked],
                 f"{device}: cannot mount the stick ({fs_type})", point.remove,
                 pass_fds=point.fds)
        try:
            asked = _ask_clock(str(point.path), ask, out)
        finally:
            unmounted = _unmount(point, run, out)
    finally:
        point.close()
    return max(asked, unmounted)


# A folder opened as itself: not through a link (O_NOFOLLOW, O_DIRECTORY: a link is ENOTDIR or
# ELOOP), and only named, never read (O_PATH): what mount(8) is given as /proc/self/fd/N.
_AS_ITSELF = os.O_PATH | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


class _MountPoint:
    """`mount_root/NAME`, made and opened as itself, with `mount_root`. Its parent is the clock's
    RuntimeDirectory: systemd makes it when the clock starts and removes it when it stops, so
    none means no clock to ask (and a folder made here by root would outlive the clock). The
    clock's user owns that folder, so it may swap a name in it for a link at any time: after
    the check, the folders are reached through their descriptors only, and NAME only in the
    `usb/` held open, which must be root's alone."""

    def __init__(self, mount_root: Path, device: str) -> None:
        self.path = mount_root / Path(device).name
        self.name = self.path.name
        try:
            parent = os.open(mount_root.parent, os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)
        except OSError:
            raise _Failed(f"no clock is running ({mount_root.parent} is missing): start it "
                          f"(systemctl start gammonclock), then insert the stick again"
                          ) from None
        try:
            self.root_fd = self._made(parent, mount_root)
        finally:
            os.close(parent)
        try:
            self._only_mine(mount_root)
            self.point_fd = self._made(self.root_fd, self.path)
        except BaseException:
            os.close(self.root_fd)
            raise

    def _only_mine(self, mount_root: Path) -> None:
        """`usb/` is this helper's (root's) alone, as it made it: nobody else may rename or
        replace the mount point in it, before the mount or after (the unmount finds NAME in it).
        The clock's user may still rename `usb/` itself: that is why it is held open."""
        held = os.fstat(self.root_fd)
        if held.st_uid != os.geteuid() or held.st_mode & 0o022:
            raise _Failed(f"{mount_root}: not a folder of uid {os.geteuid()} alone (owner uid "
                          f"{held.st_uid}, mode {stat.S_IMODE(held.st_mode):04o}): another user "
                          f"could swap the mount point in it; remove it, then insert the stick "
                          f"again")

    def _made(self, dir_fd: int, folder: Path) -> int:
        """`folder` (in `dir_fd`), made if missing, opened as itself."""
        try:
            os.mkdir(folder.name, 0o755, dir_fd=dir_fd)   # an existing name is kept as it is
        except FileExistsError:
            pass
        except OSError as exc:
            raise _Failed(f"{self.path}: cannot make the mount point: {exc.strerror or exc}"
                          ) from None
        try:
            fd = os.open(folder.name, _AS_ITSELF, dir_fd=dir_fd)
        except OSError as exc:
            if exc.errno not in (errno.ENOTDIR, errno.ELOOP):
                raise _Failed(f"{self.path}: cannot open the mount point: "
                              f"{exc.strerror or exc}") from None
            fd = -1
        if fd < 0 or not stat.S_ISDIR(os.fstat(fd).st_mode):
            if fd >= 0:
                os.close(fd)
            raise _Failed(f"{folder}: not a folder but a link or a file: the stick is not "
                          f"mounted through it; remove it, then insert the stick again")
        return fd

    @property
    def checked(self) -> str:
        """The mount point checked, for a command given `fds`."""
        return f"/proc/self/fd/{self.point_fd}"

    @property
    def mounted(self) -> str:
        """The stick's mount, for a command given `fds`: NAME looked up in the checked `usb/`
        (a mount point cannot be renamed or removed while mounted)."""
        return f"/proc/self/fd/{self.root_fd}/{self.name}"

    @property
    def fds(self) -> tuple[int, int]:
        return (self.root_fd, self.point_fd)

    def remove(self) -> None:
        try:
            os.rmdir(self.name, dir_fd=self.root_fd)
        except OSError:
            pass            # not empty or still mounted: leave it rather than guess

    def close(self) -> None:
        os.close(self.point_fd)
        os.close(self.root_fd)


def _file_system(device: str, run: Runner) -> str:
    """The stick's file system type, as blkid finds it."""
    nothing = f"{device}: no file system found on the stick (format it as FAT32 or exFAT)"
    fs_type = _command(run, ["blkid", "-o", "value", "-s", "TYPE", device], nothing).strip()
    if not fs_type:
        raise _Failed(nothing)
    if fs_type not in MOUNTED_FILE_SYSTEMS:
        raise _Failed(f"{device}: the stick's file system is {fs_type[:40]!r}; only "
                      f"{', '.join(sorted(MOUNTED_FILE_SYSTEMS))} are mounted (format it as "
                      "FAT32 or exFAT)")
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


def _unmount(point: _MountPoint, run: Runner, out: TextIO) -> int:
    """sync, umount, remove the mount point; 0, or 1 with what failed said."""
    try:
        _command(run, ["sync"], "sync failed")
        _command(run, ["umount", "-c", point.mounted],
                 f"{point.path}: cannot unmount the stick; do not pull it out yet",
                 pass_fds=point.fds)
    except _Failed as exc:
        return _say(out, str(exc))
    point.remove()
    return 0


def _command(run: Runner, args: list[str], failure: str,
             on_failure: Callable[[], None] | None = None,
             pass_fds: Collection[int] = ()) -> str:
    """Run `args` (with the descriptors `pass_fds` kept open in it); its output, or _Failed
    with `failure` and what the command said."""
    try:
        done = run(args, capture_output=True, text=True, check=False, pass_fds=pass_fds)
    except OSError as exc:
        why = f"cannot run {args[0]}: {exc.strerror or exc}"
    else:
        if done.returncode == 0:
            return done.stdout or ""
        why = (done.stderr or "").strip() or f"{args[0]} exit status {done.returncode}"
    if on_failure is not None:
        on_failure()
    raise _Failed(f"{failure}: {why}")


def _say(out: TextIO, message: str) -> int:
    print(f"gammonclock usb-stick: {message}", file=out)
    return 1

"""scripts/install run into a staging root (`install`, `staged`: no venv), from a checkout that
holds every file it installs (`make_checkout`: this work tree, with stand-ins for the USB
stick's files until they are in it), and the staged tree listed with each file's mode, mtime and
digest (`listing`). The installer's tests use them; the `checkout` fixture is
tests/install/conftest.py's."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
USB_RULE_SOURCE = "systemd/90-gammonclock-usb.rules"
USB_UNIT_SOURCE = "systemd/gammonclock-usb@.service"


def make_checkout(into: Path) -> Path:
    """A copy of this work tree (tracked and new files) with stand-ins for the USB stick's udev
    rule and unit, for as long as they are not in the checkout yet. Never written into ROOT."""
    listed = subprocess.run(["git", "-c", f"safe.directory={ROOT}", "-C", str(ROOT), "ls-files",
                             "-z", "--cached", "--others", "--exclude-standard"],
                            capture_output=True, text=True, check=True).stdout
    for name in filter(None, listed.split("\0")):
        source = ROOT / name
        if source.is_file():
            (into / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, into / name)
    (into / "scripts/install").chmod(0o755)
    for name in (USB_RULE_SOURCE, USB_UNIT_SOURCE):
        if not (into / name).exists():
            (into / name).write_text(f"# a stand-in for {name} (tests/test_installer.py)\n")
    return into


def install(checkout: Path, root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["bash", str(checkout / "scripts/install"), "--root", str(root), *args],
                          capture_output=True, text=True, timeout=60)


def staged(checkout: Path, root: Path, *args: str) -> str:
    """The output of an installer run into `root` that must succeed (no venv)."""
    run = install(checkout, root, "--skip-venv", *args)
    assert run.returncode == 0, run.stderr
    return run.stdout


def listing(root: Path) -> dict[str, tuple[int, int, str]]:
    """Every path under `root`: its mode, its mtime and its content's (or link's) digest."""
    found = {}
    for path in sorted(root.rglob("*")):
        st = path.lstat()
        if path.is_symlink():
            content = os.readlink(path)
        elif path.is_file():
            content = hashlib.sha256(path.read_bytes()).hexdigest()
        else:
            content = ""
        found[str(path.relative_to(root))] = (st.st_mode, st.st_mtime_ns, content)
    return found

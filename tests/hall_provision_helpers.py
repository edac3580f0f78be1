"""`gammonclock hall provision` as the director runs it (the real command in a subprocess, the
real `mosquitto_passwd`), what it made (a stick's folder, the hall's keys), a clock's device
text from a stick (its relative file names resolved beside device.toml, as the clock takes a
provisioning stick), and a folder's whole contents, to prove that a refusal changed nothing.

    done = provision(tmp_path, "table-1", "--to", str(tmp_path / "sticks"))
    stick = Stick(tmp_path / "sticks" / "table-1")
"""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from mqtt_helpers import find_binary

# The stick's layout as the venue's contract writes it (hall/README.md), not as the code names it.
PROVISION = Path("gammonclock") / "provision"
DEVICE_FILE, PASSWORD_FILE, CA_FILE, SECRET_FILE = ("device.toml", "hall.password",
                                                    "venue-ca.crt", "device.key")
RETURNED_KEY, RETURNED_TABLE = "returned.key", "returned.table"


def provision(tmp_path: Path, *args: str, passwd: Path | None = None,
              keys: Path | None = None, broker: str = "mqtt://10.0.0.2:1883",
              sudo_user: int | None = None, tools: Path | None = None, timeout: float = 120
              ) -> subprocess.CompletedProcess[str]:
    """`gammonclock hall provision ARGS…` with the hall's files under TMP_PATH (or PASSWD,
    KEYS), no venue file (an empty one, /dev/null; `--venue` in ARGS gives one) and no broker
    reload; `sudo_user`: run as under sudo by that user (SUDO_UID, SUDO_GID); `tools`: a folder
    searched first for programs (a `mosquitto_passwd` that fails)."""
    find_binary("mosquitto_passwd")        # fails the test, with the reason, when missing
    venue = [] if any(a == "--venue" for a in args) else [
        "--venue", os.devnull]
    options = ["--passwd-file", str(passwd or tmp_path / "hall" / "passwd"),
               "--keys-dir", str(keys or tmp_path / "hall" / "keys"), "--no-reload"]
    if broker:
        options += ["--broker", broker]
    env = {k: v for k, v in os.environ.items() if not k.startswith("SUDO_")}
    if sudo_user is not None:
        env.update(SUDO_UID=str(sudo_user), SUDO_GID=str(sudo_user))
    if tools is not None:
        env["PATH"] = os.pathsep.join([str(tools), env.get("PATH", "")])
    return subprocess.run([sys.executable, "-m", "gammonclock", "hall", "provision", *args,
                           *venue, *options], capture_output=True, text=True,
                          timeout=timeout, env=env)


@dataclass(frozen=True)
class Stick:
    """DIR/TABLE as provision made it: what is copied to the root of one stick."""

    root: Path

    @property
    def folder(self) -> Path:
        return self.root / PROVISION

    @property
    def password(self) -> str:
        return (self.folder / PASSWORD_FILE).read_text(encoding="utf-8").strip()

    @property
    def key_text(self) -> str:
        return (self.folder / SECRET_FILE).read_text(encoding="ascii")

    def clock_text(self, match_file: Path | None = None) -> str:
        """The device config a clock on mock pins runs with this stick taken: the stick's
        [table] and [hall], their file names resolved beside its device.toml."""
        text = (self.folder / DEVICE_FILE).read_text(encoding="utf-8")
        for name in (PASSWORD_FILE, CA_FILE):
            text = text.replace(f'"{name}"', f'"{self.folder / name}"')
        if match_file is not None:
            text = text.replace("\n[hall]", f'match_file = "{match_file}"\n\n[hall]')
        return '[hardware]\npin_factory = "mock"\n\n' + text

    def returned(self, table: str, key_text: str) -> None:
        """What a clock that kept its own key writes to the stick (helper provision-clock)."""
        (self.folder / RETURNED_TABLE).write_text(table + "\n", encoding="ascii")
        (self.folder / RETURNED_KEY).write_text(key_text, encoding="ascii")


def contents(folder: Path) -> dict[str, tuple[int, bytes | str]]:
    """Every file, folder and link under FOLDER: its mode and its bytes (a link: its target)."""
    found: dict[str, tuple[int, bytes | str]] = {}
    for top, dirs, files in os.walk(folder):
        for name in [*dirs, *files]:
            path = Path(top) / name
            st = path.lstat()
            found[str(path.relative_to(folder))] = (
                st.st_mode, os.readlink(path) if path.is_symlink() else
                path.read_bytes() if path.is_file() else b"")
    return found

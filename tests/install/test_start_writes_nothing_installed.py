"""The service cannot write into its install (root-owned, `ProtectSystem=strict`), so the
installer compiles the package's bytecode (`compileall`, as scripts/install does): a start that
still needed to write a `.pyc` would pay for compiling on every boot. Here the package is
installed into a folder and compiled the installer's way, then a real `gammonclock run` starts
from it, takes a match and stops: not one file of the install may change."""

from __future__ import annotations

import shutil
import signal
import subprocess
import sys
from pathlib import Path

from device_helpers import wait_until_running
from gammonclock.runtime.arbiter_client import ask
from gammonclock.runtime.arbiter_socket import socket_path

PACKAGE = Path(__file__).resolve().parents[2] / "firmware" / "gammonclock"
# A start takes about a second on an idle machine; on a loaded CI runner (a load of 12 on two
# cores) it once took over 15 s. A minute tells a slow start from a hang, and fails clearly.
START_BUDGET_S = 60

DEVICE = """\
[hardware]
pin_factory = "mock"

[table]
id = "T1"
"""


def tree(root: Path) -> dict[str, int]:
    return {str(p.relative_to(root)): p.stat().st_mtime_ns for p in root.rglob("*")}


def test_a_start_from_a_compiled_install_writes_nothing_into_it(tmp_path, processes):
    install = tmp_path / "site"
    shutil.copytree(PACKAGE, install / "gammonclock",
                    ignore=shutil.ignore_patterns("__pycache__"))
    subprocess.run([sys.executable, "-I", "-m", "compileall", "-q", str(install / "gammonclock")],
                   check=True)
    before = tree(install)
    (tmp_path / "device.toml").write_text(DEVICE, encoding="utf-8")
    state = tmp_path / "state"
    program = (f"import sys; sys.path.insert(0, {str(install)!r}); import gammonclock; "
               "print('from', gammonclock.__file__, file=sys.stderr); "
               "from gammonclock.cli.main import main; sys.exit(main())")
    proc = subprocess.Popen([sys.executable, "-I", "-c", program, "run", "--device",
                             str(tmp_path / "device.toml"), "--state-dir", str(state)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    processes.append(proc)
    wait_until_running(proc, lambda: socket_path(state).exists(),
                       f"gammonclock run from the install did not start within {START_BUDGET_S} s",
                       timeout_s=START_BUDGET_S)
    answer = ask(socket_path(state), ["new-match"], text="[match]\nlength = 3\n", file="m.toml")
    assert answer["ok"], answer
    assert ask(socket_path(state), ["deduct", "left", "10s"])["ok"]
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=START_BUDGET_S)
    assert proc.returncode == 0, err
    assert f"from {install / 'gammonclock' / '__init__.py'}" in err   # it ran from the install
    after = tree(install)
    assert sorted(set(after) - set(before)) == []                # no .pyc written
    assert {name for name in before if after[name] != before[name]} == set()

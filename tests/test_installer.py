"""scripts/install (issue 9) into a staging root: the files it places and their modes, a second
run that changes nothing and says so, an arbiter's match file never overwritten, a dry run that
touches nothing, I²C turned on in config.txt once, and the example table config that loads.
No venv here (--skip-venv): CI runs the installer with one, twice."""

from __future__ import annotations

import hashlib
import os
import shutil
import stat
import subprocess
from pathlib import Path

import pytest

from gammonclock.config import load_config
from gammonclock.config_schema import table_id_from_host

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "install"
TABLE_CONFIG = ROOT / "config" / "table.toml"
UNIT_SOURCE = ROOT / "systemd" / "gammonclock.service"

CODE = "opt/gammonclock"
CONFIG_DIR = "etc/gammonclock"
MATCH = "etc/gammonclock/match.toml"
UNIT = "etc/systemd/system/gammonclock.service"


def install(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["bash", str(SCRIPT), "--root", str(root), *args],
                          capture_output=True, text=True, timeout=60)


def staged(root: Path, *args: str) -> str:
    """The output of an installer run into `root` that must succeed (no venv)."""
    run = install(root, "--skip-venv", *args)
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


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def tracked_files() -> list[str]:
    """The checkout's tracked files that exist in its work tree (what the installer copies)."""
    if not (ROOT / ".git").exists() or shutil.which("git") is None:
        pytest.skip("not a git checkout")
    out = subprocess.run(["git", "-c", f"safe.directory={ROOT}", "-C", str(ROOT), "ls-files",
                          "-z"], capture_output=True, text=True, check=True).stdout
    return sorted(f for f in out.split("\0") if f and (ROOT / f).exists())


def lines_with(output: str, *words: str) -> list[str]:
    return [line for line in output.splitlines() if all(w in line for w in words)]


# --- the example config --------------------------------------------------------------------------

def test_the_table_config_loads_as_the_reference_build_and_a_match_to_7():
    config = load_config(TABLE_CONFIG)
    device = config.device
    assert (config.rules.length, config.rules.discipline.name) == (7, "backgammon")
    assert device.pin_factory == "lgpio"
    assert device.state_dir == "/var/lib/gammonclock"
    assert device.arbiter_socket_group == "gammonclock-arbiters"
    assert device.table_id == table_id_from_host(os.uname().nodename)   # [table] id commented


# --- a first run into a staging root -------------------------------------------------------------

def test_a_first_run_places_the_code_the_config_and_the_unit(tmp_path):
    out = staged(tmp_path)
    unit, match = tmp_path / UNIT, tmp_path / MATCH
    assert unit.read_bytes() == UNIT_SOURCE.read_bytes() and mode(unit) == 0o644
    assert match.read_bytes() == TABLE_CONFIG.read_bytes() and mode(match) == 0o640
    assert mode(tmp_path / CONFIG_DIR) == 0o750
    code = tmp_path / CODE
    assert (code / "pyproject.toml").read_bytes() == (ROOT / "pyproject.toml").read_bytes()
    assert (code / "firmware/gammonclock/cli.py").is_file()
    assert not (code / ".git").exists() and not (code / ".venv").exists()
    assert "the virtual environment left out (--skip-venv)" in out
    assert "done: " in out and "already done" not in out


def test_the_code_is_the_tracked_files_none_writable_but_by_their_owner(tmp_path):
    staged(tmp_path)
    code = tmp_path / CODE
    copied = sorted(str(p.relative_to(code)) for p in code.rglob("*") if not p.is_dir())
    assert copied == tracked_files()
    for path in [code, *code.rglob("*")]:
        assert mode(path) & 0o022 == 0, path
        assert path.stat().st_uid == os.geteuid()     # root's when run as root


def test_the_system_steps_are_only_printed_in_a_staging_root(tmp_path):
    out = staged(tmp_path, "--arbiter", "anna", "--arbiter", "boris")
    for words in (("would run apt-get install -y", "python3-venv python3-lgpio i2c-tools"),
                  ("would run groupadd --system gammonclock-arbiters",),
                  ("would run useradd --system", "--home-dir /var/lib/gammonclock",
                   "--shell /usr/sbin/nologin", "gammonclock"),
                  ("would run usermod -a -G gpio,i2c,dialout,gammonclock-arbiters gammonclock",),
                  ("would run usermod -a -G gammonclock-arbiters,gammonclock anna",),
                  ("would run usermod -a -G gammonclock-arbiters,gammonclock boris",),
                  ("would run systemctl daemon-reload && systemctl enable gammonclock",)):
        assert len(lines_with(out, "install: ", *words)) == 1, words


# --- a second run ---------------------------------------------------------------------------------

def test_a_second_run_changes_nothing_and_says_so(tmp_path):
    staged(tmp_path)
    before = listing(tmp_path)
    out = staged(tmp_path)
    assert listing(tmp_path) == before
    for what in (f"the code in {tmp_path}/{CODE}", f"{tmp_path}/{CONFIG_DIR} (mode 0750)",
                 f"{tmp_path}/{MATCH} kept", f"the unit {tmp_path}/{UNIT}"):
        assert len(lines_with(out, what, "(already done")) == 1, what
    assert "install: nothing changed: everything was already done" in out


def test_an_arbiters_match_file_is_kept(tmp_path):
    staged(tmp_path)
    match = tmp_path / MATCH
    match.write_text('[match]\nlength = 11\n[players]\nleft = "Anna"\nright = "Boris"\n')
    edited = match.read_bytes()
    out = staged(tmp_path)
    assert match.read_bytes() == edited
    assert lines_with(out, f"{match} kept as it is, never overwritten")


def test_new_code_replaces_the_old_and_keeps_the_venv(tmp_path):
    staged(tmp_path)
    code = tmp_path / CODE
    (code / "gone.py").write_text("# a file of an older version\n")
    (code / "pyproject.toml").write_text("# changed\n")
    (code / ".venv").mkdir()
    (code / ".venv" / "kept").write_text("the venv's\n")
    out = staged(tmp_path)
    assert lines_with(out, "copied the code", f"to {code}")
    assert not (code / "gone.py").exists()
    assert (code / "pyproject.toml").read_bytes() == (ROOT / "pyproject.toml").read_bytes()
    assert (code / ".venv" / "kept").read_text() == "the venv's\n"
    assert not list((tmp_path / "opt").glob(".gammonclock*"))     # no scratch folder left


# --- a dry run ------------------------------------------------------------------------------------

def test_a_dry_run_changes_nothing_and_says_what_each_step_would_do(tmp_path):
    run = install(tmp_path, "--dry-run", "--arbiter", "anna")    # the venv's steps too
    assert run.returncode == 0, run.stderr
    assert list(tmp_path.iterdir()) == []
    for words in (("would run apt-get install",),                       # 1. packages
                  ("would leave I2C as it is",),                       # 2. I2C (no config.txt)
                  ("would run useradd",), ("would run usermod", "anna"),   # 3. users
                  ("would copy the code", f"to {tmp_path}/{CODE}"),    # 4. the code
                  ("would run /", "-m venv --system-site-packages"),
                  ("would run", "/.venv/bin/pip install -q", "[report]"),
                  ("would make", CONFIG_DIR), ("would place", MATCH),  # 5. the config
                  ("would install the unit", UNIT),                    # 6. the unit
                  ("would run systemctl daemon-reload && systemctl enable gammonclock",)):
        assert len(lines_with(run.stdout, "install: ", *words)) == 1, words
    assert "install: dry run: 6 changes to make; nothing was changed" in run.stdout
    assert lines_with(run.stdout, "check-config /etc/gammonclock/match.toml")   # 7. next steps


def test_a_dry_run_after_a_run_has_nothing_to_do(tmp_path):
    staged(tmp_path)
    before = listing(tmp_path)
    out = staged(tmp_path, "--dry-run")
    assert listing(tmp_path) == before
    assert "install: dry run: 0 changes to make; nothing was changed" in out


# --- I²C in the firmware's config.txt ------------------------------------------------------------

BOOKWORM_CONFIG_TXT = """\
# For more options and information see
# http://rptl.io/configtxt
#dtparam=i2c_arm=on
#dtparam=i2s=on
#dtparam=spi=on
dtparam=audio=on

[cm4]
otg_mode=1

[all]
"""


@pytest.mark.parametrize(("place", "text", "expected"), [
    # Bookworm's default: the commented line is uncommented, where it is
    ("boot/firmware", BOOKWORM_CONFIG_TXT,
     BOOKWORM_CONFIG_TXT.replace("#dtparam=i2c_arm=on", "dtparam=i2c_arm=on")),
    # off: made on
    ("boot/firmware", "dtparam=audio=on\ndtparam=i2c_arm=off\n",
     "dtparam=audio=on\ndtparam=i2c_arm=on\n"),
    # no line: one at the end, under [all] (the end may be inside a [pi4] section)
    ("boot/firmware", "[pi4]\narm_boost=1\n",
     "[pi4]\narm_boost=1\n\n# The clock's panels (scripts/install)\n[all]\ndtparam=i2c_arm=on\n"),
    # before Bookworm: /boot/config.txt
    ("boot", "dtparam=audio=on\n",
     "dtparam=audio=on\n\n# The clock's panels (scripts/install)\n[all]\ndtparam=i2c_arm=on\n"),
    # already on (also as the alias i2c, or among other parameters): untouched
    ("boot/firmware", "dtparam=i2c_arm=on\n", "dtparam=i2c_arm=on\n"),
    ("boot/firmware", "dtparam=i2c=on\n", "dtparam=i2c=on\n"),
    ("boot/firmware", "dtparam=spi=on,i2c_arm=on\n", "dtparam=spi=on,i2c_arm=on\n"),
])
def test_i2c_is_turned_on_in_config_txt_once(tmp_path, place, text, expected):
    config_txt = tmp_path / place / "config.txt"
    config_txt.parent.mkdir(parents=True)
    config_txt.write_text(text)
    first, second = staged(tmp_path), staged(tmp_path)
    assert config_txt.read_text() == expected
    assert lines_with(second, f"I2C on in {config_txt} (already done)")
    assert (tmp_path / "etc/modules-load.d/gammonclock.conf").read_text().endswith("\ni2c-dev\n")
    assert lines_with(second, "i2c-dev module loaded at boot (already done)")
    assert ("turned I2C on" in first) == (text != expected)


def test_i2c_dev_already_in_etc_modules_is_left_alone(tmp_path):
    (tmp_path / "boot/firmware").mkdir(parents=True)
    (tmp_path / "boot/firmware/config.txt").write_text("dtparam=i2c_arm=on\n")
    (tmp_path / "etc").mkdir()
    (tmp_path / "etc/modules").write_text("i2c-dev\n")
    out = staged(tmp_path)
    assert not (tmp_path / "etc/modules-load.d").exists()
    assert lines_with(out, "i2c-dev module loaded at boot (already done)")


def test_without_a_config_txt_i2c_is_a_warning_not_a_failure(tmp_path):
    out = staged(tmp_path)
    assert lines_with(out, "install: warning: no", "config.txt", "I2C left as it is")


# --- failures -------------------------------------------------------------------------------------

def test_a_failing_step_is_named_and_stops_the_run(tmp_path):
    (tmp_path / "etc").mkdir()
    (tmp_path / CONFIG_DIR).write_text("a file where the config folder goes\n")
    run = install(tmp_path, "--skip-venv")
    assert run.returncode != 0
    assert "install: FAILED in step 5/7 (the config)" in run.stderr
    assert not (tmp_path / UNIT).exists()          # nothing after it was done


@pytest.mark.parametrize(("args", "status", "error"), [
    (["--bogus"], 2, "install: unknown argument: --bogus"),
    (["--arbiter"], 2, "usage: sudo scripts/install"),
    (["--arbiter", "Bob Smith"], 1, "--arbiter Bob Smith: not a login name"),
    (["--arbiter", "x;rm"], 1, "not a login name"),
])
def test_bad_arguments_are_refused_before_any_change(tmp_path, args, status, error):
    run = install(tmp_path, *args)
    assert (run.returncode, list(tmp_path.iterdir())) == (status, [])
    assert error in run.stderr


def test_a_staging_root_that_does_not_exist_is_refused(tmp_path):
    run = install(tmp_path / "nowhere")
    assert run.returncode == 1
    assert f"--root {tmp_path}/nowhere: no such folder" in run.stderr


def test_the_usage_is_the_documented_one():
    run = subprocess.run(["bash", str(SCRIPT), "--help"], capture_output=True, text=True)
    assert run.returncode == 0
    assert run.stdout.splitlines()[0] == (
        "usage: sudo scripts/install [--root DIR] [--dry-run] [--arbiter LOGIN]... [--skip-venv]")

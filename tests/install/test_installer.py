"""scripts/install (issue 9) into a staging root: the files it places and their modes (the device
and the match config, the units, the USB stick's udev rule), a second run that changes nothing and
says so, an arbiter's files never overwritten, a match.toml from before the device/match split
reported and left alone, a dry run that touches nothing, I²C turned on in config.txt once, and the
example configs that load. No venv here (--skip-venv): CI runs the installer with one, twice."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import tomllib
from pathlib import Path

import pytest

from gammonclock.config.loading import parse_config
from gammonclock.config.schema import DEVICE, SECTIONS
from gammonclock.config.schema import MATCH as MATCH_KIND
from gammonclock.config.table_id import default_table_id
from install_helpers import (
    ROOT,
    USB_RULE_SOURCE,
    USB_UNIT_SOURCE,
    install,
    listing,
    make_checkout,
    staged,
)

DEVICE_EXAMPLE = "config/device.toml"
MATCH_EXAMPLE = "config/match.toml"
UNIT_SOURCE = "systemd/gammonclock.service"
DEVICES_RULE_SOURCE = "systemd/60-gammonclock-devices.rules"

CODE = "opt/gammonclock"
CONFIG_DIR = "etc/gammonclock"
DEVICE_FILE = "etc/gammonclock/device.toml"
MATCH = "etc/gammonclock/match.toml"
UNIT = "etc/systemd/system/gammonclock.service"
USB_RULE = "etc/udev/rules.d/90-gammonclock-usb.rules"
USB_UNIT = "etc/systemd/system/gammonclock-usb@.service"
DEVICES_RULE = "etc/udev/rules.d/60-gammonclock-devices.rules"
COMMAND_LINK = "usr/local/bin/gammonclock"

# A match.toml as the installer placed it before the device/match split (config/table.toml).
OLD_COMBINED_MATCH = """\
[match]
length = 7

[players]
left = "Anna"
right = "Boris"

[table]
# id = "table-12"

[arbiter]
socket_group = "gammonclock-arbiters"

[hardware]
pin_factory = "lgpio"

[displays.left]
address = 0x3C
"""


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def installed_files(checkout: Path) -> list[str]:
    """What the installer copies: the tracked files that exist in the work tree of a git
    checkout, every file of one that is not git's."""
    if checkout != ROOT:
        return sorted(str(p.relative_to(checkout)) for p in checkout.rglob("*") if p.is_file())
    if not (ROOT / ".git").exists() or shutil.which("git") is None:
        pytest.skip("not a git checkout")
    out = subprocess.run(["git", "-c", f"safe.directory={ROOT}", "-C", str(ROOT), "ls-files",
                          "-z"], capture_output=True, text=True, check=True).stdout
    return sorted(f for f in out.split("\0") if f and (ROOT / f).exists())


def lines_with(output: str, *words: str) -> list[str]:
    return [line for line in output.splitlines() if all(w in line for w in words)]


# --- the example configs -------------------------------------------------------------------------

def sections(path: Path) -> set[str]:
    """The file's sections as SECTIONS names them (`displays.left`, not `displays`)."""
    found = set()
    for name, value in tomllib.loads(path.read_text(encoding="utf-8")).items():
        nested = name == "displays"
        found |= {f"{name}.{side}" for side in value} if nested else {name}
    return found


@pytest.mark.parametrize(("example", "kind"), [(DEVICE_EXAMPLE, DEVICE),
                                               (MATCH_EXAMPLE, MATCH_KIND)])
def test_each_example_holds_only_its_own_kind_of_section(example, kind):
    found = sections(ROOT / example)
    assert found and {SECTIONS[name] for name in found} == {kind}, found


def test_the_examples_together_are_the_reference_build_and_a_match_to_7():
    device_text = (ROOT / DEVICE_EXAMPLE).read_text(encoding="utf-8")
    match_text = (ROOT / MATCH_EXAMPLE).read_text(encoding="utf-8")
    config = parse_config(match_text + "\n" + device_text, "both.toml")
    device = config.device
    assert (config.rules.length, config.rules.discipline.name) == (7, "backgammon")
    assert device.pin_factory == "lgpio"
    assert device.state_dir == "/var/lib/gammonclock"
    assert device.arbiter_socket_group == "gammonclock-arbiters"
    assert device.match_file == "/etc/gammonclock/match.toml"            # loaded at boot
    assert device.table_id == default_table_id(os.uname().nodename)   # [table] id commented


def test_the_match_example_says_how_to_change_a_match_and_that_a_restart_does_not():
    text = (ROOT / MATCH_EXAMPLE).read_text(encoding="utf-8")
    assert "gammonclock arbiter new-match /etc/gammonclock/match.toml" in text
    assert "check-config /etc/gammonclock/match.toml" in text
    assert "USB stick" in text and "A restart is NOT how to change the match" in text


def test_the_unit_runs_the_clock_on_the_device_config():
    unit = (ROOT / UNIT_SOURCE).read_text(encoding="utf-8")
    exec_start = [line for line in unit.splitlines() if line.startswith("ExecStart=")]
    assert exec_start == ["ExecStart=/opt/gammonclock/.venv/bin/gammonclock run "
                          "--device /etc/gammonclock/device.toml"]


# --- a first run into a staging root -------------------------------------------------------------

def test_a_first_run_places_the_code_the_configs_the_units_and_the_usb_rule(checkout, tmp_path):
    out = staged(checkout, tmp_path)
    for placed, source, wanted_mode in ((DEVICE_FILE, DEVICE_EXAMPLE, 0o640),
                                        (MATCH, MATCH_EXAMPLE, 0o640),
                                        (UNIT, UNIT_SOURCE, 0o644),
                                        (USB_UNIT, USB_UNIT_SOURCE, 0o644),
                                        (USB_RULE, USB_RULE_SOURCE, 0o644),
                                        (DEVICES_RULE, DEVICES_RULE_SOURCE, 0o644)):
        path = tmp_path / placed
        assert path.read_bytes() == (checkout / source).read_bytes(), placed
        assert mode(path) == wanted_mode, placed
    assert mode(tmp_path / CONFIG_DIR) == 0o750
    assert os.readlink(tmp_path / COMMAND_LINK) == "/opt/gammonclock/.venv/bin/gammonclock"
    code = tmp_path / CODE
    assert (code / "pyproject.toml").read_bytes() == (ROOT / "pyproject.toml").read_bytes()
    assert (code / "firmware/gammonclock/cli/main.py").is_file()
    assert not (code / ".git").exists() and not (code / ".venv").exists()
    assert "the virtual environment left out (--skip-venv)" in out
    assert "done: " in out and "already done" not in out and "WARNING" not in out


def test_the_code_is_the_tracked_files_none_writable_but_by_their_owner(checkout, tmp_path):
    staged(checkout, tmp_path)
    code = tmp_path / CODE
    copied = sorted(str(p.relative_to(code)) for p in code.rglob("*") if not p.is_dir())
    assert copied == installed_files(checkout)
    for path in [code, *code.rglob("*")]:
        assert mode(path) & 0o022 == 0, path
        assert path.stat().st_uid == os.geteuid()     # root's when run as root


def test_the_system_steps_are_only_printed_in_a_staging_root(checkout, tmp_path):
    out = staged(checkout, tmp_path, "--arbiter", "anna", "--arbiter", "boris")
    for words in (("apt-get install -y", "python3-venv i2c-tools python3-lgpio",
                   "python3-lgpio where the distribution has it, else lgpio from PyPI: the pi "
                   "extra"),
                  ("groupadd --system gammonclock-arbiters",),
                  ("groupadd --system GROUP for each of gpio i2c dialout that is missing",),
                  ("useradd --system", "--home-dir /var/lib/gammonclock",
                   "--shell /usr/sbin/nologin", "gammonclock"),
                  ("usermod -a -G gpio,i2c,dialout,gammonclock-arbiters gammonclock",),
                  ("usermod -a -G gammonclock-arbiters,gammonclock anna",),
                  ("usermod -a -G gammonclock-arbiters,gammonclock boris",),
                  ("systemctl daemon-reload && systemctl enable gammonclock",),
                  ("udevadm control --reload",)):
        assert len(lines_with(out, "install: left for the Pi, not run in a staging root: ",
                              *words)) == 1, words
    assert not lines_with(out, "install: would ")      # not changes to the staging tree


def test_the_next_steps_are_the_new_match_flow(checkout, tmp_path):
    out = staged(checkout, tmp_path)
    steps = out[out.index("install: next steps:"):]
    for words in (("sudo nano /etc/gammonclock/match.toml", "[table] id"),
                  ("gammonclock check-config /etc/gammonclock/device.toml "
                   "/etc/gammonclock/match.toml",),
                  ("sudo systemctl stop gammonclock; gammonclock check-hardware "
                   "--device /etc/gammonclock/device.toml",),
                  ("sudo systemctl start gammonclock",),
                  ("gammonclock arbiter new-match FILE", "USB", "restart does NOT change"),):
        assert len(lines_with(steps, "install:   ", *words)) == 1, words
    assert "split" not in steps                      # nothing old to split


# --- a second run ---------------------------------------------------------------------------------

def test_a_second_run_changes_nothing_and_says_so(checkout, tmp_path):
    staged(checkout, tmp_path)
    before = listing(tmp_path)
    out = staged(checkout, tmp_path)
    assert listing(tmp_path) == before
    for what in (f"the code in {tmp_path}/{CODE}", f"{tmp_path}/{CONFIG_DIR} (mode 0750)",
                 f"{tmp_path}/{DEVICE_FILE} kept", f"{tmp_path}/{MATCH} kept",
                 f"the unit {tmp_path}/{UNIT}", f"the USB stick's unit {tmp_path}/{USB_UNIT}",
                 f"the USB stick's udev rule {tmp_path}/{USB_RULE}",
                 f"the devices' udev rule (GPIO and I2C to their groups) {tmp_path}/{DEVICES_RULE}",
                 f"the command /{COMMAND_LINK} ->"):
        assert len(lines_with(out, what, "(already done")) == 1, what
    assert "install: nothing changed: everything was already done" in out


def test_the_arbiters_config_files_are_kept(checkout, tmp_path):
    staged(checkout, tmp_path)
    edited = {MATCH: '[match]\nlength = 11\n[players]\nleft = "Anna"\nright = "Boris"\n',
              DEVICE_FILE: '[table]\nid = "table-12"\n'}
    for name, text in edited.items():
        (tmp_path / name).write_text(text)
    out = staged(checkout, tmp_path)
    for name, text in edited.items():
        assert (tmp_path / name).read_text() == text
        assert lines_with(out, f"{tmp_path / name} kept as it is, never overwritten")
    assert "WARNING" not in out


def test_a_changed_usb_rule_is_put_back(checkout, tmp_path):
    staged(checkout, tmp_path)
    rule = tmp_path / USB_RULE
    rule.write_text("# edited\n")
    out = staged(checkout, tmp_path)
    assert rule.read_bytes() == (checkout / USB_RULE_SOURCE).read_bytes()
    assert lines_with(out, "installed the USB stick's udev rule", str(rule))


def test_a_command_that_is_not_ours_is_left_alone(checkout, tmp_path):
    link = tmp_path / COMMAND_LINK
    link.parent.mkdir(parents=True)
    link.write_text("#!/bin/sh\necho another gammonclock\n")
    out = staged(checkout, tmp_path)
    assert link.read_text() == "#!/bin/sh\necho another gammonclock\n"
    assert lines_with(out, "warning:", str(link), "left as it is")


# --- a match.toml from before the device/match split ---------------------------------------------

def test_an_old_combined_match_file_is_reported_and_left_as_it_is(checkout, tmp_path):
    match = tmp_path / MATCH
    match.parent.mkdir(parents=True)
    match.write_text(OLD_COMBINED_MATCH)
    first, second = staged(checkout, tmp_path), staged(checkout, tmp_path)
    assert match.read_text() == OLD_COMBINED_MATCH
    assert (tmp_path / DEVICE_FILE).read_bytes() == (checkout / DEVICE_EXAMPLE).read_bytes()
    for out in (first, second):
        warning = lines_with(out, "install: WARNING:", str(match), "device sections")
        assert len(warning) == 1
        assert ("(line 8 [table], line 11 [arbiter], line 14 [hardware], "
                "line 17 [displays.left])") in warning[0]
        assert "the clock will refuse it as a match file. Split it by hand" in warning[0]
        steps = out[out.index("install: next steps:"):]
        assert lines_with(steps, "install:   1. FIRST split /etc/gammonclock/match.toml")
        assert lines_with(steps, "install:   2. set the match")
    assert "install: nothing changed: everything was already done" in second


@pytest.mark.parametrize(("text", "old"), [
    ('[match]\nlength = 7\n[pins]\nleft = 17\n', True),
    ('[match]\nlength = 7\n  [ hall ]\nbroker = "mqtt://h"\n', True),     # spaces are TOML too
    ('[match]\nlength = 7\n[displays.right]\naddress = 0x3D\n', True),
    ('[match]\nlength = 7\n[buttons]\nhold_s = 2.0\n', True),       # a device section too
    ('[match]\nlength = 7\n[players]\nleft = "A"\n[time]\nmode = "none"\n[breaks]\n'
     'length = "5m"\n[event]\nname = "Open"\n[display]\nlanguage = "ru"\n', False),
    ('[match]\nlength = 7\n# [pins] left for the device.toml\n', False),   # a comment
    ('[match]\nlength = 7\n[tablet]\n', False),          # not a device section's name
])
def test_only_device_sections_make_a_match_file_old(checkout, tmp_path, text, old):
    match = tmp_path / MATCH
    match.parent.mkdir(parents=True)
    match.write_text(text)
    out = staged(checkout, tmp_path)
    assert bool(lines_with(out, "WARNING:", "device sections")) == old
    assert match.read_text() == text


def test_new_code_replaces_the_old_and_keeps_the_venv(checkout, tmp_path):
    staged(checkout, tmp_path)
    code = tmp_path / CODE
    (code / "gone.py").write_text("# a file of an older version\n")
    (code / "pyproject.toml").write_text("# changed\n")
    (code / ".venv").mkdir()
    (code / ".venv" / "kept").write_text("the venv's\n")
    out = staged(checkout, tmp_path)
    assert lines_with(out, "copied the code", f"to {code}")
    assert not (code / "gone.py").exists()
    assert (code / "pyproject.toml").read_bytes() == (ROOT / "pyproject.toml").read_bytes()
    assert (code / ".venv" / "kept").read_text() == "the venv's\n"
    assert not list((tmp_path / "opt").glob(".gammonclock*"))     # no scratch folder left


# --- a dry run ------------------------------------------------------------------------------------

def test_a_dry_run_changes_nothing_and_says_what_each_step_would_do(checkout, tmp_path):
    run = install(checkout, tmp_path, "--dry-run", "--arbiter", "anna")   # the venv's steps too
    assert run.returncode == 0, run.stderr
    assert list(tmp_path.iterdir()) == []
    for words in (("left for the Pi", "apt-get install",),             # 1. packages
                  ("warning: no", "I2C left as it is",),               # 2. I2C (no config.txt)
                  ("left for the Pi", "useradd",),                     # 3. users
                  ("left for the Pi", "usermod", "anna"),
                  ("would copy the code", f"to {tmp_path}/{CODE}"),    # 4. the code
                  ("would link", COMMAND_LINK),
                  ("would run /", "-m venv --system-site-packages"),
                  ("would run", "/.venv/bin/pip install -q", "[report,hall]"),
                  ("would make", CONFIG_DIR), ("would place", DEVICE_FILE),   # 5. the config
                  ("would place", MATCH),
                  ("would install the unit", UNIT),                    # 6. the units, USB rule
                  ("would install the USB stick's unit", USB_UNIT),
                  ("would install the USB stick's udev rule", USB_RULE),
                  ("would install the devices' udev rule", DEVICES_RULE),
                  ("left for the Pi", "systemctl daemon-reload && systemctl enable"),
                  ("left for the Pi", "udevadm control --reload",)):
        assert len(lines_with(run.stdout, "install: ", *words)) == 1, words
    assert "install: dry run: 11 changes to make; nothing was changed" in run.stdout
    assert lines_with(run.stdout, "check-config /etc/gammonclock/device.toml "
                                  "/etc/gammonclock/match.toml")            # 7. next steps


def would_lines(output: str) -> list[str]:
    return [line for line in output.splitlines() if line.startswith("install: would ")]


@pytest.mark.parametrize("config_txt", [None, "dtparam=audio=on\n"])
@pytest.mark.parametrize("args", [("--skip-venv",), ("--arbiter", "anna")])
def test_a_dry_runs_count_is_its_would_lines_and_what_the_run_then_counts(checkout, tmp_path,
                                                                          config_txt, args):
    if config_txt is not None:                 # three more changes: I2C on, its speed, i2c-dev
        (tmp_path / "boot/firmware").mkdir(parents=True)
        (tmp_path / "boot/firmware/config.txt").write_text(config_txt)
    dry = install(checkout, tmp_path, "--dry-run", *args)
    assert dry.returncode == 0, dry.stderr
    counted = len(would_lines(dry.stdout))
    assert counted == (9 if config_txt is None else 12) + (0 if "--skip-venv" in args else 2)
    assert f"install: dry run: {counted} changes to make; nothing was changed" in dry.stdout
    if "--skip-venv" in args:                  # the run itself, without pip's minutes
        assert f"install: done: {counted} changes" in staged(checkout, tmp_path)


def test_a_dry_run_takes_a_staging_root_that_does_not_exist_yet(checkout, tmp_path):
    nowhere = tmp_path / "new" / "root"
    run = install(checkout, nowhere, "--dry-run", "--skip-venv")
    assert run.returncode == 0, run.stderr
    assert not (tmp_path / "new").exists()                  # it made nothing
    assert lines_with(run.stdout, "install: would copy the code", f"to {nowhere}/{CODE}")
    assert lines_with(run.stdout, "install: would place", f"{nowhere}/{MATCH}")
    counted = len(would_lines(run.stdout))
    assert f"install: dry run: {counted} changes to make; nothing was changed" in run.stdout
    assert lines_with(run.stdout, f"{nowhere} does not exist yet", f"mkdir -p {nowhere}")
    # A file in the way is refused by the dry run as by the run itself.
    (tmp_path / "file").write_text("not a folder\n")
    for args in (("--dry-run",), ()):
        refused = install(checkout, tmp_path / "file", *args)
        assert refused.returncode == 1
        assert f"--root {tmp_path}/file: no such folder" in refused.stderr


def test_a_dry_run_after_a_run_has_nothing_to_do(checkout, tmp_path):
    staged(checkout, tmp_path)
    before = listing(tmp_path)
    out = staged(checkout, tmp_path, "--dry-run")
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


# What the installer appends for the panels' bus speed (400 kHz) when none is set.
FAST_MODE = ("\n# The panels at I2C fast mode (scripts/install)\n[all]\n"
             "dtparam=i2c_arm_baudrate=400000\n")


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
def test_i2c_is_turned_on_in_config_txt_once(checkout, tmp_path, place, text, expected):
    config_txt = tmp_path / place / "config.txt"
    config_txt.parent.mkdir(parents=True)
    config_txt.write_text(text)
    first, second = staged(checkout, tmp_path), staged(checkout, tmp_path)
    assert config_txt.read_text() == expected + FAST_MODE
    assert lines_with(second, f"I2C on in {config_txt} (already done)")
    assert lines_with(second, f"the I2C speed set in {config_txt} (already done")
    assert (tmp_path / "etc/modules-load.d/gammonclock.conf").read_text().endswith("\ni2c-dev\n")
    assert lines_with(second, "i2c-dev module loaded at boot (already done)")
    assert ("turned I2C on" in first) == (text != expected)


@pytest.mark.parametrize("line", ["dtparam=i2c_arm_baudrate=100000",
                                  "dtparam=i2c_arm=on,i2c_arm_baudrate=1000000"])
def test_an_i2c_speed_already_set_is_kept(checkout, tmp_path, line):
    config_txt = tmp_path / "boot/firmware/config.txt"
    config_txt.parent.mkdir(parents=True)
    config_txt.write_text(f"dtparam=i2c_arm=on\n{line}\n")
    out = staged(checkout, tmp_path)
    assert config_txt.read_text() == f"dtparam=i2c_arm=on\n{line}\n"
    assert lines_with(out, "the I2C speed set in", "kept as it is")


def test_i2c_dev_already_in_etc_modules_is_left_alone(checkout, tmp_path):
    (tmp_path / "boot/firmware").mkdir(parents=True)
    (tmp_path / "boot/firmware/config.txt").write_text("dtparam=i2c_arm=on\n")
    (tmp_path / "etc").mkdir()
    (tmp_path / "etc/modules").write_text("i2c-dev\n")
    out = staged(checkout, tmp_path)
    assert not (tmp_path / "etc/modules-load.d").exists()
    assert lines_with(out, "i2c-dev module loaded at boot (already done)")


def test_without_a_config_txt_i2c_is_a_warning_not_a_failure(checkout, tmp_path):
    out = staged(checkout, tmp_path)
    assert lines_with(out, "install: warning: no", "config.txt", "I2C left as it is")


# --- failures -------------------------------------------------------------------------------------

@pytest.mark.parametrize(("in_the_way", "step", "not_done"), [
    (CONFIG_DIR, "5/7 (the config)", UNIT),                     # a file where a folder goes
    ("etc/udev", "6/7 (the units, USB rule)", None),
])
def test_a_failing_step_is_named_and_stops_the_run(checkout, tmp_path, in_the_way, step,
                                                   not_done):
    (tmp_path / in_the_way).parent.mkdir(parents=True, exist_ok=True)
    (tmp_path / in_the_way).write_text("a file where a folder goes\n")
    run = install(checkout, tmp_path, "--skip-venv")
    assert run.returncode != 0
    assert f"install: FAILED in step {step}" in run.stderr
    assert "next steps" not in run.stdout                   # nothing after it was done
    if not_done:
        assert not (tmp_path / not_done).exists()


@pytest.mark.parametrize(("args", "status", "error"), [
    (["--bogus"], 2, "install: unknown argument: --bogus"),
    (["--arbiter"], 2, "usage: sudo scripts/install"),
    (["--arbiter", "Bob Smith"], 1, "--arbiter Bob Smith: not a login name"),
    (["--arbiter", "x;rm"], 1, "not a login name"),
])
def test_bad_arguments_are_refused_before_any_change(checkout, tmp_path, args, status, error):
    run = install(checkout, tmp_path, *args)
    assert (run.returncode, list(tmp_path.iterdir())) == (status, [])
    assert error in run.stderr


@pytest.mark.parametrize("missing", [USB_RULE_SOURCE, USB_UNIT_SOURCE, DEVICE_EXAMPLE,
                                     MATCH_EXAMPLE, DEVICES_RULE_SOURCE])
def test_a_checkout_without_a_file_it_installs_is_refused(tmp_path, missing):
    checkout = make_checkout(tmp_path / "checkout")
    (checkout / missing).unlink()
    (tmp_path / "root").mkdir()
    run = install(checkout, tmp_path / "root")
    assert run.returncode == 1
    assert f"is not a gammonclock checkout: no {missing}" in run.stderr
    assert list((tmp_path / "root").iterdir()) == []


def test_a_staging_root_that_does_not_exist_is_refused(checkout, tmp_path):
    run = install(checkout, tmp_path / "nowhere")
    assert run.returncode == 1
    assert f"--root {tmp_path}/nowhere: no such folder" in run.stderr


def test_the_usage_is_the_documented_one():
    run = subprocess.run(["bash", str(ROOT / "scripts/install"), "--help"], capture_output=True,
                         text=True)
    assert run.returncode == 0
    assert run.stdout.splitlines()[0] == (
        "usage: sudo scripts/install [--root DIR] [--dry-run] [--arbiter LOGIN]... [--skip-venv] "
        "[--offline BUNDLE] [--time-server HOST]")


# --- the docs follow the installer ---------------------------------------------------------------

def test_install_md_gives_the_commands_the_installer_prints_and_no_restart_for_a_new_match(
        checkout, tmp_path):
    out = staged(checkout, tmp_path)
    doc = (ROOT / "hardware_docs/install.md").read_text(encoding="utf-8")
    for command in ("gammonclock check-config /etc/gammonclock/device.toml "
                    "/etc/gammonclock/match.toml",
                    "gammonclock check-hardware --device /etc/gammonclock/device.toml",
                    "gammonclock arbiter new-match", "journalctl -u 'gammonclock-usb@*'"):
        assert command in doc, command
    for command in ("gammonclock check-config /etc/gammonclock/device.toml "
                    "/etc/gammonclock/match.toml",
                    "gammonclock check-hardware --device /etc/gammonclock/device.toml",
                    "gammonclock arbiter new-match"):
        assert command in out, command
    assert "a changed file starts a new match" not in doc


# --- any Pi OS: Raspberry Pi OS, Debian 12, Ubuntu 24.04 (issue 21) -------------------------------
# The installer run on "the system" (no --root) as a dry run, with the commands that tell what the
# system has stubbed: dpkg-query (installed), apt-cache policy (the archive), getent and id (groups,
# logins). The stubs of the commands that change something record a call and fail: a dry run
# must not call them.

# Each stub starts with `listed WORD LIST`: whether WORD is one of LIST's words.
LISTED = 'listed() { local w; for w in $2; do [ "$w" = "$1" ] && return 0; done; return 1; }'
STUBS = {
    "dpkg-query": """listed "${!#}" "$STUB_INSTALLED" || exit 1
echo -n 'install ok installed'""",
    "apt-cache": """[ "$1" = policy ] || exit 1
candidate=""
listed "$2" "$STUB_ARCHIVE" && candidate=1.0-1
listed "$2" "$STUB_KNOWN_NO_CANDIDATE" && candidate="(none)"
[ -z "$candidate" ] || printf '%s:\\n  Installed: (none)\\n  Candidate: %s\\n' "$2" "$candidate"
true""",
    "getent": """listed "$2" "$STUB_GROUPS" || exit 2
echo "$2:x:999:"
true""",
    "id": """case $1 in
  -u) listed "$2" "$STUB_USERS" && echo 1000 ;;
  -nG) listed "$2" "$STUB_USERS" && echo "$2" ;;
  *) exec /usr/bin/id "$@" ;;
esac""",
    "systemctl": "exit 1",
}
CHANGING = ("apt-get", "groupadd", "useradd", "usermod", "udevadm")


@pytest.fixture
def stubs(tmp_path: Path) -> Path:
    folder = tmp_path / "stubs"
    folder.mkdir()
    for name, body in STUBS.items():
        (folder / name).write_text(f"#!/bin/bash\n{LISTED}\n{body}\n")
    for name in CHANGING:
        (folder / name).write_text(f'#!/bin/bash\necho "{name} $*" >> "$STUB_LOG"\nexit 1\n')
    for path in folder.iterdir():
        path.chmod(0o755)
    return folder


def on_the_system(checkout: Path, stubs: Path, system: dict[str, str],
                  *args: str) -> subprocess.CompletedProcess[str]:
    """A dry run of the installer on "the system" that `system` describes, through the stubs."""
    env = {"PATH": f"{stubs}:/usr/bin:/bin:/usr/sbin:/sbin", "LANG": "C.UTF-8",
           "STUB_LOG": str(stubs / "calls.log"), "STUB_USERS": "anna", **system}
    return subprocess.run(["bash", str(checkout / "scripts/install"), "--dry-run",
                           "--arbiter", "anna", *args],
                          capture_output=True, text=True, timeout=60, env=env)


RASPBERRY_PI_OS = {"STUB_INSTALLED": "python3-venv i2c-tools", "STUB_ARCHIVE": "python3-lgpio",
                   "STUB_GROUPS": "gpio i2c dialout"}
DEBIAN_12 = {"STUB_INSTALLED": "python3-venv i2c-tools", "STUB_ARCHIVE": "",
             "STUB_GROUPS": "i2c dialout"}
UBUNTU_24_04 = {"STUB_INSTALLED": "i2c-tools", "STUB_ARCHIVE": "python3-venv",
                "STUB_KNOWN_NO_CANDIDATE": "python3-lgpio", "STUB_GROUPS": "dialout"}


@pytest.mark.parametrize(("system", "apt", "new_groups", "extras"), [
    (RASPBERRY_PI_OS, "python3-lgpio", [], "report,hall"),
    (DEBIAN_12, None, ["gpio"], "report,hall,pi"),
    (UBUNTU_24_04, "python3-venv", ["gpio", "i2c"], "report,hall,pi"),
], ids=["raspberry-pi-os", "debian-12", "ubuntu-24.04"])
def test_lgpio_from_the_archive_where_it_is_else_from_pypi_and_the_missing_groups_made(
        checkout, stubs, system, apt, new_groups, extras):
    run = on_the_system(checkout, stubs, system)
    assert run.returncode == 0, run.stderr
    out = run.stdout
    installs = lines_with(out, "install: would run apt-get update && apt-get install -y")
    assert [line.rsplit("-y ", 1)[1] for line in installs] == ([apt] if apt else [])
    from_pypi = lines_with(out, "install: python3-lgpio: not in this distribution's archive",
                           "lgpio comes from PyPI instead (the pi extra)")
    assert len(from_pypi) == (extras == "report,hall,pi")
    made = [line.rsplit(" ", 1)[1] for line in lines_with(out, "install: would run groupadd "
                                                          "--system ")]
    assert made == ["gammonclock-arbiters", *new_groups]
    for group in {"gpio", "i2c", "dialout"} - set(new_groups):
        assert lines_with(out, f"install: group {group} (already done)")
    assert lines_with(out, "would run usermod -a -G gpio,i2c,dialout,gammonclock-arbiters "
                           "gammonclock")
    assert lines_with(out, "would run", "/.venv/bin/pip install -q", f"[{extras}]'")
    counted = len(would_lines(out))
    assert f"install: dry run: {counted} changes to make; nothing was changed" in out
    assert not (stubs / "calls.log").exists()                    # nothing was changed


def test_the_unit_names_no_group_a_system_may_lack():
    """SupplementaryGroups=gpio on Debian (no gpio group) stopped every start with a bare
    216/GROUP: the groups are the service user's, which the installer makes and fills."""
    unit = (ROOT / UNIT_SOURCE).read_text(encoding="utf-8")
    assert not [line for line in unit.splitlines() if line.startswith("SupplementaryGroups=")]
    check = (ROOT / "scripts/check-unit").read_text(encoding="utf-8")
    assert "grep -q '^SupplementaryGroups=' systemd/gammonclock.service" in check


def test_the_devices_rule_gives_the_gpio_and_i2c_devices_to_the_groups_the_user_is_put_in():
    rules = [line for line in (ROOT / DEVICES_RULE_SOURCE).read_text().splitlines()
             if line and not line.startswith("#")]
    assert rules == ['SUBSYSTEM=="gpio", KERNEL=="gpiochip*", GROUP="gpio", MODE="0660"',
                     'KERNEL=="gpiomem*", GROUP="gpio", MODE="0660"',
                     'SUBSYSTEM=="i2c-dev", GROUP="i2c", MODE="0660"']


# --- --offline BUNDLE (issue 21) -----------------------------------------------------------------

def make_bundle(checkout: Path, into: Path, arch: str = os.uname().machine,
                wheels: tuple[str, ...] = ("lgpio-0.2.2.0-cp311-cp311-any.whl",)) -> Path:
    """scripts/bundle's format: gammonclock-bundle/{MANIFEST.txt, code/, wheels/ARCH/*.whl}.
    The code is `checkout`'s files with one marker file, to tell it from the checkout's."""
    top = into / "gammonclock-bundle"
    listed = subprocess.run(["git", "-c", f"safe.directory={checkout}", "-C", str(checkout),
                             "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                            capture_output=True, text=True).stdout
    names = [n for n in listed.split("\0") if n and (checkout / n).is_file()]
    for name in names or installed_files(checkout):
        (top / "code" / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(checkout / name, top / "code" / name)
    (top / "code/FROM_THE_BUNDLE").write_text("the bundle's code\n")
    (top / "wheels" / arch).mkdir(parents=True)
    for wheel in wheels:
        (top / "wheels" / arch / wheel).write_bytes(b"a wheel\n")
    (top / "MANIFEST.txt").write_text(f"version 0.1.0\narch {arch}\n")
    bundle = into / "gammonclock-bundle.tar.gz"
    subprocess.run(["tar", "-czf", str(bundle), "-C", str(into), "gammonclock-bundle"],
                   check=True)
    shutil.rmtree(top)
    return bundle


def test_offline_installs_the_bundles_code(checkout, tmp_path):
    bundle = make_bundle(checkout, tmp_path / "stick")
    (tmp_path / "root").mkdir()
    out = staged(checkout, tmp_path / "root", "--offline", str(bundle))
    assert lines_with(out, f"install: offline: from the bundle {bundle} (version 0.1.0, 1 wheels "
                           f"for {os.uname().machine}): no network is used")
    code = tmp_path / "root" / CODE
    assert (code / "FROM_THE_BUNDLE").read_text() == "the bundle's code\n"
    assert (tmp_path / "root" / UNIT).read_bytes() == (checkout / UNIT_SOURCE).read_bytes()
    again = staged(checkout, tmp_path / "root", "--offline", str(bundle))
    assert "install: nothing changed: everything was already done" in again
    # The unpacked folder does as well as the archive.
    subprocess.run(["tar", "-xzf", str(bundle), "-C", str(tmp_path / "stick")], check=True)
    unpacked = staged(checkout, tmp_path / "root", "--offline",
                      str(tmp_path / "stick/gammonclock-bundle"))
    assert "install: nothing changed: everything was already done" in unpacked


def test_offline_pip_installs_from_the_bundles_wheels_only(checkout, tmp_path):
    """pip with --no-index --find-links wheels/ARCH: a stand-in venv records what pip is told."""
    bundle = make_bundle(checkout, tmp_path / "stick")
    root = tmp_path / "root"
    venv = root / CODE / ".venv/bin"
    venv.mkdir(parents=True)
    record = tmp_path / "pip.args"
    (venv / "python").write_text('#!/bin/sh\ncase "$*" in *find_spec*) echo /nonexistent;; '
                                 'esac\nexit 0\n')
    (venv / "pip").write_text(f'#!/bin/sh\nprintf "%s\\n" "$@" > {record}\n')
    (venv / "gammonclock").write_text("#!/bin/sh\nexit 0\n")
    for stub in venv.iterdir():
        stub.chmod(0o755)
    run = install(checkout, root, "--offline", str(bundle))
    assert run.returncode == 0, run.stderr
    args = record.read_text().splitlines()
    index = args.index("--find-links")
    assert "--no-index" in args
    assert args[index + 1].endswith(f"/gammonclock-bundle/wheels/{os.uname().machine}")
    assert args[-1] == f"{root}/{CODE}[report,hall]"
    assert lines_with(run.stdout, "installed gammonclock[report,hall]", "and the bundle's wheels")


@pytest.mark.parametrize(("make", "error"), [
    (lambda c, d: make_bundle(c, d, arch="armv7l"),
     "the bundle holds no wheels for this machine's architecture {machine} (it holds: armv7l); "
     "make one for {machine} with scripts/bundle where there is network"),
    (lambda c, d: make_bundle(c, d, wheels=()), "the bundle holds no wheels"),
    (lambda c, d: (d / "x.tar.gz").write_text("not a tar\n") and d / "x.tar.gz",
     "not a .tar.gz made by scripts/bundle"),
    (lambda c, d: d / "nowhere.tar.gz", "no such file"),
    (lambda c, d: (d / "empty").mkdir() or d / "empty",
     "not a gammonclock bundle (no gammonclock-bundle/MANIFEST.txt and code/ in it)"),
])
def test_a_bundle_that_cannot_install_here_is_refused_before_any_change(checkout, tmp_path, make,
                                                                      error):
    (tmp_path / "stick").mkdir()
    bundle = make(checkout, tmp_path / "stick")
    (tmp_path / "root").mkdir()
    run = install(checkout, tmp_path / "root", "--offline", str(bundle))
    assert run.returncode == 1
    assert error.format(machine=os.uname().machine) in run.stderr
    assert list((tmp_path / "root").iterdir()) == []


def test_offline_says_which_debian_packages_are_missing(checkout, stubs, tmp_path):
    bundle = make_bundle(checkout, tmp_path / "stick")
    run = on_the_system(checkout, stubs, {**DEBIAN_12, "STUB_INSTALLED": "i2c-tools"},
                        "--offline", str(bundle))
    assert run.returncode == 1
    assert ("install: offline: the Debian packages python3-venv are not installed, and a bundle "
            "holds no Debian packages: install them first where there is network (sudo apt-get "
            "install -y python3-venv), then run this again") in run.stderr
    assert not (stubs / "calls.log").exists()


@pytest.mark.parametrize(("system", "extras", "note"), [
    (DEBIAN_12, "report,hall,pi", "install: python3-lgpio: not installed: lgpio comes from the "
                             "bundle's wheels instead (the pi extra)"),
    ({**RASPBERRY_PI_OS, "STUB_INSTALLED": "python3-venv i2c-tools python3-lgpio"}, "report,hall",
     "install: Debian package python3-lgpio (already done)"),
])
def test_offline_takes_lgpio_from_the_bundle_where_debians_is_not_installed(
        checkout, stubs, tmp_path, system, extras, note):
    bundle = make_bundle(checkout, tmp_path / "stick")
    run = on_the_system(checkout, stubs, system, "--offline", str(bundle))
    assert run.returncode == 0, run.stderr
    assert note in run.stdout.splitlines()
    assert lines_with(run.stdout, "would run", "pip install -q --no-index --find-links",
                      f"[{extras}]'")
    assert not lines_with(run.stdout, "apt-get")


def test_a_damaged_bundle_is_refused_by_its_checksums(checkout, tmp_path):
    """scripts/bundle writes SHA256SUMS: a file that differs from it (a bad copy) is named."""
    bundle = make_bundle(checkout, tmp_path / "stick")
    subprocess.run(["tar", "-xzf", str(bundle), "-C", str(tmp_path / "stick")], check=True)
    top = tmp_path / "stick/gammonclock-bundle"
    subprocess.run("find . -type f ! -name SHA256SUMS -printf '%P\\0' | xargs -0 sha256sum "
                   "> SHA256SUMS", shell=True, cwd=top, check=True)
    (tmp_path / "root").mkdir()
    assert install(checkout, tmp_path / "root", "--skip-venv", "--offline",
                   str(top)).returncode == 0
    (top / "code/FROM_THE_BUNDLE").write_text("a byte lost on the way\n")
    (tmp_path / "other").mkdir()
    run = install(checkout, tmp_path / "other", "--skip-venv", "--offline", str(top))
    assert run.returncode == 1
    assert "the bundle is damaged (a file differs from its SHA256SUMS" in run.stderr
    assert list((tmp_path / "other").iterdir()) == []


def test_install_md_says_what_the_other_systems_and_an_offline_card_need():
    doc = " ".join((ROOT / "hardware_docs/install.md").read_text(encoding="utf-8").split())
    for words in ("Raspberry Pi OS (Bookworm), Debian 12 and Ubuntu 24.04",
                  "`--offline BUNDLE` installs with no network",
                  "An offline install needs `python3-venv` and `i2c-tools` installed already",
                  "Status: \"failed to start: …\"", "status=216/GROUP"):
        assert words in doc, words

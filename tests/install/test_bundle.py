"""scripts/bundle (issue 21, an offline install): an archive built for aarch64 holds the code as
`git ls-files` lists it, the manifest, checksums, and the wheels of everything the Pi installs
(lgpio too, whose marker names the Pi's machine); they resolve with no index, as on the Pi. A
requirement with no aarch64 wheel is named with what to do, and nothing is written; with
--allow-sdist its source is shipped with what builds it.

The bundles download from the package index (PyPI, a minute at most; pip's cache makes a second
run quicker): slow-marked."""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys
import tarfile
import tomllib
from importlib.machinery import SourceFileLoader
from importlib.util import module_from_spec, spec_from_loader
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]
BUNDLE = ROOT / "scripts" / "bundle"
TOP = "gammonclock-bundle"

# pip as the Pi's runs it: its markers judged with the Pi's machine (pip itself would use this
# machine's, and leave lgpio out), and no configuration of this machine's (no index, no
# find-links: only the bundle's folder).
PIP_AS_ON_A_PI = """\
import sys
from pip._vendor.packaging import markers
host = markers.default_environment
markers.default_environment = lambda: {**host(), "platform_machine": "aarch64"}
from pip._internal.cli.main import main
sys.exit(main(sys.argv[1:]))
"""
# Raspberry Pi OS Bookworm: glibc 2.36
AARCH64_PLATFORMS = [f"manylinux_2_{minor}_aarch64" for minor in range(17, 37)]


def bundle_script() -> ModuleType:
    loader = SourceFileLoader("bundle_script", str(BUNDLE))
    spec = spec_from_loader("bundle_script", loader)
    assert spec is not None
    module = module_from_spec(spec)
    sys.modules[spec.name] = module          # its dataclasses look their module up
    loader.exec_module(module)
    return module


def run_bundle(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(BUNDLE), *map(str, args)], capture_output=True,
                          text=True, timeout=900, check=False)


def extract(archive: Path, into: Path) -> Path:
    with tarfile.open(archive) as tar:
        tar.extractall(into, filter="data")
    return into / TOP


def manifest_of(top: Path) -> list[tuple[str, str]]:
    lines = (top / "MANIFEST.txt").read_text(encoding="utf-8").splitlines()
    return [tuple(line.split(" ", 1)) for line in lines]   # type: ignore[misc]


def git(*args: str, cwd: Path = ROOT) -> str:
    return subprocess.run(["git", "-C", str(cwd), *args], capture_output=True, text=True,
                          check=True).stdout


def canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def fake_checkout(folder: Path, dependencies: list[str]) -> Path:
    """A git checkout of a tiny project named gammonclock that needs `dependencies`."""
    (folder / "firmware" / "gammonclock").mkdir(parents=True)
    (folder / "firmware" / "gammonclock" / "__init__.py").write_text("")
    (folder / "pyproject.toml").write_text(
        '[build-system]\nrequires = ["setuptools>=68"]\nbuild-backend = "setuptools.build_meta"\n'
        f'[project]\nname = "gammonclock"\nversion = "0.0.1"\ndependencies = {dependencies!r}\n'
        '[project.optional-dependencies]\npi = []\nhall = []\n'
        '[tool.setuptools.packages.find]\nwhere = ["firmware"]\n'.replace("'", '"'))
    git("init", "-q", cwd=folder)
    git("add", "-A", cwd=folder)
    git("-c", "user.name=t", "-c", "user.email=t@example.org", "commit", "-q", "-m", "x",
        cwd=folder)
    return folder


# --- the aarch64 bundle of this checkout ------------------------------------------------------

@pytest.mark.slow
def test_an_aarch64_bundle_holds_the_code_and_every_wheel_and_installs_with_no_index(tmp_path):
    archive = tmp_path / "out" / "gammonclock-bundle.tar.gz"
    result = run_bundle("--arch", "aarch64", "-o", archive)
    assert result.returncode == 0, result.stdout + result.stderr
    top = extract(archive, tmp_path / "x")
    assert sorted(p.name for p in top.iterdir()) == ["MANIFEST.txt", "SHA256SUMS", "code",
                                                     "wheels"]
    assert [p.name for p in (top / "wheels").iterdir()] == ["aarch64"]
    wheels = top / "wheels" / "aarch64"
    names = sorted(p.name for p in wheels.iterdir())
    assert names and all(name.endswith(".whl") for name in names), names

    # The manifest: what the installer reads.
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    manifest = manifest_of(top)
    keys = dict(manifest)
    assert keys["format"] == "1"
    assert keys["version"] == pyproject["project"]["version"]
    assert keys["commit"] == git("rev-parse", "HEAD").strip()
    assert [v for k, v in manifest if k == "arch"] == ["aarch64"]
    assert [v for k, v in manifest if k == "python"] == ["3.11"]
    assert keys["wheels"] == keys["wheels.aarch64"] == str(len(names))
    install_extras = re.search(r"^EXTRAS=(\S+)", (ROOT / "scripts" / "install").read_text(),
                               re.MULTILINE)
    assert install_extras is not None
    extras = set(keys["extras"].split(","))
    assert extras >= {"pi", "hall"} | set(install_extras.group(1).split(","))

    # The code: the tracked files, as scripts/install copies them, with git's modes; a tracked
    # symbolic link stays one (hall/acl -> the package's copy).
    tracked: dict[str, int | str] = {}
    for entry in git("ls-files", "-s", "-z").split("\0"):
        if entry:
            info, name = entry.split("\t", 1)
            if (ROOT / name).exists() or (ROOT / name).is_symlink():
                tracked[name] = (os.readlink(ROOT / name) if info.startswith("120000")
                                 else 0o755 if info.startswith("100755") else 0o644)
    code = top / "code"
    bundled = {p.relative_to(code).as_posix():
               os.readlink(p) if p.is_symlink() else p.stat().st_mode & 0o777
               for p in code.rglob("*") if p.is_file() or p.is_symlink()}
    assert bundled == tracked
    assert (code / "scripts" / "bundle").read_bytes() == BUNDLE.read_bytes()

    # The checksums cover every other file.
    sums = dict(reversed(line.split("  ", 1)) for line in
                (top / "SHA256SUMS").read_text().splitlines())
    files = {p.relative_to(top).as_posix() for p in top.rglob("*")
             if p.is_file() and not p.is_symlink()}
    assert set(sums) == files - {"SHA256SUMS"}
    for name, digest in sums.items():
        assert hashlib.sha256((top / name).read_bytes()).hexdigest() == digest, name

    # Only wheels a 64-bit Pi runs: pure ones, or aarch64 ones for CPython 3.11.
    for name in names:
        python, abi, platform = name[:-4].split("-")[-3:]
        assert platform == "any" or platform.endswith("aarch64"), name
        assert platform == "any" or python == "cp311", name
    own = [n for n in names if n.startswith("gammonclock-")]
    assert own == [f"gammonclock-{keys['version']}-py3-none-any.whl"]
    packages = {canonical(name.split("-")[0]) for name in names}
    assert {"lgpio", "paho-mqtt", "luma-oled", "gpiozero", "pillow", "setuptools"} <= packages

    # Every requirement resolves from the folder alone, as on the Pi (Python 3.11, aarch64).
    report = tmp_path / "report.json"
    env = {k: v for k, v in os.environ.items() if not k.startswith("PIP_")}
    env["PIP_CONFIG_FILE"] = os.devnull
    platforms = [option for tag in AARCH64_PLATFORMS for option in ("--platform", tag)]
    resolved = subprocess.run(
        [sys.executable, "-c", PIP_AS_ON_A_PI, "install", "--dry-run", "--ignore-installed",
         "--quiet", "--no-index", "--find-links", str(wheels), "--only-binary", ":all:",
         *platforms, "--python-version", "3.11", "--implementation", "cp",
         "--target", str(tmp_path / "t"), "--report", str(report),
         # pip judges Requires-Python by the Python that runs it: here, the tags choose
         *([] if sys.version_info[:2] == (3, 11) else ["--ignore-requires-python"]),
         f"gammonclock[{keys['extras']}]"],
        capture_output=True, text=True, env=env, timeout=300, check=False)
    assert resolved.returncode == 0, resolved.stderr
    installed = {canonical(item["metadata"]["name"])
                 for item in json.loads(report.read_text())["install"]}
    assert "lgpio" in installed and "paho-mqtt" in installed and "scipy" in installed
    # nothing in the bundle that the Pi does not install, but setuptools (the code's build)
    assert packages - installed <= {"setuptools"}
    size = archive.stat().st_size
    print(f"aarch64 bundle: {size / 2**20:.1f} MiB, {len(names)} wheels")


# --- a requirement with no wheel ----------------------------------------------------------------

@pytest.mark.slow
def test_a_requirement_with_no_wheel_for_the_pi_is_named_with_what_to_do(tmp_path):
    # RPi.GPIO: on PyPI as source only, no wheel for any machine.
    checkout = fake_checkout(tmp_path / "project", ["pyserial>=3.5", "RPi.GPIO>=0.7"])
    archive = tmp_path / "out.tar.gz"
    result = run_bundle("--checkout", checkout, "--arch", "aarch64", "-o", archive)
    assert result.returncode == 1
    said = result.stderr
    assert re.search(r"RPi\.GPIO [0-9.]+ \(needed by gammonclock\): none for aarch64, Python 3\.11",
                     said), said
    assert "pyserial" not in said          # it has a wheel: not named
    assert "pip wheel -w pi-wheels 'RPi.GPIO==" in said
    assert "--find-links pi-wheels" in said and "--allow-sdist" in said
    assert "64-bit Raspberry Pi OS" not in said    # that advice is for armv7l
    assert said.rstrip().endswith("bundle: nothing written")
    assert not archive.exists() and list(tmp_path.glob(".out.tar.gz*")) == []


@pytest.mark.slow
def test_a_requirement_on_no_index_at_all_is_said_so(tmp_path):
    checkout = fake_checkout(tmp_path / "project", ["gammonclock-no-such-package-21"])
    result = run_bundle("--checkout", checkout, "-o", tmp_path / "out.tar.gz")
    assert result.returncode == 1
    assert ("gammonclock-no-such-package-21: not on the package index at all, for any platform"
            in result.stderr), result.stderr
    assert not (tmp_path / "out.tar.gz").exists()


@pytest.mark.slow
def test_allow_sdist_ships_the_source_and_what_builds_it(tmp_path):
    checkout = fake_checkout(tmp_path / "project", ["pyserial>=3.5", "RPi.GPIO>=0.7"])
    archive = tmp_path / "out.tar.gz"
    result = run_bundle("--checkout", checkout, "--allow-sdist", "-o", archive)
    assert result.returncode == 0, result.stderr
    assert "as source, built on each Pi at install time: RPi.GPIO" in result.stdout
    top = extract(archive, tmp_path / "x")
    names = sorted(p.name for p in (top / "wheels" / "aarch64").iterdir())
    sources = [n for n in names if not n.endswith(".whl")]
    assert len(sources) == 1 and sources[0].startswith("RPi.GPIO-"), names
    packages = {canonical(n.split("-")[0]) for n in names}
    # its build requirements (setup.py: setuptools and wheel), and no metadata-only stand-in
    assert {"gammonclock", "pyserial", "setuptools", "wheel"} <= packages
    assert not any(n.startswith(("RPi.GPIO-", "RPi_GPIO-")) and n.endswith(".whl")
                   for n in names)
    keys = dict(manifest_of(top))
    assert keys["sources.aarch64"] == "1" and keys["wheels.aarch64"] == str(len(names) - 1)


# --- quick ones ---------------------------------------------------------------------------------

def test_the_message_for_armv7l_points_to_the_64_bit_os_and_piwheels():
    script = bundle_script()
    missing = [script.Missing("numpy", "2.4.6", ["scipy", "matplotlib"], "armv7l", "3.11"),
               script.Missing("pillow", "13.0.0", ["gammonclock"], "armv7l", "3.11")]
    text = script.missing_message(missing, "")
    assert "numpy 2.4.6 (needed by scipy, matplotlib): none for armv7l, Python 3.11" in text
    assert "pillow 13.0.0 (needed by gammonclock): none for armv7l, Python 3.11" in text
    assert "64-bit Raspberry Pi OS" in text and "--arch aarch64" in text
    assert "--extra-index-url https://www.piwheels.org/simple" in text
    assert "pip wheel -w pi-wheels 'numpy==2.4.6' 'pillow==13.0.0'" in text


def test_the_pi_platforms_and_markers():
    script = bundle_script()
    tags = script.platform_tags("aarch64")
    assert tags[0] == "manylinux_2_36_aarch64" and "manylinux_2_17_aarch64" in tags
    assert "manylinux2014_aarch64" in tags and all(t.endswith("aarch64") for t in tags)
    assert "linux_armv7l" in script.platform_tags("armv7l")      # lgpio's armv7l wheels
    environment = script.target_environment("armv7l", "3.12")
    assert environment["platform_machine"] == "armv7l"
    assert environment["python_version"] == "3.12"


def test_a_folder_that_is_not_a_git_checkout_is_refused_before_any_download(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "gammonclock"\nversion = "1"\n')
    result = run_bundle("--checkout", tmp_path, "-o", tmp_path / "out.tar.gz")
    assert result.returncode == 1
    assert "is not a git checkout" in result.stderr and "nothing written" in result.stderr
    assert not (tmp_path / "out.tar.gz").exists()


def test_a_requirement_left_out_by_a_marker_judged_on_this_machine_is_caught(tmp_path):
    script = bundle_script()
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    folder = tmp_path / "aarch64"
    folder.mkdir()
    for name in ("gpiozero-2.0.1-py3-none-any.whl", "luma_oled-3.16.0-py3-none-any.whl",
                 "pillow-13.0.0-cp311-cp311-manylinux_2_28_aarch64.whl",
                 "pyserial-3.5-py2.py3-none-any.whl", "paho_mqtt-2.2.0-py3-none-any.whl",
                 "aiohttp-3.14.5-cp311-cp311-manylinux_2_28_aarch64.whl"):
        (folder / name).touch()
    # lgpio's marker holds on a Pi, and its wheel is not there
    with pytest.raises(script.BundleError, match=r"lgpio .* holds on aarch64"):
        script.check_direct(pyproject, "pi,hall", "aarch64", "3.11", folder)
    script.check_direct(pyproject, "pi,hall", "x86_64", "3.11", folder)   # a PC: no lgpio
    (folder / "lgpio-0.2.2.0-cp311-cp311-manylinux_2_34_aarch64.whl").touch()
    script.check_direct(pyproject, "pi,hall", "aarch64", "3.11", folder)


@pytest.mark.parametrize("line, extras", [
    ("EXTRAS=report", ["hall", "pi", "report"]),
    ('EXTRAS="report,pi"', ["hall", "pi", "report"]),
    ("EXTRAS='report,sim'   # a comment", ["hall", "pi", "report", "sim"]),
])
def test_the_bundle_holds_the_extras_the_installer_installs(tmp_path, line, extras):
    (tmp_path / "scripts").mkdir()
    (tmp_path / "scripts" / "install").write_text(f"#!/bin/bash\n{line}\n")
    assert bundle_script().install_extras(tmp_path) == extras

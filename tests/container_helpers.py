"""A Debian 12 (bookworm, Raspberry Pi OS's base) root made with debootstrap and cached, booted
with `systemd-nspawn --boot` and no network (--private-network), and the bundle installed in it
(scripts/bundle's layout, for this machine's architecture): the real-systemd tests of the clock
(tests/install/test_systemd_container.py) and of the hall's machine
(tests/install/test_systemd_hall.py) use them.

Needs root and the tools scripts/test-deps installs (debootstrap, systemd-container); without them
a test fails and says what is missing (`missing_tools`), never skips. The roots are cached in
$GAMMONCLOCK_TEST_CACHE (default /var/cache/gammonclock-test), each keyed by its suite, mirror and
package list; the wheels likewise, keyed by pyproject.toml's requirements. Each run boots the
cached root read-only with a tmpfs on top (--volatile=overlay): the cache is never changed by a
run. Each test's figures (seconds) are kept in CACHE/last-run-figures.json, which CI prints."""

from __future__ import annotations

import hashlib
import json
import os
import platform
import shutil
import signal
import subprocess
import sys
import tarfile
import time
import tomllib
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
CACHE = Path(os.environ.get("GAMMONCLOCK_TEST_CACHE", "/var/cache/gammonclock-test"))
SUITE = "bookworm"
PYTHON_INSIDE = "3.11"                    # bookworm's python3: the bundle's wheels are for it
MIRROR = os.environ.get("GAMMONCLOCK_TEST_MIRROR", "http://deb.debian.org/debian")
# What a Raspberry Pi OS Lite card has that the clock's install needs (an offline install cannot
# fetch Debian packages): systemd, Python with venv, i2c-tools, and what the installer calls.
ROOT_PACKAGES = ("systemd", "systemd-sysv", "dbus", "python3", "python3-venv", "i2c-tools",
                 "ca-certificates", "passwd", "diffutils")
PATH_INSIDE = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
BUNDLE_INSIDE = "/srv/gammonclock-bundle.tar.gz"
FIGURES = CACHE / "last-run-figures.json"


def missing_tools() -> list[str]:
    """What this machine lacks for a real-systemd test, each with what to do."""
    missing = [f"{tool} (scripts/test-deps installs it: package {package})"
               for tool, package in (("debootstrap", "debootstrap"),
                                     ("systemd-nspawn", "systemd-container"),
                                     ("nsenter", "util-linux"), ("tar", "tar"),
                                     ("losetup", "mount"), ("mkfs.ext4", "e2fsprogs"))
               if shutil.which(tool) is None]
    if os.geteuid() != 0:
        missing.append("root: debootstrap and systemd-nspawn need it (run .ci/run as root)")
    return missing


def run(cmd: list[str], timeout: float, **kwargs: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout,
                          **kwargs)  # type: ignore[call-overload]


HALL_FIGURES = "hall: "                 # the hall's test's keys in FIGURES; the clock's have none


def save_figures(figures: dict[str, float], prefix: str = "") -> None:
    """This run's `figures` into FIGURES, `prefix`ed ("" for the clock's test, HALL_FIGURES for
    the hall's): they replace that test's last ones, the other test's stay. Printed too."""
    CACHE.mkdir(parents=True, exist_ok=True)
    try:
        kept = json.loads(FIGURES.read_text())
    except (OSError, ValueError):
        kept = {}
    if not isinstance(kept, dict):
        kept = {}
    hall = prefix == HALL_FIGURES
    others = {k: v for k, v in kept.items() if k.startswith(HALL_FIGURES) != hall}
    others.update({prefix + k: v for k, v in figures.items()})
    FIGURES.write_text(json.dumps(others, indent=1) + "\n")
    print(f"real-systemd test figures{' (' + prefix.strip(': ') + ')' if prefix else ''}:",
          json.dumps(figures))


# --- the Debian root, cached ----------------------------------------------------------------------

def debian_root(figures: dict[str, float], packages: tuple[str, ...] = ROOT_PACKAGES) -> Path:
    """A bookworm root made by debootstrap with `packages`, built once per package list and
    reused."""
    key = hashlib.sha256(" ".join([SUITE, MIRROR, *packages]).encode()).hexdigest()[:12]
    image = CACHE / f"{SUITE}-{key}"
    done = image / ".gammonclock-test-root"
    if done.exists():
        return image
    CACHE.mkdir(parents=True, exist_ok=True)
    work = CACHE / f".{SUITE}-{key}.{os.getpid()}"
    shutil.rmtree(work, ignore_errors=True)
    started = time.monotonic()
    built = run(["debootstrap", "--variant=minbase", f"--include={','.join(packages)}",
                 SUITE, str(work), MIRROR], timeout=1500)
    if built.returncode != 0:
        shutil.rmtree(work, ignore_errors=True)
        pytest.fail(f"debootstrap {SUITE} from {MIRROR} failed (status {built.returncode}); "
                    f"set GAMMONCLOCK_TEST_MIRROR for another mirror:\n"
                    f"{built.stdout[-3000:]}{built.stderr[-3000:]}")
    for deb in (work / "var/cache/apt/archives").glob("*.deb"):
        deb.unlink()                                          # 100 MB the cache need not keep
    figures["root build (cold), s"] = time.monotonic() - started
    (work / done.name).write_text(f"{SUITE} {MIRROR} {' '.join(packages)}\n")
    try:
        work.rename(image)
    except OSError:                                           # another run finished first
        shutil.rmtree(work, ignore_errors=True)
    return image


# --- the bundle: scripts/bundle's layout, for this machine's architecture -------------------------

def requirements() -> list[str]:
    """What the installer pip-installs offline: the clock's requirements with the extras it
    asks for (report, hall, and pi where there is no python3-lgpio), and the build backend for
    the code."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    extras = project["project"]["optional-dependencies"]
    build = tomllib.loads((ROOT / "pyproject.toml").read_text())["build-system"]["requires"]
    return [*project["project"]["dependencies"], *extras["report"], *extras["hall"],
            *extras["pi"], *build]


def wheels(machine: str, figures: dict[str, float]) -> Path:
    """Every wheel `requirements()` needs for bookworm's CPython on `machine`, cached."""
    wanted = requirements()
    key = hashlib.sha256(" ".join([machine, PYTHON_INSIDE, *wanted]).encode()).hexdigest()[:12]
    folder = CACHE / f"wheels-{machine}-{key}"
    if (folder / ".complete").exists():
        return folder
    work = CACHE / f".wheels-{key}.{os.getpid()}"
    shutil.rmtree(work, ignore_errors=True)
    # Bookworm's glibc is 2.36: every manylinux tag up to it.
    platforms = [f"manylinux_2_{minor}_{machine}" for minor in range(36, 16, -1)]
    platforms += [f"manylinux2014_{machine}", f"linux_{machine}"]
    started = time.monotonic()
    got = run([sys.executable, "-m", "pip", "download", "-q", "--dest", str(work),
               "--only-binary", ":all:", "--python-version", PYTHON_INSIDE,
               "--implementation", "cp", "--abi", "cp" + PYTHON_INSIDE.replace(".", ""),
               *(word for p in platforms for word in ("--platform", p)), *wanted],
              timeout=900)
    if got.returncode != 0:
        shutil.rmtree(work, ignore_errors=True)
        pytest.fail(f"pip download of the bundle's wheels for {machine} failed:\n"
                    f"{got.stderr[-3000:]}")
    figures["wheels download (cold), s"] = time.monotonic() - started
    (work / ".complete").write_text("\n".join(wanted) + "\n")
    try:
        work.rename(folder)
    except OSError:
        shutil.rmtree(work, ignore_errors=True)
    return folder


def checkout_files() -> list[str]:
    """The files a bundle's code/ holds: this work tree's tracked and new files."""
    listed = run(["git", "-c", f"safe.directory={ROOT}", "-C", str(ROOT), "ls-files", "-z",
                  "--cached", "--others", "--exclude-standard"], timeout=60, check=True).stdout
    return [name for name in listed.split("\0") if name and (ROOT / name).is_file()]


def make_bundle(into: Path, machine: str, figures: dict[str, float]) -> Path:
    """gammonclock-bundle.tar.gz for `machine`: made by scripts/bundle where the checkout has it,
    else here in its format (MANIFEST.txt, code/, wheels/MACHINE/) from the cached wheels."""
    bundle = into / "gammonclock-bundle.tar.gz"
    script = ROOT / "scripts/bundle"
    if script.exists():
        started = time.monotonic()
        made = run([sys.executable, str(script), "--arch", machine, "--python", PYTHON_INSIDE,
                    "-o", str(bundle)], timeout=1200, cwd=ROOT)
        assert made.returncode == 0, f"scripts/bundle failed:\n{made.stdout}{made.stderr}"
        figures["scripts/bundle, s"] = time.monotonic() - started
        return bundle
    version = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    manifest = into / "MANIFEST.txt"
    manifest.write_text(f"version {version}\narch {machine}\n")
    with tarfile.open(bundle, "w:gz", compresslevel=1) as tar:
        tar.add(manifest, "gammonclock-bundle/MANIFEST.txt")
        for name in checkout_files():
            tar.add(ROOT / name, f"gammonclock-bundle/code/{name}")
        for wheel in sorted(wheels(machine, figures).glob("*.whl")):
            tar.add(wheel, f"gammonclock-bundle/wheels/{machine}/{wheel.name}")
    return bundle


# --- the container -------------------------------------------------------------------------------

class Container:
    """A booted systemd-nspawn container, its commands run from outside with nsenter. `stick`:
    a block device (a loop device) bound into it."""

    def __init__(self, image: Path, bundle: Path, log: Path, stick: str | None = None,
                 machine: str = "gammonclock-test") -> None:
        self.log = log
        self.stick = stick
        self.nspawn = subprocess.Popen(
            ["systemd-nspawn", "--quiet", "--directory", str(image), "--volatile=overlay",
             "--register=no", "--keep-unit", "--private-network", f"--machine={machine}",
             f"--bind-ro={bundle}:{BUNDLE_INSIDE}", *([f"--bind={stick}"] if stick else []),
             "--boot"],
            stdin=subprocess.DEVNULL, stdout=log.open("w"), stderr=subprocess.STDOUT,
            start_new_session=True)
        self.leader = self._find_init()

    def _find_init(self) -> int:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.nspawn.poll() is not None:
                break
            for stat in Path("/proc").glob("[0-9]*/stat"):
                try:
                    pid, rest = stat.read_text().split(" ", 1)
                    comm, fields = rest.rsplit(") ", 1)
                except (OSError, ValueError):
                    continue
                if int(fields.split()[1]) == self.nspawn.pid and comm == "(systemd":
                    return int(pid)
            time.sleep(0.2)
        self.close()
        pytest.fail("systemd-nspawn --boot did not start the container's systemd "
                    f"(status {self.nspawn.returncode}):\n{self.log.read_text()[-3000:]}")

    def wait_booted(self, timeout: float = 180) -> None:
        """Until the container's systemd says it is up (running, or degraded)."""
        state, deadline = "", time.monotonic() + timeout
        while state not in ("running", "degraded") and time.monotonic() < deadline:
            # Before the container's systemd listens, systemctl cannot reach it: asked again.
            state = self.run("systemctl", "is-system-running", "--wait").stdout.strip()
            time.sleep(0.2)
        assert state in ("running", "degraded"), (state, self.log.read_text())

    def run(self, *cmd: str, user: str | None = None, stdin: str | None = None,
            timeout: float = 120) -> subprocess.CompletedProcess[str]:
        as_user = ["runuser", "-u", user, "--"] if user else []
        return run(["nsenter", "--target", str(self.leader), "--all", "env", "-i",
                    f"PATH={PATH_INSIDE}", "LANG=C.UTF-8", *as_user, *cmd],
                   timeout=timeout, input=stdin)

    def ok(self, *cmd: str, **kwargs: object) -> str:
        done = self.run(*cmd, **kwargs)  # type: ignore[arg-type]
        assert done.returncode == 0, (cmd, done.stdout[-3000:], done.stderr[-3000:])
        return done.stdout

    def show(self, *props: str, unit: str = "gammonclock") -> dict[str, str]:
        out = self.ok("systemctl", "show", unit, *(f"--property={p}" for p in props))
        return dict(line.split("=", 1) for line in out.splitlines())

    def close(self) -> None:
        if self.nspawn.poll() is None:
            os.killpg(self.nspawn.pid, signal.SIGTERM)        # nspawn: the container powers off
            try:
                self.nspawn.wait(timeout=60)
            except subprocess.TimeoutExpired:
                os.killpg(self.nspawn.pid, signal.SIGKILL)
                self.nspawn.wait(timeout=30)


@contextmanager
def booted(tmp_path: Path, figures: dict[str, float], prefix: str = "",
           packages: tuple[str, ...] = ROOT_PACKAGES, **options: Any) -> Iterator[Container]:
    """The cached root with `packages` booted with this checkout's bundle (Container's `options`:
    a stick, the machine's name); the test's `figures` (`prefix`ed) saved and printed after."""
    if missing := missing_tools():
        pytest.fail("the real-systemd test cannot run here: missing " + "; ".join(missing))
    started = time.monotonic()
    image = debian_root(figures, packages)
    bundle = make_bundle(tmp_path, platform.machine(), figures)
    figures["root and bundle ready, s"] = time.monotonic() - started
    booting = time.monotonic()
    box = Container(image, bundle, tmp_path / "nspawn.log", **options)
    try:
        box.wait_booted()
        figures["boot, s"] = time.monotonic() - booting
        yield box
    finally:
        box.close()
        figures["the whole test, s"] = time.monotonic() - started
        save_figures(figures, prefix)


@contextmanager
def loop_stick(tmp_path: Path, files: Path) -> Iterator[str]:
    """A USB stick: an ext4 image holding `files` (owners and modes kept) on a loop device, to
    bind into a container (a container gets no loop device of its own); its device's path."""
    if missing := missing_tools():
        pytest.fail("the real-systemd test cannot run here: missing " + "; ".join(missing))
    image = tmp_path / "stick.img"
    with image.open("wb") as out:
        out.truncate(64 << 20)
    made = run(["mkfs.ext4", "-q", "-d", str(files), str(image)], timeout=60)
    assert made.returncode == 0, made.stderr
    loop = run(["losetup", "--find", "--show", str(image)], timeout=60)
    if loop.returncode != 0:
        pytest.fail(f"no loop device for the USB stick (losetup: {loop.stderr.strip()}): the "
                    "real-systemd test needs one (a machine, or a container with /dev/loop*)")
    device = loop.stdout.strip()
    try:
        yield device
    finally:
        run(["losetup", "--detach", device], timeout=60)

"""`scripts/install --hall` (issue 32), the director's machine, run into a staging root: the
venue's layout (/work/helpers' VENUE contract: venue.toml, the brokers' files, the units, the
secrets and their modes), the passwords generated and printed once, a second run that changes
nothing, a dry run that counts what the run then does, --tls (the CA's key root's alone, the
broker's certificate for the venue's address), and the files it wrote run by a real Mosquitto:
the generated password logs in, over TLS too. The real systemd: test_systemd_hall.py."""

from __future__ import annotations

import ipaddress
import platform
import re
import shlex
import shutil
import stat
import subprocess
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from install_helpers import ROOT, install, listing, staged
from mqtt_helpers import find_binary, free_port

HOST = "10.0.0.2"
VENUE = "etc/gammonclock-hall/venue.toml"
HALL_PASSWORD = "etc/gammonclock-hall/hall.password"
PAGE_PASSWORD = "etc/gammonclock-hall/page.password"
PUBLIC_PASSWORD = "etc/gammonclock-hall/public.password"
PASSWD = "etc/mosquitto/gammonclock.passwd"
PUBLIC_PASSWD = "etc/mosquitto/gammonclock-public.passwd"
DROPIN = "etc/mosquitto/conf.d/gammonclock.conf"
CA, CA_KEY = "etc/gammonclock-hall/tls/venue-ca.crt", "etc/gammonclock-hall/tls/venue-ca.key"
CERT = "etc/mosquitto/certs/gammonclock-broker.crt"
KEY = "etc/mosquitto/certs/gammonclock-broker.key"
HALL_UNIT = "systemd/gammonclock-hall.service"

# What --hall lays out (besides /opt/gammonclock): each path with its mode. The owners are the
# machine's (a staging root has none): tests/install/test_systemd_hall.py sees them.
LAYOUT = [
    ("var/lib/gammonclock-hall", 0o750), ("var/lib/gammonclock-hall/archive", 0o750),
    ("var/lib/gammonclock-hall/keys", 0o750), ("etc/gammonclock-hall", 0o750),
    (VENUE, 0o640), (HALL_PASSWORD, 0o640), (PAGE_PASSWORD, 0o640), (PUBLIC_PASSWORD, 0o640),
    (PASSWD, 0o600), (PUBLIC_PASSWD, 0o600), (DROPIN, 0o644),
    ("etc/mosquitto/gammonclock.acl", 0o600), ("etc/mosquitto/gammonclock-public.conf", 0o644),
    ("etc/mosquitto/gammonclock-public-hall.acl", 0o600),
    ("etc/mosquitto/gammonclock-public-spectators.acl", 0o600),
    ("etc/gammonclock/public-firewall.nft", 0o644), ("etc/chrony/conf.d/gammonclock.conf", 0o644),
    ("etc/systemd/system/gammonclock-hall.service", 0o644),
    ("etc/systemd/system/gammonclock-spectators.service", 0o644),
    ("etc/systemd/system/gammonclock-public-firewall.service", 0o644),
]
TLS_LAYOUT = [("etc/gammonclock-hall/tls", 0o750), (CA, 0o644), (CA_KEY, 0o600), (CERT, 0o644),
              (KEY, 0o600), ("etc/mosquitto/certs/gammonclock-venue-ca.crt", 0o644)]
# The checkout's files the installer places as they are.
COPIES = [("etc/mosquitto/gammonclock.acl", "hall/acl"),
          ("etc/mosquitto/gammonclock-public.conf", "hall/public.conf"),
          ("etc/mosquitto/gammonclock-public-hall.acl", "hall/public-hall.acl"),
          ("etc/mosquitto/gammonclock-public-spectators.acl", "hall/public-spectators.acl"),
          ("etc/systemd/system/gammonclock-hall.service", HALL_UNIT),
          ("etc/systemd/system/gammonclock-spectators.service",
           "systemd/gammonclock-spectators.service"),
          ("etc/systemd/system/gammonclock-public-firewall.service",
           "systemd/gammonclock-public-firewall.service")]


def hall(checkout: Path, root: Path, *args: str) -> str:
    return staged(checkout, root, "--hall", "--venue-host", HOST, *args)


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def printed(output: str, what: str) -> list[str]:
    return re.findall(rf"^install: {re.escape(what)}: (\S+)   \(printed this once: note it\)$",
                      output, re.MULTILINE)


def would_lines(output: str) -> list[str]:
    return [line for line in output.splitlines() if line.startswith("install: would ")]


# --- the layout ----------------------------------------------------------------------------------

@pytest.mark.parametrize("tls", [False, True], ids=["plain", "tls"])
def test_a_hall_run_lays_out_the_venue_with_its_modes(checkout, tmp_path, tls):
    hall(checkout, tmp_path, *(["--tls"] if tls else []))
    expected = LAYOUT + (TLS_LAYOUT if tls else [])
    assert {path: oct(mode(tmp_path / path)) for path, _ in expected} == {
        path: oct(wanted) for path, wanted in expected}
    for placed, source in COPIES:
        assert (tmp_path / placed).read_bytes() == (ROOT / source).read_bytes(), placed
    broker = f"mqtts://{HOST}:8883" if tls else f"mqtt://{HOST}:1883"
    assert (tmp_path / VENUE).read_text().split("[venue]\n", 1)[1] == "".join([
        f'broker = "{broker}"\n', 'prefix = "gammonclock"\n',
        'passwd_file = "/etc/mosquitto/gammonclock.passwd"\n',
        'keys_dir = "/var/lib/gammonclock-hall/keys"\n',
        *(['ca_file = "/etc/gammonclock-hall/tls/venue-ca.crt"\n'] if tls else []),
        f'time_server = "{HOST}"\n'])
    listeners = [line for line in (tmp_path / DROPIN).read_text().splitlines()
                 if line.startswith("listener ")]
    assert listeners == (["listener 1883 127.0.0.1", "listener 8883"] if tls
                         else ["listener 1883"])


def test_the_system_steps_are_only_printed_in_a_staging_root(checkout, tmp_path):
    out = hall(checkout, tmp_path)
    left = [line.split(": ", 2)[2] for line in out.splitlines()
            if line.startswith("install: left for the hall's machine, not run in a staging root:")]
    assert [line.split()[0] for line in left] == ["apt-get", "useradd", "systemctl"], left
    assert "mosquitto chrony nftables" in left[0]
    assert not (tmp_path / "etc/passwd").exists()


def test_chrony_serves_the_venues_private_networks_only_with_no_internet(checkout, tmp_path):
    hall(checkout, tmp_path)
    lines = [line for line in (tmp_path / "etc/chrony/conf.d/gammonclock.conf").read_text()
             .splitlines() if line and not line.startswith("#")]
    allowed = [ipaddress.ip_network(line.split()[1]) for line in lines
               if line.startswith("allow")]
    assert allowed and all(net.is_private for net in allowed), allowed
    assert "allow" not in [line.strip() for line in lines]         # a bare `allow`: everyone
    assert "local stratum 10" in lines
    assert [line for line in lines if line.startswith("ratelimit")]


# --- the generated passwords --------------------------------------------------------------------

def test_the_passwords_are_generated_printed_once_and_hashed_for_mosquitto(checkout, tmp_path):
    first = hall(checkout, tmp_path)
    director = (tmp_path / HALL_PASSWORD).read_text()
    page = (tmp_path / PAGE_PASSWORD).read_text()
    public = (tmp_path / PUBLIC_PASSWORD).read_text()
    for secret in (director, page, public):
        assert re.fullmatch(r"[A-Za-z0-9_-]{24}\n", secret), secret      # 18 random bytes
    assert len({director, page, public}) == 3
    assert printed(first, "the director's broker password (account hall)") == [director.strip()]
    assert printed(first, "the page's password") == [page.strip()]
    assert public.strip() not in first                       # the hall's own: nobody types it
    for passwd, account, secret in ((PASSWD, "hall", director),
                                    (PUBLIC_PASSWD, "hall-public", public)):
        text = (tmp_path / passwd).read_text()
        assert re.fullmatch(rf"{account}:\$7\$\S+\n", text), text     # hashed, never plain
        assert secret.strip() not in text
    second = hall(checkout, tmp_path)
    for secret in (director, page, public):
        assert secret.strip() not in second
    assert (f"install: the page's password in /{PAGE_PASSWORD} (already done; printed at the "
            f"first run only: sudo cat /{PAGE_PASSWORD})") in second.splitlines()
    assert (tmp_path / HALL_PASSWORD).read_text() == director


def test_a_lost_account_is_made_again_from_the_kept_password(checkout, tmp_path):
    """The password file lost the hall's account (a hand edit): put back, from the kept
    password, which is not printed again; the tables' accounts in it are kept."""
    hall(checkout, tmp_path)
    director = (tmp_path / HALL_PASSWORD).read_text().strip()
    (tmp_path / PASSWD).write_text("table-1:$7$101$kept\n")
    out = hall(checkout, tmp_path)
    assert "install: put the account hall (password from /etc/gammonclock-hall/hall.password) " \
           "into /etc/mosquitto/gammonclock.passwd (mode 0600)" in out.splitlines(), out
    assert director not in out
    lines = (tmp_path / PASSWD).read_text().splitlines()
    assert lines[0] == "table-1:$7$101$kept" and lines[1].startswith("hall:$7$"), lines


# --- idempotence and the dry run ----------------------------------------------------------------

@pytest.mark.parametrize("tls", [False, True], ids=["plain", "tls"])
def test_a_second_hall_run_changes_nothing_and_says_so(checkout, tmp_path, tls):
    args = ["--tls"] if tls else []
    hall(checkout, tmp_path, *args)
    before = listing(tmp_path)
    out = hall(checkout, tmp_path, *args)
    assert listing(tmp_path) == before
    assert "install: nothing changed: everything was already done" in out.splitlines(), out
    assert not would_lines(out)
    # Without --venue-host and --tls, the venue.toml's are kept.
    out = staged(checkout, tmp_path, "--hall")
    assert listing(tmp_path) == before
    assert f"install: the venue's host {HOST}, as /{VENUE} says (--venue-host HOST to change " \
           "it)" in out.splitlines()
    assert "install: nothing changed: everything was already done" in out.splitlines(), out


@pytest.mark.parametrize("tls", [False, True], ids=["plain", "tls"])
def test_a_hall_dry_runs_count_is_its_would_lines_and_what_the_run_then_counts(checkout, tmp_path,
                                                                               tls):
    args = ["--hall", "--venue-host", HOST, "--skip-venv", *(["--tls"] if tls else [])]
    dry = install(checkout, tmp_path, "--dry-run", *args)
    assert dry.returncode == 0, dry.stderr
    assert list(tmp_path.iterdir()) == []                                 # nothing was made
    counted = len(would_lines(dry.stdout))
    assert f"install: dry run: {counted} changes to make; nothing was changed" in dry.stdout
    real = install(checkout, tmp_path, *args)
    assert real.returncode == 0, real.stderr
    assert f"install: done: {counted} changes" in real.stdout.splitlines(), real.stdout
    again = install(checkout, tmp_path, "--dry-run", *args)
    assert not would_lines(again.stdout)
    assert "install: dry run: 0 changes to make; nothing was changed" in again.stdout


# --- TLS -----------------------------------------------------------------------------------------

def openssl(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([find_binary("openssl"), *args], capture_output=True, text=True)


def test_tls_makes_a_venue_ca_and_a_broker_certificate_for_the_venues_address(checkout, tmp_path):
    hall(checkout, tmp_path, "--tls")
    ca, cert = str(tmp_path / CA), str(tmp_path / CERT)
    assert openssl("verify", "-CAfile", ca, cert).returncode == 0
    assert "does match" in openssl("x509", "-noout", "-in", cert, "-checkip", HOST).stdout
    assert "does NOT match" in openssl("x509", "-noout", "-in", cert, "-checkip",
                                       "10.0.0.3").stdout
    assert "CA:TRUE" in openssl("x509", "-noout", "-text", "-in", ca).stdout
    assert "CA:FALSE" in openssl("x509", "-noout", "-text", "-in", cert).stdout
    assert mode(tmp_path / CA_KEY) == 0o600                       # root's alone on the machine


def test_a_new_venue_host_gets_a_new_certificate_from_the_same_ca(checkout, tmp_path):
    hall(checkout, tmp_path, "--tls")
    ca = (tmp_path / CA).read_bytes()
    cert = (tmp_path / CERT).read_bytes()
    out = staged(checkout, tmp_path, "--hall", "--venue-host", "10.0.0.3")
    assert (tmp_path / CA).read_bytes() == ca and (tmp_path / CERT).read_bytes() != cert
    assert "does match" in openssl("x509", "-noout", "-in", str(tmp_path / CERT), "-checkip",
                                   "10.0.0.3").stdout
    assert 'broker = "mqtts://10.0.0.3:8883"' in (tmp_path / VENUE).read_text()
    assert "install: TLS for the tables, as /etc/gammonclock-hall/venue.toml says (--no-tls to " \
           "turn it off)" in out.splitlines()
    staged(checkout, tmp_path, "--hall", "--no-tls")
    assert 'broker = "mqtt://10.0.0.3:1883"' in (tmp_path / VENUE).read_text()
    assert "ca_file" not in (tmp_path / VENUE).read_text()


# --- the files run by a real Mosquitto ----------------------------------------------------------

@contextmanager
def staged_broker(root: Path, tls: bool) -> Iterator[tuple[int, int]]:
    """Mosquitto running the staged drop-in, ACL and password file (their paths in the staging
    root; the ports free ones): the plain port and the TLS one."""
    plain, secure = free_port(), free_port()
    dropin = (root / DROPIN).read_text().replace("/etc/mosquitto/", f"{root}/etc/mosquitto/")
    dropin = dropin.replace("listener 1883", f"listener {plain}")
    dropin = dropin.replace("listener 8883", f"listener {secure} 127.0.0.1")
    if not tls:
        dropin = dropin.replace(f"listener {plain}\n", f"listener {plain} 127.0.0.1\n")
    conf = root / "mosquitto-test.conf"
    conf.write_text(f"{dropin}\npersistence_location {root}/\nlog_dest stderr\nuser root\n")
    process = subprocess.Popen([find_binary("mosquitto"), "-c", str(conf)],
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        time.sleep(0.5)
        assert process.poll() is None, process.communicate()[1]
        yield plain, secure
    finally:
        process.terminate()
        process.wait(timeout=10)


def login(port: int, user: str, password: str, ca: Path | None = None) -> str:
    """The broker's answer to USER's CONNECT: its reason code's name."""
    import paho.mqtt.client as mqtt
    client = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2)
    client.username_pw_set(user, password)
    if ca is not None:
        client.tls_set(ca_certs=str(ca))
    answered = threading.Event()
    reason: list[str] = []
    client.on_connect = lambda _c, _u, _f, code, _p: (reason.append(str(code)), answered.set())
    client.connect("127.0.0.1", port)
    client.loop_start()
    try:
        assert answered.wait(10), f"no CONNACK from port {port}"
        return reason[0]
    finally:
        client.disconnect()
        client.loop_stop()


@pytest.mark.parametrize("tls", [False, True], ids=["plain", "tls"])
def test_the_generated_account_logs_in_to_mosquitto_running_the_files(checkout, tmp_path, tls):
    if shutil.which("mosquitto_passwd", path="/usr/bin:/usr/sbin") is None:
        pytest.fail("mosquitto_passwd not found: run scripts/test-deps")
    staged(checkout, tmp_path, "--hall", "--venue-host", "127.0.0.1", *(["--tls"] if tls else []))
    director = (tmp_path / HALL_PASSWORD).read_text().strip()
    with staged_broker(tmp_path, tls) as (plain, secure):
        assert login(plain, "hall", director) == "Success"
        assert login(plain, "hall", director + "x") != "Success"
        if tls:
            assert login(secure, "hall", director, ca=tmp_path / CA) == "Success"


# --- the arguments and the unit ------------------------------------------------------------------

@pytest.mark.parametrize(("args", "error"), [
    (["--tls"], "install: --venue-host, --tls and --no-tls are the hall's: give --hall too"),
    (["--venue-host", HOST], "install: --venue-host, --tls and --no-tls are the hall's"),
    (["--hall", "--arbiter", "anna"], "install: --arbiter is a clock's (its control socket)"),
    (["--hall", "--time-server", HOST], "install: --time-server is a clock's: with --hall, this "
                                        "machine is the tables' time server"),
    (["--hall", "--venue-host", "a b"], "install: --venue-host a b: not a host name or an IPv4 "
                                        "address"),
    (["--hall", "--venue-host", "x;reboot"], "install: --venue-host x;reboot: not a host name"),
])
def test_bad_hall_arguments_are_refused_before_any_change(checkout, tmp_path, args, error):
    run = install(checkout, tmp_path, *args)
    assert run.returncode == 1
    assert run.stderr.startswith(error), run.stderr
    assert list(tmp_path.iterdir()) == []


def unit_command() -> list[str]:
    """The hall unit's ExecStart, as words (continuation lines joined)."""
    text = (ROOT / HALL_UNIT).read_text(encoding="utf-8").replace("\\\n", " ")
    line = next(line for line in text.splitlines() if line.startswith("ExecStart="))
    return shlex.split(line.removeprefix("ExecStart="))


def test_the_hall_unit_runs_the_hall_on_the_installers_layout():
    from gammonclock.cli.main import build_parser

    words = unit_command()
    assert words[:2] == ["/opt/gammonclock/.venv/bin/gammonclock", "hall"]
    args = build_parser().parse_args([w.replace("%H", "hall").replace("%l", "hall")
                                      for w in words[1:]])
    assert (args.broker, args.user, args.http) == ("mqtt://127.0.0.1:1883", "hall",
                                                   "0.0.0.0:8080")
    assert {str(args.password_file), str(args.page_password_file),
            str(args.public_password_file), str(args.archive), str(args.keys_dir)} == {
        "/" + HALL_PASSWORD, "/" + PAGE_PASSWORD, "/" + PUBLIC_PASSWORD,
        "/var/lib/gammonclock-hall/archive", "/var/lib/gammonclock-hall/keys"}
    assert args.public_broker == "mqtt://127.0.0.1:1884"
    unit = (ROOT / HALL_UNIT).read_text(encoding="utf-8")
    assert "User=gammonclock-hall\n" in unit
    assert "ReadWritePaths=/var/lib/gammonclock-hall/archive\n" in unit
    check = (ROOT / "scripts/check-unit").read_text(encoding="utf-8")
    assert "for unit in gammonclock-hall gammonclock-spectators; do" in check


# --- on "the system" (a dry run, its package and user look-ups stubbed) -------------------------

CHANGING = ("apt-get", "useradd", "chown", "systemctl", "mosquitto_passwd")


def on_the_system(tmp_path: Path, installed: str, *args: str) -> subprocess.CompletedProcess[str]:
    """A dry run of `--hall` on this machine as one where `installed` are the Debian packages
    installed and there is no gammonclock-hall user; the commands that change something are
    stubs that record a call and fail."""
    stubs = tmp_path / "stubs"
    stubs.mkdir()
    (stubs / "dpkg-query").write_text(
        f'#!/bin/bash\nfor p in {installed}; do [ "$p" = "${{!#}}" ] && '
        "echo -n 'install ok installed' && exit 0; done; exit 1\n")
    (stubs / "id").write_text('#!/bin/bash\n[ "$1" = -u ] && exit 1\nexec /usr/bin/id "$@"\n')
    for name in CHANGING:
        # systemctl's questions (a systemd here) are answered "no", not recorded.
        asks = "case $1 in is-enabled|is-active|show) exit 1 ;; esac\n" * (name == "systemctl")
        (stubs / name).write_text(f'#!/bin/bash\n{asks}echo "{name} $*" >> '
                                  f'"{stubs}/calls.log"\nexit 1\n')
    for path in stubs.iterdir():
        path.chmod(0o755)
    env = {"PATH": f"{stubs}:/usr/bin:/bin:/usr/sbin:/sbin", "LANG": "C.UTF-8"}
    return subprocess.run(["bash", str(ROOT / "scripts/install"), "--dry-run", "--hall",
                           "--venue-host", HOST, "--skip-venv", *args],
                          capture_output=True, text=True, timeout=60, env=env)


@pytest.mark.parametrize(("installed", "tls", "missing"), [
    ("python3-venv", False, "mosquitto chrony nftables"),                # Debian 12, fresh
    ("mosquitto chrony", True, "python3-venv nftables openssl"),        # Ubuntu 24.04's shape
    ("python3-venv mosquitto chrony nftables", False, ""),
])
def test_a_dry_run_on_the_system_names_the_packages_it_would_install(tmp_path, installed, tls,
                                                                     missing):
    run = on_the_system(tmp_path, installed, *(["--tls"] if tls else []))
    assert run.returncode == 0, run.stderr
    wanted = "python3-venv mosquitto chrony nftables" + (" openssl" if tls else "")
    expected = (f"install: would run apt-get update && apt-get install -y {missing}" if missing
                else f"install: Debian packages {wanted} (already done)")
    assert expected in run.stdout.splitlines(), run.stdout
    assert "install: would run useradd --system --user-group --home-dir " \
           "/var/lib/gammonclock-hall" in run.stdout
    counted = len(would_lines(run.stdout))
    assert f"install: dry run: {counted} changes to make; nothing was changed" in run.stdout
    assert not (tmp_path / "stubs/calls.log").exists()                  # nothing was changed


def test_offline_says_which_of_the_halls_debian_packages_are_missing(checkout, tmp_path):
    bundle = tmp_path / "gammonclock-bundle"
    (bundle / f"wheels/{platform.machine()}").mkdir(parents=True)
    (bundle / f"wheels/{platform.machine()}/stand_in-1.0-py3-none-any.whl").write_bytes(b"")
    (bundle / "MANIFEST.txt").write_text("version 0.1.0\n")
    shutil.copytree(checkout, bundle / "code", ignore=shutil.ignore_patterns(".git", ".venv"))
    run = on_the_system(tmp_path, "python3-venv chrony", "--offline", str(bundle))
    assert run.returncode == 1
    assert run.stderr.splitlines()[-2].startswith(
        "install: offline: the Debian packages mosquitto nftables are not installed, and a "
        "bundle holds no Debian packages: install them first where there is network (sudo "
        "apt-get install -y mosquitto nftables), then run this again"), run.stderr
    assert not (tmp_path / "stubs/calls.log").exists()

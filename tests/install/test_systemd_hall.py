"""The director's machine under a real systemd (issue 32): a Debian 12 root with mosquitto, chrony,
nftables, openssl, iproute2 and procps added (container_helpers: its own cache key), booted with
`systemd-nspawn --boot` and no network, `scripts/install --offline BUNDLE --hall` run in it as a
director runs it; then, from outside through `nsenter`: every unit active (the tables'
Mosquitto, the spectators', the hall, chrony, the spectators' firewall bound), the files' owners
and modes, the page asking its password (401) and taking the printed one (200), chrony answering
a table's time request, a second run that changes nothing and prints no password. Then a clock
installed in the same container (`scripts/install --offline`, mock pins) is provisioned from
the hall with nothing copied or typed by hand: `gammonclock hall provision`, its folder on a USB
stick (an ext4 image on a loop device made outside), the stick plugged in (its udev unit), the
arbiter's `provision`, the clock's key back on the stick and `--collect`ed; the clock connects,
plays the match the hall pushed (ended by the arbiter's forfeit), and its result counts at
`/api/results.json`, verified with the key the hall holds. Then `--tls`: the venue's CA, the
table provisioned again (`--replace`: the stick carries the CA and mqtts://), the clock joining
over TLS, the plain port refused from the venue's network, and a later run (TLS kept) that
changes nothing.

The venue's network is one address on the container's loopback (VENUE): the installer finds it
as the machine's first address, and the clock reaches the hall by it, as a Pi reaches the
director's laptop. Root only (as tests/install/test_systemd_container.py): without root or the
tools it fails and says what is missing."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from container_helpers import (
    BUNDLE_INSIDE,
    HALL_FIGURES,
    ROOT_PACKAGES,
    Container,
    booted,
    loop_stick,
)

# A director's Debian 12 with the hall's packages installed where there was network: an offline
# --hall install fetches no Debian package. iproute2: the installer finds the venue's address;
# procps: Debian's mosquitto.service reloads with /bin/kill (every standard system has it).
HALL_ROOT_PACKAGES = (*ROOT_PACKAGES, "mosquitto", "chrony", "nftables", "openssl", "iproute2",
                      "procps")
VENUE = "10.77.0.1"                       # the director's machine on the venue's network
PAGE = f"http://{VENUE}:8080"
TABLE = "table-1"
DEVICE = "/etc/gammonclock/device.toml"
ARBITER = "arb"
UNITS = ("mosquitto", "gammonclock-spectators", "gammonclock-public-firewall", "chrony",
         "gammonclock-hall")
PAIRINGS = f"table,left,right,length\n{TABLE},Anna,Boris,3\n"
OWNERS = {
    "/etc/gammonclock-hall": "750 root:gammonclock-hall",
    "/etc/gammonclock-hall/hall.password": "640 root:gammonclock-hall",
    "/etc/gammonclock-hall/page.password": "640 root:gammonclock-hall",
    "/etc/gammonclock-hall/public.password": "640 root:gammonclock-hall",
    "/etc/gammonclock-hall/venue.toml": "640 root:gammonclock-hall",
    "/etc/mosquitto/gammonclock.passwd": "600 mosquitto:mosquitto",
    "/etc/mosquitto/gammonclock-public.passwd": "600 mosquitto:mosquitto",
    "/etc/mosquitto/gammonclock.acl": "600 mosquitto:mosquitto",
    "/etc/mosquitto/gammonclock-public-spectators.acl": "600 mosquitto:mosquitto",
    "/var/lib/gammonclock-hall/keys": "750 root:gammonclock-hall",
    "/var/lib/gammonclock-hall/archive": "750 gammonclock-hall:gammonclock-hall",
}
INSTALLER = "/root/gammonclock-bundle/code/scripts/install"

figures: dict[str, float] = {}            # seconds, printed at the end (and kept in CACHE)

# The page's client, run inside the container (stdlib only): GET or POST (with the page's token,
# read from the page as a browser does) with the page's password; prints the status and body.
PAGE_CLIENT = r'''
import base64, json, re, sys, urllib.error, urllib.request
base, method, path, password = sys.argv[1:5]
body = sys.argv[5] if len(sys.argv) > 5 else None
def call(path, data=None, token=None):
    headers = {}
    if password:
        headers["Authorization"] = "Basic " + base64.b64encode(
            ("director:" + password).encode()).decode()
    if data is not None:
        headers["Content-Type"] = "application/json"
        headers["X-Hall-Token"] = token
    request = urllib.request.Request(base + path, data, headers)
    try:
        with urllib.request.urlopen(request, timeout=20) as answer:
            return answer.status, answer.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()
    except OSError as exc:                      # not listening yet: status 0
        return 0, str(exc)
if method == "POST":
    page = call("/")[1]
    token = re.search(r'<meta name="hall-token" content="([^"]*)"', page).group(1)
    status, text = call(path, body.encode(), token)
else:
    status, text = call(path)
print(json.dumps({"status": status, "body": text}))
'''

# A table's time request (NTP, mode 3) to the hall's chrony, from the venue's address; prints the
# answer's leap indicator and stratum.
NTP_CLIENT = r'''
import json, socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.settimeout(3)
s.bind((sys.argv[1], 0))
s.sendto(b"\x23" + bytes(47), (sys.argv[1], 123))
data = s.recv(512)
print(json.dumps({"leap": data[0] >> 6, "stratum": data[1]}))
'''


@pytest.fixture
def hall_box(tmp_path: Path) -> Iterator[Container]:
    (tmp_path / "stick-files").mkdir()                     # an empty stick, for `plug_in`
    with loop_stick(tmp_path, tmp_path / "stick-files") as stick, \
            booted(tmp_path, figures, HALL_FIGURES, HALL_ROOT_PACKAGES, stick=stick,
                   machine="gammonclock-hall-test") as box:
        yield box


def the_venues_network(box: Container) -> None:
    """The director's machine's address on the venue's network: on the loopback of a container
    with no network of its own (its first address that is not 127.x)."""
    box.ok("ip", "addr", "add", f"{VENUE}/32", "dev", "lo")


def chrony_in_a_container(box: Container) -> None:
    """CONTAINER ONLY, not the installer's: a container may not set the host's clock (no
    CAP_SYS_TIME), so Debian's chrony.service would not start (ConditionCapability=CAP_SYS_TIME).
    Here chronyd runs with -x (it never touches the clock) and serves time as on the director's
    machine, from the drop-in the installer writes."""
    dropin = "/etc/systemd/system/chrony.service.d/container.conf"
    box.ok("mkdir", "-p", str(Path(dropin).parent))
    box.ok("tee", dropin, stdin="[Unit]\nConditionCapability=\n")
    box.ok("tee", "/etc/default/chrony", stdin='DAEMON_OPTS="-F 1 -x"\n')
    box.ok("systemctl", "daemon-reload")


def page(box: Container, method: str, path: str, password: str = "",
         body: dict[str, Any] | None = None) -> tuple[int, str]:
    out = box.ok("python3", "/root/page_client.py", PAGE, method, path, password,
                 *([json.dumps(body)] if body is not None else []))
    answer = json.loads(out)
    return answer["status"], answer["body"]


def until(what: str, check: Any, timeout: float = 30, box: Container | None = None) -> Any:
    """`check()`'s first true answer, asked again until `timeout`; else the hall's log."""
    deadline = time.monotonic() + timeout
    while True:
        got = check()
        if got:
            return got
        if time.monotonic() > deadline:
            log = "" if box is None else box.run("journalctl", "--no-pager", "-n", "60", "-u",
                                                 "gammonclock-hall", "-u", "gammonclock").stdout
            raise AssertionError(f"not within {timeout} s: {what}\n{log}")
        time.sleep(0.5)


def printed(output: str, what: str) -> str:
    """The secret the installer printed once for `what`."""
    found = re.findall(rf"^install: {re.escape(what)}: (\S+)   \(printed this once: note it\)$",
                       output, re.MULTILINE)
    assert len(found) == 1, (what, output)
    return found[0]


def write_stick(box: Container, folder: str) -> None:
    """The stick's folder that `hall provision` made, copied to the root of the USB stick. A
    FAT stick (the director's) has no owners: the clock's helper mounts it as the clock's user's
    (umask 027); this ext4 one is given the same owner and modes."""
    box.ok("mount", box.stick or "", "/mnt")
    try:
        box.ok("sh", "-c", f"rm -rf /mnt/* && cp -r {folder}/. /mnt/ && chown -R "
               "gammonclock:gammonclock /mnt && chmod -R u+rwX,g+rX,o= /mnt")
    finally:
        box.ok("umount", "/mnt")


def plug_in(box: Container) -> str:
    """The USB stick plugged into the clock (its helper unit started as udev starts it): what
    the helper said."""
    unit = f"gammonclock-usb@{Path(box.stick or '').name}.service"
    since = box.ok("date", "+%s").strip()
    started = box.run("systemctl", "start", unit, timeout=300)
    said = box.ok("journalctl", "-u", unit, "--no-pager", "--output=cat", f"--since=@{since}")
    assert started.returncode == 0, (started.stderr, said)
    return said


def collect(box: Container) -> str:
    """The stick back at the hall: `hall provision --collect` takes the key the clock returned."""
    box.ok("mount", box.stick or "", "/mnt")
    try:
        return box.ok("gammonclock", "hall", "provision", "--collect", "/mnt")
    finally:
        box.ok("umount", "/mnt")


@pytest.mark.slow
def test_the_hall_under_a_real_systemd(hall_box: Container) -> None:
    box = hall_box
    the_venues_network(box)
    chrony_in_a_container(box)
    box.ok("tee", "/root/page_client.py", stdin=PAGE_CLIENT)
    box.ok("tee", "/root/ntp_client.py", stdin=NTP_CLIENT)

    # The install, offline (no network in the container), as the director runs it.
    box.ok("tar", "-xzf", BUNDLE_INSIDE, "-C", "/root")
    started = time.monotonic()
    first = box.ok(INSTALLER, "--offline", BUNDLE_INSIDE, "--hall", timeout=900)
    figures["first hall install (offline), s"] = time.monotonic() - started
    assert "install: done: " in first, first
    assert (f"install: the venue's host {VENUE}: this machine's first address (--venue-host "
            "HOST for another)") in first.splitlines(), first
    director = printed(first, "the director's broker password (account hall)")
    password = printed(first, "the page's password")
    assert box.ok("cat", "/etc/gammonclock-hall/hall.password").strip() == director
    assert box.ok("cat", "/etc/gammonclock-hall/page.password").strip() == password
    venue = box.ok("cat", "/etc/gammonclock-hall/venue.toml")
    assert f'broker = "mqtt://{VENUE}:1883"' in venue and f'time_server = "{VENUE}"' in venue
    # Who may read what: the passwords root's and the hall's group's, Mosquitto's files its own,
    # the keys root's (the hall reads them, cannot plant one), the archive the hall's.
    modes = box.ok("stat", "-c", "%n %a %U:%G", *OWNERS).splitlines()
    assert modes == [f"{path} {owner}" for path, owner in OWNERS.items()]

    # Every unit active; the spectators' bound loaded in the kernel.
    for unit in UNITS:
        assert box.run("systemctl", "is-active", unit).stdout.strip() == "active", (
            unit, box.run("systemctl", "status", "--no-pager", unit).stdout)
    assert "ct count over 100" in box.ok("nft", "list", "table", "inet", "gammonclock_public")

    # The page asks its password: 401 without it, or with another; 200 with the printed one.
    def answers() -> tuple[int, str] | None:
        answer = page(box, "GET", "/api/cards")
        return answer if answer[0] else None
    status, _ = until("the page answers", answers, timeout=60, box=box)
    assert status == 401
    assert page(box, "GET", "/api/cards", "not the password")[0] == 401
    status, body = page(box, "GET", "/api/cards", password)
    assert status == 200, body
    assert page(box, "GET", "/public")[0] == 200            # the spectators' page: no password

    # chrony serves the venue's time to a table (stratum 10: its own clock, with no internet).
    def ntp() -> dict[str, int] | None:
        got = box.run("python3", "/root/ntp_client.py", VENUE)
        answer = json.loads(got.stdout) if got.returncode == 0 else None
        return answer if answer and answer["leap"] != 3 else None
    assert until("chrony answers a table's time request", ntp, timeout=60)["stratum"] == 10

    # A second run changes nothing, and prints no password again.
    started = time.monotonic()
    second = box.ok(INSTALLER, "--offline", BUNDLE_INSIDE, "--hall", timeout=300)
    figures["second hall install, s"] = time.monotonic() - started
    assert "install: nothing changed: everything was already done" in second, second
    assert director not in second and password not in second
    assert ("install: the page's password in /etc/gammonclock-hall/page.password (already "
            "done; printed at the first run only: sudo cat /etc/gammonclock-hall/page.password)"
            ) in second.splitlines(), second

    # A clock on the same machine, fresh from its install (no PIN, no [hall], no table id),
    # provisioned from the hall: the table's account and key made there, its stick plugged in.
    box.ok("useradd", "--create-home", ARBITER)
    started = time.monotonic()
    clock = box.ok(INSTALLER, "--offline", BUNDLE_INSIDE, "--arbiter", ARBITER, timeout=900)
    figures["the clock's install, s"] = time.monotonic() - started
    assert "install: done: " in clock
    box.ok("sed", "-i", 's/^pin_factory = "lgpio"/pin_factory = "mock"/', DEVICE)
    box.ok("systemctl", "start", "gammonclock", timeout=120)
    made = box.ok("gammonclock", "hall", "provision", TABLE, "--to", "/root/sticks",
                  "--event", "Open")
    assert f"{TABLE}: /root/sticks/{TABLE} (a new key)" in made.splitlines(), made
    assert "the tables' broker reloaded: it takes the new accounts" in made, made
    write_stick(box, f"/root/sticks/{TABLE}")
    # The clock journaled its example match at its first start (device.toml's match_file) and
    # played nothing: it is at its first boot and takes the stick at once, keeping its key (that
    # journal verifies with it) and writing it on the same stick, which goes back to the hall.
    said = plug_in(box)
    assert (f"provisioned from the USB stick: table {TABLE}, hall mqtt://{VENUE}:1883 as "
            f"{TABLE}; the hall link starts with it") in said, said
    assert "a copy is on the stick as gammonclock/provision/returned.key" in said, said
    collected = collect(box)
    assert f"{TABLE}: its own key taken in place of the one the stick offered" in collected
    box.ok("cmp", "/var/lib/gammonclock/device.key", f"/var/lib/gammonclock-hall/keys/{TABLE}.key")

    def card() -> dict[str, Any] | None:
        status, body = page(box, "GET", "/api/cards", password)
        cards = {c["table"]: c for c in json.loads(body)["cards"]} if status == 200 else {}
        return cards.get(TABLE) if cards.get(TABLE, {}).get("online") else None
    until("the table online on the hall's page", card, timeout=60, box=box)

    # The hall pushes the round; the clock loads its match, the arbiter ends it by a forfeit of
    # the match's points; its journal reaches the hall, verifies with the table's key, and counts.
    status, body = page(box, "POST", "/api/round", password,
                        {"csv": PAIRINGS, "event": "Open", "round": "1"})
    assert status == 200 and json.loads(body)["pushed"] == 1, body

    def loaded() -> bool:
        got = box.run("gammonclock", "arbiter", "--json", "status", user=ARBITER)
        return got.returncode == 0 and json.loads(got.stdout).get("match_length") == 3
    until("the pushed match loaded on the clock", loaded, timeout=60, box=box)
    box.ok("gammonclock", "arbiter", "forfeit", "left", "3", user=ARBITER)

    def counted() -> dict[str, Any] | None:
        status, body = page(box, "GET", "/api/results.json", password)
        results = json.loads(body)["results"] if status == 200 else []
        return next((r for r in results if r["table"] == TABLE and r["counted"]), None)
    result = until("the match's result counted at the hall", counted, timeout=90, box=box)
    assert result["standing"] == "counted", result

    # --tls: the venue's CA (its key root's alone), the tables' broker on mqtts:// with a
    # certificate for the venue's address, the plain port on loopback only (the hall's).
    started = time.monotonic()
    tls = box.ok(INSTALLER, "--offline", BUNDLE_INSIDE, "--hall", "--tls", timeout=300)
    figures["the --tls run, s"] = time.monotonic() - started
    assert "install: made the venue's CA /etc/gammonclock-hall/tls/venue-ca.crt" in tls, tls
    assert box.ok("stat", "-c", "%a %U", "/etc/gammonclock-hall/tls/venue-ca.key") == "600 root\n"
    venue = box.ok("cat", "/etc/gammonclock-hall/venue.toml")
    assert f'broker = "mqtts://{VENUE}:8883"' in venue, venue
    assert 'ca_file = "/etc/gammonclock-hall/tls/venue-ca.crt"' in venue, venue
    # The table provisioned again for the TLS venue (its key kept at the hall), the stick's
    # offer taken by the arbiter (a provisioned clock only offers it): it joins over mqtts://.
    box.ok("gammonclock", "hall", "provision", TABLE, "--replace", "--to", "/root/sticks-tls",
           "--event", "Open")
    assert box.ok("test", "-f", f"/root/sticks-tls/{TABLE}/gammonclock/provision/venue-ca.crt"
                  ) == ""
    write_stick(box, f"/root/sticks-tls/{TABLE}")
    since = box.ok("date", "+%s").strip()
    said = plug_in(box)
    assert (f"offered from the USB stick, NOT taken: table {TABLE}, hall mqtts://{VENUE}:8883 "
            f"as {TABLE}") in said, said
    taken = box.ok("gammonclock", "arbiter", "provision", user=ARBITER)
    assert f"hall mqtts://{VENUE}:8883 as {TABLE}; the hall link starts with it" in taken, taken
    until("the clock connected to the hall's broker over TLS", lambda: f"hall: connected to "
          f"mqtts://{VENUE}:8883" in box.ok("journalctl", "-u", "gammonclock", "--no-pager",
                                            f"--since=@{since}"), timeout=60, box=box)
    until("the table online again on the hall's page", card, timeout=60, box=box)
    plain = box.run("python3", "-c", "import socket; socket.create_connection(("
                    f"'{VENUE}', 1883), timeout=3)")
    assert plain.returncode != 0 and "Connection refused" in plain.stderr, plain

    # TLS is kept by a run without --tls: nothing changes.
    again = box.ok(INSTALLER, "--offline", BUNDLE_INSIDE, "--hall", timeout=300)
    assert "install: nothing changed: everything was already done" in again, again

"""One address may not shut out every spectator (SPEC §14.1: "no one address may hold more than
a bounded share of the spectators' connections"). Mosquitto has no bound per address, so the
hall's setup installs one in the kernel: hall/broker/public.nft by scripts/public-firewall.

The real thing, as root: the spectators' Mosquitto from the shipped public.conf (its shipped
ports and `max_connections 5000`) alone in a network namespace, the clients in a second one over
a veth pair, the ruleset installed there by the command issue 32's installer will call (in a
mount namespace of its own: nothing is left on this machine). From one address, connections
that never say a word, well past the bound; from another, a spectator over WebSockets as the
page is. And the same without the ruleset: the attack as it was. Without root, `ip`, `nft` or
Mosquitto the test fails naming what is missing; it never skips. The ruleset's file, the
command's arguments, its staging root and its removal are tried without root below."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from public_helpers import FIREWALL, NamespacedBroker

PER_ADDRESS = 100                 # the shipped bound per address (public.nft, the command's)
PER_PREFIX = 250                  # per IPv6 /64
MAX_CONNECTIONS = 5000            # public.conf's (the attack: 5 100 connections)
WAIT_S = 10.0                     # a spectator's CONNACK: within this, or not at all
ATTACKER = "192.0.2.10"
SPECTATOR = "192.0.2.20"
ATTACKERS_V6 = [f"2001:db8:1::{n}" for n in range(10, 15)]   # five addresses of one /64
SPECTATOR_V6 = "2001:db8:2::20"                               # another /64


def test_one_address_cannot_shut_out_the_spectators(tmp_path: Path) -> None:
    shipped_conf = (Path(FIREWALL).parents[1] / "hall" / "public.conf").read_text()
    assert f"max_connections {MAX_CONNECTIONS}" in shipped_conf
    with NamespacedBroker(tmp_path, [ATTACKER, SPECTATOR],
                          [*ATTACKERS_V6, SPECTATOR_V6]) as rig:
        rig.in_broker("nft", "add", "table", "inet", "someone_else")   # the machine's own rules
        # Installed as the hall's setup does, twice: one table, the machine's left as it was.
        first = rig.firewall()
        assert "loaded the table inet gammonclock_public: at most 100 connections per address "\
               "(250 per IPv6 /64) to port 9001" in first, first
        rig.firewall()
        assert rig.tables().split("\n") == ["table inet someone_else",
                                            "table inet gammonclock_public", ""]

        floods = []
        try:
            # IPv4: one address opens 2 000 connections and says nothing (more than the broker
            # serves): a spectator at another address still gets in; the bound holds the first.
            flood = rig.flood(ATTACKER, 2000)
            floods.append(flood)
            took = rig.connack_s(SPECTATOR, WAIT_S)
            assert took is not None, f"no CONNACK within {WAIT_S} s\n{rig.public.log()[-2000:]}"
            assert flood.other_errors == []
            assert (len(flood.held), flood.refused) == (PER_ADDRESS, 2000 - PER_ADDRESS)
            # IPv6: five addresses of one /64, 300 each: 100 each, and 250 for the /64.
            held_v6 = []
            for attacker in ATTACKERS_V6:
                flood = rig.flood(attacker, 300)
                floods.append(flood)
                assert flood.other_errors == [], flood.other_errors
                held_v6.append(len(flood.held))
            assert held_v6 == [PER_ADDRESS, PER_ADDRESS, PER_PREFIX - 2 * PER_ADDRESS, 0, 0]
            took_v6 = rig.connack_s(SPECTATOR_V6, WAIT_S)
            assert took_v6 is not None, f"no CONNACK over IPv6 within {WAIT_S} s"
        finally:
            for flood in floods:
                flood.close()

        # Taken away: the table only; the machine's own stays.
        removed = rig.firewall("--remove")
        assert "removed the table inet gammonclock_public" in removed, removed
        assert rig.tables().split("\n") == ["table inet someone_else", ""]

        # Without it, as filed: one address opens 5 100 and the next spectator waits in vain
        # (if it did not, this test would prove nothing).
        flood = rig.flood(ATTACKER, MAX_CONNECTIONS + 100)
        try:
            assert len(flood.held) >= MAX_CONNECTIONS, (len(flood.held), flood.refused)
            assert rig.connack_s(SPECTATOR, WAIT_S) is None, (
                "without the ruleset a spectator still got in: the attack did not hold here")
        finally:
            flood.close()


# --- the ruleset and the command, without root ---------------------------------------------------

def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(FIREWALL), *args], capture_output=True, text=True, timeout=60)


def test_the_command_writes_the_numbers_into_the_shipped_ruleset() -> None:
    shipped = (Path(FIREWALL).parents[1] / "hall" / "public.nft").read_text()
    printed = run("--print")
    assert printed.returncode == 0, printed.stderr
    assert printed.stdout == shipped                     # the defaults are the file's
    assert "table inet gammonclock_public {" in shipped
    assert len(re.findall(r"^table ", shipped, re.M)) == 2   # made if missing, then anew
    assert "flush ruleset" not in shipped and "delete table inet gammonclock_public" in shipped
    given = run("--port", "8443", "--per-address", "40", "--per-prefix", "90", "--print").stdout
    assert "define spectators_port = 8443" in given
    assert "ip saddr ct count over 40 " in given and "ip6 saddr ct count over 40 " in given
    assert "ffff:ffff:ffff:ffff:: ct count over 90 " in given
    assert re.sub(r"(= 8443|over 40|over 90)", "", given) == re.sub(
        r"(= 9001|over 100|over 250)", "", shipped)      # nothing else changed


@pytest.mark.parametrize("args, said", [
    (["--port", "0"], "--port 0: give a whole number from 1 to 65535"),
    (["--port", "9001; flush ruleset"], "give a whole number"),
    (["--per-address", "-1"], "--per-address -1: give a whole number from 1 to 100000"),
    (["--per-address", "08"], "give a whole number"),
    (["--per-address", "100", "--per-prefix", "50"], "give at least --per-address (100)"),
    (["--per-address"], "--per-address: give a number"),
    (["--now-only", "--root", "/tmp"], "one or the other"),
    (["--frobnicate"], "unknown argument: --frobnicate"),
])
def test_bad_arguments_are_refused_before_anything_changes(args: list[str], said: str) -> None:
    done = run(*args)
    assert done.returncode == 2 and said in done.stderr, done.stderr
    assert "usage: sudo scripts/public-firewall" in done.stderr


def test_a_staging_root_gets_the_files_twice_the_same_and_remove_takes_them(
        tmp_path: Path) -> None:
    first = run("--root", str(tmp_path), "--per-address", "300")
    assert first.returncode == 0, first.stderr
    ruleset = tmp_path / "etc" / "gammonclock" / "public-firewall.nft"
    unit = tmp_path / "etc" / "systemd" / "system" / "gammonclock-public-firewall.service"
    assert "ip saddr ct count over 300 " in ruleset.read_text()
    assert unit.read_text() == (Path(FIREWALL).parents[1] / "systemd" /
                                "gammonclock-public-firewall.service").read_text()
    assert "ExecStart=/usr/sbin/nft -f /etc/gammonclock/public-firewall.nft" in unit.read_text()
    assert "left for the machine" in first.stdout and "systemctl enable --now" in first.stdout
    again = run("--root", str(tmp_path), "--per-address", "300")
    assert again.stdout.count("(already done)") == 2 and "wrote" not in again.stdout
    gone = run("--root", str(tmp_path), "--remove")
    assert gone.returncode == 0 and not ruleset.exists() and not unit.exists(), gone.stderr
    assert run("--root", str(tmp_path), "--remove").stdout.count("(already done)") == 2

"""`gammonclock hall provision TABLE… --to DIR` (issue 32, the venue's layout): against the real
parts. A table provisioned joins the real Mosquitto with the account provision wrote, may
publish only under its own table (hall/acl), and a real clock given the stick's key and device
file plays a match whose journal verifies at the real hall with its `--keys-dir`. The stick's
device.toml passes the clock's own parser; its README speaks English and Russian. Hostile
inputs (a bad venue.toml, table ids that are not, an existing stick, --to a file, a table
provisioned already) are each refused with a clear message and change nothing.

A missing `mosquitto` or `mosquitto_passwd` fails these tests (mqtt_helpers.find_binary).
"""

from __future__ import annotations

import os
import subprocess
import time
import tomllib
from pathlib import Path
from typing import Any

import pytest

from gammonclock.config.loading import parse_device_config
from hall_helpers import HallRunner
from hall_provision_helpers import SECRET_FILE, Stick, contents, provision
from mqtt_helpers import DIRECTOR, WATCHER, Broker, Collector, find_binary, logs_in, puback_reason
from table_helpers import MATCH_TEXT, Table, end_the_match, play, wait

P = "gammonclock"


@pytest.fixture
def hall_broker(tmp_path: Path) -> Any:
    """A Mosquitto whose password file holds only the director's and the watcher's accounts:
    the tables' accounts are provision's to write (its `passwd`)."""
    broker = Broker(tmp_path / "broker", {DIRECTOR: "director-pw", WATCHER: "watcher-pw"})
    try:
        yield broker
    finally:
        broker.stop()


def reloaded(broker: Broker) -> None:
    """What `systemctl reload mosquitto` does (the unit's ExecReload): SIGHUP, the password file
    read again."""
    assert broker._process is not None
    broker._process.send_signal(1)
    time.sleep(0.3)


def test_a_provisioned_table_joins_and_its_journal_verifies_at_the_hall(
        tmp_path: Path, hall_broker: Broker) -> None:
    broker = hall_broker
    broker.start()
    keys = tmp_path / "hall" / "keys"
    done = provision(tmp_path, "table-1", "table-2", "--to", str(tmp_path / "sticks"),
                     "--event", "Moscow Open", passwd=broker.folder / "passwd",
                     broker=broker.url)
    assert done.returncode == 0, done.stderr
    assert "provisioned 2 tables in " in done.stdout
    assert "sudo systemctl reload mosquitto" in done.stdout          # --no-reload: it says how
    reloaded(broker)
    one, two = Stick(tmp_path / "sticks" / "table-1"), Stick(tmp_path / "sticks" / "table-2")
    assert one.key_text == (keys / "table-1.key").read_text()        # the hall keeps that key
    assert one.key_text != two.key_text and one.password != two.password
    assert oct(os.stat(keys / "table-1.key").st_mode & 0o777) == "0o640"
    assert oct(os.stat(one.folder / SECRET_FILE).st_mode & 0o777) == "0o600"

    # The account logs in, and publishes under its own table only (the shipped ACL).
    broker.passwords.update({"table-1": one.password, "table-2": two.password})
    with Collector(broker, WATCHER, f"{P}/#") as watched:
        client = broker.client("table-1", client_id="table-1", mqtt5=True)
        try:
            assert puback_reason(client, f"{P}/table-2/state", "{}") == "Not authorized"
            assert puback_reason(client, f"{P}/table-1/match", "x") == "Not authorized"
            assert puback_reason(client, f"{P}/table-1/health", "{}") == "Success"
        finally:
            client.disconnect()
            client.loop_stop()
        watched.wait_for(lambda m: m.topic == f"{P}/table-1/health")
        assert [m.topic for m in watched.messages] == [f"{P}/table-1/health"]
    assert not logs_in(broker, "table-1", two.password)              # not another's password

    # A real clock that took the stick: its key, its [table] and [hall]; a match played and
    # ended; the hall verifies the journal's seals with the key provision kept.
    match_file = tmp_path / "match.toml"
    match_file.write_text(MATCH_TEXT, encoding="utf-8")
    clock = Table(tmp_path / "clock", one.clock_text(match_file))
    clock.state.mkdir(parents=True)
    (clock.state / SECRET_FILE).write_text(one.key_text)
    with HallRunner(broker, tmp_path / "archive", keys) as hall:
        clock.start()
        try:
            play(clock, 4)
            end_the_match(clock)
            name = clock.journal().name
            hall.wait(lambda: name in hall.archived("table-1"), "the journal archived", 30)
        finally:
            clock.stop()
        [entry] = [e for e in hall.archive_list() if e["name"] == name]
        assert entry["ok"] and entry["verified"] and entry["sealed"], entry
        wait(lambda: "Moscow Open" in hall.alerts("table-1"), "the table's event on its card")


def test_the_sticks_device_file_passes_the_clocks_parser_with_tls(tmp_path: Path) -> None:
    ca = tmp_path / "venue-ca.crt"
    ca.write_text("-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n")
    venue = tmp_path / "venue.toml"
    venue.write_text(f'[venue]\nbroker = "mqtts://hall.local:8883"\nprefix = "open/2026"\n'
                     f'ca_file = "{ca}"\ntime_server = "10.0.0.2"\n'
                     f'passwd_file = "{tmp_path / "hall" / "passwd"}"\n'
                     f'keys_dir = "{tmp_path / "hall" / "keys"}"\n')
    done = provision(tmp_path, "Table_12", "--to", str(tmp_path / "sticks"), "--venue",
                     str(venue), "--event", 'Кубок "Нарды" \\ 2026', broker="")
    assert done.returncode == 0, done.stderr
    stick = Stick(tmp_path / "sticks" / "Table_12")
    assert sorted(p.name for p in stick.folder.iterdir()) == [
        "device.key", "device.toml", "hall.password", "venue-ca.crt"]
    assert (stick.folder / "venue-ca.crt").read_bytes() == ca.read_bytes()
    written = (stick.folder / "device.toml").read_text(encoding="utf-8")
    as_written = parse_device_config(written, "device.toml").device   # relative names as is
    assert as_written.hall is not None and as_written.hall.password_file == "hall.password"
    resolved = parse_device_config(stick.clock_text(), "device.toml").device
    assert resolved.table_id == "Table_12" and resolved.table_event == 'Кубок "Нарды" \\ 2026'
    assert resolved.hall is not None
    assert (resolved.hall.broker, resolved.hall.username, resolved.hall.prefix) == (
        "mqtts://hall.local:8883", "Table_12", "open/2026")
    assert Path(resolved.hall.password_file or "").read_text().strip() == stick.password
    assert Path(resolved.hall.ca_file or "").read_bytes() == ca.read_bytes()
    assert set(tomllib.loads(written)) == {"table", "hall"}         # the hall's part only
    readme = (stick.root / "README.txt").read_text(encoding="utf-8")
    english, russian = readme.split("gammonclock: флешка")
    assert "provisioning stick of table Table_12" in english and "arbiter's menu" in english
    assert "--time-server 10.0.0.2" in english and "--time-server 10.0.0.2" in russian
    for word in ("стол", "судья", "часы", "матч"):
        assert word in russian.lower(), word


# --- hostile inputs: each a clear message, nothing changed -----------------------------------

BAD_VENUES = [
    ('[venue]\nbrokr = "mqtt://x:1883"\n', "venue.brokr: unknown key; allowed in [venue]: "),
    ('[venue]\nbroker = "http://x"\n', 'venue.broker: "http://x" is not a broker URL'),
    ('[venue]\nbroker = "mqtt://x:1883"\nprefix = "a/#"\n', "venue.prefix: "),
    ('[venue]\nbroker = "mqtt://x:1883"\nca_file = "/ca.crt"\n', "venue.ca_file: only with an "
                                                                 "mqtts:// broker"),
    ('[venues]\nbroker = "mqtt://x:1883"\n', "venues: unknown section; allowed: venue"),
    ('venue = 3\n', "venue: must be a table ([venue])"),
    ('[venue\nbroker = "mqtt://x"\n', "not valid TOML"),
    ('[venue]\nbroker = "mqtt://x:1883"\ntime_server = "a b"\n', "venue.time_server: "),
    ("x" * 70_000, "longer than 65536 bytes"),
]


@pytest.mark.parametrize(("text", "said"), BAD_VENUES)
def test_a_bad_venue_file_is_refused_naming_the_file_and_key(tmp_path: Path, text: str,
                                                             said: str) -> None:
    venue = tmp_path / "venue.toml"
    venue.write_text(text, encoding="utf-8")
    hall_before = contents(tmp_path)
    done = provision(tmp_path, "table-1", "--to", str(tmp_path / "sticks"), "--venue",
                     str(venue), broker="")
    assert done.returncode == 2 and done.stdout == ""
    assert f"gammonclock hall provision: {venue}: {said}" in done.stderr
    assert contents(tmp_path) == hall_before


def test_a_venue_file_says_every_bad_key_at_once(tmp_path: Path) -> None:
    venue = tmp_path / "venue.toml"
    venue.write_text('[venue]\nbroker = 1\nkeys = "k"\nprefix = ""\n', encoding="utf-8")
    done = provision(tmp_path, "table-1", "--to", str(tmp_path / "s"), "--venue", str(venue),
                     broker="")
    lines = done.stderr.splitlines()
    assert [line.split(": ")[2] for line in lines] == ["venue.broker", "venue.keys",
                                                       "venue.prefix"]
    assert all(line.startswith(f"gammonclock hall provision: {venue}: ") for line in lines)


HOSTILE_TABLES = [
    (["a/b"], "'a/b' is not a table id"),
    ([".."], "'..' is not a table id"),
    (["../table-1"], "'../table-1' is not a table id"),
    (["hall"], "'hall' cannot be a table's account: the director's account"),
    (["HALL-1"], "'HALL-1' cannot be a table's account"),
    (["gammonclock-x"], "'gammonclock-x' cannot be a table's account"),
    (["table-1", "x" * 33], f"'{'x' * 33}' is not a table id"),
    (["table-1", "Table-1"], "'Table-1' is named twice (as 'table-1')"),
    ([], "name the tables to provision"),
    ([f"t{i}" for i in range(201)], "201 tables in one run; at most 200"),
]


@pytest.mark.parametrize(("tables", "said"), HOSTILE_TABLES)
def test_a_table_that_cannot_be_one_is_refused_and_nothing_changes(
        tmp_path: Path, tables: list[str], said: str) -> None:
    before = contents(tmp_path)
    done = provision(tmp_path, *tables, "--to", str(tmp_path / "sticks"))
    assert done.returncode == 2 and done.stdout == ""
    assert f"gammonclock hall provision: {said}" in done.stderr
    assert contents(tmp_path) == before                  # no sticks, no accounts, no keys


def test_to_a_file_and_an_existing_stick_folder_are_refused(tmp_path: Path) -> None:
    a_file = tmp_path / "sticks.txt"
    a_file.write_text("not a folder")
    before = contents(tmp_path)
    done = provision(tmp_path, "table-1", "--to", str(a_file))
    assert done.returncode == 2
    assert done.stderr == f"gammonclock hall provision: --to {a_file}: is not a folder\n"
    assert contents(tmp_path) == before

    sticks = tmp_path / "sticks"
    (sticks / "table-2").mkdir(parents=True)
    (sticks / "table-2" / "mine.txt").write_text("the director's own")
    before = contents(tmp_path)
    done = provision(tmp_path, "table-1", "table-2", "--to", str(sticks))
    assert done.returncode == 2
    assert f"{sticks / 'table-2'}: is there already; remove it or give another --to" in \
        done.stderr
    assert contents(tmp_path) == before                  # not even table-1's


def test_a_table_provisioned_already_is_refused_unless_replace_which_keeps_its_key(
        tmp_path: Path) -> None:
    keys = tmp_path / "hall" / "keys"
    first = provision(tmp_path, "table-1", "--to", str(tmp_path / "first"))
    assert first.returncode == 0, first.stderr
    old = Stick(tmp_path / "first" / "table-1")
    hall_before = contents(tmp_path / "hall")

    again = provision(tmp_path, "table-1", "table-2", "--to", str(tmp_path / "again"))
    assert again.returncode == 2
    assert (f"table-1 is provisioned already (its account in {tmp_path / 'hall' / 'passwd'} "
            f"and its key in {keys / 'table-1.key'}); nothing changed. --replace") in \
        again.stderr
    assert contents(tmp_path / "hall") == hall_before and not (tmp_path / "again").exists()

    replaced = provision(tmp_path, "table-1", "--replace", "--to", str(tmp_path / "again"))
    assert replaced.returncode == 0, replaced.stderr
    assert "table-1: " in replaced.stdout and "(its key kept)" in replaced.stdout
    new = Stick(tmp_path / "again" / "table-1")
    assert new.key_text == old.key_text == (keys / "table-1.key").read_text()
    assert new.password != old.password
    assert (tmp_path / "hall" / "passwd").read_bytes() != hall_before["passwd"][1]

    renewed = provision(tmp_path, "table-1", "--replace", "--new-key", "--to",
                        str(tmp_path / "third"))
    assert renewed.returncode == 0, renewed.stderr
    third = Stick(tmp_path / "third" / "table-1")
    assert third.key_text != old.key_text
    assert third.key_text == (keys / "table-1.key").read_text()


def test_a_failure_on_the_way_undoes_what_was_done(tmp_path: Path) -> None:
    """mosquitto_passwd fails after the sticks were staged and the keys written: the sticks'
    folders, the new keys and the replaced one are as they were, the password file untouched."""
    first = provision(tmp_path, "table-1", "--to", str(tmp_path / "first"))
    assert first.returncode == 0, first.stderr
    tools = tmp_path / "tools"
    tools.mkdir()
    (tools / "mosquitto_passwd").write_text("#!/bin/sh\necho 'out of memory' >&2\nexit 3\n")
    (tools / "mosquitto_passwd").chmod(0o755)
    before = contents(tmp_path)
    done = provision(tmp_path, "table-1", "table-2", "--replace", "--new-key", "--to",
                     str(tmp_path / "second"), tools=tools)
    assert done.returncode == 1, done.stderr
    assert done.stderr == ("gammonclock hall provision: mosquitto_passwd failed: out of "
                           "memory; nothing changed\n")
    assert contents(tmp_path) == before


def test_a_broken_key_at_the_hall_is_named_not_handed_out(tmp_path: Path) -> None:
    keys = tmp_path / "hall" / "keys"
    keys.mkdir(parents=True)
    (keys / "table-1.key").write_text("not a key\n")
    before = contents(tmp_path)
    done = provision(tmp_path, "table-1", "--replace", "--to", str(tmp_path / "sticks"))
    assert done.returncode == 2
    assert f"{keys / 'table-1.key'}: the device key is not hex text" in done.stderr
    assert contents(tmp_path) == before


def test_under_sudo_the_sticks_are_the_directors_and_the_halls_files_roots(
        tmp_path: Path) -> None:
    """As root with SUDO_UID (sudo): the sticks' folders are given to that user, to copy them
    to sticks without root; not root: SUDO_UID changes nothing (the runner's own files)."""
    root = os.geteuid() == 0
    done = provision(tmp_path, "table-1", "--to", str(tmp_path / "sticks"), sudo_user=4321)
    assert done.returncode == 0, done.stderr
    director = (4321, 4321) if root else (os.getuid(), os.getgid())
    for path in [tmp_path / "sticks", *(tmp_path / "sticks").rglob("*")]:
        assert (path.lstat().st_uid, path.lstat().st_gid) == director, path
    for path in [tmp_path / "hall" / "passwd", tmp_path / "hall" / "keys" / "table-1.key"]:
        assert path.stat().st_uid == os.getuid(), path


def test_the_password_file_keeps_its_other_accounts_and_its_mode(tmp_path: Path) -> None:
    broker = Broker(tmp_path / "broker", {DIRECTOR: "director-pw"})
    passwd = broker.folder / "passwd"
    passwd.chmod(0o640)
    director_line = passwd.read_text().splitlines()[0]
    done = provision(tmp_path, "table-1", "--to", str(tmp_path / "sticks"), passwd=passwd)
    assert done.returncode == 0, done.stderr
    lines = passwd.read_text().splitlines()
    assert lines[0] == director_line and lines[1].startswith("table-1:$7$")
    assert oct(passwd.stat().st_mode & 0o777) == "0o640"
    assert "Stick" not in done.stderr and "director-pw" not in passwd.read_text()


def test_forty_tables_in_one_run_are_quick_and_each_logs_in(tmp_path: Path,
                                                            hall_broker: Broker) -> None:
    """40 sticks, timed (one `mosquitto_passwd` run for all the accounts, printed); every
    account logs in to the real broker."""
    broker = hall_broker
    tables = [f"table-{n}" for n in range(1, 41)]
    started = time.monotonic()
    done = provision(tmp_path, *tables, "--to", str(tmp_path / "sticks"),
                     passwd=broker.folder / "passwd", broker=broker.url)
    took = time.monotonic() - started
    print(f"\nprovisioning 40 tables took {took:.2f} s (the command, Python's start included);"
          f" it said: {done.stdout.splitlines()[-2] if done.returncode == 0 else done.stderr}")
    assert done.returncode == 0, done.stderr
    assert took < 30
    assert sorted(p.name for p in (tmp_path / "sticks").iterdir()) == sorted(tables)
    broker.start()
    for table in tables:
        assert logs_in(broker, table, Stick(tmp_path / "sticks" / table).password), table


def test_one_mosquitto_passwd_per_table_for_comparison(tmp_path: Path) -> None:
    """What 40 tables would cost one `mosquitto_passwd -b` each (add-table's old way), printed
    beside the batch above."""
    tool = find_binary("mosquitto_passwd")
    passwd = tmp_path / "passwd"
    started = time.monotonic()
    for n in range(40):
        subprocess.run([tool, *([] if passwd.exists() else ["-c"]), "-b", str(passwd),
                        f"table-{n}", "pw"], check=True, capture_output=True)
    print(f"\n40 mosquitto_passwd -b runs took {time.monotonic() - started:.2f} s")
    assert len(passwd.read_text().splitlines()) == 40


def test_the_broker_is_reloaded_only_as_root_with_its_unit_active() -> None:
    from gammonclock.hall.provision import Reload, reload_broker
    ran: list[list[str]] = []

    def run(command: list[str], **_kw: Any) -> Any:
        ran.append(command)
        return subprocess.CompletedProcess(command, 0)

    assert reload_broker(True, run, "/bin/systemctl", 0) is Reload.SKIPPED and ran == []
    outcome = reload_broker(False, run, "/bin/systemctl", 0)
    assert outcome is Reload.RELOADED
    assert ran == [["/bin/systemctl", "is-active", "--quiet", "mosquitto.service"],
                   ["/bin/systemctl", "reload", "mosquitto.service"]]
    ran.clear()
    assert reload_broker(False, run, "/bin/systemctl", 1000) is Reload.TOLD
    assert reload_broker(False, run, None, 0) is Reload.TOLD
    assert ran == []

    def inactive(command: list[str], **_kw: Any) -> Any:
        ran.append(command)
        return subprocess.CompletedProcess(command, 3)

    assert reload_broker(False, inactive, "/bin/systemctl", 0) is Reload.TOLD
    assert ran == [["/bin/systemctl", "is-active", "--quiet", "mosquitto.service"]]

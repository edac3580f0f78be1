"""`gammonclock hall provision TABLE… --to DIR` and `--collect STICK…` (issue 32, the venue's
layout in hall/README.md): each table's broker account, its device key and the folder the
director copies to the root of one USB stick, so that a clock joins the hall and its results
verify with no file copied or typed by hand.

    DIR/TABLE/gammonclock/provision/device.toml   [table] and [hall], file names beside it
    DIR/TABLE/gammonclock/provision/hall.password the table's broker password
    DIR/TABLE/gammonclock/provision/venue-ca.crt  with TLS only
    DIR/TABLE/gammonclock/provision/device.key    the table's key, kept as KEYS_DIR/TABLE.key
    DIR/TABLE/README.txt                          what the arbiter does with it (en, ru)

Everything is checked before anything is written (every table id, every folder, every key,
the venue's file); a refusal names each problem and changes nothing. The accounts are written
in one go (`accounts.set_passwords`), the keys with journal/key.py's own writer, each stick's
folder under a temporary name and renamed into place whole.

A table provisioned already (its account or its key at the hall) is refused unless `--replace`:
then it gets a new password and keeps its key, so that the journals it sealed still verify;
`--new-key` gives it a new key as well (docs/decisions.md).

`--collect` takes back the key a clock kept (one that had sealed journals before: it writes
`returned.key` and `returned.table` to the stick) as KEYS_DIR/TABLE.key. It changes only that
table's key, and over a different key only when that key is the one this very stick offered
(the clock declined it) or with `--replace`.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import secrets
import shutil
import stat
import subprocess
import sys
import time
import tomllib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Any

from gammonclock.config.converters import (
    BrokerUrl,
    Converter,
    FilePath,
    FreeText,
    Pattern,
    broker_is_tls,
)
from gammonclock.config.loading import ConfigError, parse_device_config
from gammonclock.config.problems import Line, toml_problem
from gammonclock.config.schema import FIELDS
from gammonclock.errors import GammonclockError
from gammonclock.journal.durable import fsync_dir, write_all
from gammonclock.journal.key import (
    KEY_FILE_LIMIT,
    SECRET_FILE,
    KeyRefused,
    key_in_bytes,
    key_in_file,
    new_key,
    write_key,
)
from gammonclock.journal.records import JournalError
from gammonclock.words import LANGUAGES, say

from .accounts import (
    NO_MOSQUITTO_PASSWD,
    AccountsError,
    accounts,
    find_mosquitto_passwd,
    new_password,
    set_passwords,
    table_id_problem,
)

EXIT_BAD_INPUT = 2
EXIT_FAILED = 1
VENUE_FILE = Path("/etc/gammonclock-hall/venue.toml")
PROVISION = Path("gammonclock") / "provision"      # on the stick, from its root
DEVICE_FILE = "device.toml"
PASSWORD_FILE = "hall.password"
CA_FILE = "venue-ca.crt"
README_FILE = "README.txt"
RETURNED_KEY = "returned.key"
RETURNED_TABLE = "returned.table"
MAX_TABLES = 200              # in one run: a venue's tables, not a list without end
MAX_VENUE_BYTES = 64 * 1024
MAX_CA_BYTES = 64 * 1024
MAX_TABLE_FILE_BYTES = 64     # returned.table: a table id and a newline
KEY_MODE = 0o640              # KEYS_DIR/TABLE.key: the hall's service reads it by its group
KEYS_DIR_MODE = 0o750
BROKER_UNIT = "mosquitto.service"
SEARCH_PATH = os.pathsep.join([os.environ.get("PATH", ""), "/usr/bin", "/bin"])
RELOAD_COMMAND = f"sudo systemctl reload {BROKER_UNIT.removesuffix('.service')}"


def _field(key: str) -> Converter:
    return next(f.type for f in FIELDS if f.key == key)


# venue.toml's [venue] keys, each read as the clock's device config reads its own.
VENUE_KEYS: dict[str, Converter] = {
    "broker": BrokerUrl(),
    "prefix": _field("hall.prefix"),
    "passwd_file": FilePath(),
    "keys_dir": FilePath("directory"),
    "ca_file": FilePath(),
    "time_server": Pattern(r"[A-Za-z0-9._:-]{1,253}", "a host", "a host name or address",
                           max_length=253),
}
OPTIONS = {"broker": "--broker", "prefix": "--prefix", "passwd_file": "--passwd-file",
           "keys_dir": "--keys-dir", "ca_file": "--ca-file"}
EVENT = FreeText()


@dataclass(frozen=True)
class Venue:
    """The venue as venue.toml and the options say it."""

    broker: str | None
    prefix: str
    passwd_file: Path | None
    keys_dir: Path | None
    ca_file: Path | None
    time_server: str | None


class Refused(GammonclockError, ValueError):
    """What stops a run before anything is written: every problem, one a line."""

    def __init__(self, problems: Sequence[str]) -> None:
        self.problems = list(problems)
        super().__init__("\n".join(self.problems))


class Reload(Enum):
    """What became of the tables' broker after the accounts changed."""

    RELOADED = "reloaded"
    TOLD = "told"          # not possible here: the command printed
    SKIPPED = "skipped"    # --no-reload


class Collected(Enum):
    """What `--collect` did with one stick's returned key."""

    NEW = "new"              # the table had no key at the hall
    SAME = "same"            # the hall holds that key already
    ANSWERED = "answered"    # over the key this stick offered, which the clock declined
    REPLACED = "replaced"    # over another key, with --replace


# --- the venue --------------------------------------------------------------------------------


def read_venue(path: Path, explicit: bool, options: dict[str, str | None],
               needed: Sequence[str]) -> Venue:
    """venue.toml's [venue] (a missing default file is none: the options say it all), each
    option given laid over it, `needed` keys required. ConfigError naming the file and every
    bad key."""
    data = _venue_data(path, explicit)
    problems: list[str] = []
    values: dict[str, Any] = {}
    section = data.get("venue", {})
    for name in data:
        if name != "venue":
            problems.append(Line(name, "unknown section; allowed: venue"))
    if not isinstance(section, dict):
        problems.append(Line("venue", "must be a table ([venue])"))
        section = {}
    named = set(section) | {key for key, given in options.items() if given is not None}
    for key, raw in section.items():
        if key not in VENUE_KEYS:
            problems.append(Line(f"venue.{key}", f"unknown key; allowed in [venue]: "
                                                 f"{', '.join(VENUE_KEYS)}"))
            continue
        try:
            values[key] = VENUE_KEYS[key].convert(raw, values)
        except ValueError as exc:
            problems.append(Line(f"venue.{key}", str(exc)))
    for key, option in OPTIONS.items():
        given = options.get(key)
        if given is None:
            continue
        try:
            values[key] = VENUE_KEYS[key].convert(given, values)
        except ValueError as exc:
            problems.append(Line(option, str(exc)))
    for key in needed:
        if key not in named:
            problems.append(Line(f"venue.{key}", f"required: set it in [venue] or give "
                                                 f"{OPTIONS[key]}"))
    broker = values.get("broker")
    if values.get("ca_file") is not None and broker is not None and not broker_is_tls(broker):
        problems.append(Line("venue.ca_file", "only with an mqtts:// broker; use mqtts:// or "
                                              "remove the key"))
    if problems:
        raise ConfigError(str(path), problems)
    paths = {key: Path(values[key]) if key in values else None
             for key in ("passwd_file", "keys_dir", "ca_file")}
    return Venue(broker, values.get("prefix", "gammonclock"), paths["passwd_file"],
                 paths["keys_dir"], paths["ca_file"], values.get("time_server"))


def _venue_data(path: Path, explicit: bool) -> dict[str, Any]:
    try:
        with path.open("rb") as f:
            blob = f.read(MAX_VENUE_BYTES + 1)
    except FileNotFoundError:
        if explicit:
            raise ConfigError(str(path), ["cannot read the file: no such file"]) from None
        return {}
    except OSError as exc:
        raise ConfigError(str(path), [f"cannot read the file: {exc.strerror or exc}"]) from None
    if len(blob) > MAX_VENUE_BYTES:
        raise ConfigError(str(path), [f"longer than {MAX_VENUE_BYTES} bytes: not a venue file"])
    try:
        return tomllib.loads(blob.decode("utf-8"))
    except UnicodeDecodeError:
        raise ConfigError(str(path), ["not a UTF-8 text file"]) from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(str(path), [toml_problem(exc)]) from None
    except (ValueError, RecursionError):
        raise ConfigError(str(path), ["not valid TOML"]) from None


def _venue(args: argparse.Namespace, needed: Sequence[str]) -> Venue:
    options = {"broker": args.venue_broker, "prefix": args.venue_prefix,
               "passwd_file": _text(args.passwd_file), "keys_dir": _text(args.venue_keys_dir),
               "ca_file": _text(args.venue_ca_file)}
    explicit = args.venue is not None
    return read_venue(args.venue or VENUE_FILE, explicit, options, needed)


def _text(path: Path | None) -> str | None:
    return None if path is None else str(path)


# --- provisioning -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Plan:
    """One table's provisioning, decided before anything is written."""

    table: str
    password: str
    key: bytes
    old_key: bytes | None       # the key the hall held (kept, or replaced by --new-key)
    folder: Path                # DIR/TABLE

    @property
    def writes_key(self) -> bool:
        return self.key != self.old_key


def check_tables(tables: Sequence[str]) -> list[str]:
    """Every problem of the tables named: count, ids, names twice (in any case: a FAT stick's
    folder names are one in any case)."""
    problems = []
    if not tables:
        problems.append("name the tables to provision (e.g. table-1 table-2)")
    if len(tables) > MAX_TABLES:
        problems.append(f"{len(tables)} tables in one run; at most {MAX_TABLES}")
        return problems
    seen: dict[str, str] = {}
    for table in tables:
        if (problem := table_id_problem(table)) is not None:
            problems.append(problem)
        elif table.lower() in seen:
            problems.append(f"{table!r} is named twice (as {seen[table.lower()]!r}); a table "
                            f"is provisioned once")
        seen.setdefault(table.lower(), table)
    return problems


def plan(args: argparse.Namespace, venue: Venue
         ) -> tuple[list[Plan], bytes | None, str | None]:
    """Each table's plan, the venue's CA and the event, or Refused with every problem."""
    tables: list[str] = list(args.tables)
    problems = check_tables(tables)
    if problems and (not tables or len(tables) > MAX_TABLES):
        raise Refused(problems)
    assert venue.passwd_file is not None and venue.keys_dir is not None
    to: Path = args.to
    if to is None:
        problems.append("--to DIR is required: the folder that gets one folder per stick")
    elif os.path.lexists(to) and not to.is_dir():
        problems.append(f"--to {to}: is not a folder")
    event = None
    if args.event is not None:
        try:
            event = EVENT.convert(args.event, {}) or None
        except ValueError as exc:
            problems.append(f"--event: {exc}")
    try:
        existing = accounts(venue.passwd_file)
    except OSError as exc:
        problems.append(f"{venue.passwd_file}: cannot read Mosquitto's password file: "
                        f"{exc.strerror or exc}")
        existing = set()
    if os.path.lexists(venue.keys_dir) and not venue.keys_dir.is_dir():
        problems.append(f"{venue.keys_dir}: the keys folder is not a folder")
    plans = []
    for table in tables:
        if table_id_problem(table) is not None:
            continue
        folder = (to or Path(".")) / table
        if to is not None and to.is_dir() and os.path.lexists(folder):
            problems.append(f"{folder}: is there already; remove it or give another --to "
                            f"(a stick's folder is never written over)")
        key_path = venue.keys_dir / f"{table}.key"
        has_key = os.path.lexists(key_path)
        if (table in existing or has_key) and not args.replace:
            held = " and ".join(([f"its account in {venue.passwd_file}"]
                                 if table in existing else [])
                                + ([f"its key in {key_path}"] if has_key else []))
            problems.append(f"{table} is provisioned already ({held}); nothing changed. "
                            f"--replace gives it a new password and keeps its key (its "
                            f"journals still verify); with --new-key a new key too")
            continue
        old_key = None
        if has_key:
            try:
                old_key = key_in_file(key_path, "remove it, or give --new-key")
            except KeyRefused as exc:
                if not args.new_key:
                    problems.append(str(exc))
            except OSError as exc:
                problems.append(f"{key_path}: cannot read the table's key: "
                                f"{exc.strerror or exc}")
        key = new_key() if old_key is None or args.new_key else old_key
        plans.append(Plan(table, new_password(), key, old_key, folder))
    ca = _ca(venue, problems)
    if problems:
        raise Refused(problems)
    return plans, ca, event


def _ca(venue: Venue, problems: list[str]) -> bytes | None:
    if venue.ca_file is None:
        return None
    try:
        with venue.ca_file.open("rb") as f:
            blob = f.read(MAX_CA_BYTES + 1)
    except OSError as exc:
        problems.append(f"{venue.ca_file}: cannot read the venue's CA: {exc.strerror or exc}")
        return None
    if len(blob) > MAX_CA_BYTES or b"-----BEGIN CERTIFICATE-----" not in blob:
        problems.append(f"{venue.ca_file}: is not a CA certificate (PEM, at most "
                        f"{MAX_CA_BYTES} bytes)")
        return None
    return blob


def device_toml(table: str, venue: Venue, event: str | None) -> str:
    """The stick's device.toml: [table] and [hall] only, its files named beside it."""
    assert venue.broker is not None
    lines = ["# made by `gammonclock hall provision`: the hall's part of this table's device",
             "# config; the clock keeps it and lays it over its own [table] and [hall]",
             "[table]", f"id = {json.dumps(table)}"]
    if event is not None:
        lines.append(f"event = {json.dumps(event, ensure_ascii=False)}")
    lines += ["", "[hall]", f"broker = {json.dumps(venue.broker)}",
              f"username = {json.dumps(table)}",
              f'password_file = "{PASSWORD_FILE}"      # beside this file']
    if venue.ca_file is not None:
        lines.append(f'ca_file = "{CA_FILE}"           # beside this file')
    lines += [f"prefix = {json.dumps(venue.prefix)}", ""]
    text = "\n".join(lines)
    parse_device_config(text, f"{table}/{PROVISION}/{DEVICE_FILE}")   # the clock's own check
    return text


def readme(table: str, venue: Venue) -> str:
    """README.txt on the stick: English, then Russian."""
    parts = []
    for lang in LANGUAGES:
        text = say("provision.readme", lang, table=table, broker=venue.broker)
        if venue.time_server is not None:
            text += "\n" + say("provision.readme_time", lang, host=venue.time_server)
        parts.append(text)
    return "\n\n".join(parts)


def _write(path: Path, data: bytes, mode: int) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    try:
        write_all(fd, data)
        os.fchmod(fd, mode)
        os.fsync(fd)
    finally:
        os.close(fd)


def stage(p: Plan, venue: Venue, ca: bytes | None, event: str | None) -> Path:
    """The stick's folder written whole under a temporary name beside DIR/TABLE."""
    staged = p.folder.with_name(f".{p.table}.new-{secrets.token_hex(4)}")
    inner = staged / PROVISION
    os.mkdir(staged, 0o700)
    try:
        inner.parent.mkdir(mode=0o700)
        inner.mkdir(mode=0o700)
        _write(inner / DEVICE_FILE, device_toml(p.table, venue, event).encode(), 0o600)
        _write(inner / PASSWORD_FILE, (p.password + "\n").encode(), 0o600)
        if ca is not None:
            _write(inner / CA_FILE, ca, 0o644)
        write_key(inner / SECRET_FILE, p.key, 0o600)
        _write(staged / README_FILE, readme(p.table, venue).encode(), 0o644)
        for folder in (inner, inner.parent, staged):
            fsync_dir(folder)
    except BaseException:
        shutil.rmtree(staged, ignore_errors=True)
        raise
    return staged


def provision(args: argparse.Namespace) -> int:
    """`gammonclock hall provision TABLE… --to DIR`."""
    if args.collect:
        return collect(args)
    started = time.monotonic()
    try:
        venue = _venue(args, ("broker", "passwd_file", "keys_dir"))
        tool = find_mosquitto_passwd()
        plans, ca, event = plan(args, venue)
        if tool is None:
            raise Refused([NO_MOSQUITTO_PASSWD])
    except ConfigError as exc:
        return _refused(str(exc).splitlines())
    except Refused as exc:
        return _refused(exc.problems)
    assert venue.passwd_file is not None and venue.keys_dir is not None
    try:
        _apply(plans, venue, ca, event, args, tool)
    except (OSError, JournalError, AccountsError) as exc:
        print(f"gammonclock hall provision: {_reason(exc)}; nothing changed",
              file=sys.stderr)
        return EXIT_FAILED
    took = time.monotonic() - started
    for p in plans:
        kept = "its key kept" if p.old_key == p.key else "a new key"
        print(f"{p.table}: {p.folder} ({kept})")
    print(f"provisioned {len(plans)} tables in {took:.2f} s: accounts in {venue.passwd_file}, "
          f"keys in {venue.keys_dir}; copy each folder's contents to the root of one stick")
    _say_reload(reload_broker(args.no_reload, subprocess.run,
                              shutil.which("systemctl", path=SEARCH_PATH), os.geteuid()))
    return 0


def _apply(plans: Sequence[Plan], venue: Venue, ca: bytes | None, event: str | None,
           args: argparse.Namespace, tool: str) -> None:
    """The sticks staged, then the keys, then every account at once, then the sticks renamed
    into place; a failure undoes what was done."""
    assert venue.passwd_file is not None and venue.keys_dir is not None
    to: Path = args.to
    made_to = not to.exists()
    to.mkdir(parents=True, exist_ok=True)
    staged: dict[str, Path] = {}
    written: list[Plan] = []
    try:
        for p in plans:
            staged[p.table] = stage(p, venue, ca, event)
        if any(p.writes_key for p in plans) and not venue.keys_dir.exists():
            venue.keys_dir.mkdir(mode=KEYS_DIR_MODE, parents=True)
        for p in plans:
            if p.writes_key:
                path = venue.keys_dir / f"{p.table}.key"
                if not write_key(path, p.key, KEY_MODE,
                                 replace=p.old_key is not None or args.new_key,
                                 group_of=venue.keys_dir):
                    raise JournalError(f"{path}: another key appeared there meanwhile")
                written.append(p)
        set_passwords(tool, venue.passwd_file, {p.table: p.password for p in plans})
        for p in plans:
            os.rename(staged.pop(p.table), p.folder)
    except BaseException:
        for folder in staged.values():
            shutil.rmtree(folder, ignore_errors=True)
        for p in written:
            _undo_key(venue.keys_dir / f"{p.table}.key", p.old_key, venue.keys_dir)
        if made_to:
            with contextlib.suppress(OSError):
                to.rmdir()
        raise
    _give_to_sudo_user(to, made_to, [p.folder for p in plans])


def _undo_key(path: Path, old: bytes | None, keys_dir: Path) -> None:
    with contextlib.suppress(OSError, JournalError):
        if old is None:
            path.unlink()
        else:
            write_key(path, old, KEY_MODE, replace=True, group_of=keys_dir)


def _give_to_sudo_user(to: Path, made_to: bool, folders: Sequence[Path]) -> None:
    """Under sudo, the sticks' folders are the director's own (to copy them to sticks without
    root); the hall's files stay root's."""
    uid, gid = os.environ.get("SUDO_UID"), os.environ.get("SUDO_GID")
    if os.geteuid() != 0 or uid is None or gid is None or not (uid + gid).isdigit():
        return
    owner = (int(uid), int(gid))
    for folder in folders:
        for top, dirs, files in os.walk(folder):
            for name in [".", *dirs, *files]:
                os.lchown(os.path.join(top, name), *owner)
    if made_to:
        os.lchown(to, *owner)


def reload_broker(skip: bool, run: Callable[..., Any], systemctl: str | None,
                  euid: int) -> Reload:
    """`systemctl reload mosquitto` when this runs as root (`euid`) on a system where that unit
    is active (SIGHUP: Mosquitto reads its password file again), else TOLD."""
    if skip:
        return Reload.SKIPPED
    if euid != 0 or systemctl is None:
        return Reload.TOLD
    try:
        active = run([systemctl, "is-active", "--quiet", BROKER_UNIT], capture_output=True,
                     timeout=30)
        if active.returncode != 0:
            return Reload.TOLD
        done = run([systemctl, "reload", BROKER_UNIT], capture_output=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return Reload.TOLD
    return Reload.RELOADED if done.returncode == 0 else Reload.TOLD


def _say_reload(outcome: Reload) -> None:
    if outcome is Reload.RELOADED:
        print("the tables' broker reloaded: it takes the new accounts")
        return
    why = "not reloaded (--no-reload)" if outcome is Reload.SKIPPED else "not reloaded here"
    print(f"the tables' broker {why}: to take the new accounts run `{RELOAD_COMMAND}` (a "
          f"broker run by hand: kill -HUP its pid)")


# --- collecting a returned key -----------------------------------------------------------------


@dataclass(frozen=True)
class Returned:
    """A key a clock returned on a stick."""

    stick: Path
    table: str
    key: bytes
    offered: bytes | None      # the key this stick carried from the hall, when it still does


def read_returned(stick: Path) -> Returned:
    """The stick's returned key and table, every file checked (a folder, not a link; a regular
    file of bounded size); Refused naming the file."""
    if not stick.is_dir():
        raise Refused([f"{stick}: is not a folder (the stick's root)"])
    folder = stick
    for part in PROVISION.parts:
        folder = folder / part
        _no_link(folder, stat.S_ISDIR, "a folder")
    table_path, key_path = folder / RETURNED_TABLE, folder / RETURNED_KEY
    table_text = _read_small(table_path, MAX_TABLE_FILE_BYTES)
    try:
        table = table_text.decode("ascii").strip()
    except UnicodeDecodeError:
        raise Refused([f"{table_path}: holds no table id"]) from None
    if (problem := table_id_problem(table)) is not None:
        raise Refused([f"{table_path}: {problem}"])
    try:
        key = key_in_bytes(_read_small(key_path, KEY_FILE_LIMIT), str(key_path),
                           "nothing was taken")
    except KeyRefused as exc:
        raise Refused([str(exc)]) from None
    offered = None
    with contextlib.suppress(Refused, KeyRefused):
        offered_path = folder / SECRET_FILE
        offered = key_in_bytes(_read_small(offered_path, KEY_FILE_LIMIT), str(offered_path))
    return Returned(stick, table, key, offered)


def _no_link(path: Path, kind: Callable[[int], bool], what: str) -> os.stat_result:
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        raise Refused([f"{path}: is not there (no key was returned on this stick)"]) from None
    except OSError as exc:
        raise Refused([f"{path}: cannot be read: {exc.strerror or exc}"]) from None
    if stat.S_ISLNK(st.st_mode) or not kind(st.st_mode):
        raise Refused([f"{path}: is not {what} (a link or another kind of file is refused)"])
    return st


def _read_small(path: Path, limit: int) -> bytes:
    """A regular file (no link) of at most `limit` bytes."""
    st = _no_link(path, stat.S_ISREG, "a plain file")
    if st.st_size > limit:
        raise Refused([f"{path}: {st.st_size} bytes, more than a returned file holds "
                       f"({limit})"])
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        with os.fdopen(fd, "rb") as f:
            blob = f.read(limit + 1)
    except OSError as exc:
        raise Refused([f"{path}: cannot be read: {exc.strerror or exc}"]) from None
    if len(blob) > limit:
        raise Refused([f"{path}: more than a returned file holds ({limit} bytes)"])
    return blob


def judge(returned: Returned, held: bytes | None, replace: bool) -> Collected:
    """What taking `returned` would do over the key the hall holds (`held`); Refused for a
    different key without --replace, unless it is the one this stick offered."""
    if held is None:
        return Collected.NEW
    if held == returned.key:
        return Collected.SAME
    if held == returned.offered:
        return Collected.ANSWERED
    if replace:
        return Collected.REPLACED
    raise Refused([f"{returned.stick}: the hall holds another key for {returned.table} "
                   f"(journals it sealed verify only with it); nothing changed. --replace "
                   f"takes the stick's key instead"])


def collect(args: argparse.Namespace) -> int:
    """`gammonclock hall provision --collect STICK…`."""
    if args.tables:
        return _refused(["--collect takes sticks' folders, not tables: "
                         "gammonclock hall provision --collect STICK…"])
    try:
        venue = _venue(args, ("keys_dir",))
    except ConfigError as exc:
        return _refused(str(exc).splitlines())
    assert venue.keys_dir is not None
    problems: list[str] = []
    taken: dict[str, tuple[Returned, Collected]] = {}
    for stick in args.collect:
        try:
            returned = read_returned(stick)
            if (other := taken.get(returned.table)) is not None:
                if other[0].key != returned.key:
                    problems.append(f"{stick}: another key for {returned.table} than "
                                    f"{other[0].stick}'s; nothing changed")
                continue
            taken[returned.table] = (returned, judge(returned, _held(venue.keys_dir,
                                                                      returned.table,
                                                                      args.replace),
                                                     args.replace))
        except Refused as exc:
            problems += exc.problems
    if problems:
        return _refused(problems)
    try:
        if any(how is not Collected.SAME for _, how in taken.values()):
            venue.keys_dir.mkdir(mode=KEYS_DIR_MODE, parents=True, exist_ok=True)
        for table, (returned, how) in taken.items():
            if how is not Collected.SAME:
                write_key(venue.keys_dir / f"{table}.key", returned.key, KEY_MODE,
                          replace=how is not Collected.NEW, group_of=venue.keys_dir)
    except (OSError, JournalError) as exc:
        print(f"gammonclock hall provision: {_reason(exc)}", file=sys.stderr)
        return EXIT_FAILED
    for table, (returned, how) in taken.items():
        print(f"{table}: {COLLECTED_WORDS[how]} ({returned.stick}, "
              f"{venue.keys_dir / (table + '.key')})")
    return 0


COLLECTED_WORDS = {
    Collected.NEW: "its key taken",
    Collected.SAME: "the hall holds this key already, unchanged",
    Collected.ANSWERED: "its own key taken in place of the one the stick offered",
    Collected.REPLACED: "its key taken in place of the hall's (--replace)",
}


def _held(keys_dir: Path, table: str, replace: bool) -> bytes | None:
    """The key the hall holds for `table` (None: none); one it cannot read is Refused unless
    --replace (which then writes over it)."""
    path = keys_dir / f"{table}.key"
    if not os.path.lexists(path):
        return None
    try:
        return key_in_file(path, "--replace writes the stick's key over it")
    except (OSError, KeyRefused) as exc:
        if replace:
            return b""
        raise Refused([str(exc) if isinstance(exc, KeyRefused)
                       else f"{path}: cannot read the table's key: {exc.strerror or exc}"]
                      ) from None


def _reason(exc: BaseException) -> str:
    if isinstance(exc, OSError):
        where = f"{exc.filename}: " if exc.filename else ""
        return f"{where}{exc.strerror or exc}"
    return str(exc)


def _refused(problems: Sequence[str]) -> int:
    for problem in problems:
        print(f"gammonclock hall provision: {problem}", file=sys.stderr)
    return EXIT_BAD_INPUT

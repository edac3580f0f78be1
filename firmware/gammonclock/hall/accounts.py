"""`gammonclock hall add-table ID`: a table's account on the broker (SPEC §14), made with
Mosquitto's own `mosquitto_passwd -b`, and the `[hall]` section to paste into the table's
device.toml. The account is named after the table: hall/acl's `%u` patterns are the table id.

It never touches the director's account nor, silently, a table's: a name that is not a table id
or is reserved for the director (`hall`, the director's account in hall/acl; `hall-…`, which as a
table's client id `gammonclock-hall-…` is the hall's own; `gammonclock…`, the client ids'
prefix; all case-insensitively) is refused, and so is a table whose account is already in the
password file, unless `--replace` says to give it the password in `--password-file`.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import secrets
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path

from gammonclock.errors import GammonclockError
from gammonclock.journal.durable import fsync_dir, write_beside

EXIT_BAD_INPUT = 2
TABLE_ID = re.compile(r"[A-Za-z0-9_-]{1,32}")      # `[table] id`
SEARCH_PATH = os.pathsep.join([os.environ.get("PATH", ""), "/usr/bin", "/usr/sbin"])
DIRECTOR = "hall"           # the director's account in hall/acl (`user hall`)


def reserved(table: str) -> str | None:
    """Why `table` may not be a table's account name (None: it may): names of the director's."""
    name = table.lower()
    if name == DIRECTOR:
        return "the director's account in hall/acl"
    if name.startswith(f"{DIRECTOR}-"):
        return (f"a table's client id would be gammonclock-{table}, the hall's own "
                f"(gammonclock-hall-USER)")
    if name.startswith("gammonclock"):
        return "the hall's and the tables' client ids begin so"
    return None


def table_id_problem(table: str) -> str | None:
    """Why `table` cannot be a table's id and account (None: it can), as `add-table` says it."""
    if TABLE_ID.fullmatch(table) is None:
        return f"{table!r} is not a table id: 1–32 characters of A-Z a-z 0-9 _ -"
    if (why := reserved(table)) is not None:
        return (f"{table!r} cannot be a table's account: {why}; name the table otherwise "
                f"(e.g. table-1)")
    return None


def find_mosquitto_passwd() -> str | None:
    """Mosquitto's own `mosquitto_passwd` (Debian's `mosquitto` package), None without it."""
    return shutil.which("mosquitto_passwd", path=SEARCH_PATH)


NO_MOSQUITTO_PASSWD = "mosquitto_passwd not found: install Debian's `mosquitto` package"


class AccountsError(GammonclockError):
    """The password file could not be changed; it is as it was."""


def set_passwords(tool: str, passwd: Path, passwords: Mapping[str, str]) -> None:
    """Give each account in `passwords` its password in Mosquitto's password file, all at once
    or not at all: the passwords hashed by one `mosquitto_passwd -U` run on a private copy (never
    on its command line, where `ps` shows them; one process for 40 tables), merged with the
    file's other accounts, and the whole file renamed into place with the old one's mode and
    owner (a new file: 0600). AccountsError, the file unchanged, when any step fails."""
    try:
        old = passwd.read_text(encoding="utf-8", errors="surrogateescape")
        mode = passwd.stat()
    except FileNotFoundError:
        old, mode = "", None
    except OSError as exc:
        raise AccountsError(f"{passwd}: cannot read Mosquitto's password file: "
                            f"{exc.strerror or exc}") from None
    hashed = _hashed(tool, passwords)
    lines = [hashed.pop(line.split(":", 1)[0], line) if ":" in line else line
             for line in old.splitlines()]
    text = "\n".join([*lines, *hashed.values()]) + "\n"
    try:
        temporary = write_beside(
            passwd, text.encode("utf-8", errors="surrogateescape"),
            0o600 if mode is None else mode.st_mode & 0o7777,
            None if mode is None else (mode.st_uid, mode.st_gid))
        try:
            os.replace(temporary, passwd)
        finally:
            with contextlib.suppress(OSError):
                os.unlink(temporary)
        fsync_dir(passwd.parent)
    except OSError as exc:
        raise AccountsError(f"{passwd}: cannot write Mosquitto's password file: "
                            f"{exc.strerror or exc}") from None


def _hashed(tool: str, passwords: Mapping[str, str]) -> dict[str, str]:
    """Each account's `NAME:HASH` line as `mosquitto_passwd -U` makes it, in a private folder."""
    with tempfile.TemporaryDirectory(prefix="gammonclock-passwd-") as folder:
        plain = Path(folder) / "passwd"
        fd = os.open(plain, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.writelines(f"{name}:{password}\n" for name, password in passwords.items())
        done = subprocess.run([tool, "-U", str(plain)], capture_output=True, text=True)
        made = plain.read_text(encoding="utf-8").splitlines() if done.returncode == 0 else []
    hashed = {line.split(":", 1)[0]: line for line in made if ":" in line}
    if done.returncode != 0 or set(hashed) != set(passwords) or any(
            not line.split(":", 1)[1].startswith("$") for line in hashed.values()):
        raise AccountsError(f"mosquitto_passwd failed: "
                            f"{(done.stderr or done.stdout).strip() or 'no hashed password'}")
    return hashed


def new_password() -> str:
    """A table's broker password: 24 URL-safe characters (144 random bits)."""
    return secrets.token_urlsafe(18)


def accounts(passwd: Path) -> set[str]:
    """The account names in Mosquitto's password file (`NAME:HASH` lines); none when it does not
    exist yet."""
    try:
        text = passwd.read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        return set()
    return {line.split(":", 1)[0] for line in text.splitlines() if ":" in line}


def _fail(message: str) -> int:
    print(f"gammonclock hall add-table: {message}", file=sys.stderr)
    return EXIT_BAD_INPUT


def table_password(path: Path) -> str:
    """The password in PATH, or a new one written there (mode 0600) when there is no file."""
    if path.exists():
        password = path.read_text(encoding="utf-8").strip()
        if not password or any(c.isspace() or not c.isprintable() for c in password):
            raise ValueError(f"{path}: holds no password (one line of printable characters, "
                             "no spaces); remove it to have one made")
        return password
    password = new_password()
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(password + "\n")
    return password


def device_section(table: str, broker: str, prefix: str) -> str:
    return "\n".join([
        f"# for table {table}'s /etc/gammonclock/device.toml; its [table] id must be "
        f'"{table}"',
        "# (the broker account is the table id: hall/acl lets it publish only under it)",
        "[hall]",
        f'broker = "{broker}"',
        f'username = "{table}"',
        'password_file = "/etc/gammonclock/hall.password"   # the --password-file, copied here',
        *(['ca_file = "/etc/gammonclock/hall-ca.pem"'] if broker.startswith("mqtts:") else []),
        f'prefix = "{prefix}"',
        "",
    ])


def add_table(args: argparse.Namespace) -> int:
    table: str = args.table
    if (problem := table_id_problem(table)) is not None:
        return _fail(problem)
    tool = find_mosquitto_passwd()
    if tool is None:
        return _fail(NO_MOSQUITTO_PASSWD)
    passwd: Path = args.mosquitto_passwd
    try:
        existing = accounts(passwd)
    except OSError as exc:
        return _fail(f"{passwd}: cannot read Mosquitto's password file: {exc.strerror or exc}")
    if table in existing and not args.replace:
        return _fail(f"account {table} is already in {passwd}; its password is unchanged. To "
                     f"give it the password in {args.table_password_file}, run again with "
                     f"--replace (the table then needs that file as its hall.password)")
    try:
        password = table_password(args.table_password_file)
    except (OSError, ValueError) as exc:
        return _fail(str(exc))
    try:
        set_passwords(tool, passwd, {table: password})
    except AccountsError as exc:
        return _fail(str(exc))
    print(device_section(table, args.table_broker, args.table_prefix), end="")
    print(f"# account {table} is in {passwd}; reload the broker to use it "
          "(systemctl reload mosquitto, or kill -HUP its pid)", file=sys.stderr)
    return 0

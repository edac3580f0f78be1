"""`gammonclock hall …`: the arguments only. aiohttp and paho-mqtt (the `hall` extra) are imported
when the command runs, so the rest of the command line works without them.

    gammonclock hall --broker mqtt://127.0.0.1:1883 --user hall --password-file hall.password \\
        --http 127.0.0.1:8080 --archive ~/hall-archive [--keys-dir ~/hall-keys] \\
        [--page-host hall.local] [--language ru] [--format swiss|round-robin]
    gammonclock hall demo [--tables 6] [--http 127.0.0.1:8080] [--folder DIR] [--language ru]
    gammonclock hall add-table table-12 --password-file passwords/table-12 \\
        --mosquitto-passwd /etc/mosquitto/passwd [--broker mqtt://10.0.0.2:1883]
    sudo gammonclock hall provision table-1 … table-40 --to ~/sticks [--venue FILE]
    sudo gammonclock hall provision --collect /media/stick
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

EXIT_BAD_INPUT = 2
LANGUAGES = ("en", "ru")       # the page's (hall/page.py's LANGUAGES; aiohttp is not imported here)
FORMATS = ("swiss", "round-robin")   # hall/standings.py's FORMATS (the hall is not imported here)
MISSING_EXTRA = ("gammonclock hall needs the `hall` extra: pip install 'gammonclock[hall]' "
                 "(paho-mqtt and aiohttp)")


def add_hall_parser(commands: Any) -> None:
    """`hall` and `hall add-table` on the `gammonclock` command line."""
    hall = commands.add_parser(
        "hall", help="the director's page: every table on the MQTT broker (SPEC §14)",
        description="Subscribe to every table on the broker and serve the director's page.")
    hall.add_argument("--broker", help="mqtt://HOST[:PORT] or mqtts://HOST[:PORT]")
    hall.add_argument("--user", default="hall",
                      help="the director's account on the broker (default: %(default)s, as in "
                           "hall/acl)")
    hall.add_argument("--password-file", type=Path,
                      help="the file holding that account's password")
    hall.add_argument("--ca-file", help="with mqtts://: the CA certificate that signs the "
                                        "broker's (default: the system's CAs)")
    hall.add_argument("--prefix", default="gammonclock",
                      help="topics are PREFIX/TABLE/… (default: %(default)s)")
    hall.add_argument("--http", default="127.0.0.1:8080", metavar="HOST:PORT",
                      help="where the page is served (default: %(default)s); any address "
                           "other than loopback needs --page-password-file")
    hall.add_argument("--page-password-file", type=Path,
                      help="the page's password (HTTP basic authentication; any user name)")
    hall.add_argument("--page-host", action="append", metavar="NAME",
                      help="a name the page answers to besides the --http address (a "
                           "loopback bind also answers to localhost and 127.x, 0.0.0.0 also to "
                           "any IP address), e.g. hall.local; repeatable. Any other Host is "
                           "refused (DNS rebinding)")
    hall.add_argument("--page-header-timeout", type=float, metavar="SECONDS",
                      help="the time a connection to the page has to send its request's "
                           "headers (default: 10)")
    hall.add_argument("--language", choices=LANGUAGES, default="en",
                      help="the page's language (default: %(default)s); a switch on the page "
                           "chooses another for that browser, which remembers it")
    hall.add_argument("--format", choices=FORMATS, default="swiss", dest="standings_format",
                      help="the event's format, for its standings' tie-breaks (default: "
                           "%(default)s): swiss (wins, Buchholz, Sonneborn-Berger, point "
                           "difference, head-to-head) or round-robin (wins, head-to-head, "
                           "point difference, points for)")
    hall.add_argument("--archive", type=Path, default=Path("hall-archive"),
                      help="the folder where finished journals land and are verified "
                           "(default: %(default)s)")
    hall.add_argument("--keys-dir", "--device-key-dir", type=Path, dest="keys_dir",
                      help="a folder of TABLE.key files (copies of each table's device.key): "
                           "their journals' seals are checked, and a result counts only when "
                           "its table's key verifies it; without one every result is held "
                           "for the director")
    public = hall.add_argument_group(
        "spectators", "the public view (/public, /overlay/TABLE) published to a second "
        "Mosquitto that serves browsers over WebSockets (the checkout's hall/public.conf)")
    public.add_argument("--public-broker", metavar="URL",
                        help="the spectators' broker, where the hall publishes, e.g. "
                             "mqtt://127.0.0.1:1884 (default: no public view)")
    public.add_argument("--public-user", default="hall-public",
                        help="the hall's account there (default: %(default)s, as in "
                             "the checkout's hall/public-hall.acl)")
    public.add_argument("--public-password-file", type=Path,
                        help="the file holding that account's password")
    public.add_argument("--public-websocket", metavar="URL",
                        help="the broker's WebSocket as the browsers reach it (default: "
                             "ws://THE-PAGE'S-HOST:9001/)")
    public.add_argument("--public-delay", type=float, default=0.0, metavar="SECONDS",
                        help="hold the public view back this long, e.g. 30 (live coverage's "
                             "delay against cheating; default: none)")
    hall.set_defaults(handler=_hall, hall_command=None)
    sub = hall.add_subparsers(dest="hall_command", metavar="add-table | provision | demo")
    add = sub.add_parser("add-table", help="create a table's broker account and print the "
                                           "[hall] section for its device.toml")
    add.add_argument("table", metavar="ID", help="the table id (its [table] id), the account name")
    add.add_argument("--password-file", type=Path, required=True, dest="table_password_file",
                     help="the table's password: read from this file, or made and written "
                          "there (mode 0600) when it does not exist; copy it to the Pi as "
                          "/etc/gammonclock/hall.password")
    add.add_argument("--mosquitto-passwd", type=Path, required=True,
                     help="Mosquitto's password file (its `password_file`), created if missing")
    add.add_argument("--broker", dest="table_broker", default="mqtt://BROKER-ADDRESS:1883",
                     help="the broker URL the table uses, for the printed section")
    add.add_argument("--prefix", dest="table_prefix", default="gammonclock")
    add.add_argument("--replace", action="store_true",
                     help="the table's account is already in the password file: give it the "
                          "password in --password-file (without this, an existing account is "
                          "refused and left as it is)")
    _add_provision_parser(sub)

    demo = sub.add_parser(
        "demo", help="try the hall on this machine: a private Mosquitto, N clocks on mock pins "
                     "played by robots, and the page",
        description="A private Mosquitto (Debian's mosquitto package) on a free port with "
                    "generated accounts and the shipped ACL, N real clocks on mock pins whose "
                    "players are robots, and the director's page; prints the page's address. "
                    "Ctrl-C stops it all.")
    demo.add_argument("--tables", type=int, default=6, metavar="N",
                      help="how many clocks (default: %(default)s, at most 24)")
    demo.add_argument("--http", metavar="HOST:PORT",
                      help="where the page is served, on loopback (default: 127.0.0.1:8080, "
                           "or a free port when 8080 is taken)")
    demo.add_argument("--folder", type=Path,
                      help="keep the broker's files, the clocks' journals and the archive "
                           "here (default: a temporary folder, removed at the end)")
    demo.add_argument("--language", choices=LANGUAGES, dest="demo_language",
                      help="the page's language and the clocks' panels' (default: hall's "
                           "--language, else en)")


VENUE_FILE = "/etc/gammonclock-hall/venue.toml"   # hall/provision.py's VENUE_FILE


def _add_provision_parser(sub: Any) -> None:
    """`hall provision TABLE… --to DIR` and `hall provision --collect STICK…`."""
    provision = sub.add_parser(
        "provision", help="each table's account, key and provisioning stick, from the venue",
        description="For each TABLE: its account on the tables' broker, its device key (kept "
                    "in the keys folder) and the folder DIR/TABLE whose contents go to the "
                    "root of one USB stick; the clock takes it as the arbiter confirms it. "
                    f"The venue's settings come from {VENUE_FILE} (made by scripts/install "
                    "--hall); the options override them. With --collect: take back the keys "
                    "clocks returned on their sticks.")
    provision.add_argument("tables", nargs="*", metavar="TABLE",
                           help="the table ids (their [table] id and account names)")
    provision.add_argument("--to", type=Path, metavar="DIR",
                           help="where the sticks' folders are made (one per table; an "
                                "existing one is never written over)")
    provision.add_argument("--venue", type=Path, metavar="FILE",
                           help=f"the venue's settings (default: {VENUE_FILE})")
    provision.add_argument("--broker", dest="venue_broker", metavar="URL",
                           help="the tables' broker as the tables reach it, "
                                "mqtt://HOST:1883 or mqtts://HOST:8883 (venue.toml: broker)")
    provision.add_argument("--prefix", dest="venue_prefix", metavar="PREFIX",
                           help="topics are PREFIX/TABLE/… (venue.toml: prefix; default "
                                "gammonclock)")
    provision.add_argument("--passwd-file", type=Path, metavar="FILE",
                           help="the tables' broker's password file (venue.toml: "
                                "passwd_file)")
    provision.add_argument("--keys-dir", type=Path, dest="venue_keys_dir", metavar="DIR",
                           help="the hall's keys folder, TABLE.key each (venue.toml: "
                                "keys_dir)")
    provision.add_argument("--ca-file", type=Path, dest="venue_ca_file", metavar="FILE",
                           help="with mqtts://: the venue's CA certificate, copied to each "
                                "stick (venue.toml: ca_file)")
    provision.add_argument("--event", metavar="TEXT",
                           help="the event's name, the tables' [table] event")
    provision.add_argument("--replace", action="store_true",
                           help="a table provisioned already gets a new password and keeps "
                                "its key; with --collect: take a returned key over another "
                                "one the hall holds")
    provision.add_argument("--new-key", action="store_true",
                           help="with --replace: a new key too (journals sealed with the old "
                                "one no longer verify at the hall)")
    provision.add_argument("--no-reload", action="store_true",
                           help="do not reload the tables' broker (say how to)")
    provision.add_argument("--collect", nargs="+", type=Path, metavar="STICK",
                           help="take each stick's gammonclock/provision/returned.key (a "
                                "clock that kept its own key) into the keys folder")


def _hall(args: argparse.Namespace) -> int:
    if args.hall_command == "demo":
        from gammonclock.sim.hall_demo import demo
        return demo(args)
    if args.hall_command == "add-table":
        from gammonclock.hall.accounts import add_table  # needs only mosquitto_passwd
        return add_table(args)
    if args.hall_command == "provision":
        from gammonclock.hall.provision import provision  # needs only mosquitto_passwd
        return provision(args)
    try:
        from gammonclock.hall.run import serve
    except ImportError as exc:
        print(f"gammonclock: {MISSING_EXTRA} ({exc})", file=sys.stderr)
        return EXIT_BAD_INPUT
    return serve(args)

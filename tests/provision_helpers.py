"""A provisioning stick as `gammonclock hall provision` writes it (the venue's layout, issue 32:
`gammonclock/provision/device.toml` with only `[table]` and `[hall]`, `hall.password`, the CA
with TLS, `device.key`), written here by hand so that the clock's tests depend on nothing of
the hall's maker; and the clock taking one (`plug`: the `usb-stick DIR` request's work, the
test being the loop; `ask_clock`: through a running clock's socket). The provisioning tests,
English and Russian, use them."""

from __future__ import annotations

import secrets
from pathlib import Path
from typing import Any

from gammonclock.device.build import Device
from gammonclock.runtime.arbiter_client import ask
from gammonclock.runtime.arbiter_socket import serving_path
from gammonclock.runtime.stick_handler import StickHandler
from lifecycle_helpers import on_loop
from mqtt_helpers import Broker
from venue_helpers import Venue

PROVISION = "gammonclock/provision"


def stick_toml(table: str, broker_url: str, *, tls: bool = False, event: str = "Moscow Open"
               ) -> str:
    ca = 'ca_file = "venue-ca.crt"\n' if tls else ""
    return (f'[table]\nid = "{table}"\nevent = "{event}"\n\n[hall]\nbroker = "{broker_url}"\n'
            f'username = "{table}"\npassword_file = "hall.password"\n{ca}'
            f'prefix = "gammonclock"\n')


def write_stick(stick: Path, broker: Broker | None, table: str = "table-1", *,
                key: bytes | None = None, text: str | None = None,
                password: str | None = None) -> Path:
    """`stick` holding a provisioning folder for `table` on `broker` (its account's password),
    the device key `key` (None: none); `text` replaces the device.toml. Returns the folder."""
    folder = stick / PROVISION
    folder.mkdir(parents=True, exist_ok=True)
    url = broker.url if broker is not None else "mqtt://127.0.0.1:1883"
    tls = broker is not None and broker.tls
    (folder / "device.toml").write_text(text if text is not None else stick_toml(
        table, url, tls=tls), encoding="utf-8")
    if password is None:
        password = broker.passwords.get(table, "secret") if broker is not None else "secret"
    (folder / "hall.password").write_text(password + "\n", encoding="utf-8")
    if tls:
        assert broker is not None
        (folder / "venue-ca.crt").write_bytes(broker.ca_file.read_bytes())
    if key is not None:
        (folder / "device.key").write_text(key.hex() + "\n", encoding="ascii")
    return folder


def new_key() -> bytes:
    return secrets.token_bytes(32)


def plug(device: Device, stick: Path) -> Any:
    """The stick mounted: the `usb-stick DIR` request's work, the test being the loop."""
    return on_loop(device, lambda: StickHandler(device.service, device.table,
                                                device.provisioning)(stick))


def ask_clock(state: Path, words: list[str]) -> dict[str, Any]:
    """A running clock (its own loop thread) asked on its socket, as `gammonclock usb-stick`
    and `gammonclock arbiter` ask it."""
    return ask(serving_path(state), words, timeout_s=60.0)


def state_files(state: Path) -> dict[str, bytes]:
    """The state folder's files but the journals, the socket and the lock: what a refused
    stick must leave as it was."""
    kept = {}
    for path in sorted(state.rglob("*")):
        if path.is_file() and not path.is_symlink() and "journals" not in path.parts \
                and path.name not in ("lock", "arbiter.sock"):
            kept[str(path.relative_to(state))] = path.read_bytes()
    return kept


def clock_in(venue: Venue, tmp_path: Path) -> Device:
    """A clock of the venue, table pi-3, its state in `tmp_path/clock`."""
    return venue.build(tmp_path, "pi-3", tmp_path / "clock", 50 * 3600, "boot-clock")

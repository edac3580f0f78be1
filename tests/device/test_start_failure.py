"""A clock that cannot start says why in `systemctl status` (issue 21): its reason as the
service's STATUS=, which systemd keeps through the restarts of `Restart=always` (a restart
counter alone says nothing), and on stderr for the journal.
tests/install/test_systemd_container.py sees it under a real systemd."""

from __future__ import annotations

import socket
import sys
from pathlib import Path

import pytest

from device_helpers import MOCK_TEXT
from gammonclock.cli.main import main


@pytest.fixture
def notify_socket(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """systemd's notify socket as the unit gives it to the clock: what it is told, kept."""
    path = tmp_path / "notify"
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(str(path))
    sock.settimeout(0.5)
    monkeypatch.setenv("NOTIFY_SOCKET", str(path))
    yield sock
    sock.close()


def told(sock: socket.socket) -> list[str]:
    messages = []
    try:
        while True:
            messages.append(sock.recv(4096).decode())
    except TimeoutError:
        return messages


def test_a_config_error_is_the_status(tmp_path, notify_socket, capsys):
    config = tmp_path / "device.toml"
    config.write_text(MOCK_TEXT.replace('pin_factory = "mock"', 'pin_factory = "bogus"'))
    assert main(["run", "--config", str(config), "--state-dir", str(tmp_path / "state")]) == 2
    why = f'{config}: hardware.pin_factory: "bogus" is not one of: lgpio, rpigpio, mock'
    assert told(notify_socket) == [f"STATUS=failed to start: {why}"]
    assert f"gammonclock: {why}" in capsys.readouterr().err


def test_a_hardware_error_is_the_status_on_one_line(tmp_path, notify_socket, monkeypatch,
                                                     capsys):
    monkeypatch.setitem(sys.modules, "lgpio", None)            # no lgpio here: an ImportError
    config = tmp_path / "device.toml"
    config.write_text(MOCK_TEXT.replace('pin_factory = "mock"', 'pin_factory = "lgpio"'))
    assert main(["run", "--config", str(config), "--state-dir", str(tmp_path / "state")]) == 1
    [status] = told(notify_socket)
    assert status.startswith("STATUS=failed to start: pin factory 'lgpio' cannot be created: ")
    assert "\n" not in status                                   # one STATUS= line, no other key
    assert "install lgpio" in status and "install lgpio" in capsys.readouterr().err

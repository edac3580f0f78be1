"""The arbiter's control socket on a running device (mock pins, dummy panels)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from device_helpers import start_game_one
from gammonclock.cli.main import main
from gammonclock.config.loading import parse_config
from gammonclock.device.build import build_device
from gammonclock.journal.reader import read_journal
from gammonclock.journal.records import JOURNALS_DIR
from gammonclock.journal.replay import replay
from gammonclock.runtime.arbiter_client import ask
from gammonclock.runtime.arbiter_socket import socket_path

ROOT = Path(__file__).resolve().parents[2]
MOCK = (ROOT / "config" / "backgammon.toml").read_text().replace(
    'pin_factory = "lgpio"', 'pin_factory = "mock"')


def test_status_is_the_spec_state_now(running):
    _, state_dir = running
    answer = ask(socket_path(state_dir), ["status"])
    assert answer["ok"] is True
    state = answer["state"]
    assert (state["phase"], state["match_length"], state["running"]) == ("between_games", 7, None)
    assert state["clock"]["left"]["reserve_ms"] == 14 * 60_000


def test_a_command_is_applied_journaled_and_answered_with_what_it_did(running):
    device, state_dir = running
    answer = ask(socket_path(state_dir), ["deduct", "left", "30s"])
    assert answer["ok"] is True
    assert answer["said"] == ["arbiter: deduct left 30s", "left's reserve -30 s -> 13:30.0"]
    assert answer["state"]["clock"]["left"]["reserve_ms"] == 13 * 60_000 + 30_000
    # Journaled before the answer came back.
    records = read_journal(device.session.journal.path).records
    commands = [r.data["input"] for r in records if r.kind == "input"]
    # With who gave it: the login at the other end of the socket, as the kernel says.
    import pwd
    me = pwd.getpwuid(os.getuid()).pw_name
    assert commands == [{"type": "arbiter", "command": "deduct left 30s", "source": "socket",
                         "by": me}]
    assert replay(read_journal(device.session.journal.path)).diverged == []


def test_a_refused_command_says_why_and_changes_nothing(running):
    _, state_dir = running
    answer = ask(socket_path(state_dir), ["deduct", "left", "10m"])
    assert answer["ok"] is False
    assert "more than half" in answer["error"]
    assert answer["state"]["clock"]["left"]["reserve_ms"] == 14 * 60_000


def test_words_that_are_no_command_are_an_error_and_reach_nothing(running):
    device, state_dir = running
    answer = ask(socket_path(state_dir), ["dedct", "left", "30s"])
    assert answer == {"ok": False, "error": answer["error"]}
    assert "unknown arbiter command" in answer["error"]
    records = read_journal(device.session.journal.path).records
    assert [r.kind for r in records] == ["header"]


def test_the_arbiter_command_line(running, capsys):
    _, state_dir = running
    base = ["arbiter", "--state-dir", str(state_dir)]
    assert main(base + ["adjust", "right", "-1m"]) == 0          # a word starting with "-"
    assert "right's reserve -60 s -> 13:00.0" in capsys.readouterr().out
    assert main(base + ["--json", "status"]) == 0
    state = json.loads(capsys.readouterr().out)
    assert state["clock"]["right"]["reserve_ms"] == 13 * 60_000
    # The options are taken wherever they stand.
    assert main(["arbiter", "status", "--json", "--state-dir", str(state_dir)]) == 0
    assert json.loads(capsys.readouterr().out) == state
    assert main(["arbiter", "status", "--state-dir"]) == 2
    assert "--state-dir needs a folder" in capsys.readouterr().err
    assert main(base + ["deduct", "left", "10m"]) == 1
    out, err = capsys.readouterr()
    assert "more than half" in err and "more than half" not in out   # said once (issue 19)
    assert main(base + ["frob"]) == 2


def test_no_clock_running_is_a_clear_error(tmp_path, capsys):
    assert main(["arbiter", "--state-dir", str(tmp_path), "status"]) == 3
    assert "no clock answers" in capsys.readouterr().err


def test_a_socket_left_by_a_crash_is_replaced_and_the_socket_goes_at_close(tmp_path):
    stale = socket_path(tmp_path)
    stale.write_text("left over")
    device = build_device(parse_config(MOCK, "mock.toml"), tmp_path)
    try:
        assert stale.is_socket()
        assert oct(stale.stat().st_mode & 0o777) == oct(0o660)
    finally:
        device.close()
    assert not stale.exists()
    assert (tmp_path / JOURNALS_DIR).is_dir()


def test_an_undo_that_acted_exits_0_and_lists_what_no_longer_applies(running, capsys):
    device, state_dir = running
    service = device.service
    start_game_one(service)                                     # right's clock runs
    base = ["arbiter", "--state-dir", str(state_dir)]
    assert main(base + ["pause"]) == 0
    assert main(base + ["deduct", "left", "5s"]) == 0
    assert main(base + ["resume"]) == 0
    capsys.readouterr()
    # The undo takes back the start of game 1: the pause and the resume no longer apply (no
    # clock runs), the deduction is applied again. It acted: exit 0.
    assert main(base + ["undo"]) == 0
    out = capsys.readouterr().out
    assert "undone: the start of game 1" in out
    assert "applied again: deduct left 5s" in out
    assert "no longer applies: pause: no clock is running" in out
    assert "no longer applies: resume:" in out
    answer = ask(socket_path(state_dir), ["status"])
    assert answer["state"]["running"] is None
    assert answer["state"]["clock"]["left"]["reserve_ms"] == 14 * 60_000 - 5_000


def test_the_arbiter_finds_this_logins_simulator_without_flags(tmp_path, monkeypatch):
    import socket
    import tempfile

    from gammonclock.runtime import arbiter_socket
    from gammonclock.runtime.arbiter_socket import (
        asking_path,
        simulator_socket_path,
        someone_serves,
    )

    short = Path(tempfile.mkdtemp(prefix="gc-"))      # a socket's path has at most 107 bytes
    monkeypatch.setattr(tempfile, "gettempdir", lambda: str(short))
    monkeypatch.delenv("RUNTIME_DIRECTORY", raising=False)
    monkeypatch.setattr(arbiter_socket, "RUNTIME_DIR", str(tmp_path / "no-service"))
    default = tmp_path / "state"
    assert asking_path(None, default) == default / "arbiter.sock"      # no simulator runs
    path = simulator_socket_path()
    assert path.parent.name.startswith("gammonclock-simulator-")
    path.parent.mkdir(mode=0o700)
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(str(path))
    server.listen(1)
    try:
        assert asking_path(None, default) == path
        assert someone_serves(path)                     # a second simulator serves elsewhere
        assert asking_path(tmp_path / "told", default) == tmp_path / "told" / "arbiter.sock"
    finally:
        server.close()
    assert not someone_serves(path)
    import shutil
    shutil.rmtree(short)


@pytest.mark.parametrize("made_by", ["another login", "open to others", "a link"])
def test_a_simulator_folder_another_login_could_have_made_is_never_asked(
        tmp_path, monkeypatch, made_by):
    # /tmp is shared: another login may make gammonclock-simulator-UID first and serve a socket
    # there, to receive the arbiter's next match and answer "acted". The arbiter asks only a
    # folder of its own login's alone.
    import os
    import socket
    import tempfile

    from gammonclock.runtime import arbiter_socket
    from gammonclock.runtime.arbiter_socket import asking_path, simulator_socket_path

    short = Path(tempfile.mkdtemp(prefix="gc-"))
    monkeypatch.setattr(tempfile, "gettempdir", lambda: str(short))
    monkeypatch.delenv("RUNTIME_DIRECTORY", raising=False)
    monkeypatch.setattr(arbiter_socket, "RUNTIME_DIR", str(tmp_path / "no-service"))
    path = simulator_socket_path()
    if made_by == "a link":
        (short / "elsewhere").mkdir(mode=0o700)
        path.parent.symlink_to(short / "elsewhere")
    else:
        path.parent.mkdir(mode=0o700)
        if made_by == "another login":
            os.chown(path.parent, 65534, 65534)          # nobody's (the tests run as root)
        else:
            path.parent.chmod(0o755)
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(str(path))
    server.listen(1)
    try:
        default = tmp_path / "state"
        assert asking_path(None, default) == default / "arbiter.sock"
    finally:
        server.close()
        import shutil
        shutil.rmtree(short)


def test_a_login_outside_the_sockets_group_is_told_it_is_a_permission_problem(
        running, capsys, monkeypatch):
    # The kernel's refusal, as `connect` gives it to a login outside the socket's group (the
    # tests run as root, whom the kernel never refuses, so the refusal is put in its place).
    from gammonclock.runtime import arbiter_client

    _, state_dir = running

    def refused(*_args, **_kwargs):
        raise PermissionError(13, "Permission denied")
    monkeypatch.setattr(arbiter_client, "ask", refused)
    status = main(["arbiter", "--state-dir", str(state_dir), "status"])
    err = capsys.readouterr().err
    assert status == 5, err
    assert "permission denied: this login may not use the clock's socket" in err
    assert "scripts/install --arbiter" in err

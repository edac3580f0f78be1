"""`gammonclock arbiter`'s own words in Russian (issue 25): before any reply the client speaks
`--language`, else the `[display] language` of this Pi's device config (cli/arbiter.py's
DEVICE_CONFIG, read best effort), else English; beside a reply (the undo's labels) the reply's
language, the match's. No clock, a refused connection, a connection closed without a reply, a
timeout, a reply that is not one and the usage errors are all said; paths, commands and the
program's name stay as written."""

from __future__ import annotations

import re
import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from device_helpers import start_game_one
from gammonclock.cli import arbiter as arbiter_cli
from gammonclock.cli.main import main
from gammonclock.config.problems import message_of, said
from gammonclock.runtime.arbiter_client import BadReply, ReplyLost, ask
from gammonclock.runtime.arbiter_socket import socket_path

LATIN_WORD = re.compile(r"[A-Za-z]{2,}")
# Names as written: the program and its command, a path, a command in backticks, the words of
# an arbiter's command, the formats' names.
NAMES = re.compile(r"^gammonclock: arbiter:|^gammonclock:|`[^`]*`|\S*/\S*|\bJSON\b|\bUTF-8\b|"
                   r"--state-dir|--language|continue FROM \[--force\] \[--unverified\]|"
                   r"new-match FILE \[--force\]|\bnew-match\b", re.MULTILINE)


def no_english(text: str) -> None:
    found = LATIN_WORD.findall(NAMES.sub(" ", text))
    assert found == [], f"English in the client's Russian: {found}\n{text}"


@pytest.fixture
def device_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """This Pi's device config, Russian; the client reads it at DEVICE_CONFIG."""
    path = tmp_path / "device.toml"
    path.write_text('[table]\nid = "T3"\n\n[display]\nlanguage = "ru"\n', "utf-8")
    monkeypatch.setattr(arbiter_cli, "DEVICE_CONFIG", path)
    return path


def error_of(capsys: pytest.CaptureFixture[str]) -> str:
    return capsys.readouterr().err.strip()


def test_no_clock_is_said_in_the_device_configs_language(tmp_path, device_config, capsys):
    assert main(["arbiter", "--state-dir", str(tmp_path), "status"]) == 3
    err = error_of(capsys)
    assert err == (f"gammonclock: arbiter: часы не отвечают по адресу {socket_path(tmp_path)} "
                   f"(сокета нет: часы не запущены)")
    no_english(err)


def test_language_overrides_the_device_config_and_english_without_one(tmp_path, device_config,
                                                                      capsys, monkeypatch):
    assert main(["arbiter", "--state-dir", str(tmp_path), "--language", "en", "status"]) == 3
    assert error_of(capsys) == (f"gammonclock: arbiter: no clock answers at "
                                f"{socket_path(tmp_path)} (No such file or directory)")
    assert main(["arbiter", "status", "--language=en", "--state-dir", str(tmp_path)]) == 3
    assert "no clock answers" in error_of(capsys)
    # no device config (or one that cannot be read, or is not TOML): English, unless told
    for text in (None, "not = [toml"):
        if text is None:
            device_config.unlink()
        else:
            device_config.write_text(text, "utf-8")
        assert main(["arbiter", "--state-dir", str(tmp_path), "status"]) == 3
        assert "no clock answers" in error_of(capsys)
    assert main(["arbiter", "--language", "ru", "--state-dir", str(tmp_path), "status"]) == 3
    no_english(error_of(capsys))


def test_a_refused_connection_is_said_in_russian(tmp_path, device_config, capsys):
    path = socket_path(tmp_path)
    bound = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    bound.bind(str(path))                       # bound, never listening: ECONNREFUSED
    try:
        assert main(["arbiter", "--state-dir", str(tmp_path), "status"]) == 3
    finally:
        bound.close()
    err = error_of(capsys)
    assert err == (f"gammonclock: arbiter: часы не отвечают по адресу {path} (в соединении "
                   f"отказано: часы не слушают сокет)")
    no_english(err)


def test_the_usage_errors_are_said_in_russian(tmp_path, device_config, capsys):
    expected = [
        (["arbiter"], "укажите команду, например `gammonclock arbiter status`"),
        (["arbiter", "status", "--state-dir"], "после --state-dir нужна папка"),
        (["arbiter", "continue"], "укажите один журнал или одну папку: continue FROM [--force] "
                                  "[--unverified]"),
        (["arbiter", "new-match", "a.toml", "b.toml"],
         "new-match: укажите один файл матча: new-match FILE [--force]"),
    ]
    for argv, words in expected:
        assert main(argv) == 2
        err = error_of(capsys)
        assert err == f"gammonclock: arbiter: {words}", argv
        no_english(err)
    assert main(["arbiter", "status", "--language", "de"]) == 2
    assert error_of(capsys) == "gammonclock: arbiter: --language 'de': возможны: en, ru"


class Server:
    """A socket that accepts and answers each connection with `reply` (None: holds it open
    until the test ends, b"": closes it at once)."""

    def __init__(self, path: Path, reply: bytes | None) -> None:
        self.reply, self.done = reply, threading.Event()
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.bind(str(path))
        self.sock.listen(4)
        self.held: list[socket.socket] = []
        self.thread = threading.Thread(target=self.serve, daemon=True)
        self.thread.start()

    def serve(self) -> None:
        while not self.done.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            conn.recv(65536)
            if self.reply is None:
                self.held.append(conn)
                continue
            conn.sendall(self.reply)
            conn.close()

    def close(self) -> None:
        self.done.set()
        self.sock.shutdown(socket.SHUT_RDWR)
        self.sock.close()
        for conn in self.held:
            conn.close()
        self.thread.join(timeout=5)


@pytest.fixture
def server(tmp_path: Path) -> Iterator[type[Server]]:
    made: list[Server] = []

    def make(path: Path, reply: bytes | None) -> Server:
        made.append(Server(path, reply))
        return made[-1]
    yield make  # type: ignore[misc]
    for each in made:
        each.close()


def test_a_connection_closed_without_a_reply_twice_is_said_in_russian(tmp_path, server, capsys,
                                                                      device_config):
    server(socket_path(tmp_path), b"")
    assert main(["arbiter", "--state-dir", str(tmp_path), "pause"]) == 2
    err = error_of(capsys)
    assert err == ("gammonclock: arbiter: часы дважды закрыли соединение, не ответив; "
                   "неизвестно, применена ли команда `pause`: проверьте через `gammonclock "
                   "arbiter status`, прежде чем повторять её")
    no_english(err)


def test_a_reply_that_is_not_json_is_said_in_russian(tmp_path, server, capsys, device_config):
    server(socket_path(tmp_path), b"<html>\n")
    assert main(["arbiter", "--state-dir", str(tmp_path), "status"]) == 2
    err = error_of(capsys)
    assert err == "gammonclock: arbiter: ответ — не JSON: '<html>\\n'"


def test_a_timeout_is_said_in_russian_and_its_english_is_unchanged(tmp_path, server):
    server(socket_path(tmp_path), None)
    with pytest.raises(ReplyLost) as caught:
        ask(socket_path(tmp_path), ["pause"], timeout_s=0.2)
    assert str(caught.value) == ("the clock took the request but no reply came (timed out), "
                                 "twice; whether `pause` was applied is unknown: check with "
                                 "`gammonclock arbiter status` before repeating it")
    russian = said(message_of(caught.value), "ru")
    assert russian.startswith("часы приняли запрос, но ответ не пришёл (время ожидания "
                              "истекло), и так дважды; неизвестно, применена ли команда")
    no_english(russian)


def test_a_reply_for_another_request_in_russian(tmp_path, server):
    server(socket_path(tmp_path), b'{"ok": true, "id": "someone else"}\n')
    with pytest.raises(BadReply) as caught:
        ask(socket_path(tmp_path), ["status"])
    assert str(caught.value) == "the reply is for another request"
    assert said(message_of(caught.value), "ru") == "ответ относится к другому запросу"


def test_the_undos_labels_are_in_the_matchs_language(running_ru, capsys, monkeypatch,
                                                    tmp_path):
    # this Pi's device config says nothing: the labels follow the reply (the match's language)
    monkeypatch.setattr(arbiter_cli, "DEVICE_CONFIG", tmp_path / "absent.toml")
    device, state_dir = running_ru
    service = device.service
    start_game_one(service)                                     # right's clock runs
    base = ["arbiter", "--state-dir", str(state_dir)]
    for command in (["pause"], ["deduct", "left", "5s"], ["resume"]):
        assert main(base + command) == 0
    capsys.readouterr()
    from gammonclock.runtime import arbiter_client
    real_ask, replies = arbiter_client.ask, []

    def recorded(*args, **kwargs):
        replies.append(real_ask(*args, **kwargs))
        return replies[-1]
    monkeypatch.setattr(arbiter_client, "ask", recorded)
    assert main(base + ["undo"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert "применено снова: deduct left 5s" in lines
    assert any(line.startswith("больше не применяется: pause: ") for line in lines), lines
    assert not any("applied again" in line or "no longer applies" in line for line in lines)
    # --language is the client's own choice: its labels follow it (the same reply, from the
    # Russian match, said again: the undo has nothing left to take back)
    monkeypatch.setattr(arbiter_client, "ask", lambda *args, **kwargs: replies[-1])
    assert main(base + ["--language", "en", "undo"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert "applied again: deduct left 5s" in lines
    assert any(line.startswith("no longer applies: pause: ") for line in lines), lines
    assert not any("применено снова" in line or "больше не применяется" in line
                   for line in lines)

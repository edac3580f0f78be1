"""The arbiter's replies in the match's language (SPEC §15, issue 25): on the socket and to the
hall, a Russian match's "said" lines and refusals are Russian without any flag; the replies'
fields stay as they are, and the command's own line ("arbiter: …") stays as it was given, which
the hall's page picks out."""

from __future__ import annotations

import json
from pathlib import Path

from gammonclock.cli.main import main
from gammonclock.link.outbox import HallMemory
from gammonclock.link.requests import HallRequests
from gammonclock.runtime.arbiter_client import ask
from gammonclock.runtime.arbiter_socket import socket_path


def test_a_russian_matchs_socket_replies_are_russian(running_ru, capsys) -> None:
    _, state_dir = running_ru
    answer = ask(socket_path(state_dir), ["deduct", "left", "30s"])
    assert answer["ok"] is True and answer["outcome"] == "acted"
    assert answer["said"] == ["arbiter: deduct left 30s", "резерв левого -30 с -> 13:30,0"]
    assert set(answer) == {"ok", "outcome", "said", "state"}
    refused = ask(socket_path(state_dir), ["deduct", "left", "10m"])
    assert refused["ok"] is False and refused["refused"] is True
    assert refused["error"] == "deduct left 600s: больше половины оставшегося резерва (13:30,0)"
    assert ("отказано deduct left 600s: больше половины оставшегося резерва (13:30,0)"
            in refused["said"])
    # `gammonclock arbiter` prints them as they come
    assert main(["arbiter", "--state-dir", str(state_dir), "add", "right", "15s"]) == 0
    assert "резерв правого +15 с -> 14:15,0" in capsys.readouterr().out


def test_an_english_matchs_replies_stay_english(running) -> None:
    _, state_dir = running
    answer = ask(socket_path(state_dir), ["deduct", "left", "30s"])
    assert answer["said"] == ["arbiter: deduct left 30s", "left's reserve -30 s -> 13:30.0"]


def test_a_russian_matchs_hall_replies_are_russian(running_ru, tmp_path: Path) -> None:
    device, _ = running_ru
    (tmp_path / "hall").mkdir()
    hall = HallRequests(device.service, None, HallMemory(tmp_path / "hall"),  # type: ignore[arg-type]
                        lambda *_: None, match_topic="gammonclock/table-1/match")
    answer = hall.answer(json.dumps({"id": "r1", "command": "add left 15s"}).encode())
    assert answer["ok"] is True
    assert answer["said"] == ["arbiter: add left 15s", "резерв левого +15 с -> 14:15,0"]
    refused = hall.answer(json.dumps({"id": "r2", "command": "resume"}).encode())
    assert refused["outcome"] == "refused" and refused["code"] == "not_paused"
    assert refused["reason"] == "resume: часы не на паузе"

"""A match moved to another clock, on the clock's runtime (SPEC §13.5, issue 31): the arbiter
says it on the socket (`gammonclock arbiter moved TABLE`, the arbiters' group), the clock ends
it, journals it with who said it, and the panels say where it went; restarted on the same
state folder the clock never resumes it (it loads its match file, or is idle); and a journal
ended as moved is never continued again anywhere."""

from __future__ import annotations

import os
import pwd
from pathlib import Path

import pytest

from device_helpers import MOCK_TEXT, running_device, start_game_one
from export_helpers import play_journal
from gammonclock.cli.main import main
from gammonclock.config.problems import message_of, said
from gammonclock.hardware.presenters import PanelPresenter
from gammonclock.journal.reader import read_journal
from gammonclock.journal.records import JOURNALS_DIR
from gammonclock.runtime.arbiter_client import ask
from gammonclock.runtime.arbiter_socket import socket_path
from gammonclock.runtime.continuation import ContinuationRefused, check_source

ME = pwd.getpwuid(os.getuid()).pw_name


def shown(device) -> list:
    [panels] = [p for p in device.service.presenters if isinstance(p, PanelPresenter)]
    return [view for view, _ in panels.shown_both()]


def last_command(path: str | Path) -> dict:
    return [r.data for r in read_journal(path).records if r.kind == "input"
            and r.data["input"]["type"] == "arbiter"][-1]


def test_moved_on_the_socket_ends_the_match_and_a_restart_never_resumes_it(tmp_path, capsys):
    with running_device(MOCK_TEXT, tmp_path) as (device, state):
        start_game_one(device.service)
        journal = Path(device.session.journal.path)
        assert main(["arbiter", "--state-dir", str(state), "moved", "table-9"]) == 0
        out = capsys.readouterr().out
        assert "arbiter: moved table-9" in out and "match moved to another clock at 0-0" in out
        status = device.service.status()
        assert (status["phase"], status["lifecycle"], status["end_reason"],
                status["moved_to"], status["winner"]) == (
            "match_over", "match_over", "moved", "table-9", None)
        record = last_command(journal)
        assert record["input"] == {"type": "arbiter", "command": "moved table-9",
                                   "source": "socket", "by": ME}
        assert record["effects"][-1]["kind"] == "match_ended"
        assert record["effects"][-1]["reason"] == "moved"
        assert [(v.title, v.lines[0]) for v in shown(device)] == [
            ("MATCH MOVED", ("moved to table-9", ""))] * 2
        # No undo reaches back past it, and it is not moved (or ended) twice.
        assert main(["arbiter", "--state-dir", str(state), "undo"]) == 1
        assert "the match went on on another clock" in capsys.readouterr().err
        assert main(["arbiter", "--state-dir", str(state), "moved", "table-3"]) == 1
        assert "the match is over" in capsys.readouterr().err
    records = read_journal(journal).records          # the stop journals its instant too
    assert records[-1].kind != "input" or records[-1].data["input"]["type"] != "recover"
    # Restarted on the same state folder: the match is over, so the clock loads its match file
    # as a new match (ready), never the moved one paused.
    with running_device(MOCK_TEXT, tmp_path) as (device, state):
        status = device.service.status()
        assert (status["phase"], status["lifecycle"], status["game"]) == (
            "between_games", "ready", 1)
        assert "end_reason" in status and status["end_reason"] is None
        assert Path(device.session.journal.path) != journal
        assert read_journal(journal).records == records           # nothing appended, no recover
        assert [v.title for v in shown(device)] != ["PAUSED"] * 2
        assert ask(socket_path(state), ["status"])["state"]["running"] is None
    journals = sorted((state / JOURNALS_DIR).glob("match-*.jsonl"))
    assert len(journals) == 2 and journal in journals


@pytest.mark.parametrize(("words", "error"), [
    (["moved", "table", "9"], "moved takes at most the table the match went to"),
    (["moved", "../../etc"], "is not a table id"),
    (["moved", "стол-9"], "is not a table id"),
])
def test_moved_naming_no_table_id_reaches_nothing(running, words, error):
    device, state_dir = running
    start_game_one(device.service)
    answer = ask(socket_path(state_dir), words)
    assert answer["ok"] is False and error in answer["error"], answer
    assert device.service.status()["running"] == "right"
    assert not any(r.kind == "input" and r.data["input"].get("type") == "arbiter"
                   for r in read_journal(device.session.journal.path).records)


def test_a_bad_moved_is_said_in_russian(running_ru, capsys):
    _, state_dir = running_ru
    assert main(["arbiter", "--state-dir", str(state_dir), "moved", "table", "9"]) == 2
    assert ("moved: нужен только стол, на который перенесён матч; как писать: moved [СТОЛ]"
            in capsys.readouterr().err)


def test_a_journal_ended_as_moved_is_never_continued(tmp_path: Path):
    config = '[match]\nlength = 5\n\n[players]\nleft = "Anna"\nright = "Boris"\n'
    moved = play_journal(tmp_path, config, "0 tap left\n9 arbiter moved table-9\n10 end\n")
    with pytest.raises(ContinuationRefused) as refused:
        check_source(moved.path, None)
    problem = message_of(refused.value)
    assert said(problem, "en") == (f"{moved.path}: the match is over (moved to table-9): "
                                   "nothing to continue; nothing changed")
    assert said(problem, "ru") == (f"{moved.path}: матч окончен (перенесён на стол table-9): "
                                   "продолжать нечего; ничего не изменено")
    away = play_journal(tmp_path, config, "0 tap left\n9 arbiter moved\n10 end\n", "away.jsonl")
    with pytest.raises(ContinuationRefused) as refused:
        check_source(away.path, None)
    assert "(moved to another clock)" in said(message_of(refused.value), "en")

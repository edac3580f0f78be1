"""What a table answers the hall's `cmd` that it cannot take, in its match's language (issue
25, SPEC §15): a `new-match` without its text, a text beside another command, the hall's copy of
a journal that is not one to continue. The command language ('text', `new-match`, `--force`,
`continue`) as typed."""

from __future__ import annotations

import json
import re
from pathlib import Path

from gammonclock.link.outbox import HallMemory
from gammonclock.link.requests import HallRequests

KEPT = {"new", "match", "force", "waiting", "SHA256", "text", "TOML", "continue", "FROM",
        "TABLE", "JOURNAL", "T7", "jsonl", "UTF"}


def latin(text: str) -> set[str]:
    return set(re.findall(r"[A-Za-z0-9]*[A-Za-z][A-Za-z0-9]*", text)) - KEPT


def test_a_russian_tables_answers_to_the_hall(running_ru, tmp_path: Path) -> None:
    device, _ = running_ru
    (tmp_path / "hall").mkdir()
    hall = HallRequests(device.service, device.table, HallMemory(tmp_path / "hall"),
                        lambda *_: None, match_topic="gammonclock/table-1/match")

    def answer(command: str, **more: object) -> dict:
        return hall.answer(json.dumps({"id": command[:8] + str(len(more)), "by": "director",
                                       "command": command, **more}).encode())

    said = {
        "new-match": answer("new-match")["reason"],
        "pause+text": answer("pause", text="[match]\nlength = 3\n")["reason"],
        "continue": answer("continue T7")["reason"],
        "continue name": answer("continue T7 ../x.jsonl", text="x")["reason"],
    }
    assert said["new-match"] == ("как писать: new-match [--force], TOML файла матча в 'text'; "
                                 "или new-match --force --waiting SHA256 — матч, который ждёт; "
                                 "ничего не сделано")
    assert said["pause+text"] == ("файл матча ('text') передаёт только new-match; ничего не "
                                  "сделано")
    assert said["continue"] == ("как писать: continue FROM-TABLE JOURNAL [--force], текст "
                                "журнала в 'text'; ничего не сделано")
    assert said["continue name"] == ("'../x.jsonl' стола 'T7' — не имя журнала стола; ничего "
                                     "не сделано")
    for text in said.values():
        assert not latin(text.replace("../x.jsonl", "")), text

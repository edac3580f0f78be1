"""What the clock takes from the director's topics (`cmd`, `ack`), malformed or out of bounds,
against a real Mosquitto and a real clock on mock pins: a `cmd` that is not what PROTOCOL.md
says is answered "bad request" and journals nothing; an `ack` the link cannot read, or one past
what the clock has written, moves nothing, and the events still reach the hall."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import pytest

from gammonclock.journal.reader import read_journal
from gammonclock.link.requests import MAX_PAYLOAD
from gammonclock.sides import Button
from gammonclock.wire import MAX_SEQ
from mqtt_helpers import Broker, Collector
from table_helpers import (
    MATCH_TEXT,
    TOPIC,
    acked,
    all_acknowledged,
    device_text,
    event_records,
    wait,
)


@pytest.fixture
def match_file(tmp_path: Path) -> Path:
    path = tmp_path / "match.toml"
    path.write_text(MATCH_TEXT, encoding="utf-8")
    return path


def hall_inputs(path: Path) -> list[dict[str, Any]]:
    return [r.data["input"] for r in read_journal(path).each()
            if r.kind == "input" and r.data["input"].get("source") == "hall"]


BAD_CMDS = [
    # (what, payload, words the reason holds)
    ("not JSON", b"deduct left 30s", "not a JSON object"),
    ("NaN", b'{"id": "x1", "command": "deduct left 30s", "by": NaN}', "'by'"),
    ("a list", b'["deduct left 30s"]', "not a JSON object"),
    ("an unknown key", b'{"id": "x2", "command": "pause", "as": "root"}', "unknown key 'as'"),
    ("no id", b'{"command": "pause"}', "'id'"),
    ("an id with a space", b'{"id": "a b", "command": "pause"}', "'id'"),
    ("an id too long", json.dumps({"id": "i" * 65, "command": "pause"}).encode(), "'id'"),
    ("a by too long", json.dumps({"id": "x3", "by": "b" * 65, "command": "pause"}).encode(),
     "'by'"),
    ("a by with a newline", json.dumps({"id": "x4", "by": "a\nb", "command": "pause"}).encode(),
     "'by'"),
    ("no command", b'{"id": "x5", "command": "   "}', "'command'"),
    ("a command with a control character",
     json.dumps({"id": "x6", "command": "warn left \x1b[2J"}).encode(), "'command'"),
    ("a text that is not text", b'{"id": "x7", "command": "new-match", "text": 5}', "'text'"),
    ("longer than a match file", json.dumps({"id": "x8", "command": "warn left hi",
                                             "text": "x" * MAX_PAYLOAD}).encode(),
     f"longer than {MAX_PAYLOAD} bytes"),
    ("a usb-stick request", b'{"id": "x9", "command": "usb-stick /"}', ""),
]


def test_a_malformed_cmd_is_a_bad_request_and_journals_nothing(broker: Broker, tables,
                                                               match_file: Path) -> None:
    with Collector(broker, "hall", f"{TOPIC}/cmd/reply", f"{TOPIC}/online") as seen:
        table = tables(device_text(broker, match_file=match_file))
        seen.wait_for(lambda m: m.text == "1")
        table.tap(Button.LEFT)
        before = table.service.status()
        for what, payload, reason in BAD_CMDS:
            n = len(seen.on("cmd/reply"))
            seen.publish(f"{TOPIC}/cmd", payload)
            replies = seen.wait_until(lambda ms, n=n: len(
                [m for m in ms if m.topic.endswith("/cmd/reply")]) > n)
            reply = [m.json() for m in replies if m.topic.endswith("/cmd/reply")][-1]
            assert reply["ok"] is False and reply["outcome"] == "bad request", (what, reply)
            assert reason in reply["reason"], (what, reply)
        assert hall_inputs(table.journal()) == []
        after = table.service.status()
        assert (after["phase"], after["running"], after["score"]) == (
            before["phase"], before["running"], before["score"])


def test_an_ack_the_link_cannot_read_or_past_the_card_moves_nothing(broker: Broker, tables,
                                                                     match_file: Path,
                                                                     caplog) -> None:
    """The hall's account alone writes `ack`, but what it says is bounded before use: an ack
    past the last record on the card would make the table skip its events unsent."""
    caplog.set_level(logging.ERROR, logger="gammonclock.link")
    with Collector(broker, "hall", f"{TOPIC}/events", f"{TOPIC}/online") as seen:
        table = tables(device_text(broker, match_file=match_file))
        seen.wait_for(lambda m: m.text == "1")
        table.tap(Button.LEFT)
        journal = table.journal().name
        wait(lambda: bool(seen.on("events")), "no event reached the broker", 20)
        for payload in (b"not json", b'{"journal": null, "seq": NaN}',
                        json.dumps({"journal": journal, "seq": -1}).encode(),
                        json.dumps({"journal": journal, "seq": MAX_SEQ + 1}).encode(),
                        json.dumps({"journal": "j" * 300, "seq": 1}).encode(),
                        json.dumps({"journal": journal, "seq": 1,
                                    "archived": ["a" * 300]}).encode(),
                        json.dumps({"journal": journal, "seq": 1,
                                    "archived": ["x"] * 20000}).encode(),
                        # well formed, but past what the clock has written
                        json.dumps({"journal": journal, "seq": 10_000}).encode()):
            seen.publish(f"{TOPIC}/ack", payload, retain=True)
        # The last one (the newest ack is the one the link applies) was taken and ignored.
        wait(lambda: "beyond the last record on the card" in caplog.text,
             "the ack past the card was not taken", 20)
        assert acked(table).get("seq", 0) < 10_000, acked(table)
        # the events are still sent, and the hall's real ack still moves the position
        expected = event_records(table.journal())
        last = expected[-1]
        seen.publish(f"{TOPIC}/ack", json.dumps({"journal": last[0], "seq": last[1],
                                                 "archived": []}), retain=True)
        wait(lambda: all_acknowledged(table), "the real ack did not move the position", 20)
        table.tap(Button.RIGHT)
        wait(lambda: any(m.json()["seq"] > last[1] for m in seen.on("events")),
             "the next event did not go", 20)

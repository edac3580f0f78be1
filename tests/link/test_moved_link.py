"""The clock told by the hall that its match moved to another clock (SPEC §13.5, §14.1, issue 31)
against a real Mosquitto with the shipped ACL and a real clock on mock pins: the retained
`P/T/moved`, written by the director's account, ends the match it names here as moved (its
journal's last record says so, the panels say "moved to TABLE", `notice` answers), at once or
when the clock comes back; restarted, the clock never resumes that match. A notice naming
another journal, an empty (cleared) or a malformed one changes nothing; a match already over
is not moved; and no table's account may write another table's (or its own) `moved`."""

from __future__ import annotations

import json
import logging
import time
from pathlib import Path
from typing import Any

import pytest

from gammonclock.hardware.presenters import PanelPresenter
from gammonclock.journal.reader import read_journal
from gammonclock.sides import Button
from gammonclock.wire import Moved, iso_utc
from mqtt_helpers import WATCHER, Broker, Collector, puback_reason
from table_helpers import (
    MATCH_TEXT,
    TOPIC,
    Table,
    cmd,
    device_text,
    end_the_match,
    wait,
)

MOVED = f"{TOPIC}/moved"
DEADLINE_S = 30            # generous on a loaded machine: every wait returns once it holds


def notice_of(journal: str, to: str = "table-9", by: str = "director") -> bytes:
    return Moved(journal, to, by, iso_utc(time.time_ns())).payload()


def moved_notices(seen: Collector) -> list[dict[str, Any]]:
    return [m.json() for m in seen.on("notice") if "moved" in m.json()]


def moved_records(path: Path) -> list[dict[str, Any]]:
    """The journal's records of a move (the arbiter's `moved`, from any source)."""
    return [r.data for r in read_journal(path).records if r.kind == "input"
            and r.data["input"].get("type") == "arbiter"
            and r.data["input"]["command"].split()[0] == "moved"]


def shown(table: Table) -> list[Any]:
    [panels] = [p for p in table.service.presenters if isinstance(p, PanelPresenter)]
    return [view for view, _ in panels.shown_both()]


def playing(table: Table, seen: Collector) -> Path:
    """The next match loaded through the hall and game 1 under way; its journal."""
    assert cmd(seen, "m-1", "new-match", text=MATCH_TEXT)["ok"] is True
    table.tap(Button.LEFT)
    table.tap(Button.RIGHT)
    assert table.service.status()["running"] == "left"
    return table.journal()


def ended_as_moved(table: Table) -> None:
    """Wait, bounded, until the clock's match is over as moved; else fail with where it
    stands (the attack: "paused", as if still its own)."""
    deadline = time.monotonic() + DEADLINE_S
    while (status := table.service.status()).get("end_reason") != "moved":
        assert time.monotonic() < deadline, (
            f"the moved match was not ended here: phase {status['phase']}, lifecycle "
            f"{status.get('lifecycle')}")
        time.sleep(0.05)


def settled(seen: Collector, request_id: str) -> None:
    """The link's worker has taken everything published before: its answer to a `status`
    (the worker takes `moved`, `match` and `cmd` in order, one at a time)."""
    assert cmd(seen, request_id, "status")["ok"] is True


def test_the_moved_match_ends_here_when_the_clock_comes_back_and_is_never_resumed(
        broker: Broker, tables) -> None:
    """The attack: table-1's match was moved while table-1 was away; it came back and showed
    the match paused, as its own. Now it ends it, says so, and a restart keeps it ended."""
    with Collector(broker, "hall", f"{TOPIC}/#") as seen:
        table = tables(device_text(broker))
        seen.wait_for(lambda m: m.topic == f"{TOPIC}/online" and m.text == "1")
        journal = playing(table, seen)
        table.stop()                           # the table goes away mid-game …
        seen.publish(MOVED, notice_of(journal.name), retain=True)   # … and its match is moved
        onlines = len([m for m in seen.on("online") if m.text == "1"])
        table.start()                          # it comes back: resumed, paused, then told
        ended_as_moved(table)
        seen.wait_until(lambda _: len(moved_notices(seen)) == 1, timeout=DEADLINE_S)
        [answer] = moved_notices(seen)
        assert (answer["ok"], answer["moved"], answer["to"]) == (True, journal.name, "table-9")
        assert any("match moved to another clock" in line for line in answer["said"])
        status = table.service.status()
        assert (status["phase"], status["lifecycle"], status["end_reason"], status["moved_to"],
                status["winner"]) == ("match_over", "match_over", "moved", "table-9", None)
        # Its journal ends with a record saying so: the hall's, with who moved it.
        [record] = moved_records(journal)
        assert record["input"] == {"type": "arbiter", "command": "moved table-9",
                                   "source": "hall", "by": "director"}
        assert record["effects"][-1]["kind"] == "match_ended"
        assert record["effects"][-1]["reason"] == "moved"
        wait(lambda: [(v.title, v.lines[0]) for v in shown(table)]
             == [("MATCH MOVED", ("moved to table-9", ""))] * 2,
             "the panels do not say where the match went", timeout=DEADLINE_S)
        seen.wait_for(lambda m: m.topic == f"{TOPIC}/state" and m.json().get("end_reason")
                      == "moved" and m.json().get("moved_to") == "table-9", timeout=DEADLINE_S)
        seen.wait_until(lambda _: len([m for m in seen.on("online") if m.text == "1"]) > onlines)
        # The retained notice comes again at a reconnect: answered, never applied twice.
        broker.stop()
        broker.start()
        seen.wait_until(lambda _: len(moved_notices(seen)) == 2, timeout=DEADLINE_S)
        assert moved_notices(seen)[-1]["ok"] is True
        assert len(moved_records(journal)) == 1
        # Restarted on the same state folder (the notice still retained): the match is over,
        # so nothing is resumed: no match file, the clock is idle.
        table.stop()
        records = read_journal(journal).records
        table.start()
        wait(lambda: table.service.status()["phase"] == "idle", "the moved match was resumed",
             timeout=DEADLINE_S)
        settled(seen, "s-1")
        assert table.service.status()["phase"] == "idle"
        assert read_journal(journal).records == records          # no `recover`, nothing
        assert [v.title for v in shown(table)] == ["TABLE table-1"] * 2           # idle
        assert len(moved_notices(seen)) == 2                    # not the journal held: silent


@pytest.mark.parametrize(("case", "payload"), [
    ("another journal", lambda journal: notice_of("match-20261207-101010-table-2-A-B.jsonl")),
    ("cleared by the hall", lambda journal: b""),
    ("not JSON", lambda journal: b"{\"journal\": "),
    ("no table id", lambda journal: notice_of(journal, to="table 9")),
    ("a control character in by", lambda journal: notice_of(journal, by="dir\nector")),
    ("no journal", lambda journal: json.dumps({"to": "table-9"}).encode()),
    ("too long", lambda journal: notice_of(journal, by="d" * 5000)),
])
def test_a_notice_for_another_journal_cleared_or_malformed_changes_nothing(
        broker: Broker, tables, case, payload, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="gammonclock")
    with Collector(broker, "hall", f"{TOPIC}/#") as seen:
        table = tables(device_text(broker))
        seen.wait_for(lambda m: m.topic == f"{TOPIC}/online" and m.text == "1")
        journal = playing(table, seen)
        seen.publish(MOVED, payload(journal.name), retain=True)
        settled(seen, "s-1")
        table.tap(Button.LEFT)                                # play goes on
        assert table.service.status()["running"] == "right", case
        assert moved_records(journal) == [] and moved_notices(seen) == [], case
        if case not in ("another journal", "cleared by the hall"):
            assert "moved notice ignored as malformed" in caplog.text, case
        # The notice for this very journal, from the same account, is acted on.
        seen.publish(MOVED, notice_of(journal.name), retain=True)
        seen.wait_until(lambda _: len(moved_notices(seen)) == 1, timeout=DEADLINE_S)
        assert table.service.status()["end_reason"] == "moved"


def test_a_match_already_over_is_not_moved(broker: Broker, tables) -> None:
    with Collector(broker, "hall", f"{TOPIC}/#") as seen:
        table = tables(device_text(broker))
        seen.wait_for(lambda m: m.topic == f"{TOPIC}/online" and m.text == "1")
        journal = playing(table, seen)
        end_the_match(table)                   # the players finished it here first
        before = read_journal(journal).records
        seen.publish(MOVED, notice_of(journal.name), retain=True)
        seen.wait_until(lambda _: len(moved_notices(seen)) == 1, timeout=DEADLINE_S)
        [answer] = moved_notices(seen)
        assert (answer["ok"], answer["code"], answer["moved"]) == (False, "match_over",
                                                                   journal.name)
        assert "already over (disqualified)" in answer["error"]
        assert "both clocks may have played it" in answer["error"]
        assert table.service.status()["end_reason"] == "disqualified"
        assert read_journal(journal).records == before


def test_no_tables_account_may_write_a_tables_moved(broker: Broker, tables) -> None:
    """table-2's account (or table-1's own) publishing table-1's `moved`: the broker refuses it
    (the shipped ACL: only the director's account writes it); the match plays on. The
    director's is acted on."""
    with Collector(broker, WATCHER, f"{TOPIC}/#") as watched, \
            Collector(broker, "hall", f"{TOPIC}/#") as seen:
        table = tables(device_text(broker))
        seen.wait_for(lambda m: m.topic == f"{TOPIC}/online" and m.text == "1")
        journal = playing(table, seen)
        onlines = len([m for m in seen.on("online") if m.text == "1"])
        for account in ("table-2", "table-1"):
            intruder = broker.client(account, mqtt5=True)
            try:
                assert puback_reason(intruder, MOVED, notice_of(journal.name, by=account),
                                     retain=True) == "Not authorized"
            finally:
                intruder.disconnect()
                intruder.loop_stop()
        # table-1's account in another client took the clock's connection (one client per
        # account, hall/mosquitto.conf): the clock is back within its back-off.
        seen.wait_until(lambda _: len([m for m in seen.on("online") if m.text == "1"])
                        > onlines, timeout=DEADLINE_S)
        settled(seen, "s-1")
        assert [m for m in watched.messages if m.topic == MOVED] == []
        assert table.service.status()["running"] == "left"
        assert moved_records(journal) == []
        seen.publish(MOVED, notice_of(journal.name), retain=True)
        seen.wait_until(lambda _: len(moved_notices(seen)) == 1, timeout=DEADLINE_S)
        assert moved_records(journal)[0]["input"]["source"] == "hall"
        watched.wait_for(lambda m: m.topic == MOVED)

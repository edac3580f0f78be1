"""The clock's side of the hall (SPEC §14) against a real Mosquitto (tests/mqtt_helpers.py): a
device on mock pins with a `[hall]` section publishes `online`, `state` and every journal
event, and takes `cmd` and `match` from the director; a broker that is down, refuses the login
or vanishes changes nothing at the table, and loses nothing."""

from __future__ import annotations

import json
import logging
import signal
import time
from pathlib import Path
from typing import Any

import pytest

from device_helpers import mock_config_text, start_run, wait_until_running
from gammonclock.journal.reader import read_journal
from gammonclock.link import client as hall_link
from gammonclock.link import publisher as link_publisher
from gammonclock.link.connection import WINDOW
from gammonclock.link.outbox import MEMORY_FILE, JournalTail
from gammonclock.sides import Button
from gammonclock.wire import Ack, Event
from hall_helpers import HallRunner
from mqtt_helpers import (
    WATCHER,
    Broker,
    Collector,
    Message,
    start_broker,
)
from table_helpers import (
    MATCH_TEXT,
    OTHER_MATCH,
    TABLE,
    TOPIC,
    Table,
    all_events_arrived,
    cmd,
    device_text,
    end_the_match,
    event_records,
    link_of,
    right_player,
    seen_events,
    wait,
)

S = 1_000_000_000



@pytest.fixture
def match_file(tmp_path: Path) -> Path:
    path = tmp_path / "match.toml"
    path.write_text(MATCH_TEXT, encoding="utf-8")
    return path


def state_of(m: Message) -> dict[str, Any]:
    state: dict[str, Any] = m.json()
    return state


# --- online, state, events --------------------------------------------------------------------

def test_online_state_and_events(broker: Broker, tables, match_file: Path) -> None:
    with Collector(broker, "hall", f"{TOPIC}/#") as seen:
        table = tables(device_text(broker, match_file=match_file))
        online = seen.wait_for(lambda m: m.topic == f"{TOPIC}/online")
        assert online.text == "1"
        ready = state_of(seen.wait_for(lambda m: m.topic == f"{TOPIC}/state"))
        assert ready["phase"] == "between_games" and ready["running"] is None
        assert ready["table"] == TABLE and ready["event"] == "Moscow Open"
        assert ready["players"] == {"left": "Anna", "right": "Boris"}
        assert ready["journal"] == table.journal().name and ready["online"] is True
        assert ready["at"].endswith("Z")
        table.tap(Button.LEFT)                # the game starts: a clock runs
        table.tap(Button.RIGHT)
        seen.wait_for(lambda m: m.topic == f"{TOPIC}/state"
                      and state_of(m)["running"] is not None)
        all_events_arrived(seen, event_records(table.journal()))
        events = [m.json() for m in seen.on("events")]
        assert [e["seq"] for e in events] == sorted(e["seq"] for e in events)
        assert all(e["effects"] and e["journal"] == table.journal().name for e in events)
    # A later subscriber gets the newest state and the table online (both retained).
    with Collector(broker, "hall", f"{TOPIC}/state", f"{TOPIC}/online") as late:
        retained = late.wait_for(lambda m: m.topic.endswith("/state"))
        assert retained.retain and state_of(retained)["running"] is not None
        assert late.wait_for(lambda m: m.topic.endswith("/online")).text == "1"


def test_tls(tmp_path: Path, tables, match_file: Path) -> None:
    """mqtts:// with `ca_file`: the same link over TLS."""
    tls_broker = start_broker(tmp_path / "tls-broker", tls=True)
    try:
        with Collector(tls_broker, "hall", f"{TOPIC}/#") as seen:
            table = tables(device_text(tls_broker, match_file=match_file))
            assert seen.wait_for(lambda m: m.topic.endswith("/online")).text == "1"
            table.tap(Button.LEFT)
            all_events_arrived(seen, event_records(table.journal()))
    finally:
        tls_broker.stop()


def test_a_clean_stop_says_offline(broker: Broker, tables) -> None:
    with Collector(broker, "hall", f"{TOPIC}/online") as seen:
        table = tables(device_text(broker))
        seen.wait_for(lambda m: m.text == "1")
        table.stop()
        seen.wait_for(lambda m: m.text == "0")


def test_the_will_says_offline_when_the_clock_is_killed(broker: Broker, tmp_path: Path,
                                                        processes: list[Any]) -> None:
    """`gammonclock run` killed (no goodbye): the broker publishes its last will."""
    hall = device_text(broker)
    text = mock_config_text() + hall[hall.index("[table]"):]
    with Collector(broker, "hall", f"{TOPIC}/online") as seen:
        proc = start_run(tmp_path, processes, config_text=text)
        wait_until_running(proc)
        seen.wait_for(lambda m: m.text == "1", timeout=15)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=5)
        seen.wait_for(lambda m: m.text == "0")


# --- faults: the broker down, gone, refusing --------------------------------------------------

def test_broker_outage_mid_match_loses_nothing(broker: Broker, tables, tmp_path: Path,
                                               match_file: Path) -> None:
    """The broker stops mid-match and starts again: the table plays on, and once back it sends
    every event of the outage, in order, and none the hall had acknowledged. The watcher
    subscribes as the hall does, in a session of its own that the broker keeps (a session that
    ends with the connection misses what the table sends before it is back: the test once
    failed so, when the table came back first), and is kept away until the hall holds every
    event: the table is always back first."""
    with HallRunner(broker, tmp_path / "archive") as hall, \
            Collector(broker, WATCHER, f"{TOPIC}/events", client_id=WATCHER) as seen:
        table = tables(device_text(broker, match_file=match_file))
        table.tap(Button.LEFT)
        table.tap(Button.RIGHT)
        before = event_records(table.journal())
        all_events_arrived(seen, before)
        wait(lambda: acked(table) == before[-1], "the hall's acknowledgement was not kept")
        seen.__exit__()                        # away: the broker keeps its session
        broker.stop()
        for button in (Button.LEFT, Button.RIGHT, Button.LEFT):
            table.tap(button)                  # the table plays on, as if nothing happened
        during = event_records(table.journal())
        assert len(during) > len(before)
        assert table.service.status()["running"] is not None
        broker.start()
        hall.wait(lambda: hall.holds(TABLE, during), "the hall holds every event")
        wait(lambda: acked(table) == during[-1], "the hall's acknowledgement of the outage's "
             "events was not kept", timeout=15)
        seen.__enter__()                       # back: what the broker kept for it arrives
        all_events_arrived(seen, during)
        assert seen_events(seen) == during     # every event, in order
        counts = {key: 0 for key in before}
        for m in seen.on("events"):
            key = (m.json()["journal"], m.json()["seq"])
            counts[key] = counts.get(key, 0) + (not m.dup)   # the table's sends, not the broker's
        assert all(counts[key] == 1 for key in before), "acknowledged events sent again"


def test_events_published_as_the_connection_drops_are_sent_after_it(
        broker: Broker, tables, match_file: Path, tmp_path: Path, caplog) -> None:
    """The link saw the broker connected, paho had lost it: paho answers those publishes "not
    connected" and raises at every later `is_published`. They are published again from the
    acknowledged position once the broker is back (the link once stalled there for good). The
    watcher's session outlives its connection: what the table sends before the watcher is back
    waits for it at the broker."""
    with HallRunner(broker, tmp_path / "archive"), \
            Collector(broker, WATCHER, f"{TOPIC}/events", client_id=WATCHER) as seen:
        table = tables(device_text(broker, match_file=match_file))
        table.tap(Button.LEFT)
        all_events_arrived(seen, event_records(table.journal()))
        link = link_of(table)
        broker.stop()
        wait(lambda: not link.client.is_connected(), "paho did not see the broker go")
        link._connected.set()                  # the race: the link's check said connected
        for button in (Button.RIGHT, Button.LEFT, Button.RIGHT):
            table.tap(button)
        time.sleep(1.5)                        # the publisher has published, and collected
        broker.start()
        for i in range(WINDOW + 5):            # more than a window: acknowledgements must move
            table.tap(Button.LEFT if i % 2 else Button.RIGHT)
        all_events_arrived(seen, event_records(table.journal()))
        assert seen_events(seen)[-1] == event_records(table.journal())[-1]
    assert "the link's worker failed" not in caplog.text


def test_the_acknowledged_position_is_kept_when_the_window_empties_or_at_close(
        broker: Broker, tables, match_file: Path, tmp_path: Path) -> None:
    """The hall's acks move the position in memory; the card is written when the window is
    empty (or every SAVE_EVERY_S), and a position not written yet is written at close."""
    with HallRunner(broker, tmp_path / "archive"):
        table = tables(device_text(broker, match_file=match_file))
        table.tap(Button.LEFT)
        wait(lambda: acked(table) == event_records(table.journal())[-1], "position not kept")
    link = link_of(table)
    broker.stop()                              # the publisher collects nothing meanwhile
    wait(lambda: not link._connected.is_set(), "the link did not see the broker go")
    journal, seq = acked(table) or ("", 0)
    first, second = (Event(journal, seq + 1, 0, [{}], seq), Event(journal, seq + 2, 0, [{}],
                                                                  seq + 1))
    info = type("Info", (), {"mid": 1, "rc": 0, "is_published": lambda self: True})()
    link.publisher._inflight.extend([(first, info), (second, info)])
    link.publisher._save_at = time.monotonic() + 3600
    link.connection._ack = Ack(journal, seq + 1, frozenset())
    link.publisher.collect_acks()
    assert link.memory.seq == seq + 1 and acked(table) == (journal, seq)   # moved, not written
    link.connection._ack = Ack(journal, seq + 2, frozenset())
    link.publisher.collect_acks()
    assert acked(table) == (journal, seq + 2)                              # the window is empty
    with link.memory.lock:
        link.memory.seq = seq + 3              # acknowledged, not written yet
    link.publisher.unsaved = True
    table.stop()
    assert acked(table) == (journal, seq + 3)                              # written at close


def test_the_brokers_acknowledgement_alone_moves_nothing(broker: Broker, tables,
                                                         match_file: Path,
                                                         monkeypatch: pytest.MonkeyPatch
                                                         ) -> None:
    """No hall: the broker acknowledges every event, the position stays where it was, and the
    events go again after the wait, which doubles while the hall is silent."""
    monkeypatch.setattr(link_publisher, "RESEND_MIN_S", 0.3)
    with Collector(broker, WATCHER, f"{TOPIC}/events") as seen:
        table = tables(device_text(broker, match_file=match_file))
        table.tap(Button.LEFT)
        expected = event_records(table.journal())
        all_events_arrived(seen, expected)
        time.sleep(2.0)                        # sent at 0, ~0.3, ~0.9, ~2.1 s: not more
        copies = [m for m in seen.on("events") if (m.json()["journal"], m.json()["seq"])
                  == expected[0]]
        assert 2 <= len(copies) <= 4, len(copies)
        assert acked(table) in (None, (expected[0][0], 0))
        assert [m.json()["after"] for m in copies] == [0] * len(copies)


def test_a_hung_broker_never_holds_up_the_table(broker: Broker, tables,
                                                 match_file: Path) -> None:
    with Collector(broker, "hall", f"{TOPIC}/events", client_id="director") as seen:
        table = tables(device_text(broker, match_file=match_file))
        table.tap(Button.LEFT)
        all_events_arrived(seen, event_records(table.journal()))
        broker.pause()
        try:
            for button in (Button.RIGHT, Button.LEFT, Button.RIGHT):
                table.tap(button)              # applied at once: nothing waits for the broker
            assert table.service.status()["running"] == "left"
        finally:
            broker.resume()
        all_events_arrived(seen, event_records(table.journal()))


def test_a_finished_match_sends_its_journal_once(broker: Broker, tables, tmp_path: Path,
                                                 match_file: Path) -> None:
    with HallRunner(broker, tmp_path / "archive") as hall, \
            Collector(broker, WATCHER, f"{TOPIC}/journal", f"{TOPIC}/online") as seen:
        table = tables(device_text(broker, match_file=match_file))
        seen.wait_for(lambda m: m.text == "1")
        table.tap(Button.LEFT)
        end_the_match(table)
        sent = seen.wait_for(lambda m: m.topic.endswith("/journal")).json()
        assert sent["journal"] == table.journal().name
        assert sent["text"] == table.journal().read_text()[:len(sent["text"])]
        assert any('"end_reason"' in line or "disqualif" in line
                   for line in sent["text"].splitlines())
        hall.wait(lambda: sent["journal"] in hall.archived(TABLE), "archived")
        # Once the hall's ack lists it as archived, it is on the card, and a restart never
        # sends it again (before that, at least once may be twice: the archive keeps one).
        deadline = time.monotonic() + 10
        while not journal_acknowledged(table) and time.monotonic() < deadline:
            time.sleep(0.02)
        assert journal_acknowledged(table)
        table.stop()
        onlines = len([m for m in seen.on("online") if m.text == "1"])
        table.start()
        seen.wait_until(lambda _: len([m for m in seen.on("online") if m.text == "1"]) > onlines)
        time.sleep(1.5)
        assert len(seen.on("journal")) == 1


def journal_acknowledged(table: Table) -> bool:
    try:
        return json.loads((table.state / MEMORY_FILE).read_text()).get("journal_sent") is True
    except (OSError, ValueError):
        return False


def acked(table: Table) -> tuple[str, int] | None:
    try:
        data = json.loads((table.state / MEMORY_FILE).read_text())
    except (OSError, ValueError):
        return None
    return data["journal"], data["seq"]


def test_a_restarted_clock_publishes_what_was_not_acknowledged(broker: Broker, tables,
                                                               match_file: Path) -> None:
    with Collector(broker, "hall", f"{TOPIC}/events", client_id="director") as seen:
        table = tables(device_text(broker, match_file=match_file))
        table.tap(Button.LEFT)
        all_events_arrived(seen, event_records(table.journal()))
        broker.stop()
        table.tap(Button.RIGHT)
        table.tap(Button.LEFT)
        table.stop()                           # these events never reached the broker
        expected = event_records(table.journal())
        broker.start()
        table.start()                          # resumes the match, then publishes the rest
        all_events_arrived(seen, expected)
        assert seen_events(seen)[:len(expected)] == expected


def test_a_refused_login_changes_nothing_at_the_table(broker: Broker, tables, tmp_path: Path,
                                                      match_file: Path,
                                                      caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="gammonclock")
    with Collector(broker, "hall", "gammonclock/#") as seen:
        table = tables(device_text(broker, password="wrong", match_file=match_file))
        wait(lambda: "refuses the login" in caplog.text, "no clear log of the refusal")
        table.tap(Button.LEFT)
        table.tap(Button.RIGHT)
        assert table.service.status()["running"] == "left"
        # The taps are applied; their records are in the journal once the loop has written them
        # (a tap counts as applied when the loop takes it, before it journals it).
        wait(lambda: len(event_records(table.journal())) >= 2, "the taps were not journaled")
        time.sleep(2.5)                        # paho tries again: at 1 s, then 2 s later
        assert seen.messages == []
    refusals = [r for r in caplog.records if "refuses the login" in r.getMessage()]
    assert len(refusals) == 1, "logged at every retry"
    assert "password_file" in refusals[0].getMessage()


def test_the_acl_keeps_a_clock_to_its_own_table(broker: Broker, tables,
                                                caplog: pytest.LogCaptureFixture,
                                                match_file: Path) -> None:
    """table-1's account publishing as table-2 is refused by the broker; the table plays on."""
    caplog.set_level(logging.INFO, logger="gammonclock")
    with Collector(broker, "hall", "gammonclock/#") as seen:
        table = tables(device_text(broker, table="table-2", user=TABLE, match_file=match_file))
        table.tap(Button.LEFT)
        wait(lambda: "refuses gammonclock/table-2/" in caplog.text, "no log of the refusal")
        assert table.service.status()["running"] is not None
        assert [m for m in seen.messages if m.topic.startswith("gammonclock/table-2/")] == []
        # A plain client of table-1 cannot write another table's topics, nor its own `cmd`.
        intruder = broker.client(TABLE)
        try:
            for topic in ("gammonclock/table-2/state", f"{TOPIC}/cmd", f"{TOPIC}/match"):
                intruder.publish(topic, "{}", qos=1).wait_for_publish(5)
            intruder.publish(f"{TOPIC}/state", "mine", qos=1).wait_for_publish(5)
            seen.wait_for(lambda m: m.payload == b"mine")
        finally:
            intruder.disconnect()
            intruder.loop_stop()
        assert [m.topic for m in seen.messages if m.payload == b"{}"] == []


# --- the director's cmd and match --------------------------------------------------------------


def hall_inputs(path: Path) -> list[dict[str, Any]]:
    return [r.data["input"] for r in read_journal(path).each()
            if r.kind == "input" and r.data["input"].get("source") == "hall"]


def test_cmd_is_journaled_with_its_author_and_never_applied_twice(broker: Broker, tables,
                                                                  match_file: Path) -> None:
    with Collector(broker, "hall", f"{TOPIC}/cmd/reply", f"{TOPIC}/online") as seen:
        table = tables(device_text(broker, match_file=match_file))
        seen.wait_for(lambda m: m.text == "1")
        table.tap(Button.LEFT)
        reserve = table.service.status()["clock"]["left"]["reserve_ms"]
        answer = cmd(seen, "r-1", "deduct left 30s", by="anna")
        assert answer["ok"] is True and answer["outcome"] == "acted", answer
        assert any("deduct left 30s" in said for said in answer["said"])
        assert hall_inputs(table.journal()) == [
            {"type": "arbiter", "command": "deduct left 30s", "source": "hall", "by": "anna"}]
        again = cmd(seen, "r-1", "deduct left 30s", by="anna")    # a redelivery
        assert again["repeated"] is True and again["outcome"] == "acted"
        assert len(hall_inputs(table.journal())) == 1
        assert table.service.status()["clock"]["left"]["reserve_ms"] <= reserve - 30_000
        refused = cmd(seen, "r-2", "deduct left 9999s")
        assert refused["ok"] is False and refused["outcome"] == "refused" and refused["reason"]
        bad = cmd(seen, "r-3", "dedcut left 30s")
        assert bad["outcome"] == "bad request" and "nothing was done" in bad["reason"]
        assert len(hall_inputs(table.journal())) == 2      # the refused one is journaled too
        table.stop()
        onlines = len([m for m in seen.on("online") if m.text == "1"])
        table.start()                          # the ids are kept on the card
        seen.wait_until(lambda _: len([m for m in seen.on("online") if m.text == "1"]) > onlines)
        assert cmd(seen, "r-1", "deduct left 30s", by="anna")["repeated"] is True
        assert len(hall_inputs(table.journal())) == 2


def test_the_retained_match_loads_in_idle_and_waits_mid_match(broker: Broker,
                                                              tables) -> None:
    with Collector(broker, "hall", f"{TOPIC}/notice", f"{TOPIC}/state") as seen:
        table = tables(device_text(broker))
        seen.wait_for(lambda m: m.topic.endswith("/state") and state_of(m)["phase"] == "idle")
        seen.publish(f"{TOPIC}/match", MATCH_TEXT, retain=True)
        loaded = seen.wait_for(lambda m: m.topic.endswith("/notice")).json()
        assert loaded["ok"] is True
        assert any("next match loaded: Anna-Boris" in said for said in loaded["said"])
        seen.wait_for(lambda m: m.topic.endswith("/state")
                      and state_of(m)["players"] == {"left": "Anna", "right": "Boris"})
        first_journal = table.journal()
        table.tap(Button.LEFT)                 # the match is in progress
        seen.publish(f"{TOPIC}/match", OTHER_MATCH, retain=True)
        refused = seen.wait_until(lambda ms: len([m for m in ms
                                                  if m.topic.endswith("/notice")]) == 2)
        notice = [m.json() for m in refused if m.topic.endswith("/notice")][-1]
        assert notice["ok"] is False and notice["pending"] is True
        assert "in progress" in notice["error"]
        assert table.journal() == first_journal
        assert table.service.status()["running"] is not None
        # A restart (a reconnect) gets the same retained match again: not loaded twice.
        seen.publish(f"{TOPIC}/match", MATCH_TEXT, retain=True)
        time.sleep(0.5)
        notices = len(seen.on("notice"))
        table.stop()
        table.start()
        time.sleep(1.5)
        assert len(seen.on("notice")) == notices
        assert table.journal() == first_journal


def test_a_waiting_match_loads_as_soon_as_the_match_in_progress_ends(
        broker: Broker, tables, monkeypatch: pytest.MonkeyPatch) -> None:
    """No timer loads it: the loop's signal at the match's end wakes the link, which loads the
    match that waited within a blink (not at the next tick of a 1 s poll)."""
    monkeypatch.setattr(hall_link, "IDLE_WAKE_S", 60.0)     # no timer of the link ticks here
    with Collector(broker, "hall", f"{TOPIC}/notice", f"{TOPIC}/state") as seen:
        table = tables(device_text(broker))
        seen.wait_for(lambda m: m.topic.endswith("/state") and state_of(m)["phase"] == "idle")
        seen.publish(f"{TOPIC}/match", MATCH_TEXT, retain=True)
        assert seen.wait_for(lambda m: m.topic.endswith("/notice")).json()["ok"] is True
        table.tap(Button.LEFT)                 # the match is in progress
        seen.publish(f"{TOPIC}/match", OTHER_MATCH, retain=True)
        seen.wait_for(lambda m: m.topic.endswith("/notice") and m.json().get("pending") is True)
        ended_at = end_the_match(table)
        wait(lambda: right_player(table) == "Carla", "the match that waited was not loaded",
             timeout=5)
        assert time.monotonic() - ended_at < 0.5
        loaded = seen.wait_until(lambda ms: len([m for m in ms
                                                 if m.topic.endswith("/notice")]) == 3)
        assert [m.json() for m in loaded if m.topic.endswith("/notice")][-1]["ok"] is True


def test_a_cmd_new_match_loads_and_is_refused_mid_match_unless_forced(broker: Broker,
                                                                      tables) -> None:
    with Collector(broker, "hall", f"{TOPIC}/cmd/reply", f"{TOPIC}/online") as seen:
        table = tables(device_text(broker))
        seen.wait_for(lambda m: m.text == "1")
        assert cmd(seen, "m-1", "new-match", text=MATCH_TEXT)["ok"] is True
        table.tap(Button.LEFT)
        refused = cmd(seen, "m-2", "new-match", text=OTHER_MATCH)
        assert refused["outcome"] == "refused" and refused["code"] == "match_in_progress"
        forced = cmd(seen, "m-3", "new-match --force", text=OTHER_MATCH)
        assert forced["ok"] is True, forced
        assert table.service.status()["phase"] == "between_games"


# --- the outbox, without a broker ---------------------------------------------------------------

def test_the_tail_waits_for_a_whole_line(tmp_path: Path) -> None:
    path = tmp_path / "match-x.jsonl"
    line = json.dumps({"seq": 1, "kind": "input", "wall": 0, "data": {"effects": [{"k": 1}]}})
    path.write_bytes(b'{"seq": 0, "kind": "header", "data": {}}\n' + line[:10].encode())
    tail = JournalTail(path, 0)
    assert tail.read(10) == []
    path.write_bytes(b'{"seq": 0, "kind": "header", "data": {}}\n' + line.encode() + b"\n")
    assert [e.seq for e in tail.read(10)] == [1]
    assert tail.read(10) == []


def test_pahos_not_connected_lines_are_not_repeated_in_the_log(caplog) -> None:
    import logging as logging_module

    from gammonclock.link.connection import PAHO_LOG
    with caplog.at_level(logging_module.DEBUG, logger=PAHO_LOG.name):
        for _ in range(3):
            PAHO_LOG.error("Client is not connected. Socket: None). Last known Connection "
                           "State: MQTT_CS_DISCONNECTED")
        PAHO_LOG.error("Connection refused: not authorised")
    assert [r.getMessage() for r in caplog.records] == ["Connection refused: not authorised"]

"""End-to-end delivery from the table to the hall's archive (SPEC §14, hall/PROTOCOL.md `ack`):
real Mosquitto with the shipped config's client-id and queue settings and the shipped ACL, the
real `Hall`, real clocks on mock pins. A table's outbox goes on only on the hall's own
acknowledgement, so a client-id takeover, a broker that drops queued messages, an archive that
could not write or a truncated journal loses nothing."""

from __future__ import annotations

import errno
import json
import re
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from gammonclock.hall import archive as hall_archive
from gammonclock.hall.archive import store_journal
from gammonclock.hall.delivery import EventKey, TablePosition, event_key
from gammonclock.link import publisher as link_publisher
from gammonclock.wire import JOURNAL_NAME, Ack
from hall_helpers import HallRunner
from mqtt_helpers import (
    WATCHER,
    Broker,
    Collector,
    start_broker,
)
from table_helpers import (
    MATCH,
    Table,
    acked,
    all_acknowledged,
    device_text,
    end_the_match,
    event_records,
    link_of,
    play,
    wait,
)


@pytest.fixture(autouse=True)
def quick_resend(monkeypatch: pytest.MonkeyPatch) -> None:
    """The table's wait for the hall's ack, shortened (5 s doubling to 60 s in play)."""
    monkeypatch.setattr(link_publisher, "RESEND_MIN_S", 0.5)
    monkeypatch.setattr(link_publisher, "RESEND_MAX_S", 2.0)


@pytest.fixture
def tables(tmp_path: Path) -> Iterator[Callable[..., Table]]:
    made: list[Table] = []

    def make(broker: Broker, name: str = "table-1", left: str = "Anna",
             right: str = "Boris") -> Table:
        folder = tmp_path / name
        folder.mkdir(exist_ok=True)
        match_file = folder / "match.toml"
        match_file.write_text(MATCH.format(left=left, right=right), encoding="utf-8")
        table = Table(folder, device_text(broker, table=name, user=name,
                                          match_file=match_file))
        made.append(table)
        return table.start()

    yield make
    for table in made:
        table.stop()


# --- 2: a client id is its account's -----------------------------------------------------------

def test_another_account_cannot_take_a_tables_or_the_halls_client_id(
        broker: Broker, tables, tmp_path: Path) -> None:
    """table-1's account connecting as `gammonclock-table-2`, `hall` or the hall's old id
    kicks nobody: table-2 and the hall stay connected, every event of table-2 reaches the
    hall and table-2's outbox is at its last event."""
    with HallRunner(broker, tmp_path / "archive") as hall:
        table = tables(broker, "table-2")
        play(table, 2)
        link = link_of(table)
        wait(lambda: link.client.is_connected(), "table-2 connected")
        dropped: list[str] = []
        stop = threading.Event()

        def watch() -> None:
            while not stop.is_set():
                if not link.client.is_connected():
                    dropped.append("table-2")
                if not hall.hall.client.connected:
                    dropped.append("hall")
                time.sleep(0.01)

        watcher = threading.Thread(target=watch)
        watcher.start()
        impostors = []
        try:
            for client_id in ("gammonclock-table-2", "hall", "gammonclock-hall-hall"):
                impostors.append(broker.client("table-1", client_id=client_id))
                play(table, 2)
                time.sleep(0.5)
        finally:
            stop.set()
            watcher.join()
            for impostor in impostors:
                impostor.disconnect()
                impostor.loop_stop()
        assert dropped == [], f"taken off the broker: {sorted(set(dropped))}"
        expected = event_records(table.journal())
        hall.wait(lambda: hall.holds("table-2", expected), "every event of table-2 in the hall")
        wait(lambda: all_acknowledged(table), "table-2's outbox at its last event")


# --- the outbox goes on only on the hall's ack -------------------------------------------------

def test_events_a_broker_acknowledged_and_dropped_are_sent_again(tmp_path: Path,
                                                                  tables) -> None:
    """The hall away, the broker's queue for it bounded tiny: the broker acknowledges every
    event to the table and drops most. Once the hall is back the table sends them again from
    the hall's position, until the hall holds every (journal, seq)."""
    broker = start_broker(tmp_path / "broker", max_queued_messages=3)
    try:
        archive = tmp_path / "archive"
        with HallRunner(broker, archive) as hall:
            table = tables(broker)
            play(table, 1)
            hall.wait(lambda: all_acknowledged(table), "the first event acknowledged")
            before = event_records(table.journal())
        play(table, 12)                         # the hall away: the broker keeps 3 of these
        time.sleep(1.0)
        assert not all_acknowledged(table), "the outbox moved without the hall"
        expected = event_records(table.journal())
        with HallRunner(broker, archive) as back:
            back.wait(lambda: back.holds("table-1", expected[len(before):]),
                      "every event of the outage in the hall", timeout=20)
            wait(lambda: all_acknowledged(table), "the outbox at its last event", timeout=20)
            assert back.position("table-1") == expected[-1]
        assert "Outgoing messages are being dropped for client hall" in broker.log()
    finally:
        broker.stop()


def test_a_restarted_hall_reads_back_where_it_stood(broker: Broker, tables,
                                                    tmp_path: Path) -> None:
    with HallRunner(broker, tmp_path / "archive") as hall:
        table = tables(broker)
        play(table, 3)
        hall.wait(lambda: all_acknowledged(table), "acknowledged")
        before = hall.position("table-1")
    with HallRunner(broker, tmp_path / "archive") as again:
        again.wait(lambda: again.position("table-1") == before,
                   "the hall's own retained ack read back")


def test_a_hall_that_lost_its_memory_gets_every_event_again(broker: Broker, tables,
                                                            tmp_path: Path) -> None:
    """The hall's retained acks gone (a new broker database, a new hall): the table's position
    is ahead of anything the hall holds. The hall says it holds nothing; the table publishes
    its journal again from the start instead of stalling on a gap for good."""
    with HallRunner(broker, tmp_path / "archive") as hall:
        table = tables(broker)
        play(table, 3)
        hall.wait(lambda: all_acknowledged(table), "acknowledged")
    director = broker.client("hall")
    try:
        director.publish("gammonclock/table-1/ack", b"", qos=1, retain=True).wait_for_publish(5)
    finally:
        director.disconnect()
        director.loop_stop()
    with HallRunner(broker, tmp_path / "archive") as fresh:
        play(table, 2)
        expected = event_records(table.journal())
        fresh.wait(lambda: fresh.holds("table-1", expected), "the whole journal again")
        wait(lambda: all_acknowledged(table), "the outbox at its last event")
        assert fresh.position("table-1") == expected[-1]


def test_an_event_the_halls_view_refuses_stalls_the_table_only_once(
        broker: Broker, tables, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """Not acknowledged the first time (the table sends it again); refused again, the hall
    acknowledges past it with an error in its log: the table goes on."""
    with HallRunner(broker, tmp_path / "archive") as hall:
        table = tables(broker)
        play(table, 1)
        hall.wait(lambda: all_acknowledged(table), "acknowledged")
        refused: list[int] = []
        receive = hall.hall.view.receive

        def strict(topic: str, payload: bytes, now_ms: int, retained: bool = False) -> Any:
            if topic.endswith("/events") and not refused or (
                    refused and topic.endswith("/events")
                    and json.loads(payload)["seq"] == refused[0]):
                refused.append(json.loads(payload)["seq"])
                raise ValueError(f"{topic}: refused by the test")
            return receive(topic, payload, now_ms, retained)

        hall.hall.view.receive = strict      # type: ignore[method-assign]
        play(table, 3)
        wait(lambda: all_acknowledged(table), "the table went on past the refused event")
        assert len(refused) >= 2 and len(set(refused)) == 1
    assert "acknowledged anyway so that the table goes on" in caplog.text


# --- 4: every name the clock makes -----------------------------------------------------------

def test_a_journal_with_cyrillic_names_is_archived_and_verified(broker: Broker, tables,
                                                                tmp_path: Path) -> None:
    with HallRunner(broker, tmp_path / "archive") as hall:
        table = tables(broker, left="Анна", right="Борис")
        play(table, 2)
        end_the_match(table)
        name = table.journal().name
        assert "Анна" in name and "Борис" in name
        hall.wait(lambda: name in hall.archived("table-1"), "the journal archived")
        wait(lambda: acked(table).get("journal_sent") is True, "the clock counts it sent")
        entry = next(e for e in hall.archive_list() if e["name"] == name)
        assert entry["ok"] is True, entry
        assert (tmp_path / "archive" / "table-1" / name).read_bytes() == \
            table.journal().read_bytes()[:len((tmp_path / "archive" / "table-1" / name)
                                              .read_bytes())]


@pytest.mark.parametrize("name", ["match-20250101-120000-table-1-Анна-Борис.jsonl",
                                  "match-20250101-120000-t-Ωμέγα-李四-2.jsonl",
                                  "match-20250101-120000-t-Zoë_O_Neil-_.jsonl"])
def test_the_archive_takes_every_name_the_clock_makes(tmp_path: Path, name: str) -> None:
    assert JOURNAL_NAME.fullmatch(name)
    path, new = hall_archive.store(tmp_path, "table-1", name, "{}\n")
    assert new and path.name == name


@pytest.mark.parametrize("name", ["../x.jsonl", "a/b.jsonl", ".hidden.jsonl", "a..b.jsonl",
                                  "a\x00b.jsonl", "x.txt", "Я" * 120 + ".jsonl",
                                  "a.cut-short.jsonl"])
def test_the_archive_still_refuses_names_that_are_not_the_clocks(tmp_path: Path,
                                                                  name: str) -> None:
    with pytest.raises(hall_archive.ArchiveError):
        hall_archive.store(tmp_path, "table-1", name, "{}\n")


# --- an archive that could not write ---------------------------------------------------------

def test_a_journal_the_archive_could_not_write_is_sent_again(broker: Broker, tables,
                                                             tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch
                                                             ) -> None:
    real = hall_archive._link_new
    failures: list[str] = []

    def too_many_files(path: Path, data: bytes) -> bool:
        if not failures:
            failures.append(path.name)
            raise OSError(errno.EMFILE, "Too many open files")
        return real(path, data)

    monkeypatch.setattr(hall_archive, "_link_new", too_many_files)
    with HallRunner(broker, tmp_path / "archive") as hall:
        table = tables(broker)
        play(table, 2)
        end_the_match(table)
        name = table.journal().name
        hall.wait(lambda: name in hall.archived("table-1"), "the journal archived at last")
        wait(lambda: acked(table).get("journal_sent") is True, "the clock counts it sent")
    assert failures == [name]
    assert (tmp_path / "archive" / "table-1" / name).exists()


# --- 9: a journal cut short ------------------------------------------------------------------

def test_a_truncated_journal_is_flagged_and_the_complete_one_wins(broker: Broker, tables,
                                                                  tmp_path: Path) -> None:
    with HallRunner(broker, tmp_path / "archive") as hall:
        table = tables(broker)
        play(table, 4)
        hall.wait(lambda: all_acknowledged(table), "the events in the hall")
        name = table.journal().name
        # A live journal: its zeros filled ahead are no line (journal/prealloc.py).
        lines = table.journal().read_text(encoding="utf-8").rstrip("\0").splitlines(keepends=True)
        table.stop()                            # the genuine journal is not sent yet
        forger = broker.client("table-1")
        try:
            forger.publish("gammonclock/table-1/journal",
                           json.dumps({"journal": name, "text": "".join(lines[:2])}),
                           qos=1).wait_for_publish(5)
        finally:
            forger.disconnect()
            forger.loop_stop()
        hall.wait(lambda: "cut short" in hall.alerts("table-1"), "the card says cut short")
        said = re.search(r"cut short: (\d+) of (\d+) records", hall.alerts("table-1"))
        assert said is not None and int(said[1]) == 2
        assert int(said[2]) >= event_records(table.journal())[-1][1] + 1
        assert name not in hall.archived("table-1")
        assert not (tmp_path / "archive" / "table-1" / name).exists()
        table.start()                           # the clock ends its match: the genuine one
        end_the_match(table)
        hall.wait(lambda: name in hall.archived("table-1"), "the complete journal archived")
        wait(lambda: acked(table).get("journal_sent") is True, "the clock counts it sent")
        shown = [e for e in hall.archive_list() if e["journal"] == name]
        assert shown[0]["name"] == name and shown[0]["ok"] is True and not shown[0]["cut_short"]
        assert [e["cut_short"] for e in shown[1:]] == [True]
        assert (tmp_path / "archive" / "table-1" / name).read_text(encoding="utf-8") \
            .startswith("".join(lines))
        acks = [json.loads(p) for t, p in hall.acks if t.endswith("table-1/ack")]
        first_listing = next(i for i, a in enumerate(acks) if name in a["archived"])
        assert all(name not in a["archived"] for a in acks[:first_listing])


def test_a_longer_journal_takes_the_name_a_shorter_copy_held(tmp_path: Path) -> None:
    """The hall had not seen the events (e.g. it restarted): the short copy took the name; the
    complete one takes it over and the short one stays on disk, marked."""
    head = '{"seq": 0, "kind": "header"}\n'
    full = head + '{"seq": 1, "kind": "input"}\n{"seq": 2, "kind": "input"}\n'
    short = store_journal(tmp_path, "table-1", "m.jsonl", head)
    complete = store_journal(tmp_path, "table-1", "m.jsonl", full)
    assert short.path.name == complete.path.name == "m.jsonl"
    assert complete.set_aside is not None and complete.set_aside[1].name == "m.cut-short.jsonl"
    assert (tmp_path / "table-1" / "m.jsonl").read_text() == full
    assert (tmp_path / "table-1" / "m.cut-short.jsonl").read_text() == head
    verdict = hall_archive.verify_archived(complete.set_aside[1], "table-1", None)
    assert verdict.cut_short and not verdict.ok and verdict.journal == "m.jsonl"


# --- the ACL: only the director writes `ack` ---------------------------------------------------

def test_a_table_reads_its_own_ack_and_writes_no_ack(broker: Broker) -> None:
    with Collector(broker, WATCHER, "gammonclock/#") as seen:
        hall = broker.client("hall")
        try:
            for table in ("table-1", "table-2"):
                hall.publish(f"gammonclock/{table}/ack", json.dumps(
                    {"journal": None, "seq": 0, "archived": [], "at": "x"}), qos=1,
                    retain=True).wait_for_publish(5)
        finally:
            hall.disconnect()
            hall.loop_stop()
        with Collector(broker, "table-1", "gammonclock/+/ack") as own:
            own.wait_for(lambda m: m.topic == "gammonclock/table-1/ack")
            time.sleep(0.3)
            assert {m.topic for m in own.messages} == {"gammonclock/table-1/ack"}
        table = broker.client("table-1")
        try:
            for topic in ("gammonclock/table-1/ack", "gammonclock/table-2/ack"):
                table.publish(topic, b"forged", qos=1).wait_for_publish(5)
            table.publish("gammonclock/table-1/state", b"mine", qos=1).wait_for_publish(5)
            seen.wait_for(lambda m: m.payload == b"mine")
        finally:
            table.disconnect()
            table.loop_stop()
        assert [m.topic for m in seen.messages if m.payload == b"forged"] == []


# --- the hall's bookkeeping, without a broker -------------------------------------------------

def test_the_hall_acknowledges_only_a_gap_free_chain() -> None:
    position = TablePosition()
    assert position.take(EventKey("j1", 2, 0)) and (position.journal, position.seq) == ("j1", 2)
    assert not position.take(EventKey("j1", 7, 5))        # 5 never came: a gap
    assert position.seq == 2
    assert position.take(EventKey("j1", 5, 2)) and position.seq == 7   # filled: 7 follows
    assert not position.take(EventKey("j1", 5, 2))        # held already
    assert position.take(EventKey("j2", 1, 0)) and (position.journal, position.seq) == ("j2", 1)
    assert not position.take(EventKey("j1", 9, 7))        # an older journal, sent again
    assert position.journal == "j2" and position.highest["j1"] == 9


def test_a_restarted_hall_goes_on_from_its_read_back_position() -> None:
    position = TablePosition()
    assert not position.take(EventKey("j1", 9, 7))        # before its retained ack came
    assert position.seed(Ack("j1", 7, frozenset({"j0"})))
    assert (position.journal, position.seq) == ("j1", 9) and "j0" in position.archived
    assert not position.seed(Ack("j1", 3, frozenset()))  # it knows better now


@pytest.mark.parametrize("payload, why", [
    (b'{"journal": "j", "seq": 1, "after": 1}', "after"),
    (b'{"journal": "j", "seq": NaN, "after": 0}', "JSON"),
    (b'{"journal": "", "seq": 1, "after": 0}', "journal"),
    (b'{"journal": "j", "seq": true, "after": 0}', "seq"),
    (b"[]", "object"),
])
def test_an_event_the_hall_cannot_acknowledge_is_named(payload: bytes, why: str) -> None:
    with pytest.raises(ValueError, match=why):
        event_key(payload)


def test_an_event_without_after_is_from_an_older_clock_and_not_tracked() -> None:
    assert event_key(b'{"journal": "j", "seq": 3, "effects": []}') is None


def test_an_event_refused_twice_is_acknowledged_so_the_table_never_stalls() -> None:
    position = TablePosition()
    assert not position.rejected_again(EventKey("j", 1, 0))
    assert position.rejected_again(EventKey("j", 1, 0))

"""The hall's archive of finished journals (SPEC §14, hall/PROTOCOL.md `journal` and `ack`):
a journal message measured before it is parsed, and parsed off the hall's loop, within the
broker's own bound; a journal that lost its tail on a power cut archived as cut short once the
table sends the same again (so that its next journals go on); and "archived" said honestly: a
TAMPERED journal is archived, NOT verified. Against the real Mosquitto and the real `Hall`, with
real clocks on mock pins, where the table-hall path is involved."""

from __future__ import annotations

import json
import shutil
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from gammonclock.hall import archive as hall_archive
from gammonclock.hall.archive import (
    MAX_JOURNAL_BYTES,
    ArchiveError,
    journal_message,
    store_journal,
    verify_archived,
)
from gammonclock.journal.key import SECRET_FILE
from gammonclock.link import publisher as link_publisher
from gammonclock.runtime.lifecycle import load_next_match, run_on_loop
from hall_helpers import HallRunner
from mqtt_helpers import SHIPPED_CONF, Broker
from table_helpers import (
    MATCH,
    Table,
    acked,
    all_acknowledged,
    as_sent,
    device_text,
    end_the_match,
    play,
    wait,
)

T1 = "table-1"


@pytest.fixture(autouse=True)
def quick_resend(monkeypatch: pytest.MonkeyPatch) -> None:
    """The table's wait for the hall's ack, shortened (5 s doubling to 60 s in play)."""
    monkeypatch.setattr(link_publisher, "RESEND_MIN_S", 0.5)
    monkeypatch.setattr(link_publisher, "RESEND_MAX_S", 2.0)


@pytest.fixture
def table_at(tmp_path: Path) -> Iterator[Callable[[Broker], Table]]:
    made: list[Table] = []

    def make(broker: Broker) -> Table:
        folder = tmp_path / T1
        folder.mkdir(exist_ok=True)
        match_file = folder / "match.toml"
        match_file.write_text(MATCH.format(left="Anna", right="Boris"), encoding="utf-8")
        table = Table(folder, device_text(broker, table=T1, user=T1, match_file=match_file))
        made.append(table)
        return table.start()

    yield make
    for table in made:
        table.stop()


def acks_of(hall: HallRunner, table: str = T1) -> list[dict[str, Any]]:
    with hall._lock:
        return [json.loads(p) for t, p in hall.acks if t.endswith(f"{table}/ack")]


def next_match(table: Table) -> Path:
    """A next match loaded at the table (as from the socket), played a little and ended: its
    journal."""
    first = table.journal()
    text = MATCH.format(left="Clara", right="Dmitri")
    done, outcome = run_on_loop(table.service, lambda: load_next_match(
        table.service, table.device.table, text, "next.toml"))
    assert done and outcome.ok, outcome
    assert table.journal() != first
    play(table, 2)
    end_the_match(table)
    return table.journal()


# --- (a) measured first, within the broker's bound, off the loop ---------------------------------

def test_the_journal_bound_is_the_brokers_max_packet_size() -> None:
    conf = [line.split() for line in SHIPPED_CONF.read_text(encoding="utf-8").splitlines()]
    [size] = [int(words[1]) for words in conf if words and words[0] == "max_packet_size"]
    assert MAX_JOURNAL_BYTES == size == 16 << 20


def test_a_journal_message_is_measured_before_anything_of_it_is_parsed(monkeypatch) -> None:
    def parse(*_args: Any, **_kwargs: Any) -> Any:
        raise AssertionError("parsed before it was measured")

    monkeypatch.setattr(hall_archive, "strict_json", parse)
    monkeypatch.setattr(json, "loads", parse)
    payload = b'{"journal": "m.jsonl", "text": "' + b"x" * MAX_JOURNAL_BYTES + b'"}'
    with pytest.raises(ArchiveError) as refused:
        journal_message(T1, payload)
    assert str(refused.value) == (f"the journal message is {len(payload)} bytes; at most "
                                  f"{MAX_JOURNAL_BYTES} (the broker's max_packet_size)")


def test_a_journal_message_is_read_strictly() -> None:
    text = '{"seq": 0, "kind": "header"}\n{"seq": 1}\n{"seq": 2}\n'
    read = journal_message(T1, json.dumps({"journal": "m.jsonl", "text": text}).encode())
    assert (read.name, read.text, read.records, read.last) == ("m.jsonl", text, 3, 2)
    for bad in (b'{"journal": "m.jsonl", "text": NaN}', b"[]", b'{"journal": "m.jsonl"}',
                b'{"journal": "../m.jsonl", "text": ""}', b"\xff"):
        with pytest.raises(ArchiveError):
            journal_message(T1, bad)


def test_the_hall_parses_a_journal_off_its_loop_and_an_oversize_one_not_at_all(
        broker: Broker, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: F811
    """Taken as the hall takes a message from the broker (`receive`, on its loop): a journal
    of 2 MiB is parsed in a worker thread; one over the bound is refused unparsed, on the
    card."""
    real = json.loads
    parsed: list[tuple[int, bool]] = []           # (size, on the hall's loop)

    with HallRunner(broker, tmp_path / "archive") as hall:
        loop_thread = hall._thread

        def loads(text: Any, *args: Any, **kwargs: Any) -> Any:
            if len(text) > 1 << 20:
                parsed.append((len(text), threading.current_thread() is loop_thread))
            return real(text, *args, **kwargs)

        monkeypatch.setattr(json, "loads", loads)
        head = '{"seq": 0, "kind": "header"}\n'
        big = json.dumps({"journal": "m-big.jsonl",
                          "text": head + ('{"seq": 1, "pad": "' + "y" * (2 << 20) + '"}\n')})
        over = b'{"journal": "m-over.jsonl", "text": "' + b"z" * MAX_JOURNAL_BYTES + b'"}'
        for payload in (big.encode(), over):
            hall.call(lambda p=payload: hall.hall.receive(f"gammonclock/{T1}/journal", p,
                                                          False, 0))
        hall.wait(lambda: "m-big.jsonl" in hall.archived(T1), "the 2 MiB journal archived")
        hall.wait(lambda: "the journal message is" in hall.alerts(T1), "the oversize refused")
        assert f"journal not archived: the journal message is {len(over)} bytes" \
            in hall.alerts(T1)
    assert (len(big), False) in parsed                    # the payload, then its lines
    assert [size for size, on_loop in parsed if on_loop or size >= MAX_JOURNAL_BYTES] == []
    assert not (tmp_path / "archive" / T1 / "m-over.jsonl").exists()


# --- (b) a journal that lost its tail ----------------------------------------------------------

def test_a_journal_that_lost_its_tail_is_archived_cut_short_when_sent_again_the_same(
        broker: Broker, table_at, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,  # noqa: F811
        caplog: pytest.LogCaptureFixture) -> None:
    """The table's card lost the journal's tail on a power cut: the events reached the hall,
    the journal it sends is shorter. Sent once it is kept aside and not acknowledged (a longer
    one may come); sent again the very same, it is archived as cut short, said so on the card,
    the archive list and the log, and acknowledged: the table goes on, and its next journal is
    archived (before, it was sent again for ever and every later journal waited)."""
    caplog.set_level("WARNING", logger="gammonclock.hall")
    archive = tmp_path / "archive"
    with HallRunner(broker, archive) as hall:
        table = table_at(broker)
        play(table, 4)
        hall.wait(lambda: all_acknowledged(table), "the events in the hall")
        journal = table.journal()
        name = journal.name
        kept = "".join(journal.read_text(encoding="utf-8").splitlines(keepends=True)[:2])
        sent = as_sent(monkeypatch, journal, lambda _text: kept)
        end_the_match(table)
        hall.wait(lambda: name in hall.archived(T1), "the cut-short journal archived", 20)
        wait(lambda: acked(table).get("journal_sent") is True, "the clock counts it sent")
        assert len(sent) >= 2 and set(sent) == {kept}
        card = hall.alerts(T1)
        assert "cut short: 2 of" in card                          # the first time
        assert f"journal {name} archived cut short, NOT verified: 2 of" in card
        assert "(sent again the same: the table has no more)" in card
        [entry] = [e for e in hall.archive_list() if e["journal"] == name]
        assert entry["name"] == name.removesuffix(".jsonl") + ".cut-short.jsonl"
        assert entry["cut_short"] and not entry["ok"] and not entry["verified"]
        assert entry["message"].startswith("archived cut short, NOT verified: 2 of")
        assert (archive / T1 / entry["name"]).read_text(encoding="utf-8") == kept
        assert not (archive / T1 / name).exists()               # no complete copy pretended
        listed = [name in a["archived"] for a in acks_of(hall)]
        assert True in listed and listed.index(True) > 0         # not at the first arrival
        assert "archived cut short" in caplog.text and "acknowledged" in caplog.text

        following = next_match(table)                            # the table went on
        hall.wait(lambda: following.name in hall.archived(T1), "the next journal archived", 20)
        [later] = [e for e in hall.archive_list() if e["name"] == following.name]
        assert later["ok"] and not later["cut_short"]


def test_a_cut_short_copy_without_a_complete_one_says_so(tmp_path: Path) -> None:
    head = '{"seq": 0, "kind": "header"}\n'
    stored = store_journal(tmp_path, T1, "m.jsonl", head, cut_short=True)
    alone = verify_archived(stored.path, T1, None)
    assert alone.cut_short and not alone.ok and not alone.verified
    assert alone.message.startswith("cut short: no complete copy in the archive; ")
    store_journal(tmp_path, T1, "m.jsonl", head + '{"seq": 1, "kind": "input"}\n')
    beside = verify_archived(stored.path, T1, None)
    assert beside.message.startswith("cut short: set aside, m.jsonl is the complete one; ")


# --- (c) archived is not verified ----------------------------------------------------------------

def test_a_tampered_journal_is_archived_and_said_not_verified(
        broker: Broker, table_at, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,  # noqa: F811
        caplog: pytest.LogCaptureFixture) -> None:
    """A journal whose verdict is TAMPERED is archived (the table sending it again would not
    change the verdict, and its next journals must go on), but never called verified: the card
    says "archived, NOT verified: TAMPERED", the archive list `verified` false, the log warns.
    The next, intact one is verified."""
    caplog.set_level("INFO", logger="gammonclock.hall")
    keys = tmp_path / "keys"
    keys.mkdir()
    with HallRunner(broker, tmp_path / "archive", keys) as hall:
        table = table_at(broker)
        shutil.copy(table.state / SECRET_FILE, keys / f"{T1}.key")
        play(table, 2)
        hall.wait(lambda: all_acknowledged(table), "the events in the hall")
        journal = table.journal()
        as_sent(monkeypatch, journal, lambda text: text.replace("Boris", "Borya"))
        end_the_match(table)
        hall.wait(lambda: journal.name in hall.archived(T1), "the tampered journal archived")
        wait(lambda: acked(table).get("journal_sent") is True, "the clock counts it sent")
        [entry] = [e for e in hall.archive_list() if e["name"] == journal.name]
        assert not entry["ok"] and not entry["verified"] and entry["sealed"]
        assert entry["message"].startswith("TAMPERED")
        assert f"journal {journal.name} archived, NOT verified: TAMPERED" in hall.alerts(T1)
        assert f"archived {tmp_path / 'archive' / T1 / journal.name}, NOT verified: TAMPERED" \
            in caplog.text
        following = next_match(table)
        hall.wait(lambda: following.name in hall.archived(T1), "the next journal archived")
        [intact] = [e for e in hall.archive_list() if e["name"] == following.name]
        assert intact["ok"] and intact["verified"] and intact["sealed"]
        assert f"journal {following.name} archived" not in hall.alerts(T1)
        assert f"archived {tmp_path / 'archive' / T1 / following.name}, verified: intact" \
            in caplog.text


def test_a_table_has_one_journal_archived_at_a_time_and_a_few_waiting(tmp_path: Path) -> None:
    """Journals are large (up to 16 MiB, parsed and written off the loop): a table sending many
    at once has one archived at a time and the newest JOURNALS_WAITING waiting, in order; those
    dropped are sent again by the table (nothing is acknowledged for them), so none is lost."""
    import asyncio

    from gammonclock.hall.server import Hall, HallOptions
    from gammonclock.wire import BrokerURL

    hall = Hall(HallOptions(BrokerURL.parse("mqtt://127.0.0.1:1"), "hall", "pw",
                            archive=tmp_path / "archive"))
    running, most, archived = 0, 0, []

    async def slow_archive(table: str, payload: bytes, highest: dict[str, int]) -> None:
        nonlocal running, most
        running += 1
        most = max(most, running)
        await asyncio.sleep(0.05)
        archived.append((table, payload))
        running -= 1
    hall.archiving._archive = slow_archive  # type: ignore[method-assign]

    async def flood() -> None:
        for n in range(7):
            hall.take("gammonclock/table-1/journal", b"journal %d" % n, False, 0)
        hall.take("gammonclock/table-2/journal", b"other", False, 0)
        while hall._tasks:
            await asyncio.gather(*list(hall._tasks))
    # On a thread of its own: a test before it in this process may hold a running loop here.
    runner = threading.Thread(target=lambda: asyncio.run(flood()))
    runner.start()
    runner.join(30)
    assert most == 2                                   # one per table, the two tables together
    assert [p for t, p in archived if t == "table-1"] == [
        b"journal 0", b"journal 3", b"journal 4", b"journal 5", b"journal 6"]
    assert [p for t, p in archived if t == "table-2"] == [b"other"]

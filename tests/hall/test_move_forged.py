"""Issue 31, "a forged journal is continued" (SPEC §13.5, §14.1): with table-1's clock stopped,
its broker account published journal lines sealed with another key as its events; the hall kept
them (checksum, schema and seq only), `POST /api/move` answered 200, and table-3 continued the
forged match at 6-0. Now a line is kept only when it verifies with table-1's own key (`--keys-dir`)
and follows the records held around it; a line that fails is refused, counted and said on the
card, and the copy can no longer be moved (the page says why). Against a real Mosquitto with the
shipped ACL, the real hall with its page, and real clocks on mock pins (venue_helpers)."""

from __future__ import annotations

import json
import urllib.error
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from gammonclock.core.match import Phase
from gammonclock.hall.continuation import LIVE_DIR, LiveCopies, NoWholeCopy
from gammonclock.journal.reader import read_journal
from gammonclock.journal.verify import verify
from gammonclock.link.outbox import JournalTail
from gammonclock.runtime.lifecycle import load_next_match
from gammonclock.sides import Button
from hall_web_helpers import RunningHall, journal_event, publish, table_client
from move_helpers import (
    appended_lines,
    copy_device_key,
    give_key,
    key_of,
    post_move,
    publish_lines,
    sealed_lines,
    until,
    with_hall,
)
from mqtt_helpers import Broker, Collector
from venue_helpers import MATCH_TEXT, S, Venue, command, journal_of, power_cut, tap

SEVEN = MATCH_TEXT.replace("length = 5", "length = 7")


# --- the hall's copy: each way a line fails --------------------------------------------------

def _copy_with(tmp_path: Path, bad: Any) -> tuple[LiveCopies, list[str]]:
    """T1's copy holding records 0-3 of a journal sealed with T1's key, then BAD(lines,
    path) -> (seq, after, records) as one more event."""
    keys = tmp_path / "keys"
    give_key(keys, "T1", key_of("T1"))
    path = tmp_path / "match-1.jsonl"
    lines = sealed_lines(path, key_of("T1"), records=6)
    copies = LiveCopies(keys_dir=keys)
    copies.take("T1", journal_event(path.name, 3, 0, lines[0:4]))
    seq, after, records = bad(lines, tmp_path)
    copies.take("T1", journal_event(path.name, seq, after, records))
    return copies, lines


def _other_journal(tmp_path: Path, key: bytes) -> list[str]:
    return sealed_lines(tmp_path / "other.jsonl", key, records=6,
                        config='[match]\nlength = 9\n')


CASES = {
    # record 4 sealed with another device's key, chained to record 3 as a writer would
    "sealed by another key": (lambda lines, tmp: (
        4, 3, [_appended(tmp, lines, key_of("another device"))]), "copy_seal", 4),
    # a whole other journal's header, with another key, as this journal's lines
    "another device's journal": (lambda lines, tmp: (
        5, 3, _other_journal(tmp, key_of("another device"))[4:6]), "copy_seal", 4),
    # T1's own key, but the records of another of its journals: they do not follow record 3
    "another journal of the table spliced in": (lambda lines, tmp: (
        5, 3, _other_journal(tmp, key_of("T1"))[4:6]), "copy_chain", 4),
    # a second, different record 2 (sent again, altered and sealed by the table's key)
    "a second record of one seq": (lambda lines, tmp: (
        2, 1, [_other_journal(tmp, key_of("T1"))[2]]), "copy_chain", 2),
    # record 5 outside the event that carries it
    "outside its event": (lambda lines, tmp: (4, 3, [lines[5]]), "copy_bounds", 5),
    # a byte changed: its checksum no longer holds
    "altered": (lambda lines, tmp: (4, 3, [lines[4].replace('"t":4000000000',
                                                           '"t":4000000001')]),
                "copy_damaged", "?"),
    "not a line": (lambda lines, tmp: (4, 3, [7]), "copy_damaged", "?"),
}


def _appended(tmp_path: Path, lines: list[str], key: bytes) -> str:
    """Record 4 after records 0-3 of LINES, sealed with KEY."""
    path = tmp_path / "forged.jsonl"
    path.write_text("".join(f"{line}\n" for line in lines[:4]), encoding="utf-8")
    return appended_lines(path, key, 1)[0]


@pytest.mark.parametrize("case", list(CASES))
def test_a_line_that_does_not_verify_is_refused_and_its_copy_cannot_be_moved(tmp_path, case):
    bad, code, record = CASES[case]
    copies, lines = _copy_with(tmp_path, bad)
    assert copies.dropped >= 1
    with pytest.raises(NoWholeCopy) as refused:
        copies.whole_copy("T1")
    assert refused.value.code == code
    assert refused.value.fields == {"table": "T1", "journal": "match-1.jsonl", "record": record}
    held = copies.held("T1")
    assert held is not None and held["movable"] is False and held["code"] == code
    # The genuine lines that come after change nothing: the copy stays refused.
    copies.take("T1", journal_event("match-1.jsonl", 6, 3, lines[4:7]))
    with pytest.raises(NoWholeCopy):
        copies.whole_copy("T1")


def test_lines_that_verify_are_kept_in_any_order_and_the_copy_moves(tmp_path):
    keys = tmp_path / "keys"
    give_key(keys, "T1", key_of("T1"))
    path = tmp_path / "match-1.jsonl"
    lines = sealed_lines(path, key_of("T1"), records=6)
    copies = LiveCopies(keys_dir=keys)
    copies.take("T1", journal_event(path.name, 6, 4, lines[5:7]))       # after a gap
    copies.take("T1", journal_event(path.name, 2, 0, lines[0:3]))
    copies.take("T1", journal_event(path.name, 4, 2, lines[3:5]))
    copies.take("T1", journal_event(path.name, 4, 2, lines[3:5]))       # sent again
    whole = copies.whole_copy("T1")
    assert (whole.journal, whole.text, whole.last_seq) == (path.name, path.read_text(), 6)
    assert copies.dropped == 0


# --- the attack, against the real hall and clocks --------------------------------------------

VENUE_TABLES = ("table-1", "table-3")


def _forged_journal(tmp_path: Path, real: int) -> Path:
    """A match at 6-0 made and sealed on another device that calls itself table-1, begun at
    the venue's REAL time (a journal of its own name)."""
    forger = Venue(real=real)
    device = forger.build(tmp_path, "table-1", tmp_path / "forger", 7 * 3600, "boot-forger")
    try:
        assert load_next_match(device.service, device.table, SEVEN, "match.toml").ok
        tap(forger, device, Button.LEFT)
        command(device, "score", "6", "0")
        tap(forger, device, Button.RIGHT)
        return journal_of(device)
    finally:
        device.close()


def _publish_journal(client: Any, table: str, path: Path, name: str | None = None) -> None:
    """Every event of the journal at PATH as a clock's link publishes them (under NAME)."""
    for event in JournalTail(path, 0).read(1000):
        payload = event.payload()
        if name is not None:
            payload["journal"] = name
        publish(client, f"gammonclock/{table}/events", payload)


FORGERIES = ("another device's journal", "the genuine journal sealed on by another key",
             "another journal of the table spliced in")


@pytest.mark.parametrize("forgery", FORGERIES)
def test_forged_lines_from_a_stopped_tables_account_are_not_kept_nor_moved(
        tmp_path: Path, venue_broker: Broker, forgery: str) -> None:
    venue = Venue()
    with_hall(venue, venue_broker)
    keys, archive = tmp_path / "keys", tmp_path / "archive"
    with RunningHall(venue_broker, archive, keys_dir=keys) as hall, \
            ThreadPoolExecutor(1) as pool:
        genuine = venue.build(tmp_path, "table-1", tmp_path / "t1", 3 * 3600, "boot-t1")
        copy_device_key(keys, "table-1", tmp_path / "t1")
        spare = None
        try:
            assert load_next_match(genuine.service, genuine.table, MATCH_TEXT, "m.toml").ok
            for button in (Button.LEFT, Button.RIGHT, Button.LEFT, Button.RIGHT):
                tap(venue, genuine, button)
            command(genuine, "warn", "right", "phone out")
            card = journal_of(genuine)
            last = read_journal(card).last
            until(lambda: (_held(hall, "table-1") or {}).get("last_seq") == last.seq,
                  "the hall holds table-1's journal", step=genuine.service.step)
            power_cut(genuine)                              # table-1's clock is stopped
            venue.clocks.remove(genuine)
            until(lambda: hall.card("table-1").get("online") is False, "table-1 offline")
            spare = venue.build(tmp_path, "table-3", tmp_path / "t3", 50 * 3600, "boot-t3")
            until(lambda: "table-3" in {c["table"] for c in hall.get("/api/cards")["cards"]},
                  "table-3 on the hall", step=spare.service.step)
            # table-1's account publishes the forged lines as its events.
            account = table_client(venue_broker, "table-1")
            try:
                if forgery == "another device's journal":
                    _publish_journal(account, "table-1",
                                     _forged_journal(tmp_path, venue.real + 600 * S))
                    code = "copy_seal"
                elif forgery == "the genuine journal sealed on by another key":
                    forged = tmp_path / "forged" / card.name
                    forged.parent.mkdir()
                    forged.write_bytes(card.read_bytes())
                    more = appended_lines(forged, key_of("another device"), 3)
                    publish_lines(account, "table-1", card.name, more, first=last.seq + 1)
                    code = "copy_seal"
                else:
                    # another journal sealed with table-1's own key: its records do not
                    # follow this journal's
                    other = sealed_lines(tmp_path / "other.jsonl", _device_key(tmp_path / "t1"),
                                         records=last.seq + 4)
                    publish_lines(account, "table-1", card.name, other[last.seq + 1:],
                                  first=last.seq + 1)
                    code = "copy_chain"
            finally:
                account.disconnect()
                account.loop_stop()
            until(lambda: _came(hall, card.name, last.seq), "the forged lines came")
            with Collector(venue_broker, "watcher", "gammonclock/table-3/cmd") as sent:
                status, body = post_move(pool, hall, {"from": "table-1", "to": "table-3",
                                                      "live": True}, spare)
                assert status == 400
                assert body["code"] == code, body
                assert "continue it from the clock's card or a stick" in body["error"]
                assert sent.messages == []              # nothing went to the spare
            # Nothing continued on table-3; the card says what table-1's account sent.
            assert spare.session is None or spare.session.engine.match.phase is not Phase.PAUSED
            assert not list((tmp_path / "t3").glob("journals/*.jsonl"))
            card_now = hall.card("table-1")
            assert card_now["copy"]["code"] == code and card_now["copy"]["refused_lines"] >= 1
            said = [n for n in card_now["needs"] if n["say"][:2] == ["copy_refused", code]]
            assert len(said) == 1, card_now["needs"]
            # What the hall keeps on disk of the genuine journal is that journal to its last
            # record, every line sealed and chained by table-1's key (a line the forgery put in
            # its place would break it); what follows it was refused, and the copy with it.
            path = archive / LIVE_DIR / "table-1" / card.name
            kept = [ln for ln in path.read_text().splitlines() if not ln.startswith("#")]
            genuine = sorted((json.loads(ln)["seq"], ln) for ln in kept
                             if json.loads(ln)["seq"] <= last.seq)
            checked = tmp_path / "checked.jsonl"
            checked.write_text("".join(f"{ln}\n" for _, ln in genuine))
            verdict = verify(checked, _device_key(tmp_path / "t1"))
            assert verdict.intact and verdict.sealed, verdict.words
            assert verdict.records == last.seq + 1
        finally:
            for device in venue.clocks:
                device.close()
    # A restarted hall still refuses that copy (the refusal is marked on disk).
    with RunningHall(venue_broker, archive, keys_dir=keys) as again:
        until(lambda: "table-1" in {c["table"] for c in again.get("/api/cards")["cards"]},
              "the restarted hall lists table-1", timeout=10)
        assert again.card("table-1")["copy"]["code"] == code
        with pytest.raises(urllib.error.HTTPError) as refused:
            again.post("/api/move", {"from": "table-1", "to": "table-3", "live": True})
        assert json.loads(refused.value.read())["code"] == code


def _held(hall: RunningHall, table: str) -> dict[str, Any] | None:
    return hall.call(lambda: hall.hall.live.held(table))


def _came(hall: RunningHall, genuine: str, last_seq: int) -> bool:
    """The forged lines reached the hall's copies: kept there, or refused."""
    held = _held(hall, "table-1") or {}
    return held.get("journal") != genuine or (held.get("last_seq") or 0) > last_seq \
        or hall.call(lambda: hall.hall.live.dropped) > 0


def _device_key(state: Path) -> bytes:
    from gammonclock.journal.key import read_key
    return read_key(state)


# --- a restart: what is on disk is checked again ----------------------------------------------

def test_a_restarted_hall_refuses_forged_lines_it_finds_in_its_live_copies(
        tmp_path: Path, broker: Broker) -> None:
    """Lines on disk in `.live/` (kept by a hall before this check, or put there) are checked
    with the table's key when the hall starts: forged ones refuse the copy."""
    keys, archive = tmp_path / "keys", tmp_path / "archive"
    give_key(keys, "table-1", key_of("table-1"))
    give_key(keys, "table-2", key_of("table-2"))
    path = tmp_path / "match-1.jsonl"
    lines = sealed_lines(path, key_of("table-1"), records=4)
    forged = appended_lines(path, key_of("another device"), 2)
    folder = archive / LIVE_DIR / "table-1"
    folder.mkdir(parents=True)
    (folder / path.name).write_text("".join(f"{ln}\n" for ln in lines + forged))
    good = archive / LIVE_DIR / "table-2"
    good.mkdir(parents=True)
    (good / path.name).write_text("".join(
        f"{ln}\n" for ln in sealed_lines(tmp_path / "t2.jsonl", key_of("table-2"))))
    with RunningHall(broker, archive, keys_dir=keys) as hall:
        clients = [table_client(broker, table) for table in ("table-1", "table-2")]
        try:
            for client, table in zip(clients, ("table-1", "table-2"), strict=True):
                publish(client, f"gammonclock/{table}/online", "0", retain=True)
            until(lambda: hall.card("table-1").get("online") is False
                  and hall.card("table-2").get("online") is False, "both tables offline")
        finally:
            for client in clients:
                client.disconnect()
                client.loop_stop()
        with pytest.raises(urllib.error.HTTPError) as refused:
            hall.post("/api/move", {"from": "table-1", "to": "table-2", "live": True})
        assert (refused.value.code, json.loads(refused.value.read())["code"]) == (400,
                                                                                 "copy_seal")
        copy = hall.card("table-1")["copy"]
        assert (copy["movable"], copy["code"], copy["fields"]["record"]) == (False, "copy_seal",
                                                                               5)
        # The genuine copy beside it, read back the same way, is kept and can be moved.
        assert hall.card("table-2")["copy"]["movable"] is True


# --- no key: nothing kept ---------------------------------------------------------------------

@pytest.mark.parametrize("given", ["no --keys-dir", "no key of that table"])
def test_without_the_tables_key_the_hall_keeps_nothing_and_refuses_the_move(
        tmp_path: Path, broker: Broker, given: str) -> None:
    archive = tmp_path / "archive"
    keys = None
    if given == "no key of that table":
        keys = tmp_path / "keys"
        give_key(keys, "table-2", key_of("table-2"))
    with RunningHall(broker, archive, keys_dir=keys) as hall:
        client, spare = table_client(broker, "table-1"), table_client(broker, "table-2")
        try:
            lines = sealed_lines(tmp_path / "match-1.jsonl", key_of("table-1"))
            publish_lines(client, "table-1", "match-1.jsonl", lines)
            publish(client, "gammonclock/table-1/online", "0", retain=True)
            publish(spare, "gammonclock/table-2/online", "1", retain=True)
            until(lambda: (_held(hall, "table-1") or {}).get("journal") == "match-1.jsonl"
                  and hall.card("table-1").get("online") is False
                  and hall.card("table-2").get("online") is True, "table-1's events came")
        finally:
            for each in (client, spare):
                each.disconnect()
                each.loop_stop()
        code = "no_keys_dir" if keys is None else "no_key"
        with pytest.raises(urllib.error.HTTPError) as refused:
            hall.post("/api/move", {"from": "table-1", "to": "table-2"})
        body = json.loads(refused.value.read())
        assert (refused.value.code, body["code"]) == (400, code)
        assert "continue it from the clock's card or a stick" in body["error"]
        copy = hall.card("table-1")["copy"]
        assert (copy["movable"], copy["records"], copy["code"]) == (False, 0, code)
        assert not list((archive / LIVE_DIR).rglob("*.jsonl"))        # nothing kept

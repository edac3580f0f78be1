"""The hall's per-table "events" (the card's count, the table dialog's "N events") counts the
records with effects, each once; a record the link sent without effects only to carry the lines
before it (they would outgrow one message: hall/PROTOCOL.md `events`) is taken, its lines kept
and acknowledged, but is no event: not counted, not among the last events. Real Mosquitto, the
real hall, the events as the clock's link reads them from a journal (`link.outbox.JournalTail`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from gammonclock.journal.records import Stamp
from gammonclock.journal.writer import JournalWriter
from gammonclock.link.outbox import JournalTail
from gammonclock.wire import MAX_EVENT_RECORDS_BYTES
from hall_web_helpers import RunningHall, clock_state, publish
from move_helpers import give_key
from mqtt_helpers import Broker

P = "gammonclock"
S = 1_000_000_000
EFFECTS = [{"kind": "turn_ended", "side": "left"}, {"kind": "turn_started", "side": "right"}]


def journal_with_quiet_stretches(path: Path) -> tuple[set[int], set[int]]:
    """A journal: presses (records with effects), and twice a long stretch of quiet ticks whose
    lines outgrow one message; the seqs with effects, and the seqs after the header."""
    writer = JournalWriter.create(path, b"\x07" * 32, {"config": "[match]\nlength = 3\n"}, 0,
                                  Stamp(1, "b", 2), fsync=False)
    with_effects: set[int] = set()
    seq = 0
    quiet = {"effects": [], "note": "q" * 900}       # a quiet tick: a line of about 1 KiB
    for stretch in range(3):
        for _ in range(3):
            seq += 1
            writer.append("tick", seq * S, {"effects": EFFECTS}, Stamp(seq, "b", seq))
            with_effects.add(seq)
        if stretch < 2:
            for _ in range(MAX_EVENT_RECORDS_BYTES // 900 + 4):
                seq += 1
                writer.append("tick", seq * S, quiet, Stamp(seq, "b", seq))
    writer.close()
    return with_effects, set(range(1, seq + 1))


def test_a_record_that_only_carries_lines_is_no_event(broker: Broker, table: Any,
                                                      tmp_path: Path) -> None:
    keys = tmp_path / "keys"                    # the hall keeps the lines its key verifies
    give_key(keys, "table-1", b"\x07" * 32)
    with RunningHall(broker, tmp_path / "archive", keys_dir=keys) as hall:
        _carriers(hall, table, tmp_path)


def _carriers(hall: RunningHall, table: Any, tmp_path: Path) -> None:
    path = tmp_path / "match-1.jsonl"
    with_effects, every = journal_with_quiet_stretches(path)
    events = JournalTail(path, 0).read(100)
    carriers = {e.seq for e in events if not e.effects}
    assert len(carriers) == 2                           # one in each quiet stretch
    assert {e.seq for e in events} == with_effects | carriers
    publish(table, f"{P}/table-1/online", "1", retain=True)
    publish(table, f"{P}/table-1/state", clock_state(seq=max(every)), retain=True)
    for event in events:
        publish(table, f"{P}/table-1/events", event.payload())
    seen = hall.hall.view.table("table-1").seen
    hall.wait(lambda: {("match-1.jsonl", s) for s in with_effects | carriers} <= set(seen),
              "every message taken")
    card = hall.card("table-1")
    assert card["events"] == len(with_effects) == 9          # not 11: the carriers are none
    assert card["duplicates"] == 0
    assert not carriers & {entry["seq"] for entry in card["recent"]}
    assert all(entry["kinds"] for entry in card["recent"])
    assert hall.hall.view.events_counted == 9 and hall.hall.view.carriers_counted == 2
    # The carriers' lines are the hall's all the same: its copy of the journal is whole.
    name, text = hall.hall.live.journal_text("table-1")
    assert name == path.name and text == path.read_text(encoding="utf-8")
    # Sent again (a reconnect): a duplicate, not a second carrier.
    publish(table, f"{P}/table-1/events", events[3].payload())
    hall.wait(lambda: hall.hall.view.duplicates == 1, "the resend taken")
    assert hall.card("table-1")["events"] == 9 and hall.hall.view.carriers_counted == 2

"""A table can only spoil its own card (SPEC §14, issue 18 items 3 and 7): the hall's view,
driven directly with bytes as a hostile table would publish them. Whatever table-1 sends, its
card serialises as strict JSON, keeps its last good state and shows the bad message; alerts and
memory stay bounded; table-2's card does not change by a byte."""

from __future__ import annotations

import json
import math
import sys
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gammonclock.hall.tables import ALERTS_KEPT, JOURNALS_KEPT, SEQ_WINDOW
from gammonclock.hall.view import MAX_LAG_MS, MAX_TABLES, HallView, Rejected
from hall_web_helpers import RunningHall, clock_state, iso, publish, table_client
from mqtt_helpers import Broker

P = "gammonclock"
HOSTILE, HONEST = "table-1", "table-2"
NOW = 1_700_000_000_000


def strict(data: Any) -> str:
    """JSON as a browser takes it: no NaN, no Infinity."""
    return json.dumps(data, allow_nan=False, separators=(",", ":"))


def loads_strict(text: str | bytes) -> Any:
    def refuse(name: str) -> Any:
        raise ValueError(f"{name} is not JSON")
    return json.loads(text, parse_constant=refuse)


def state_bytes(table: str = HOSTILE, **over: Any) -> bytes:
    return json.dumps(clock_state(table, **over)).encode()


def event_bytes(seq: int, *effects: dict[str, Any], journal: str = "match-1.jsonl") -> bytes:
    return json.dumps({"journal": journal, "seq": seq, "at": iso(NOW),
                       "effects": list(effects) or [{"kind": "turn_ended"}]}).encode()


@dataclass
class Hall:
    """A view with two tables that have played a while; `honest` is table-2's card as JSON."""

    view: HallView
    honest: str

    def send(self, what: str, payload: bytes, now_ms: int = NOW, retained: bool = False,
             table: str = HOSTILE) -> str | None:
        return self.view.receive(f"{P}/{table}/{what}", payload, now_ms, retained)

    def card(self, table: str = HOSTILE) -> dict[str, Any]:
        return self.view.card(table)

    def check_honest(self) -> None:
        assert strict(self.view.card(HONEST)) == self.honest
        for card in self.view.cards():
            loads_strict(strict(card))


@pytest.fixture(name="hall")
def hall_fixture() -> Iterator[Hall]:
    view = HallView(P)
    for table in (HOSTILE, HONEST):
        view.receive(f"{P}/{table}/online", b"1", NOW - 5000, True)
        view.receive(f"{P}/{table}/state", state_bytes(table, at=iso(NOW - 4000)), NOW - 3990)
        view.receive(f"{P}/{table}/events", event_bytes(1, {"kind": "flag_fell", "side": "left"}),
                     NOW - 3000)
        view.receive(f"{P}/{table}/cmd/reply", b'{"id": "a", "ok": false, "reason": "busy"}',
                     NOW - 2000)
    hall = Hall(view, strict(view.card(HONEST)))
    yield hall
    hall.check_honest()


# --- one bad message ------------------------------------------------------------------------------

def _with(path: str, value: Any) -> bytes:
    """A state as the clock sends it with the field at `path` (a.b.c) replaced; the value is
    written as JSON text (so NaN and Infinity can be written)."""
    data = clock_state(HOSTILE, at=iso(NOW))
    marker = "\u0000MARK\u0000"
    *parents, last = path.split(".")
    node = data
    for key in parents:
        node = node[key]
    node[last] = marker
    return json.dumps(data).replace(json.dumps(marker), value).encode()


NON_FINITE = [("state", _with("clock.left.reserve_ms", "NaN")),
              ("state", _with("score.left", "Infinity")),
              ("state", _with("clock.right.reserve_ms", "-Infinity")),
              ("state", _with("score.right", "1e999999999")),
              ("state", _with("extra", "NaN")),          # even in a key the hall drops
              ("events", b'{"journal": "j", "seq": 2, "at": NaN, "effects": []}'),
              ("cmd/reply", b'{"id": "b", "ok": false, "reason": "x", "effects": [Infinity]}'),
              ("notice", b'{"ok": true, "said": [], "at": -Infinity}')]

HUGE = [("state", _with("players.left", json.dumps("A" * 10_000_000))),
        ("state", b"[" * 100_000 + b"]" * 100_000),
        ("state", _with("extra", "[" * 20 + "]" * 20)),           # small, but too deep
        ("events", b'{"journal": "j", "seq": 2, "effects": ' + b"[" * 50 + b"]" * 50 + b"}"),
        ("state", _with("seq", "1" + "0" * 5000)),
        ("events", json.dumps({"journal": "j", "seq": 2,
                               "effects": [{"kind": "turn_ended"}] * 1000}).encode())]

WRONG_TYPES = [(path, value) for path, values in {
    "phase": ['"dancing"', "3", "null", "[]"],
    "game": ['"2"', "-1", "1.5", "true", "100000000"],
    "match_length": ["0", "100", '"7"', "7.5"],
    "score.left": ["-1", '"3"', "0.3", "100000", "true", "{}"],
    "score": ["[3, 2]", '"3-2"'],
    "crawford_game": ['"no"', "0"],
    "cube.value": ["3", "0", "8192", '"2"', "2.0000001"],
    "cube.owner": ['"centre"', "1"],
    "cube.enabled": ['"yes"'],
    "cube": ["2", "[]"],
    "running": ['"both"', "1", "true"],
    "clock.left.reserve_ms": ['"600000"', "1e12", "864000001", "600000.5"],
    "clock.right": ["600000", "[]"],
    "clock.left.delay_ms": ["-1", '"1s"'],
    "clock": ['"10:00"'],
    "breaks_left.left": ["-1", "1000", '"1"'],
    "winner": ['"nobody"'],
    "end_reason": ["5"],
    "flag": ['"up"', "false"],
    "table": ["12"],
    "event": ["{}"],
    "players.left": ["12", "[]"],
    "players": ['"Anna v Boris"'],
    "journal": ["1", json.dumps("m" * 300)],
    "seq": ["-1", '"5"', "5.0"],
    "at": ['"yesterday"', '"2025-05-01T14:03:07"', "0", json.dumps("2" * 100)],
    "online": ['"1"'],
    "lifecycle": ['"playing"'],
}.items() for value in values]


@pytest.mark.parametrize("what, payload", [
    *NON_FINITE, *HUGE,
    *[("state", _with(path, value)) for path, value in WRONG_TYPES],
    ("state", b"\xff\xfe not json"), ("state", b'"a string"'), ("state", b"{}"),
    ("events", b'{"journal": 5, "seq": 2}'), ("events", b'{"journal": "j", "seq": 0}'),
    ("events", b'{"journal": "j", "seq": true}'), ("events", b'{"journal": "j", "seq": 2.0}'),
    ("events", b'{"journal": "j", "seq": 2, "effects": {"kind": "flag_fell"}}'),
    ("events", b'{"journal": "j", "seq": 2, "effects": ["flag_fell"]}'),
    ("events", b'{"journal": "j", "seq": 2, "effects": [{"side": "left"}]}'),
    ("events", json.dumps({"journal": "j" * 1000, "seq": 2}).encode()),
    ("notice", b'{"ok": "no"}'), ("notice", b'{"ok": false, "error": {"a": 1}}'),
    ("cmd/reply", b'{"id": "b", "ok": 0}'), ("cmd/reply", b'{"id": ["b"], "ok": true}'),
    ("online", b"1" * 1000),
], ids=lambda v: v if isinstance(v, str) else repr(v[:60]))
def test_a_bad_message_spoils_only_its_own_card(hall: Hall, what: str, payload: bytes) -> None:
    before = hall.card()
    with pytest.raises(Rejected) as refused:
        hall.send(what, payload, NOW + 5000)
    assert refused.value.table == HOSTILE           # the hall shows that card again
    assert str(refused.value).startswith(f"{P}/{HOSTILE}/{what}: ")
    after = hall.card()
    assert after["state"] == before["state"] and after["events"] == before["events"]
    assert after["recent"] == before["recent"] and after["replies"] == before["replies"]
    assert after["bad_messages"] == 1
    [bad] = [n for n in after["needs"] if n["kind"] == "bad"]
    assert bad["text"].startswith(f"bad message from the table ({what}): ") and bad["key"]
    assert len(strict(after)) < 4000                # nothing of the payload is kept
    assert hall.view.rejected == 1


def test_a_flood_of_bad_messages_is_one_alert_shown_again_at_most_every_second(
        hall: Hall) -> None:
    changed = []
    for i in range(1000):
        try:
            hall.send("state", b"NaN", NOW + i)             # 1000 in one second
        except Rejected as refused:
            changed.append(refused.table)
    assert changed.count(HOSTILE) == 1 and changed.count(None) == 999
    card = hall.card()
    [bad] = [n for n in card["needs"] if n["kind"] == "bad"]
    assert "(1000 so far)" in bad["text"] and card["bad_messages"] == 1000
    with pytest.raises(Rejected) as later:
        hall.send("state", b"NaN", NOW + 1000)
    assert later.value.table == HOSTILE
    assert hall.view.dismiss(HOSTILE, bad["key"])
    with pytest.raises(Rejected) as again:                 # seen: a new one shows at once
        hall.send("state", b"NaN", NOW + 1001)
    assert again.value.table == HOSTILE


def test_table_names_and_the_number_of_tables_are_bounded() -> None:
    view = HallView(P)
    assert view.receive(f"{P}/no such table!/state", state_bytes(), NOW) is None
    assert view.receive(f"{P}/{'t' * 33}/state", state_bytes(), NOW) is None
    assert view.tables == {}
    for n in range(MAX_TABLES):
        view.receive(f"{P}/t{n}/online", b"1", NOW)
    with pytest.raises(Rejected):
        view.receive(f"{P}/one-more/online", b"1", NOW)
    assert len(view.tables) == MAX_TABLES


# --- a state's order and its `at` ----------------------------------------------------------------

def test_a_state_from_the_future_does_not_silence_the_honest_ones(hall: Hall) -> None:
    hall.send("state", state_bytes(seq=6, at="2999-01-01T00:00:00.000Z"), NOW)
    assert hall.card()["reserves_at_ms"] <= NOW             # clamped to the hall's clock
    for i, seq in enumerate((6, 7, 8)):                     # a periodic state, then presses
        now = NOW + 10_000 * (i + 1)
        hall.send("state", state_bytes(seq=seq, at=iso(now - 30), left_ms=500_000 - i), now)
        card = hall.card()
        assert (card["state"]["seq"], card["state"]["clock"]["left"]["reserve_ms"]) \
            == (seq, 500_000 - i)
        assert card["reserves_at_ms"] == now - 20   # 30 ms latency, 10 at best: no outlier


def test_a_table_days_off_still_counts_from_the_halls_clock() -> None:
    view = HallView(P)
    skew = -3 * 86_400_000                                  # the Pi thinks it is 3 days ago
    # before any live state (the hall just started): the retained one counts from at most
    # MAX_LAG_MS before it came, not from three days before
    view.receive(f"{P}/t1/state", state_bytes(seq=4, at=iso(NOW - 60_000 + skew)), NOW - 60_000,
                 retained=True)
    assert view.card("t1")["reserves_at_ms"] == NOW - 60_000 - MAX_LAG_MS
    # the smallest latency is taken for none: a state's reserves count from its `at` less
    # the latency above the smallest
    for i, (latency, behind) in enumerate([(40, 0), (25, 0), (300, 275), (31, 6), (2000, 1975)]):
        now = NOW + 10_000 * i
        view.receive(f"{P}/t1/state", state_bytes(seq=5 + i, at=iso(now + skew - latency)), now)
        assert view.card("t1")["reserves_at_ms"] == now - behind


def test_one_outlier_does_not_poison_the_offset() -> None:
    view = HallView(P)
    for i in range(6):
        now = NOW + 10_000 * i
        at = now - 20 if i != 3 else now + 7 * 3_600_000    # one state 7 h ahead
        view.receive(f"{P}/t1/state", state_bytes(seq=5 + i, at=iso(at)), now)
    view.receive(f"{P}/t1/state", state_bytes(seq=20, at=iso(NOW + 100_000 - 20)), NOW + 100_000)
    assert view.card("t1")["reserves_at_ms"] == NOW + 100_000       # 20 ms latency, as all


@pytest.mark.parametrize("later, retained, shown", [
    ({"seq": 4, "at": iso(NOW - 5000)}, True, 9),           # retained, older position
    ({"seq": 4, "at": iso(NOW + 5000)}, True, 9),           # ... even with a newer `at`
    ({"seq": 4, "at": iso(NOW + 5000)}, False, 9),          # a late live one
    ({"seq": 9, "at": iso(NOW - 5000)}, True, 9),           # retained, same position, older
    ({"seq": 10, "at": iso(NOW - 9000)}, False, 10),        # newer position, whatever `at`
    ({"seq": 2, "journal": "match-0.jsonl"}, False, 2),     # a new journal (never seen)
])
def test_an_older_state_never_winds_a_card_back(later: dict[str, Any], retained: bool,
                                                shown: int) -> None:
    view = HallView(P)
    view.receive(f"{P}/t1/state", state_bytes(seq=9, at=iso(NOW)), NOW)
    view.receive(f"{P}/t1/state", state_bytes(left_ms=1, **later), NOW + 10, retained)
    assert view.card("t1")["state"]["seq"] == shown


def test_a_poisoned_position_gives_way_to_live_states(hall: Hall) -> None:
    future = "2999-01-01T00:00:00.000Z"
    hall.send("state", state_bytes(seq=999_999_999, at=future), NOW)      # an outlier seq
    hall.send("state", state_bytes(seq=1, journal="match-x.jsonl", at=future), NOW)  # journal
    for i in range(3):                                      # the honest ones, live
        hall.send("state", state_bytes(seq=6 + i), NOW + 10_000 * (i + 1))
    assert hall.card()["state"]["seq"] == 8 and hall.card()["state"]["journal"] == "match-1.jsonl"
    hall.send("state", state_bytes(seq=9), NOW + 40_000)
    assert hall.card()["state"]["seq"] == 9


# --- alerts --------------------------------------------------------------------------------------

def test_an_alert_storm_is_capped_and_can_be_marked_seen(hall: Hall) -> None:
    flags = [{"kind": "flag_fell", "side": "left"}] * 20
    for seq in range(2, 5002):                              # 100 000 flags
        hall.send("events", event_bytes(seq, *flags), NOW + seq)
    card = hall.card()
    alerts = [n for n in card["needs"] if n["key"]]
    assert len(alerts) == ALERTS_KEPT
    assert card["alerts_dropped"] == 100_000 + 2 - ALERTS_KEPT     # and the two from before
    assert card["events"] == 5001
    size = len(strict(card))
    assert size < 8_000, size                               # was 7.3 MB with every page
    assert hall.view.dismiss_all(HOSTILE) == 100_002
    card = hall.card()
    assert [n for n in card["needs"] if n["key"]] == [] and card["alerts_dropped"] == 0
    assert hall.view.dismiss_all(HOSTILE) == 0 and hall.view.dismiss_all("table-9") == 0


def test_the_cap_drops_the_least_urgent_first() -> None:
    view = HallView(P)
    view.receive(f"{P}/t1/events", event_bytes(1, {"kind": "flag_fell", "side": "left"}), NOW)
    for n in range(ALERTS_KEPT + 10):
        view.receive(f"{P}/t1/notice", json.dumps({"ok": False, "error": f"no {n}"}).encode(),
                     NOW)
    texts = [n["text"] for n in view.card("t1")["needs"]]
    assert texts[0] == "flag fell: left"
    assert texts[-1] == f"match refused: no {ALERTS_KEPT + 9}"     # the newest kept
    assert "match refused: no 10" not in texts                    # the oldest dropped
    assert view.card("t1")["alerts_dropped"] == 11


@pytest.mark.parametrize("effect, text", [
    ({"kind": "refused", "what": "the arbiter's PIN", "reason": "pin_wrong",
      "why": "wrong PIN (1 of 3 before a lockout)"},
     "arbiter PIN failed at the panels: wrong PIN (1 of 3 before a lockout)"),
    ({"kind": "refused", "what": "the arbiter's PIN", "reason": "pin_timeout",
      "why": "no PIN within 30 s; the chord is locked for 5:00"},
     "arbiter PIN failed at the panels: no PIN within 30 s; the chord is locked for 5:00"),
    ({"kind": "refused", "reason": "pin_timeout"},
     "arbiter PIN failed at the panels: no PIN in time"),
    ({"kind": "shown", "text": "arbiter chord locked for 4:10", "reason": "chord_locked"},
     "arbiter chord tried while locked after failed PINs: arbiter chord locked for 4:10"),
])
def test_a_failed_pin_at_the_panels_is_an_alert(effect: dict[str, Any], text: str) -> None:
    view = HallView(P)
    assert view.receive(f"{P}/t1/events", event_bytes(7, effect), NOW) == "t1"
    [need] = view.card("t1")["needs"]
    assert (need["kind"], need["text"]) == ("pin", text)
    assert view.card("t1")["urgency"] == 1


def test_other_refusals_are_no_pin_alert() -> None:
    view = HallView(P)
    view.receive(f"{P}/t1/events", event_bytes(7, {"kind": "refused", "reason": "no_break"},
                                                {"kind": "shown", "reason": "pin_dot"}), NOW)
    assert view.card("t1")["needs"] == []


# --- memory --------------------------------------------------------------------------------------

def _flood(hall: Hall, count: int, per_journal: int) -> None:
    template = b'{"journal":"flood-%d.jsonl","seq":%d,"at":"x","effects":[{"kind":"turn_ended"}]}'
    for n in range(count):
        hall.send("events", template % (n // per_journal, n % per_journal + 1), NOW)


@pytest.mark.parametrize("count, per_journal", [(100_000, 100_000), (100_000, 10),
                                                pytest.param(1_000_000, 50_000,
                                                             marks=pytest.mark.slow)])
def test_a_flood_of_events_keeps_the_de_duplication_bounded(hall: Hall, count: int,
                                                            per_journal: int) -> None:
    _flood(hall, count, per_journal)
    view = hall.view.table(HOSTILE)
    assert view.events == len(view.seen) == count + 1
    assert len(view.seen.journals) <= JOURNALS_KEPT
    assert view.seen.size() <= JOURNALS_KEPT * SEQ_WINDOW
    held = sum(sys.getsizeof(w.mask) for w in view.seen.journals.values())
    assert held <= JOURNALS_KEPT * (SEQ_WINDOW // 8 + 128), held
    assert len(view.recent) <= 8 and len(view.replies) <= 20
    # a resend from an earlier position is still a duplicate
    last = (count - 1) % per_journal + 1
    hall.send("events", event_bytes(last, journal=f"flood-{(count - 1) // per_journal}.jsonl"))
    assert view.duplicates == 1


def test_a_seq_far_ahead_does_not_hide_the_honest_events(hall: Hall) -> None:
    hall.send("events", event_bytes(999_999_999, journal="match-1.jsonl"))
    for seq in (2, 3, 4):
        hall.send("events", event_bytes(seq, {"kind": "flag_fell", "side": "right"}))
    hall.send("events", event_bytes(5, {"kind": "flag_fell", "side": "right"}))
    card = hall.card()
    assert card["recent"][0]["seq"] == 5 and card["events"] == 4


def test_the_seen_events_answer_as_a_set() -> None:
    view = HallView(P)
    for seq in (1, 2, 5):
        view.receive(f"{P}/t1/events", event_bytes(seq, journal="j"), NOW)
    seen = view.table("t1").seen
    assert ("j", 5) in seen and ("j", 3) not in seen and ("k", 1) not in seen
    assert set(seen) == {("j", 1), ("j", 2), ("j", 5)} and len(seen) == 3
    assert {("j", 1), ("j", 5)} <= seen and {("j", 1), ("j", 3)} - seen == {("j", 3)}


# --- anything at all ------------------------------------------------------------------------------

def _json_ish() -> st.SearchStrategy[Any]:
    scalars = st.one_of(st.none(), st.booleans(), st.integers(-2**70, 2**70),
                        st.floats(allow_nan=True, allow_infinity=True),
                        st.text(max_size=30), st.sampled_from(["left", "right", "running", "j"]))
    return st.recursive(scalars, lambda inner: st.one_of(
        st.lists(inner, max_size=5),
        st.dictionaries(st.sampled_from(["phase", "score", "left", "right", "seq", "journal",
                                         "effects", "kind", "side", "ok", "reason", "at",
                                         "clock", "reserve_ms", "players", "cube", "value"]),
                        inner, max_size=6)), max_leaves=30)


def _mutated_state() -> st.SearchStrategy[bytes]:
    base = clock_state(HOSTILE, at=iso(NOW))
    keys = sorted(base)
    return st.builds(lambda key, value: json.dumps({**base, key: value}).encode(),
                     st.sampled_from(keys), _json_ish())


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(messages=st.lists(st.tuples(
    st.sampled_from(["state", "events", "notice", "cmd/reply", "online"]),
    st.one_of(_json_ish().map(lambda v: json.dumps(v).encode()), _mutated_state(),
              st.binary(max_size=40))), min_size=1, max_size=8),
    retained=st.booleans())
def test_whatever_a_table_sends_every_card_is_json(messages: list[tuple[str, bytes]],
                                                   retained: bool) -> None:
    view = HallView(P)
    view.receive(f"{P}/{HONEST}/state", state_bytes(HONEST, at=iso(NOW)), NOW)
    honest = strict(view.card(HONEST))
    for what, payload in messages:
        try:
            view.receive(f"{P}/{HOSTILE}/{what}", payload, NOW, retained)
        except ValueError:
            pass
        card = view.card(HOSTILE)
        text = strict(card)                              # raises on NaN or Infinity
        assert all(not isinstance(v, float) or math.isfinite(v)
                   for v in _leaves(loads_strict(text)))
    assert strict(view.card(HONEST)) == honest


def _leaves(value: Any) -> Iterator[Any]:
    if isinstance(value, dict):
        for v in value.values():
            yield from _leaves(v)
    elif isinstance(value, list):
        for v in value:
            yield from _leaves(v)
    else:
        yield value


def test_parsing_a_big_payload_is_refused_before_it_is_parsed() -> None:
    view = HallView(P)
    payload = b'{"phase": "running", "x": "' + b"a" * 50_000_000 + b'"}'
    started = time.perf_counter()
    with pytest.raises(Rejected, match="more than"):
        view.receive(f"{P}/t1/state", payload, NOW)
    assert time.perf_counter() - started < 0.05


# --- the real hall, a real broker -----------------------------------------------------------------

def _cards_text(hall: RunningHall) -> bytes:
    with urllib.request.urlopen(hall.base + "/api/cards", timeout=20) as response:
        return bytes(response.read())


def _nan_state_met(hall: RunningHall, hostile: Any, honest_card: str | None) -> str:
    """Table-1's NaN state (published the first time) refused, /api/cards strict JSON with
    table-2's card as it was (the first time: as it is now); table-2's card."""
    view = hall.hall.view
    hall.wait(lambda: view.table(HONEST).state is not None
              and (view.table(HOSTILE).state is not None or view.rejected > 0),
              "both tables' retained states")
    if honest_card is None:
        honest_card = strict(hall.hall.card(HONEST))    # as the page gets it
        text = json.dumps(clock_state(HOSTILE, seq=5)).replace('"reserve_ms": 600000',
                                                                '"reserve_ms": NaN')
        assert "NaN" in text
        publish(hostile, f"{P}/{HOSTILE}/state", text, retain=True)
        before_restart = True
    else:
        before_restart = False
    hall.wait(lambda: view.rejected == 1, "the NaN state refused")
    cards = {c["table"]: c for c in loads_strict(_cards_text(hall))["cards"]}
    assert strict(cards[HONEST]) == honest_card
    bad = cards[HOSTILE]
    assert bad["bad_messages"] == 1 and [n["kind"] for n in bad["needs"]] == ["bad"]
    # before the restart the card keeps its last good state; after it, it has none
    assert bad["state"].get("seq") == (4 if before_restart else None)
    return honest_card


def test_a_retained_nan_state_leaves_the_page_json_across_a_restart(
        broker: Broker, tmp_path: Path) -> None:  # noqa: F811
    hostile, honest = table_client(broker, HOSTILE), table_client(broker, HONEST)
    try:
        publish(honest, f"{P}/{HONEST}/online", "1", retain=True)
        publish(honest, f"{P}/{HONEST}/state", clock_state(HONEST, seq=3), retain=True)
        publish(hostile, f"{P}/{HOSTILE}/state", clock_state(HOSTILE, seq=4), retain=True)
        with RunningHall(broker, tmp_path / "archive") as hall:
            honest_card = _nan_state_met(hall, hostile, None)
        with RunningHall(broker, tmp_path / "archive") as hall:     # the hall restarted
            _nan_state_met(hall, hostile, honest_card)
    finally:
        for client in (hostile, honest):
            client.disconnect()
            client.loop_stop()


def test_a_next_match_clears_the_last_matchs_own_alerts() -> None:
    """Issue 19: after a round loads a new match, the card no longer shows the last match's
    "flag fell"; alerts about the table itself (a refused command, a failed PIN) stay."""
    view = HallView("gammonclock")

    def state(journal: str) -> bytes:
        return json.dumps({"phase": "between_games", "journal": journal, "seq": 1,
                           "at": "2026-12-01T10:00:00.000Z"}).encode()

    view.receive("gammonclock/table-1/state", state("match-a.jsonl"), 1000)
    view.receive("gammonclock/table-1/events", json.dumps(
        {"journal": "match-a.jsonl", "seq": 2, "at": "2026-12-01T10:00:01.000Z",
         "effects": [{"kind": "flag_fell", "side": "left"},
                     {"kind": "refused", "reason": "pin_wrong", "why": "wrong PIN"}]}).encode(),
        1001)
    view.receive("gammonclock/table-1/cmd/reply", json.dumps(
        {"id": "x1", "ok": False, "outcome": "refused", "reason": "too much"}).encode(), 1002)
    kinds = sorted(n["kind"] for n in view.card("table-1")["needs"])
    assert kinds == ["flag", "pin", "refused"]
    view.receive("gammonclock/table-1/state", state("match-b.jsonl"), 1003)
    assert sorted(n["kind"] for n in view.card("table-1")["needs"]) == ["pin", "refused"]

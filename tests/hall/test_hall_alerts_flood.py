"""The director's page draws attention; it is not drawn by tables (issue 31, SPEC §14.1: "sounds
and notifications at most once per table and kind per minute, bursts summed up in one"). A
hostile table that sends a `flag_fell` event and flaps its `online` 0/1 every second sounds once
per kind a minute, what it sent in that minute summed up in one announcement (in English and in
Russian, its count in the plural's form); another table's flag in that time sounds at once;
five tables flagging at the same instant are one beep and five notifications; a table's flood of
new alerts is bounded on the page and never makes another table's old alert sound again.

The real hall and Mosquitto, the tables' own MQTT accounts, the page in headless Chromium with
test_hall_alerts_sound's recorders for the browser's Notification and AudioContext. The page's
clock is Playwright's, paused: page time moves only when the test moves it (a minute is a call,
not a wait), and the page has taken each message once its `cards` show it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hall_ru_helpers import shots
from hall_web_helpers import (
    DESKTOP,
    PAGE_WAIT_MS,
    RECORDERS,
    P,
    RunningHall,
    clock_state,
    event,
    notes,
    publish,
    table_client,
)
from mqtt_helpers import Broker

FLAG_HZ = 880            # a flag's first tone (hall_alerts.js FLAG); a PIN's is 660 (TWO)
MINUTE_MS = 60_000


class Director:
    """The director's page with the recorders in, its clock paused, the Sound on."""

    def __init__(self, browser: Any, hall: RunningHall, tables: list[str]) -> None:
        self.context = browser.new_context(viewport=DESKTOP)
        self.context.add_init_script(RECORDERS)
        self.page = self.context.new_page()
        self.page.clock.install()
        self.page.goto(hall.base + "/")
        for name in tables:
            self.page.wait_for_selector(f'.card[data-table="{name}"]', timeout=PAGE_WAIT_MS)
        self.page.click("#alerts-toggle")
        assert self.page.get_attribute("#alerts-toggle", "aria-pressed") == "true"
        now_ms = self.page.evaluate("() => Date.now()")
        self.page.clock.pause_at(now_ms / 1000 + 1)    # page time moves only when told
        self.start = self.now()

    def now(self) -> float:
        """The page's clock (hall_alerts.js's `alertNow`), ms."""
        return float(self.page.evaluate("() => performance.now()"))

    def forward(self, ms: int) -> None:
        self.page.clock.fast_forward(ms)

    def until(self, table: str, condition: str, what: str) -> None:
        """Wait until the page's card of TABLE (`c`, as the hall sent it) holds CONDITION: the
        page has taken (and heard) the message that made it so."""
        try:
            self.page.wait_for_function(
                f"(t) => {{ const c = cards.get(t); return !!c && ({condition}); }}",
                arg=table, timeout=PAGE_WAIT_MS, polling=20)
        except Exception as exc:   # playwright's TimeoutError: say what was awaited
            raise AssertionError(f"the page's {table}: not {what}") from exc

    def alerts(self, table: str, count: int) -> None:
        """TABLE's card counts COUNT alerts (listed with a key, or dropped over the hall's cap)."""
        self.until(table, f"c.needs.filter((n) => n.key).length + c.alerts_dropped === {count}",
                   f"{count} alerts")

    def online(self, table: str, up: bool) -> None:
        self.until(table, f"c.online === {'true' if up else 'false'}",
                   "online" if up else "offline")

    def sounds(self) -> list[dict[str, float]]:
        return list(self.page.evaluate("() => window.__sounds"))

    def notes(self, table: str) -> list[dict[str, Any]]:
        return [n for n in notes(self.page) if n["title"].endswith(f" {table}")]

    def held(self, table: str) -> str | None:
        """What TABLE's card says of its alerts held back (None: nothing)."""
        held = self.page.locator(f'.card[data-table="{table}"] .held')
        return held.inner_text() if held.count() else None

    def shown(self) -> None:
        """Let the page draw what it has taken (its frames run on the paused clock)."""
        self.page.clock.run_for(50)

    def close(self) -> None:
        self.context.close()


class Flapper:
    """A hostile table: each second a `flag_fell` event and its link down and up."""

    def __init__(self, client: Any, director: Director, table: str = "table-1") -> None:
        self.client, self.director, self.table = client, director, table
        self.seq, self.flags = 100, 0

    def flag(self, side: str = "left") -> None:
        self.seq += 1
        self.flags += 1
        publish(self.client, f"{P}/{self.table}/events",
                event(self.seq, {"kind": "flag_fell", "side": side}))
        self.director.alerts(self.table, self.flags)

    def second(self) -> None:
        self.flag()
        for up in (False, True):
            publish(self.client, f"{P}/{self.table}/online", "1" if up else "0", retain=True)
            self.director.online(self.table, up)
        self.director.forward(1000)


def playing(client: Any, table: str) -> None:
    publish(client, f"{P}/{table}/online", "1", retain=True)
    publish(client, f"{P}/{table}/state", clock_state(table, seq=5), retain=True)


@pytest.fixture
def table_2(broker: Broker) -> Iterator[Any]:
    client = table_client(broker, "table-2")
    yield client
    client.disconnect()
    client.loop_stop()


def bodies(got: list[dict[str, Any]]) -> list[str]:
    return [n["body"] for n in got]


def test_a_flapping_table_sounds_once_a_minute_per_kind_and_another_tables_flag_at_once(
        browser: Any, hall: RunningHall, table: Any, table_2: Any, tmp_path: Path) -> None:
    for name, client in (("table-1", table), ("table-2", table_2)):
        playing(client, name)
    director = Director(browser, hall, ["table-1", "table-2"])
    flapper = Flapper(table, director)
    try:
        for second in range(20):
            flapper.second()
            if second == 10:
                # A real flag at another table, in the middle of the flood: at once.
                before = len(director.sounds())
                publish(table_2, f"{P}/table-2/events",
                        event(50, {"kind": "flag_fell", "side": "right"}))
                director.alerts("table-2", 1)
                got = director.notes("table-2")
                assert bodies(got) == ["flag fell: right (Boris)"], got
                sounds = director.sounds()
                assert len(sounds) == before + 1 and sounds[-1]["hz"] == FLAG_HZ, sounds
                assert sounds[-1]["at"] == got[0]["at"] == director.now()
        # 20 s of page time: table-1 was heard once per kind (its flag, its link going down and
        # coming back), in one beep (the page's: alerts of one second); the other 57 are held,
        # and its card says so.
        got = director.notes("table-1")
        assert bodies(got) == ["flag fell: left (Anna)", "offline during the match",
                               "back online"], bodies(got)
        sounds = director.sounds()
        assert [s["hz"] for s in sounds] == [FLAG_HZ, FLAG_HZ], sounds   # table-1's, table-2's
        assert sounds[0]["at"] == director.start
        director.shown()
        director.page.screenshot(path=str(shots(tmp_path) / "director-flood.png"))
        assert director.held("table-1") == \
            "57 alerts held back: one sound a minute for this table"
        assert director.held("table-2") is None

        # The minute over: one announcement sums up what table-1 sent in it.
        director.forward(int(director.start + MINUTE_MS - director.now()))
        got = director.notes("table-1")
        assert bodies(got)[3:] == [
            "57 more alerts in the last minute: flag ×19, offline ×19, back online ×19"], \
            bodies(got)
        assert got[3]["at"] == director.start + MINUTE_MS
        assert [s["hz"] for s in director.sounds()] == [FLAG_HZ] * 3
        assert len(director.notes("table-2")) == 1
        director.shown()
        assert director.held("table-1") is None

        # The flood goes on: the next minute is one announcement again, and nothing between.
        for _ in range(5):
            flapper.second()
        assert len(director.notes("table-1")) == 4 and len(director.sounds()) == 3
        director.forward(int(director.start + 2 * MINUTE_MS - director.now()))
        got = director.notes("table-1")
        assert bodies(got)[4:] == [
            "15 more alerts in the last minute: flag ×5, offline ×5, back online ×5"], \
            bodies(got)
        assert len(director.sounds()) == 4
    finally:
        director.close()


def test_the_summary_in_russian_in_each_plural_form_and_a_single_one_in_its_own_words(
        browser: Any, hall: RunningHall, table: Any, tmp_path: Path) -> None:
    playing(table, "table-1")
    director = Director(browser, hall, ["table-1"])
    director.page.select_option("#language", "ru")
    flapper = Flapper(table, director)
    try:
        summaries = [   # the seconds a minute flaps, and what is said when it is over
            (2, "ещё 3 оповещения за последнюю минуту: "
                "флажок, нет связи, снова на связи"),
            (7, "ещё 21 оповещение за последнюю минуту: "
                "флажок ×7, нет связи ×7, снова на связи ×7"),
            (4, "ещё 12 оповещений за последнюю минуту: "
                "флажок ×4, нет связи ×4, снова на связи ×4"),
        ]
        for minute, (seconds, said) in enumerate(summaries, start=1):
            for _ in range(seconds):
                flapper.second()
            if minute == 1:       # the first of each kind, at once
                got = director.notes("table-1")
                assert bodies(got) == ["упал флажок: Anna (слева)",
                                       "нет связи во время матча", "снова на связи"], got
                assert got[0]["title"] == "Стол table-1"
            if minute == 2:
                director.shown()
                director.page.screenshot(path=str(shots(tmp_path) / "director-flood-ru.png"))
                assert director.held("table-1") == \
                    "21 оповещение отложено: звук этого стола раз в минуту"
            director.forward(int(director.start + minute * MINUTE_MS - director.now()))
            got = director.notes("table-1")
            assert bodies(got)[2 + minute:] == [said], bodies(got)
            assert got[-1]["at"] == director.start + minute * MINUTE_MS
        assert len(director.sounds()) == 1 + 3      # the first three in one beep, 3 sums

        # A quiet minute says nothing; then the first flag sounds at once, and a single one
        # held is said in its own words.
        director.forward(MINUTE_MS)
        assert len(director.notes("table-1")) == 6
        for _ in range(2):
            flapper.flag("right")
            director.forward(1000)
        got = director.notes("table-1")
        assert bodies(got)[6:] == ["упал флажок: Boris (справа)"], bodies(got)
        director.forward(MINUTE_MS)
        got = director.notes("table-1")
        assert bodies(got)[6:] == ["упал флажок: Boris (справа)"] * 2, bodies(got)
        assert len(director.sounds()) == 6
    finally:
        director.close()


def test_five_tables_flagging_at_once_are_five_notifications_and_one_flag_beep(
        browser: Any, hall: RunningHall, broker: Broker, table: Any, table_2: Any) -> None:
    clients = {"table-1": table, "table-2": table_2}
    for name in ("table-3", "table-4", "table-5"):
        broker.add_account(name)
        clients[name] = broker.client(name)
    try:
        for name, client in clients.items():
            playing(client, name)
        director = Director(browser, hall, list(clients))
        # A PIN refused at table-1 (a lesser beep), then five flags at the same instant.
        publish(table, f"{P}/table-1/events", event(40, {"kind": "refused",
                                                         "reason": "pin_wrong"}))
        director.alerts("table-1", 1)
        for name, client in clients.items():
            publish(client, f"{P}/{name}/events", event(41, {"kind": "flag_fell",
                                                             "side": "left"}))
        for name in clients:
            director.alerts(name, 2 if name == "table-1" else 1)
        got = notes(director.page)
        assert sorted((n["title"], n["body"]) for n in got[1:]) == [   # in any order
            (f"Table {name}", "flag fell: left (Anna)") for name in clients], got
        assert [s["hz"] for s in director.sounds()] == [660, FLAG_HZ], director.sounds()
        # A second on, the next table's first alert beeps again.
        director.forward(1000)
        publish(table_2, f"{P}/table-2/events", event(42, {"kind": "refused",
                                                           "reason": "pin_timeout"}))
        director.alerts("table-2", 2)
        assert [s["hz"] for s in director.sounds()] == [660, FLAG_HZ, 660]
        director.close()
    finally:
        for name in ("table-3", "table-4", "table-5"):
            clients[name].disconnect()
            clients[name].loop_stop()


def test_a_flood_of_new_alerts_is_bounded_on_the_page_and_wakes_no_other_tables_alert(
        browser: Any, hall: RunningHall, table: Any, table_2: Any) -> None:
    for name, client in (("table-1", table), ("table-2", table_2)):
        playing(client, name)
    director = Director(browser, hall, ["table-1", "table-2"])
    try:
        publish(table_2, f"{P}/table-2/events", event(7, {"kind": "refused",
                                                          "reason": "pin_wrong"}))
        director.alerts("table-2", 1)
        assert len(director.notes("table-2")) == 1
        # 110 events of 50 new flags each: 5 500 alerts, each seen by the page.
        flags = [{"kind": "flag_fell", "side": "left"}] * 50
        for n in range(1, 111):
            publish(table, f"{P}/table-1/events", event(100 + n, *flags))
            director.alerts("table-1", 50 * n)
        card = hall.card("table-1")
        assert len([n for n in card["needs"] if n["key"]]) == 50     # the hall's cap
        assert card["alerts_dropped"] == 5_450
        director.shown()
        shown = director.page.locator('.card[data-table="table-1"] .need')
        assert shown.count() == 4 + 1                 # four, and "and 5 496 more"
        assert shown.last.inner_text() == "and 5496 more"

        # A minute on, table-2's card changes: its PIN alert, still listed, is not news.
        director.forward(MINUTE_MS)
        publish(table_2, f"{P}/table-2/events", event(8, {"kind": "turn_ended"}))
        director.until("table-2", "c.recent.some((e) => e.seq === 8)", "its turn")
        assert len(director.notes("table-2")) == 1, director.notes("table-2")
        # Table-1's minute: its first, then the rest summed; what the page keeps is bounded.
        got = director.notes("table-1")
        assert bodies(got) == ["flag fell: left (Anna)",
                               "5499 more alerts in the last minute: flag ×5499"], bodies(got)
        heard = dict(director.page.evaluate("() => [...heard].map(([t, ids]) => [t, ids.size])"))
        assert heard["table-1"] <= 200 and heard["table-2"] == 1, heard
    finally:
        director.close()

"""The rest of the alerts the director can hear (issue 23), on the director's page in a real
headless Chromium against the real hall and Mosquitto: a match the table refused, a player late
from a break, a table gone offline in a match (and back online), a running clock under the
page's low-time mark ("warn under M:SS", this browser's). Each sounds and notifies once per
occurrence, never for what was there when the page opened, never with the Sound switch off, in
the page's language; per table and kind at most once a minute (issue 31: what comes within the
minute is said when it is over, test_hall_alerts_flood.py). The browser's Notification and
AudioContext are test_hall_alerts_sound's recorders, the page's clock Playwright's (a minute is
a call, not a wait). A "sentinel" (an event with no alert: a turn ended) shows that the page has
taken every message before it once its card counts it, so "nothing more" is checked without
waiting a while."""

from __future__ import annotations

from pathlib import Path
from typing import Any

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
)

MINUTE_MS = 60_000


class Director:
    """The director's page with the recorders in and the page's clock installed, and the
    table's publisher."""

    def __init__(self, browser: Any, hall: RunningHall, table: Any) -> None:
        self.context = browser.new_context(viewport=DESKTOP)
        self.context.add_init_script(RECORDERS)
        self.page = self.context.new_page()
        self.page.clock.install()
        self.hall, self.table, self.seq = hall, table, 100

    def open(self) -> None:
        self.page.goto(self.hall.base + "/")
        self.page.wait_for_selector('.card[data-table="table-1"]', timeout=PAGE_WAIT_MS)

    def sound_on(self) -> None:
        self.page.click("#alerts-toggle")
        assert self.page.get_attribute("#alerts-toggle", "aria-pressed") == "true"

    def state(self, **fields: Any) -> None:
        self.seq += 1
        publish(self.table, f"{P}/table-1/state", clock_state(seq=self.seq, **fields), retain=True)

    def online(self, up: bool) -> None:
        publish(self.table, f"{P}/table-1/online", "1" if up else "0", retain=True)

    def later(self, ms: int = MINUTE_MS + 1000) -> None:
        """The page's clock moved on (by default a minute: the table's every kind may sound
        again, and what was held is said)."""
        self.page.clock.fast_forward(ms)

    def wait(self, count: int) -> list[dict[str, str]]:
        self.page.wait_for_function(f"() => window.__notes.length >= {count}", timeout=PAGE_WAIT_MS)
        return notes(self.page)

    def sentinel(self) -> list[dict[str, str]]:
        """A turn ended (no alert): the page has taken everything before it once its card
        counts it; the notes then."""
        self.seq += 1
        publish(self.table, f"{P}/table-1/events", event(self.seq, {"kind": "turn_ended"}))
        self.page.wait_for_function(
            "(seq) => { const c = cards.get('table-1');"
            " return !!c && (c.recent || []).some((e) => e.seq === seq); }",
            arg=self.seq, timeout=PAGE_WAIT_MS)
        return notes(self.page)

    def close(self) -> None:
        self.context.close()


def bodies(got: list[dict[str, str]]) -> list[str]:
    return [n["body"] for n in got]


def test_a_refused_match_and_a_late_return_from_a_break_sound_once_each(
        browser: Any, hall: RunningHall, table: Any) -> None:  # noqa: F811
    director = Director(browser, hall, table)
    director.online(True)
    director.state()
    # There when the page opens: a refused match (an alert) and a break overrun (the state and
    # its event): not news.
    publish(table, f"{P}/table-1/notice", {"ok": False, "error": "old refusal"})
    director.state(phase="break", running="right", game=2)
    publish(table, f"{P}/table-1/events", event(50, {"kind": "break_overrun", "side": "right"}))
    try:
        director.open()
        director.page.wait_for_selector('.need[data-kind="notice"]', timeout=PAGE_WAIT_MS)
        director.page.wait_for_selector('.need[data-kind="overrun"]', timeout=PAGE_WAIT_MS)
        director.sound_on()
        director.state(game=3)                   # the break is over: play on
        publish(table, f"{P}/table-1/notice", {"ok": False, "error": "the table is busy"})
        got = director.wait(1)
        assert got[0]["title"] == "Table table-1" and got[0]["body"] == \
            "match refused: the table is busy", got
        director.later(2000)                     # the page's one beep a second
        # The next break runs over: the state says so, then the event; one sound, one note.
        director.state(phase="break", running="left", game=4, left_ms=500_000)
        got = director.wait(2)
        assert got[1]["body"] == "late from the break: left (Anna)", got
        publish(table, f"{P}/table-1/events", event(60, {"kind": "break_overrun",
                                                         "side": "left"}))
        director.state(phase="break", running="left", game=4, left_ms=490_000)
        director.page.wait_for_selector('.need[data-kind="overrun"]',
                                        timeout=PAGE_WAIT_MS)
        got = director.sentinel()
        assert len(got) == 2 and director.page.evaluate("() => window.__beeps") == 2 * 2, got
        assert len({n["tag"] for n in got}) == 2, got
        # A minute on, in Russian, a late return noticed by its event first (the state follows).
        director.later()
        director.page.select_option("#language", "ru")
        director.state(game=5)
        publish(table, f"{P}/table-1/events", event(70, {"kind": "break_overrun",
                                                         "side": "right"}))
        got = director.wait(3)
        director.state(phase="break", running="right", game=5, right_ms=400_000)
        got = director.sentinel()
        assert len(got) == 3, bodies(got)
        assert got[2]["title"] == "Стол table-1"
        assert got[2]["body"] == "перерыв превышен: Boris (справа)", bodies(got)
    finally:
        director.close()


def test_a_table_offline_in_a_match_sounds_once_and_back_online_once(
        browser: Any, hall: RunningHall, table: Any) -> None:  # noqa: F811
    director = Director(browser, hall, table)
    director.online(True)
    director.state()
    try:
        director.open()
        # Sound off: the page shows it, says nothing.
        director.online(False)
        director.page.wait_for_selector('.need[data-kind="offline"]', timeout=PAGE_WAIT_MS)
        director.online(True)
        director.page.wait_for_selector('.need[data-kind="offline"]', state="detached",
                                        timeout=PAGE_WAIT_MS)
        assert notes(director.page) == [] and director.page.evaluate("() => window.__beeps") == 0

        director.sound_on()
        director.online(False)
        got = director.wait(1)
        assert bodies(got) == ["offline during the match"], got
        director.online(False)                   # said again: the same occurrence
        director.online(True)
        got = director.wait(2)
        assert bodies(got)[1] == "back online", got
        director.online(True)
        got = director.sentinel()
        assert len(got) == 2, bodies(got)

        # Between rounds (the match over, or idle): offline is no news, nor is coming back.
        director.state(phase="match_over", running=None, winner="left")
        director.online(False)
        director.page.wait_for_selector('.need[data-kind="offline"]', timeout=PAGE_WAIT_MS)
        director.online(True)
        got = director.sentinel()
        assert len(got) == 2, bodies(got)

        # Offline when the page opens: not news, nor its return.
        director.state()
        director.online(False)
        director.page.reload()
        director.page.wait_for_selector('.need[data-kind="offline"]', timeout=PAGE_WAIT_MS)
        director.page.select_option("#language", "ru")
        director.online(True)
        got = director.sentinel()
        assert len(got) == 0, bodies(got)
        director.online(False)
        director.wait(1)
        director.online(True)
        got = director.wait(2)
        assert bodies(got) == ["нет связи во время матча", "снова на связи"], bodies(got)
        assert len({n["tag"] for n in got}) == 2, got        # each its own notification
    finally:
        director.close()


def test_low_time_sounds_once_per_game_and_side_under_the_pages_mark(
        browser: Any, hall: RunningHall, table: Any, tmp_path: Path) -> None:  # noqa: F811
    director = Director(browser, hall, table)
    page = director.page
    director.online(True)
    director.state(left_ms=95_000, right_ms=50_000)    # right under 1:00, but not running
    try:
        director.open()
        assert page.input_value("#low-time") == "1:00"                  # the default mark
        director.sound_on()
        # A bad mark is said so and changes nothing; a good one is remembered.
        for bad in ["abc", "1:60", "31:00", "-1", "1:5"]:
            page.fill("#low-time", bad)
            page.dispatch_event("#low-time", "change")
            assert page.get_attribute("#low-time", "aria-invalid") == "true", bad
            assert page.evaluate("() => localStorage.getItem('gammonclock.hall.low_time')") \
                is None, bad
        page.select_option("#language", "ru")
        page.screenshot(path=str(tmp_path / "director-low-time-bad-ru.png"))
        assert "М:СС" in (page.get_attribute("#low-time", "title") or "")
        page.select_option("#language", "en")
        page.fill("#low-time", "1:20")
        page.dispatch_event("#low-time", "change")
        assert page.get_attribute("#low-time", "aria-invalid") == "false"
        assert page.evaluate("() => localStorage.getItem('gammonclock.hall.low_time')") == "1:20"
        page.screenshot(path=str(tmp_path / "director-low-time.png"))

        page.clock.fast_forward("00:10")          # left: 1:25 left, over the mark
        got = director.sentinel()
        assert len(got) == 0, bodies(got)
        page.clock.fast_forward("00:12")          # 1:13: under it
        got = director.wait(1)
        assert got[0]["body"].startswith("low time: left (Anna), 1:1"), bodies(got)
        page.clock.fast_forward("00:20")          # still under, the same game: once
        page.clock.fast_forward("00:20")
        got = director.sentinel()
        assert len(got) == 1, bodies(got)
        # A minute on, the other side's turn, under the mark: its own once.
        director.later()
        director.state(running="right", left_ms=40_000, right_ms=50_000)
        got = director.wait(2)
        assert got[1]["body"].startswith("low time: right (Boris), 0:"), bodies(got)
        # The next game, a minute on, in Russian: again.
        director.later()
        page.select_option("#language", "ru")
        director.state(game=3, running="left", left_ms=30_000, right_ms=50_000)
        got = director.wait(3)
        assert got[2]["body"].startswith("мало времени: Anna (слева), осталось 0:"), bodies(got)

        # Remembered; under the mark when the page opens is not news.
        page.reload()
        page.wait_for_selector('.card[data-table="table-1"]', timeout=PAGE_WAIT_MS)
        assert page.input_value("#low-time") == "1:20"
        page.clock.fast_forward("00:05")
        got = director.sentinel()
        assert len(got) == 0, bodies(got)
        # 0: off.
        page.fill("#low-time", "0")
        page.dispatch_event("#low-time", "change")
        director.state(game=4, running="right", left_ms=30_000, right_ms=20_000)
        page.clock.fast_forward("00:05")
        got = director.sentinel()
        assert len(got) == 0, bodies(got)
        # Sound off: nothing, with the mark on.
        page.fill("#low-time", "1:00")
        page.dispatch_event("#low-time", "change")
        page.click("#alerts-toggle")
        director.state(game=5, running="left", left_ms=30_000, right_ms=20_000)
        page.wait_for_function("() => document.querySelector('.card[data-table=\"table-1\"]')"
                               ".textContent.includes('0:')", timeout=PAGE_WAIT_MS)
        page.clock.fast_forward("00:05")
        got = director.sentinel()
        assert len(got) == 0, bodies(got)
    finally:
        director.close()

"""Alerts the director can hear, on the director's page in a real headless Chromium: off until
the "Sound" switch is pressed (and then remembered by the browser), a flag, a PIN failure and a
challenge each beep (WebAudio) and raise a browser notification once, in the page's language;
alerts already there when the page opens are not news. The browser's Notification and
AudioContext are replaced by recorders (a headless browser has neither a speaker nor a
notification centre); everything else is the real page on the real hall and broker. The page's
clock is Playwright's: the alerts come two seconds apart (one beep covers a second's alerts,
test_hall_alerts_flood.py)."""

from __future__ import annotations

import json
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


def test_alerts_sound_only_once_switched_on_and_the_switch_is_remembered(
        browser: Any, hall: RunningHall, table: Any, tmp_path: Path) -> None:  # noqa: F811
    publish(table, f"{P}/table-1/online", "1", retain=True)
    publish(table, f"{P}/table-1/state", clock_state(seq=5), retain=True)
    context = browser.new_context(viewport=DESKTOP)
    context.add_init_script(RECORDERS)
    page = context.new_page()
    page.clock.install()
    try:
        page.goto(hall.base + "/")
        page.wait_for_selector('.card[data-table="table-1"]', timeout=PAGE_WAIT_MS)
        assert page.get_attribute("#alerts-toggle", "aria-pressed") == "false"   # off at first
        publish(table, f"{P}/table-1/events", event(6, {"kind": "refused", "reason": "pin_wrong"}))
        page.wait_for_selector('.need[data-kind="pin"]', timeout=PAGE_WAIT_MS)
        assert notes(page) == [] and page.evaluate("() => window.__beeps") == 0

        page.click("#alerts-toggle")
        assert page.get_attribute("#alerts-toggle", "aria-pressed") == "true"
        assert page.evaluate("() => localStorage.getItem('gammonclock.hall.alerts')") == "on"
        page.screenshot(path=str(tmp_path / "director-sound-on.png"))
        # A challenge decided, then the flag: each once, with its words.
        publish(table, f"{P}/table-1/events", event(7, {"kind": "challenge_decided",
                                                        "side": "right", "upheld": True}))
        page.wait_for_function("() => window.__notes.length >= 1", timeout=PAGE_WAIT_MS)
        page.clock.fast_forward(2000)
        publish(table, f"{P}/table-1/state", clock_state(seq=8, phase="match_over",
                                                         running=None, flag="left", left_ms=0))
        page.wait_for_function("() => window.__notes.length >= 2", timeout=PAGE_WAIT_MS)
        page.clock.fast_forward(2000)
        publish(table, f"{P}/table-1/events", event(9, {"kind": "refused",
                                                        "reason": "pin_timeout"}))
        page.wait_for_function("() => window.__notes.length >= 3", timeout=PAGE_WAIT_MS)
        publish(table, f"{P}/table-1/state", clock_state(seq=10, phase="match_over",
                                                         running=None, flag="left", left_ms=0))
        page.wait_for_selector('.need[data-kind="flag"]', timeout=PAGE_WAIT_MS)
        got = notes(page)
        assert [n["title"] for n in got] == ["Table table-1"] * 3, got
        assert "challenge" in got[0]["body"] and "Boris" in got[0]["body"]
        assert "Anna" in got[1]["body"]                                 # the flag, once
        assert "PIN" in got[2]["body"]
        assert page.evaluate("() => window.__beeps") >= 3 * 2
        assert page.evaluate("() => window.__asked") == 0              # already granted

        page.reload()                                # remembered; old alerts are not news
        page.wait_for_selector('.card[data-table="table-1"]', timeout=PAGE_WAIT_MS)
        assert page.get_attribute("#alerts-toggle", "aria-pressed") == "true"
        page.select_option("#language", "ru")
        publish(table, f"{P}/table-1/events", event(11, {"kind": "refused",
                                                         "reason": "pin_wrong"}))
        page.wait_for_function("() => window.__notes.length >= 1", timeout=PAGE_WAIT_MS)
        again = notes(page)
        assert len(again) == 1 and again[0]["title"] == "Стол table-1", again
        assert "ПИН" in again[0]["body"]
        assert json.dumps(again, ensure_ascii=False).count("Стол") == 1
    finally:
        context.close()

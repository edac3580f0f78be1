"""Every wait of a test on a page in Chromium is the one constant (`hall_web_helpers.
PAGE_WAIT_MS`, 20 s): a wait written in milliseconds of its own (`timeout=5000`) timed out once
on a loaded 2-core machine (issue 32). A wait returns as soon as its condition holds, so a long
bound costs nothing when the page is quick."""

from __future__ import annotations

import re
from pathlib import Path

from hall_web_helpers import PAGE_WAIT_MS

TESTS = Path(__file__).resolve().parents[1]
# A Playwright call's own timeout in ms (seconds elsewhere are short numbers, or named)
OWN_MS = re.compile(r"timeout=([0-9][0-9_]{2,})\b")


def test_the_page_wait_is_long_enough_for_a_loaded_machine() -> None:
    assert PAGE_WAIT_MS >= 20_000


def test_no_page_wait_has_a_bound_of_its_own() -> None:
    found = []
    for path in sorted(TESTS.rglob("*.py")):
        if path == Path(__file__).resolve():
            continue
        text = path.read_text(encoding="utf-8")
        if "playwright" not in text and "wait_for_" not in text:
            continue
        for number, line in enumerate(text.splitlines(), start=1):
            if OWN_MS.search(line):
                found.append(f"{path.relative_to(TESTS)}:{number}: {line.strip()}")
    assert found == [], "a page wait with its own bound (use PAGE_WAIT_MS):\n" + "\n".join(found)

"""The fixtures of the hall's tests (the broker is tests/conftest.py's): headless Chromium
(`browser`), the hall with its page (`hall`; `hall_ru`, `hall_en` in a language), a table's own
client (`table`) and the spectators' Mosquitto (`public`)."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hall_ru_helpers import language_hall
from hall_web_helpers import RunningHall, table_client
from mqtt_helpers import Broker, start_broker
from public_helpers import PublicBroker

CHROMIUM = "/usr/bin/chromium"
EVIL = "evil.example"              # Chromium resolves it to the hall's address (DNS rebinding)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """Debian's headless Chromium driven by Playwright, one per test module (its own browser
    downloads are never used); it resolves EVIL to 127.0.0.1 (test_hall_page.py's DNS rebinding)."""
    found = shutil.which("chromium") or (CHROMIUM if os.path.exists(CHROMIUM) else None)
    if found is None:
        pytest.fail("chromium is not installed: run scripts/test-deps", pytrace=False)
    from playwright.sync_api import sync_playwright
    with sync_playwright() as p:
        launched = p.chromium.launch(executable_path=found, args=[
            "--no-sandbox", f"--host-resolver-rules=MAP {EVIL} 127.0.0.1"])
        yield launched
        launched.close()


@pytest.fixture
def hall(broker: Broker, tmp_path: Path) -> Iterator[RunningHall]:
    with RunningHall(broker, tmp_path / "archive") as running:
        yield running


@pytest.fixture
def table(broker: Broker) -> Iterator[Any]:
    client = table_client(broker, "table-1")
    yield client
    client.disconnect()
    client.loop_stop()


@pytest.fixture
def public(tmp_path: Path) -> Iterator[PublicBroker]:
    running = PublicBroker(tmp_path / "public")
    running.start()
    yield running
    running.stop()


@pytest.fixture
def hall_ru(broker: Broker, tmp_path: Path) -> Iterator[RunningHall]:
    with language_hall(broker, tmp_path, "ru") as running:
        yield running


@pytest.fixture
def hall_en(broker: Broker, tmp_path: Path) -> Iterator[RunningHall]:
    with language_hall(broker, tmp_path, "en") as running:
        yield running


@pytest.fixture
def venue_broker(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[Broker]:
    """Mosquitto (the shipped ACL) with an account for each table of the module's
    `VENUE_TABLES`: the tables of its real clocks on the venue (venue_helpers)."""
    running = start_broker(tmp_path / "broker", tables=request.module.VENUE_TABLES)
    try:
        yield running
    finally:
        running.stop()

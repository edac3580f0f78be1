"""`gammonclock hall demo`: the hall on one machine in one command (issue 19 item 7).

The whole demo runs as a person runs it (the installed command in its own process group, Ctrl-C
to the group as a terminal sends it): a private Mosquitto, real clocks on mock pins played by
robots, the page; the page is read over HTTP and in Chromium."""

from __future__ import annotations

import argparse
import json
import os
import queue
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from gammonclock.hall.pairings import parse_pairings
from gammonclock.sim import hall_demo
from hall_web_helpers import PAGE_WAIT_MS

ROOT = Path(__file__).resolve().parents[2]
COMMAND = Path(sys.executable).with_name("gammonclock")
CHROMIUM = "/usr/bin/chromium"


def args(**given: Any) -> argparse.Namespace:
    return argparse.Namespace(**{"tables": 2, "http": None, "folder": None, **given})


def test_the_printed_round_is_one_the_page_takes_whole() -> None:
    tables = hall_demo.demo_tables(6)
    rows = parse_pairings(hall_demo.next_round_csv(tables), known={t.name for t in tables})
    assert [r.error for r in rows] == [None] * 6
    assert [r.table for r in rows] == [t.name for t in tables]
    longgammon = [t.name for t in tables if t.discipline == "longgammon"]
    assert longgammon and all('discipline = "longgammon"' in (r.toml or "")
                              for r in rows if r.table in longgammon)


def test_the_broker_has_the_shipped_settings_and_listens_on_loopback_only(tmp_path: Path
                                                                          ) -> None:
    text = hall_demo.PrivateBroker(tmp_path, ["hall"]).config_text()
    shipped = (ROOT / "hall" / "mosquitto.conf").read_text(encoding="utf-8")
    for option in hall_demo.SHIPPED_OPTIONS:
        line = next(x for x in shipped.splitlines() if x.startswith(option + " "))
        assert line in text.splitlines()
    assert re.search(r"^listener \d+ 127\.0\.0\.1$", text, re.M)
    assert "allow_anonymous false" in text


def test_the_shipped_broker_files_are_in_the_package_and_in_hall() -> None:
    assert hall_demo.shipped("acl") == (ROOT / "hall" / "acl").read_text(encoding="utf-8")
    assert "pattern write gammonclock/%u/state" in hall_demo.shipped("acl")
    for name in ("public.conf", "public-hall.acl", "public-spectators.acl", "public.nft"):
        assert hall_demo.shipped(name) == (ROOT / "hall" / name).read_text(encoding="utf-8")


def test_the_spectators_broker_is_the_shipped_one_on_loopback(tmp_path: Path) -> None:
    """The shipped public.conf line for line with its two ACLs (the WebSocket listener's own,
    read-only); the WebSocket listener bound to `lo` (Mosquitto 2.0.11 binds a WebSocket
    listener given 127.0.0.1 to every address)."""
    public = hall_demo.PublicDemoBroker(tmp_path)
    lines = public.config_text().splitlines()
    assert f"listener {public.websocket_port} lo" in lines
    assert f"listener {public.port} 127.0.0.1" in lines
    for name in ("public-hall.acl", "public-spectators.acl"):
        assert f"acl_file {tmp_path / name}" in lines
        assert (tmp_path / name).read_text(encoding="utf-8") == hall_demo.shipped(name)


@pytest.mark.parametrize("given, said", [
    ({"tables": 0}, "--tables 0: give 1 to 24"),
    ({"tables": 25}, "--tables 25: give 1 to 24"),
    ({"http": "0.0.0.0:8080"}, "listens on loopback only"),
    ({"http": "8080"}, "is not HOST:PORT"),
])
def test_bad_arguments_are_refused_before_anything_starts(
        given: dict[str, Any], said: str, tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "demo"
    assert hall_demo.demo(args(folder=folder, **given)) == 2
    assert said in capsys.readouterr().err
    assert not (folder / "broker" / "mosquitto.conf").exists()


def test_without_mosquitto_it_says_how_to_get_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(hall_demo, "SEARCH_PATH", str(tmp_path))
    assert hall_demo.demo(args(folder=tmp_path / "demo")) == 2
    err = capsys.readouterr().err
    assert "mosquitto_passwd not found" in err and "apt-get install -y mosquitto" in err


def cards(url: str) -> list[dict[str, Any]]:
    with urllib.request.urlopen(url + "api/cards", timeout=5) as response:
        data = json.load(response)
    return list(data["cards"] if isinstance(data, dict) else data)


def wait_for(condition: Any, what: str, timeout: float) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            found = condition()
        except OSError:
            found = None
        if found:
            return found
        time.sleep(0.3)
    pytest.fail(f"the demo did not {what} within {timeout:g} s")


@pytest.mark.slow
def test_one_command_gives_a_broker_playing_clocks_and_the_page(tmp_path: Path) -> None:
    if shutil.which("mosquitto", path=hall_demo.SEARCH_PATH) is None:
        pytest.fail("mosquitto is not installed: run scripts/test-deps", pytrace=False)
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY")}
    demo = subprocess.Popen([str(COMMAND), "hall", "demo", "--tables", "3"], cwd=tmp_path,
                            env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, start_new_session=True)
    lines: list[str] = []
    try:
        assert demo.stdout is not None
        said_lines: queue.Queue[str] = queue.Queue()
        reader = threading.Thread(target=lambda: [said_lines.put(x) for x in demo.stdout],
                                  daemon=True)      # type: ignore[union-attr]
        reader.start()
        deadline = time.monotonic() + 60
        while not any("the page is http://" in line for line in lines):
            try:
                lines.append(said_lines.get(timeout=max(0.0, deadline - time.monotonic())))
            except queue.Empty:
                pytest.fail("the demo did not print its page's address within 60 s:\n"
                            + "".join(lines))
        said = "".join(lines)
        url = re.search(r"the page is (http://127\.0\.0\.1:\d+/)", said)
        assert url, said
        folder = Path(re.search(r"folder:\s+(\S+)", said).group(1))   # type: ignore[union-attr]
        assert (folder / "round-2.csv").exists() and "Ctrl-C stops it all" in said
        page = url.group(1)

        def moving() -> bool:
            shown = cards(page)
            return len(shown) == 3 and all(
                c.get("online") and (c.get("state") or {}).get("game", 0) >= 1
                and (c.get("state") or {}).get("phase") not in (None, "idle") for c in shown)
        wait_for(moving, "show 3 tables online with their matches", 30)
        # Round 1 is on the hall's record as pushed: its matches are that round's, playing
        # (and counted when they end), not results of no pairing held for the director.
        with urllib.request.urlopen(page + "api/results.json", timeout=5) as response:
            rounds = json.load(response)["rounds"]
        [one] = [r for r in rounds if r["round"] == "1"]
        assert sorted(p["table"] for p in one["playing"]) == ["table-1", "table-2", "table-3"]
        first = {c["table"]: c["state"]["seq"] for c in cards(page)}
        wait_for(lambda: all(c["state"]["seq"] > first[c["table"]] for c in cards(page)),
                 "show every table's robots pressing", 30)

        from playwright.sync_api import sync_playwright
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
            tab = browser.new_page(viewport={"width": 1280, "height": 800})
            tab.goto(page)
            tab.wait_for_selector("text=Ильдар", timeout=PAGE_WAIT_MS)
            shown = tab.inner_text("body")
            tab.screenshot(path=str(tmp_path / "demo-page.png"))
            # The spectators' page, over the demo's own spectators' broker (WebSockets).
            tab.goto(page + "public")
            tab.wait_for_selector('.table[data-view="table-3"]', timeout=PAGE_WAIT_MS)
            spectators = tab.inner_text("#tables")
            tab.screenshot(path=str(tmp_path / "demo-public.png"))
            browser.close()
        for name in ("table-1", "table-3", "Анна", "Борис", "Ильдар"):
            assert name in spectators
        for name in ("table-1", "table-2", "table-3", "Анна", "Борис", "Chen", "Dora"):
            assert name in shown
        broker = subprocess.run(["pgrep", "-f", f"mosquitto -c {folder}"],
                                capture_output=True, text=True).stdout.split()
        assert broker, "the demo's own Mosquitto runs"

        os.killpg(demo.pid, signal.SIGINT)          # Ctrl-C in the terminal: the whole group
        demo.wait(timeout=30)
        reader.join(timeout=10)                     # its output ends with it
        rest = "".join(said_lines.get() for _ in range(said_lines.qsize()))
    finally:
        if demo.poll() is None:
            os.killpg(demo.pid, signal.SIGKILL)
            demo.wait()
    assert demo.returncode == 0, "".join(lines) + rest
    assert "stopping the clocks, the hall and the broker" in rest
    assert "lost the broker" not in rest and "Traceback" not in rest, rest
    assert not folder.exists(), "the temporary folder is removed"
    for pid in broker:
        assert not Path(f"/proc/{pid}").exists() or "zombie" in Path(
            f"/proc/{pid}/status").read_text(), "the demo's Mosquitto stopped with it"

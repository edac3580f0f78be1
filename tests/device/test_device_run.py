"""The device end to end on mock hardware: `build_device` with gpiozero's MockFactory pins and
luma `dummy` panels, driven by real pin edges. A game played through the pins ends where the engine
fed the same edges ends; bounce is debounced; a held cube pauses; the panels show the clock; a
restart recovers the match; and `gammonclock run` starts, journals, stops on SIGTERM and recovers
after SIGKILL."""

from __future__ import annotations

import signal
import subprocess
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import pytest
from PIL import Image, ImageChops

from device_helpers import MOCK_TEXT, gammonclock, handles_sigterm, mock_config_text
from gammonclock.cli.main import main
from gammonclock.core.engine import ButtonEdge
from gammonclock.core.match import Phase
from gammonclock.device.build import build_device
from gammonclock.hardware.drawing import shifted
from gammonclock.hardware.panels import SHIFT_PERIOD_NS, shift_at
from gammonclock.hardware.screens import panel_view, render
from gammonclock.journal.reader import read_journal
from gammonclock.journal.records import JOURNALS_DIR
from gammonclock.journal.replay import replay
from gammonclock.runtime.service import ClockService
from gammonclock.sides import Button, Side
from pin_helpers import FakeClock
from rig_helpers import DOWN, MS, UP, Rig, S, close, direct, journal_of, mock_config

L, R, C = Button.LEFT, Button.RIGHT, Button.CUBE


@pytest.fixture
def clock(device_clock: FakeClock) -> FakeClock:
    """The rig's clock (conftest's `device_clock`), by its short name in these tests."""
    return device_clock


def effect_kinds(path: Path) -> list[str]:
    return [e["kind"] for r in read_journal(path).records if r.kind in ("input", "tick")
            for e in r.data["effects"]]


def same_image(a: Image.Image, b: Image.Image) -> bool:
    return a.size == b.size and ImageChops.difference(a.convert("1"), b.convert("1")).getbbox() \
        is None


# --- a game through the pins ------------------------------------------------------------------

GAME = [
    (1.000, L, DOWN), (1.150, L, UP),         # game 1: right's clock runs
    (15.0, R, DOWN), (15.004, R, UP),         # left's runs (the contact bounces: 4 ms up,
    (15.009, R, DOWN), (15.1, R, UP),         # down again, within the debounce)
    (24.0, L, DOWN), (24.1, L, UP),           # right's
    (30.0, C, DOWN), (30.1, C, UP),           # right doubles: left decides
    (50.0, L, DOWN), (50.1, L, UP),           # left takes: right's runs
    (75.0, R, DOWN), (75.1, R, UP),           # left's
    (80.0, L, DOWN), (80.1, L, UP),           # right's
    (120.0, R, DOWN), (123.0, R, UP),         # right holds: result entry
    (127.0, C, DOWN), (127.1, C, UP),         # the next proposal
    (130.0, L, DOWN), (130.1, L, UP),         # left confirms: game over
    (140.0, R, DOWN), (140.1, R, UP),         # game 2: left's clock runs
]


def test_a_game_through_the_pins_ends_where_the_engine_fed_the_same_edges_ends(open_device):
    rig = open_device()
    rig.play(GAME)
    end = 150 * S
    device_engine = rig.settle(end)
    expected = direct(rig.engine.rules, rig.edges, end)

    assert device_engine.state_json() == expected.state_json()
    assert device_engine.match == expected.match
    state = device_engine.state_json()
    assert (state["phase"], state["game"], state["running"]) == ("running", 2, "left")
    assert state["score"] != {"left": 0, "right": 0}
    assert state["cube"]["value"] == 1                     # reset for game 2
    # The journal holds the same match.
    assert replay(read_journal(journal_of(rig))).engine.advance(end)[0].match == expected.match


def test_a_game_through_the_pins_with_the_service_on_a_thread(monkeypatch, tmp_path):
    """Real time: the service runs on its thread while the test drives the mock pins."""
    submitted: list[ButtonEdge] = []
    submit = ClockService.submit

    def spy(self: ClockService, event: ButtonEdge) -> None:
        submitted.append(event)
        submit(self, event)

    monkeypatch.setattr(ClockService, "submit", spy)
    config = mock_config(mock_config_text(("hold_s = 2.0", "hold_s = 0.5")))
    device = build_device(config, tmp_path / "state")
    worker = threading.Thread(target=device.service.run, name="clock", daemon=True)
    worker.start()
    pins = {b: device.factory.pin(n) for b, n in config.device.button_pins.items()}
    try:
        def press(button: Button, seconds: float = 0.05) -> None:
            pins[button].drive_low()
            time.sleep(seconds)
            pins[button].drive_high()
            time.sleep(0.05)

        press(L)                 # game 1: right runs
        press(R)                 # left runs
        press(L)                 # right runs
        press(C)                 # right doubles
        press(L)                 # left takes: right runs
        press(R, 0.7)            # right holds: result entry
        press(L)                 # left confirms
        last = submitted[-1].t - device.service.origin
        deadline = time.monotonic() + 2
        while device.session.engine.now < last and time.monotonic() < deadline:
            time.sleep(0.01)
    finally:
        device.service.stop()
        worker.join(2)
    try:
        assert not worker.is_alive()
        assert len(submitted) == 14 and all(isinstance(e, ButtonEdge) for e in submitted)
        origin = device.service.origin
        edges = [ButtonEdge(e.t - origin, e.button, e.pressed) for e in submitted]
        t = max(device.session.engine.now, edges[-1].t)
        ours = device.session.engine.advance(t)[0]
        assert ours.state_json() == direct(config.rules, edges, t).state_json()
        state = ours.state_json()
        assert (state["phase"], state["game"]) == ("between_games", 2)
        assert state["score"]["right"] == 2               # a single game with the cube at 2
    finally:
        device.close()
        device.factory.close()


def test_bounce_on_a_pin_is_debounced_by_the_engine(open_device):
    rig = open_device()
    rig.play([(1.000, L, DOWN), (1.004, L, UP), (1.008, L, DOWN),    # bounce of the press
              (1.200, L, UP), (1.210, L, DOWN), (1.215, L, UP)])     # bounce of the release
    end = 2 * S
    engine = rig.settle(end)
    kinds = effect_kinds(journal_of(rig))
    # One tap: game 1 started, right's clock runs; a second tap would be ignored out of turn.
    assert kinds.count("game_started") == 1
    assert "ignored" not in kinds
    assert engine.state_json()["running"] == "right"
    assert engine.state_json() == direct(rig.engine.rules, rig.edges, end).state_json()
    # Every edge reached the engine (and the journal); the bounces did nothing there.
    inputs = [r for r in read_journal(journal_of(rig)).records if r.kind == "input"]
    assert len(inputs) == 6
    assert [bool(r.data["effects"]) for r in inputs] == [True] + [False] * 5


def test_a_hold_of_the_cube_pin_pauses_and_another_resumes(open_device):
    rig = open_device()
    rig.play([(1.0, L, DOWN), (1.1, L, UP),        # right's clock runs
              (10.0, C, DOWN)])                     # the cube goes down at 10 s ...
    rig.at(11 * S)
    assert rig.engine.match.phase is not Phase.PAUSED     # a tap so far (a double, refused)
    rig.play([(12.5, C, UP)])                       # ... and is held past hold_s (2 s)
    rig.at(13 * S)
    match = rig.engine.match
    assert match.phase is Phase.PAUSED
    assert match.running_side is None
    frozen = match.reserve_at(Side.RIGHT, 10 * S)
    assert rig.engine.advance(60 * S)[0].match.reserve_at(Side.RIGHT) == frozen   # stands still
    rig.play([(60.0, C, DOWN), (62.5, C, UP)])      # held again: resumed at 60 s
    engine = rig.settle(70 * S)
    assert engine.match.phase is Phase.RUNNING and engine.match.running_side is Side.RIGHT
    assert engine.state_json() == direct(rig.engine.rules, rig.edges, 70 * S).state_json()
    assert engine.match.reserve_at(Side.RIGHT) <= frozen
    kinds = effect_kinds(journal_of(rig))
    assert kinds.count("paused") == 1 and kinds.count("resumed") == 1


# --- the panels -------------------------------------------------------------------------------

def expected_frame(match, side: Side, t: int) -> Image.Image:
    return shifted(render(panel_view(match, side, t)), shift_at(t))


def shown(rig: Rig, side: Side) -> Image.Image:
    device = rig.device.panels[side].device
    assert device is not None and device.image is not None
    return device.image


def test_the_panels_show_the_running_clock(open_device):
    rig = open_device()
    rig.play([(1.0, L, DOWN), (1.1, L, UP)])       # right's clock runs from 1 s
    pictures = {}
    for t in (40 * S, 41 * S + 500 * MS, 100 * S):
        rig.at(t)
        match = rig.engine.match
        for side in Side:
            assert same_image(shown(rig, side), expected_frame(match, side, t)), (side, t)
        pictures[t] = shown(rig, Side.LEFT).copy()
    assert not same_image(shown(rig, Side.LEFT), shown(rig, Side.RIGHT))   # each faces its player
    assert not same_image(pictures[40 * S], pictures[41 * S + 500 * MS])   # the digits run
    assert not same_image(pictures[41 * S + 500 * MS], pictures[100 * S])


def test_the_panels_shift_against_burn_in(open_device):
    rig = open_device()
    rig.play([(1.0, L, DOWN), (1.1, L, UP)])
    t = SHIFT_PERIOD_NS + 20 * S                    # the picture has moved once
    assert shift_at(t) != (0, 0)
    rig.at(t)
    match = rig.engine.match
    for side in Side:
        assert same_image(shown(rig, side), expected_frame(match, side, t))
        assert not same_image(shown(rig, side), render(panel_view(match, side, t)))


def test_a_still_screen_is_moved_at_the_shift_instant(open_device):
    rig = open_device()                              # between games: nothing changes but the shift
    wake = rig.at(S)
    assert wake == rig.origin + SHIFT_PERIOD_NS
    rig.at(SHIFT_PERIOD_NS)
    for side in Side:
        assert same_image(shown(rig, side),
                          expected_frame(rig.engine.match, side, SHIFT_PERIOD_NS))


# --- restarts ---------------------------------------------------------------------------------

def test_a_restart_on_the_same_state_dir_recovers_the_match_paused(open_device, clock, tmp_path):
    first = open_device()
    first.play([(1.0, L, DOWN), (1.1, L, UP), (15.0, R, DOWN), (15.1, R, UP)])  # left runs
    first.at(20 * S)
    reserve = first.engine.advance(20 * S)[0].match.reserve_at(Side.LEFT)
    close(first)                                     # journals the instant of the stop: 20 s

    clock.ns += 3600 * S                             # an hour later
    second = open_device()
    assert second.device.notes[0].startswith("recovered")
    assert journal_of(second) == journal_of(first)
    match = second.engine.match
    assert match.phase is Phase.PAUSED
    assert match.now == 20 * S                       # the outage is charged to nobody
    assert second.origin == clock.ns - 20 * S
    second.at(25 * S)
    assert second.engine.advance(25 * S)[0].match.reserve_at(Side.LEFT) == reserve
    records = read_journal(journal_of(second)).records
    assert [r.data["input"]["type"] for r in records if r.kind == "input"][-1] == "recover"


def test_an_unfinished_match_is_resumed_whatever_the_config_says_now(open_device, clock, tmp_path):
    # SPEC §13.2: at boot the newest journal's match is resumed if it is not over, whatever the
    # match file says now; the other match waits to be loaded (new-match, --force if need be).
    first = open_device()
    first.play([(1.0, L, DOWN), (1.1, L, UP)])
    first.at(5 * S)
    close(first)
    clock.ns += 60 * S
    other = mock_config(mock_config_text(('right = "Boris"', 'right = "Carla"')))
    second = open_device(other)
    assert second.device.notes[0].startswith("recovered")
    assert journal_of(second) == journal_of(first)
    assert second.engine.match.phase is Phase.PAUSED
    assert second.engine.rules.names.right == "Boris"
    assert len(list((tmp_path / "state" / JOURNALS_DIR).glob("match-*.jsonl"))) == 1


def test_a_finished_match_is_not_recovered(open_device, clock):
    config = mock_config(mock_config_text(("length = 7", "length = 1")))
    first = open_device(config)
    first.play([(1.0, L, DOWN), (1.1, L, UP),            # right runs
                (5.0, R, DOWN), (7.5, R, UP),            # right holds: result entry
                (8.0, L, DOWN), (8.1, L, UP)])           # left confirms: right wins the match
    first.at(9 * S)
    assert first.engine.match.phase is Phase.MATCH_OVER
    close(first)
    clock.ns += 60 * S
    second = open_device(config)
    assert second.device.notes[0].startswith("new match")
    assert second.engine.match.phase is Phase.BETWEEN_GAMES


# --- gammonclock run --------------------------------------------------------------------------

def test_run_with_a_bad_config_names_the_file_and_key(tmp_path, capsys):
    bad = tmp_path / "bad.toml"
    bad.write_text(MOCK_TEXT.replace("length = 7", "length = 700"), encoding="utf-8")
    started = time.monotonic()
    code = main(["run", "--config", str(bad), "--state-dir", str(tmp_path / "state")])
    out, err = capsys.readouterr()
    assert code != 0
    assert str(bad) in err and "match.length" in err
    assert out == ""
    assert time.monotonic() - started < 5            # the absent panels do not hold it up
    assert not (tmp_path / "state").exists()


def test_run_with_a_missing_config_fails(tmp_path, capsys):
    missing = tmp_path / "nowhere.toml"
    code = main(["run", "--config", str(missing)])
    _, err = capsys.readouterr()
    assert code != 0
    assert str(missing) in err


@dataclass
class Runner:
    """Starts `gammonclock run` on a mock config and waits until it handles SIGTERM."""

    config: Path
    state: Path
    processes: list[subprocess.Popen]

    def __call__(self) -> subprocess.Popen:
        proc = subprocess.Popen(gammonclock("run", "--config", str(self.config), "--state-dir",
                                            str(self.state)),
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.processes.append(proc)
        deadline = time.monotonic() + 15
        while not handles_sigterm(proc.pid):
            if proc.poll() is not None:
                pytest.fail(f"gammonclock run exited {proc.returncode}: "
                            f"{proc.communicate()[1]}")
            assert time.monotonic() < deadline, "gammonclock run did not start"
            time.sleep(0.01)
        return proc


@pytest.fixture
def run_device(tmp_path: Path, processes: list[subprocess.Popen]) -> Runner:
    config = tmp_path / "mock.toml"
    config.write_text(MOCK_TEXT, encoding="utf-8")
    return Runner(config, tmp_path / "state", processes)


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="needs Linux /proc")
def test_run_starts_journals_and_exits_cleanly_on_sigterm(run_device, capsys):
    proc = run_device()
    journals = sorted((run_device.state / JOURNALS_DIR).glob("match-*.jsonl"))
    assert len(journals) == 1
    assert [r.kind for r in read_journal(journals[0]).records] == ["header"]
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=10)
    assert proc.returncode == 0, err
    assert "new match" in err
    records = read_journal(journals[0]).records
    assert [r.kind for r in records] == ["header", "tick"]   # the instant of the stop
    assert records[-1].t > 0

    code = main(["verify", str(journals[0]), "--state-dir", str(run_device.state)])
    out, _ = capsys.readouterr()
    assert code == 0
    assert "intact" in out and "TAMPERED" not in out


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="needs Linux /proc")
def test_run_recovers_after_sigkill(run_device, capsys):
    first = run_device()
    first.kill()
    first.communicate(timeout=10)
    assert first.returncode == -signal.SIGKILL

    second = run_device()
    second.send_signal(signal.SIGTERM)
    _, err = second.communicate(timeout=10)
    assert second.returncode == 0, err
    assert "recovered" in err
    journals = sorted((run_device.state / JOURNALS_DIR).glob("match-*.jsonl"))
    assert len(journals) == 1                         # the same journal goes on
    records = read_journal(journals[0]).records
    inputs = [r.data["input"]["type"] for r in records if r.kind == "input"]
    assert inputs == ["recover"]
    assert main(["verify", str(journals[0]), "--state-dir", str(run_device.state)]) == 0
    assert "intact" in capsys.readouterr().out
    # The journal replays to a valid match, still before game 1.
    assert replay(read_journal(journals[0])).engine.state_json()["phase"] == "between_games"

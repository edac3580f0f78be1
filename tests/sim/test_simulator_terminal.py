"""The terminal simulator in a small terminal (issue 19 item 8): at 80×24 the panels' pictures do
not fit, so each panel's view is written out as text (in the panel's language), side by side,
with the keys and the arbiter's socket under them; the pictures stay where the terminal holds
them. The real `gammonclock simulate` is driven in a detached tmux session of 80×24."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from PIL import Image, ImageChops

from gammonclock.config.loading import load_config, parse_config
from gammonclock.core.effects import Effect
from gammonclock.core.engine import Engine
from gammonclock.device.build import Device, build_device, dummy_panels
from gammonclock.hardware import presenters as hardware_presenters
from gammonclock.hardware.drawing import render, shifted
from gammonclock.hardware.panels import shift_at
from gammonclock.hardware.presenters import PanelPresenter
from gammonclock.hardware.screens import config_error_view
from gammonclock.hardware.views import Clock, Layout, PanelView
from gammonclock.runtime.session import Session
from gammonclock.sides import Side
from gammonclock.sim.script import load_script
from gammonclock.sim.simulate import run_script
from gammonclock.sim.ui import (
    DICE,
    KEYS_TEXT,
    MARKER,
    TEXT_GAP,
    FrameRecorder,
    panel_images,
    panel_presenter,
    shown_views,
    status_lines,
    terminal_picture,
    terminal_screen,
    text_layouts,
    view_text,
)

ROOT = Path(__file__).resolve().parents[2]
CONFIG = ROOT / "config" / "backgammon.toml"
RUSSIAN = '\n[display]\nlanguage = "ru"\n'


def mock_text(extra: str = "") -> str:
    text = CONFIG.read_text(encoding="utf-8")
    assert 'pin_factory = "lgpio"' in text
    return text.replace('pin_factory = "lgpio"', 'pin_factory = "mock"') + extra


@pytest.fixture
def make_device(tmp_path: Path) -> Iterator[Callable[[str], Device]]:
    """A device of config/backgammon.toml on mock pins and dummy panels (`extra`: more config),
    its panels drawn once."""
    made: list[Device] = []

    def make(extra: str = "") -> Device:
        device = build_device(parse_config(mock_text(extra), "mock.toml"),
                              tmp_path / f"state{len(made)}")
        made.append(device)
        device.service.present_all([])
        return device

    yield make
    for device in made:
        device.close()
        device.factory.close()


def boxes(screen: list[str], columns: int = 80) -> tuple[str, str]:
    """The left and the right half of a screen, each as one text."""
    width = (columns - TEXT_GAP) // 2
    return ("\n".join(line[:width] for line in screen),
            "\n".join(line[width + TEXT_GAP:] for line in screen))


def flat(text: str) -> str:
    """Text with its box drawing and line breaks as single spaces (a wrapped line joined)."""
    return " ".join(re.sub(r"[│┌┐└┘─]", " ", text).split())


# --- the text of a view -------------------------------------------------------------------

def test_at_80_by_24_a_device_s_panels_are_written_out_side_by_side(make_device):
    device = make_device()
    screen = terminal_screen(panel_images(device), shown_views(device), 80, 24,
                             "/tmp/gc-x/arbiter.sock")
    assert len(screen) <= 24 and all(len(line) <= 80 for line in screen)
    left, right = boxes(screen)
    assert left.startswith("┌ left") and right.startswith("┌ right")
    # Each panel names its own player first, with the score, then both reserves and the prompt.
    assert re.search(r"│Anna +0-0 to 7│", left) and re.search(r"│Boris +0-0 to 7│", right)
    assert re.search(r"│  14:00 ", left) and re.search(r"│  Boris +14:00│", left)
    assert re.search(r"│  Anna +14:00│", right)
    assert "12s delay: tap to start" in left and "12s delay: tap to start" in right
    assert KEYS_TEXT in screen and "arbiter socket: /tmp/gc-x/arbiter.sock" in screen


def test_a_russian_match_is_written_out_in_russian(make_device):
    device = make_device(RUSSIAN)
    screen = terminal_screen(panel_images(device), shown_views(device), 80, 24)
    left, right = boxes(screen)
    assert re.search(r"│Anna +0-0 до 7│", left) and re.search(r"│Boris +0-0 до 7│", right)
    assert "задержка 12с: нажмите" in left
    assert "to 7" not in left + right and "delay" not in left + right


def test_the_running_delay_and_the_cube_are_said_in_the_panel_s_language():
    running = Clock("9:41", running=True, delay="7", cube="4")
    waiting = Clock("12:00", name="Борис", dice=(3, 5))
    view = PanelView(Layout.CLOCK, header="Анна", header_right="2-1 до 7", own=running,
                     opponent=waiting)
    assert view_text(view, "ru", 36) == [
        "Анна" + " " * 24 + "2-1 до 7",
        "",
        f"{MARKER} 9:41" + " " * 12 + "задержка 7с  куб 4",
        "",
        "  Борис" + " " * 19 + f"{DICE[2]} {DICE[4]}  12:00",
    ]
    english = view_text(view, "en", 36)
    assert english[2] == f"{MARKER} 9:41" + " " * 14 + "7s delay  cube 4"


def test_the_other_layouts_have_their_title_lines_footer_and_notice():
    menu = PanelView(Layout.MENU, header="ARBITER", header_right="hold C: resume",
                     title="LEFT CLOCK", lines=(("Anna", "9:41"), ("change", "+0:10")),
                     footer="L:-10s C:set R:+10s", notice="arbiter: time changed")
    assert view_text(menu, "en", 30) == [
        "ARBITER" + " " * 9 + "hold C: resume",
        "",
        " " * 8 + "[ LEFT CLOCK ]",
        "Anna" + " " * 22 + "9:41",
        "change" + " " * 19 + "+0:10",
        " " * 5 + "L:-10s C:set R:+10s",
        "",
        "» arbiter: time changed",
    ]
    countdown = PanelView(Layout.COUNTDOWN, header="Anna", header_right="2-0 to 7",
                          title="BREAK: tap to end", big="4:59")
    assert view_text(countdown, "en", 30)[2:] == [" " * 4 + "[ BREAK: tap to end ]",
                                                  " " * 13 + "4:59"]
    words = "a config error of many words that the panel wraps in its small print"
    text = PanelView(Layout.TEXT, header="gammonclock", title="CONFIG ERROR",
                     lines=((words, ""),))
    assert view_text(text, "en", 30)[3:] == ["a config error of many words",
                                             "that the panel wraps in its",
                                             "small print"]


def test_a_long_name_is_cut_so_that_the_score_stays():
    view = PanelView(Layout.CLOCK, header="Maximilian Alexander von Habsburg",
                     header_right="CRAWFORD 6-4 to 7")
    assert view_text(view, "en", 30)[0] == "Maximilian…  CRAWFORD 6-4 to 7"


@dataclass
class Collector:
    """The real panel presenter of a scripted run (on dummy panels), and every view it gave a
    panel, with the panel's picture of it."""

    recorder: FrameRecorder
    seen: list[tuple[tuple[PanelView, str], Image.Image]]

    def present(self, engine: Engine, t: int, effects: list[Effect]) -> int | None:
        wake = self.recorder.present(engine, t, effects)
        for side in Side:
            shown = self.recorder.presenter.shown(side)
            assert shown is not None
            image = self.recorder.devices[side].image
            # The picture as drawn, before the panel moved it against burn-in.
            dx, dy = shift_at(t)
            self.seen.append((shown, shifted(image.copy(), (-dx, -dy))))
        return wake


def views_of_a_run(config: Path, script: Path, language: str
                   ) -> list[tuple[tuple[PanelView, str], Image.Image]]:
    loaded = load_config(config)
    inputs = load_script(script, loaded.rules.hold_ns, debounce_ns=loaded.rules.debounce_ns)
    collector = Collector(FrameRecorder(language=lambda: language), [])
    session = Session(Engine.start(loaded.rules, at=0), observers=[])
    run_script(session, inputs.inputs, inputs.end, None, [collector])
    session.close()
    return collector.seen


def view_strings(view: PanelView) -> list[str]:
    """Every text a view holds (what its picture draws)."""
    clocks = [c for c in (view.own, view.opponent) if c is not None]
    return [view.header, view.header_right, view.title, view.big, view.footer,
            view.notice or "", *view.status,
            *(part for line in view.lines for part in line),
            *(owner for owner, _ in view.opening),
            *(c.reserve for c in clocks), *(c.name for c in clocks), *(c.cube for c in clocks)]


@pytest.mark.parametrize("language", ["en", "ru"])
def test_the_text_says_everything_the_panel_shows_through_a_whole_match(language):
    """The views of match11.script (doubles, a pass, penalties, a break, an undo, a pause, the
    match's end), each as the presenter gave it to a panel: the view is the one the panel's
    picture was drawn from, and its text holds every text of it, its dice and its marker."""
    seen = views_of_a_run(ROOT / "config" / "backgammon_11.toml",
                          ROOT / "examples" / "match11.script", language)
    layouts = {view.layout for (view, _), _ in seen}
    assert {Layout.CLOCK, Layout.MESSAGE, Layout.COUNTDOWN} <= layouts
    assert any(view.notice for (view, _), _ in seen)
    distinct = {shown: image for shown, image in seen}      # a view and the picture drawn of it
    assert len(distinct) > 100
    for (view, lang), image in distinct.items():
        assert lang == language
        assert ImageChops.difference(render(view), image.convert("1")).getbbox() is None
        said = flat("\n".join(view_text(view, lang, 37)))
        for text in view_strings(view):
            assert flat(text) in said, (text, view)
        for clock in (c for c in (view.own, view.opponent) if c is not None):
            assert (MARKER in said) >= clock.running
            assert all(DICE[d - 1] in said for d in clock.dice)
        assert all(DICE[d - 1] in said for _, d in view.opening)


def test_fixed_screens_are_written_out_as_shown_in_the_panel_s_language():
    presenter = PanelPresenter(dummy_panels(), language=lambda: "ru")
    presenter.show_message(config_error_view("players.left: a name is needed"))
    for side in Side:
        shown = presenter.shown(side)
        assert shown is not None and shown[1] == "ru"
        image = presenter.panels[side].device.image
        assert ImageChops.difference(render(shown[0]), image.convert("1")).getbbox() is None
        said = flat("\n".join(view_text(*shown, 37)))
        assert "[ ОШИБКА НАСТРОЕК ]" in said and "players.left: a name is needed" in said
    presenter.present_idle({"table": "7", "event": "Open", "addresses": []}, 0)
    shown = presenter.shown(Side.RIGHT)
    assert shown is not None
    assert flat("\n".join(view_text(*shown, 37))) == (
        "gammonclock [ СТОЛ 7 ] Open нет сети ждём следующий матч")


# --- layouts and the status lines ---------------------------------------------------------

def test_the_pictures_stay_where_the_terminal_holds_them(make_device):
    device = make_device()
    images, views = panel_images(device), shown_views(device)
    for columns, rows in [(300, 40), (134, 34), (80, 70)]:
        screen = terminal_screen(images, views, columns, rows, "/s")
        picture = terminal_picture(*images, columns, rows - 1)
        assert picture is not None and screen[:len(picture)] == picture
        assert "Anna" not in "".join(screen)             # blocks, not text


def test_a_narrow_terminal_has_the_panels_one_above_the_other(make_device):
    device = make_device()
    screen = terminal_screen(panel_images(device), shown_views(device), 40, 40, "/s")
    assert all(len(line) <= 40 for line in screen) and len(screen) <= 40
    starts = [i for i, line in enumerate(screen) if line.startswith("┌")]
    assert [screen[i][:7] for i in starts] == ["┌ left ", "┌ right"]
    assert any(line.startswith("│Anna ") for line in screen[:starts[1]])
    assert any(line.startswith("│Boris ") for line in screen[starts[1]:])


@pytest.mark.parametrize("columns, rows", [(20, 24), (80, 12), (30, 5)])
def test_a_terminal_too_small_for_the_text_says_what_it_needs(make_device, columns, rows):
    device = make_device()
    screen = terminal_screen(panel_images(device), shown_views(device), columns, rows,
                             "/tmp/gc-x/arbiter.sock")
    # 28 columns: two boxes of 11 rows, the keys on 3 lines and the socket on 2.
    assert screen[:3] == [line[:columns] for line in (f"terminal {columns}x{rows} is too small:",
                                                      "the panels need 28x27 as text,",
                                                      "134x33 as pictures.")]
    assert screen[3:] == status_lines(columns, "/tmp/gc-x/arbiter.sock")


def test_the_least_text_layouts_fit_what_they_say(make_device):
    device = make_device()
    views = shown_views(device)
    side_by_side, stacked = text_layouts(*views, 58)
    assert side_by_side[1] == 58 and len(side_by_side[0]) == 11
    assert stacked[1] == 42 and len(stacked[0]) == 22
    [(lines, width)] = text_layouts(*views, 28)
    assert width == 28 == max(len(line) for line in lines)
    assert text_layouts(*views, 27) == []


def test_the_socket_s_path_is_never_cut():
    path = "/tmp/" + "a-rather-long-folder-name/" * 4 + "arbiter.sock"
    lines = status_lines(60, path)
    assert all(len(line) <= 60 for line in lines)
    assert lines[0] == KEYS_TEXT[:KEYS_TEXT.rindex(" ", 0, 61)].rstrip()
    assert "".join(lines).endswith(f"arbiter socket: {path}")
    assert status_lines(200, "/s") == [f"{KEYS_TEXT}   arbiter socket: /s"]
    assert status_lines(80, None) == [KEYS_TEXT]


def test_the_terminal_never_takes_one_panel_s_new_view_beside_the_other_s_old(make_device,
                                                                               monkeypatch):
    """The terminal reads both views on its own thread while the loop presents; read between
    the two panels' views being worked out (the moment forced here: in the right panel's), it
    gets both of the last drawing. It once got the left's new view beside the right's old one,
    and the screen showed, for a redraw, two panels of two different instants."""
    device = make_device()
    presenter = panel_presenter(device)
    assert presenter is not None
    before = shown_views(device)
    read: list[tuple[object, object]] = []
    work_out = hardware_presenters.panel_view

    def reading_between(state, side, *rest):
        if side is Side.RIGHT:
            read.append(shown_views(device))     # the terminal's read, at the worst moment
        return work_out(state, side, *rest)

    monkeypatch.setattr(hardware_presenters, "panel_view", reading_between)
    presenter.notify("arbiter: time changed", device.service.clock_ns())
    device.service.present_all([])
    after = shown_views(device)
    assert all(shown is not None and shown[0].notice == "arbiter: time changed"
               for shown in after)
    assert all(shown is not None and shown[0].notice is None for shown in before)
    assert read == [before]


# --- the real simulator in tmux -----------------------------------------------------------

class Tmux:
    """A tmux server of its own, a detached session of 80×24 running one command."""

    def __init__(self, name: str) -> None:
        tmux = shutil.which("tmux")
        if tmux is None:
            pytest.fail("tmux is not installed: this test drives the simulator in a tmux "
                        "terminal of 80x24 (apt-get install tmux)")
        self.base = [tmux, "-L", name, "-f", "/dev/null"]
        self.last: list[str] = []

    def __call__(self, *args: str, env: dict[str, str] | None = None) -> str:
        done = subprocess.run([*self.base, *args], capture_output=True, text=True, timeout=10,
                              env=env, check=True)
        return done.stdout

    def screen(self) -> list[str]:
        self.last = self("capture-pane", "-p", "-t", "sim").splitlines()
        return self.last

    def wait(self, step: str, checks: dict[str, Callable[[list[str]], object]],
             timeout: float = 10.0) -> list[str]:
        """The first capture of the pane that meets every check at once, captured again until
        one does (a capture can take the simulator's screen half written to the terminal, or
        before its key was taken), for at most `timeout` s; else the test fails naming the
        checks the last capture missed, with that whole capture."""
        deadline = time.monotonic() + timeout
        while True:
            screen = self.screen()
            missed = [name for name, check in checks.items() if not check(screen)]
            if not missed:
                return screen
            if time.monotonic() >= deadline:
                raise AssertionError(f"{step}: not on the screen within {timeout} s: "
                                     + "; ".join(missed) + "\nthe pane:\n"
                                     + "\n".join(screen))
            time.sleep(0.05)                    # the next capture (a poll, not a wait for it)


def test_the_simulator_at_80_by_24_shows_the_panels_as_text_the_keys_and_the_socket():
    gammonclock = Path(sys.executable).parent / "gammonclock"
    assert gammonclock.exists(), f"{gammonclock}: install the project in its venv (pip -e .)"
    state = Path(tempfile.mkdtemp(prefix="gc-"))        # short: a socket's path has a limit
    socket = state / "arbiter.sock"
    exit_file = state / "exit"
    env = {k: v for k, v in os.environ.items()
           if k not in ("DISPLAY", "WAYLAND_DISPLAY", "SDL_VIDEODRIVER", "TMUX")}
    env["LANG"] = "C.UTF-8"
    tmux = Tmux(f"gammonclock-test-{os.getpid()}")
    command = (f"{gammonclock} simulate --config {CONFIG} --state-dir {state}; "
               f"echo $? > {exit_file}")
    try:
        tmux("new-session", "-d", "-s", "sim", "-x", "80", "-y", "24", command, env=env)
        screen = tmux.wait("the simulator's first screen", {
            "left: Anna and the delay's prompt":
                lambda s: "Anna" in boxes(s)[0] and "12s delay: tap to start" in boxes(s)[0],
            "right: Boris": lambda s: "Boris" in boxes(s)[1],
            "the score": lambda s: any("0-0 to 7" in line for line in s),
            "the keys' line": lambda s: KEYS_TEXT in s,
            "the socket's line": lambda s: "arbiter socket: " + str(socket) in s,
        })
        assert len(screen) == 24 and all(len(line) <= 80 for line in screen)
        assert socket.is_socket()

        tmux("send-keys", "-t", "sim", "a")              # left's tap: right's clock runs
        tmux.wait("a: left's tap", {
            "right: its own clock runs": lambda s: f"│{MARKER} 14:00" in boxes(s)[1],
            "left: Boris's clock runs, in its delay": lambda s: re.search(
                rf"│{MARKER} Boris +\d+s delay  14:00│", boxes(s)[0]),
            "right: Anna's clock stands": lambda s: re.search(r"│  Anna +14:00│", boxes(s)[1]),
        })

        tmux("send-keys", "-t", "sim", "Space")          # a double on the first turn: refused
        tmux.wait("space: a double on the first turn", {
            f"{side}: the notice": lambda s, i=i: "» no double on the first turn" in boxes(s)[i]
            for i, side in enumerate(("left", "right"))
        })

        tmux("send-keys", "-t", "sim", "l")              # right's tap: left's clock runs
        tmux.wait("l: right's tap", {
            "left: its own clock runs": lambda s: f"│{MARKER} 14:00" in boxes(s)[0],
            "left: Boris's clock stands": lambda s: re.search(r"│  Boris +1[34]:\d\d│",
                                                              boxes(s)[0]),
        })

        tmux("send-keys", "-t", "sim", "q")
        deadline = time.monotonic() + 10
        while not exit_file.exists() or not exit_file.read_text():
            assert time.monotonic() < deadline, "q did not quit:\n" + "\n".join(tmux.screen())
            time.sleep(0.05)
        assert exit_file.read_text().strip() == "0"
    finally:
        subprocess.run([*tmux.base, "kill-server"], capture_output=True, timeout=10)
        shutil.rmtree(state, ignore_errors=True)

"""The simulator people use (simulator_ui.py): the pygame window on SDL's dummy video driver turns
key-down and key-up into real mock-pin edges; the text drawing; the composite of both panels; and
the frames and GIF that `gammonclock simulate --script … --frames … --gif …` records."""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from PIL import Image, ImageChops

from gammonclock.cli.main import main
from gammonclock.config.loading import parse_config
from gammonclock.core.engine import ButtonEdge
from gammonclock.core.match import Phase
from gammonclock.device.build import Device, build_device
from gammonclock.runtime.service import ClockService
from gammonclock.sides import Button, Side
from gammonclock.sim.ui import (
    GAP,
    LABEL_H,
    compose,
    panel_images,
    run_window,
    terminal_picture,
    text_frame,
)

ROOT = Path(__file__).resolve().parents[2]
REFERENCE_CONFIG = ROOT / "config" / "backgammon.toml"
DEMO_SCRIPT = ROOT / "examples" / "demo.script"
HOLD_S = 0.5


def mock_text() -> str:
    text = REFERENCE_CONFIG.read_text(encoding="utf-8")
    for old, new in (('pin_factory = "lgpio"', 'pin_factory = "mock"'),
                     ("hold_s = 2.0", f"hold_s = {HOLD_S}")):
        assert old in text
        text = text.replace(old, new)
    return text


def wait_for(condition: Callable[[], bool], timeout: float = 3.0, what: str = "") -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what or condition}"
        time.sleep(0.005)


def same_image(a: Image.Image, b: Image.Image) -> bool:
    return a.size == b.size and ImageChops.difference(a.convert("1"), b.convert("1")).getbbox() \
        is None


# --- the window -------------------------------------------------------------------------------

@dataclass
class Window:
    """`run_window` on its own thread, with the device's service on another."""

    device: Device
    edges: list[ButtonEdge]
    stop: threading.Event = field(default_factory=threading.Event)
    outcome: list[str] = field(default_factory=list)
    thread: threading.Thread | None = None

    def start(self) -> None:
        import pygame

        def target() -> None:
            try:
                run_window(self.device, self.stop)
                self.outcome.append("returned")
            except BaseException as exc:  # noqa: BLE001 - SystemExit too: that is the point
                self.outcome.append(repr(exc))

        self.thread = threading.Thread(target=target, name="window", daemon=True)
        self.thread.start()
        wait_for(lambda: pygame.display.get_init() and pygame.display.get_surface() is not None,
                 what="the window")

    def key(self, down: bool, key: int) -> None:
        import pygame
        pygame.event.post(pygame.event.Event(pygame.KEYDOWN if down else pygame.KEYUP, key=key,
                                             mod=0, unicode="", scancode=0))

    def edge_count(self, n: int) -> None:
        wait_for(lambda: len(self.edges) >= n, what=f"{n} pin edges")

    def join(self) -> None:
        assert self.thread is not None
        self.thread.join(5)
        assert not self.thread.is_alive()


@pytest.fixture
def window(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[Window]:
    monkeypatch.setenv("SDL_VIDEODRIVER", "dummy")
    monkeypatch.setenv("SDL_AUDIODRIVER", "dummy")
    edges: list[ButtonEdge] = []
    submit = ClockService.submit

    def spy(self: ClockService, event: ButtonEdge) -> None:
        edges.append(event)
        submit(self, event)

    monkeypatch.setattr(ClockService, "submit", spy)
    device = build_device(parse_config(mock_text(), "mock.toml"), tmp_path / "state")
    worker = threading.Thread(target=device.service.run, name="clock", daemon=True)
    worker.start()
    win = Window(device, edges)
    try:
        yield win
    finally:
        win.stop.set()
        if win.thread is not None:
            win.thread.join(5)
        device.service.stop()
        worker.join(5)
        device.close()
        device.factory.close()


def test_keys_press_and_release_the_pins_and_a_long_key_is_a_hold(window: Window):
    import pygame

    device = window.device
    left_pin = device.factory.pin(device.config.button_pins[Button.LEFT])
    window.start()

    window.key(True, pygame.K_a)                       # A: the left button goes down ...
    window.edge_count(1)
    assert (window.edges[0].button, window.edges[0].pressed) == (Button.LEFT, True)
    assert left_pin.state == 0                         # pulled up, pressed: driven low
    time.sleep(0.06)                                   # longer than the 30 ms debounce
    window.key(False, pygame.K_a)                      # ... and up: a tap, game 1 starts
    window.edge_count(2)
    assert (window.edges[1].button, window.edges[1].pressed) == (Button.LEFT, False)
    assert left_pin.state == 1
    wait_for(lambda: device.session.engine.match.running_side is Side.RIGHT, what="right runs")

    window.key(True, pygame.K_l)                       # L held longer than hold_s: a hold
    window.edge_count(3)
    time.sleep(HOLD_S + 0.2)
    window.key(False, pygame.K_l)
    window.edge_count(4)
    assert [(e.button, e.pressed) for e in window.edges[2:4]] == [(Button.RIGHT, True),
                                                                  (Button.RIGHT, False)]
    assert window.edges[3].t - window.edges[2].t > HOLD_S * 1e9
    wait_for(lambda: device.session.engine.match.phase is Phase.RESULT_ENTRY,
             what="result entry")
    assert device.session.engine.match.entry.holder is Side.RIGHT

    window.key(True, pygame.K_SPACE)                   # SPACE is the cube: the next proposal
    window.edge_count(5)
    assert window.edges[4].button is Button.CUBE

    window.key(True, pygame.K_ESCAPE)                  # ESC closes the window
    window.join()
    assert window.outcome == ["returned"]


def test_the_window_closes_when_asked_to_stop(window: Window):
    window.start()
    window.stop.set()
    window.join()
    assert window.outcome == ["returned"]


def test_closing_the_window_returns_from_run_window(window: Window):
    import pygame

    window.start()
    time.sleep(0.05)
    pygame.event.post(pygame.event.Event(pygame.QUIT))
    window.join()
    assert window.outcome == ["returned"]


def window_picture() -> Image.Image:
    """What the pygame window shows, as a 1-bit image."""
    import pygame
    surface = pygame.display.get_surface()
    raw = pygame.image.tostring(surface, "RGB")
    return Image.frombytes("RGB", surface.get_size(), raw).convert("1")


def test_the_window_shows_both_panels_side_by_side(window: Window):
    import pygame

    from gammonclock.sim.ui import KEYS_HELP

    window.start()
    time.sleep(0.1)                                    # a few frames
    shown = window_picture()
    expected = compose(*panel_images(window.device), KEYS_HELP)
    window.key(True, pygame.K_ESCAPE)
    window.join()
    assert same_image(shown, expected.resize(shown.size, Image.Resampling.NEAREST))


def test_the_window_shows_the_panels_scaled_up(window: Window):
    import pygame

    window.start()
    size = pygame.display.get_surface().get_size()
    width, height = compose(*panel_images(window.device), "x").size
    window.key(True, pygame.K_ESCAPE)
    window.join()
    assert size == (3 * width, 3 * height)


# --- drawing ----------------------------------------------------------------------------------

def test_text_frame_draws_half_blocks():
    image = Image.new("1", (3, 7))
    for xy in [(0, 0), (0, 1), (1, 0), (2, 1),        # rows 0-1: full, upper, lower
               (1, 3),                                  # rows 2-3: blank, lower, blank
               (0, 4), (2, 5)]:                         # rows 4-5: upper, blank, lower
        image.putpixel(xy, 1)
    assert text_frame(image) == ["█▀▄", " ▄", "▀ ▄", ""]


def test_text_frame_of_a_panel_has_one_line_per_two_pixel_rows():
    image = Image.new("1", (128, 64), 1)
    lines = text_frame(image)
    assert lines == ["█" * 128] * 32


def test_text_frame_in_quadrants_draws_two_by_two_pixels_per_character():
    image = Image.new("1", (4, 3))
    for xy in [(0, 0), (1, 1),              # cell (0,0): top-left and bottom-right
               (2, 0), (3, 0), (2, 1), (3, 1),   # cell (1,0): full
               (1, 2)]:                     # cell (0,1): top-right (the image's last row)
        image.putpixel(xy, 1)
    assert text_frame(image, quadrants=True) == ["▚█", "▝"]


@pytest.mark.parametrize("columns, lines, width", [(300, 32, 268), (140, 32, 134), (80, 65, 64)])
def test_the_terminal_picture_fits_the_terminal(columns, lines, width):
    full = Image.new("1", (128, 64), 1)
    picture = terminal_picture(full, full, columns)
    assert len(picture) == lines
    assert max(len(line) for line in picture) == width <= columns


def test_compose_puts_the_left_panel_left():
    left, right = Image.new("1", (128, 64)), Image.new("1", (128, 64))
    left.putpixel((0, 0), 1)
    left.putpixel((127, 63), 1)
    right.putpixel((0, 0), 1)
    image = compose(left, right)
    assert image.size == (128 + GAP + 128, 64)
    assert image.getpixel((0, 0)) and image.getpixel((127, 63))
    assert image.getpixel((128 + GAP, 0))
    assert not image.getpixel((128 + GAP + 127, 63))
    assert image.crop((128, 0, 128 + GAP, 64)).getbbox() is None     # the gap is dark
    assert same_image(image.crop((0, 0, 128, 64)), left)
    assert same_image(image.crop((128 + GAP, 0, 256 + GAP, 64)), right)

    labelled = compose(left, right, "A = left")
    assert labelled.size == (128 + GAP + 128, 64 + LABEL_H)
    assert same_image(labelled.crop((0, 0, labelled.width, 64)), image)
    assert labelled.crop((0, 64, labelled.width, 64 + LABEL_H)).getbbox() is not None


def test_compose_of_a_device_shows_each_panel_where_its_player_sits(tmp_path: Path):
    device = build_device(parse_config(mock_text(), "mock.toml"), tmp_path / "state")
    try:
        device.service.present_all([])
        left, right = panel_images(device)
        assert not same_image(left, right)                # each names its own player first
        image = compose(left, right)
        assert same_image(image.crop((0, 0, 128, 64)), device.panels.left.device.image)
        assert same_image(image.crop((128 + GAP, 0, 256 + GAP, 64)),
                          device.panels.right.device.image)
    finally:
        device.close()
        device.factory.close()


# --- recordings -------------------------------------------------------------------------------

@dataclass
class Recorded:
    frames: Path
    gif: Path
    stdout: str
    stderr: str
    returncode: int


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Recorded:
    """`gammonclock simulate --script demo.script --frames DIR --gif FILE --json`, once."""
    out = tmp_path_factory.mktemp("recording")
    frames, gif = out / "frames", out / "demo.gif"
    env = {k: v for k, v in os.environ.items() if k != "PYGAME_HIDE_SUPPORT_PROMPT"}
    env["SDL_VIDEODRIVER"] = "dummy"
    proc = subprocess.run([sys.executable, "-m", "gammonclock", "simulate",
                           "--config", str(REFERENCE_CONFIG), "--script", str(DEMO_SCRIPT),
                           "--frames", str(frames), "--gif", str(gif), "--json"],
                          capture_output=True, text=True, timeout=60, env=env, cwd=out)
    return Recorded(frames, gif, proc.stdout, proc.stderr, proc.returncode)


def test_simulate_json_stdout_is_exactly_one_json_object(recorded: Recorded, capsys):
    assert recorded.returncode == 0, recorded.stderr
    assert len(recorded.stdout.strip().splitlines()) == 1, recorded.stdout
    state = json.loads(recorded.stdout)
    assert isinstance(state, dict) and state["phase"] == "running" and state["game"] == 2
    # Recording frames does not change the match.
    assert main(["simulate", "--config", str(REFERENCE_CONFIG), "--script", str(DEMO_SCRIPT),
                 "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == state


@pytest.mark.parametrize("side", ["left", "right"])
def test_frames_are_written_whenever_a_panel_changes(recorded: Recorded, side: str):
    assert recorded.returncode == 0, recorded.stderr
    files = sorted(recorded.frames.glob(f"{side}-*.png"))
    assert len(files) > 10
    assert [f.name for f in files] == [f"{side}-{n:06}.png" for n in range(1, len(files) + 1)]
    images = [Image.open(f) for f in files]
    assert all(image.size == (128, 64) for image in images)
    for n, (a, b) in enumerate(itertools.pairwise(images), start=1):
        assert not same_image(a, b), f"{side} frames {n} and {n + 1} are the same picture"


def test_the_two_panels_record_different_pictures(recorded: Recorded):
    left = Image.open(recorded.frames / "left-000001.png")
    right = Image.open(recorded.frames / "right-000001.png")
    assert not same_image(left, right)


def test_the_gif_has_several_frames_of_both_panels(recorded: Recorded):
    assert recorded.returncode == 0, recorded.stderr
    with Image.open(recorded.gif) as gif:
        assert gif.format == "GIF"
        assert gif.n_frames > 10
        assert gif.size == (2 * (128 + GAP + 128), 2 * 64)
        durations = []
        for n in range(gif.n_frames):
            gif.seek(n)
            durations.append(gif.info.get("duration", 0))
        assert all(d >= 20 for d in durations)

"""The recordings of scripted runs speak the panels' language (SPEC §15; issue 19 item 1).

`gammonclock simulate --script … --frames DIR --gif FILE` with a match file whose `[display]
language = "ru"` draws every frame as the Russian panel presenter draws the same views, and not as
the English one does: the language the device decides (the match's, else the device's)."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest
from PIL import Image, ImageChops

from gammonclock.cli.main import main
from gammonclock.config.loading import load_config
from gammonclock.core.engine import Engine
from gammonclock.runtime.session import Session
from gammonclock.sim.script import load_script
from gammonclock.sim.simulate import run_script
from gammonclock.sim.ui import FrameRecorder

ROOT = Path(__file__).resolve().parents[2]
DEMO_SCRIPT = ROOT / "examples" / "demo.script"
MATCH = (ROOT / "config" / "match.toml").read_text(encoding="utf-8")


def match_file(folder: Path, language: str | None) -> Path:
    """config/match.toml with Cyrillic names, in `language` (none: the default)."""
    text = MATCH.replace('left = "Left"', 'left = "Анна"').replace('right = "Right"',
                                                                   'right = "Борис"')
    assert "Анна" in text and "Борис" in text
    if language is not None:
        text += f'\n[display]\nlanguage = "{language}"\n'
    path = folder / f"match-{language}.toml"
    path.write_text(text, encoding="utf-8")
    return path


def frames_of(folder: Path) -> list[tuple[str, bytes]]:
    """Every PNG the recorder wrote, by name, as pixels."""
    return [(p.name, Image.open(p).convert("1").tobytes())
            for p in sorted(folder.glob("*.png"))]


def gif_frames(path: Path) -> list[bytes]:
    with Image.open(path) as gif:
        shown = []
        for n in range(gif.n_frames):
            gif.seek(n)
            shown.append(gif.convert("L").tobytes())
        return shown


def simulate(config: Path, out: Path) -> tuple[Path, Path]:
    frames, gif = out / "frames", out / "run.gif"
    assert main(["simulate", "--config", str(config), "--script", str(DEMO_SCRIPT),
                 "--frames", str(frames), "--gif", str(gif), "--json"]) == 0
    return frames, gif


def drawn_by_presenter(config: Path, language: str, out: Path) -> tuple[Path, Path]:
    """The same run drawn by the panel presenter told the language outright."""
    loaded = load_config(config)
    script = load_script(DEMO_SCRIPT, loaded.rules.hold_ns, debounce_ns=loaded.rules.debounce_ns)
    frames, gif = out / "frames", out / "run.gif"
    told: Callable[[], str] = lambda: language   # noqa: E731
    recorder = FrameRecorder(frames, gif, language=told)
    session = Session(Engine.start(loaded.rules, at=0), observers=[])
    run_script(session, script.inputs, script.end, None, [recorder])
    recorder.close()
    session.close()
    return frames, gif


@pytest.fixture(autouse=True)
def _no_window(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SDL_VIDEODRIVER", "dummy")


def test_a_russian_match_is_recorded_in_russian(tmp_path: Path, capsys) -> None:
    russian = match_file(tmp_path, "ru")
    ru_frames, ru_gif = simulate(russian, tmp_path / "run-ru")
    en_frames, en_gif = simulate(match_file(tmp_path, "en"), tmp_path / "run-en")
    capsys.readouterr()
    recorded, english = frames_of(ru_frames), frames_of(en_frames)
    assert len(recorded) > 10
    # Every frame differs from the English one of the same instant: no English text is left
    # (the names are the same Cyrillic letters in both, so only the texts can differ).
    assert [name for name, _ in recorded] == [name for name, _ in english]
    same = [name for (name, a), (_, b) in zip(recorded, english, strict=True) if a == b]
    assert same == [], f"frames drawn as in English: {same}"
    assert gif_frames(ru_gif) != gif_frames(en_gif)
    # … and each is exactly what the Russian presenter draws.
    ref_frames, ref_gif = drawn_by_presenter(russian, "ru", tmp_path / "ref-ru")
    assert recorded == frames_of(ref_frames)
    assert gif_frames(ru_gif) == gif_frames(ref_gif)


def test_without_a_language_the_recording_is_english(tmp_path: Path, capsys) -> None:
    plain = match_file(tmp_path, None)
    frames, _ = simulate(plain, tmp_path / "run")
    capsys.readouterr()
    reference, _ = drawn_by_presenter(plain, "en", tmp_path / "ref")
    assert frames_of(frames) == frames_of(reference)


def test_one_russian_frame_shows_cyrillic(tmp_path: Path, capsys) -> None:
    """A frame of the Russian run is the English one's picture with other words: a pixel-wise
    difference that is more than a letter or two (a whole line of text)."""
    ru_frames, _ = simulate(match_file(tmp_path, "ru"), tmp_path / "ru")
    en_frames, _ = simulate(match_file(tmp_path, "en"), tmp_path / "en")
    capsys.readouterr()
    first = "left-000001.png"
    a, b = Image.open(ru_frames / first).convert("1"), Image.open(en_frames / first).convert("1")
    box = ImageChops.difference(a, b).getbbox()
    assert box is not None and box[2] - box[0] > 30, box
    if os.environ.get("GAMMONCLOCK_KEEP_FRAME"):      # to look at it
        a.resize((512, 256), Image.Resampling.NEAREST).save(os.environ["GAMMONCLOCK_KEEP_FRAME"])

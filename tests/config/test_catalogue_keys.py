"""Every catalogue id the firmware names in its source exists in its catalogue (issue 25): a
`Problem("…")`, `words.say("…")` or `Counted("…")` in words.py's, a panel's `Text("…")` or
`say("…")` of hardware/ in hardware/texts.py's. A Problem is made where the error is raised, so
an id missing from the catalogue would fail only there, in the field; read here, it fails now.
(An id put together at run time, f"cfg.pin_hash.{code}", is checked by the tests of its place.)"""

from __future__ import annotations

import re
from pathlib import Path

from gammonclock.hardware.texts import TEXTS
from gammonclock.words import WORDS

PACKAGE = Path(__file__).resolve().parents[2] / "firmware" / "gammonclock"
WORD_IDS = re.compile(r"""(?:\bProblem|\bwords\.say)\(\s*["']([a-z_]+\.[^"'{}]+)["']""")
NOUNS = re.compile(r"""\bCounted\(\s*["']([a-z_]+)["']""")
PANEL_IDS = re.compile(r"""\bText\(\s*["']([a-z_]+\.[^"'{}]+)["']""")


def sources() -> list[Path]:
    return sorted(PACKAGE.rglob("*.py"))


def test_every_words_id_in_the_source_is_in_the_catalogue() -> None:
    named = {(path.relative_to(PACKAGE).as_posix(), key) for path in sources()
             for key in WORD_IDS.findall(path.read_text(encoding="utf-8"))}
    assert len(named) > 100
    missing = sorted((where, key) for where, key in named if key not in WORDS)
    assert missing == []
    nouns = {noun for path in sources() for noun in NOUNS.findall(path.read_text("utf-8"))}
    assert nouns and all(f"{noun}.many" in WORDS for noun in nouns), nouns


def test_every_panel_text_id_in_the_source_is_in_the_panels_catalogue() -> None:
    named = {(path.relative_to(PACKAGE).as_posix(), key) for path in sources()
             for key in PANEL_IDS.findall(path.read_text(encoding="utf-8"))}
    assert any(key == "start.journal" for _, key in named)
    missing = sorted((where, key) for where, key in named if key not in TEXTS)
    assert missing == []

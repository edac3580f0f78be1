"""The hall's page in another language (`gammonclock hall --language`, `LanguageHall`) and a
Russian page checked for English: every text node a person sees (`VISIBLE_TEXT`, run in the
page), `no_english` (no Latin word but the tables' ids and journals, and no word of the English
catalogue), and the folder its screenshots go to (`shots`). The Russian page's and the Russian
archive's tests use them; the `hall_ru`/`hall_en` fixtures are tests/hall/conftest.py's."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

from gammonclock.hall.page import page_texts
from gammonclock.hall.web import TOKEN, make_app
from hall_web_helpers import RunningHall
from mqtt_helpers import Broker

# Latin words a Russian page may show: the tables' ids and journals (names, not words), the
# hall's command-line options (`--keys-dir`), and each language's name in the switch.
NOT_WORDS = re.compile(r"table-\d+|match-\d+\.jsonl|--[a-z]+(?:-[a-z]+)*")
LATIN_WORD = re.compile(r"[A-Za-z]{2,}")
# Every text node the person sees (not a <select>'s options, nor <code>: the commands sent and
# the journal's own event names are the protocol's, not the page's words).
VISIBLE_TEXT = """(root) => {
  const out = [];
  const walker = document.createTreeWalker(root || document.body, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const parent = node.parentElement;
    if (!parent || parent.closest("select, code, script, style")) continue;
    if (!parent.checkVisibility()) continue;
    if (node.textContent.trim()) out.push(node.textContent.trim());
  }
  return out.join("\\n");
}"""


def shots(tmp_path: Path) -> Path:
    folder = Path(os.environ.get("GAMMONCLOCK_SCREENSHOTS", tmp_path))
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def english_words(texts: dict[str, Any]) -> set[str]:
    """The English catalogue's words (3 letters or more) that are not also the Russian's."""
    words: set[str] = set()
    for key, text in texts["en"].items():
        values = text.values() if isinstance(text, dict) else [text]
        theirs = json.dumps(texts["ru"][key], ensure_ascii=False)
        for value in values:
            plain = re.sub(r"\{\w+\}", " ", value)
            words |= {w for w in re.findall(r"[A-Za-z]{3,}", plain) if w not in theirs}
    return words


def no_english(text: str, where: str, allowed: tuple[str, ...] = ()) -> None:
    """TEXT (a Russian page's) holds no Latin word but the tables' ids and ALLOWED (data)."""
    rest = NOT_WORDS.sub(" ", text)
    for word in allowed:
        rest = rest.replace(word, " ")
    found = LATIN_WORD.findall(rest)
    assert found == [], f"{where}: English on the Russian page: {found}\n{text}"
    catalogue = english_words(page_texts())
    assert not [w for w in re.findall(r"[A-Za-z]+", rest) if w in catalogue], where


class LanguageHall(RunningHall):
    """`gammonclock hall --language LANGUAGE` in a thread of its own."""

    def __init__(self, broker: Broker, archive: Path, language: str,
                 keys_dir: Path | None = None) -> None:
        super().__init__(broker, archive, keys_dir)
        self.app = make_app(self.hall, language=language)
        self.token = self.app[TOKEN]


def settled_in_russian(page: Any, selector: str, where: str,
                       allowed: tuple[str, ...] = ()) -> None:
    """The part of the page at SELECTOR holds no English once it has settled: a part the page
    draws again after the language switched (a dialog refetching its rows) is waited for, up to
    PAGE_WAIT_MS, then held to `no_english` (which says what English is left)."""
    import time

    from hall_web_helpers import PAGE_WAIT_MS

    deadline = time.monotonic() + PAGE_WAIT_MS / 1000
    while True:
        text = page.evaluate(VISIBLE_TEXT, page.query_selector(selector))
        try:
            no_english(text, where, allowed)
            return
        except AssertionError:
            if time.monotonic() > deadline:
                raise
        page.wait_for_timeout(100)


def language_hall(broker: Broker, tmp_path: Path, language: str) -> LanguageHall:
    return LanguageHall(broker, tmp_path / f"archive-{language}", language)

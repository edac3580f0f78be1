"""What the director's page and the spectators' pages share: the static files, the languages and
their checked text catalogues (static/*.json), and the app's key to the hall."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from aiohttp import web

from gammonclock.errors import GammonclockError

from .server import Hall

STATIC = Path(__file__).with_name("static")

LANGUAGES = ("en", "ru")

HALL: web.AppKey[Hall] = web.AppKey("hall", Hall)

class TextsError(GammonclockError, ValueError):
    """The page's catalogue is not whole: a text missing in a language, or not text."""

def page_texts(name: str = "texts.json") -> dict[str, dict[str, Any]]:
    """The page's texts (or another catalogue of static/, NAME), `{language: {key: text
    or {plural form: text}}}`, checked: every key in every language, each a string, or (a
    count's) an object of plural forms with `other`."""
    texts = json.loads((STATIC / name).read_text(encoding="utf-8"))
    if not isinstance(texts, dict) or sorted(texts) != sorted(LANGUAGES):
        raise TextsError(f"{name}: languages {sorted(texts)}, not {sorted(LANGUAGES)}")
    keys = set(texts["en"])
    for language, table in texts.items():
        if set(table) != keys:
            raise TextsError(f"{name}: {language} lacks {sorted(keys - set(table))} and "
                             f"has {sorted(set(table) - keys)} only")
        for key, text in table.items():
            plural = isinstance(text, dict) and "other" in text and all(
                isinstance(v, str) for v in text.values())
            if not (isinstance(text, str) or plural):
                raise TextsError(f"{name}: {language} {key}: not a text")
    return texts

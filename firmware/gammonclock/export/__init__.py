"""The arbiter's export of a match after play (SPEC §11): CSV of turns, JSON, an HTML report.

    export_journal("journals/match-20240501-101500.jsonl", "html", "report.html")

Everything comes from replaying the journal through the engine (`replay`), so the export
shows exactly the match the clock kept: turns that a hold or an undo retracted are not in it, and
the final state is the replay's. CSV and JSON need nothing beyond the firmware; the HTML report
and the dice statistics need the `report` extra (matplotlib, scipy).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from pathlib import Path
from typing import Literal

from gammonclock.config.loading import ConfigError
from gammonclock.errors import GammonclockError
from gammonclock.journal.records import JournalError
from gammonclock.journal.replay import verify_and_replay
from gammonclock.journal.verify import Verdict
from gammonclock.words import LANGUAGES

from .model import MatchRecord
from .text import NO_KEY_GIVEN
from .turns import load_match

__all__ = ["FORMATS", "ExportError", "MatchRecord", "TamperedJournal", "check_journal",
           "export_journal", "load_match", "render", "read_match"]

log = logging.getLogger(__name__)

Format = Literal["csv", "json", "html"]
FORMATS: tuple[str, ...] = ("csv", "json", "html")


class ExportError(GammonclockError):
    """A journal that cannot be exported, or an export that cannot be written; the message
    names the file and says why."""


class TamperedJournal(ExportError):
    """A journal that does not verify, not exported (SPEC §14.1): `verdict` says why; only
    `allow_tampered` writes it, marked."""

    def __init__(self, journal: Path, verdict: Verdict) -> None:
        super().__init__(f"{journal}: {verdict.words}; not exported (allow_tampered writes "
                         f"it, marked TAMPERED)")
        self.journal, self.verdict = journal, verdict


def check_journal(journal_path: str | Path, key: bytes | None,
                  no_check: str = NO_KEY_GIVEN) -> Verdict:
    """The verdict `gammonclock verify` gives the journal (`verify_and_replay`, as verify and
    the hall's archive check it): the chain always, the seals with the device `key` that made
    them (`no_check`: why there is none), each snapshot against the replay. Every export asks
    it first. Raises ExportError for a journal that cannot be read or holds a record this
    firmware does not understand."""
    try:
        return verify_and_replay(journal_path, key, no_key=no_check).verdict
    except JournalError as exc:
        raise ExportError(str(exc)) from None


def read_match(journal_path: str | Path, effects: bool = True) -> MatchRecord:
    """The match a journal holds; raises ExportError for a journal that is not one.
    `effects`: as `load_match` (the CSV needs none)."""
    try:
        match = load_match(journal_path, effects)
    except JournalError as exc:
        raise ExportError(str(exc)) from None
    except ConfigError as exc:
        raise ExportError(f"{journal_path}: the match config in its header is not valid:\n"
                          f"{exc}") from None
    for note in match.notes:
        log.warning("%s", note)
    return match


def render(match: MatchRecord, fmt: str, verdict: Verdict | None = None,
           no_check: str = NO_KEY_GIVEN, language: str | None = None) -> str:
    """The export of `match` in `fmt` as text; without a `verdict`, `no_check` says why the seals
    were not checked ("seal not checked: no device key given"). The report and the CSV's header
    are in `language` ("en", "ru"; None: the match's `[display] language`, SPEC §15); the JSON
    is a machine's, in English whatever the language."""
    if language is not None and language not in LANGUAGES:
        raise ExportError(f"unknown language {language!r}; use one of: {', '.join(LANGUAGES)}")
    renderers: dict[str, Callable[[], str]] = {
        "csv": lambda: _csv(match, language, verdict),
        "json": lambda: _json(match, verdict, no_check),
        "html": lambda: _html(match, verdict, no_check, language),
    }
    if fmt not in renderers:
        raise ExportError(f"unknown export format {fmt!r}; use one of: {', '.join(FORMATS)}")
    try:
        return renderers[fmt]()
    except ImportError as exc:
        raise ExportError(f"the {fmt} export needs matplotlib and scipy ({exc.name} is "
                          f"missing): pip install 'gammonclock[report]'") from None


def _csv(match: MatchRecord, language: str | None, verdict: Verdict | None) -> str:
    from .csv_out import render_csv
    return render_csv(match, language, verdict)


def _json(match: MatchRecord, verdict: Verdict | None, no_check: str) -> str:
    from .json_out import render_json
    return render_json(match, verdict, no_check)


def _html(match: MatchRecord, verdict: Verdict | None, no_check: str,
          language: str | None) -> str:
    from .html_report import render_html
    return render_html(match, verdict, no_check, language)


def export_journal(journal_path: str | Path, fmt: Format | str, out_path: str | Path, *,
                   key: bytes | None = None, no_check: str = NO_KEY_GIVEN,
                   language: str | None = None, allow_tampered: bool = False,
                   verdict: Verdict | None = None) -> Verdict:
    """Export the match in `journal_path` as `fmt` ("csv", "json" or "html") to `out_path`, and
    return the journal's verdict.

    The journal is checked first, in every format (SPEC §14.1): the verdict `gammonclock
    verify` gives (`check_journal`; `verdict` when the caller has it already): the chain
    always, the seals with the device `key` that made them; another device's key, or none
    (`no_check` says why), leaves them unchecked, and the export says so plainly. A journal
    that is TAMPERED raises TamperedJournal and nothing is written, unless `allow_tampered`:
    then it is written marked at its top (the CSV's first column, the JSON's `verdict`, the
    report's first lines). `language` ("en", "ru") overrides the match's `[display] language`
    for the report and the CSV. Raises ExportError with a clear message for a bad journal,
    format or output path. The file is written whole or not at all.
    """
    if fmt not in FORMATS:
        raise ExportError(f"unknown export format {fmt!r}; use one of: {', '.join(FORMATS)}")
    if language is not None and language not in LANGUAGES:
        raise ExportError(f"unknown language {language!r}; use one of: {', '.join(LANGUAGES)}")
    journal, out = Path(journal_path), Path(out_path)
    if out.exists() and journal.exists() and out.resolve() == journal.resolve():
        raise ExportError(f"{out}: that is the journal itself; choose another output file")
    if verdict is None:
        verdict = check_journal(journal, key, no_check)
    if not verdict.intact and not allow_tampered:
        raise TamperedJournal(journal, verdict)
    match = read_match(journal, effects=fmt != "csv")
    _write(out, render(match, fmt, verdict, no_check, language))
    return verdict


def _write(path: Path, text: str) -> None:
    """Write `text` to `path` through a temporary file in the same directory."""
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(tmp, "w", encoding="utf-8", newline="") as f:
            f.write(text)
        os.replace(tmp, path)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise ExportError(f"{path}: cannot write the export: {exc.strerror or exc}") from None

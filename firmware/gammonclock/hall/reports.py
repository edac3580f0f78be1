"""Each archived match's HTML report (issue 32): the clock's own export (`gammonclock export
--format html`, export/), made by the hall on demand for a journal its archive holds and has
found whole and untampered, cached next to the journal, and served by web (after_play.py).

- Only for a journal whose archive verdict is good (intact, or readable with its seals not
  checked: the report says so first, as the export does) and that is no cut-short copy. A
  TAMPERED or unreadable journal gets no report (`ReportRefused`, code `tampered`); the export
  checks the file again itself with the table's key and refuses it too if it changed since.
- Made in a worker thread of its own (one report at a time: the replay and the charts take
  seconds, never the loop's or the archive's threads), at most `REPORTS_WAITING` waiting
  (more: `busy`), each asked once however many pages ask for it. A page waits at most
  `REPORT_WAIT_S` (`slow`: asked again, it is served from the cache once made).
- Cached as `NAME-without-.jsonl.SHA.LANG.html` in the table's folder, SHA the first 16 hex
  digits of the journal's SHA-256: a journal set aside under its name by a longer copy never
  shows the shorter one's report. The archive lists `*.jsonl` only: a report is never taken
  for a journal.
"""

from __future__ import annotations

import asyncio
import enum
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from gammonclock.errors import GammonclockError
from gammonclock.export import ExportError, TamperedJournal, export_journal

from .archive import ArchiveError, Verified, read_table_key
from .results import file_sha256

REPORT_WAIT_S = 60.0         # a page waits this long for a report being made
REPORTS_WAITING = 8          # reports asked for and not made yet, at most
SHA_SHOWN = 16


class Refusal(enum.Enum):
    """Why the hall serves no report: each said on the page (`report.CODE` in texts.json)."""

    NOT_ARCHIVED = "not_archived"     # no such journal in the archive (404)
    TAMPERED = "tampered"             # its verdict is not good: TAMPERED, unreadable, cut short
    BUSY = "busy"                     # too many reports asked for at once (503)
    SLOW = "slow"                     # still being made (503: ask again)
    FAILED = "failed"                 # the export failed (500), `detail` says why


class ReportRefused(GammonclockError):
    def __init__(self, refusal: Refusal, detail: str = "") -> None:
        super().__init__(f"no report: {refusal.value}{': ' + detail if detail else ''}")
        self.refusal, self.detail = refusal, detail


def report_stem(journal: Path) -> str:
    return journal.name[: -len(".jsonl")]


def cached_reports(journal: Path, sha256: str) -> list[Path]:
    """The reports made of this very journal (its SHA-256), in any language."""
    return sorted(journal.parent.glob(f"{report_stem(journal)}.{sha256[:SHA_SHOWN]}.*.html"))


def good_for_report(verdict: Verified) -> bool:
    return verdict.ok and not verdict.tampered and not verdict.cut_short


class Reports:
    """The reports made and being made; `report` gives the path of one."""

    def __init__(self, keys_dir: Path | None) -> None:
        self.keys_dir = keys_dir
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="hall-report")
        self._making: dict[tuple[str, str], asyncio.Future[Path]] = {}

    async def report(self, verdict: Verified | None, lang: str) -> Path:
        """The report of the archived journal VERDICT is of, in LANG, made if not cached;
        ReportRefused says why there is none."""
        if verdict is None:
            raise ReportRefused(Refusal.NOT_ARCHIVED)
        if not good_for_report(verdict):
            raise ReportRefused(Refusal.TAMPERED)
        key = (verdict.path, lang)
        future = self._making.get(key)
        if future is None:
            if len(self._making) >= REPORTS_WAITING:
                raise ReportRefused(Refusal.BUSY)
            loop = asyncio.get_running_loop()
            future = loop.run_in_executor(self._pool, self._make, verdict, lang)
            self._making[key] = future
            future.add_done_callback(lambda done: self._done(key, done))
        try:
            return await asyncio.wait_for(asyncio.shield(future), REPORT_WAIT_S)
        except TimeoutError:
            raise ReportRefused(Refusal.SLOW) from None

    def _done(self, key: tuple[str, str], done: asyncio.Future[Path]) -> None:
        self._making.pop(key, None)
        if not done.cancelled():
            done.exception()         # retrieved: a page that stopped waiting is told nothing

    def _make(self, verdict: Verified, lang: str) -> Path:
        """The report, from the cache or made now (in the reports' thread)."""
        journal = Path(verdict.path)
        try:
            sha = file_sha256(journal)
        except OSError as exc:
            raise ReportRefused(Refusal.NOT_ARCHIVED, exc.strerror or "") from None
        out = journal.with_name(f"{report_stem(journal)}.{sha[:SHA_SHOWN]}.{lang}.html")
        if out.is_file():
            return out
        try:
            key = read_table_key(self.keys_dir, verdict.table)
            export_journal(journal, "html", out, key=key, language=lang)
        except TamperedJournal:
            raise ReportRefused(Refusal.TAMPERED) from None
        except ReportRefused:
            raise
        except (ExportError, ArchiveError, GammonclockError, ValueError, KeyError, TypeError,
                RecursionError) as exc:
            raise ReportRefused(Refusal.FAILED, str(exc)[:300]) from None
        return out

    def close(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)

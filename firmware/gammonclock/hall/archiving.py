"""The intake of each table's finished journals (archive.py writes and verifies one): one journal
of a table archived at a time and a few waiting, each parsed, written and verified in a worker
thread, its result collected (results.py), its verdict kept for the archive list, and listed as
archived in the table's ack (acks.py) only once written and checked and not cut short.
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from collections.abc import Callable, Coroutine
from dataclasses import replace
from pathlib import Path
from typing import Any

from .acks import Acks
from .archive import (
    ArchiveError,
    Verified,
    archived,
    journal_message,
    journal_of,
    store_journal,
    verify_archived,
)
from .results import Result, Results, collect
from .view import HallView

log = logging.getLogger("gammonclock.hall")

JOURNALS_WAITING = 4         # a table's finished journals waiting while one is archived


class Archiving:
    """The archive's verdicts (`archive`, by path) and the journals on their way there."""

    def __init__(self, folder: Path, keys_dir: Path | None, prefix: str, view: HallView,
                 results: Results, acks: Acks, changed: Callable[[str], None],
                 archive_changed: Callable[[Verified], None],
                 spawn: Callable[[Coroutine[Any, Any, Any]], None]) -> None:
        self.folder = folder            # the archive's
        self.keys_dir = keys_dir
        self.prefix = prefix
        self.view = view
        self.results = results
        self.acks = acks
        self.changed = changed          # a table's card changed
        self._archive_changed = archive_changed     # the pages' archive lists
        self.spawn = spawn
        self.archive: dict[str, Verified] = {}          # by path
        # One journal of a table archived at a time (each up to 16 MiB, parsed and written in a
        # worker thread), and at most JOURNALS_WAITING more, in order: beyond that the oldest
        # waiting is dropped (the table sends what was not acknowledged again), so a table's
        # journals never pile up, and an honest table's few are all taken at once.
        self._archiving: set[str] = set()
        self._journal_next: dict[str, deque[tuple[bytes, dict[str, int]]]] = {}

    def journal_in(self, table: str, payload: bytes, highest: dict[str, int]) -> None:
        if table in self._archiving:
            self._journal_next.setdefault(table, deque(maxlen=JOURNALS_WAITING)).append(
                (payload, highest))
            return
        self._archiving.add(table)
        self.spawn(self._archive_in_turn(table, payload, highest))

    async def _archive_in_turn(self, table: str, payload: bytes, highest: dict[str, int]
                               ) -> None:
        try:
            while True:
                await self._archive(table, payload, highest)
                waiting = self._journal_next.get(table)
                if not waiting:
                    return
                payload, highest = waiting.popleft()
        finally:
            self._archiving.discard(table)
            self._journal_next.pop(table, None)

    async def _archive(self, table: str, payload: bytes, highest: dict[str, int]) -> None:
        """Write and verify a finished journal; acknowledged (listed as archived in the table's
        ack) only once written and checked (whatever the verdict: a TAMPERED journal sent again
        is TAMPERED again; the card says it is archived, NOT verified), and only when it is not
        shorter than the events already seen of it: else the table sends it again, and the very
        same short journal sent again is archived cut short (the table has no more)."""
        try:
            # Its size is checked before any of it is parsed, and the parse is off the loop.
            message = await asyncio.to_thread(journal_message, table, payload)
            name, text, records = message.name, message.text, message.records
            seen = highest.get(name, -1)
            short = message.last < seen
            stored = await asyncio.to_thread(store_journal, self.folder, table, name,
                                             text, cut_short=short)
        except (ValueError, KeyError, TypeError, ArchiveError, OSError) as exc:
            why = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
            log.warning("%s/%s/journal: not archived (not acknowledged: the table sends it "
                        "again): %s", self.prefix, table, why)
            code = exc.code if isinstance(exc, ArchiveError) else ""
            fields = exc.fields if isinstance(exc, ArchiveError) else {}
            self.view.note_archive(table, f"journal not archived: {why}",
                                   ("archive_failed", str(why), code, str(fields.get("name", "")),
                                    int(fields.get("size", 0)), int(fields.get("max", 0))))
            self.changed(table)
            return
        if stored.set_aside is not None:
            was, now = stored.set_aside
            self.archive.pop(str(was), None)
            self.results.forget(str(was))
            await self._verify(table, now)
        if short:
            verdict = await self._verify(table, stored.path, note=False)
            said = f"cut short: {records} of {seen + 1} records"
            # The very same short journal again (it was on disk already): the table has no more
            # (a power cut took its tail). Archived as it is, so that its next journals go on.
            final = not stored.new
            if final:
                said = (f"archived cut short, NOT verified: {records} of {seen + 1} records (sent "
                        f"again the same: the table has no more)")
            cut = {"code": "final" if final else "received", "records": records, "of": seen + 1}
            self.archive[str(stored.path)] = replace(verdict, ok=False, cut_short=True,
                                                     message=f"{said}; {verdict.message}",
                                                     cut=cut)
            log.warning("%s/%s/journal: %s %s (the hall has seen seq %d of it); kept as %s, %s",
                        self.prefix, table, name, said, seen, stored.path.name,
                        "acknowledged" if final else "not acknowledged: the table sends it "
                        "again, and the same again is archived as it is")
            self.view.note_archive(table, f"journal {name} {said}",
                                   ("archive_cut_short_final" if final else "archive_cut_short",
                                    name, records, seen + 1))
            self.changed(table)
            self._archive_changed(self.archive[str(stored.path)])
            if not final:
                return
            if name in self.acks.position(table).archived:
                self.acks.say_again(table)       # sent again: the table lacks the ack
        elif stored.new or str(stored.path) not in self.archive:
            await self._verify(table, stored.path)
        elif name in self.acks.position(table).archived:
            self.acks.say_again(table)       # sent again: the table lacks the ack; re-say
        self.acks.position(table).note_archived(name)
        self.acks.ack_soon(table, at_once=True)

    async def _verify(self, table: str, path: Path, note: bool = True) -> Verified:
        verdict, result = await asyncio.to_thread(self._verify_and_collect, path, table)
        self.archive[str(path)] = verdict
        if result is not None and not self.results.take(str(path), result):
            log.warning("%s: its result is not collected: the hall holds %d results already",
                        path, len(self.results.by_path))
        if not note:
            pass                             # a cut-short copy: the caller says what it is
        elif verdict.verified:
            log.info("archived %s, verified: %s", path, verdict.message)
        elif verdict.ok:                     # no key to check its seals with
            log.info("archived %s, NOT verified: %s", path, verdict.message)
        else:
            log.warning("archived %s, NOT verified: %s", path, verdict.message)
        if not verdict.ok and note:
            self.view.note_archive(table, f"journal {verdict.name} archived, NOT verified: "
                                          f"{verdict.message}",
                                   ("archive_not_verified", verdict.name,
                                    *_flat(verdict.say)))
            self.changed(table)
        if note:
            self._archive_changed(verdict)
        return verdict

    def _verify_and_collect(self, path: Path, table: str) -> tuple[Verified, Result | None]:
        """The verdict on an archived journal and the result it holds, recomputed from it (in
        a worker thread)."""
        verdict = verify_archived(path, table, self.keys_dir)
        return verdict, collect(path, verdict)

    async def verify_existing(self) -> None:
        for table, path in await asyncio.to_thread(archived, self.folder):
            if str(path) not in self.archive:
                verdict = await self._verify(table, path)
                if not verdict.cut_short and journal_of(path.name) == path.name:
                    self.acks.position(table).note_archived(path.name)

    def archive_list(self) -> list[dict[str, Any]]:
        """Every archived journal; a journal's complete copy first among its copies (a copy
        set aside as cut short after it)."""
        return [v.as_json() for v in sorted(
            self.archive.values(),
            key=lambda v: (v.table, v.journal or v.name, v.cut_short,
                           v.name != (v.journal or v.name), v.name))]


def _flat(say: dict[str, Any]) -> tuple[str, int, str, str]:
    """A verdict's code and fields as an alert's parameters: code, records, key, detail."""
    records = say.get("records")
    return (str(say.get("code", "")), records if isinstance(records, int) else 0,
            str(say.get("key", "")), str(say.get("detail", "")))

"""What the clock does when a USB stick is mounted (SPEC §11, §13.3): the journals and their
exports copied to it, then a dead clock's match on it offered (never loaded: the arbiter takes
it, SPEC §13.5, §14.1) or the stick's next match loaded, then the panels say what was done."""

from __future__ import annotations

import logging
import threading
from pathlib import Path
from typing import TYPE_CHECKING

from gammonclock import words
from gammonclock.config import problems
from gammonclock.core.match_state import Phase
from gammonclock.hardware.texts import Text
from gammonclock.hardware.views import message_fits
from gammonclock.journal.files import journal_heads, journal_order
from gammonclock.journal.records import JournalError

from .lifecycle import (
    LoadOutcome,
    Table,
    _game_on,
    load_next_match,
    run_on_loop,
    table_language,
)
from .service import ClockService
from .usb_stick import StickReport

if TYPE_CHECKING:
    from .provisioning import Provisioning, StickSaid

log = logging.getLogger(__name__)


class StickHandler:
    """What the clock does when a stick is mounted (the `usb-stick DIR` request): copy the
    journals and their exports to the stick (on the asking thread: the copy never holds up the
    clock's loop), then offer the dead clock's match the stick carries (`continuation.
    offer_from_stick`: a later stick's offer replaces it) or else load the stick's next match
    on the loop, then say on the panels what was done. One stick at a time.

    A provisioning stick (`gammonclock/provision/device.toml`, issue 32) is for that alone:
    after the export, `provisioning` takes, offers or refuses it, and no continuation or next
    match is read from it."""

    def __init__(self, service: ClockService, table: Table,
                 provisioning: Provisioning | None = None) -> None:
        self.service = service
        self.table = table
        self.provisioning = provisioning
        self._one_at_a_time = threading.Lock()

    def __call__(self, folder: Path) -> dict[str, object]:
        from .usb_stick import StickError, export_to_stick, next_match_on_stick

        with self._one_at_a_time:
            lang = table_language(self.service, self.table)
            finished, in_progress = self._journals()
            report = export_to_stick(folder, self.table.table_id, finished, in_progress,
                                     self._key())
            for note in report.notes:
                log.info("USB stick: %s", note)
            said, ok = [report.summary(lang)], report.problem is None
            shown = [_stick_words(report, lang)]     # the panels', in their language
            from .continuation import offer_from_stick
            # A provisioning stick (issue 32), else a dead clock's match, only offered (SPEC
            # §13.5): what came of it first, the export's line after it when it fits whole
            # (the reply has it all the same).
            came = self._provision(folder, lang) \
                or offer_from_stick(self.service, self.table, folder)
            if came is not None:
                ok = ok and came.ok
                said += came.said
                lines = [*came.shown, *shown]
                if not message_fits(lines, lang):
                    lines = came.shown
                title = came.title
                run_on_loop(self.service, lambda: self._announce(lines, title))
                return {"ok": ok, "outcome": "acted" if ok else "refused", "said": said,
                        "state": self.service.status()}
            try:
                found = next_match_on_stick(folder, self.table.table_id)
            except StickError as exc:
                found, ok = None, False
                why = problems.said(problems.message_of(exc), lang)
                said.append(words.say("load.stick_next", lang, error=why))
                shown.append(Text("stick.next_refused", why=why))
            if found is not None:
                path, text = found
                done, outcome = run_on_loop(self.service, lambda: load_next_match(
                    self.service, self.table, text, str(path), force=False, source="usb"))
                ok = ok and done and isinstance(outcome, LoadOutcome) and outcome.ok
                said += self._load_words(done, outcome, lang)
                shown.append(_load_text(done, outcome, lang))
            else:
                said.append(words.say("load.stick_none", lang, table=self.table.table_id))
                shown.append(Text("stick.no_match"))
            run_on_loop(self.service, lambda: self._announce(shown))
            return {"ok": ok, "outcome": "acted" if ok else "refused", "said": said,
                    "state": self.service.status()}

    def _provision(self, folder: Path, lang: str) -> StickSaid | None:
        """What a provisioning stick came to (None: the stick is not one)."""
        from .provision import ProvisionRefused, read_provision
        from .provisioning import TITLE_REFUSED, StickSaid  # noqa: F811 (at run time too)

        try:
            found = read_provision(folder)
        except ProvisionRefused as exc:
            why = problems.said(problems.message_of(exc), lang)
            log.warning("USB stick: provisioning refused: %s", exc)
            return StickSaid(False, [words.say("prov.refused", lang, why=why)], TITLE_REFUSED,
                             [Text("stick.provision_refused", why=why.splitlines()[0])])
        if found is None:
            return None
        if self.provisioning is None:
            why = words.say("prov.cannot", lang, error="no hall link on this device")
            return StickSaid(False, [why], TITLE_REFUSED, [Text("stick.provision_refused",
                                                                 why=why)])
        return self.provisioning.stick(folder, found)

    def _journals(self) -> tuple[list[Path], Path | None]:
        """The finished journals, and the journal of the match in progress (None: none)."""
        session = self.service.session       # a reference read once: the loop may swap it
        current = None
        if session is not None and session.journal is not None:
            current = Path(session.journal.path)
            if session.engine.match.phase is Phase.MATCH_OVER:
                current = None
        heads = journal_order(journal_heads(self.table.state_dir))
        finished = [head.path for head in heads if head.path != current and head.path.exists()]
        return finished, current if current is not None and current.exists() else None

    def _key(self) -> bytes | None:
        try:
            return self.table.key_of()
        except JournalError:
            return None        # the exports then say the seal was not checked

    @staticmethod
    def _load_words(done: bool, outcome: object, lang: str = "en") -> list[str]:
        if not done or not isinstance(outcome, LoadOutcome):
            return [words.say("load.not_loaded", lang,
                              why=words.say("load.not_in_time", lang))]
        if outcome.ok:
            return [outcome.summary] if outcome.summary is not None else []
        return [words.say("load.not_loaded", outcome.lang,
                          why=(outcome.error or "").splitlines()[0])]

    def _announce(self, said: list[Text], title: str | Text = "USB STICK") -> None:
        """The panels say what was done: over the screen for a while, or, in a game, as a
        notice that leaves the clocks in view."""
        from gammonclock.hardware.views import message_view

        if _game_on(self.service):
            self.service.notify(said[0])
        else:
            self.service.show_message(message_view(title, list[str](said)))

def _stick_words(report: StickReport, lang: str = "en") -> Text:
    """What a stick's export did, for the panels (said in their language, `lang`)."""
    if report.problem is not None:
        return Text("stick.problem", problem=problems.said(report.problem, lang))
    if report.nothing_new:
        return Text("stick.nothing_new", n=report.exported)
    key = "stick.exported_running" if report.in_progress is not None else "stick.exported"
    return Text(key, n=report.exported)

def _load_text(done: bool, outcome: object, lang: str = "en") -> Text:
    """What became of a stick's next match, for the panels (the refusal said in the table's
    language, which is the panels')."""
    if not done or not isinstance(outcome, LoadOutcome):
        return Text("stick.next_refused", why=words.say("load.not_in_time", lang))
    if outcome.ok and outcome.players is not None:
        return Text("stick.next_kept" if outcome.kept else "stick.next_loaded",
                    match=outcome.players)
    return Text("stick.next_refused", why=(outcome.error or "").splitlines()[0])

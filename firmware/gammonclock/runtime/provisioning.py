"""Who makes a provisioning stick count (issue 32, SPEC §14.1: the stick carries files, not
authority; docs/decisions.md "A provisioning stick"), and the running clock made the table it
brings, its hall link started with it, with no restart.

- No arbiter's PIN on this clock: taken at once (first boot), unless a game is in progress.
- A PIN: only offered. With a match loaded the offer is journaled (`ProvisionOffered`, the menu
  lists TABLE FROM STICK while no game is in progress) and the arbiter takes it there after the
  PIN; with none, on the socket (`gammonclock arbiter provision`). The offer is held in memory,
  the stick's files with it (read whole when it was plugged in).
- A game in progress: refused with the reason (plug it in again after the match). An offer made
  before stands for after the match.

Taking it (`runtime/provision.py`) writes the new set into the state folder; the table then is
the one it names (`Table.device`, read again with `config.loading.with_provisioned`), the key
the stick's when adopted, and the hall link is closed and started again with the new `[hall]`
(`restart_link`, off the loop). The kept key goes back on the stick at once when it is still
mounted, else when the same stick is plugged in again.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from gammonclock import words
from gammonclock.config.loading import ConfigError, DeviceFile, HallConfig, with_provisioned
from gammonclock.config.problems import Problem, said
from gammonclock.core.match import ProvisionOffered
from gammonclock.core.match_state import ProvisionOffer
from gammonclock.core.reasons import Reason
from gammonclock.hardware.texts import Text
from gammonclock.journal.records import JournalError

from .lifecycle import LoadOutcome, Table, device_key, in_progress, run_on_loop, table_language
from .provision import (
    KeyFate,
    StickProvision,
    Taken,
    applied,
    clear_return_pending,
    return_key,
    return_pending,
    sealed_journals,
    take_provision,
)
from .session import Session

if TYPE_CHECKING:
    from .service import ClockService

log = logging.getLogger(__name__)

TITLE_OFFER = "PROVISIONING STICK"
TITLE_REFUSED = "STICK REFUSED"


@dataclass(frozen=True)
class StickSaid:
    """What a provisioning stick came to: whether it went as it should, the lines for the
    arbiter (the table's language), and the panels' screen (a title and lines)."""

    ok: bool
    said: list[str]
    title: str
    shown: list[Text]


@dataclass(frozen=True)
class HeldProvision:
    """A provisioning stick offered here: its files, and the match it was offered to (None:
    offered while idle, for the socket)."""

    found: StickProvision
    session: Session | None
    offer: ProvisionOffer


class Provisioning:
    """The clock's side of a provisioning stick: the offer it holds, taking it, and making the
    running clock the table it brings. `base` is device.toml as read (the provisioned set is
    laid over it again after each stick); `restart_link` closes the hall link and starts it
    with a `[hall]` (None: none), on a thread of its own."""

    def __init__(self, service: Callable[[], ClockService], table: Table, base: DeviceFile,
                 restart_link: Callable[[HallConfig | None], None]) -> None:
        self.service = service
        self.table = table
        self.base = base
        self.restart_link = restart_link
        self._lock = threading.Lock()
        self._held: HeldProvision | None = None

    # --- a stick plugged in (the stick's thread) -----------------------------------------------

    def stick(self, folder: Path, found: StickProvision) -> StickSaid:
        service = self.service()
        lang = table_language(service, self.table)
        if applied(self.table.state_dir).get("digest") == found.digest:
            return self._again(folder, found, lang)
        done, outcome = run_on_loop(service, lambda: self._decide(found))
        if not done or not isinstance(outcome, (StickSaid, Taken)):
            why = words.say("load.not_in_time", lang)
            return StickSaid(False, [words.say("prov.refused", lang, why=why)], TITLE_REFUSED,
                             [Text("stick.provision_refused", why=why)])
        if isinstance(outcome, StickSaid):
            return outcome
        return self._taken(outcome, found, lang, stick=folder)

    def _again(self, folder: Path, found: StickProvision, lang: str) -> StickSaid:
        """The very set this clock took: nothing changes; a key still to give back goes now."""
        said = [words.say("prov.already", lang, table=found.table)]
        shown = [Text("stick.provision_already", table=found.table)]
        ok = True
        if return_pending(self.table.state_dir):
            problem = self._give_key(folder)
            if problem is None:
                clear_return_pending(self.table.state_dir)
                said.append(words.say("prov.returned", lang))
                shown.append(Text("stick.key_returned"))
            else:
                ok = False
                said.append(words.say("prov.key_not_returned", lang, problem=said_in(problem,
                                                                                      lang)))
        return StickSaid(ok, said, "USB STICK", shown)

    def _decide(self, found: StickProvision) -> StickSaid | Taken:
        """On the loop: take it (no PIN), offer it (a PIN), or refuse it (a game on)."""
        service = self.service()
        lang = table_language(service, self.table)
        session = service.session
        if session is not None and in_progress(session.engine):
            match = session.engine.match
            score = f"{words.number(match.score.left, lang)}-" \
                    f"{words.number(match.score.right, lang)}"
            log.warning("USB stick: %s while a match is in progress here: refused",
                        found.describe())
            return StickSaid(False, [words.say("prov.in_progress", lang, game=match.game,
                                               score=score)],
                             TITLE_REFUSED, [Text("stick.provision_in_progress")])
        if self._fresh():
            try:
                return self._take(found, "stick, no arbiter's PIN",
                                  may_adopt=session is None, return_later=False)
            except JournalError as exc:
                return self._cannot(exc, lang)
        offer = ProvisionOffer(found.table, found.host, found.digest)
        with self._lock:
            self._held = HeldProvision(found, session, offer)
        said = [words.say("prov.offered", lang, table=found.table, broker=found.broker,
                          user=found.username)]
        shown = [Text("stick.provision_offer", table=found.table, host=found.host)]
        if session is None:
            said.append(words.say("prov.offer_idle", lang))
            shown.append(Text("stick.provision_idle"))
        else:
            t = max(session.engine.now, service.engine_time(service.clock_ns()))
            service.apply(ProvisionOffered(t, offer))     # journaled: the menu lists it
            said.append(words.say("prov.offer_how", lang))
            shown.append(Text("stick.provision_how"))
        log.info("USB stick: %s offered here", found.describe())
        return StickSaid(True, said, TITLE_OFFER, shown)

    def _fresh(self) -> bool:
        """Whether a stick counts at once: only on a clock at its first boot, with no arbiter's
        PIN, no provisioning taken before and no journal sealed by its key. Anything else has
        something to lose (its hall, its key going out on the stick): the arbiter confirms it
        (the menu after the PIN, or the arbiters' group on the socket), SPEC §14.1."""
        if self.table.device.device.arbiter_pin is not None or applied(self.table.state_dir):
            return False
        try:
            key_now: bytes | None = self.table.key_of()
        except JournalError:
            return False
        return not sealed_journals(self.table.state_dir, key_now)

    # --- the arbiter takes it (the menu after the PIN, on the loop; or the socket) -----------

    def confirmed(self, offer: ProvisionOffer | None, how: str) -> LoadOutcome:
        """Take the offer the arbiter confirmed (`offer`; None: the socket's, whatever is held),
        on the loop. The stick is gone by now: a kept key goes back when it is plugged in
        again."""
        service = self.service()
        lang = table_language(service, self.table)
        session = service.session
        with self._lock:
            held = self._held
        if held is None or (offer is not None and held.offer != offer) \
                or (held.session is not None and held.session is not session):
            if session is not None and session.engine.match.provision_offer is not None:
                t = max(session.engine.now, service.engine_time(service.clock_ns()))
                service.apply(ProvisionOffered(t, None))      # the menu lists it no more
            service.notify(Text("notice.stick_offer_gone"))
            return LoadOutcome(False, [], words.say("prov.not_offered", lang),
                               Reason.NOTHING_OFFERED, lang=lang)
        if session is not None and in_progress(session.engine):
            match = session.engine.match
            score = f"{words.number(match.score.left, lang)}-" \
                    f"{words.number(match.score.right, lang)}"
            return LoadOutcome(False, [], words.say("prov.in_progress", lang, game=match.game,
                                                    score=score),
                               Reason.MATCH_IN_PROGRESS, lang=lang)
        try:
            taken = self._take(held.found, how, may_adopt=session is None, return_later=True)
        except JournalError as exc:
            service.notify(Text("notice.provision_refused"))
            return LoadOutcome(False, [], words.say("prov.cannot", lang, error=exc),
                               Reason.JOURNAL_NOT_WRITTEN, lang=lang)
        with self._lock:
            if self._held is held:
                self._held = None
        if session is not None and session.engine.match.provision_offer is not None:
            t = max(session.engine.now, service.engine_time(service.clock_ns()))
            service.apply(ProvisionOffered(t, None))          # taken: offered no more
        result = self._taken(taken, held.found, lang, stick=None)
        from gammonclock.hardware.views import message_view

        service.show_message(message_view(result.title, list[str](result.shown), lang=lang))
        return LoadOutcome(True, result.said, lang=lang)

    # --- taking it -----------------------------------------------------------------------------

    def _take(self, found: StickProvision, how: str, *, may_adopt: bool,
              return_later: bool) -> Taken:
        """On the loop: the new set written and made this clock's (the table, the key), the
        hall link restarted with it on a thread of its own. JournalError: nothing changed."""
        try:
            key_now: bytes | None = self.table.key_of()
        except JournalError:
            key_now = None
        taken = take_provision(self.table.state_dir, found, key_now, how, may_adopt=may_adopt,
                               return_later=return_later)
        try:
            device = with_provisioned(self.base, self.table.state_dir)
        except ConfigError as exc:     # written a moment ago: a bug, or the card failing
            log.error("%s", words.say("prov.broken", error=exc))
            return taken
        self.table.device = device
        if taken.key is KeyFate.ADOPTED:
            self.table.key_of = device_key(self.table.state_dir)
        hall = device.device.hall
        threading.Thread(target=self.restart_link, args=(hall,), name="hall-restart",
                         daemon=True).start()
        return taken

    def _taken(self, taken: Taken, found: StickProvision, lang: str, stick: Path | None
               ) -> StickSaid:
        said = [words.say("prov.taken", lang, table=found.table, broker=found.broker,
                          user=found.username)]
        title = Text("title.provisioned", table=found.table)
        ok = True
        if taken.key is KeyFate.ADOPTED:
            said.append(words.say("prov.key_adopted", lang))
            shown = [Text("stick.provisioned", host=found.host)]
        elif stick is None:
            said.append(words.say("prov.key_later", lang))
            shown = [Text("stick.provisioned_later", host=found.host)]
        else:
            problem = self._give_key(stick)
            if problem is None:
                said.append(words.say("prov.key_kept", lang))
                shown = [Text("stick.provisioned_kept", host=found.host)]
            else:     # the next plug of this stick gives it (the set says it is owed)
                ok = False
                said.append(words.say("prov.key_not_returned", lang,
                                      problem=said_in(problem, lang)))
                said.append(words.say("prov.key_later", lang))
                shown = [Text("stick.provisioned_later", host=found.host)]
                _owe_key(taken.folder)
        return StickSaid(ok, said, title, shown)

    def _give_key(self, stick: Path) -> Problem | None:
        try:
            key = self.table.key_of()
        except JournalError as exc:
            return Problem("prov.cannot", error=exc)
        return return_key(stick, self.table.table_id, key)

    @staticmethod
    def _cannot(exc: JournalError, lang: str) -> StickSaid:
        why = str(exc).splitlines()[0]
        return StickSaid(False, [words.say("prov.cannot", lang, error=why)], TITLE_REFUSED,
                         [Text("stick.provision_refused", why=why)])

    # --- the socket: `gammonclock arbiter provision` -------------------------------------------

    def socket_request(self) -> dict[str, object]:
        service = self.service()
        done, outcome = run_on_loop(service, lambda: self.confirmed(None, "socket"))
        lang = table_language(service, self.table)
        if not done or not isinstance(outcome, LoadOutcome):
            return {"ok": False, "outcome": "unknown",
                    "error": words.say("load.not_in_time", lang)}
        answer: dict[str, object] = {"ok": outcome.ok,
                                     "outcome": "acted" if outcome.ok else "refused",
                                     "said": outcome.said, "state": service.status()}
        if not outcome.ok:
            answer.update(refused=True, error=outcome.error,
                          reason=outcome.reason.value if outcome.reason else None)
        return answer


def said_in(problem: Problem | str, lang: str) -> str:
    return said(problem, lang)


def _owe_key(folder: Path) -> None:
    from .provision import RETURN_PENDING, _write_new

    try:
        _write_new(folder / RETURN_PENDING, b"")
    except OSError as exc:
        log.warning("%s: %s", folder, exc.strerror or exc)

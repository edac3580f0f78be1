"""A table's matches, one after another (SPEC §13.2): what the clock plays at boot, and how the
next match replaces the last.

    idle ──load──▶ ready (between_games, game 1) ──play──▶ … ──▶ match_over ──load──▶ ready …

At boot the newest journal's match is resumed, paused, if it is not over, whatever the match
file says now (a power cut never restarts a match); otherwise the match file is loaded, or the
clock is idle. A next match is accepted in idle, ready and match_over; in mid-match only when
forced, and then the current match first ends `abandoned` in its own journal. A match replaced
while ready (loaded, never started) ends `abandoned` too, so that no journal is left unfinished
behind a newer one. Each match has its own journal, named from its start time, the table and the
players; a journal is never deleted or overwritten.

`Table` makes the sessions; the service swaps them in on its own thread (`ClockService.load`).
"""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gammonclock import words
from gammonclock.config.loading import (
    Config,
    ConfigError,
    DeviceFile,
    device_pin,
    keyed_config,
    parse_match_config,
)
from gammonclock.config.problems import Problem, message_of
from gammonclock.core.engine import Engine
from gammonclock.core.match import StickOffered
from gammonclock.core.match_state import Phase, StickOffer
from gammonclock.core.pin import PinCheck, RedactError, pepper_of, redact_pin_as
from gammonclock.core.reasons import Reason
from gammonclock.core.rules import format_score
from gammonclock.hardware.texts import Text
from gammonclock.journal.files import (
    JournalHead,
    journal_header,
    journal_heads,
    journal_order,
    new_journal_path,
    next_match_no,
)
from gammonclock.journal.key import SECRET_FILE, KeyRefused, load_or_create_key
from gammonclock.journal.reader import read_header
from gammonclock.journal.records import JournalError, Stamp
from gammonclock.journal.replay import Replayed, replay_from_snapshot
from gammonclock.journal.writer import JournalWriter, open_or_defer

from .session import KeySource, Session, StampSource, resume
from .wallclock import wall_clock_synchronized

if TYPE_CHECKING:
    from .service import ClockService

log = logging.getLogger(__name__)

MAX_MATCH_FILE = 64 * 1024    # bytes: a match file is a few hundred
NAME_IN_FILE = 16             # characters of each player's name in a journal's file name


# --- what the clock refuses to start on --------------------------------------------------------

class StartRefused(JournalError):
    """The clock will not start a match on top of a problem it cannot judge: a bad device key,
    or a journal it cannot understand. The file is kept untouched; `panel` is the short text
    for the panels (a `Text`: English, said in the panels' language), and `release` gives up
    the state folder's lock."""

    def __init__(self, message: str, panel: str) -> None:
        super().__init__(message)
        self.panel = panel
        self.release: Callable[[], None] = lambda: None


def device_key(state_dir: str | Path) -> KeySource:
    """The device key, or, when it cannot be made now (a read-only or full card), a function
    that tries again (the journal that needs it is then deferred, and says why); a key file
    that is there but bad is refused."""
    try:
        key = load_or_create_key(state_dir)
    except KeyRefused as exc:
        raise StartRefused(str(exc), Text("start.key")) from None
    except JournalError:
        return lambda: load_or_create_key(state_dir)
    return lambda: key


def replay_for_resume(head: JournalHead, pepper: bytes | None = None) -> Replayed:
    """The match of the journal to resume; StartRefused when it cannot be understood, for a
    match must never silently start again at 0-0 beside an unfinished one. `pepper`: the
    device key's (`pin.pepper_of`), for the arbiter's PIN to be judged at the panels."""
    path = head.path
    try:
        if head.problem is not None:
            raise JournalError(head.problem)
        return replay_from_snapshot(path, pepper)
    except (JournalError, ConfigError) as exc:
        raise StartRefused(
            f"{exc}\nThe clock starts nothing while this journal stands: move {path.name} out "
            f"of {path.parent} (keep it for the arbiter) and restart the clock to start a new "
            f"match, or run a firmware that can read it to resume this one.",
            Text("start.journal")) from None


# --- names ------------------------------------------------------------------------------------

def _file_word(text: str, limit: int = NAME_IN_FILE) -> str:
    """`text` as part of a file name: letters (any alphabet) and digits kept, anything else one
    `_`; never empty."""
    word = re.sub(r"[\W_]+", "_", text, flags=re.UNICODE).strip("_")[:limit].strip("_")
    return word or "_"


def journal_path(state_dir: str | Path, wall_ns: int, table: str, config: Config) -> Path:
    """A new journal's path: `match-YYYYmmdd-HHMMSS-TABLE-LEFT-RIGHT.jsonl` (UTC), with `-2`,
    `-3`… when that name is taken (two matches loaded within a second)."""
    names = config.rules.names
    # The table id is a file name already (its config pattern); the names are anything.
    return new_journal_path(state_dir, wall_ns, f"-{table}-{_file_word(names.left)}-"
                                                f"{_file_word(names.right)}")


def match_words(config: Config, lang: str = "en") -> str:
    """The match in a few words, for the panels and replies: "Anna-Boris, 11 points";
    "Анна-Борис, 11 очков"."""
    rules = config.rules
    return f"{rules.names.left}-{rules.names.right}, {words.counted('points', rules.length, lang)}"


def table_language(service: ClockService, table: Table) -> str:
    """The language of what the table says about its next match (SPEC §15): the match's
    being played, else the device's (the panels' language, idle)."""
    session = service.session
    return words.language(session.language if session is not None
                          else table.device.device.language)


# --- the table --------------------------------------------------------------------------------

# A new journal: its path, header and stamp, and the match's config as the engine plays it
# (its PIN hashed with the same device key as the header's: `Table.plan`).
Planned = tuple[Path, dict[str, Any], Stamp, Config]


@dataclass
class Opened:
    """A match made ready to play: its session and the monotonic instant of its engine's 0."""

    session: Session
    origin: int
    notes: list[str]


@dataclass
class Boot:
    """What the clock plays after a boot: a match (resumed or new), or none (idle); `problem`
    is a match file refused at boot (shown on the panels for a while)."""

    opened: Opened | None
    notes: list[str]
    problem: ConfigError | None = None


def in_progress(engine: Engine) -> bool:
    """A match with a game started or counted as played (a forfeit), not over: a next match
    needs `--force` (`MatchState.in_progress`, the one place that decides it)."""
    return engine.match.in_progress


@dataclass(frozen=True)
class HeldOffer:
    """A dead clock's match a USB stick offers here (SPEC §13.5), held by the device: what the
    panels show and the journal records (`offer`), the match here it was offered to (`session`),
    and the work that continues it on the loop (`continuation.continue_match`, never forced)
    once the arbiter took it at the menu after the PIN."""

    offer: StickOffer
    session: Session
    continue_it: Callable[[], LoadOutcome]


class StickOffers:
    """The stick's offer a table holds: the last stick's, for the match it was offered to.
    A later stick's offer replaces it; a match replaced here (another one loaded, continued)
    leaves it behind, and it is dropped when next looked at. Taken on the loop, put by the
    stick's thread through the loop too (`continuation.offer_from_stick`); the lock is for
    readers elsewhere (a status)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._held: HeldOffer | None = None

    def hold(self, held: HeldOffer) -> None:
        with self._lock:
            self._held = held

    def held_for(self, session: Session | None) -> HeldOffer | None:
        """The offer held for `session` (the match on the clock now); one held for another
        match is dropped."""
        with self._lock:
            held = self._held
            if held is not None and (session is None or held.session is not session):
                self._held = held = None
            return held

    def drop(self, held: HeldOffer) -> None:
        with self._lock:
            if self._held is held:
                self._held = None


class Table:
    """The device's side of the lifecycle: reads match files on the device config, and makes
    each match's session and journal. Pure of the loop: the service calls it on its thread.
    It holds the continuation a USB stick offers (`stick_offers`), for the arbiter's menu."""

    def __init__(self, device: DeviceFile, state_dir: str | Path, key_of: KeySource,
                 stamps: StampSource, clock_ns: Callable[[], int]) -> None:
        self.device = device
        self.state_dir = Path(state_dir)
        self.key_of = key_of
        self.stamps = stamps
        self.clock_ns = clock_ns
        self.stick_offers = StickOffers()

    @property
    def table_id(self) -> str:
        return self.device.device.table_id

    def pepper(self) -> bytes | None:
        """The arbiter PIN's pepper (`pin.pepper_of` the device key, SPEC §13.4); None when
        the key cannot be read now (a card that cannot be written yet): a match started then
        keeps an unkeyed hash, in its header and its engine alike."""
        try:
            return pepper_of(self.key_of())
        except JournalError as exc:
            log.warning("the arbiter PIN's hash is not keyed by the device key, which cannot "
                        "be read now: %s", exc)
            return None

    def arbiter_pin(self) -> PinCheck | None:
        """This clock's arbiter's PIN as its engine judges entries at these panels (SPEC §13.4,
        §14.1): the device config's, keyed by this device's key (`pepper`). None: the device has
        no PIN (the chord means nothing here)."""
        if self.device.device.arbiter_pin is None:
            return None
        return device_pin(self.device, self.pepper())

    def read_match(self, text: str, name: str) -> Config:
        """A match file's text read on this device (SPEC §13.1); ConfigError with every
        problem, naming `name`."""
        if len(text.encode("utf-8", "replace")) > MAX_MATCH_FILE:
            raise ConfigError(name, [Problem("cfg.match_too_large",
                                             kib=MAX_MATCH_FILE // 1024)])
        return parse_match_config(text, name, self.device)

    def start(self, config: Config, planned: Planned | None = None) -> Opened:
        """A new match of `config`, ready (between games, game 1), in a journal of its own
        (`planned`, else planned now). A card that cannot be written does not stop it: its
        records wait in memory (and the panels say so) until the journal can be made."""
        path, header, stamp, config = planned or self.plan(config)

        def create() -> JournalWriter:
            return JournalWriter.create(path, self.key_of(), header, 0, stamp)
        journal, problem = open_or_defer(path, create, 0)
        session = Session(Engine.start(config.rules, at=0), journal, self.stamps,
                          self.device.device.checkpoint_ns, language=config.device.language)
        notes = [f"new match in {path}"]
        if problem is not None:
            session.journal_error = problem
            notes.append(f"the journal cannot be written now; its records wait in memory: "
                         f"{problem}")
        return Opened(session, self.clock_ns(), notes)

    def plan(self, config: Config) -> Planned:
        """The new journal's path, header and stamp, and `config` with its PIN's hash keyed by
        the device key: the header and the engine hold the very same hash (one pepper for
        both). Raises JournalError when the state folder cannot even be looked at (a dying
        card): then nothing may change."""
        heads = journal_heads(self.state_dir)
        stamp = self.stamps()
        path = journal_path(self.state_dir, stamp.wall, self.table_id, config)
        pepper = self.pepper() if config.rules.arbiter_pin is not None else None
        keyed = keyed_config(config, pepper)
        check = keyed.rules.arbiter_pin
        if pepper is not None and check is not None and not check.keyed:
            log.warning("the device config's arbiter.pin_hash is not keyed by the device key: "
                        "anyone with a journal can search the PINs for it; make one with "
                        "`python -m gammonclock.pin PIN --key %s`", self.state_dir / SECRET_FILE)
        header = journal_header(config.text, config.path, match_no=next_match_no(heads),
                                device_text=config.device_text, table=self.table_id,
                                pepper=pepper)
        header["wall_clock_synchronized"] = wall_clock_synchronized()
        return path, header, stamp, keyed

    def boot(self, match: Callable[[], Config] | None) -> Boot:
        """The newest journal's match if it is not over (resumed, paused); else the match
        `match` gives (ready), else none (idle). A bad match file leaves the clock idle, with
        the problem. Raises StartRefused for a journal it cannot understand."""
        heads = journal_order(journal_heads(self.state_dir))
        if heads:
            replayed = replay_for_resume(heads[-1], self.pepper())
            if replayed.engine.match.end_reason is None:
                session, notes = resume(replayed, self.key_of, self.stamps,
                                        checkpoint_ns=self.device.device.checkpoint_ns)
                origin = self.clock_ns() - session.engine.now
                return Boot(Opened(session, origin, notes),
                            [f"recovered {heads[-1].path}"] + notes)
        if match is None:
            return Boot(None, ["no match file: idle, waiting for the next match"])
        try:
            config = match()
        except ConfigError as exc:
            return Boot(None, [f"the match file is refused: idle\n{exc}"], exc)
        opened = self.start(config)
        return Boot(opened, opened.notes)


# --- the next match, on the clock's loop ---------------------------------------------------------

@dataclass
class LoadOutcome:
    """What `new-match` (or a stick, or the hall) did: `said` lines for the arbiter; `error`
    and `reason` when refused (nothing changed)."""

    ok: bool
    said: list[str]                # in the language of the match it is about (SPEC §15)
    error: str | None = None
    reason: Reason | None = None
    match: str | None = None       # the match loaded (or kept), in a few words
    players: str | None = None     # … and only its players, "Anna-Boris" (any language)
    kept: bool = False             # it was already loaded and waiting: nothing changed
    summary: str | None = None     # the line that says what was loaded (or kept), as `said`
    lang: str = "en"               # the language of `said` and `error`


def load_next_match(service: ClockService, table: Table, text: str, name: str, *,
                    force: bool = False, at: int | None = None, source: str | None = None,
                    by: str | None = None) -> LoadOutcome:
    """Load the match file `text` (named `name` in errors) as the table's next match, under the
    rules of SPEC §13.2. Runs on the clock's loop (a `Task`): the current match's last record,
    the new journal and the swap happen in order with the presses. `at` is the monotonic instant
    of the request (the abandon is stamped with it)."""
    from gammonclock.config.readback import minutes_seconds
    from gammonclock.core.arbiter import Abandon
    from gammonclock.core.match import ArbiterAction
    from gammonclock.hardware.views import config_error_view, next_match_view

    lang = table_language(service, table)
    try:
        config = table.read_match(text, name)
    except ConfigError as exc:
        if not _game_on(service):
            service.show_message(config_error_view(message_of(exc), "MATCH REFUSED"))
        return LoadOutcome(False, [], exc.said(lang), Reason.MATCH_FILE_BAD, lang=lang)
    session = service.session
    new_lang = words.language(config.device.language)
    if session is not None and _same_match_waiting(session, config):
        # The same file again while its match waits to start (a stick plugged in twice).
        kept = words.say("load.kept", new_lang, match=match_words(config, new_lang))
        return LoadOutcome(True, [kept], match=match_words(config), players=_players(config),
                           kept=True, summary=kept, lang=new_lang)
    if session is not None and in_progress(session.engine) and not force:
        return LoadOutcome(False, [], _in_progress_words(session.engine, lang),
                           Reason.MATCH_IN_PROGRESS, lang=lang)
    now = service.engine_time(service.clock_ns() if at is None else at)
    if session is not None and session.backlog:
        session.checkpoint(max(session.engine.now, now))     # one more try: the card may be back
    if session is not None and session.backlog:
        # Its records (and the abandon to come) must reach its journal before another starts.
        return LoadOutcome(False, [], words.say("load.journal_not_written", lang,
                                                error=session.journal_error),
                           Reason.JOURNAL_NOT_WRITTEN, lang=lang)
    try:
        planned = table.plan(config)
    except (JournalError, OSError) as exc:
        return LoadOutcome(False, [], words.say("load.cannot_start", lang, error=exc),
                           Reason.JOURNAL_NOT_WRITTEN, lang=lang)
    said: list[str] = []
    if session is not None and session.engine.match.play_phase is not Phase.MATCH_OVER:
        t = max(session.engine.now, now)          # engine time, never before the last input
        # The abandon is the loader's command: journaled with who asked for the next match;
        # said in the language of the match it ends.
        said += [words.describe(e, lang, rounded=True)
                 for e in service.apply(ArbiterAction(t, Abandon(), source, by))]
    if session is not None:
        session.close()
    opened = table.start(config, planned)
    for dropped in service.replace_session(opened.session, opened.origin):
        log.info("dropped with the match before: %s", dropped)
    journal = opened.session.journal
    loaded = words.say("load.loaded", new_lang, match=match_words(config, new_lang))
    said.append(loaded)
    if journal is not None:
        said.append(words.say("load.journal", new_lang, name=Path(journal.path).name))
    rules = config.rules
    service.show_message(next_match_view((rules.names.left, rules.names.right), rules.length,
                                         minutes_seconds(rules.reserve_ns)))
    return LoadOutcome(True, said, match=match_words(config), players=_players(config),
                       summary=loaded, lang=new_lang)


def _players(config: Config) -> str:
    return f"{config.rules.names.left}-{config.rules.names.right}"


def _same_match_waiting(session: Session, config: Config) -> bool:
    """Whether `session` is a match of this very file (and device config) that has not started:
    its journal's header says which file it was."""
    if in_progress(session.engine) or session.engine.match.phase is Phase.MATCH_OVER:
        return False
    if session.journal is None:
        return False
    try:
        header = read_header(session.journal.path).data
    except JournalError:
        return False                 # not on the card yet: replaced, as a different match is
    # The header holds the PIN's hash the engine judges by, its salt drawn when the match was
    # loaded (maybe by the process before a restart): a clear PIN in the file is verified
    # against that hash and written as it, never hashed again (a new salt: never the same text).
    check = session.engine.rules.arbiter_pin
    try:
        texts = [redact_pin_as(config.text, check),
                 None if config.device_text is None else redact_pin_as(config.device_text, check)]
    except RedactError:
        return False
    if texts[0] is None or (config.device_text is not None and texts[1] is None):
        return False                 # another PIN (or one the hash cannot tell)
    return header.get("config") == texts[0] and header.get("device") == texts[1]


def _game_on(service: ClockService) -> bool:
    return service.session is not None and in_progress(service.session.engine)


def _in_progress_words(engine: Engine, lang: str = "en") -> str:
    match = engine.match
    score = (f"{words.number(format_score(match.score.left), lang)}-"
             f"{words.number(format_score(match.score.right), lang)}")
    game = words.say("load.game_next" if match.play_phase in (Phase.BETWEEN_GAMES, Phase.BREAK)
                     else "load.game", lang, game=match.game)
    return words.say("load.in_progress", lang, game=game, score=score)


# --- the arbiter's menu at the panels (SPEC §13.4) ----------------------------------------------

class PanelRequests:
    """A presenter that hears the arbiter's menu ask for the next match (a `Shown` effect with
    `Reason.NEXT_MATCH_REQUESTED`) and loads the table's match file on the loop, in order with
    the presses. The arbiter confirmed it on a screen that said whether the match in progress
    ends abandoned, so the load is forced. A refusal (no match file, a bad one) is shown on the
    panels and the menu stays.

    It hears the menu take a USB stick's offer too (`Reason.CONTINUE_STICK_REQUESTED`, SPEC
    §13.5): the match the stick offered, held by the table (`Table.stick_offers`) for the match
    here, is continued as the arbiter's act (`source = "panel"`), never forced: a stick never
    ends a match in progress, not even through the menu (the socket's `continue --force`
    does). An offer the table no longer holds (the clock restarted) is withdrawn from the
    menu and the panels say to plug the stick in again."""

    def __init__(self, service: Callable[[], ClockService], table: Table,
                 match_file: str | None, provisioning: Any = None) -> None:
        self.service = service
        self.table = table
        self.match_file = match_file
        # A provisioning stick's offer the menu took (`Reason.PROVISION_REQUESTED`, issue 32):
        # `provisioning.Provisioning.confirmed`, as the arbiter's act.
        self.provisioning = provisioning

    def present(self, engine: Engine, t: int, effects: list[Any]) -> int | None:
        from gammonclock.core.effects import Shown

        from .inbox import Task

        if any(isinstance(e, Shown) and e.reason is Reason.NEXT_MATCH_REQUESTED
               for e in effects):
            service = self.service()
            service.submit(Task(service.clock_ns(), self.load))
        if any(isinstance(e, Shown) and e.reason is Reason.CONTINUE_STICK_REQUESTED
               for e in effects):
            service = self.service()
            offer = engine.match.stick_offer          # the one the arbiter confirmed
            service.submit(Task(service.clock_ns(), lambda: self.continue_offered(offer)))
        if self.provisioning is not None and any(
                isinstance(e, Shown) and e.reason is Reason.PROVISION_REQUESTED for e in effects):
            service = self.service()
            provision = engine.match.provision_offer          # the one the arbiter confirmed
            service.submit(Task(service.clock_ns(),
                                lambda: self.provisioning.confirmed(provision, "panel")))
        return None

    def continue_offered(self, offer: StickOffer | None) -> LoadOutcome:
        """Continue the match the stick offered and the arbiter confirmed (`offer`), if the
        table holds that very offer for the match here; on the loop."""
        service = self.service()
        lang = table_language(service, self.table)
        session = service.session
        held = self.table.stick_offers.held_for(session)
        if offer is None or held is None or held.offer != offer:
            log.warning("the arbiter's menu took the stick's offer, which is not held here")
            if session is not None and session.engine.match.stick_offer is not None:
                t = max(session.engine.now, service.engine_time(service.clock_ns()))
                service.apply(StickOffered(t, None))       # the menu lists it no more
            service.notify(Text("notice.stick_offer_gone"))
            return LoadOutcome(False, [], words.say("cont.offer_gone", lang),
                               Reason.NOTHING_OFFERED, lang=lang)
        outcome = held.continue_it()
        if outcome.ok:
            self.table.stick_offers.drop(held)
            log.info("the arbiter's menu continued the stick's match: %s",
                     "; ".join(outcome.said))
        else:
            log.warning("the arbiter's menu took the stick's offer: %s", outcome.error)
            service.notify(Text("notice.stick_in_progress"
                                if outcome.reason is Reason.MATCH_IN_PROGRESS
                                else "notice.stick_refused"))
        return outcome

    def load(self) -> LoadOutcome:
        service = self.service()
        lang = table_language(service, self.table)
        if self.match_file is None:
            outcome = LoadOutcome(False, [], words.say("load.no_match_file", lang),
                                  Reason.MATCH_FILE_BAD, lang=lang)
        else:
            try:
                text = Path(self.match_file).read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError) as exc:
                outcome = LoadOutcome(False, [], words.say("load.unreadable", lang,
                                                           file=self.match_file, error=exc),
                                      Reason.MATCH_FILE_BAD, lang=lang)
            else:
                outcome = load_next_match(service, self.table, text, self.match_file,
                                          force=True, source="panel")
        if outcome.ok:
            log.info("the arbiter's menu loaded the next match: %s", "; ".join(outcome.said))
        else:
            log.warning("the arbiter's menu asked for the next match: %s", outcome.error)
            service.notify(Text("notice.no_match_file" if self.match_file is None
                                else "notice.next_match_refused"))
        return outcome

    def close(self) -> None:
        pass


# --- a USB stick (SPEC §13.3) --------------------------------------------------------------------

STICK_LOAD_WAIT_S = 30.0      # the loop takes a load at once; this is for a loop stuck on a card


def run_on_loop(service: ClockService, work: Callable[[], object],
                wait_s: float = STICK_LOAD_WAIT_S) -> tuple[bool, object]:
    """Run `work` on the clock's loop, in order with the presses, and wait for it: (True, what
    it returned), or (False, None) when the loop did not take it in time (then it never will)."""
    from .inbox import Reply, Task

    reply = Reply()
    if not service.submit(Task(service.clock_ns(), work), reply) \
            or not reply.wait_taken(wait_s, wait_s):
        return False, None
    return reply.done.is_set(), reply.value



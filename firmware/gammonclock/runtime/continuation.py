"""A match continued on another clock (SPEC §13.5): a dead clock's match goes on on this one.

    gammonclock arbiter continue FROM [--force] [--unverified]

FROM is the dead clock's journal (from its card, or a stick), or a folder holding it (the
newest journal there, by its own header, as a clock orders its journals). The hall sends the
same thing built from its copy of the dead table's records (`hall/continuation.py`; taken by
`link/requests.py`'s `continue_request`). A stick with the journal and a marker file (the
folder `gammonclock/continue/` holding the journal and `TABLE.continue` or `match.continue`)
only OFFERS it (`offer_from_stick`, SPEC §13.5, §14.1: a stick carries files, never
authority): the journal is copied off and verified as for `continue`, nothing is loaded and
nothing ended, and the arbiter takes it at the menu after the PIN (`lifecycle.PanelRequests`,
journaled with `source = "panel"`) or on the socket.

The continuation is the journal's own rule for a journal that cannot go on in place
(`session._continue_in_new_journal`): a new journal on this clock holds every whole record of
the old one, in order, with their own stamps (the old clock's boot, monotonic and wall times),
sealed again with this clock's key, and its header names the journal it continues (`continues`:
file name, last seq, record count, last mac, the old table, how it came, the verdict on it, and
whether the arbiter forced it past a failed check). The match is then resumed from it exactly as
after a power cut (`session.resume`): the same engine replays it, and a `Recover` at the old
journal's last instant pauses it, the running side charged up to that record and not beyond.
So everything the old clock kept comes along without a second rule: players, length, score,
cube and owner, Crawford, breaks left, penalties, warnings and challenges, both reserves, the
history an `undo` reaches.

Everything but the arbiter at the panels (SPEC §13.4, §14.1): the old header's PIN is the old
clock's (or a forger's), and the spare's arbiter's PIN is the only one its panels may take. So
the copy ends with this clock's first record, a hand-over (`handover_record`,
`match.ArbiterHandover`): this device's PIN's hash, keyed by its key, or none, and its chord;
from there on the panels judge by those, the PIN's failures and lockouts start afresh, and a
replay (a restart, an undo's rebuild) folds it the same way (docs/decisions.md).

Before anything changes, the old journal is verified with the existing reader (`journal.verify`:
checksums, the chain of `prev` links and sequence numbers, and the seals when this clock's key
made them, else the chain only: another device's journal). One that fails is refused with the
verifier's words (the file and the record), unless the arbiter forces it (`--unverified`, on
the socket only), which the new header records. Without the dead clock's key only the chain can
be checked: someone who rewrites a whole journal and its chain is caught only by comparing the
header's `last_mac` with the original's (the card, the hall's archive). A finished match is
refused (nothing to continue), and so is a match of this clock's own journals folder (that is
a power cut: the clock resumes it by itself).

On the clock, a continuation replaces the current match under the rules of SPEC §13.2, as
`new-match` does: accepted in idle, ready and match_over; in mid-match only with `--force`,
which first ends the current match `abandoned` on its own record. A ready match it replaces
ends `abandoned` too, on the record of the arbiter who asked (the socket's user, the hall, or
the panels after the PIN), as a next match replaces it; a stick alone never asks. The same
continuation asked for again (a stick plugged in twice, a hall request repeated) is kept, not
made twice.

What it answers is said in words.py's "cont.*" (SPEC §15): a refusal, and what became of the
match here, in this table's language; what the continued match is, in its own. A refusal is a
`ContinuationRefused` holding a Problem (its English is the message), said where it is answered.
"""

from __future__ import annotations

import logging
import os
import stat
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gammonclock import words
from gammonclock.config.loading import ConfigError
from gammonclock.config.problems import Problem, Told, message_of, said
from gammonclock.core.match import ArbiterHandover, StickOffered
from gammonclock.core.match_state import Phase, StickOffer
from gammonclock.core.reasons import Reason
from gammonclock.core.rules import EndReason, format_score
from gammonclock.errors import GammonclockError
from gammonclock.hardware.texts import Text
from gammonclock.journal.durable import write_atomically
from gammonclock.journal.files import JournalHead, journal_heads, journal_order, next_match_no
from gammonclock.journal.inputs import effects_data, input_data
from gammonclock.journal.prealloc import written_within
from gammonclock.journal.reader import JournalRead, read_header, read_journal
from gammonclock.journal.records import JOURNALS_DIR, JournalError, Stamp
from gammonclock.journal.replay import Replayed, replay, replay_from_snapshot
from gammonclock.journal.verify import Verdict, verify
from gammonclock.wire import JOURNAL_NAME

from .arbiter_requests import reply_language, said_lines
from .lifecycle import (
    LoadOutcome,
    Opened,
    Table,
    in_progress,
    journal_path,
    match_words,
    table_language,
)
from .session import _continue_in_new_journal, _stamp_of, resume

if TYPE_CHECKING:
    from .arbiter_requests import Awaited, Request
    from .arbiter_socket import Responder
    from .service import ClockService

log = logging.getLogger(__name__)

MAX_SOURCE_BYTES = 64 << 20     # a whole 25-point match's journal is a few MiB
VIA = ("journal", "hall", "stick")


class ContinuationRefused(GammonclockError):
    """A journal that cannot be continued here; the message names the file (and the record)
    and says why. Nothing changed."""


@dataclass(frozen=True)
class Source:
    """A dead clock's journal, checked: every whole record, the verifier's verdict, and the
    match it holds (replayed)."""

    read: JournalRead
    verdict: Verdict
    replayed: Replayed
    forced: bool            # it failed verification, and the arbiter took it all the same

    @property
    def name(self) -> str:
        return Path(self.read.path).name

    def continues(self, via: str, source_of: str | None = None) -> dict[str, Any]:
        """The new journal's `continues`: what it goes on from, and who took it (`source`:
        "socket", "panel" (the arbiter's PIN at the panels), "hall"), when known."""
        last, header = self.read.last, self.read.header.data
        table = header.get("table")
        continues = {"file": self.name, "seq": last.seq, "records": self.read.count,
                     "last_mac": last.mac, "last_wall": last.wall, "last_t": last.t,
                     "table": table if isinstance(table, str) else None, "handover": True,
                     "via": via, "verdict": self.verdict.words, "forced": self.forced}
        if source_of is not None:
            continues["source"] = source_of
        before = header.get("continues")
        if isinstance(before, dict):      # a match moved twice: the first hand-over stays named
            continues["before"] = before
        return continues


def find_journal(place: str | Path) -> Path:
    """The journal FROM names: the file itself, or the newest journal a folder holds (in it,
    or in its `journals/`), by the journals' own headers. ContinuationRefused when none."""
    path = Path(place)
    if path.is_file():
        return path
    if not path.is_dir():
        raise ContinuationRefused(Problem("cont.no_such", path=path))
    found: list[Path] = []
    for folder in (path, path / JOURNALS_DIR):
        found += [p for p in folder.glob("match-*.jsonl") if p.is_file()]
    heads = []
    for candidate in found:
        try:
            heads.append((candidate, read_header(candidate).data))
        except JournalError as exc:
            log.warning("not a journal to continue: %s", exc)
    if not heads:
        raise ContinuationRefused(Problem("cont.no_journal", path=path, dir=JOURNALS_DIR))
    ordered = journal_order([JournalHead.of(p, data) for p, data in heads])
    return ordered[-1].path


def check_source(path: str | Path, key: bytes | None, *, unverified: bool = False) -> Source:
    """The journal at `path`, verified with the existing reader and replayed. Raises
    ContinuationRefused naming the file (and the record) for a journal that fails verification
    (unless `unverified`: the arbiter takes it all the same, on the record), that cannot be
    read or understood, is too large, or holds a match that is over."""
    path = Path(path)
    try:
        with path.open("rb") as f:      # its written part: a live journal's zeros are not
            size = os.fstat(f.fileno()).st_size
            written = written_within(f, MAX_SOURCE_BYTES)
    except OSError as exc:
        raise ContinuationRefused(Problem("cont.cannot_read", path=path,
                                          why=exc.strerror)) from None
    if written is None or written > MAX_SOURCE_BYTES:
        raise ContinuationRefused(Problem("cont.too_large", path=path,
                                          size=size if written is None else written,
                                          mib=MAX_SOURCE_BYTES >> 20))
    try:
        verdict = verify(path, key)
        if not verdict.intact and not unverified:
            raise ContinuationRefused(Problem("cont.tampered", path=path,
                                              verdict=verdict_words(verdict)))
        read = read_journal(path)
        if read.count < 1:
            raise ContinuationRefused(Problem("cont.no_records", path=path))
        replayed = replay(read)
    except (JournalError, ConfigError) as exc:
        raise ContinuationRefused(Problem("cont.unreadable", error=message_of(exc))) from None
    match = replayed.engine.match
    if match.end_reason is not None:
        end = match.end_reason.value
        # A match moved on (SPEC §13.5) is over here too: it goes on where it was moved to.
        said_end = (Problem("end.moved_to", table=match.moved_to)
                    if match.end_reason is EndReason.MOVED and match.moved_to is not None
                    else Problem(f"end.{end}") if f"end.{end}" in words.WORDS else end)
        raise ContinuationRefused(Problem("cont.over", path=path, end=said_end))
    return Source(read, verdict, replayed, forced=not verdict.intact)


def _same_continuation(service: ClockService, source: Source) -> bool:
    """Whether the match on this clock is already this very continuation."""
    session = service.session
    if session is None or session.journal is None:
        return False
    try:
        continues = read_header(session.journal.path).data.get("continues")
    except JournalError:
        return False
    return (isinstance(continues, dict) and continues.get("handover") is True
            and continues.get("file") == source.name
            and continues.get("last_mac") == source.read.last.mac)


def start_continuation(table: Table, source: Source, via: str,
                       source_of: str | None = None) -> Opened:
    """The new journal holding the old one's records, and its match resumed as after a power
    cut (paused at the old journal's last record). Raises JournalError when the state folder
    cannot be written (nothing stands under the journal's name then)."""
    if via not in VIA:
        raise ValueError(f"via must be one of {VIA}")
    heads = journal_heads(table.state_dir)
    stamp = table.stamps()
    path = journal_path(table.state_dir, stamp.wall, table.table_id, source.replayed.config)
    if Path(source.read.path).resolve().parent == path.parent.resolve():
        raise ContinuationRefused(Problem("cont.own_journal", path=source.read.path))
    changes = {"continues": source.continues(via, source_of), "table": table.table_id,
               "match_no": next_match_no(heads)}
    key = table.key_of()
    # The header keeps the old header's stamps: the match started there and then.
    writer = _continue_in_new_journal(source.read, path, key, _stamp_of(source.read.header),
                                      changes, [handover_record(table, source)])
    writer.close()
    replayed = replay_from_snapshot(path, table.pepper())
    session, notes = resume(replayed, table.key_of, table.stamps,
                            checkpoint_ns=table.device.device.checkpoint_ns)
    return Opened(session, table.clock_ns() - session.engine.now, [f"continued in {path}"] + notes)


def handover_record(table: Table, source: Source) -> tuple[str, int, dict[str, Any], Stamp]:
    """This clock's first record of a match handed over to it (SPEC §13.5, §14.1): from the old
    journal's last instant on, the arbiter at these panels is this clock's, its PIN (keyed by
    this device's key) and its chord, not the header's, which are the old clock's (a forger's,
    for a forged journal). Its effects are the ones the engine computes from the old journal's
    match, as a replay of the new journal computes them."""
    t = max(source.read.last.t, source.replayed.engine.now)
    handover = ArbiterHandover(t, table.arbiter_pin(), table.device.device.arbiter_chord_ns)
    _, effects = source.replayed.engine.feed(handover)
    return ("input", t, {"input": input_data(handover), "effects": effects_data(effects)},
            table.stamps())


def continue_match(service: ClockService, table: Table, source: Source, *, via: str,
                   force: bool = False, at: int | None = None, source_of: str | None = None,
                   by: str | None = None) -> LoadOutcome:
    """Continue `source`'s match on this clock, under the rules of SPEC §13.2 (as
    `lifecycle.load_next_match`): on the clock's loop (a `Task`), in order with the presses."""
    from gammonclock.core.arbiter import Abandon
    from gammonclock.core.match import ArbiterAction

    # What is said of the match here in its language, of the match continued in its own
    # (SPEC §15), as `lifecycle.load_next_match` says a next match.
    lang = table_language(service, table)
    new_lang = words.language(source.replayed.config.device.language)
    match_said = match_words(source.replayed.config, new_lang)
    words_en = match_words(source.replayed.config)
    players = f"{source.replayed.config.rules.names.left}-" \
              f"{source.replayed.config.rules.names.right}"
    if _same_continuation(service, source):
        return LoadOutcome(True, [words.say("cont.already", new_lang, match=match_said)],
                           match=words_en, players=players, kept=True, lang=new_lang)
    session = service.session
    if session is not None and in_progress(session.engine) and not force:
        return LoadOutcome(False, [], _in_progress_words(session.engine, lang),
                           Reason.MATCH_IN_PROGRESS, lang=lang)
    now = service.engine_time(service.clock_ns() if at is None else at)
    if session is not None and session.backlog:
        session.checkpoint(max(session.engine.now, now))
    if session is not None and session.backlog:
        return LoadOutcome(False, [], words.say("cont.journal_not_written", lang,
                                                error=session.journal_error),
                           Reason.JOURNAL_NOT_WRITTEN, lang=lang)
    try:         # first: a card that cannot take it changes nothing
        opened = start_continuation(table, source, via, source_of)
    except (JournalError, ConfigError, OSError, ContinuationRefused) as exc:
        return LoadOutcome(False, [], words.say("cont.cannot", lang,
                                                error=said(message_of(exc), lang)),
                           Reason.JOURNAL_NOT_WRITTEN, lang=lang)
    done: list[str] = []
    if session is not None and session.engine.match.play_phase is not Phase.MATCH_OVER:
        t = max(session.engine.now, now)
        done += said_lines(service.apply(ArbiterAction(t, Abandon(), source_of, by)), lang)
    if session is not None:
        session.close()
    for dropped in service.replace_session(opened.session, opened.origin):
        log.info("dropped with the match before: %s", dropped)
    match = opened.session.engine.match
    done += [words.say("cont.continued", new_lang, match=match_said, file=source.name,
                       seq=source.read.last.seq),
             words.say("cont.paused", new_lang, score=_score(match, new_lang))]
    if source.forced:
        done.append(words.say("cont.not_verified", new_lang,
                              verdict=verdict_words(source.verdict).said(new_lang)))
    journal = opened.session.journal
    if journal is not None:
        done.append(words.say("load.journal", new_lang, name=Path(journal.path).name))
    for note in opened.notes:
        log.info("continuation: %s", note)
    return LoadOutcome(True, done, match=words_en, players=players, lang=new_lang)


def _score(match: Any, lang: str = "en") -> str:
    return f"{words.number(match.score.left, lang)}-{words.number(match.score.right, lang)}"


def _in_progress_words(engine: Any, lang: str = "en") -> str:
    match = engine.match
    return words.say("cont.in_progress", lang, game=match.game, score=_score(match, lang))


def verdict_words(verdict: Verdict) -> Told:
    """A journal's verdict (`Verdict.words`) that says itself in any language (the export's
    words for it: `export.text.integrity_text`)."""
    from gammonclock.export.text import integrity_text

    return Told(verdict.words, lambda lang: integrity_text(verdict, lang=lang))


def checked_then(service: ClockService, table: Table, path: str | Path, *, via: str,
                 force: bool = False, unverified: bool = False, at: int | None = None,
                 source_of: str | None = None, by: str | None = None
                 ) -> Callable[[], LoadOutcome] | LoadOutcome:
    """Check the journal at `path` (off the loop) and give the work to run on the loop, or the
    refusal (a LoadOutcome that changed nothing)."""
    try:
        source = check_source(find_journal(path), _key(table), unverified=unverified)
    except ContinuationRefused as exc:
        lang = table_language(service, table)
        return LoadOutcome(False, [], said(message_of(exc), lang), Reason.MATCH_FILE_BAD,
                           lang=lang)
    return lambda: continue_match(service, table, source, via=via, force=force, at=at,
                                  source_of=source_of, by=by)


def _key(table: Table) -> bytes | None:
    try:
        return table.key_of()
    except JournalError:
        return None


CONTINUE_FLAGS = ("--force", "--unverified")


def socket_request(server: Responder, request: Request, peer: str | None
                   ) -> tuple[dict[str, Any], Awaited | None]:
    """`continue [--force] [--unverified]` on the arbiter's socket, the journal's path in the
    request's `file` (`gammonclock arbiter continue FROM` sends it whole: the clock reads it)."""
    flags = request.words[1:]
    lang = reply_language(server.service)
    if server.table is None:
        return {"ok": False, "error": words.say("cont.no_table", lang)}, None
    if any(flag not in CONTINUE_FLAGS for flag in flags) or not request.file:
        return {"ok": False, "error": words.say("cont.usage", lang)}, None
    at = server.clock_ns()
    work = checked_then(server.service, server.table, request.file, via="journal",
                        force="--force" in flags, unverified="--unverified" in flags, at=at,
                        source_of="socket", by=peer)
    if isinstance(work, LoadOutcome):
        return {"ok": False, "outcome": "refused", "said": [], "refused": True,
                "error": work.error, "reason": work.reason.value if work.reason else None,
                "state": server.service.status()}, None
    return server.run_loading(work, at)


# --- from a USB stick (SPEC §13.3, §13.5) ---------------------------------------------------------

STICK_CONTINUE_DIR = "continue"          # gammonclock/continue/ on the stick
COPIED_FROM_STICK = "continue-from-stick"   # where the journal is copied first, in the state


def journal_on_stick(stick: Path, table_id: str, state_dir: Path) -> Path | None:
    """The dead clock's journal a stick asks this clock to continue, copied off the stick into
    the state folder first (a stick pulled out mid-read then leaves nothing half read): the
    folder `gammonclock/continue/` holding the journal (`match-*.jsonl`; several: the newest by
    their headers) and the marker `TABLE.continue` (this table's id) or `match.continue` (any
    table). None: no marker. Raises ContinuationRefused naming the file for a folder or file
    that is a link, not on the stick's own file system, not a plain file, or too large."""
    from .usb_stick import STICK_DIR, our_folder

    with our_folder(stick) as opened:
        if opened is None:
            return None
        mine, device = opened
        return _copy_off(stick / STICK_DIR / STICK_CONTINUE_DIR, mine, table_id, device,
                         Path(state_dir) / COPIED_FROM_STICK)


def _copy_off(where: Path, parent: int, table_id: str, device: int, into: Path) -> Path | None:
    try:
        folder = os.open(STICK_CONTINUE_DIR, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW,
                         dir_fd=parent)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as exc:
        raise ContinuationRefused(Problem("cont.folder_unreadable", path=where,
                                          why=exc.strerror or exc)) from None
    try:
        if os.fstat(folder).st_dev != device:
            raise ContinuationRefused(Problem("cont.elsewhere", path=where))
        names = os.listdir(folder)
        if f"{table_id}.continue" not in names and "match.continue" not in names:
            return None
        # A stick's names are anyone's: only a journal's name as a clock makes it (bounded, no
        # control characters) is read, journaled in an offer and said.
        journals = sorted(n for n in names if n.startswith("match-")
                          and JOURNAL_NAME.fullmatch(n) is not None)
        if not journals:
            raise ContinuationRefused(Problem("cont.marker_alone", path=where))
        into.mkdir(parents=True, exist_ok=True)
        copies = [_copy_one(where / name, folder, name, device, into) for name in journals]
    finally:
        os.close(folder)
    return find_journal(into) if len(copies) > 1 else copies[0]


def _copy_one(path: Path, folder: int, name: str, device: int, into: Path) -> Path:
    try:
        fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=folder)
    except OSError as exc:
        raise ContinuationRefused(Problem("cont.journal_unreadable", path=path,
                                          why=exc.strerror or exc)) from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_dev != device:
            raise ContinuationRefused(Problem("cont.not_plain", path=path))
        with os.fdopen(os.dup(fd), "rb") as f:
            # Its written part, a live journal's zeros ahead left out; a file too large for
            # one is not read.
            end = written_within(f, MAX_SOURCE_BYTES)
            if end is None or end > MAX_SOURCE_BYTES:
                raise ContinuationRefused(Problem("cont.stick_too_large", path=path,
                                                  mib=MAX_SOURCE_BYTES >> 20))
            f.seek(0)
            blob = f.read(end).rstrip(b"\0")
    except OSError as exc:
        raise ContinuationRefused(Problem("cont.read_failed", path=path,
                                          why=exc.strerror or exc)) from None
    finally:
        os.close(fd)
    copy = into / name
    write_atomically(copy, blob)
    return copy


@dataclass(frozen=True)
class StickOutcome:
    """What a stick's continuation came to, for the `usb-stick` reply and the panels: whether
    the stick's work went as it should (`ok`), the lines for the arbiter (`said`, the table's
    language), and the panels' screen (`title`, and `shown`: their lines as `Text`s)."""

    ok: bool
    said: list[str]
    title: str
    shown: list[Text]


def stick_offer_of(source: Source) -> StickOffer:
    """What the panels show of a stick's continuation and the journal records (bounded: the
    table id is one only when it is one, the names as the match config allows them)."""
    from .usb_stick import TABLE_ID

    table = source.read.header.data.get("table")
    rules, match, last = source.replayed.config.rules, source.replayed.engine.match, \
        source.read.last
    return StickOffer(table if isinstance(table, str) and TABLE_ID.fullmatch(table) else "",
                      rules.names.left, rules.names.right, rules.length,
                      f"{format_score(match.score.left)}-{format_score(match.score.right)}",
                      source.name, last.seq, last.mac)


def offer_from_stick(service: ClockService, table: Table, stick: Path) -> StickOutcome | None:
    """What a stick's continuation came to (None: the stick asks for none). The journal is
    copied off the stick and verified as for `continue`, and then only OFFERED (SPEC §13.5,
    §14.1): nothing is loaded and nothing ended here; the arbiter takes it at the menu after
    the PIN (`lifecycle.PanelRequests`) or on the socket. A journal that fails verification is
    refused (the socket's `--unverified` takes it), and so is any offer while a match is in
    progress here (the socket's `--force` replaces it)."""
    from .lifecycle import run_on_loop

    lang = table_language(service, table)

    def refused(why: str) -> StickOutcome:
        why = why.splitlines()[0] if why else ""
        return StickOutcome(False, [words.say("cont.not_continued", lang, why=why)],
                            "USB STICK", [Text("stick.continue_refused", why=why)])

    try:
        path = journal_on_stick(stick, table.table_id, table.state_dir)
    except (ContinuationRefused, OSError) as exc:
        return refused(said(message_of(exc), lang))
    if path is None:
        return None
    try:
        source = check_source(find_journal(path), _key(table))
    except ContinuationRefused as exc:
        return refused(said(message_of(exc), lang))
    done, outcome = run_on_loop(service, lambda: _offer_here(service, table, source))
    if not done or not isinstance(outcome, StickOutcome):
        return refused(words.say("load.not_in_time", lang))
    return outcome


def _offer_here(service: ClockService, table: Table, source: Source) -> StickOutcome:
    """On the loop: offer `source` to the match here (journaled, for its menu), or say why
    not. Nothing here is ended, loaded or forced."""
    from .lifecycle import HeldOffer

    lang = table_language(service, table)
    session = service.session
    offer = stick_offer_of(source)
    if _same_continuation(service, source):
        match_said = match_words(source.replayed.config, lang)
        return StickOutcome(True, [words.say("cont.already", lang, match=match_said)],
                            "USB STICK", [Text("stick.continued",
                                               match=f"{offer.left}-{offer.right}")])
    if session is not None and in_progress(session.engine):
        match = session.engine.match
        why = words.say("cont.stick_in_progress", lang, game=match.game,
                        score=_score(match, lang))
        log.warning("USB stick: %s offered while a match is in progress here: refused",
                    offer.describe())
        return StickOutcome(False, [words.say("cont.not_continued", lang, why=why)],
                            "USB STICK", [Text("notice.stick_in_progress")])
    said = [words.say("cont.offered", lang, table=offer.table or "?",
                      match=match_words(source.replayed.config, lang), score=offer.score,
                      file=offer.file, seq=offer.seq)]
    shown = [Text("stick.offer", table=offer.table or "?", left=offer.left, right=offer.right,
                  score=offer.score)]
    path = source.read.path
    if session is None:                   # idle: no match, so no chord and no menu here
        said.append(words.say("cont.offer_idle", lang, path=path))
        shown.append(Text("stick.offer_idle"))
        return StickOutcome(True, said, "MATCH ON THE STICK", shown)
    table.stick_offers.hold(HeldOffer(offer, session, lambda: continue_match(
        service, table, source, via="stick", source_of="panel")))
    t = max(session.engine.now, service.engine_time(service.clock_ns()))
    service.apply(StickOffered(t, offer))         # journaled: the menu lists it (a replay too)
    if session.engine.rules.arbiter_pin is None:  # the chord means nothing without a PIN
        said.append(words.say("cont.offer_no_pin", lang, path=path))
        shown.append(Text("stick.offer_no_pin"))
    else:
        said.append(words.say("cont.offer_how", lang, path=path))
        shown.append(Text("stick.offer_how"))
    log.info("USB stick: %s offered here", offer.describe())
    return StickOutcome(True, said, "MATCH ON THE STICK", shown)

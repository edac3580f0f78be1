"""What the director asks of a clock over the hall (SPEC §14): `cmd` and the retained `match`.

Both run on the link's worker thread (never on paho's network thread, never on the clock's
loop) and reach the match only through the clock's queue: a `cmd` is an `ArbiterAction(t,
command, "hall", by)` submitted like a press and journaled with its author; a next match is
loaded by `load_next_match` in a `Task` on the loop, under the rules of SPEC §13.2, never forced
unless the command says `--force`.

A `cmd` carries a request id. Its answer is kept (`HallMemory`, the last 256 ids, on the card),
so a redelivered or retried `cmd` is answered again (`"repeated": true`) and never applied
twice. One answered "unknown" (the loop took it, its outcome did not come in time) also keeps
its `Reply`, in memory as the arbiter socket does: a retry once the loop has said what it did
is answered with that outcome, which then replaces "unknown" on the card. A restart forgets
the Reply, and "unknown" stays: honest, since the clock cannot tell any more.

The retained `moved` (the director moved this table's match to another clock, SPEC §13.5) ends
that match here as moved (`arbiter moved TABLE`, journaled with `source = "hall"` and `by`) when
it names the journal of the match this clock holds and that match is not over; the check and
the end are one `Task` on the loop, so a next match loaded meanwhile is never the one ended. A
notice naming another journal changes nothing (it is delivered again at every reconnect, until
the hall clears it), and an empty one is the hall clearing it. It is answered on `notice`.

A retained `match` already loaded (the same text, by its sha256) is not loaded again after a
reconnect; one refused because a match is in progress waits, and is loaded once that match is
over (`retry_pending`, which the link calls when the clock's loop signals a change), or at
once when the director forces it (`new-match --force --waiting SHA256`, a `cmd`: only the hall
may publish one, hall/acl).
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Any

from gammonclock import words
from gammonclock.core.arbiter import Moved, parse_command
from gammonclock.core.effects import Effect
from gammonclock.core.match import ArbiterAction
from gammonclock.core.reasons import Reason
from gammonclock.core.rules import EndReason
from gammonclock.durations import has_control_characters
from gammonclock.errors import GammonclockError
from gammonclock.journal.durable import write_atomically
from gammonclock.journal.inputs import effects_data
from gammonclock.journal.records import JournalError
from gammonclock.runtime.arbiter_requests import (
    Awaited,
    NotTaken,
    refusal_text,
    refusals,
    reply_language,
    said_lines,
    submit_and_wait,
)
from gammonclock.runtime.arbiter_words import syntax_error_said
from gammonclock.runtime.continuation import MAX_SOURCE_BYTES, checked_then
from gammonclock.runtime.inbox import Reply, Task
from gammonclock.runtime.lifecycle import (
    MAX_MATCH_FILE,
    LoadOutcome,
    Table,
    in_progress,
    load_next_match,
)
from gammonclock.runtime.service import ClockService
from gammonclock.wire import JOURNAL_NAME, MOVED_TOPIC, iso_utc
from gammonclock.wire import Moved as MovedNotice

from .outbox import REMEMBERED_IDS, HallMemory

log = logging.getLogger(__name__)

MAX_PAYLOAD = 2 * MAX_MATCH_FILE + 4096    # a `cmd` with a match file's text, or a `match`
MAX_CONTINUE_PAYLOAD = 16 << 20            # `continue` with a journal (the broker's bound)
MAX_ID = 64
MAX_BY = 64
DEFAULT_BY = "hall"            # a `cmd` without `by`: the director's account
REPLY_WAIT_S = 5.0             # the loop takes a command at once; this is for a stuck loop
OUTCOME_WAIT_S = 25.0          # once taken, how long its outcome may take (a slow card)
CMD_KEYS = {"id", "by", "command", "text"}
MATCH_NOT_WAITING = "match_not_waiting"   # `new-match --force --waiting`: no such match waits

Publish = Callable[[str, dict[str, Any]], None]     # (topic suffix, JSON payload)


class BadRequest(GammonclockError, ValueError):
    """A `cmd` that is not one: nothing was done, the reply says why."""


def valid_id(value: object) -> bool:
    return (isinstance(value, str) and 0 < len(value) <= MAX_ID and value.isascii()
            and all(c.isalnum() or c in "-_.:" for c in value))


def match_digest(text: bytes) -> str:
    return hashlib.sha256(text).hexdigest()


class HallRequests:
    """Answers `cmd` on `cmd/reply` and loads `match`, answering on `notice`."""

    def __init__(self, service: ClockService, table: Table, memory: HallMemory,
                 publish: Publish, *, match_topic: str,
                 wall_ns: Callable[[], int] = time.time_ns) -> None:
        self.service = service
        self.table = table
        self.memory = memory
        self.publish = publish
        self.match_topic = match_topic
        self.wall_ns = wall_ns
        self.pending_match: bytes | None = None   # refused mid-match: loaded once it is over
        self.pending_moved: bytes | None = None   # a `moved` the loop did not take: again
        # The Replies of `cmd`s answered "unknown", by id (memory only: a restart forgets them).
        # The worker's thread only, like everything here.
        self._awaited: OrderedDict[str, Awaited] = OrderedDict()

    # --- cmd --------------------------------------------------------------------------------

    def on_cmd(self, payload: bytes) -> None:
        self.publish("cmd/reply", self.answer(payload))

    def answer(self, payload: bytes) -> dict[str, Any]:
        """The reply to one `cmd` payload (acting on it at most once per id)."""
        try:
            request = _parse_cmd(payload)
        except BadRequest as exc:
            request_id = _id_in(payload)
            log.warning("hall: a cmd refused as malformed (id %s): %s", request_id, exc)
            return {"id": request_id, "ok": False, "outcome": "bad request",
                    "reason": str(exc), "at": self._now()}
        with self.memory.lock:
            known = self.memory.answers.get(request["id"])
        if known is not None:
            log.info("hall: cmd %s again (a redelivery): answered, not applied again",
                     request["id"])
            return {**self._settled(known), "repeated": True}
        answer = {"id": request["id"], **self._act(request), "at": self._now()}
        log.info("hall: cmd %s by %s: %s -> %s", request["id"], request["by"],
                 request["command"], answer["outcome"])
        if answer["outcome"] != "not applied":     # a retry of one not applied may apply it
            self._remember(answer)
        return answer

    def _settled(self, known: dict[str, Any]) -> dict[str, Any]:
        """The kept answer to a repeated id; when that was "unknown" and the loop has since
        said what it did, that outcome instead (kept in its place from now on)."""
        awaited = self._awaited.get(known["id"])
        settled = awaited.settled() if awaited is not None else None
        if settled is None:
            return known
        del self._awaited[known["id"]]
        answer = {"id": known["id"], **settled, "at": self._now()}
        log.info("hall: cmd %s, answered 'unknown' before, has its outcome: %s", known["id"],
                 answer["outcome"])
        self._remember(answer)
        return answer

    def _remember(self, answer: dict[str, Any]) -> None:
        with self.memory.lock:
            self.memory.remember_answer(answer)
            self.memory.save()

    def _await(self, request_id: str, awaited: Awaited) -> None:
        """Keep the Reply of a `cmd` answered "unknown" for its retries (as many as the card
        keeps answers: an id forgotten there is a new request anyway)."""
        self._awaited[request_id] = awaited
        self._awaited.move_to_end(request_id)
        while len(self._awaited) > REMEMBERED_IDS:
            self._awaited.popitem(last=False)

    def _act(self, request: dict[str, Any]) -> dict[str, Any]:
        parts = request["command"].split()
        if parts[:1] == ["continue"]:                # SPEC §13.5: the hall moves a match here
            return continue_request(self, request)
        if parts[:1] == ["new-match"]:
            if parts[1:3] == ["--force", "--waiting"] and len(parts) == 4 \
                    and request.get("text") is None:
                return self._force_waiting(parts[3], request)
            if parts[1:] not in ([], ["--force"]) or request.get("text") is None:
                lang = reply_language(self.service)
                return _bad(words.say("hr.new_match_usage", lang), lang)
            return self._load(request["text"], f"<hall cmd {request['id']}>",
                              force=parts[1:] == ["--force"], by=request["by"],
                              request_id=request["id"])
        lang = reply_language(self.service)
        if request.get("text") is not None:
            return _bad(words.say("hr.text_not_new_match", lang), lang)
        if parts == ["status"]:
            return {"ok": True, "outcome": "acted", "state": self.service.status()}
        try:
            command = parse_command(parts)
        except ValueError as exc:
            return _bad(syntax_error_said(exc, lang), lang)
        action = ArbiterAction(self.service.clock_ns(), command, "hall", request["by"])
        return self._on_loop(action, "it", lambda reply: _acted(reply, lang), request["id"])

    def _load(self, text: str, name: str, force: bool, by: str = "hall",
              request_id: str | None = None) -> dict[str, Any]:
        at = self.service.clock_ns()
        task = Task(at, lambda: load_next_match(self.service, self.table, text, name,
                                                force=force, at=at, source="hall", by=by))
        return self._on_loop(task, "the match", _loaded, request_id)

    def _force_waiting(self, digest: str, request: dict[str, Any]) -> dict[str, Any]:
        """The director forces the retained `match` that waits for the match in progress (the
        one whose sha256 its notice named): that match is ended as abandoned and this one
        loaded, as `new-match --force` would. Only that text, and only while it still waits:
        one loaded, replaced or cleared since is not what the director confirmed."""
        payload = self.pending_match
        if payload is None or match_digest(payload) != digest:
            return {"ok": False, "outcome": "refused", "code": MATCH_NOT_WAITING,
                    "reason": words.say("hr.not_waiting", reply_language(self.service))}
        answer = self._load(payload.decode("utf-8", "replace"), self.match_topic, force=True,
                            by=request["by"], request_id=request["id"])
        if answer["outcome"] in ("acted", "unknown") \
                or answer.get("code") == Reason.MATCH_FILE_BAD.value:
            # Loaded, taken (a task taken runs), or a bad file: it waits no more, and the same
            # retained text delivered again is not loaded twice.
            self.pending_match = None
            self._remember_match(digest)
            if answer["outcome"] != "unknown":
                self._notice(_notice_of(answer), digest)
        return answer

    def _on_loop(self, item: ArbiterAction | Task, what: str,
                 answer: Callable[[Reply], dict[str, Any]],
                 request_id: str | None) -> dict[str, Any]:
        """Submit `item` to the loop and wait, bounded, for what it did. Taken with no word of
        its outcome in time: "unknown", and a `cmd`'s Reply is kept for its retries."""
        waited = submit_and_wait(self.service, item, answer, REPLY_WAIT_S, OUTCOME_WAIT_S)
        lang = reply_language(self.service)       # the table's words, in its match's language
        thing = words.word_or_self("hr.what", what, lang)
        if waited is NotTaken.BUSY:
            return _not_applied(words.say("hr.busy", lang), lang)
        if isinstance(waited, NotTaken):
            return _not_applied(words.say("hr.late", lang, what=thing), lang)
        settled = waited.settled()
        if settled is not None:
            return settled
        if request_id is not None:
            self._await(request_id, waited)
        return {"ok": False, "outcome": "unknown",
                "reason": words.say("hr.unknown", lang, what=thing)}

    # --- the retained moved (SPEC §13.5) ----------------------------------------------------

    def on_moved(self, payload: bytes) -> None:
        """The hall's retained `moved` (at each subscription, or when the director moves this
        table's match): the match it names, if it is the one held here and not over, ends
        here as moved. Empty: the hall cleared it."""
        self.pending_moved = None
        if not payload:
            return
        try:
            notice = MovedNotice.parse(payload)
            command = parse_command([MOVED_TOPIC, notice.to])     # `to` must be a table id
            if has_control_characters(notice.by):
                raise ValueError("moved: `by` holds a control character")
        except ValueError as exc:
            log.warning("hall: a %s notice ignored as malformed: %s", MOVED_TOPIC,
                        words.say("hr.bad", "en", reason=str(exc)))
            return
        assert isinstance(command, Moved)
        by = notice.by or DEFAULT_BY
        at = self.service.clock_ns()
        task = Task(at, lambda: end_as_moved(self.service, notice.journal, command, by, at))
        waited = submit_and_wait(self.service, task, lambda reply: {"value": reply.value},
                                 REPLY_WAIT_S, OUTCOME_WAIT_S)
        if isinstance(waited, NotTaken):
            log.warning("hall: the clock's loop did not take the %s notice (%s); tried again",
                        MOVED_TOPIC, waited.value)
            self.pending_moved = payload
            return
        settled = waited.settled()
        done = settled["value"] if settled is not None else None
        if not isinstance(done, MovedDone):     # no word in time (it runs), or it failed
            log.warning("hall: no outcome of the %s notice for %s in time: %r", MOVED_TOPIC,
                        notice.journal, done)
            return
        self._moved_notice(notice, done)

    def _moved_notice(self, notice: MovedNotice, done: MovedDone) -> None:
        """Say what the notice did (on `notice`), and log it; a notice about another journal
        is only logged (it comes again at every reconnect)."""
        lang = reply_language(self.service)
        answer: dict[str, Any] = {"moved": notice.journal, "to": notice.to, "at": self._now()}
        if done.outcome is MovedOutcome.NOT_HELD:
            log.info("hall: %s names %s, not the match held here: nothing done", MOVED_TOPIC,
                     notice.journal)
            return
        if done.outcome is MovedOutcome.OVER:
            end = done.end.value if done.end is not None else ""
            answer.update(ok=False, code=Reason.MATCH_OVER.value, error=words.say(
                "hr.moved_over", lang, end=words.ended_words(end, lang=lang)))
            log.warning("hall: %s moved to %s, but it is over here (%s): not ended again",
                        notice.journal, notice.to, end)
        else:
            answer["ok"] = True
            if done.outcome is MovedOutcome.ENDED:
                answer["said"] = said_lines(list(done.effects), lang)
            log.info("hall: %s moved to %s by %s: %s", notice.journal, notice.to,
                     notice.by or DEFAULT_BY, "ended here as moved"
                     if done.outcome is MovedOutcome.ENDED else "ended here before")
        self.publish("notice", answer)

    # --- the retained match -----------------------------------------------------------------

    def on_match(self, payload: bytes) -> None:
        """A retained `match` (at each subscription) or a new one pushed by the director."""
        digest = match_digest(payload)
        with self.memory.lock:
            handled = self.memory.match == digest
        self.pending_match = None          # a newer match replaces the one that waited
        if payload and not handled:        # empty: cleared by the director
            self._load_match(payload, digest)

    def pending_can_load(self) -> bool:
        """A match waits, and the one it waited for is over; or a `moved` the loop did not
        take waits (any thread: a glance only)."""
        return self.pending_moved is not None or (
            self.pending_match is not None and not self._match_in_progress())

    def retry_pending(self) -> None:
        """Take again a `moved` the loop did not take; load the match that waited for the one
        in progress, once that one is over."""
        if self.pending_moved is not None:
            self.on_moved(self.pending_moved)
        payload = self.pending_match
        if payload is None or self._match_in_progress():
            return
        self.pending_match = None
        self._load_match(payload, match_digest(payload))

    def _load_match(self, payload: bytes, digest: str) -> None:
        try:
            text = payload.decode("utf-8")
        except UnicodeDecodeError as exc:
            self._notice({"ok": False, "error": words.say(
                "hr.not_utf8", reply_language(self.service), topic=self.match_topic,
                byte=exc.start)}, digest)
            self._remember_match(digest)
            return
        answer = self._load(text, self.match_topic, force=False)
        if answer.get("code") == Reason.MATCH_IN_PROGRESS.value:
            self.pending_match = payload
            answer["pending"] = True
            answer["reason"] = (answer["reason"]
                                + words.say("load.waits", reply_language(self.service)))
        elif answer["outcome"] in ("acted", "refused", "unknown"):
            # Loaded, a bad file, or taken by the loop (a task it took runs): never again for
            # this text, even delivered again at a reconnect (twice would be worse than once).
            self._remember_match(digest)
        else:                               # not taken (the loop busy): it is tried again
            self.pending_match = payload
            answer["pending"] = True
            answer["reason"] = words.say("hr.tried_again", reply_language(self.service))
        notice = _notice_of(answer)
        log.info("hall: match from %s: %s", self.match_topic,
                 "loaded" if answer["ok"] else answer["reason"].splitlines()[0])
        self._notice(notice, digest)

    def _remember_match(self, digest: str) -> None:
        with self.memory.lock:
            self.memory.match = digest
            self.memory.save()

    def _notice(self, notice: dict[str, Any], digest: str) -> None:
        self.publish("notice", {**notice, "match": digest, "at": self._now()})

    def _match_in_progress(self) -> bool:
        session = self.service.session
        return session is not None and in_progress(session.engine)

    def _now(self) -> str:
        return iso_utc(self.wall_ns())


class MovedOutcome(Enum):
    """What a `moved` notice did at this clock (SPEC §13.5)."""

    ENDED = "ended"            # the match it names was held here: ended as moved now
    ALREADY = "already"        # held here and ended as moved before (the notice again)
    OVER = "over"              # held here, but over otherwise before the notice came
    NOT_HELD = "not_held"      # not the match held here (none, or another): nothing done


@dataclass(frozen=True)
class MovedDone:
    """A `moved` notice's outcome on the loop: what it did, how the match stood, and the
    effects of the end (ENDED only)."""

    outcome: MovedOutcome
    end: EndReason | None = None
    effects: tuple[Effect, ...] = ()


def end_as_moved(service: ClockService, journal: str, command: Moved, by: str,
                 at: int) -> MovedDone:
    """On the loop (a `Task`): end the match held here as moved when its journal is `journal`
    and it is not over. Checked here, in order with every load, so that a match loaded since
    the notice came is never the one it ends."""
    session = service.session
    if session is None or session.journal is None \
            or Path(session.journal.path).name != journal:
        return MovedDone(MovedOutcome.NOT_HELD)
    end = session.engine.match.end_reason
    if end is EndReason.MOVED:
        return MovedDone(MovedOutcome.ALREADY, end)
    if end is not None:
        return MovedDone(MovedOutcome.OVER, end)
    t = max(session.engine.now, service.engine_time(at))   # engine time, never before the last
    effects = service.apply(ArbiterAction(t, command, "hall", by))
    return MovedDone(MovedOutcome.ENDED, session.engine.match.end_reason, tuple(effects))


def _parse_cmd(payload: bytes) -> dict[str, Any]:
    if len(payload) > MAX_CONTINUE_PAYLOAD:
        raise BadRequest(f"longer than {MAX_CONTINUE_PAYLOAD} bytes")
    try:
        obj = json.loads(payload)
    except (ValueError, RecursionError) as exc:
        raise BadRequest(f"not a JSON object ({exc})") from None
    if not isinstance(obj, dict):
        raise BadRequest("not a JSON object")
    unknown = sorted(set(obj) - CMD_KEYS)
    if unknown:
        raise BadRequest(f"unknown key {unknown[0]!r}; allowed: 'id', 'by', 'command', 'text'")
    if not valid_id(obj.get("id")):
        raise BadRequest(f"'id' must be 1 to {MAX_ID} ASCII letters, digits, '-', '_', '.' or "
                         "':'")
    by = obj.get("by", DEFAULT_BY)
    if not isinstance(by, str) or not 0 < len(by) <= MAX_BY or has_control_characters(by):
        raise BadRequest(f"'by' must be a name of 1 to {MAX_BY} characters")
    command = obj.get("command")
    if not isinstance(command, str) or not command.split() or has_control_characters(command):
        raise BadRequest("'command' must be the words of a command, e.g. \"deduct left 30s\"")
    text = obj.get("text")
    if text is not None and not isinstance(text, str):
        raise BadRequest("'text' must be the match file's TOML text")
    if len(payload) > MAX_PAYLOAD and command.split()[0] != "continue":
        raise BadRequest(f"longer than {MAX_PAYLOAD} bytes")  # only a journal is longer
    return {"id": obj["id"], "by": by, "command": command, "text": text}


def _id_in(payload: bytes) -> str | None:
    """The id of a malformed cmd, when it has a usable one (so the director can match it)."""
    try:
        obj = json.loads(payload)
    except (ValueError, RecursionError):
        return None
    request_id = obj.get("id") if isinstance(obj, dict) else None
    return request_id if valid_id(request_id) else None


def _notice_of(answer: dict[str, Any]) -> dict[str, Any]:
    """The `notice` that says what became of a `match`, from the answer to its load."""
    notice = {"ok": answer["ok"]}
    if answer["ok"]:
        notice["said"] = answer["said"]
    else:
        notice.update(error=answer["reason"], code=answer.get("code"),
                      pending=answer.get("pending", False))
    return notice


def _bad(reason: str, lang: str = "en") -> dict[str, Any]:
    return {"ok": False, "outcome": "bad request",
            "reason": words.say("hr.bad", lang, reason=reason)}


def _not_applied(why: str, lang: str = "en") -> dict[str, Any]:
    return {"ok": False, "outcome": "not applied",
            "reason": words.say("hr.not_applied", lang, why=why)}


def _acted(reply: Reply, lang: str = "en") -> dict[str, Any]:
    """The answer to a command once the loop has applied it; its words in `lang` (the match's:
    the hall's page shows them as they come)."""
    effects = reply.effects
    refused = refusals(effects)
    answer: dict[str, Any] = {"said": said_lines(effects, lang),
                              "effects": effects_data(effects)}
    if refused:
        reason = refused[-1].reason
        return {"ok": False, "outcome": "refused",
                "reason": refusal_text(refused, lang),
                "code": reason.value if reason else None, **answer}
    return {"ok": True, "outcome": "acted", **answer}


def _loaded(reply: Reply) -> dict[str, Any]:
    """The answer to a load once the loop has run it."""
    outcome = reply.value
    if not isinstance(outcome, LoadOutcome):      # the load failed: its bug is in the log
        return {"ok": False, "outcome": "unknown",
                "reason": f"the clock failed loading the match ({outcome!r})"}
    if outcome.ok:
        return {"ok": True, "outcome": "acted", "said": outcome.said}
    return {"ok": False, "outcome": "refused", "reason": outcome.error or "",
            "code": outcome.reason.value if outcome.reason else None}


# --- continue another table's match here (SPEC §14: `cmd` `continue FROM-TABLE JOURNAL [--force]`)

COPIED_FROM_HALL = "continue-from-hall"     # where the hall's copy is written first, in the state


TABLE_WORD = re.compile(r"[A-Za-z0-9_-]{1,32}")

def continue_request(requests: HallRequests, request: dict[str, Any]) -> dict[str, Any]:
    """A `cmd` from the director's account: continue FROM-TABLE's journal, its text (the
    hall's copy) in the request's `text`. The text is bounded and verified here as a journal
    from a stick is: the hall is trusted to send, not to be right."""
    parts, text = request["command"].split(), request.get("text")
    flags = parts[3:]
    lang = reply_language(requests.service)          # the table's words, in its match's
    if len(parts) < 3 or flags not in ([], ["--force"]) or text is None:
        return _bad(words.say("cont.hall_usage", lang), lang)
    table_word, name = parts[1], parts[2]
    if TABLE_WORD.fullmatch(table_word) is None or JOURNAL_NAME.fullmatch(name) is None:
        return _bad(words.say("cont.hall_name", lang, name=repr(name[:80]),
                              table=repr(table_word[:40])), lang)
    blob = text.encode("utf-8")
    if len(blob) > MAX_SOURCE_BYTES:
        return _bad(words.say("cont.hall_too_long", lang, mib=MAX_SOURCE_BYTES >> 20), lang)
    service, table = requests.service, requests.table
    folder = table.state_dir / COPIED_FROM_HALL / table_word
    try:
        folder.mkdir(parents=True, exist_ok=True)
        write_atomically(folder / name, blob)
    except (JournalError, OSError) as exc:
        return {"ok": False, "outcome": "refused",
                "reason": words.say("cont.hall_not_kept", lang, error=exc),
                "code": Reason.JOURNAL_NOT_WRITTEN.value}
    at = service.clock_ns()
    work = checked_then(service, table, folder / name, via="hall", force=flags == ["--force"],
                        at=at, source_of="hall", by=request["by"])
    if isinstance(work, LoadOutcome):
        return {"ok": False, "outcome": "refused", "reason": work.error or "",
                "code": work.reason.value if work.reason else None}
    return requests._on_loop(Task(at, work), "the match", _loaded, request["id"])

"""A request to the arbiter's socket or the hall's `cmd` (SPEC §7, §14): its words parsed and
bounded, handed to the clock's loop and waited for, and its answer said in the match's language;
the limits and exit statuses the socket's server and client share."""

from __future__ import annotations

import json
import socket
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum
from typing import Any

from gammonclock import words
from gammonclock.core.effects import ArbiterCommand, Effect, Refused, Undone
from gammonclock.core.match import ArbiterAction
from gammonclock.durations import has_control_characters
from gammonclock.errors import GammonclockError

from .inbox import Reply, Task
from .lifecycle import MAX_MATCH_FILE
from .service import ClockService

# Bytes in a request line, without its newline: a command is short, a new-match request carries
# a whole match file (non-ASCII text is sent as UTF-8, not escaped).
MAX_REQUEST = 2 * MAX_MATCH_FILE + 4096
MAX_ID = 64                   # characters in a request id
MAX_REPLY = 1 << 20           # bytes the client reads at most
# Never a SIGPIPE from a socket whatever the process's disposition: a write to a client that
# went away is an error on that one write.
NO_SIGNAL = getattr(socket, "MSG_NOSIGNAL", 0)

EXIT_ACTED, EXIT_REFUSED, EXIT_BAD, EXIT_NO_CLOCK, EXIT_NOT_DONE = 0, 1, 2, 3, 4
EXIT_NOT_ALLOWED = 5          # a login outside the socket's group


@dataclass(frozen=True)
class Limits:
    """How long and how much one client may take (seconds, bytes, connections)."""

    request_deadline_s: float = 2.0   # from accept to the end of the request line
    reply_timeout_s: float = 5.0      # the loop's answer; then the command is withdrawn …
    outcome_grace_s: float = 5.0      # … or, if the loop has already taken it, its outcome
    max_request: int = MAX_REQUEST
    max_handlers: int = 32            # connections served at once
    slot_wait_s: float = 0.25         # how long a new connection may wait for a free handler
    send_timeout_s: float = 1.0       # a reply not taken by then is dropped
    remembered_ids: int = 256

    @property
    def longest_answer_s(self) -> float:
        """The longest a request can take once its line is in (both waits)."""
        return self.reply_timeout_s + self.outcome_grace_s


def _shown(request: bytes) -> str:
    """A request as the log shows it: short, and safe whatever its bytes."""
    text = request[:480].decode("utf-8", "replace")    # whole characters, then cut
    return repr(text[:120]) + ("…" if len(text) > 120 else "")



class RequestError(GammonclockError, ValueError):
    """A request line the server will not act on; the message says why and what is allowed."""

@dataclass(frozen=True)
class Request:
    words: list[str]
    id: str | None = None
    match_text: str | None = None  # new-match: the match file's text
    file: str | None = None       # … and its name, for the errors

def parse_request(line: bytes, max_request: int = MAX_REQUEST) -> Request:
    """One request line (without its newline): the words of a command, or a JSON object
    `{"id": "…", "command": "…"}`. Raises RequestError; nothing is ever cut or guessed."""
    if len(line) > max_request:
        raise RequestError(f"the request is longer than {max_request} bytes; nothing was done")
    try:
        text = line.decode("utf-8").strip()
    except UnicodeDecodeError as exc:
        raise RequestError(f"the request is not UTF-8 text (byte 0x{line[exc.start]:02x} at "
                           f"offset {exc.start}); nothing was done") from None
    if not text.startswith("{"):
        return Request(_words(text))
    try:
        obj = json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise RequestError(f"the request starts with '{{' but is not a JSON object ({exc}); "
                           "nothing was done") from None
    if not isinstance(obj, dict):
        raise RequestError("the request is JSON but not an object; nothing was done")
    unknown = sorted(set(obj) - {"id", "command", "text", "file"})
    if unknown:
        raise RequestError(f"unknown key {unknown[0]!r} in the request; allowed: 'id', "
                           "'command', 'text', 'file'; nothing was done")
    for key in ("text", "file"):
        if obj.get(key) is not None and not isinstance(obj[key], str):
            raise RequestError(f"the request's {key!r} must be a string; nothing was done")
    command, request_id = obj.get("command"), obj.get("id")
    if not isinstance(command, str):
        raise RequestError("the request's 'command' must be a string of words, e.g. "
                           "\"deduct left 30s\"; nothing was done")
    if request_id is not None and not _valid_id(request_id):
        raise RequestError(f"the request's 'id' must be 1 to {MAX_ID} ASCII letters, digits, "
                           "'-', '_', '.' or ':'; nothing was done")
    return Request(_words(command), request_id, obj.get("text"), obj.get("file"))

def _words(text: str) -> list[str]:
    refused = [char for char in text if char != "\t" and has_control_characters(char)]
    if not refused:
        return text.split()
    # A JSON "\udcff" escape decodes to a lone surrogate (category Cs): not text at all.
    if any(unicodedata.category(char) == "Cs" for char in refused):
        raise RequestError("the request is not UTF-8 text (a lone surrogate); nothing was "
                           "done")
    raise RequestError(f"the request holds a control character (U+{ord(refused[0]):04X}); "
                       "nothing was done")

def _valid_id(value: object) -> bool:
    return (isinstance(value, str) and 0 < len(value) <= MAX_ID and value.isascii()
            and all(c.isalnum() or c in "-_.:" for c in value))

class NotTaken(Enum):
    """Why the loop certainly never applies a request."""

    BUSY = "busy"        # too many inputs were waiting: turned away at once
    LATE = "late"        # not taken in time, and withdrawn: the loop will skip it

@dataclass(frozen=True)
class Awaited:
    """A request the loop took: its Reply, and what turns that Reply into the answer once the
    loop has said what it did. One whose outcome was unknown when answered is kept under its
    request id, so that a retry is answered with what the clock did, not "unknown" again."""

    reply: Reply
    answer: Callable[[Reply], dict[str, Any]]

    def settled(self) -> dict[str, Any] | None:
        """The answer once the loop has delivered the outcome; None while it is unknown."""
        return self.answer(self.reply) if self.reply.done.is_set() else None

def submit_and_wait(service: ClockService, item: ArbiterAction | Task,
                    answer: Callable[[Reply], dict[str, Any]], taken_s: float,
                    grace_s: float) -> Awaited | NotTaken:
    """Submit `item` to the loop and wait, bounded, for it: why it was certainly not applied,
    or its Awaited (`settled()` None: taken, and no word of its outcome within `grace_s`)."""
    reply = Reply()
    if not service.submit(item, reply):
        return NotTaken.BUSY
    if not reply.wait_taken(taken_s, grace_s):
        return NotTaken.LATE
    return Awaited(reply, answer)

def refusals(effects: list[Effect]) -> list[Refused]:
    """The refusals that make a command's outcome "refused"; none when it was an undo that acted
    (the commands it replayed and that no longer apply are not a refusal of the undo)."""
    if any(isinstance(e, Undone) for e in effects):
        return []
    return [e for e in effects if isinstance(e, Refused)]

def reply_language(service: ClockService) -> str:
    """The language of the replies about a match: the match's `[display] language` (SPEC §15;
    the session keeps it), English without a match."""
    session = service.session
    return words.language(session.language if session is not None else None)

def said_lines(effects: list[Effect], lang: str) -> list[str]:
    """A reply's "said": what each effect did, in `lang`. The command's own line stays as it
    was given ("arbiter: deduct left 30s"): the hall's page picks it out by its "arbiter: ".
    Spans in seconds are said to the tenth (people read them; the journal keeps every ns)."""
    return [words.describe(e, lang, rounded=True) for e in effects]

def refusal_text(refused: list[Refused], lang: str) -> str:
    """Why commands were refused: "deduct left 20m: больше половины оставшегося резерва"."""
    return "; ".join(_refusal(e, lang) for e in refused)

def _refusal(e: Refused, lang: str) -> str:
    return (f"{words.what_words(e.reason, e.what, lang, e.facts)}: "
            f"{words.why(e.reason, e.why, lang, e.facts)}")

def _replayed_commands(effects: list[Effect], lang: str = "en"
                       ) -> tuple[list[str], list[str]]:
    """The commands an undo applied again, and why those that no longer apply were refused.
    The effects are the replay's, then the undo's own command and `Undone`: each replayed
    command is its `ArbiterCommand` and what follows it up to the next one."""
    starts = [i for i, e in enumerate(effects) if isinstance(e, ArbiterCommand)][:-1]
    again, dropped = [], []
    for n, start in enumerate(starts):
        end = starts[n + 1] if n + 1 < len(starts) else len(effects)
        command = effects[start]
        assert isinstance(command, ArbiterCommand)
        refusals = [e for e in effects[start + 1:end] if isinstance(e, Refused)]
        if refusals:
            dropped += [_refusal(e, lang) for e in refusals]
        else:
            again.append(command.text)
    return again, dropped

def _not_applied(error: str, busy: bool = False) -> dict[str, Any]:
    answer: dict[str, Any] = {"ok": False, "outcome": "not applied", "applied": False,
                              "error": error}
    if busy:
        answer["busy"] = True
    return answer

def _unknown(what: str, lang: str = "en") -> dict[str, Any]:
    return {"ok": False, "outcome": "unknown", "error": words.say("sock.unknown", lang, what=what)}

def exit_status(answer: dict[str, Any]) -> int:
    """The `gammonclock arbiter` exit status for a reply (see the module's docstring)."""
    outcome = answer.get("outcome")
    if outcome in ("not applied", "unknown"):
        return EXIT_NOT_DONE
    if outcome == "refused" or (not answer.get("ok") and answer.get("refused")):
        return EXIT_REFUSED
    return EXIT_ACTED if answer.get("ok") is True else EXIT_BAD

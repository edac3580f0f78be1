"""`gammonclock arbiter …`: the client of the arbiter's socket (SPEC §7): a request encoded, sent,
tried again once when the clock is busy, and its reply read back whole and checked.

Its own errors are Problems (words.py "cl.*"): English as a str, said in another language by the
command line (`cli/arbiter.py` chooses which: see `client_language`)."""

from __future__ import annotations

import errno
import json
import logging
import socket
import time
import uuid
from pathlib import Path
from typing import Any

from gammonclock import words
from gammonclock.config.problems import Problem, Told
from gammonclock.errors import GammonclockError
from gammonclock.words import WORDS

from .arbiter_requests import (
    EXIT_BAD,
    EXIT_NOT_DONE,
    MAX_REPLY,
    MAX_REQUEST,
    NO_SIGNAL,
    Limits,
    _shown,
)

log = logging.getLogger(__name__)

CLIENT_TIMEOUT_S = Limits().request_deadline_s + Limits().longest_answer_s + 3

CONNECT_RETRY_S = 1.0         # a full backlog (EAGAIN), or a busy reply: try again this long

class ClientError(GammonclockError):
    """`ask` could not get a usable answer; the message says what happened and what to do."""

    exit_status = EXIT_BAD

class UnsendableRequest(ClientError, ValueError):
    """The words cannot be sent (not UTF-8, too long); nothing was sent."""

class BadReply(ClientError, ValueError):
    """What came back is not a reply of the clock."""

class ReplyLost(ClientError):
    """The request was sent, and no reply came even to one retry: its outcome is unknown."""

    exit_status = EXIT_NOT_DONE

class _NoReply(GammonclockError):
    """The connection failed after the request was sent (reset, timeout, empty reply)."""

    def __init__(self, why: str, empty: bool) -> None:
        super().__init__(why)
        self.why = why
        self.empty = empty


def os_error_words(exc: BaseException) -> str:
    """What the OS said of `exc` (its strerror, as it is), said in another language when the
    catalogue knows its errno or it is a timeout ("cl.errno.ENOENT", "cl.timed_out")."""
    if isinstance(exc, TimeoutError) and not exc.errno:
        return Problem("cl.timed_out")
    english = (exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
               or type(exc).__name__)
    name = errno.errorcode.get(exc.errno or 0, "") if isinstance(exc, OSError) else ""
    key = f"cl.errno.{name}"
    if key not in WORDS:
        return english
    return Told(english, lambda lang: english if words.language(lang) == "en"
                else words.say(key, lang))

def encode_request(words: list[str], request_id: str, text: str | None = None,
                   file: str | None = None) -> bytes:
    """The JSON request line for these words (and a match file's `text`, named `file`); raises
    UnsendableRequest."""
    for number, word in enumerate(words, 1):
        try:
            word.encode("utf-8")
        except UnicodeEncodeError:
            raise UnsendableRequest(Problem("cl.not_utf8_word", number=number,
                                            word=repr(word))) from None
    request: dict[str, str] = {"id": request_id, "command": " ".join(words)}
    if text is not None:
        request["text"] = text
    if file is not None:          # new-match: its name; continue: the journal's path
        request["file"] = file
    try:
        line = json.dumps(request, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        raise UnsendableRequest(Problem("cl.file_not_utf8")) from None
    if len(line) > MAX_REQUEST:
        raise UnsendableRequest(Problem("cl.too_long", max=MAX_REQUEST))
    return line + b"\n"

def ask(path: Path, words: list[str], timeout_s: float = CLIENT_TIMEOUT_S,
        request_id: str | None = None, text: str | None = None,
        file: str | None = None) -> dict[str, Any]:
    """Send one request to a running clock and return its reply (without the id).

    Raises OSError when no clock listens at `path` (nothing sent), and ClientError when the words
    cannot be sent, the reply is not one, or no reply came. A connection that fails after the
    request went out is retried once with the same id, which the clock never applies twice."""
    request_id = request_id or uuid.uuid4().hex
    request = encode_request(words, request_id, text, file)
    give_up_busy = time.monotonic() + CONNECT_RETRY_S
    while True:
        data = _exchange_with_a_retry(path, request, timeout_s, " ".join(words))
        answer = _decode_reply(data, request_id)
        if not (answer.get("busy") and time.monotonic() < give_up_busy):
            return answer
        time.sleep(0.05)        # not applied: the same id again is safe

def _exchange_with_a_retry(path: Path, request: bytes, timeout_s: float, what: str) -> bytes:
    try:
        return _exchange(path, request, timeout_s)
    except _NoReply as first:
        log.info("arbiter: no reply (%s); asking once more with the same id", first)
    try:
        return _exchange(path, request, timeout_s)
    except (_NoReply, OSError) as again:
        unknown = Problem("cl.unknown", what=what)
        if isinstance(again, _NoReply) and again.empty:
            raise BadReply(Problem("cl.closed_twice", unknown=unknown)) from None
        why = again.why if isinstance(again, _NoReply) else os_error_words(again)
        raise ReplyLost(Problem("cl.no_reply_twice", why=why, unknown=unknown)) from None

def _exchange(path: Path, request: bytes, timeout_s: float) -> bytes:
    """One connection: the reply line. OSError before the request went out; _NoReply after."""
    with _connect(path, timeout_s) as conn:
        deadline = time.monotonic() + timeout_s
        try:
            conn.sendall(request, NO_SIGNAL)
        except OSError:
            pass     # it may have answered before it read (a busy reply): read what came
        data = b""
        try:
            while not data.endswith(b"\n") and len(data) <= MAX_REPLY:
                conn.settimeout(max(0.001, deadline - time.monotonic()))
                chunk = conn.recv(65536)
                if not chunk:
                    break
                data += chunk
        except OSError as exc:
            if not data.endswith(b"\n"):
                raise _NoReply(_said_of(exc), empty=False) from None
        if not data.endswith(b"\n") and len(data) <= MAX_REPLY:
            raise _NoReply(Problem("cl.closed_before" if not data else "cl.closed_midway"),
                           empty=not data)
        return data

def _connect(path: Path, timeout_s: float) -> socket.socket:
    """A connection to the clock; a full backlog (EAGAIN) is retried for CONNECT_RETRY_S, while
    no listener (ENOENT, ECONNREFUSED) is an OSError at once."""
    give_up = time.monotonic() + CONNECT_RETRY_S
    while True:
        conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        conn.settimeout(timeout_s)
        try:
            conn.connect(str(path))
            return conn
        except BlockingIOError:
            conn.close()
            if time.monotonic() >= give_up:
                raise
            time.sleep(0.01)
        except BaseException:
            conn.close()
            raise

def _decode_reply(data: bytes, request_id: str) -> dict[str, Any]:
    try:
        answer = json.loads(data)
    except (ValueError, RecursionError):
        raise BadReply(Problem("cl.not_json", data=_shown(data))) from None
    if not isinstance(answer, dict) or not isinstance(answer.get("ok"), bool):
        raise BadReply(Problem("cl.not_answer", data=_shown(data)))
    if answer.pop("id", request_id) != request_id:
        raise BadReply(Problem("cl.other_request"))
    return answer


def _said_of(exc: OSError) -> str:
    """A failed read's words as the retry's log and the error show them: the OS's own
    (str(exc): "[Errno 104] Connection reset by peer", "timed out"), a timeout said in the
    catalogue's words in another language."""
    english = str(exc) or type(exc).__name__
    if isinstance(exc, TimeoutError) and not exc.errno:
        return Told(english, lambda lang: english if words.language(lang) == "en"
                    else words.say("cl.timed_out", lang))
    return english

"""`gammonclock arbiter …`: the client of the arbiter's socket (SPEC §7): a request encoded, sent,
tried again once when the clock is busy, and its reply read back whole and checked."""

from __future__ import annotations

import json
import logging
import socket
import time
import uuid
from pathlib import Path
from typing import Any

from gammonclock.errors import GammonclockError

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
        self.empty = empty

def encode_request(words: list[str], request_id: str, text: str | None = None,
                   file: str | None = None) -> bytes:
    """The JSON request line for these words (and a match file's `text`, named `file`); raises
    UnsendableRequest."""
    for number, word in enumerate(words, 1):
        try:
            word.encode("utf-8")
        except UnicodeEncodeError:
            raise UnsendableRequest(f"word {number} ({word!r}) is not UTF-8 text; nothing was "
                                    "sent") from None
    request: dict[str, str] = {"id": request_id, "command": " ".join(words)}
    if text is not None:
        request["text"] = text
    if file is not None:          # new-match: its name; continue: the journal's path
        request["file"] = file
    try:
        line = json.dumps(request, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        raise UnsendableRequest("the file is not UTF-8 text; nothing was sent") from None
    if len(line) > MAX_REQUEST:
        raise UnsendableRequest(f"the request is longer than the socket takes ({MAX_REQUEST} "
                                "bytes as JSON); nothing was sent")
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
        unknown = (f"whether `{what}` was applied is unknown: check with `gammonclock arbiter "
                   "status` before repeating it")
        if isinstance(again, _NoReply) and again.empty:
            raise BadReply(f"the clock closed the connection without a reply, twice; {unknown}"
                           ) from None
        raise ReplyLost(f"the clock took the request but no reply came ({again}), twice; "
                        f"{unknown}") from None

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
                raise _NoReply(str(exc) or type(exc).__name__, empty=False) from None
        if not data.endswith(b"\n") and len(data) <= MAX_REPLY:
            raise _NoReply("the connection closed " + ("before a reply" if not data else
                                                       "in the middle of the reply"),
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
        raise BadReply(f"the reply is not JSON: {_shown(data)}") from None
    if not isinstance(answer, dict) or not isinstance(answer.get("ok"), bool):
        raise BadReply(f"the reply is not an answer of the clock: {_shown(data)}")
    if answer.pop("id", request_id) != request_id:
        raise BadReply("the reply is for another request")
    return answer

"""What the table and the hall say to each other on the broker (SPEC §14; hall/PROTOCOL.md has
every payload): the broker's URL, an event as `P/T/events` carries it, the hall's `P/T/ack`, and
instants as ISO 8601 UTC. Both sides import it; neither imports the other."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlsplit

from gammonclock.errors import GammonclockError

# A journal's file name as the clock makes it and the hall archives it: word characters of any
# script (`\w`), `-` and `.`; no leading `.`, no `..`; at most 160 before `.jsonl`.
JOURNAL_NAME = re.compile(r"(?!\.)(?!.*\.\.)[\w.-]{1,160}\.jsonl")

# --- the broker -------------------------------------------------------------------------------

DEFAULT_PORTS = {"mqtt": 1883, "mqtts": 8883}

class BrokerURLError(GammonclockError, ValueError):
    """A --broker URL that is not mqtt://HOST[:PORT] or mqtts://HOST[:PORT]."""

@dataclass(frozen=True)
class BrokerURL:
    tls: bool
    host: str
    port: int

    @staticmethod
    def parse(text: str) -> BrokerURL:
        parts = urlsplit(text)
        if parts.scheme not in DEFAULT_PORTS or not parts.hostname:
            raise BrokerURLError(f"broker {text!r} is not a broker URL; use mqtt://HOST[:PORT] "
                                 "or mqtts://HOST[:PORT] (TLS, with --ca-file)")
        try:
            port = parts.port or DEFAULT_PORTS[parts.scheme]
        except ValueError:
            raise BrokerURLError(f"broker {text!r}: the port is not a number from 1 to "
                                 "65535") from None
        if parts.path not in ("", "/") or parts.query or parts.username:
            raise BrokerURLError(f"broker {text!r}: only a scheme, a host and a port; the "
                                 "account is --user and --password-file")
        return BrokerURL(parts.scheme == "mqtts", parts.hostname, port)


# --- the journal's events and the hall's ack ---------------------------------------------------

def iso_utc(wall_ns: int) -> str:
    """An instant on the wall clock as ISO 8601 UTC with milliseconds: 2025-05-01T14:03:07.250Z."""
    at = datetime.fromtimestamp(wall_ns / 1e9, tz=UTC)
    return at.strftime("%Y-%m-%dT%H:%M:%S.") + f"{at.microsecond // 1000:03d}Z"


@dataclass(frozen=True)
class Event:
    """One journal record with effects, as `P/T/events` carries it. `after` is the seq of the
    event of the same journal published before it (0 for the first): the hall acknowledges only
    a gap-free chain."""

    journal: str
    seq: int
    wall: int
    effects: list[Any]
    after: int = 0
    # The journal's sealed lines after `after` up to `seq` (the header too in a journal's first
    # event), so the hall holds the whole journal as it stood (a continuation on another clock,
    # SPEC §13.5); `records_cut`: a line too long for a message was left out.
    records: tuple[str, ...] = ()
    records_cut: bool = False

    def payload(self) -> dict[str, Any]:
        payload = {"journal": self.journal, "seq": self.seq, "after": self.after,
                   "at": iso_utc(self.wall), "effects": self.effects}
        if self.records:
            payload["records"] = list(self.records)
        if self.records_cut:
            payload["records_cut"] = True
        return payload


MAX_EVENT_RECORDS_BYTES = 24 * 1024     # lines an event carries, and one line at most: the
                                        # lines and the event's own effects stay well under
                                        # the 64 KiB a hall takes of an event

MAX_ARCHIVED = 32            # names an ack lists as archived, at most (the newest)
MAX_ACK_BYTES = 64 * 1024    # an ack names at most a journal and 4 x MAX_ARCHIVED of them
MAX_NAME = 255               # a journal's file name
MAX_SEQ = 1 << 53            # far past any journal (a record a press); exact in JSON readers

@dataclass(frozen=True)
class Ack:
    """The hall's `P/T/ack`: the journal and seq up to which it holds this table's events
    without a gap (journal None: none yet), and the finished journals its archive has written
    and verified (the newest few)."""

    journal: str | None
    seq: int
    archived: frozenset[str]

    @staticmethod
    def parse(payload: bytes) -> Ack:
        """The ack in PAYLOAD; ValueError naming the field when it is not one (bounded before
        anything of it is used: its size, the seq, each name's length)."""
        data = json_object(payload, "ack", MAX_ACK_BYTES)
        journal, seq, archived = data.get("journal"), data.get("seq"), data.get("archived", [])
        if journal is not None and (not isinstance(journal, str) or not journal
                                    or len(journal) > MAX_NAME):
            raise ValueError("ack: `journal` must be a journal name or null")
        if type(seq) is not int or not 0 <= seq <= MAX_SEQ:
            raise ValueError(f"ack: `seq` must be a whole number from 0 to {MAX_SEQ}")
        if not isinstance(archived, list) or not all(
                isinstance(n, str) and len(n) <= MAX_NAME for n in archived):
            raise ValueError("ack: `archived` must be a list of journal names")
        return Ack(journal, seq, frozenset(archived[-4 * MAX_ARCHIVED:]))

def json_object(payload: bytes, what: str, bound: int) -> dict[str, Any]:
    """PAYLOAD as a JSON object, measured before it is parsed (at most `bound` bytes), strictly
    (no NaN or Infinity); ValueError saying `what: …` otherwise."""
    if len(payload) > bound:
        raise ValueError(f"{what}: longer than {bound} bytes")
    try:
        data = json.loads(payload, parse_constant=_no_constant)
    except (ValueError, RecursionError) as exc:
        raise ValueError(f"{what}: not JSON ({exc})") from None
    if not isinstance(data, dict):
        raise ValueError(f"{what}: not a JSON object")
    return data


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


# --- a match moved to another clock (SPEC §13.5, §14.1) ----------------------------------------

MOVED_TOPIC = "moved"         # P/T/moved, retained, written only by the director's account


@dataclass(frozen=True)
class Moved:
    """The hall's retained `P/T/moved`: this table's match (journal `journal`) was moved to
    table `to` by `by`, and the spare continued it; the clock must end it there and never
    resume it (hall/PROTOCOL.md)."""

    journal: str
    to: str
    by: str
    at: str

    def payload(self) -> bytes:
        return json.dumps({"journal": self.journal, "to": self.to, "by": self.by,
                           "at": self.at}, ensure_ascii=False).encode("utf-8")

    @staticmethod
    def parse(payload: bytes) -> Moved:
        """The notice in PAYLOAD; ValueError naming the field when it is not one (an empty
        payload, the hall clearing it, is not parsed: the caller sees it as none)."""
        data = json_object(payload, "moved", 4096)
        fields = {}
        for name, bound in (("journal", 200), ("to", 32), ("by", 64), ("at", 40)):
            value = data.get(name, "" if name in ("by", "at") else None)
            if not isinstance(value, str) or len(value) > bound or (
                    name in ("journal", "to") and not value):
                raise ValueError(f"moved: `{name}` must be text of at most {bound} characters")
            fields[name] = value
        if JOURNAL_NAME.fullmatch(fields["journal"]) is None:
            raise ValueError("moved: `journal` must be a journal's name (NAME.jsonl)")
        return Moved(**fields)

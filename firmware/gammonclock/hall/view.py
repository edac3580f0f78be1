"""The director's view of the hall (SPEC §14): what every table last said, kept from the broker's
messages. Pure bookkeeping: no network, no clock of its own (the caller passes `now_ms`, the
hall's wall clock in milliseconds), so the tests and the benchmark drive it directly.

Every table's message is untrusted (SPEC §14): it is parsed strictly (NaN and Infinity are not
JSON, sizes, nesting and integers are bounded), its shape and bounds are checked, and only
validated, normalised data is kept, so a card always serialises as JSON (`allow_nan=False`)
whatever a table sent. A bad message spoils at most its own table's card: it is refused (the
card keeps its last good state), counted, and shown on that card as one alert kept up to date.

- Events are counted once per `(journal, seq)`: delivery is at least once, and a clock
  republishes from its journal after a reconnect or a restart. Per journal the view keeps the
  highest seq and a window of the seqs below it (`SeqWindow`), for a bounded number of
  journals per table: memory stays bounded under any flood.
- A state replaces the one before unless it is older: by the journal and seq it carries (the
  journals in the order the table's states brought them), else by arrival (a retained state,
  delivered at a reconnect, only if its `at` is not older). A live state is never silenced for
  long by one outlier: after `REWIND_AFTER` live states in a row that look older, the card
  takes them (the outlier was the card's).
- Reserves count in the browser from the state's `at` translated to the hall's clock: a Pi
  without a real-time clock may be off by minutes or days, so each table's offset is estimated
  from its live (not retained) states as the smallest `received - at` (latency only adds to
  it) among the samples near their median (one outlier cannot move it), and the result is
  clamped to the moment the state was received (and at most `MAX_LAG_MS` before).
- A table needs the director while its state says so (a flag, a break overrun, a paused clock,
  offline) and for every alert (a flag that fell, a challenge, a refused command or match, a
  failed arbiter PIN, a bad message) until the director marks it seen; at most `ALERTS_KEPT`
  alerts are kept per table (the least urgent, then the oldest, go first; `alerts_dropped`
  counts them).
"""

from __future__ import annotations

import re
from typing import Any

from gammonclock.errors import GammonclockError

from .accounts import TABLE_ID
from .events import event_words
from .health import health_of, marks
from .messages import (
    MAX_EFFECTS,
    MAX_HEALTH,
    MAX_JOURNAL,
    MAX_ONLINE,
    MAX_PAYLOAD,
    MAX_SEQ,
    MAX_SHORT,
    MAX_TEXT,
    SIDES,
    BadMessage,
    clip,
    int_of,
    iso_ms,
    natural_key,
    notice_of,
    reply_of,
    shown,
    state_of,
    strict_json,
    text_of,
)
from .tables import REPLIES_KEPT, REWIND_AFTER, SEVERITY, AlertWords, Need, TableView

MAX_LAG_MS = 30_000          # a state's reserves are never counted from further back than this
MAX_TABLES = 1000
BAD_REFRESH_MS = 1_000       # a table's "bad message" alert is re-shown at most this often

MAX_KINDS_SHOWN = 20         # effect kinds kept per recent event


# What a table itself publishes (its `online` "0" is the broker's will: no contact).
TABLE_SAYS = ("online", "state", "events", "journal", "notice", "cmd/reply", "health")

PIN_REASONS = {"pin_wrong": "wrong PIN", "pin_timeout": "no PIN in time"}
MATCH_IN_PROGRESS = "match_in_progress"       # a notice's code: the match waits (PROTOCOL.md)
SHA256 = re.compile(r"[0-9a-f]{64}")


class Rejected(GammonclockError, ValueError):
    """A message the view refused (naming its topic). `table` is the table whose card now shows
    the problem (the caller shows that card again), or None when no card changed."""

    def __init__(self, message: str, table: str | None = None) -> None:
        super().__init__(message)
        self.table = table


class HallView:
    """Every table's view, updated by `receive`; `card(table)` is what the page shows."""

    def __init__(self, prefix: str = "gammonclock") -> None:
        self.prefix = prefix.rstrip("/")
        self.tables: dict[str, TableView] = {}
        self.events_counted = 0      # records with effects, each once
        self.carriers_counted = 0    # records without, that carried lines, each once
        self.duplicates = 0
        self.rejected = 0        # messages that were not what SPEC §14 says (logged by the caller)

    def table(self, name: str) -> TableView:
        view = self.tables.get(name)
        if view is None:
            view = self.tables[name] = TableView(name)
        return view

    def split_topic(self, topic: str) -> tuple[str, str] | None:
        """(table, what) of `P/T/what`, or None for a topic of another shape (or a T that is
        not a table id)."""
        head = self.prefix + "/"
        if not topic.startswith(head):
            return None
        table, _, what = topic[len(head):].partition("/")
        if TABLE_ID.fullmatch(table) is None or what not in (
                "online", "state", "events", "journal", "notice", "cmd/reply", "match", "cmd",
                "health"):
            return None
        return table, what

    def receive(self, topic: str, payload: bytes, now_ms: int, retained: bool = False
                ) -> str | None:
        """Take one message; the table whose card changed, or None. Raises `Rejected` (a
        ValueError naming the topic) for a payload that is not what SPEC §14 says; its `table`
        is the table whose card shows that (None: no card changed)."""
        where = self.split_topic(topic)
        if where is None:
            return None
        table, what = where
        view = self.tables.get(table)
        if view is None:
            if len(self.tables) >= MAX_TABLES:
                self.rejected += 1
                raise Rejected(f"{topic}: the hall keeps at most {MAX_TABLES} tables")
            view = self.table(table)
        if not retained and what in TABLE_SAYS and not (what == "online"
                                                        and payload.strip(b'" ') == b"0"):
            view.last_contact_ms = now_ms
        try:
            changed = self._take(view, what, payload, now_ms, retained)
        except (ValueError, TypeError, KeyError, AttributeError, RecursionError) as exc:
            self.rejected += 1
            why = str(exc) or type(exc).__name__
            shown = self._bad(view, what, why, now_ms)
            raise Rejected(f"{topic}: {why}", table if shown else None) from None
        return table if changed else None

    def _take(self, view: TableView, what: str, payload: bytes, now_ms: int,
              retained: bool) -> bool:
        if what == "online":
            return self._online(view, payload)
        if what in ("match", "cmd", "journal"):
            return False         # the director's own messages; journals go to the archive
        data = strict_json(payload, MAX_HEALTH if what == "health" else MAX_PAYLOAD)
        if not isinstance(data, dict):
            raise BadMessage("the payload is not a JSON object")
        if what == "state":
            return self._state(view, state_of(data), now_ms, retained)
        if what == "events":
            return self._event(view, data)
        if what == "notice":
            return self._notice(view, notice_of(data))
        if what == "health":
            return self._health(view, data, now_ms)
        return self._reply(view, reply_of(data), now_ms)

    @staticmethod
    def _online(view: TableView, payload: bytes) -> bool:
        if len(payload) > MAX_ONLINE:
            raise BadMessage(f"online is {len(payload)} bytes; it is \"1\" or \"0\"")
        text = payload.decode("utf-8", "replace").strip().strip('"')
        if text not in ("0", "1"):
            raise BadMessage(f"online is {text[:20]!r}; it is \"1\" or \"0\"")
        online = text == "1"
        changed, view.online = view.online != online, online
        return changed

    @staticmethod
    def _bad(view: TableView, what: str, why: str, now_ms: int) -> bool:
        """Count a refused message and show it on its table's card: one alert, kept up to
        date, shown again at most every `BAD_REFRESH_MS`. Whether the card changed."""
        view.bad_messages += 1
        count = f" ({view.bad_messages} so far)" if view.bad_messages > 1 else ""
        detail = clip(why, MAX_TEXT)
        text = f"bad message from the table ({what}): {detail}{count}"
        say: AlertWords = ("bad", what, detail, view.bad_messages)
        key = view.bad_key
        if key is not None and key in view.alerts:
            view.alerts[key] = Need("bad", text, key, say=say)
            if view.bad_shown_ms is not None and 0 <= now_ms - view.bad_shown_ms < BAD_REFRESH_MS:
                return False
        else:
            view.bad_key = view.add_alert("bad", text, say=say)
        view.bad_shown_ms = now_ms
        return True

    def _state(self, view: TableView, state: dict[str, Any], now_ms: int,
               retained: bool) -> bool:
        at_ms = iso_ms(state.get("at"))
        if not self._newer(view, state, at_ms, retained):
            return False         # an older state, delivered late
        before = (view.state or {}).get("journal")
        view.state, view.state_at_ms, view.received_ms = state, at_ms, now_ms
        journal = state.get("journal")
        if isinstance(journal, str) and journal != before:
            # A next match on the table: the last match's flags, overruns and challenges are
            # its journal's (and the archive's), no longer something the director must look at.
            for key in [k for k, n in view.alerts.items()
                        if n.journal is not None and n.journal != journal]:
                del view.alerts[key]
        if at_ms is not None and not retained:
            view.offsets.append(now_ms - at_ms)
        if state.get("online") is True and view.online is None:
            view.online = True
        return True

    @staticmethod
    def _newer(view: TableView, state: dict[str, Any], at_ms: int | None,
               retained: bool) -> bool:
        """Whether `state` is not older than the card's: by journal and seq, else by arrival
        (a retained one by its `at`). Live states that look older take the card after
        `REWIND_AFTER` in a row."""
        current = view.state
        journal, seq = state.get("journal"), state.get("seq")
        if journal is not None:
            rank = view.journal_rank(journal)
        if current is None:
            return True
        was_journal, was_seq = current.get("journal"), current.get("seq")
        if journal is not None and was_journal is not None and journal != was_journal:
            newer = rank > view.journal_order.get(was_journal, 0)
        elif journal is not None and journal == was_journal and seq is not None \
                and was_seq is not None and seq != was_seq:
            newer = seq > was_seq
        elif not retained:
            newer = True
        else:
            newer = at_ms is None or view.state_at_ms is None or at_ms >= view.state_at_ms
        if newer or retained:
            view.older_in_a_row = 0 if newer else view.older_in_a_row
            return newer
        view.older_in_a_row += 1
        if view.older_in_a_row >= REWIND_AFTER:
            view.older_in_a_row = 0
            return True
        return False

    def _event(self, view: TableView, data: dict[str, Any]) -> bool:
        journal = text_of("events.journal", data.get("journal"), MAX_JOURNAL, cut=False)
        seq = int_of("events.seq", data.get("seq"), 1, MAX_SEQ)
        if journal is None or seq is None:
            raise BadMessage("an event needs a string `journal` and an integer `seq`")
        effects = data.get("effects")
        if effects is None:
            effects = []
        if not isinstance(effects, list) or len(effects) > MAX_EFFECTS:
            raise BadMessage(f"events.effects: a list of at most {MAX_EFFECTS} objects")
        kinds: list[str] = []
        for i, effect in enumerate(effects):
            if not isinstance(effect, dict):
                raise BadMessage(f"events.effects[{i}]: {shown(effect)} is not an object")
            kind = text_of(f"events.effects[{i}].kind", effect.get("kind"), MAX_SHORT)
            if kind is None:
                raise BadMessage(f"events.effects[{i}].kind: an effect needs a kind")
            kinds.append(kind)
        at = data.get("at")
        at = clip(at, MAX_SHORT) if isinstance(at, str) else None
        if not view.seen.see(journal, seq):
            view.duplicates += 1
            self.duplicates += 1
            return False
        if not effects:      # a record the link sent only to carry the lines before it
            view.carriers += 1
            self.carriers_counted += 1
            return False     # no event: nothing on the card changed
        view.events += 1
        self.events_counted += 1
        # What it did, in each of the page's languages (events.py); its kinds (each once) for
        # an older page.
        view.recent.appendleft({"seq": seq, "at": at,
                                "kinds": list(dict.fromkeys(kinds))[:MAX_KINDS_SHOWN],
                                "said": event_words(effects)})
        for effect in effects:
            self._alert_of(view, effect, journal)
        return True

    def _alert_of(self, view: TableView, effect: dict[str, Any], journal: str) -> None:
        kind = effect.get("kind")
        side = effect.get("side")
        who = self.player(view, side) if side in SIDES else "a player"
        whose = side if side in SIDES else ""
        reason = effect.get("reason")
        if kind == "flag_fell":
            view.add_alert("flag", f"flag fell: {who}", journal, say=("flag", whose))
        elif kind == "break_overrun":
            view.add_alert("overrun", f"break overrun: {who}", journal, say=("overrun", whose))
        elif kind == "challenge_decided":
            verdict = "upheld" if effect.get("upheld") is True else "rejected"
            view.add_alert("challenge", f"challenge by {who} {verdict}", journal,
                           say=("challenge", whose, verdict))
        elif kind == "refused" and isinstance(reason, str) and reason in PIN_REASONS:
            why = effect.get("why")
            told = clip(why, MAX_TEXT) if isinstance(why, str) and why else ""
            view.add_alert("pin", f"arbiter PIN failed at the panels: "
                                  f"{told or PIN_REASONS[reason]}",
                           say=("pin", reason, told))
        elif kind == "shown" and reason == "chord_locked":
            said = effect.get("text")
            told = clip(said, MAX_TEXT) if isinstance(said, str) and said else ""
            view.add_alert("pin", "arbiter chord tried while locked after failed PINs: "
                                  f"{told or 'locked'}",
                           say=("chord", told))

    @staticmethod
    def player(view: TableView, side: str) -> str:
        players = (view.state or {}).get("players")
        name = players.get(side) if isinstance(players, dict) else None
        return f"{side} ({name})" if name else side

    @staticmethod
    def _health(view: TableView, data: dict[str, Any], now_ms: int) -> bool:
        view.health, view.health_received_ms = health_of(data), now_ms
        return True

    @staticmethod
    def _notice(view: TableView, data: dict[str, Any]) -> bool:
        view.notice = data
        if data.get("ok") is True:
            # The match that waited has loaded (by itself, or forced): its refusal is over.
            for key in [k for k, n in view.alerts.items()
                        if n.match is not None and n.match == data.get("match")]:
                del view.alerts[key]
        if data.get("ok") is False:
            said = data.get("said")
            if isinstance(said, list):
                said = "; ".join(said)
            digest = data.get("match")
            waits = (data.get("code") == MATCH_IN_PROGRESS and data.get("pending") is True
                     and isinstance(digest, str) and SHA256.fullmatch(digest) is not None)
            detail = clip(data.get("error") or said, MAX_TEXT)
            view.add_alert("notice", f"match refused: {detail}",
                           match=digest if waits else None, say=("notice", detail))
        return True

    @staticmethod
    def _reply(view: TableView, data: dict[str, Any], now_ms: int) -> bool:
        entry = {**data, "received_ms": now_ms}
        command = view.sent.pop(data["id"], None) if isinstance(data.get("id"), str) else None
        if command is not None:
            entry["command"] = command
        view.replies.appendleft(entry)
        if data.get("ok") is False:
            reason = data.get("reason") or ""
            view.add_alert("refused", f"command refused: {reason or 'no reason'}",
                           say=("refused", reason))
        return True

    def note_command(self, table: str, request_id: str, command: str) -> dict[str, Any] | None:
        """The hall sent `command` to `table` as `request_id`: its reply shows it. The reply
        of this table with that id when it has come (validated, as the card keeps it), else
        None (the command is kept for the reply to come). A reply of another table, even with
        this id, is never taken for it."""
        view = self.tables.get(table)
        if view is None:
            return None
        command = clip(command, MAX_TEXT)
        for entry in view.replies:
            if entry.get("id") == request_id:
                entry["command"] = command
                return entry
        view.sent[request_id] = command
        while len(view.sent) > REPLIES_KEPT:
            view.sent.popitem(last=False)
        return None

    def dismiss(self, table: str, key: str) -> bool:
        view = self.tables.get(table)
        return view is not None and view.alerts.pop(key, None) is not None

    def dismiss_all(self, table: str) -> int:
        """Mark every alert of a table seen ("mark all seen"): how many that was, those shown
        and those dropped over the cap. The caller shows the card again."""
        view = self.tables.get(table)
        if view is None:
            return 0
        count = len(view.alerts) + view.alerts_dropped
        view.alerts.clear()
        view.alert_queues.clear()
        view.alerts_dropped = 0
        return count

    def note_archive(self, table: str, text: str, say: AlertWords = ()) -> None:
        """An archive problem shown on the table's card (a journal that does not verify);
        `say`, its catalogue id and parameters (the page words it), else the text as it is."""
        detail = clip(text, 2 * MAX_TEXT)
        said = tuple(clip(p, 2 * MAX_TEXT) if isinstance(p, str) else p for p in say)
        self.table(table).add_alert("archive", detail, say=said or ("archive", detail))

    def note_copy_refused(self, table: str, text: str, code: str, journal: str,
                          record: int | str) -> None:
        """The table's events carried a journal line the hall refused (continuation.py: not
        sealed by its key, not following its journal): shown on its card until marked seen,
        `say` its code and fields (the page words it as `error.CODE`)."""
        self.table(table).add_alert("bad", clip(text, 2 * MAX_TEXT),
                                    say=("copy_refused", code, clip(journal, MAX_TEXT), record))

    # --- what the page shows -----------------------------------------------------------------

    def needs(self, view: TableView) -> list[Need]:
        out: list[Need] = []
        state = view.state or {}
        if view.online is False:
            out.append(Need("offline", "offline", say=("offline",)))
        flag = state.get("flag")
        if isinstance(flag, str):
            out.append(Need("flag", f"lost on the clock: {self.player(view, flag)}",
                            say=("lost", flag)))
        if state.get("phase") == "break" and isinstance(state.get("running"), str):
            out.append(Need("overrun", f"late from the break: "
                                       f"{self.player(view, state['running'])}",
                            say=("late", state["running"])))
        if state.get("phase") == "paused":
            out.append(Need("paused", "clock paused", say=("paused",)))
        if state.get("phase") == "arbiter":          # the chord stopped the clocks (SPEC §13.4)
            out.append(Need("paused", "clocks stopped: the arbiter at the panels",
                            say=("arbiter",)))
        out.extend(view.alerts.values())
        return sorted(out, key=lambda n: SEVERITY.get(n.kind, 9))

    def reserves_at_ms(self, view: TableView) -> int | None:
        """When the state's reserves were, on the hall's clock: its `at` translated by the
        table's offset, never after the state was received nor `MAX_LAG_MS` before."""
        received = view.received_ms
        if received is None:
            return None
        if view.state_at_ms is None:
            return received
        base = view.state_at_ms + view.offset_ms()
        return min(received, max(received - MAX_LAG_MS, base))

    def card(self, table: str) -> dict[str, Any]:
        view = self.table(table)
        needs = self.needs(view)
        return {
            "table": table,
            "online": view.online,
            "state": view.state or {},
            "reserves_at_ms": self.reserves_at_ms(view),
            # the hall's clock; before any live message since the hall started, the last
            # state's own `at` (the table's clock)
            "last_contact_ms": (view.last_contact_ms if view.last_contact_ms is not None
                                else view.state_at_ms),
            "needs": [n.as_json() for n in needs],
            "urgency": SEVERITY.get(needs[0].kind, 9) if needs else 99,
            "recent": list(view.recent),
            "events": view.events,
            "duplicates": view.duplicates,
            "replies": list(view.replies)[:3],
            "notice": view.notice,
            "alerts_dropped": view.alerts_dropped,
            "bad_messages": view.bad_messages,
            "health": self.health_card(view),
        }

    @staticmethod
    def health_card(view: TableView) -> dict[str, Any] | None:
        """The table's last health, when it came (hall clock), and the hall's marks."""
        if view.health is None:
            return None
        return {**view.health, "received_ms": view.health_received_ms,
                "marks": marks(view.health)}

    def cards(self) -> list[dict[str, Any]]:
        return [self.card(t) for t in sorted(self.tables, key=natural_key)]

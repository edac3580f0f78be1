"""The director's view of the hall (SPEC §14): what every table last said, kept from the broker's
messages. Pure bookkeeping: no network, no clock of its own (the caller passes `now_ms`, the
hall's wall clock in milliseconds), so the tests and the benchmark drive it directly.

- Events are counted once per `(journal, seq)`: delivery is at least once, and a clock
  republishes from its journal after a reconnect or a restart.
- A state replaces the one before unless it is older (by its `at`): a retained state delivered
  late never winds a card back.
- Reserves count in the browser from the state's `at` translated to the hall's clock: a Pi
  without a real-time clock may be off by minutes, so each table's offset is estimated as the
  smallest `received - at` of its live (not retained) states (latency only adds to it).
- A table needs the director while its state says so (a flag, a break overrun, a paused clock,
  offline) and for every alert (a flag that fell, a challenge, a refused command or match)
  until the director marks it seen.
"""

from __future__ import annotations

import json
import re
from collections import deque
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

RECENT_EVENTS = 8            # shown on a card
OFFSET_SAMPLES = 10          # live states kept for a table's clock offset
REPLIES_KEPT = 20

# What a table's card is sorted by: the lower, the sooner the director should look.
SEVERITY = {"flag": 0, "refused": 1, "overrun": 1, "challenge": 2, "offline": 2, "paused": 3,
            "notice": 3, "archive": 3}


@dataclass(frozen=True)
class Need:
    """Why a table needs the director. `key` names an alert the director can mark seen (None:
    it lasts as long as the state that causes it)."""

    kind: str
    text: str
    key: str | None = None

    def as_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "text": self.text, "key": self.key}


@dataclass
class TableView:
    table: str
    online: bool | None = None                 # None: never heard from
    state: dict[str, Any] | None = None
    state_at_ms: int | None = None             # the state's `at`, on the table's clock
    received_ms: int | None = None
    offsets: deque[int] = field(default_factory=lambda: deque(maxlen=OFFSET_SAMPLES))
    seen: set[tuple[str, int]] = field(default_factory=set)
    duplicates: int = 0
    recent: deque[dict[str, Any]] = field(default_factory=lambda: deque(maxlen=RECENT_EVENTS))
    alerts: dict[str, Need] = field(default_factory=dict)
    replies: deque[dict[str, Any]] = field(default_factory=lambda: deque(maxlen=REPLIES_KEPT))
    notice: dict[str, Any] | None = None
    alert_serial: int = 0

    def offset_ms(self) -> int:
        return min(self.offsets) if self.offsets else 0

    def add_alert(self, kind: str, text: str) -> None:
        self.alert_serial += 1
        key = f"{kind}-{self.alert_serial}"
        self.alerts[key] = Need(kind, text, key)


class HallView:
    """Every table's view, updated by `receive`; `card(table)` is what the page shows."""

    def __init__(self, prefix: str = "gammonclock") -> None:
        self.prefix = prefix.rstrip("/")
        self.tables: dict[str, TableView] = {}
        self.events_counted = 0
        self.duplicates = 0
        self.rejected = 0        # messages that were not what SPEC §14 says (logged by the caller)

    def table(self, name: str) -> TableView:
        view = self.tables.get(name)
        if view is None:
            view = self.tables[name] = TableView(name)
        return view

    def split_topic(self, topic: str) -> tuple[str, str] | None:
        """(table, what) of `P/T/what`, or None for a topic of another shape."""
        head = self.prefix + "/"
        if not topic.startswith(head):
            return None
        table, _, what = topic[len(head):].partition("/")
        if not table or what not in ("online", "state", "events", "journal", "notice",
                                     "cmd/reply", "match", "cmd"):
            return None
        return table, what

    def receive(self, topic: str, payload: bytes, now_ms: int, retained: bool = False
                ) -> str | None:
        """Take one message; the table whose card changed, or None. Raises ValueError (naming
        the topic) for a payload that is not what SPEC §14 says."""
        where = self.split_topic(topic)
        if where is None:
            return None
        table, what = where
        try:
            changed = self._take(self.table(table), what, payload, now_ms, retained)
        except (ValueError, TypeError, KeyError, AttributeError) as exc:
            self.rejected += 1
            raise ValueError(f"{topic}: {exc}") from None
        return table if changed else None

    def _take(self, view: TableView, what: str, payload: bytes, now_ms: int,
              retained: bool) -> bool:
        if what == "online":
            return self._online(view, payload)
        if what in ("match", "cmd", "journal"):
            return False         # the director's own messages; journals go to the archive
        data = json.loads(payload)
        if not isinstance(data, dict):
            raise ValueError("the payload is not a JSON object")
        if what == "state":
            return self._state(view, data, now_ms, retained)
        if what == "events":
            return self._event(view, data)
        if what == "notice":
            return self._notice(view, data)
        return self._reply(view, data, now_ms)

    @staticmethod
    def _online(view: TableView, payload: bytes) -> bool:
        text = payload.decode("utf-8", "replace").strip().strip('"')
        if text not in ("0", "1"):
            raise ValueError(f"online is {text[:20]!r}; it is \"1\" or \"0\"")
        online = text == "1"
        changed, view.online = view.online != online, online
        return changed

    def _state(self, view: TableView, data: dict[str, Any], now_ms: int, retained: bool) -> bool:
        at_ms = iso_ms(data.get("at"))
        if at_ms is not None and view.state_at_ms is not None and at_ms < view.state_at_ms:
            return False         # an older state, delivered late
        view.state, view.state_at_ms, view.received_ms = data, at_ms, now_ms
        if at_ms is not None and not retained:
            view.offsets.append(now_ms - at_ms)
        if data.get("online") is True and view.online is None:
            view.online = True
        return True

    def _event(self, view: TableView, data: dict[str, Any]) -> bool:
        journal, seq = data["journal"], data["seq"]
        if not isinstance(journal, str) or not isinstance(seq, int) or isinstance(seq, bool):
            raise ValueError("an event needs a string `journal` and an integer `seq`")
        key = (journal, seq)
        if key in view.seen:
            view.duplicates += 1
            self.duplicates += 1
            return False
        view.seen.add(key)
        self.events_counted += 1
        effects = data.get("effects") or []
        view.recent.appendleft({"seq": seq, "at": data.get("at"),
                                "kinds": [e.get("kind") for e in effects if isinstance(e, dict)]})
        for effect in effects:
            if isinstance(effect, dict):
                self._alert_of(view, effect)
        return True

    def _alert_of(self, view: TableView, effect: dict[str, Any]) -> None:
        kind = effect.get("kind")
        side = effect.get("side")
        who = self.player(view, side) if isinstance(side, str) else "a player"
        if kind == "flag_fell":
            view.add_alert("flag", f"flag fell: {who}")
        elif kind == "break_overrun":
            view.add_alert("overrun", f"break overrun: {who}")
        elif kind == "challenge_decided":
            verdict = "upheld" if effect.get("upheld") else "rejected"
            view.add_alert("challenge", f"challenge by {who} {verdict}")

    @staticmethod
    def player(view: TableView, side: str) -> str:
        players = (view.state or {}).get("players")
        name = players.get(side) if isinstance(players, dict) else None
        return f"{side} ({name})" if name else side

    @staticmethod
    def _notice(view: TableView, data: dict[str, Any]) -> bool:
        view.notice = data
        if data.get("ok") is False:
            view.add_alert("notice", f"match refused: {data.get('error') or data.get('said')}")
        return True

    @staticmethod
    def _reply(view: TableView, data: dict[str, Any], now_ms: int) -> bool:
        view.replies.appendleft({**data, "received_ms": now_ms})
        if data.get("ok") is False:
            view.add_alert("refused", f"command refused: {data.get('reason') or 'no reason'}")
        return True

    def dismiss(self, table: str, key: str) -> bool:
        view = self.tables.get(table)
        return view is not None and view.alerts.pop(key, None) is not None

    def note_archive(self, table: str, text: str) -> None:
        """An archive problem shown on the table's card (a journal that does not verify)."""
        self.table(table).add_alert("archive", text)

    # --- what the page shows -----------------------------------------------------------------

    def needs(self, view: TableView) -> list[Need]:
        out: list[Need] = []
        state = view.state or {}
        if view.online is False:
            out.append(Need("offline", "offline"))
        flag = state.get("flag")
        if isinstance(flag, str):
            out.append(Need("flag", f"lost on the clock: {self.player(view, flag)}"))
        if state.get("phase") == "break" and isinstance(state.get("running"), str):
            out.append(Need("overrun", f"late from the break: "
                                       f"{self.player(view, state['running'])}"))
        if state.get("phase") == "paused":
            out.append(Need("paused", "clock paused"))
        if state.get("phase") == "arbiter":          # the chord stopped the clocks (SPEC §13.4)
            out.append(Need("paused", "clocks stopped: the arbiter at the panels"))
        out.extend(view.alerts.values())
        return sorted(out, key=lambda n: SEVERITY.get(n.kind, 9))

    def card(self, table: str) -> dict[str, Any]:
        view = self.table(table)
        state = view.state or {}
        needs = self.needs(view)
        base = None if view.state_at_ms is None else view.state_at_ms + view.offset_ms()
        if base is None:
            base = view.received_ms
        return {
            "table": table,
            "online": view.online,
            "state": state,
            "reserves_at_ms": base,
            "needs": [n.as_json() for n in needs],
            "urgency": SEVERITY.get(needs[0].kind, 9) if needs else 99,
            "recent": list(view.recent),
            "events": len(view.seen),
            "duplicates": view.duplicates,
            "replies": list(view.replies)[:3],
            "notice": view.notice,
        }

    def cards(self) -> list[dict[str, Any]]:
        return [self.card(t) for t in sorted(self.tables, key=natural_key)]


def natural_key(name: str) -> list[Any]:
    """table-2 before table-10."""
    return [(0, int(p), "") if p.isdigit() else (1, 0, p) for p in re.split(r"(\d+)", name)]


def iso_ms(text: object) -> int | None:
    """Milliseconds since the epoch of an ISO 8601 instant (`Z` or an offset), else None."""
    if not isinstance(text, str):
        return None
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    if moment.tzinfo is None:
        return None
    return int(moment.timestamp() * 1000)

"""A snapshot of the engine, as a journal record holds it (kind "state", `SNAPSHOT_KIND`):
everything needed to resume exactly where the record stands, so that recovery reads the last
snapshot and the records after it instead of the whole journal.

It holds the match state, each button's state (a press in progress and the history entry of its
tap), the counters `serials` and `seq`, and the part of the history that a pending hold and the
next `undo` can reach: from the earliest of the last player action and the taps of the presses
in progress (`history_floor`), less the entries older than every press in progress that had no
effect (an undo drops them anyway: the taps ignored during a pause are never kept, so a
snapshot's size does not grow with them). What lies before is in the journal; an undo that finds
no player action in what was kept (a second undo in a row after a recovery) makes the session
rebuild the whole history by replaying the journal, and act again.

`trimmed` cuts a live engine's history the same way, to a number of undos in a row: the session
does it at each snapshot, and a tool's replay every so many records, so that memory does not
grow with the match.

The encoding is a strict, versioned, tagged JSON form of the frozen values involved: dataclasses
by `module.Class`, enums, fractions, tuples; the match rules are not repeated (they come from the
journal's header), but for the arbiter's PIN hash and chord after a hand-over (SPEC §13.5: this
clock's, not the header's; `MatchRules.handed_over`), and a PIN's check is its hash alone (`$pin`:
never a clear PIN, never the pepper, which the clock holding the key gives back as it reads the
snapshot). A tag or a field this firmware does not know is a SnapshotError naming it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from enum import Enum
from fractions import Fraction
from typing import Any

from gammonclock import sides
from gammonclock.core import (
    arbiter,
    arbiter_mode,
    dice,
    effects,
    engine,
    match,
    match_state,
    reasons,
    rules,
    timecontrol,
)
from gammonclock.core.engine import ButtonState, Engine, Entry
from gammonclock.core.pin import PinCheck, PinHashError
from gammonclock.core.rules import CHORD_NS_RANGE, MatchRules
from gammonclock.errors import GammonclockError

from .records import SNAPSHOT_FORMAT, snapshot_problem


class SnapshotError(GammonclockError, ValueError):
    """A snapshot this firmware cannot read back (an unknown tag or field, a newer format), or a
    value it cannot encode."""


def _tag(cls: type) -> str:
    return f"{cls.__module__.rsplit('.', 1)[-1]}.{cls.__name__}"


def _registry() -> dict[str, type]:
    """Every class a snapshot may hold, by its tag."""
    found: dict[str, type] = {}
    for module in (arbiter, arbiter_mode, dice, effects, engine, match, match_state, reasons,
                   rules, sides, timecontrol):
        for value in vars(module).values():
            if isinstance(value, type) and value.__module__ == module.__name__ and (
                    dataclasses.is_dataclass(value) or issubclass(value, Enum)):
                found[_tag(value)] = value
    return found


_CLASSES = _registry()


# --- values ----------------------------------------------------------------------------------

def encode_value(value: object) -> Any:
    """`value` as tagged JSON; SnapshotError for a value of a kind a snapshot never holds."""
    if value is None or type(value) in (bool, int, str):
        return value
    if isinstance(value, MatchRules):
        if not value.handed_over:
            return {"$rules": 1}      # the match's own rules, from the journal's header
        # … but for the arbiter at the panels of the clock it was handed over to
        return {"$rules": {"pin": encode_value(value.arbiter_pin), "chord_ns": value.chord_ns}}
    if isinstance(value, PinCheck):
        if value.legacy_pin is not None or value.locked_chord_stands \
                or value.menu_without_moved:
            raise SnapshotError("a snapshot holds a hand-over's PIN hash only, never a header's")
        return {"$pin": value.hashed}
    if isinstance(value, Enum) and _CLASSES.get(_tag(type(value))) is type(value):
        return {"$e": _tag(type(value)), "v": value.value}
    if type(value) is Fraction:
        return {"$f": [value.numerator, value.denominator]}
    if type(value) is tuple:
        return {"$t": [encode_value(v) for v in value]}
    if dataclasses.is_dataclass(value) and not isinstance(value, type) \
            and _CLASSES.get(_tag(type(value))) is type(value):
        return {"$d": _tag(type(value)),
                "f": {f.name: encode_value(getattr(value, f.name))
                      for f in dataclasses.fields(value)}}
    raise SnapshotError(f"a snapshot cannot hold a {type(value).__name__}")


def decode_value(data: Any, match_rules: MatchRules, where: str = "snapshot",
                 pepper: bytes | None = None) -> Any:
    """The value `encode_value` gave `data`; SnapshotError naming where it is not understood.
    `pepper` (`pin.pepper_of` the device key, on the clock that holds it): a hand-over's keyed
    PIN hash can judge new entries."""
    if data is None or type(data) in (bool, int, str):
        return data
    if not isinstance(data, dict) or len(data) not in (1, 2):
        raise SnapshotError(f"{where}: {_short(data)} is not a snapshot value")
    if "$rules" in data:
        if data["$rules"] == 1 and type(data["$rules"]) is int:
            return match_rules
        return _handed_over(data["$rules"], match_rules, where, pepper)
    if "$pin" in data:
        return _pin(data["$pin"], where, pepper)
    if "$f" in data:
        pair = data["$f"]
        if not (isinstance(pair, list) and len(pair) == 2 and all(type(n) is int for n in pair)
                and pair[1] > 0):
            raise SnapshotError(f"{where}: a fraction must be [numerator, denominator]")
        return Fraction(pair[0], pair[1])
    if "$t" in data:
        items = data["$t"]
        if not isinstance(items, list):
            raise SnapshotError(f"{where}: a tuple must hold a list")
        return tuple(decode_value(v, match_rules, f"{where}[{i}]", pepper)
                     for i, v in enumerate(items))
    if "$e" in data:
        cls = _class(data["$e"], where)
        if not issubclass(cls, Enum):
            raise SnapshotError(f"{where}: {data['$e']} is not an enumeration")
        try:
            return cls(data.get("v"))
        except ValueError:
            raise SnapshotError(f"{where}: {_short(data.get('v'))} is not a "
                                f"{data['$e']}") from None
    if "$d" in data:
        return _decode_dataclass(data, match_rules, where, pepper)
    raise SnapshotError(f"{where}: tag {_short(sorted(data))} is unknown to this firmware; "
                        f"one of $d, $e, $f, $t, $rules, $pin is due")


def _pin(text: object, where: str, pepper: bytes | None) -> PinCheck:
    """A PIN's check from its hash (a hand-over's), given `pepper` to judge new entries."""
    if not isinstance(text, str):
        raise SnapshotError(f"{where}: a PIN's check must be its hash")
    try:
        return PinCheck.parse(text).with_key(pepper)
    except PinHashError as exc:
        raise SnapshotError(f"{where}: {exc}") from None


def _handed_over(data: object, match_rules: MatchRules, where: str, pepper: bytes | None
                 ) -> MatchRules:
    """The header's rules with the arbiter of the clock the match was handed over to."""
    if not isinstance(data, dict) or set(data) != {"pin", "chord_ns"}:
        raise SnapshotError(f"{where}: handed-over rules must hold the pin and chord_ns")
    chord_ns = data["chord_ns"]
    if type(chord_ns) is not int or not CHORD_NS_RANGE[0] <= chord_ns <= CHORD_NS_RANGE[1]:
        raise SnapshotError(f"{where}: the chord {_short(chord_ns)} is out of range")
    pin = decode_value(data["pin"], match_rules, f"{where}.pin", pepper)
    if pin is not None and not isinstance(pin, PinCheck):
        raise SnapshotError(f"{where}.pin: not a PIN's check")
    return match_rules.handed_over_to(pin, chord_ns)


def _decode_dataclass(data: dict[str, Any], match_rules: MatchRules, where: str,
                      pepper: bytes | None = None) -> Any:
    cls = _class(data["$d"], where)
    values = data.get("f")
    if not dataclasses.is_dataclass(cls) or not isinstance(values, dict):
        raise SnapshotError(f"{where}: {data['$d']} must be a class with its fields")
    names = {f.name for f in dataclasses.fields(cls)}
    # A field added since the snapshot was written (with its default) may be absent from it.
    defaulted = {f.name for f in dataclasses.fields(cls)
                 if f.default is not dataclasses.MISSING
                 or f.default_factory is not dataclasses.MISSING}
    if not set(values) <= names or not names - defaulted <= set(values):
        odd = sorted((set(values) ^ names) - (defaulted - set(values)))
        raise SnapshotError(f"{where}: {data['$d']} has fields {sorted(names)}; "
                            f"{', '.join(odd)} do not match")
    fields = {name: decode_value(v, match_rules, f"{where}.{name}", pepper)
              for name, v in values.items()}
    return cls(**fields)


def _class(tag: object, where: str) -> type:
    cls = _CLASSES.get(tag) if isinstance(tag, str) else None
    if cls is None:
        raise SnapshotError(f"{where}: class {_short(tag)} is unknown to this firmware; the "
                            f"snapshot may come from a newer version")
    return cls


def _short(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


# --- the engine --------------------------------------------------------------------------------

def _entries(log: Entry | None) -> Iterator[Entry]:
    """The history, newest first."""
    while log is not None:
        yield log
        log = log.prev


def _press_floor(state: Engine) -> int | None:
    """The serial of the oldest tap a press still in progress may rewind to: a pending hold,
    or (with a PIN) one of a chord, within the chord's reach (`CHORD_REACH` entries: an older
    tap stands whatever comes). Everything from there on is kept as it is."""
    chords = state.rules.arbiter_pin is not None
    return min((s.press.entry_serial for _, s in state.buttons if s.press is not None and (
        not s.press.recognised or (chords and not s.press.chord
                                   and state.in_chord_reach(s.press)))), default=None)


def _floor_entry(state: Engine, actions: int, settled: bool = False
                 ) -> tuple[Entry | None, int | None]:
    """The oldest entry kept when `actions` undos in a row must find their player actions in
    memory (and a pending press its tap), and the press floor. The entry is None when fewer
    actions are left (all is kept: an undo must see that there are none). `settled`: count only
    the actions older than every press in progress (a hold may yet turn a newer one into
    something else, and the undos would then find one fewer)."""
    press_floor = _press_floor(state)
    seen, action = 0, None
    for entry in _entries(state.log):
        if settled and press_floor is not None and entry.serial >= press_floor:
            continue
        if entry.player_action is not None:
            seen += 1
            if seen == actions:
                action = entry.serial
                break
    if action is None:
        return None, press_floor
    target = action if press_floor is None else min(action, press_floor)
    # Looking an entry up walks back to the first serial at or below it: keeping that entry (or
    # the first one an undo keeps) finds the same one, or the same absence, as the whole history.
    floor = next((e for e in _entries(state.log) if e.serial == target
                  or (e.serial < target and e.effective)), None)
    return floor, press_floor


def history_floor(state: Engine) -> Entry | None:
    """The oldest history entry a snapshot keeps: the last player action (what `undo` takes
    back), or the tap of a press still in progress (what its hold rewinds to) when older.
    None keeps it all (no player action yet: an undo must see that there is none)."""
    return _floor_entry(state, 1)[0]


def kept_history(state: Engine, actions: int = 1, settled: bool = False
                 ) -> tuple[list[Entry], bool]:
    """The entries kept for `actions` undos in a row and the presses in progress, oldest first,
    and whether an entry that acted is left out before them (`settled`: see `_floor_entry`; a
    snapshot keeps back to the last player action, whatever a press may make of it).

    Of the entries older than every press in progress, those that had no effect are left out
    too (an undo drops them anyway, SPEC fine point 12; nothing else looks at them): taps
    ignored while paused are never kept, however many there are."""
    floor, press_floor = _floor_entry(state, actions, settled)
    kept: list[Entry] = []
    entry = state.log
    while entry is not None:
        if entry.effective or entry is floor or (
                press_floor is not None and entry.serial >= press_floor):
            kept.append(entry)
        if entry is floor:
            break
        entry = entry.prev
    kept.reverse()
    left_out = floor is not None and any(e.effective for e in _entries(floor.prev))
    return kept, left_out


def trimmed(state: Engine, actions: int) -> tuple[Engine, bool]:
    """`state` with only the history `kept_history` keeps (for `actions` undos in a row, counted
    among the entries no press in progress can change), and whether an entry that acted was
    left out (a deeper undo then needs the journal). What a snapshot keeps of it is what it
    keeps of `state`."""
    kept, left_out = kept_history(state, actions, settled=True)
    count, entry = 0, state.log
    while entry is not None:
        count += 1
        entry = entry.prev
    if count == len(kept):
        return state, left_out
    log: Entry | None = None
    for e in kept:
        log = Entry(e.serial, e.event, e.before, e.first_seq, e.effects, log)
    return state._with(log=log), left_out


def engine_data(state: Engine, cut: bool = False) -> dict[str, Any]:
    """The snapshot record's data for `state`; `cut`: its history was restored from a snapshot
    that left its start out (so what it holds is not all there was either)."""
    kept, left_out = kept_history(state)
    # The pin pad, when it holds the buttons: without them (the journal never has them).
    pad = {} if state.pad is None else {"pin_pad": encode_value(state.pad)}
    return {
        **pad,
        "format": SNAPSHOT_FORMAT,
        "match": encode_value(state.match),
        "buttons": encode_value(state.buttons),
        "history": [encode_value((e.serial, e.event, e.before, e.first_seq, e.effects))
                    for e in kept],
        "trimmed": bool(kept) and (cut or left_out),
        "serials": state.serials,
        "seq": state.seq,
    }


def same_snapshot(data: dict[str, Any], state: Engine, match_rules: MatchRules,
                  cut: bool = False) -> bool:
    """Whether a journaled snapshot holds `state` (the engine a replay has at its record). A
    snapshot written before ignored inputs were left out (they were kept after the last player
    action) is read back and compared as this firmware would have written it; its `trimmed`
    said whether anything at all came before, and is not compared (a restored engine takes it
    only as a hint that a deep undo may need the journal)."""
    ours = engine_data(state, cut)
    if ours == data or _holds(ours, data):
        return True
    try:
        restored, _ = engine_from(data, match_rules)
    except (SnapshotError, TypeError, ValueError, KeyError):
        return False
    theirs = engine_data(restored, bool(data.get("trimmed")))
    ours.pop("trimmed")
    theirs.pop("trimmed")
    return ours == theirs and (restored.match, restored.buttons) == (state.match, state.buttons)


def _holds(ours: Any, theirs: Any) -> bool:
    """Whether `ours` (this firmware's encoding) says what a journaled snapshot `theirs` says,
    on the fields it has: a snapshot written before a field was added to a state or an effect
    (`ScoreChanged.penalty`, `MatchState.moved_to`, …) lacks it, and is compared without it, as
    a record's effects are (`inputs.effects_diverge`). Every other difference is one."""
    if isinstance(theirs, dict) and isinstance(ours, dict):
        if "$d" in theirs:                        # a dataclass: its fields, those it has
            fields, their_fields = ours.get("f"), theirs.get("f")
            return (ours.get("$d") == theirs["$d"] and set(theirs) == set(ours)
                    and isinstance(fields, dict) and isinstance(their_fields, dict)
                    and all(name in fields and _holds(fields[name], value)
                            for name, value in their_fields.items()))
        return set(ours) == set(theirs) and all(_holds(ours[k], v) for k, v in theirs.items())
    if isinstance(theirs, list) and isinstance(ours, list):
        return len(ours) == len(theirs) and all(map(_holds, ours, theirs))
    return type(ours) is type(theirs) and ours == theirs


def engine_from(data: dict[str, Any], match_rules: MatchRules, pepper: bytes | None = None
                ) -> tuple[Engine, int | None]:
    """The engine a snapshot holds, and the serial of its oldest kept entry when older ones were
    left out (None: the whole history is there). Raises SnapshotError. `pepper`: the clock's
    own, for a hand-over's keyed PIN hash to judge new entries (`decode_value`)."""
    problem = snapshot_problem(data)
    if problem is not None:
        raise SnapshotError(problem)
    state = decode_value(data["match"], match_rules, "snapshot.match", pepper)
    buttons = decode_value(data["buttons"], match_rules, "snapshot.buttons")
    if not isinstance(state, match_state.MatchState) or not _buttons_ok(buttons):
        raise SnapshotError("snapshot: the match or the buttons are not what a snapshot holds")
    log: Entry | None = None
    for index, item in enumerate(data["history"]):
        parts = decode_value(item, match_rules, f"snapshot.history[{index}]", pepper)
        if not (isinstance(parts, tuple) and len(parts) == 5):
            raise SnapshotError(f"snapshot.history[{index}]: not a history entry")
        serial, event, before, first_seq, said = parts
        log = Entry(serial, event, before, first_seq, said, log)
    floor = None
    if data["trimmed"] and data["history"]:
        floor = min(e.serial for e in _entries(log))
    pad = decode_value(data.get("pin_pad"), match_rules, "snapshot.pin_pad")
    if pad is not None and not isinstance(pad, engine.PadHold):
        raise SnapshotError("snapshot.pin_pad: not what a snapshot holds")
    # The pad's buttons are in memory only: a restored pad knows none (recovery lets go of
    # every press anyway).
    keys = None if pad is None else engine.PadKeys(tuple((b, None) for b, _ in buttons))
    return Engine(state, buttons, log, data["serials"], data["seq"], pad, keys), floor


def _buttons_ok(buttons: object) -> bool:
    return isinstance(buttons, tuple) and all(
        isinstance(pair, tuple) and len(pair) == 2 and isinstance(pair[0], sides.Button)
        and isinstance(pair[1], ButtonState) for pair in buttons)


def undo_needs_more_history(state: Engine) -> bool:
    """Whether an `undo` now would look past the history a restored snapshot kept: no player
    action is left in it (the session then rebuilds the whole history first)."""
    return all(e.player_action is None for e in _entries(state.log))

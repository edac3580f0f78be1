"""The journal's view of inputs and effects (SPEC §11): an input as a record holds it and read back
(`input_data`, `input_from`: bounded and type-checked, a record this firmware cannot take is an
`InputError`), and whether the effects computed now are those a record holds."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, assert_never

from gammonclock import __version__
from gammonclock.config.converters import PinHash
from gammonclock.config.problems import Problem
from gammonclock.core.arbiter import parse_command
from gammonclock.core.dice import parse_line
from gammonclock.core.effects import Effect
from gammonclock.core.engine import ButtonEdge, Input, PinKey, PinKeyKind
from gammonclock.core.match import (
    ArbiterAction,
    ArbiterHandover,
    DiceDropped,
    DiceEvent,
    ProvisionOffered,
    Recover,
    StickOffered,
)
from gammonclock.core.match_state import ProvisionOffer, StickOffer
from gammonclock.core.rules import CHORD_NS_RANGE
from gammonclock.errors import GammonclockError
from gammonclock.sides import Button

from .records import (
    MAX_SEQ,
)


def input_data(event: Input) -> dict[str, Any]:
    """An input as the journal records it (`input_from` reads it back)."""
    match event:
        case ButtonEdge():
            return {"type": "edge", "button": event.button.value, "pressed": event.pressed}
        case PinKey():
            data: dict[str, Any] = {"type": "pin", "key": event.key.value}
            if event.digest is not None:
                data["digest"] = event.digest
            return data
        case ArbiterAction():
            data = {"type": "arbiter", "command": event.command.describe()}
            data.update({key: value for key, value in (("source", event.source),
                                                       ("by", event.by)) if value is not None})
            return data
        case DiceEvent():
            return {"type": "dice", "line": event.message.to_line()}
        case DiceDropped():
            return {"type": "dice_dropped", "count": event.count}
        case Recover():
            return {"type": "recover"}
        case StickOffered(offer=offer):
            if offer is None:
                return {"type": "stick_offer"}
            return {"type": "stick_offer", "table": offer.table, "left": offer.left,
                    "right": offer.right, "length": offer.length, "score": offer.score,
                    "file": offer.file, "seq": offer.seq, "mac": offer.mac}
        case ProvisionOffered(offer=provision):
            if provision is None:
                return {"type": "provision_offer"}
            return {"type": "provision_offer", "table": provision.table,
                    "host": provision.host, "digest": provision.digest}
        case ArbiterHandover(pin=pin, chord_ns=chord_ns):
            # The PIN's hash only (SPEC §13.4): never a clear PIN, never the pepper.
            data = {"type": "handover", "chord_ns": chord_ns}
            if pin is not None:
                data["pin_hash"] = pin.hashed
            return data
        case _:
            assert_never(event)

class InputError(GammonclockError, ValueError):
    """A journaled input this firmware cannot take: an unknown type, a field missing or of the
    wrong type, text it cannot parse."""

MAX_INPUT_TEXT = 1000     # a command or a dice line the clock wrote is far shorter

def input_from(t: int, data: dict[str, Any]) -> Input:
    """The input a journal record holds; raises InputError for one this firmware cannot take."""
    kind = _input_type(data)
    return INPUT_TYPES[kind].read(t, data)

def _edge_from(t: int, data: dict[str, Any]) -> Input:
    return ButtonEdge(t, _button(data["button"]), data["pressed"])

def _pin_from(t: int, data: dict[str, Any]) -> Input:
    try:
        key = PinKeyKind(data["key"])
    except ValueError:
        raise InputError(Problem("jf.pin_key", pin_key=repr(data["key"][:40]),
                                 keys=", ".join(k.value for k in PinKeyKind))) from None
    digest = data.get("digest")
    if (key is PinKeyKind.END) != (digest is not None):
        raise InputError(Problem("jf.pin_digest"))
    return PinKey(t, key, digest)

def _arbiter_from(t: int, data: dict[str, Any]) -> Input:
    try:
        return ArbiterAction(t, parse_command(data["command"].split()), data.get("source"),
                             data.get("by"))
    except ValueError as exc:       # ArbiterSyntaxError
        raise InputError(Problem("jf.arbiter_input", command=repr(data["command"][:60]),
                                 error=str(exc))) from None

def _dice_from(t: int, data: dict[str, Any]) -> Input:
    try:
        return DiceEvent(t, parse_line(data["line"]))
    except ValueError as exc:       # DiceSyntaxError
        raise InputError(Problem("jf.dice_input", line=repr(data["line"][:60]),
                                 error=str(exc))) from None

def _dice_dropped_from(t: int, data: dict[str, Any]) -> Input:
    if not 0 <= data["count"] <= MAX_SEQ:
        raise InputError(Problem("jf.dice_dropped", count=data["count"]))
    return DiceDropped(t, data["count"])

def _recover_from(t: int, _: dict[str, Any]) -> Input:
    return Recover(t)

# A stick's offer: all of these, or none (the offer withdrawn); each text bounded by
# MAX_INPUT_TEXT like any input's.
STICK_OFFER_FIELDS: dict[str, type] = {"table": str, "left": str, "right": str, "length": int,
                                       "score": str, "file": str, "seq": int, "mac": str}

def _stick_offer_from(t: int, data: dict[str, Any]) -> Input:
    present = [name for name in STICK_OFFER_FIELDS if name in data]
    if not present:
        return StickOffered(t, None)
    if len(present) != len(STICK_OFFER_FIELDS) or not 1 <= data["length"] <= MAX_SEQ \
            or not 0 <= data["seq"] <= MAX_SEQ:
        raise InputError(Problem("jf.stick_offer", fields=", ".join(STICK_OFFER_FIELDS)))
    return StickOffered(t, StickOffer(**{name: data[name] for name in STICK_OFFER_FIELDS}))

# A provisioning stick's offer (issue 32): all of these, or none (withdrawn).
PROVISION_OFFER_FIELDS: dict[str, type] = {"table": str, "host": str, "digest": str}

def _provision_offer_from(t: int, data: dict[str, Any]) -> Input:
    present = [name for name in PROVISION_OFFER_FIELDS if name in data]
    if not present:
        return ProvisionOffered(t, None)
    if len(present) != len(PROVISION_OFFER_FIELDS):
        raise InputError(Problem("jf.provision_offer",
                                 fields=", ".join(PROVISION_OFFER_FIELDS)))
    return ProvisionOffered(t, ProvisionOffer(**{name: data[name]
                                                 for name in PROVISION_OFFER_FIELDS}))

def _handover_from(t: int, data: dict[str, Any]) -> Input:
    """A hand-over (SPEC §13.5): the continuing clock's chord, within the config's bounds, and
    its PIN's hash (none: no PIN), checked as the config's `pin_hash` is (bounded parameters:
    no record makes an entry cost seconds or the Pi's memory). Never a clear PIN."""
    chord_ns, text = data["chord_ns"], data.get("pin_hash")
    if not CHORD_NS_RANGE[0] <= chord_ns <= CHORD_NS_RANGE[1]:
        raise InputError(Problem("jf.handover_chord", chord_ns=chord_ns,
                                 low=CHORD_NS_RANGE[0], high=CHORD_NS_RANGE[1]))
    try:
        pin = None if text is None else PinHash().check(text)
    except ValueError as exc:         # the config's words for it (cfg.pin_hash)
        raise InputError(Problem("jf.handover_pin", error=exc.args[0])) from None
    return ArbiterHandover(t, pin, chord_ns)

@dataclass(frozen=True)
class _InputType:
    fields: dict[str, type]                           # each field's JSON type (bool is no int)
    read: Callable[[int, dict[str, Any]], Input]      # once `_input_type` has checked the fields
    optional: dict[str, type] = field(default_factory=dict)   # checked when present

# Every input type a journal holds: its fields, and how it is read back.
INPUT_TYPES: dict[str, _InputType] = {
    "edge": _InputType({"button": str, "pressed": bool}, _edge_from),
    "pin": _InputType({"key": str}, _pin_from, {"digest": str}),
    "arbiter": _InputType({"command": str}, _arbiter_from, {"source": str, "by": str}),
    "dice": _InputType({"line": str}, _dice_from),
    "dice_dropped": _InputType({"count": int}, _dice_dropped_from),
    "recover": _InputType({}, _recover_from),
    "stick_offer": _InputType({}, _stick_offer_from, STICK_OFFER_FIELDS),
    "handover": _InputType({"chord_ns": int}, _handover_from, {"pin_hash": str}),
    "provision_offer": _InputType({}, _provision_offer_from, PROVISION_OFFER_FIELDS),
}

def _input_type(data: dict[str, Any]) -> str:
    """The input's type, once it and its fields are what this firmware knows."""
    kind = data.get("type")
    if not isinstance(kind, str):
        raise InputError(Problem("jf.no_input_type"))
    input_type = INPUT_TYPES.get(kind)
    if input_type is None:
        raise InputError(Problem("jf.input_type", kind=repr(kind[:40]), version=__version__))
    present = {name: t for name, t in input_type.optional.items() if name in data}
    for name, json_type in {**input_type.fields, **present}.items():
        value = data.get(name)
        if type(value) is not json_type:
            raise InputError(
                Problem("jf.input_field_missing", kind=kind, name=repr(name),
                        type=json_type.__name__) if value is None else
                Problem("jf.input_field_type", kind=kind, name=repr(name),
                        got=type(value).__name__, type=json_type.__name__))
        if isinstance(value, str) and len(value) > MAX_INPUT_TEXT:
            raise InputError(Problem("jf.input_long", kind=kind, name=repr(name),
                                     max=MAX_INPUT_TEXT))
    return kind

def _button(name: str) -> Button:
    try:
        return Button(name)
    except ValueError:
        raise InputError(Problem("jf.button", name=repr(name[:40]),
                                 buttons=", ".join(b.value for b in Button))) from None

def effects_data(effects: Iterable[Effect]) -> list[dict[str, Any]]:
    return [e.as_dict() for e in effects]

def effects_diverge(effects: list[Effect], recorded: object) -> bool:
    """Whether the effects computed now differ from those a record holds. Each recorded effect
    is compared on the keys it has only, so a journal written before a field was added to an
    effect still replays the same; a recorded key with another value, or an effect missing or
    extra, is a divergence."""
    if not isinstance(recorded, list) or len(recorded) != len(effects):
        return True
    for now, then in zip(effects_data(effects), recorded, strict=True):
        if not isinstance(then, dict) or any(key not in now or now[key] != value
                                             for key, value in then.items()):
            return True
    return False

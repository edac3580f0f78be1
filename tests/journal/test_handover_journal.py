"""A hand-over as the journal keeps it (SPEC §13.4, §13.5, issue 31): the input `handover` holds
the continuing clock's chord and at most its PIN's salted slow hash, bounded as the config bounds
them; a snapshot after it holds that hash (`$pin`) and the chord, never a clear PIN or the
pepper. What a record or snapshot that is not one says, in English and Russian."""

from __future__ import annotations

from typing import Any

import pytest

from gammonclock.config.problems import message_of, said
from gammonclock.core.match import ArbiterHandover
from gammonclock.core.pin import LOG_N, P, PinCheck, R, hash_pin, make_hash, pepper_of
from gammonclock.core.rules import MatchRules
from gammonclock.journal.inputs import InputError, input_data, input_from
from gammonclock.journal.snapshot import SnapshotError, decode_value, encode_value

S = 1_000_000_000
PEPPER = pepper_of(b"k" * 32)
KEYED = hash_pin("LRCL", PEPPER)
HEADER = MatchRules.defaults(arbiter_pin=hash_pin("RRLL"))


def test_a_handover_reads_back_as_it_was_journaled_with_the_hash_only():
    data = input_data(ArbiterHandover(7, KEYED, 4 * S))
    assert data == {"type": "handover", "chord_ns": 4 * S, "pin_hash": KEYED.hashed}
    assert input_from(7, data) == ArbiterHandover(7, KEYED, 4 * S)
    assert not input_from(7, data).pin.can_digest            # the pepper is never journaled
    assert input_from(7, data).with_key(PEPPER).pin.can_digest
    assert input_data(ArbiterHandover(7, None, 3 * S)) == {"type": "handover",
                                                           "chord_ns": 3 * S}
    assert input_from(7, {"type": "handover", "chord_ns": 3 * S}).pin is None


TOO_COSTLY = make_hash("LRCL").replace(f"scrypt${LOG_N}${R}${P}$", "scrypt$20$8$1$")

# (case, the input, its English, its Russian)
REFUSED: list[tuple[str, dict[str, Any], str, str]] = [
    ("chord too short", {"type": "handover", "chord_ns": S - 1},
     f"a hand-over's chord of {S - 1} ns is out of range ({S}..{10 * S} ns)",
     f"аккорд передачи матча ({S - 1} нс) вне допустимых пределов ({S}..{10 * S} нс)"),
    ("chord too long", {"type": "handover", "chord_ns": 10 * S + 1},
     f"a hand-over's chord of {10 * S + 1} ns is out of range ({S}..{10 * S} ns)",
     f"аккорд передачи матча ({10 * S + 1} нс) вне допустимых пределов ({S}..{10 * S} нс)"),
    ("a clear PIN", {"type": "handover", "chord_ns": 3 * S, "pin_hash": "LRCL"},
     "a hand-over's PIN hash cannot be used: \"LRCL\" is not a PIN hash: it is not a hash",
     "хеш ПИН-кода при передаче матча нельзя использовать: \"LRCL\" — не хеш ПИН-кода: это не "
     "хеш"),
    ("a hash that costs seconds", {"type": "handover", "chord_ns": 3 * S,
                                   "pin_hash": TOO_COSTLY},
     "a hand-over's PIN hash cannot be used: ",
     "хеш ПИН-кода при передаче матча нельзя использовать: "),
]


@pytest.mark.parametrize(("case", "data", "english", "russian"), REFUSED,
                         ids=[c[0] for c in REFUSED])
def test_a_handover_out_of_bounds_is_refused_in_both_languages(case, data, english, russian):
    with pytest.raises(InputError) as caught:
        input_from(0, data)
    message = message_of(caught.value)
    assert str(caught.value).startswith(english)
    assert said(message, "ru").startswith(russian), said(message, "ru")


@pytest.mark.parametrize("data", [
    {"type": "handover"},                                             # no chord
    {"type": "handover", "chord_ns": True},                           # a bool is no number
    {"type": "handover", "chord_ns": 3 * S, "pin_hash": 1234},        # a hash is text
    {"type": "handover", "chord_ns": 3 * S, "pin_hash": "x" * 1001},  # bounded first
])
def test_a_handover_of_the_wrong_shape_is_refused(data):
    with pytest.raises(InputError):
        input_from(0, data)


# --- the snapshot -----------------------------------------------------------------------------

def test_rules_handed_over_are_written_with_the_hash_and_read_back_with_the_pepper():
    rules = HEADER.handed_over_to(KEYED, 4 * S)
    data = encode_value(rules)
    assert data == {"$rules": {"pin": {"$pin": KEYED.hashed}, "chord_ns": 4 * S}}
    back = decode_value(data, HEADER, pepper=PEPPER)
    assert back == rules and back.arbiter_pin.can_digest
    assert encode_value(HEADER) == {"$rules": 1}       # the header's: not repeated
    assert decode_value({"$rules": 1}, HEADER) is HEADER
    assert encode_value(HEADER.handed_over_to(None, 3 * S)) == {
        "$rules": {"pin": None, "chord_ns": 3 * S}}


@pytest.mark.parametrize("data", [
    {"$rules": {"pin": None}},                                        # no chord
    {"$rules": {"pin": None, "chord_ns": 0}},                         # out of range
    {"$rules": {"pin": None, "chord_ns": 3 * S, "pepper": "x"}},      # nothing more
    {"$rules": {"pin": {"$pin": "LRCL"}, "chord_ns": 3 * S}},         # a clear PIN
    {"$rules": {"pin": {"$pin": TOO_COSTLY}, "chord_ns": 3 * S}},     # bounded
    {"$rules": {"pin": 5, "chord_ns": 3 * S}},
    {"$rules": True},
])
def test_handed_over_rules_a_snapshot_cannot_hold_are_refused(data):
    with pytest.raises(SnapshotError):
        decode_value(data, HEADER)


def test_a_headers_pin_never_goes_into_a_snapshot():
    """Only a hand-over's check is written (its hash); a header's old clear PIN is not."""
    with pytest.raises(SnapshotError):
        encode_value(PinCheck(KEYED.hashed, legacy_pin="LRCL"))

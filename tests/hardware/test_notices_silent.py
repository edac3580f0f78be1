"""`notice_for` skips, at once, every effect type none of its cases speaks of (`_silent`, the
press path's shortcut, issue 20). The list of spoken types and the cases must agree: every effect
type is built here (hypothesis) and a type the shortcut calls silent must get no notice from the
cases themselves. A case added for a new effect without the shortcut knowing fails here."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import gammonclock.core.engine  # noqa: F401  (every effect type defined)
from gammonclock.core.effects import Effect
from gammonclock.hardware import notices
from gammonclock.sides import Pair
from property_helpers import property_settings


def _pairs(pair_type: Any) -> st.SearchStrategy[Pair[Any]]:
    (of,) = getattr(pair_type, "__args__", (int,))
    return st.builds(Pair, st.from_type(of), st.from_type(of))


st.register_type_strategy(Pair, _pairs)


def _effect_types() -> list[type[Effect]]:
    found: list[type[Effect]] = []
    waiting = list(Effect.__subclasses__())
    while waiting:
        kind = waiting.pop()
        waiting.extend(kind.__subclasses__())
        if dataclasses.is_dataclass(kind) and kind not in found:
            found.append(kind)
    return found


EFFECT_TYPES = _effect_types()


def test_every_effect_type_is_built():
    assert len(EFFECT_TYPES) >= 30                     # the engine's effects, not a stray few


@pytest.mark.parametrize("kind", EFFECT_TYPES, ids=lambda kind: kind.__name__)
@property_settings(25)
@given(data=st.data())
def test_a_type_the_shortcut_calls_silent_gets_no_notice_from_the_cases(kind: type[Effect],
                                                                        data: Any) -> None:
    effect = data.draw(st.from_type(kind))
    if notices._silent(kind):
        assert notices._notice(effect) is None
        assert notices.notice_for(effect) is None
    else:
        assert notices.notice_for(effect) == notices._notice(effect)

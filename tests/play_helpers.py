"""Play a script through the real engine and look at the result (the tests of the core, the
panels and the journal's PIN).

    from play_helpers import Played, play
"""

from __future__ import annotations

import textwrap
from dataclasses import dataclass, field

from gammonclock.core.effects import Effect, surviving
from gammonclock.core.engine import Engine
from gammonclock.core.rules import MatchRules
from gammonclock.sim.script import parse_script
from gammonclock.sim.simulate import simulate


@dataclass
class Played:
    engine: Engine
    effects: list[Effect] = field(default_factory=list)

    @property
    def state(self) -> dict:
        return self.engine.state_json()

    @property
    def match(self):
        return self.engine.match

    def surviving(self, kind: type | None = None) -> list[Effect]:
        kept = surviving(self.effects)
        return [e for e in kept if kind is None or isinstance(e, kind)]

    def reserve_ms(self, side: str) -> int:
        return self.state["clock"][side]["reserve_ms"]


def play(script: str, rules: MatchRules | None = None, **overrides) -> Played:
    """Run a SPEC §9 script (dedented) on a fresh engine; `overrides` go to MatchRules.defaults."""
    rules = rules or MatchRules.defaults(**overrides)
    parsed = parse_script(textwrap.dedent(script), rules.hold_ns)
    played = Played(Engine.start(rules))

    def observe(engine: Engine, effects: list[Effect]) -> None:
        played.effects.extend(effects)

    played.engine = simulate(rules, parsed.inputs, parsed.end, observe)
    return played

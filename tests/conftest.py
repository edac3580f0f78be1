"""Shared helpers: play a script through the real engine and look at the result."""

from __future__ import annotations

import textwrap
from dataclasses import dataclass, field

import pytest

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


@pytest.fixture
def bg7() -> MatchRules:
    return MatchRules.defaults("backgammon", 7)


@pytest.fixture(autouse=True)
def _heap_unfrozen():
    """A clock's service run in the test process freezes the heap once READY and after each
    snapshot (`service.settle_memory`); left so, every later test's garbage of that time would
    stay for the rest of the run. Unfreeze after each test."""
    import gc

    yield
    gc.unfreeze()


@pytest.fixture(autouse=True)
def _sigpipe_kept():
    """`cli.main` restores SIGPIPE's default for the commands that print (so `| head` ends
    quietly); inside pytest that would outlive the test and let a later write to a closed socket
    kill the whole run. Put back what the test started with."""
    import signal

    before = signal.getsignal(signal.SIGPIPE)
    yield
    signal.signal(signal.SIGPIPE, before)


@pytest.fixture
def running(tmp_path):
    """The reference config's device, running (`running_device`)."""
    from device_helpers import MOCK_TEXT, running_device

    with running_device(MOCK_TEXT, tmp_path) as running:
        yield running


@pytest.fixture
def processes():
    """Processes a test starts; any still running after it are killed."""
    started = []
    yield started
    for proc in started:
        if proc.poll() is None:
            proc.kill()
        proc.communicate(timeout=5)

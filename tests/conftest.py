"""The fixtures every folder of tests shares (tests/README.md): a folder's own fixtures are in its
conftest.py; the helpers a test calls are the modules beside this file (`play_helpers`, …)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from gpiozero.pins.mock import MockFactory

from gammonclock.config.loading import Config
from gammonclock.core.rules import MatchRules
from gammonclock.device.build import build_device
from gammonclock.hardware.buttons import make_pin_factory
from mqtt_helpers import Broker, start_broker
from pin_helpers import FakeClock, fake_clock
from rig_helpers import Rig, close, mock_config
from table_helpers import Table


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
def running_ru(tmp_path):
    """A Russian match on the reference config's device (`[display] language = "ru"`), its
    service on a thread (`running_device`)."""
    from device_helpers import MOCK_TEXT, running_device

    with running_device(MOCK_TEXT + '\n[display]\nlanguage = "ru"\n', tmp_path) as running:
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


@pytest.fixture
def broker(tmp_path: Path) -> Iterator[Broker]:
    """A fresh Mosquitto with the accounts `hall`, `table-1`, `table-2` and `watcher`, and
    hall/acl (mqtt_helpers.start_broker); the tests of the link, the hall and the races use it."""
    b = start_broker(tmp_path / "broker")
    try:
        yield b
    finally:
        b.stop()


@pytest.fixture
def factory() -> Iterator[MockFactory]:
    """The mock pin factory as the config's `pin_factory = "mock"` makes it; reset and closed
    after the test."""
    made = make_pin_factory("mock")
    assert isinstance(made, MockFactory)
    yield made
    made.reset()
    made.close()


@pytest.fixture
def clock(factory: MockFactory, monkeypatch: pytest.MonkeyPatch) -> FakeClock:
    """Virtual time for the mock pins (their change times) and the factory's ticks
    (pin_helpers.fake_clock; `device_clock` is the one without a factory)."""
    return fake_clock(monkeypatch, factory)


@pytest.fixture
def device_clock(monkeypatch: pytest.MonkeyPatch) -> FakeClock:
    """The host's monotonic clock, shared by the device, the mock pins and (`open_device`) the
    ticks of the device's own factory."""
    return fake_clock(monkeypatch)


@pytest.fixture
def open_device(device_clock: FakeClock, tmp_path: Path) -> Iterator[Callable[..., Rig]]:
    """Builds mock devices on the fake clock (rig_helpers.Rig); closes each one (once) after
    the test."""
    clock = device_clock
    made: list[Rig] = []

    def build(config: Config | None = None, state_dir: Path | None = None) -> Rig:
        device = build_device(config or mock_config(), state_dir or tmp_path / "state",
                              clock_ns=clock)
        device.factory.ticks = clock.seconds     # the edges' ticks on the same clock
        rig = Rig(device, clock)
        made.append(rig)
        rig.device.service.present_all([])       # what run() does first
        return rig

    yield build
    for rig in made:
        close(rig)


@pytest.fixture
def tables(tmp_path: Path) -> Iterator[Callable[..., Table]]:
    made: list[Table] = []

    def make(text: str, folder: str = "clock") -> Table:
        table = Table(tmp_path / folder, text)
        (tmp_path / folder).mkdir(exist_ok=True)
        made.append(table)
        return table.start()

    yield make
    for table in made:
        table.stop()

"""The button board over gpiozero's MockFactory: raw edges, their instants, and no fallback."""

from __future__ import annotations

import logging
import queue
import textwrap
import time
import warnings
from collections.abc import Iterator
from dataclasses import replace

import pytest
from gpiozero import Device
from gpiozero.pins.mock import MockFactory

from gammonclock.config.loading import DEFAULT_DEVICE
from gammonclock.core.engine import ButtonEdge, Engine
from gammonclock.core.rules import MatchRules
from gammonclock.hardware.buttons import ButtonBoard, make_pin_factory
from gammonclock.hardware.errors import HardwareError
from gammonclock.sides import Button
from gammonclock.sim.script import parse_script

PINS = DEFAULT_DEVICE.button_pins          # left 17, right 27, cube 22
MS = 1_000_000
S = 1_000_000_000


@pytest.fixture
def boards() -> Iterator[list[ButtonBoard]]:
    """Boards made by a test, closed after it whatever happened."""
    made: list[ButtonBoard] = []
    yield made
    for board in made:
        board.close()


def board_on(factory: MockFactory, boards: list[ButtonBoard], sink, **kwargs) -> ButtonBoard:
    board = ButtonBoard(PINS, factory, sink, **kwargs)
    boards.append(board)
    return board


def drive(factory: MockFactory, button: Button, pressed: bool) -> None:
    pin = factory.pin(PINS[button])
    if pressed:
        pin.drive_low()       # buttons wire the pin to ground
    else:
        pin.drive_high()


# --- set-up -----------------------------------------------------------------------------------


def test_buttons_use_the_internal_pull_up_and_no_backend_debounce(factory, boards):
    board = board_on(factory, boards, lambda edge: None)
    for button, gpio in PINS.items():
        pin = factory.pin(gpio)
        assert pin.function == "input"
        assert pin.pull == "up"
        assert pin.bounce is None
        assert pin.edges == "both"
        assert pin.state == 1                 # released reads high
        assert board.is_pressed(button) is False
    drive(factory, Button.CUBE, True)
    assert board.is_pressed(Button.CUBE) is True
    assert board.is_pressed(Button.LEFT) is False


def test_a_pin_in_use_or_given_twice_is_a_hardware_error(factory, boards):
    board_on(factory, boards, lambda edge: None)
    with pytest.raises(HardwareError, match="GPIO 17"):
        ButtonBoard({Button.LEFT: 17}, factory, lambda edge: None)
    with pytest.raises(HardwareError, match="both on GPIO 5"):
        ButtonBoard({Button.LEFT: 5, Button.RIGHT: 5}, factory, lambda edge: None)
    # The failed board released what it had taken: GPIO 5 is free again.
    ButtonBoard({Button.CUBE: 5}, factory, lambda edge: None).close()


def test_close_stops_the_edges_and_frees_the_pins(factory, clock):
    got: list[ButtonEdge] = []
    with ButtonBoard(PINS, factory, got.append, clock_ns=clock) as board:
        drive(factory, Button.LEFT, True)
    assert board.buttons == ()
    drive(factory, Button.LEFT, False)
    assert got == [ButtonEdge(clock.ns, Button.LEFT, True)]
    again: list[ButtonEdge] = []
    with ButtonBoard(PINS, factory, again.append, clock_ns=clock):
        drive(factory, Button.LEFT, True)
    assert again == [ButtonEdge(clock.ns, Button.LEFT, True)]


# --- edges ------------------------------------------------------------------------------------


def test_presses_and_releases_arrive_in_order_at_their_instants(factory, boards, clock):
    got: list[ButtonEdge] = []
    board_on(factory, boards, got.append, clock_ns=clock)
    plan = [(0, Button.LEFT, True), (80 * MS, Button.LEFT, False),
            (5 * S, Button.RIGHT, True), (5 * S + 120 * MS, Button.CUBE, True),
            (5 * S + 200 * MS, Button.RIGHT, False), (7 * S, Button.CUBE, False)]
    start = clock.ns
    for offset, button, pressed in plan:
        clock.ns = start + offset
        drive(factory, button, pressed)
    assert got == [ButtonEdge(start + offset, button, pressed) for offset, button, pressed in plan]


def test_edges_carry_the_monotonic_instant_of_the_change(factory, boards):
    """Real clocks: each edge's instant lies between the reads around the change."""
    sink: queue.Queue[ButtonEdge] = queue.Queue()
    board_on(factory, boards, sink.put)
    windows = []
    for button, pressed in [(Button.LEFT, True), (Button.LEFT, False), (Button.CUBE, True),
                            (Button.CUBE, False)]:
        before = time.monotonic_ns()
        drive(factory, button, pressed)
        windows.append((before, time.monotonic_ns(), button, pressed))
    for before, after, button, pressed in windows:
        edge = sink.get_nowait()
        assert (edge.button, edge.pressed) == (button, pressed)
        # 1 µs for the float seconds gpiozero keeps its ticks in.
        assert before - 1000 <= edge.t <= after + 1000
    assert sink.empty()


def test_bounces_are_delivered_raw_and_the_engine_debounces(factory, boards, clock):
    got: list[ButtonEdge] = []
    board_on(factory, boards, got.append, clock_ns=clock)
    start = clock.ns
    for i, pressed in enumerate([True, False, True, False, True]):   # contacts chattering
        clock.ns = start + i * 200_000                                  # 0.2 ms apart
        drive(factory, Button.RIGHT, pressed)
    assert [(e.t - start, e.pressed) for e in got] == [
        (0, True), (200_000, False), (400_000, True), (600_000, False), (800_000, True)]
    engine = Engine.start(MatchRules.defaults("backgammon", 7), at=start)
    for edge in got:
        engine, _ = engine.feed(edge)
    state = engine.button(Button.RIGHT)
    assert state.down and state.last_edge_at == start   # one press, from the first edge


def test_the_backend_tick_of_the_edge_wins_over_the_callback_time(factory, boards, clock):
    """lgpio hands the callback the kernel's tick of the edge; a late callback keeps it."""
    got: list[ButtonEdge] = []
    board_on(factory, boards, got.append, clock_ns=clock)
    pin = factory.pin(PINS[Button.LEFT])
    callback = pin.when_changed
    edge_at = clock.ns
    clock.ns += 7 * MS                     # the callback runs 7 ms after the edge
    callback(edge_at / S, 0)               # (ticks, level) as gpiozero passes them
    assert got == [ButtonEdge(edge_at, Button.LEFT, True)]


def test_ticks_on_another_clock_fall_back_to_the_callback_time(factory, boards, clock, caplog):
    got: list[ButtonEdge] = []
    board_on(factory, boards, got.append, clock_ns=clock)
    callback = factory.pin(PINS[Button.CUBE]).when_changed
    with caplog.at_level(logging.WARNING, logger="gammonclock.hardware.buttons"):
        callback(1.7e9, 0)                 # a wall-clock tick: not the factory's clock
        clock.ns += MS
        callback(-5.0, 1)                  # a tick from the future
    assert got == [ButtonEdge(clock.ns - MS, Button.CUBE, True),
                   ButtonEdge(clock.ns, Button.CUBE, False)]
    assert len([r for r in caplog.records if "backend's edge tick" in r.message]) == 1


def test_edges_never_go_back_in_time(factory, boards, clock):
    """Edges of two pins delivered out of order keep the order they were delivered in."""
    got: list[ButtonEdge] = []
    board_on(factory, boards, got.append, clock_ns=clock)
    now = clock.ns
    factory.pin(PINS[Button.LEFT]).when_changed(now / S, 0)
    factory.pin(PINS[Button.RIGHT]).when_changed((now - 2 * MS) / S, 0)
    assert got == [ButtonEdge(now, Button.LEFT, True), ButtonEdge(now, Button.RIGHT, True)]


def test_a_failing_sink_is_logged_and_the_next_edge_still_goes(factory, boards, clock, caplog):
    got: list[ButtonEdge] = []

    def sink(edge: ButtonEdge) -> None:
        if not got and edge.pressed:
            got.append(edge)
            raise queue.Full
        got.append(edge)

    board_on(factory, boards, sink, clock_ns=clock)
    with caplog.at_level(logging.ERROR, logger="gammonclock.hardware.buttons"):
        drive(factory, Button.LEFT, True)
        drive(factory, Button.LEFT, False)
    assert [e.pressed for e in got] == [True, False]
    assert any("edge not delivered" in r.message for r in caplog.records)


def test_the_config_pins_map_to_their_buttons(factory, boards, clock):
    got: list[ButtonEdge] = []
    board_on(factory, boards, got.append, clock_ns=clock)
    for gpio, button in [(27, Button.RIGHT), (22, Button.CUBE), (17, Button.LEFT)]:
        factory.pin(gpio).drive_low()
        assert got[-1] == ButtonEdge(clock.ns, button, True)


# --- a whole game through the pins -------------------------------------------------------------

GAME = """
    1.0     tap right        # right had the lower die: left's turn starts
    8.0     tap left
    15.5    tap right
    20.0    down left        # a chattering press: only the first down and the last up count
    20.001  up left
    20.003  down left
    20.1    up left
    24.0    tap cube         # right doubles
    30.0    tap left         # left takes
    35.0    tap right
    40.0    hold left 2.5    # left ends the game: "left wins single"
    44.0    tap cube         # "left wins gammon"
    46.0    tap right        # right confirms
    50.0    end
"""


def play(rules: MatchRules, edges: list[ButtonEdge], start: int, end: int) -> Engine:
    """The engine after `edges` (each fires the timers due before it) and the timers to `end`."""
    engine = Engine.start(rules, at=start)
    for edge in edges:
        engine, _ = engine.feed(edge)
    engine, _ = engine.advance(end)
    return engine


def test_a_short_game_through_the_pins_equals_the_edges_fed_directly(factory, boards, clock):
    rules = MatchRules.defaults("backgammon", 7)
    script = parse_script(textwrap.dedent(GAME), rules.hold_ns)
    start = clock.ns
    direct = [replace(e, t=start + e.t) for e in script.inputs]
    assert all(isinstance(e, ButtonEdge) for e in direct) and len(direct) == 22

    through: list[ButtonEdge] = []
    board_on(factory, boards, through.append, clock_ns=clock)
    for edge in direct:
        clock.ns = edge.t
        drive(factory, edge.button, edge.pressed)

    assert through == direct
    end = start + script.end
    via_pins = play(rules, through, start, end).state_json()
    assert via_pins == play(rules, direct, start, end).state_json()
    # Not vacuous: the game was played and scored (gammon at cube 2).
    assert via_pins["phase"] == "between_games"
    assert via_pins["game"] == 2
    assert via_pins["score"] == {"left": 4, "right": 0}


# --- the pin factory ---------------------------------------------------------------------------


def _backend_present(name: str) -> bool:
    try:
        make_pin_factory(name).close()
    except HardwareError:
        return False
    return True


@pytest.mark.parametrize("name", ["lgpio", "rpigpio"])
def test_a_real_backend_off_a_pi_is_a_clear_error_not_a_fallback(name):
    if _backend_present(name):
        pytest.skip(f"{name} works on this machine (a Raspberry Pi)")
    before = Device.pin_factory
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with pytest.raises(HardwareError) as error:
            make_pin_factory(name)
    message = str(error.value)
    assert f"pin factory {name!r} cannot be created" in message
    assert "install" in message                       # says what to do
    assert isinstance(error.value, RuntimeError)
    assert Device.pin_factory is before               # no default factory was chosen
    assert not [w for w in caught if "fall" in str(w.message).lower()]


def test_an_unknown_backend_is_refused():
    with pytest.raises(HardwareError, match="use one of: lgpio, rpigpio, mock"):
        make_pin_factory("pigpio")


def test_a_release_lost_in_bounce_is_delivered_once_the_button_settles():
    # A tap shorter than debounce_ms: the engine ignores its release (fine point 3) and would
    # believe the button down, then held. The board reads the pin after the edges settle and
    # delivers its level, which the engine takes.
    import threading as _threading

    from gpiozero.pins.mock import MockFactory

    from gammonclock.core.engine import Engine
    from gammonclock.core.rules import MatchRules
    from gammonclock.hardware.buttons import ButtonBoard
    from gammonclock.sides import Button as _Button

    factory = MockFactory()
    edges = []
    got = _threading.Event()

    def sink(edge):
        edges.append(edge)
        if len(edges) == 3:
            got.set()

    board = ButtonBoard({_Button.LEFT: 17}, factory, sink, settle_ns=35_000_000)
    try:
        pin = factory.pin(17)
        pin.drive_low()
        pin.drive_high()                       # released at once: well inside 30 ms
        assert got.wait(2), edges
        assert [e.pressed for e in edges] == [True, False, False]
        rules = MatchRules.defaults()          # debounce 30 ms
        engine = Engine.start(rules)
        for edge in edges:
            engine, _ = engine.feed(edge)
        assert engine.button(_Button.LEFT).down is False    # the settled level got through
        engine, _ = engine.advance(edges[0].t + rules.hold_ns + 1)
        assert engine.match.phase.value == "running"         # a tap, never a phantom hold
    finally:
        board.close()
        factory.close()

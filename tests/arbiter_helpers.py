"""The arbiter's chord and PIN as script lines (SPEC §13.4), played through the engine: the
tests of the arbiter's mode (core), of the PIN (core, journal) and of the journal's footprint
write their presses with these."""

from __future__ import annotations

from gammonclock.core.pin import hash_pin
from gammonclock.core.rules import MatchRules
from gammonclock.sides import Side
from play_helpers import Played, play

S = 1_000_000_000
PIN = "LRCL"
RIGHT_PIN_TAPS = ("left", "right", "cube", "left")
WRONG_PIN_TAPS = ("left", "right", "cube", "right")
HOLD_END = 2.5      # a scripted `hold cube`: hold_s + 0.5 s; the entry ends at its release


def chord(t: float, release_after: float = 3.5, order: tuple[str, ...] = ("cube", "left",
                                                                            "right")) -> str:
    """All three buttons down 0.1 s apart from `t`, released `release_after` s after the last
    went down."""
    downs = [f"{t + 0.1 * i:.1f} down {b}" for i, b in enumerate(order)]
    last = t + 0.1 * (len(order) - 1)
    ups = [f"{last + release_after:.1f} up {b}" for b in order]
    return "\n".join(downs + ups) + "\n"


def taps(t: float, buttons: tuple[str, ...], every: float = 0.5) -> str:
    return "".join(f"{t + every * i:.1f} tap {b}\n" for i, b in enumerate(buttons))


def entry(t: float, buttons: tuple[str, ...], every: float = 0.5) -> str:
    """A PIN entered from `t`: its taps, then the cube held (the entry ends at its release,
    `entry_end`)."""
    return taps(t, buttons, every) + f"{t + every * len(buttons):.1f} hold cube\n"


def entry_end(t: float, buttons: tuple[str, ...], every: float = 0.5) -> float:
    return t + every * len(buttons) + HOLD_END


def run(script: str, pin: str | None = PIN, **overrides: object) -> Played:
    return play(script, MatchRules.defaults(arbiter_pin=pin and hash_pin(pin), **overrides))


def reserve_ns(played: Played, side: Side) -> int:
    return played.match.reserve_at(side)


# Game 1 under way: left tapped at 1 s, so right's clock runs (12 s delay, then its 14:00).
OPENING = "1 tap left\n"

"""Errors of the device layer, one base for all of it (gpiozero's style: ours and a builtin)."""

from __future__ import annotations

from gammonclock.errors import GammonclockError


class HardwareError(GammonclockError, RuntimeError):
    """A device of the clock cannot be set up or used; the message says what and what to do."""

"""The one base of every error gammonclock raises on purpose.

Each error class of the package inherits from `GammonclockError` and from the builtin that says
what kind of error it is, as gpiozero's do (`BadWaitTime(GPIOZeroError, ValueError)`): a caller
can catch `ValueError` as before, or everything the package raises with `except GammonclockError`.
"""

from __future__ import annotations


class GammonclockError(Exception):
    """Raised on purpose by gammonclock; the message says what went wrong and what to do."""

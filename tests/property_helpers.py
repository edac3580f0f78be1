"""The hypothesis settings of every property and fuzz test, in one place.

Deterministic by default (derandomized): the suite gives the same verdict on every run; a failure
prints its shrunk example. No example database, ever: no tests/.hypothesis is left behind. To
search afresh with random examples, set GAMMONCLOCK_PROPERTY_EXAMPLES (e.g. 5000): that many
examples per test, drawn at random.
"""

from __future__ import annotations

import os
from typing import Any

from hypothesis import settings

EXPLORE = int(os.environ.get("GAMMONCLOCK_PROPERTY_EXAMPLES", "0") or 0)


def property_settings(examples: int, **extra: Any) -> settings:
    """`examples` per test (or GAMMONCLOCK_PROPERTY_EXAMPLES when exploring), derandomized unless
    exploring, no database, no deadline; `extra` (a deadline, suppress_health_check…) is what a
    caller needs on top."""
    return settings(**{"max_examples": EXPLORE or examples, "derandomize": not EXPLORE,
                       "database": None, "deadline": None, **extra})

"""A benchmark script under benchmarks/ loaded as a module, for its smoke tests."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import Any

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"


def load_benchmark(name: str) -> Any:
    """benchmarks/NAME.py as the module NAME (registered in sys.modules: a benchmark that
    spawns processes has them import it by that name)."""
    if name in sys.modules:          # one module per benchmark, whichever test loaded it first:
        return sys.modules[name]     # a spawned process pickles its functions by that name
    spec = importlib.util.spec_from_file_location(name, BENCHMARKS / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module

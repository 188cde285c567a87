"""The tests' helpers for the benchmarks that drive a browser, a server or the pool as the tests
do (tests/browser.py, tests/editor_helpers.py, tests/test_pool.py). tests/ is no package and is
not installed (the project's packages are: make setup), so its modules load from their files,
under their own names, with the ones they import first (browser.py imports conftest)."""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1] / "tests"
NEEDS = {"browser": ("conftest",)}


def load(name: str):
    """tests/<name>.py as the module `name` (once per process)."""
    for first in NEEDS.get(name, ()):
        load(first)
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, TESTS / f"{name}.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]

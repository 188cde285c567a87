"""The tests' helpers for the benchmarks that drive a browser, a server or the pool as the tests
do (tests/browser/__init__.py, tests/editor_helpers.py, tests/sandbox/test_pool.py). tests/ is not
installed (the project's packages are: make setup), so its modules load from their files, under
their own names, with the ones they import first (browser imports conftest). A name is looked
for where pytest.ini's `pythonpath = tests` finds it (tests/<name>.py, the package
tests/<name>/), then in the suite's rooms (tests/<room>/<name>.py)."""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1] / "tests"
NEEDS = {"browser": ("conftest",)}


def _where(name: str) -> Path:
    for path in (TESTS / f"{name}.py", TESTS / name / "__init__.py", *sorted(TESTS.glob(f"*/{name}.py"))):
        if path.is_file():
            return path
    raise ModuleNotFoundError(f"no {name}.py under {TESTS}")


def load(name: str):
    """tests/<name>.py (or a room's) as the module `name` (once per process)."""
    for first in NEEDS.get(name, ()):
        load(first)
    if name not in sys.modules:
        path = _where(name)
        package = [str(path.parent)] if path.name == "__init__.py" else None
        spec = importlib.util.spec_from_file_location(name, path, submodule_search_locations=package)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]

"""The `workers` marker keeps the fast inner loop honest (tests/conftest.py): what counts as a
process of the project, and the rooms marked whole."""
from __future__ import annotations

import sys

import pytest

from conftest import WORKER_ROOMS, starts_project_process


@pytest.mark.parametrize("argv", [
    [sys.executable, "-m", "inspectors.compile.worker_main"],
    ["bwrap", "--die-with-parent", "--", "/usr/bin/python3", "-m", "inspectors.compile.sass_job"],
    [sys.executable, "-m", "inspectors", "compile", "k.py", "--json"],
    [sys.executable, "-m", "streamlit", "run", "app/main.py"],
    ["/work/.venv/bin/tlens", "compile", "k.py"],
    "python -m inspectors.bench.worker",
])
def test_a_process_of_the_project_is_seen(argv):
    assert starts_project_process(argv)


@pytest.mark.parametrize("argv", [
    ["/x/triton/backends/nvidia/bin/nvdisasm", "-c", "k.cubin"],
    [sys.executable, "-c", "import inspectors"],
    ["g++", "-shared", "guard.cpp"],
    [sys.executable, "-m", "pytest", "-q"],
    "ptxas --version",
])
def test_other_processes_are_not(argv):
    assert starts_project_process(argv) is None


def test_the_rooms_marked_whole_exist():
    from conftest import ROOT
    assert all((ROOT / "tests" / room).is_dir() for room in WORKER_ROOMS)


def test_every_test_using_a_worker_fixture_is_marked(request):
    """Marked at collection, before -m deselects: every test of the session that asks for the
    engine, engines of several versions or a Lens; this one (none of them) is not."""
    from conftest import MARKED, WORKER_FIXTURES
    assert request.node.nodeid not in request.config.stash[MARKED]
    collected = [i for i in request.session.items if WORKER_FIXTURES & set(getattr(i, "fixturenames", ()))]
    assert all(i.nodeid in request.config.stash[MARKED] for i in collected)
    assert {"engine", "engines", "lens", "broken_engine", "two_children", "triton_layouts"} <= WORKER_FIXTURES

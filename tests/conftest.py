import logging
import os
import re
import subprocess
import tempfile
from pathlib import Path

import pytest

# Tests never touch the user's workspace: the app, its servers and the CLI all read this.
os.environ["TLENS_WORKSPACE_DIR"] = tempfile.mkdtemp(prefix="tlens-test-workspace-")

ROOT = Path(__file__).resolve().parents[1]
SNIPPETS = ROOT / "tests" / "snippets"
FIXTURES = ROOT / "tests" / "fixtures"


def until(cond, limit: float = 60.0) -> bool:
    """Whether `cond()` came true within `limit` seconds (asked ten times a second)."""
    import time
    end = time.monotonic() + limit
    while time.monotonic() < end:
        if cond():
            return True
        time.sleep(0.1)
    return False


def load_script(path: Path):
    """A script of benchmarks/ or deploy/ as a module, from its file: those folders are not
    packages (the project's packages, inspectors, kernels and app, are installed: make setup)."""
    import importlib.util
    spec = importlib.util.spec_from_file_location(Path(path).stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="session")
def engine(tmp_path_factory):
    from inspectors.base import settings as settings_mod
    from inspectors.compile.engine import Engine
    s = settings_mod.load()
    eng = Engine(s)
    assert eng.wait_ready(), "compile worker did not start"
    yield eng
    eng.close()


@pytest.fixture
def snippet():
    def read(name: str) -> str:
        return (SNIPPETS / name).read_text()
    return read


class _Collect(logging.Handler):
    def __init__(self):
        super().__init__(logging.WARNING)
        self.messages: list[str] = []

    def emit(self, record):
        self.messages.append(record.getMessage())


@pytest.fixture(autouse=True)
def no_streamlit_deprecation(request):
    """Streamlit logs its deprecations (`streamlit.deprecation_util.show_deprecation_warning`)
    instead of raising a warning that pytest's filterwarnings could turn into an error: a test
    whose app code uses a deprecated Streamlit API fails here."""
    logger = logging.getLogger("streamlit.deprecation_util")
    handler = _Collect()
    logger.addHandler(handler)
    try:
        yield
    finally:
        logger.removeHandler(handler)
    if handler.messages and not request.node.get_closest_marker("allow_streamlit_deprecation"):
        pytest.fail("Streamlit deprecation warning(s):\n" + "\n".join(handler.messages))


# ---- the `workers` marker: tests that start real processes of the project -----------------------
# `pytest -m "not workers"` is the fast inner loop. Every test in these rooms starts one (an engine,
# a sandbox, a Streamlit server and Chromium), and so does every test that asks for the `engine`
# fixture or runs a page in AppTest (the explorer starts its warm compile worker on first load, and
# the server's one Lens outlives the test: who starts it depends on the order); elsewhere a test
# says so itself (`pytestmark = pytest.mark.workers`, or on the test).
WORKER_ROOMS = ("sandbox", "browser")
# fixtures that start an engine (engines of several Triton versions, a Lens, an engine whose
# workers fork children or whose ptxas is broken) or Triton's layout probe process
WORKER_FIXTURES = {"engine", "engines", "lens", "broken_engine", "two_children", "triton_layouts"}
MARKED = pytest.StashKey[set]()           # the node ids marked at collection (tests/unit/test_markers.py)
# a process of the project: `python -m inspectors...` (a compile or benchmark worker, a SASS job,
# the CLI), `python -m streamlit`, or the installed `tlens` / `streamlit` commands
_PROJECT_PROCESS = re.compile(r"(?:^|\s)-m\s+(?:inspectors|streamlit)\b|(?:^|/)(?:tlens|streamlit)(?:\s|$)")


def starts_project_process(args) -> str | None:
    """The command line, where `args` (as Popen takes them) starts a process of the project."""
    cmd = " ".join(map(str, args)) if isinstance(args, (list, tuple)) else str(args)
    return cmd[:300] if _PROJECT_PROCESS.search(cmd) else None


@pytest.hookimpl(tryfirst=True)            # before -m deselects by the marks
def pytest_collection_modifyitems(config, items):
    for item in items:
        if Path(str(item.fspath)).parent.name in WORKER_ROOMS or WORKER_FIXTURES & set(getattr(item, "fixturenames", ())) \
                or _runs_a_page(item):
            item.add_marker(pytest.mark.workers)
    config.stash[MARKED] = {item.nodeid for item in items if item.get_closest_marker("workers")}


def _runs_a_page(item) -> bool:
    """Whether the test, or a function of its module it calls, makes an AppTest."""
    import inspect

    def makes_one(fn) -> bool:
        try:
            return "AppTest.from_" in inspect.getsource(fn)
        except (OSError, TypeError):
            return False
    fn = getattr(item, "function", None)
    if fn is None:
        return False
    module = inspect.getmodule(fn)
    helpers = [getattr(module, name, None) for name in fn.__code__.co_names]
    return makes_one(fn) or any(inspect.isfunction(h) and h.__module__ == fn.__module__ and makes_one(h)
                                for h in helpers)


# In a run that leaves the `workers` tests out, an unmarked test that starts a process of the
# project fails: its marker is missing, and the fast loop would not stay fast.
_watch = {"on": False, "started": []}
_popen_init = subprocess.Popen.__init__


def _watched_init(self, args, *a, **k):
    if _watch["on"] and (cmd := starts_project_process(args)):
        _watch["started"].append(cmd)
    return _popen_init(self, args, *a, **k)


def pytest_configure(config):
    if re.search(r"\bnot\s+workers\b", config.option.markexpr or ""):
        subprocess.Popen.__init__ = _watched_init


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    """The watch spans the test's setup (its fixtures, module-scoped ones too), call and teardown."""
    watching = subprocess.Popen.__init__ is _watched_init and not item.get_closest_marker("workers")
    _watch["on"], _watch["started"] = watching, []
    try:
        yield
    finally:
        _watch["on"] = False


@pytest.fixture(autouse=True)
def unmarked_tests_start_no_workers(request):
    yield
    if _watch["started"]:
        started, _watch["started"] = list(_watch["started"]), []
        pytest.fail("this test (or a fixture it uses) starts a process of the project; mark it `workers` "
                    "(pytestmark = pytest.mark.workers):\n" + "\n".join(started))

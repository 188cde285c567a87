import logging
import os
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

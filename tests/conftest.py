import os
import sys
import tempfile
from pathlib import Path

import pytest

# Tests never touch the user's workspace: the app, its servers and the CLI all read this.
os.environ["TLENS_WORKSPACE_DIR"] = tempfile.mkdtemp(prefix="tlens-test-workspace-")

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
SNIPPETS = ROOT / "tests" / "snippets"
FIXTURES = ROOT / "tests" / "fixtures"


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

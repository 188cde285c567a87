"""A workspace's other files go with a compile (so that `from vadd_helpers import block` works), but
only within what a compile takes: counted and sized from stat before the server reads any. Over
the limits the compile is refused with a message that names the figures, no file is read, the
editor keeps its text and the page keeps serving; a later compile, with fewer files, works. The
cache key hashes the files as they are; a history record keeps digests, not the texts."""
import pytest
from streamlit.testing.v1 import AppTest

from apptest_panels import panels
from conftest import ROOT, SNIPPETS
from editor_helpers import editor
from inspectors.base.result import MAX_PROJECT_BYTES, MAX_PROJECT_FILES, CompileRequest
from inspectors.store import workspace as workspace_mod
from inspectors.store.results import request_key

# every test here starts a compile worker or the CLI (tests/conftest.py)
pytestmark = pytest.mark.workers

APP = str(ROOT / "app" / "main.py")
VADD = (SNIPPETS / "vadd.py").read_text()
DRIVER = VADD.replace("import torch\n", "import torch\nfrom vadd_helpers import block\n", 1)
HELPERS = "import triton\n\n\ndef block(n):\n    return triton.next_power_of_2(n)\n"
MB_FILE = ("# " + "x" * 97 + "\n") * 10_000          # 1,000,000 bytes: the most a workspace file holds


@pytest.fixture
def ws_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("TLENS_WORKSPACE_DIR", str(tmp_path / "ws"))
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "driver.py").write_text(DRIVER)
    (tmp_path / "ws" / "vadd_helpers.py").write_text(HELPERS)
    return tmp_path / "ws"


@pytest.fixture
def reads(monkeypatch) -> list[str]:
    """The names the server reads from a workspace, in order."""
    seen: list[str] = []
    real = workspace_mod.Workspace.read

    def read(self, name):
        seen.append(name)
        return real(self, name)
    monkeypatch.setattr(workspace_mod.Workspace, "read", read)
    return seen


def _open(name: str) -> AppTest:
    app = AppTest.from_file(APP, default_timeout=240)
    app.run()
    app.selectbox(key="picker").set_value(f"ws:{name}").run()
    assert not app.exception, app.exception
    return app


def _compile(app: AppTest) -> None:
    app.button(key="compile").click().run()
    assert not app.exception, app.exception


def test_over_the_bytes_is_refused_unread_and_fewer_files_compile(ws_dir, reads):
    assert len(MB_FILE) == 1_000_000 and 20 * len(MB_FILE) > MAX_PROJECT_BYTES
    for i in range(20):
        (ws_dir / f"big_{i:02d}.py").write_text(MB_FILE)
    app = _open("driver.py")
    edited = DRIVER + "\n# my edit\n"
    editor(app).input(edited).run()
    _compile(app)
    assert app.error, "the compile was not refused"
    message = app.error[0].value
    assert "21 files and 19.1 MB" in message                  # 20 big ones and vadd_helpers.py
    assert f"at most {MAX_PROJECT_FILES} files and {MAX_PROJECT_BYTES >> 20} MB" in message
    assert "Workspace box" in message
    assert not any(n.startswith("big_") or n == "vadd_helpers.py" for n in reads), reads
    assert editor(app).value == edited and (ws_dir / "driver.py").read_text() == edited
    assert "compile_request" not in app.session_state and "result_request" not in app.session_state

    ws = workspace_mod.Workspace(ws_dir)
    for i in range(10):                                         # 10 MB left: within the limit
        ws.delete(f"big_{i:02d}.py")
    _compile(app)
    assert not app.error, [e.value for e in app.error]
    assert "ptx" in panels(app)
    assert editor(app).value == edited
    sent = app.session_state["result_request"]
    assert sorted(sent.files) == [f"big_{i:02d}.py" for i in range(10, 20)] + ["vadd_helpers.py"]
    assert sent.files["vadd_helpers.py"] == HELPERS
    assert sum(n == "big_10.py" for n in reads) == 1             # each file read once for the compile


def test_over_the_count_is_refused_unread(ws_dir, reads):
    for i in range(MAX_PROJECT_FILES):
        (ws_dir / f"tiny_{i:03d}.py").write_text("X = 1\n")
    app = _open("driver.py")
    _compile(app)
    assert app.error and f"{MAX_PROJECT_FILES + 1} files" in app.error[0].value
    assert not any(n.startswith("tiny_") for n in reads)
    assert editor(app).value == DRIVER


def test_a_small_project_compiles_with_its_files(ws_dir, reads):
    (ws_dir / "huge.py").write_text("#" * (workspace_mod.MAX_BYTES + 10))   # put there by hand: left out unread
    app = _open("driver.py")
    _compile(app)
    assert not app.error, [e.value for e in app.error]
    assert "ptx" in panels(app)
    assert "huge.py" not in reads
    sent = app.session_state["result_request"]
    assert sent.files == {"vadd_helpers.py": HELPERS}
    (record,) = app.session_state["records"].values()           # the history keeps a digest of each file
    assert list(record.request.files) == ["vadd_helpers.py"]
    assert record.request.files["vadd_helpers.py"].startswith("sha256:")
    assert record.request.source == sent.source


def test_request_key_hashes_every_file_and_field():
    a = CompileRequest(source="s", files={"a.py": "1", "b.py": "2"})
    assert request_key(a, "3.5") == request_key(CompileRequest(source="s", files={"b.py": "2", "a.py": "1"}), "3.5")
    others = [CompileRequest(source="s", files={"a.py": "1", "b.py": "3"}),
              CompileRequest(source="s", files={"a.py": "1"}),
              CompileRequest(source="s", files={"a.py": "1b.py2"}),
              CompileRequest(source="s", files={"a.py": "1", "b.py": "2"}, num_warps=4),
              CompileRequest(source="t", files={"a.py": "1", "b.py": "2"})]
    keys = {request_key(r, "3.5") for r in others} | {request_key(a, "3.6"), request_key(a, "3.5")}
    assert len(keys) == len(others) + 2

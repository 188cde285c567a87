"""The workspace (safe file store), the compile history store, and both through the app:
edits and history survive an app restart; the library is never written."""
import os

import pytest
from streamlit.testing.v1 import AppTest

from conftest import ROOT
from editor_helpers import editor
from inspectors.store.history import HistoryStore, new_record
from inspectors.base.result import CompileRequest, CompileResult
from inspectors.store.workspace import MAX_STEM, Workspace, WorkspaceError, safe_name

APP = str(ROOT / "app" / "main.py")


# ---------------------------------------------------------------------------- names

@pytest.mark.parametrize("raw", [
    "../x", "../../etc/passwd", "/etc/passwd", "a/b", "a\\b", "..", ".", ".hidden", ".py", "",
    "   ", "x\x00y", "tab\there", "CON", "con.py", "nul", "Lpt1", "COM3",
    "a" * (MAX_STEM + 1), "!!!", "🚀", "....",
])
def test_hostile_names_are_refused(raw):
    with pytest.raises(WorkspaceError):
        safe_name(raw)


@pytest.mark.parametrize("raw,safe", [
    ("my kernel", "my_kernel.py"),
    ("my kernel.py", "my_kernel.py"),
    ("vector_add", "vector_add.py"),
    ("añadir", "a_adir.py"),
    ('k:*?"<>|', "k.py"),
    ("rocket 🚀 kernel", "rocket_kernel.py"),
    ("-rf", "rf.py"),
    ("v1.2-final", "v1_2-final.py"),
    ("a" * MAX_STEM, "a" * MAX_STEM + ".py"),
    ("ＦＵＬＬ", "FULL.py"),                  # NFKC: full-width letters
    ("__init__", "init.py"),                 # never a package's __init__
    ("__main__.py", "main.py"),
])
def test_odd_names_are_made_safe(raw, safe):
    assert safe_name(raw) == safe


# ---------------------------------------------------------------------------- the store

@pytest.fixture
def ws(tmp_path):
    return Workspace(tmp_path / "ws")


def test_create_save_read_list(ws):
    name = ws.create("vector_add", "a = 1\n")
    assert name == "vector_add.py" and ws.read(name) == "a = 1\n"
    assert ws.create("vector_add", "b") == "vector_add-2.py"
    ws.save(name, "a = 2\n")
    assert ws.read(name) == "a = 2\n"
    assert ws.names() == ("vector_add-2.py", "vector_add.py")
    assert not list(ws.root.glob(".tmp-*"))        # atomic writes leave nothing behind


def test_paths_never_leave_the_folder(ws, tmp_path):
    (tmp_path / "outside.py").write_text("secret")
    ws.create("k", "x")
    for bad in ("../outside.py", "k", "K.PY/..", "k.py\x00"):
        with pytest.raises(WorkspaceError):
            ws.read(bad)
        with pytest.raises(WorkspaceError):
            ws.save(bad, "overwrite")
    os.symlink(tmp_path / "outside.py", ws.root / "link.py")
    with pytest.raises(WorkspaceError):
        ws.read("link.py")
    with pytest.raises(WorkspaceError):
        ws.save("link.py", "overwrite")
    (ws.root / ".hidden.py").write_text("x")
    (ws.root / "sub.py").mkdir()
    (ws.root / "bad name.py").write_text("x")       # put there by hand: not a name we make
    assert ws.names() == ("k.py",)
    assert (tmp_path / "outside.py").read_text() == "secret"


def test_rename_duplicate_refuse_overwrite(ws):
    a = ws.create("a", "A")
    b = ws.create("b", "B")
    with pytest.raises(WorkspaceError):
        ws.rename(a, "b")                          # would overwrite b.py
    with pytest.raises(WorkspaceError):
        ws.rename(a, "../escape")
    assert ws.rename(a, "my add") == "my_add.py" and ws.read("my_add.py") == "A"
    assert not ws.exists(a) and ws.read(b) == "B"
    assert ws.duplicate("my_add.py") == "my_add-copy.py"
    assert ws.duplicate("my_add.py") == "my_add-copy-2.py"
    assert ws.read("my_add-copy-2.py") == "A"


def test_delete_and_undo(ws):
    name = ws.create("k", "text")
    token = ws.delete(name)
    assert not ws.exists(name) and ws.names() == ()
    assert ws.restore(token) == name and ws.read(name) == "text"
    token = ws.delete(name)
    ws.create("k", "another")                      # the name was taken meanwhile
    assert ws.restore(token) == "k-2.py" and ws.read("k-2.py") == "text"
    for bad in ("", "../../x", "20250101-120000-0001-../x.py"):
        with pytest.raises(WorkspaceError):
            ws.restore(bad)


def test_large_files_refused(ws):
    with pytest.raises(WorkspaceError):
        ws.save("big.py", "x" * 1_000_001)


# ---------------------------------------------------------------------------- history store

def test_history_store_round_trip_and_prune(tmp_path):
    store = HistoryStore(tmp_path / ".history", keep=3)
    request = CompileRequest(source="src", filename="k.py", target="cuda:80", num_warps=8, constexprs={"B": 64})
    result = CompileResult(triton_version="3.9.0")
    ids = []
    for i in range(5):
        rec = new_record("k.py", request, result, {"registers": i}, when=1_700_000_000 + i)
        store.add(rec)
        ids.append(rec.info.id)
    infos = store.list()
    assert [i.id for i in infos] == ids[-3:]
    assert infos[-1].options == "num_warps=8, B=64" and infos[-1].figures == {"registers": 4}
    back = store.load(ids[-1])
    assert back.request == request and back.result.triton_version == "3.9.0"
    assert store.load(ids[0]) is None                      # pruned
    assert store.load("../../etc/passwd") is None
    (tmp_path / ".history" / "20990101-000000-000000.meta.json").write_text("{half")
    assert len(store.list()) == 3                          # a broken record is skipped


def test_history_is_bounded_in_bytes_per_workspace(tmp_path):
    """Issue 56's history flood: four ~90 MB answers put 286 MB into one student's .history (40
    records kept, no byte limit). Now the oldest go past max_bytes; the newest always stays."""
    import os
    store = HistoryStore(tmp_path / ".history", keep=40, max_bytes=1 << 20)
    request = CompileRequest(source="src", filename="k.py")
    ids = []
    for i in range(6):                 # each ~450 KB gzipped (random hex halves at most)
        result = CompileResult(triton_version="3.9.0", output=os.urandom(400_000).hex())
        rec = new_record("k.py", request, result, {}, when=1_700_000_000 + i)
        store.add(rec)
        ids.append(rec.info.id)
    kept = [i.id for i in store.list()]
    on_disk = sum(p.stat().st_size for p in (tmp_path / ".history").iterdir())
    assert kept == ids[-2:] and on_disk <= 1 << 20, (kept, on_disk)
    assert store.load(ids[-1]).result.output == result.output
    big = CompileResult(output=os.urandom(1 << 20).hex())            # alone over the bound: kept, alone
    rec = new_record("k.py", request, big, {}, when=1_700_000_100)
    store.add(rec)
    assert [i.id for i in store.list()] == [rec.info.id]


def test_a_record_takes_the_result_caches_gzipped_bytes_as_they_are(tmp_path):
    """The result cache's file is the record's result (three gzip members read back as one)."""
    from inspectors.store.results import ResultCache
    cache = ResultCache(tmp_path / "results")
    request = CompileRequest(source="src", filename="k.py", target="cuda:90")
    result = CompileResult(triton_version="3.9.0", output="printed\n")
    cache.put("k1", result.to_json())
    data = cache.gzipped("k1")
    assert data == (tmp_path / "results" / "k1.json.gz").read_bytes()
    assert ResultCache(tmp_path / "results").gzipped("k1") == data          # another process: from the file
    assert cache.gzipped("missing") is None
    store = HistoryStore(tmp_path / ".history")
    rec = new_record("k.py", request, result, {})
    store.add(rec, data)
    back = store.load(rec.info.id)
    assert back.request == request and back.result == result


# ---------------------------------------------------------------------------- through the app

@pytest.fixture
def workspace_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("TLENS_WORKSPACE_DIR", str(tmp_path / "ws"))
    return tmp_path / "ws"


def _app() -> AppTest:
    app = AppTest.from_file(APP, default_timeout=240)
    app.run()
    assert not app.exception, app.exception
    return app


@pytest.mark.workers
def test_edits_and_history_survive_an_app_restart(workspace_dir):
    library = (ROOT / "kernels" / "vector_add.py").read_bytes()
    app = _app()
    app.selectbox(key="picker").set_value("vector_add").run()
    original = editor(app).value
    small = original.replace("BLOCK_SIZE: int = 1024", "BLOCK_SIZE: int = 128")
    assert small != original
    editor(app).input(small).run()
    assert (workspace_dir / "vector_add.py").read_text() == small      # saved as a copy, on edit
    app.button(key="compile").click().run()
    assert not app.exception and not app.error
    editor(app).input(original + "\n# back to 1024\n").run()
    app.button(key="compile").click().run()
    assert (workspace_dir / "vector_add.py").read_text() == original + "\n# back to 1024\n"
    assert (ROOT / "kernels" / "vector_add.py").read_bytes() == library   # the library is never written
    assert len(list((workspace_dir / ".history").glob("*.meta.json"))) == 2

    # a restart: a new session, nothing in memory, the same folder
    again = _app()
    assert "📄 vector_add.py" in again.selectbox(key="picker").options
    again.selectbox(key="picker").set_value("ws:vector_add.py").run()
    assert editor(again).value == original + "\n# back to 1024\n"
    again.switch_page("views/diff.py").run()
    assert not again.exception, again.exception
    assert len(again.selectbox(key="cmp-a").options) == 2
    assert again.subheader[0].value.startswith("loads v1 → v4")


@pytest.mark.workers
def test_compare_with_previous_button(workspace_dir):
    app = _app()
    app.selectbox(key="picker").set_value("vector_add").run()
    original = editor(app).value
    editor(app).input(original.replace("BLOCK_SIZE: int = 1024", "BLOCK_SIZE: int = 128")).run()
    app.button(key="compile").click().run()
    assert app.button(key="compare-previous").disabled
    editor(app).input(original).run()
    app.button(key="compile").click().run()
    app.button(key="compare-previous").click().run()
    assert not app.exception, app.exception
    assert app.subheader[0].value.startswith("loads v1 → v4")
    html = "\n".join(el.proto.body for el in app.get("html"))
    assert 'class="tlens-diff" data-stage="ptx"' in html and "d-change" in html


def test_workspace_actions_in_the_app(workspace_dir):
    app = _app()
    app.selectbox(key="picker").set_value("my_kernel").run()
    assert app.selectbox(key="picker").value == "ws:my_kernel.py"
    assert (workspace_dir / "my_kernel.py").is_file()
    assert not app.get("text_input") or all(t.key != "ws-name-my_kernel.py" for t in app.text_input)
    app.session_state["ws-box"] = True           # the Workspace box opened: its body is drawn only then
    app.run()
    app.text_input(key="ws-name-my_kernel.py").input("../evil").run()
    app.button(key="ws-rename").click().run()
    assert app.error and "not a plain file name" in app.error[0].value
    assert sorted(p.name for p in workspace_dir.glob("*.py")) == ["my_kernel.py"]
    app.text_input(key="ws-name-my_kernel.py").input("my add").run()
    app.button(key="ws-rename").click().run()
    assert app.selectbox(key="picker").value == "ws:my_add.py"
    app.button(key="ws-duplicate").click().run()
    assert app.selectbox(key="picker").value == "ws:my_add-copy.py"
    app.button(key="ws-delete").click().run()
    assert not (workspace_dir / "my_add-copy.py").exists()
    assert app.selectbox(key="picker").value == "vector_add"
    app.button(key="ws-undo").click().run()
    assert app.selectbox(key="picker").value == "ws:my_add-copy.py"
    assert (workspace_dir / "my_add-copy.py").is_file()
    assert sorted(p.name for p in workspace_dir.glob("*.py")) == ["my_add-copy.py", "my_add.py"]


# -- one workspace per student (a server for a class) -------------------------------------------

def test_user_folders_are_distinct_and_inside_users(tmp_path):
    from inspectors.store.workspace import user_folder
    names = ["alice", "Alice", "ann.lee", "ann-lee", "../bob", "/etc/passwd", "..", "日本", "a" * 500]
    folders = [user_folder(tmp_path, n) for n in names]
    assert len(set(folders)) == len(names)                       # no two users share a folder
    for f in folders:
        assert f.parent == tmp_path / "users" and "/" not in f.name and not f.name.startswith(".")
    assert user_folder(tmp_path, "alice") == user_folder(tmp_path, "alice")   # stable


def test_one_students_workspace_never_lists_or_opens_anothers(tmp_path):
    from inspectors.store.workspace import Workspace, user_folder
    alice, bob = Workspace(user_folder(tmp_path, "alice")), Workspace(user_folder(tmp_path, "bob"))
    alice.create("mine", "x = 1\n")
    assert [e.name for e in alice.list()] == ["mine.py"] and list(bob.list()) == []
    assert not bob.exists("mine.py")
    for name in ("../alice-2bd806c97f0e/mine.py", "../../users/alice/mine", "/etc/passwd"):
        with pytest.raises(WorkspaceError):
            bob.read(name)

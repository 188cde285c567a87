"""The rooms: the folder of a module tells its layer, and imports only go downward.

Reads every module's imports with `ast` (function-level ones too), so a lazy import cannot
hide an upward edge. The layer order is the one `inspectors/__init__.py` documents.
"""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

from conftest import ROOT

# Lowest first: a module may import its own layer and the ones before it.
LAYERS = ("base", "read", "explain", "store", "compile", "bench", "session")
TOP = {"inspectors.__main__", "inspectors.cli", "inspectors.commands", "app", "kernels", "tests", "benchmarks"}
# Triton's internals: only the shim may import these (public triton, triton.language and
# triton.testing are fine anywhere below the server).
TRITON_INTERNALS = ("triton._C", "triton.compiler", "triton.runtime", "triton.backends")
SHIM = "inspectors.compile.triton_shim"      # and triton_shim_layouts beside it
# the command line, on top of the layers: `python -m inspectors` and `tlens`, and their commands
CLI = ("inspectors.__main__", "inspectors.cli", "inspectors.commands", "inspectors.commands.compile",
       "inspectors.commands.diff", "inspectors.commands.profile")


def _modules(folder: str) -> list[Path]:
    return sorted(p for p in (ROOT / folder).rglob("*.py") if "fixtures" not in p.parts)


def _name(path: Path) -> str:
    rel = path.relative_to(ROOT).with_suffix("")
    parts = rel.parts[:-1] if rel.name == "__init__" else rel.parts
    return ".".join(parts)


def _imports(path: Path) -> list[tuple[int, str]]:
    """(line, module) for every import in the file, at any depth; relative ones resolved."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    package = _name(path) if path.name == "__init__.py" else _name(path).rpartition(".")[0]
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                anchor = anchor[: len(anchor) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            # `from inspectors.read import memops` imports inspectors.read.memops
            out += [(node.lineno, f"{base}.{a.name}") for a in node.names]
            out.append((node.lineno, base))
    return out


def _layer(module: str) -> int | None:
    parts = module.split(".")
    if parts[0] != "inspectors" or len(parts) < 2 or parts[1] not in LAYERS:
        return None
    return LAYERS.index(parts[1])


def test_every_inspectors_module_lives_in_a_layer():
    loose = [_name(p) for p in _modules("inspectors")
             if _name(p) not in ("inspectors", *CLI) and _layer(_name(p)) is None]
    assert not loose, f"modules outside the layer folders: {loose}"


def test_imports_only_go_downward():
    upward = []
    for path in _modules("inspectors"):
        me = _name(path)
        mine = _layer(me)
        if mine is None:            # the package docstring and the CLI (top)
            continue
        for line, target in _imports(path):
            theirs = _layer(target)
            if target in CLI or (theirs is not None and theirs > mine):
                upward.append(f"{path.relative_to(ROOT)}:{line} imports {target}")
    assert not upward, "upward imports:\n" + "\n".join(upward)


def test_inspectors_never_import_the_ui():
    bad = [f"{p.relative_to(ROOT)}:{line} imports {t}" for p in _modules("inspectors")
           for line, t in _imports(p) if t.split(".")[0] in ("streamlit", "app")]
    assert not bad, "\n".join(bad)


@pytest.mark.parametrize("folder", ["inspectors", "app", "kernels", "benchmarks"])
def test_triton_internals_only_in_the_shim(folder):
    bad = [f"{p.relative_to(ROOT)}:{line} imports {t}" for p in _modules(folder) if not _name(p).startswith(SHIM)
           for line, t in _imports(p) if t.startswith(TRITON_INTERNALS)]
    assert not bad, "Triton internals outside inspectors/compile/triton_shim.py:\n" + "\n".join(bad)


def test_the_checker_sees_an_upward_import(tmp_path):
    """The rule above is not vacuous: a read/ module importing explain/ is caught."""
    bad = ROOT / "inspectors" / "read" / "_layering_probe.py"
    bad.write_text("def f():\n    from inspectors.explain import insight\n    from ..compile import engine\n")
    try:
        with pytest.raises(AssertionError, match="_layering_probe.py:2 imports inspectors.explain.insight"):
            test_imports_only_go_downward()
        with pytest.raises(AssertionError, match="_layering_probe.py:3 imports inspectors.compile.engine"):
            test_imports_only_go_downward()
    finally:
        bad.unlink()


# ---- app/: the same rule for the UI's rooms (app/__init__.py documents them) --------------------
# Lowest first: a module may import its own room and the ones before it; main.py is on top.
APP_ROOMS = ("render", "components", "backend", "state", "widgets", "lessons", "views")
APP_TOP = ("app", "app.main")


def _room(module: str) -> int | None:
    parts = module.split(".")
    if parts[0] != "app" or len(parts) < 2 or parts[1] not in APP_ROOMS:
        return None
    return APP_ROOMS.index(parts[1])


def _app_modules() -> list[Path]:
    return [p for p in _modules("app") if "frontend" not in p.parts]


def test_every_app_module_lives_in_a_room():
    loose = [_name(p) for p in _app_modules() if _name(p) not in APP_TOP and _room(_name(p)) is None]
    assert not loose, f"modules of app/ outside its rooms: {loose}"


def test_every_app_room_says_what_it_holds_and_may_import():
    for room in APP_ROOMS:
        doc = ast.get_docstring(ast.parse((ROOT / "app" / room / "__init__.py").read_text(encoding="utf-8")))
        assert doc and "May import" in doc, f"app/{room}/__init__.py: no docstring naming what it may import"


def test_app_imports_only_go_downward():
    upward = []
    for path in _app_modules():
        me = _name(path)
        mine = _room(me)
        if mine is None:            # app/__init__.py and main.py: the top
            continue
        for line, target in _imports(path):
            theirs = _room(target)
            if target in APP_TOP[1:] or (theirs is not None and theirs > mine):
                upward.append(f"{path.relative_to(ROOT)}:{line} imports {target}")
    assert not upward, "upward imports in app/:\n" + "\n".join(upward)


def test_render_room_is_pure():
    """app/render/ makes HTML and data: it never imports streamlit (nor a room that does)."""
    bad = [f"{p.relative_to(ROOT)}:{line} imports {t}" for p in _modules("app/render")
           for line, t in _imports(p) if t.split(".")[0] == "streamlit"]
    assert not bad, "\n".join(bad)


def test_no_module_over_450_lines():
    """The house's bar, in every room: app/, inspectors/ and deploy/."""
    long = {str(p.relative_to(ROOT)): n for p in _app_modules() + _modules("inspectors") + _modules("deploy")
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > 450}
    assert not long, f"split these: {long}"


def _session_keys(path: Path) -> list[tuple[int, str]]:
    """(line, key) of every literal session key: st.session_state[...] / .get / .pop / .setdefault
    and widgets' key=...; an f-string gives its literal start (a prefix)."""
    def literal(node) -> str | None:
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return node.value
        if isinstance(node, ast.JoinedStr) and node.values and isinstance(node.values[0], ast.Constant):
            return node.values[0].value + "{"
        return None

    def is_state(node) -> bool:
        return (isinstance(node, ast.Attribute) and node.attr == "session_state") or \
            (isinstance(node, ast.Name) and node.id in ("ss", "session_state"))

    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        key = None
        if isinstance(node, ast.Subscript) and is_state(node.value):
            key = literal(node.slice)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and is_state(node.func.value) \
                and node.func.attr in ("get", "pop", "setdefault") and node.args:
            key = literal(node.args[0])
        elif isinstance(node, ast.Call):
            key = next((literal(k.value) for k in node.keywords if k.arg == "key"), None)
        if key is not None:
            out.append((node.lineno, key))
    return out


def test_every_session_key_is_named_in_state_keys():
    """One place names the session's keys (app/state/keys.py); a page may still spell one out,
    but a key that is nowhere in keys.py is a new name to add there first."""
    from app.state import keys
    fixed, prefixes = keys.named()
    unnamed = [f"{p.relative_to(ROOT)}:{line} {key!r}" for p in _app_modules() for line, key in _session_keys(p)
               if not (key in fixed or (key.endswith("{") and key[:-1].startswith(prefixes))
                       or key.startswith(prefixes) and key.endswith("{"))]
    assert not unnamed, "session keys not named in app/state/keys.py:\n" + "\n".join(unnamed)


def test_the_checker_sees_an_upward_import_in_app():
    """The app rules are not vacuous: render/ importing streamlit or state/, state/ importing a page."""
    probe = ROOT / "app" / "render" / "_layering_probe.py"
    probe.write_text("import streamlit\n\ndef f():\n    from app.state import keys\n    from ..views import x\n")
    try:
        with pytest.raises(AssertionError, match="_layering_probe.py:4 imports app.state.keys"):
            test_app_imports_only_go_downward()
        with pytest.raises(AssertionError, match="_layering_probe.py:5 imports app.views.x"):
            test_app_imports_only_go_downward()
        with pytest.raises(AssertionError, match="_layering_probe.py:1 imports streamlit"):
            test_render_room_is_pure()
    finally:
        probe.unlink()
    loose = ROOT / "app" / "_loose_probe.py"
    loose.write_text("X = 1\n")
    try:
        with pytest.raises(AssertionError, match="app._loose_probe"):
            test_every_app_module_lives_in_a_room()
    finally:
        loose.unlink()


# ---- one door: the UI and the CLI reach the engine and what it made only through session/ -------
# (the pure layers base/, read/ and explain/ stay free to use: they compute, they start nothing)
BELOW_THE_DOOR = ("inspectors.compile", "inspectors.bench", "inspectors.store")


def _through_the_door(paths) -> list[str]:
    return [f"{p.relative_to(ROOT)}:{line} imports {t}" for p in paths for line, t in _imports(p)
            if t.startswith(BELOW_THE_DOOR)]


def _door_callers() -> list[Path]:
    cli = [p for p in _modules("inspectors") if _name(p) in CLI or _name(p).startswith("inspectors.commands.")]
    return _app_modules() + cli


def test_the_ui_and_the_cli_reach_the_engine_only_through_the_session():
    bad = _through_the_door(_door_callers())
    assert not bad, "imports below the session layer (use inspectors.session):\n" + "\n".join(bad)


@pytest.mark.parametrize("where", ["app/views", "app/lessons", "app/widgets", "app/state", "inspectors/commands"])
def test_the_door_checker_sees_a_page_importing_the_engine(where):
    """Not vacuous: a page (lesson, widget, state module, CLI command) importing compile/, bench/
    or store/ directly is caught, at module level or inside a function."""
    probe = ROOT / where / "_door_probe.py"
    probe.write_text("from inspectors.compile import engine\n\ndef f():\n    from inspectors.store import cache\n"
                     "    import inspectors.bench.worker\n")
    try:
        assert probe in _door_callers()
        found = _through_the_door([probe])
        assert [f.split(" imports ")[0].rsplit(":", 1)[1] for f in found] == ["1", "1", "4", "4", "5"], found
    finally:
        probe.unlink()

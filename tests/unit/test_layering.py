"""The rooms: the folder of a module tells its layer, and imports only go downward.

Reads every module's imports with `ast` (function-level ones too), so a lazy import cannot
hide an upward edge. The layer order is the one `inspectors/__init__.py` documents.
"""
from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from conftest import ROOT

# Lowest first: a module may import its own layer and the ones before it.
LAYERS = ("base", "process", "read", "explain", "store", "target", "compile", "bench", "session")
# target/ (the GPU the user compiles for) and process/ (starting and confining processes) speak
# the vocabulary and nothing else
ONLY_BASE = ("process", "target")
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


def _imports(path: Path, name: str | None = None) -> list[tuple[int, str]]:
    """(line, module) for every import in the file, at any depth; relative ones resolved. `name`:
    the module's dotted name where the file lies elsewhere (a probe in tmp_path)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    name = name or _name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
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


def _shown(path: Path) -> str:
    return str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else path.name


def _upward(modules) -> list[str]:
    """`modules`: (path, dotted name) pairs; each import that goes up a layer, or from target/
    anywhere but base/."""
    upward = []
    for path, me in modules:
        mine = _layer(me)
        if mine is None:            # the package docstring and the CLI (top)
            continue
        for line, target in _imports(path, me):
            theirs = _layer(target)
            only_base = LAYERS[mine] in ONLY_BASE and theirs is not None and LAYERS[theirs] not in ("base", LAYERS[mine])
            if target in CLI or (theirs is not None and theirs > mine) or only_base:
                upward.append(f"{_shown(path)}:{line} imports {target}")
    return upward


def _inspectors() -> list[tuple[Path, str]]:
    return [(p, _name(p)) for p in _modules("inspectors")]


def test_imports_only_go_downward():
    upward = _upward(_inspectors())
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
    """The rule above is not vacuous: a read/ module importing explain/ or compile/ is caught, and
    a target/ module importing anything but base/ (read/, store/: below it, still refused)."""
    probe = tmp_path / "_layering_probe.py"
    probe.write_text("def f():\n    from inspectors.explain import insight\n    from ..compile import engine\n")
    found = _upward([(probe, "inspectors.read._layering_probe")])
    assert found == ["_layering_probe.py:2 imports inspectors.explain.insight",
                     "_layering_probe.py:2 imports inspectors.explain",
                     "_layering_probe.py:3 imports inspectors.compile.engine",
                     "_layering_probe.py:3 imports inspectors.compile"], found
    probe.write_text("from inspectors.base import targets\nfrom inspectors.read import sass\n"
                     "from . import gpus\n\ndef f():\n    from inspectors.store import cache\n")
    found = _upward([(probe, "inspectors.target._layering_probe")])
    assert [f.split(" imports ")[0] for f in found] == ["_layering_probe.py:2"] * 2 + ["_layering_probe.py:6"] * 2, found


def test_the_target_layer_is_in_the_order_the_docs_give():
    """inspectors/__init__.py lists the layers in LAYERS' order; target/ sits between store/ and
    compile/, and every layer folder exists."""
    doc = ast.get_docstring(ast.parse((ROOT / "inspectors" / "__init__.py").read_text(encoding="utf-8")))
    listed = re.findall(r"^    (\w+)/ ", doc, re.M)
    assert tuple(listed) == LAYERS, listed
    assert LAYERS.index("store") < LAYERS.index("target") < LAYERS.index("compile")
    assert all((ROOT / "inspectors" / layer / "__init__.py").exists() for layer in LAYERS)


def _undocumented(folder: Path) -> list[str]:
    """Modules of `folder` its `__init__` docstring does not name (as a word)."""
    init = folder / "__init__.py"
    doc = ast.get_docstring(ast.parse(init.read_text(encoding="utf-8"))) or ""
    words = set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", doc))
    return [p.stem for p in sorted(folder.glob("*.py")) if p.name != "__init__.py" and p.stem not in words]


@pytest.mark.parametrize("layer", LAYERS)
def test_every_layer_lists_its_modules(layer):
    """Each layer's `__init__` is its map: it names every module the folder holds."""
    missing = _undocumented(ROOT / "inspectors" / layer)
    assert not missing, f"inspectors/{layer}/__init__.py does not name: {missing}"


def test_the_map_checker_sees_a_module_it_does_not_name(tmp_path):
    (tmp_path / "__init__.py").write_text('"""A layer.\n\n    gpus   the figures.\n"""\n')
    (tmp_path / "gpus.py").write_text("")
    (tmp_path / "probes.py").write_text("")
    assert _undocumented(tmp_path) == ["probes"]


def _one_letter_apart(a: str, b: str) -> bool:
    """Whether `b` is `a` with one letter added, removed or changed."""
    if abs(len(a) - len(b)) > 1 or a == b:
        return False
    if len(a) == len(b):
        return sum(x != y for x, y in zip(a, b)) == 1
    short, long_ = sorted((a, b), key=len)
    return any(long_[:i] + long_[i + 1:] == short for i in range(len(long_)))


def _near_names(folders) -> list[str]:
    out = []
    for folder in folders:
        stems = sorted(p.stem for p in folder.glob("*.py") if p.name != "__init__.py")
        out += [f"{folder.name}/{a}.py ~ {b}.py" for i, a in enumerate(stems) for b in stems[i + 1:]
                if _one_letter_apart(a, b)]
    return out


def test_no_two_modules_in_a_folder_differ_by_one_letter():
    """worker.py beside workers.py says nothing of which is which: a name says its concept."""
    folders = {p.parent for p in _modules("inspectors") + _app_modules() + _modules("deploy")}
    near = _near_names(sorted(folders))
    assert not near, "names one letter apart:\n" + "\n".join(near)


def test_the_name_checker_sees_names_one_letter_apart(tmp_path):
    for stem in ("worker", "workers", "engine", "lines_llir", "lines_mlir", "warm_worker"):
        (tmp_path / f"{stem}.py").write_text("")
    assert _near_names([tmp_path]) == [f"{tmp_path.name}/lines_llir.py ~ lines_mlir.py",
                                       f"{tmp_path.name}/worker.py ~ workers.py"]


# What starts a process: the layers that say they start nothing start nothing, and the two that
# start one thing start only it (read/: NVIDIA's tools; target/: the C++ compiler of the guard).
STARTS = ("subprocess", "multiprocessing", "os.fork", "os.system", "os.popen", "os.exec", "os.spawn",
          "os.posix_spawn", "pty.spawn")
MAY_START = {"inspectors.read.sass", "inspectors.read.resources", "inspectors.target.cuda_guard"}


def _starts(modules) -> list[str]:
    out = []
    for path, name in modules:
        layer = _layer(name)
        if layer is None or LAYERS[layer] not in ("base", "read", "explain", "store", "target") or name in MAY_START:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            dotted = None
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
                dotted = f"{node.value.id}.{node.attr}"
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                dotted = getattr(node, "module", None) or node.names[0].name
            if dotted and dotted.startswith(STARTS):
                out.append(f"{_shown(path)}:{node.lineno} {dotted}")
    return out


def test_layers_that_start_nothing_start_nothing():
    bad = _starts(_inspectors())
    assert not bad, "a process started where the layer's docstring says none is:\n" + "\n".join(bad)


def test_the_start_checker_sees_a_process(tmp_path):
    probe = tmp_path / "_start_probe.py"
    probe.write_text("import os\n\ndef f():\n    import subprocess\n    return os.fork()\n")
    assert _starts([(probe, "inspectors.explain._start_probe")]) == [
        "_start_probe.py:4 subprocess", "_start_probe.py:5 os.fork"]
    assert _starts([(probe, "inspectors.compile._start_probe")]) == []


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


def _app_upward(modules) -> list[str]:
    upward = []
    for path, me in modules:
        mine = _room(me)
        if mine is None:            # app/__init__.py and main.py: the top
            continue
        for line, target in _imports(path, me):
            theirs = _room(target)
            if target in APP_TOP[1:] or (theirs is not None and theirs > mine):
                upward.append(f"{_shown(path)}:{line} imports {target}")
    return upward


def test_app_imports_only_go_downward():
    upward = _app_upward([(p, _name(p)) for p in _app_modules()])
    assert not upward, "upward imports in app/:\n" + "\n".join(upward)


def _impure(paths) -> list[str]:
    return [f"{_shown(p)}:{line} imports {t}" for p in paths for line, t in _imports(p, "app.render.x")
            if t.split(".")[0] == "streamlit"]


def test_render_room_is_pure():
    """app/render/ makes HTML and data: it never imports streamlit (nor a room that does)."""
    bad = _impure(_modules("app/render"))
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


def test_the_checker_sees_an_upward_import_in_app(tmp_path):
    """The app rules are not vacuous: render/ importing streamlit or state/, state/ importing a page,
    and a module outside the rooms."""
    probe = tmp_path / "_layering_probe.py"
    probe.write_text("import streamlit\n\ndef f():\n    from app.state import keys\n    from ..views import x\n")
    found = _app_upward([(probe, "app.render._layering_probe")])
    assert "_layering_probe.py:4 imports app.state.keys" in found and "_layering_probe.py:5 imports app.views.x" in found
    assert _impure([probe]) == ["_layering_probe.py:1 imports streamlit"]
    assert _room("app._loose_probe") is None and _room("app.render._layering_probe") is not None


# ---- one door: the UI and the CLI reach the engine and what it made only through session/ -------
# (the pure layers base/, read/ and explain/ stay free to use: they compute from text)
BELOW_THE_DOOR = ("inspectors.compile", "inspectors.bench", "inspectors.store", "inspectors.target",
                  "inspectors.process")


def _through_the_door(paths) -> list[str]:
    return [f"{_shown(p)}:{line} imports {t}" for p in paths for line, t in _imports(p, "app.views.x")
            if t.startswith(BELOW_THE_DOOR)]


def _door_callers() -> list[Path]:
    cli = [p for p in _modules("inspectors") if _name(p) in CLI or _name(p).startswith("inspectors.commands.")]
    return _app_modules() + cli


def test_the_ui_and_the_cli_reach_the_engine_only_through_the_session():
    bad = _through_the_door(_door_callers())
    assert not bad, "imports below the session layer (use inspectors.session):\n" + "\n".join(bad)


@pytest.mark.parametrize("where", ["app/views", "app/lessons", "app/widgets", "app/state", "inspectors/commands"])
def test_the_door_checker_sees_a_page_importing_the_engine(where, tmp_path):
    """Not vacuous: a page (lesson, widget, state module, CLI command) importing compile/, bench/,
    store/, target/ or process/ directly is caught, at module level or inside a function."""
    assert any(str(p.relative_to(ROOT)).startswith(where) for p in _door_callers())
    probe = tmp_path / "_door_probe.py"
    probe.write_text("from inspectors.compile import engine\n\ndef f():\n    from inspectors.store import cache\n"
                     "    import inspectors.bench.worker\n    from inspectors.target import gpus\n"
                     "    from inspectors.process import sandbox\n")
    found = _through_the_door([probe])
    assert [f.split(" imports ")[0].rsplit(":", 1)[1] for f in found] == ["1", "1", "4", "4", "5", "6", "6", "7", "7"], found

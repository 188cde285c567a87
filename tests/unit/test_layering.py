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
LAYERS = ("base", "read", "explain", "store", "compile", "bench")
TOP = {"inspectors.__main__", "inspectors.cli", "inspectors.commands", "app", "kernels", "tests", "benchmarks"}
# Triton's internals: only the shim may import these (public triton, triton.language and
# triton.testing are fine anywhere below the server).
TRITON_INTERNALS = ("triton._C", "triton.compiler", "triton.runtime", "triton.backends")
SHIM = "inspectors.compile.triton_shim"
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
    bad = [f"{p.relative_to(ROOT)}:{line} imports {t}" for p in _modules(folder) if _name(p) != SHIM
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

"""One home per stage fact: a stage is a row of inspectors/base/stages.py (name, label, order,
lexer, file extension, asm key, backends, family), every reader keys its table by the row's
family, and adding a stage is that row (plus a reader when its family is new). Shown here with
a stage that does not exist, and with Gluon IR, added that way."""
from __future__ import annotations

import ast
import dataclasses

import pytest

from conftest import ROOT, SNIPPETS
from inspectors.base import stages

NAMES = {s.name for s in stages.STAGES}
FAMILIES = {s.family for s in stages.STAGES}
# a compiler stage's name that is no family's (TTIR, TTGIR, Gluon IR): a literal listing it among
# other stage names is a copy of the table (a family-keyed table, or a choice of panels, is not)
STAGE_ONLY = NAMES - FAMILIES - {"source"}


def _copies(path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    out = []
    for n in ast.walk(tree):
        items = n.keys if isinstance(n, ast.Dict) else n.elts if isinstance(n, (ast.Tuple, ast.List, ast.Set)) else []
        named = {i.value for i in items if isinstance(i, ast.Constant) and i.value in NAMES}
        if len(named) >= 3 and named & STAGE_ONLY:
            out.append(f"{path.relative_to(ROOT)}:{n.lineno} {sorted(named)}")
    return out


def test_no_module_keeps_its_own_copy_of_the_stage_list():
    home = ROOT / "inspectors" / "base" / "stages.py"
    found = [c for folder in ("inspectors", "app") for p in sorted((ROOT / folder).rglob("*.py"))
             if p != home for c in _copies(p)]
    assert not found, "stage facts outside the stage table (key them by the row's family):\n" + "\n".join(found)


def test_the_copy_checker_sees_a_copy(tmp_path):
    probe = tmp_path / "probe.py"
    probe.write_text('ORDER = ("source", "ttir", "ttgir", "llir")\nBY = {"ttgir": 1, "ptx": 2, "sass": 3}\n'
                     'FAMILY_KEYED = {"ptx": 1, "sass": 2, "amdgcn": 3}\n')
    probe = probe.rename(ROOT / "tests" / "_stage_probe.py")
    try:
        assert [c.split(" ")[0].rsplit(":", 1)[1] for c in _copies(probe)] == ["1", "2"]
    finally:
        probe.unlink()


# ---- adding a stage: one row ------------------------------------------------------------------

TTXIR = """module {
  tt.func public @add_kernel(%x_ptr: !tt.ptr<f32> loc("x_ptr"(#loc))) attributes {noinline = false} {
    %0 = tt.get_program_id x : i32 loc(#loc2)
    %1 = tt.load %x_ptr : !tt.ptr<f32> loc(#loc3)
    tt.return loc(#loc4)
  } loc(#loc)
} loc(#loc)
#loc = loc("k.py":5:0)
#loc2 = loc("k.py":7:10)
#loc3 = loc("k.py":9:8)
#loc4 = loc("k.py":9:4)
"""


@pytest.fixture
def ttxir(monkeypatch):
    """A stage that does not exist, added as a row: an MLIR stage between TTGIR and LLVM IR."""
    row = stages.Stage("ttxir", "TTXIR", 3.5, "mlir", "ttxir", "ttxir", family="mlir")
    table = tuple(sorted(stages.STAGES + (row,), key=lambda s: s.order))
    monkeypatch.setattr(stages, "STAGES", table)
    monkeypatch.setattr(stages, "BY_NAME", {s.name: s for s in table})
    return row


def test_a_new_row_is_read_mapped_diffed_drawn_and_saved(ttxir):
    from app.components.stage_panel import payload
    from inspectors.explain import diff, insight
    from inspectors.read import lexers, sourcemap

    assert [s.name for s in stages.stages_for("cuda")][3:5] == ["ttgir", "ttxir"]      # in its place
    smap = sourcemap.build({"ttxir": TTXIR, "source": "x"}, "k.py")                  # its lines read
    assert smap.stages["ttxir"].to_python == {2: 5, 3: 7, 4: 9, 5: 9, 6: 5}
    renumbered = TTXIR.replace("%1 = ", "%7 = ").replace("#loc3", "#loc9")
    assert diff.diff_stage("ttxir", TTXIR, renumbered).identical                      # its noise rules
    assert not diff.diff_stage("ttxir", TTXIR, renumbered, False).identical
    assert insight.summarize_stage("ttxir", TTXIR).mix["tt.load"] == 1                # its instructions
    assert payload.opening("ttxir", TTXIR, "add_kernel") == payload.Opening(2, 4)     # where its panel opens
    assert lexers.lexer_for(stages.get("ttxir").lexer) is not None
    assert stages.ordered(["llir", "ttxir", "source"]) == ["source", "ttxir", "llir"]


def test_a_new_row_comes_from_the_compiler_and_the_cache(ttxir, tmp_path):
    """The worker takes every row's `asm_key` from Triton's asm; a cache folder's file of the
    suffix is a stage of the kernel (store.cache, keyed from the table when it is imported)."""
    import importlib
    from inspectors.store import cache
    fresh = importlib.reload(cache)
    try:
        assert fresh.STAGE_FILES["ttxir"] == "ttxir" and "ttxir" in fresh._KERNEL_SUFFIXES
    finally:
        importlib.reload(cache)


# ---- Gluon IR, added the same way -------------------------------------------------------------

def test_gluon_ir_is_shown_for_a_gluon_kernel(engine):
    triton = pytest.importorskip("triton")
    try:
        from triton.experimental import gluon  # noqa: F401
    except ImportError:
        pytest.skip(f"Triton {triton.__version__} has no Gluon")
    from inspectors.base.result import CompileRequest
    from inspectors.read import sourcemap
    src = (SNIPPETS / "modern" / "gluon_softmax.py").read_text()
    result = engine.compile(CompileRequest(source=src, filename="gluon_softmax.py", target="cuda:90"))
    assert result.ok, result.error
    k = result.kernels[0]
    has_glir = tuple(int(x) for x in triton.__version__.split(".")[:2]) >= (3, 9)
    assert ("glir" in k.stages) == has_glir and "ttir" not in k.stages        # a Gluon kernel has no TTIR
    if has_glir:
        lines = sourcemap.build(k.stages, "gluon_softmax.py").stages["glir"].to_python
        src_lines = src.splitlines()
        assert lines and all(1 <= py <= len(src_lines) for py in lines.values())
        load = next(py for py in sorted(set(lines.values())) if "gl.load" in src_lines[py - 1])
        assert load and [s.name for s in stages.stages_for("cuda") if s.name in k.stages][:3] == ["source", "glir", "ttgir"]


def test_a_triton_kernel_has_no_gluon_ir(engine):
    from inspectors.base.result import CompileRequest
    src = (SNIPPETS / "vadd.py").read_text()
    k = engine.compile(CompileRequest(source=src, filename="vadd.py", target="cuda:90")).kernels[0]
    assert "glir" not in k.stages and "ttir" in k.stages
    assert dataclasses.replace(stages.get("glir")).optional

"""One home per stage fact: a stage is a row of inspectors/base/stages.py (name, label, order,
lexer, file extension, asm key, backends, family, optional), every reader keys its table by the
row's family, and adding a stage is that row (plus its family's line reader when the family is
new). Shown here with two stages that do not exist (one of a known family: one row; one of a new
family: one row and one reader), and with Gluon IR, added that way."""
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


def test_a_new_row_comes_from_the_compiler_and_the_cache(ttxir, monkeypatch):
    """The worker takes every row's `asm_key` from Triton's asm; a cache folder's file of the
    suffix is a stage of the kernel (store.cache, keyed from the table when it is imported)."""
    import importlib
    from inspectors.store import cache
    fresh = importlib.reload(cache)
    try:
        assert fresh.STAGE_FILES["ttxir"] == "ttxir" and "ttxir" in fresh._KERNEL_SUFFIXES
        assert "ttxir" in fresh.EXPECTED["cuda"] and "ttxir" in fresh.FIRST_IR
        assert stages.texts_from_asm({"ttxir": TTXIR, "ttir": "t"}, "hip") == {"ttir": "t", "ttxir": TTXIR}
    finally:
        monkeypatch.undo()                  # the table as it was, then the cache keyed from it again
        importlib.reload(cache)


# ---- adding a stage of a new family: one row and one reader ----------------------------------

SPIRV = """; SPIR-V
OpLine %file 5 0
%f = OpFunction %void None %fn
OpLine %file 7 10
%1 = OpLoad %float %x_ptr
%2 = OpFAdd %float %1 %1
OpLine %file 9 4
OpStore %y_ptr %2
OpReturn
"""


def spirv_chains(text: str, filename: str) -> dict[int, tuple]:
    """The one reader: each instruction -> the `OpLine` before it (a chain of one frame)."""
    out, at = {}, None
    for n, line in enumerate(text.splitlines(), 1):
        word = line.split()
        if word[:1] == ["OpLine"]:
            at = (("", int(word[2])),)
        elif word and not line.startswith(";") and at:
            out[n] = at
    return out


@pytest.fixture
def spirv(monkeypatch):
    """A stage of a family nothing knows: its row (after PTX, CUDA only, pygments' plain-text
    lexer) and its family's line reader, nothing else."""
    from inspectors.read import sourcemap
    row = stages.Stage("spirv", "SPIR-V", 5.5, "text", "spvasm", "spirv", ("cuda",), family="spirv")
    table = tuple(sorted(stages.STAGES + (row,), key=lambda s: s.order))
    monkeypatch.setattr(stages, "STAGES", table)
    monkeypatch.setattr(stages, "BY_NAME", {s.name: s for s in table})
    monkeypatch.setitem(sourcemap.READERS, "spirv", spirv_chains)
    return row


def test_a_new_family_needs_one_reader_and_nothing_else(spirv, tmp_path):
    from app.components.stage_panel import payload
    from app.render import stage_html
    from inspectors.base.result import CompileRequest, CompileResult, KernelResult
    from inspectors.commands import compile as compile_cmd
    from inspectors.explain import delta, diff, insight
    from inspectors.read import sourcemap
    from inspectors.store import export
    import io
    import zipfile

    assert [s.name for s in stages.stages_for("cuda")][-2:] == ["spirv", "sass"]
    assert "spirv" not in [s.name for s in stages.stages_for("hip")]
    # the worker takes it from Triton's asm (bytes, the cubin, are no text)
    texts = stages.texts_from_asm({"ttgir": TTXIR, "spirv": SPIRV, "cubin": b"\x7fELF"}, "cuda")
    assert list(texts) == ["ttgir", "spirv"]
    assert stages.texts_from_asm({"spirv": SPIRV}, "hip") == {}
    # its lines read by its reader, for the source map and the panel's click-to-follow
    smap = sourcemap.build({"source": "x", **texts}, "k.py")
    assert smap.stages["spirv"].to_python == {3: 5, 5: 7, 6: 7, 8: 9, 9: 9}
    assert smap.python_to_stage()[7]["spirv"] == (5, 6)
    # the diff has no noise rules for it: every change counts, nothing breaks
    changed = SPIRV.replace("OpFAdd", "OpFMul")
    d = diff.diff_stage("spirv", SPIRV, changed)
    assert not d.identical and diff.diff_stage("spirv", SPIRV, SPIRV).identical
    assert insight.summarize_stage("spirv", SPIRV).lines == len(SPIRV.splitlines())
    # drawn: highlighted by its row's lexer, a panel payload with its label and Python lines
    assert 'data-stage="spirv"' in stage_html.render_stage_html("spirv", SPIRV)
    blob = payload.decode(payload.encode(payload.build("spirv", SPIRV, "k.spvasm", smap.stages["spirv"].to_python,
                                                       kernel_name="k")))
    assert blob["stage"] == "spirv" and blob["label"] == "SPIR-V"
    # the CLI's JSON: its text under its name, and in the source map
    kernel = KernelResult(name="k", target="cuda:90", options={"num_warps": 4}, args=(),
                          stages={"source": "x", **texts})
    result = CompileResult(kernels=(kernel,), triton_version="3.9.0")
    data = compile_cmd._kernel_json(result.kernels[0], "k.py")
    assert data["stages"]["spirv"] == SPIRV and data["source_map"]["7"]["spirv"] == [5, 6]
    # the export: a file named by its row's extension
    found = insight.analyze(kernel, kernel.stages, "k.py")
    zipped = export.bundle(CompileRequest(source="x", filename="k.py", target="cuda:90"), result, "k.py",
                           [kernel.stages], [found])
    assert any(n.endswith("/k.spvasm") for n in zipfile.ZipFile(io.BytesIO(zipped)).namelist())
    # the delta table between a kernel without a stage and one with it: rows in the table's order
    older = dataclasses.replace(kernel, stages={"source": "x", "spirv": SPIRV})
    rows = delta.delta_table(delta.figures(older, insight.analyze(older, older.stages, "k.py")),
                             delta.figures(kernel, found)).rows
    assert [(r.metric, r.a is None) for r in rows if r.group == "lines"] == [
        ("source", False), ("ttgir", True), ("spirv", False)]


def test_a_new_family_without_its_reader_is_shown_unmapped(spirv, monkeypatch):
    """What the reader adds: without it the stage is still listed, drawn and diffed, only not
    mapped to Python lines (the source map leaves it out, its panel has no clicks)."""
    from inspectors.read import sourcemap
    monkeypatch.delitem(sourcemap.READERS, "spirv")
    assert "spirv" not in sourcemap.build({"spirv": SPIRV}, "k.py").stages
    with pytest.raises(KeyError, match="no source map for stage 'spirv'"):
        sourcemap.stage_lines("spirv", SPIRV, "k.py")


def test_every_family_has_its_reader():
    from inspectors.read import sourcemap
    assert FAMILIES - {"python"} <= set(sourcemap.READERS)
    assert set(stages.MACHINE_FAMILIES) <= FAMILIES


# ---- Gluon IR, added the same way -------------------------------------------------------------

def _version(v: str) -> tuple[int, ...]:
    return tuple(int(x) for x in v.split(".")[:2])


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
    has_glir = _version(triton.__version__) >= (3, 9)
    assert ("glir" in k.stages) == has_glir and "ttir" not in k.stages        # a Gluon kernel has no TTIR
    if has_glir:
        lines = sourcemap.build(k.stages, "gluon_softmax.py").stages["glir"].to_python
        src_lines = src.splitlines()
        assert lines and all(1 <= py <= len(src_lines) for py in lines.values())
        load = next(py for py in sorted(set(lines.values())) if "gl.load" in src_lines[py - 1])
        assert load and [s.name for s in stages.stages_for("cuda") if s.name in k.stages][:3] == ["source", "glir", "ttgir"]


def _other_versions() -> list[str]:
    """The configured Triton versions besides the installed one that have Gluon (a folder's)."""
    from pathlib import Path
    from inspectors.base import triton_installs
    try:
        found = triton_installs.configured()
    except triton_installs.VersionError:
        return []
    return [v for v, env in found.items()
            if not env.own and (not env.path or (Path(env.path) / "triton" / "experimental" / "gluon").is_dir())]


@pytest.mark.workers           # the CLI's compile, in a process of its own
@pytest.mark.parametrize("version", _other_versions() or [pytest.param("", marks=pytest.mark.skip(
    reason="no other Triton version set up (make setup-versions)"))])
def test_gluon_ir_by_triton_version_through_the_cli(version):
    """`compile --json --triton V` of a Gluon kernel: Gluon IR in its stages and source map where
    V writes it (3.9 and later), neither where it does not (3.6), and nothing else missing."""
    import json
    import subprocess
    import sys
    out = subprocess.run([sys.executable, "-m", "inspectors", "compile", str(SNIPPETS / "modern" / "gluon_softmax.py"),
                          "--json", "--target", "cuda:90", "--triton", version],
                         capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert out.returncode == 0, out.stderr[-2000:] + out.stdout[-2000:]
    data = json.loads(out.stdout)
    k = data["kernels"][0]
    has_glir = _version(data["triton_version"]) >= (3, 9)
    assert [n for n in k["stages"] if n != "sass"] == ["source"] + (["glir"] if has_glir else []) + ["ttgir", "llir", "ptx"]
    load = next(n for n, line in enumerate((SNIPPETS / "modern" / "gluon_softmax.py").read_text().splitlines(), 1)
                if "gl.load" in line)
    assert ("glir" in k["source_map"][str(load)]) == has_glir and "ttgir" in k["source_map"][str(load)]


def test_a_triton_kernel_has_no_gluon_ir(engine):
    from inspectors.base.result import CompileRequest
    src = (SNIPPETS / "vadd.py").read_text()
    k = engine.compile(CompileRequest(source=src, filename="vadd.py", target="cuda:90")).kernels[0]
    assert "glir" not in k.stages and "ttir" in k.stages
    assert dataclasses.replace(stages.get("glir")).optional


def test_a_gluon_kernel_cache_folder_is_complete_without_ttir(tmp_path):
    """A Gluon kernel's Triton cache folder has Gluon IR (3.9) or nothing (3.6) where a Triton
    kernel's has TTIR: TTIR is `optional`, so the folder is whole; its Python file and arguments
    are read from its first IR (cache.FIRST_IR)."""
    import json
    from inspectors.store import cache
    glir = TTXIR.replace('"k.py"', '"/home/me/k.py"').replace("@add_kernel", "@k")
    for triton, first in (("3.9.0", {"k.glir": glir}), ("3.6.0", {})):
        folder = tmp_path / triton / "KEY"
        folder.mkdir(parents=True)
        files = {**first, "k.ttgir": glir, "k.llir": "define void @k() {\n}\n", "k.ptx": ".entry k(\n)\n"}
        for name, text in files.items():
            (folder / name).write_text(text)
        (folder / "k.cubin").write_bytes(b"\x7fELF")
        (folder / "k.json").write_text(json.dumps({"name": "k", "triton_version": triton, "num_warps": 4,
                                                   "target": {"backend": "cuda", "arch": 90, "warp_size": 32}}))
        entry = cache.read_entry(folder)
        assert (entry.status, entry.missing) == ("ok", ()), entry.problem
        opened = cache.load(folder)
        assert ("glir" in opened.kernel.stages) == bool(first) and "ttir" not in opened.kernel.stages
        assert opened.loc_path == "/home/me/k.py" and [a.name for a in opened.kernel.args] == ["x_ptr"]
    (folder / "k.ptx").unlink()
    assert cache.read_entry(folder).missing == ("k.ptx",)                # a stage Triton always writes

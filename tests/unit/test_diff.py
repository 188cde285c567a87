"""inspectors.explain.diff (noise, alignment, delta table), inspectors.store.export, the diff HTML, and
`python -m inspectors diff`: inline snippets, the golden fixtures renumbered, and real compiles."""
import io
import json
import re
import subprocess
import sys
import zipfile

import pytest

from conftest import FIXTURES, ROOT, SNIPPETS
from inspectors.explain.diff import (delta_table, diff_stage, figures, headline, inline_spans, normalize,
                             normalize_line)
from inspectors.store.export import all_stages, bundle
from inspectors.explain.insight import analyze
from inspectors.base.result import CompileRequest


# ---------------------------------------------------------------------------- noise, one line each

@pytest.mark.parametrize("stage,line,normal", [
    ("ptx", "\t@%p1 ld.global.v4.b32 { %r1, %r2, %r3, %r4 }, [ %rd1 + 0 ];",
     "@%p# ld.global.v4.b32 { %r#, %r#, %r#, %r# }, [ %rd# + 0 ];"),
    ("ptx", "\tmov.u32 \t%r25, %ctaid.x;", "mov.u32 %r#, %ctaid.x;"),
    ("ptx", "\t.reg .b32 \t%r<33>;", ".reg .b32 %r<#>;"),
    ("ptx", "\t@%p1 bra \t$L__BB0_2;", "@%p# bra $L__BB#;"),
    ("sass", "        /*0180*/              @!P0 LDG.E.128 R16, desc[UR4][R2.64] ;",
     "/*#*/ @!P# LDG.E.128 R#, desc[UR#][R#.64] ;"),
    ("sass", "        /*00b0*/                   ISETP.GE.AND P0, PT, R9.reuse, UR4, PT ;",
     "/*#*/ ISETP.GE.AND P#, PT, R#, UR#, PT ;"),
    ("ttgir", "    %x_4 = tt.load %x_3, %mask_2 : tensor<128x!tt.ptr<f32>, #blocked> loc(#loc24)",
     "%x = tt.load %x, %mask : tensor<128x!tt.ptr<f32>, #blocked>"),
    ("ttir", '  tt.func public @k(%x_ptr: !tt.ptr<f32> loc("x_ptr"(#loc)), %n: i32 loc("n"(#loc))) {',
     "tt.func public @k(%x_ptr: !tt.ptr<f32>, %n: i32) {"),
    ("ttgir", "    %c128_i32 = arith.constant 128 : i32 loc(#loc1)", "%c128_i32 = arith.constant 128 : i32"),
    ("ttgir", "    %0 = tt.splat %out_ptr : !tt.ptr<f32> loc(#loc11)", "%# = tt.splat %out_ptr : !tt.ptr<f32>"),
    ("llir", "  %21 = fadd float %16, %19, !dbg !22", "%# = fadd float %#, %#"),
    ("amdgcn", "\tglobal_load_dwordx4 v[2:5], v[0:1], off", "global_load_dwordx4 v[#], v[#], off"),
    ("amdgcn", "\tv_add_f32_e32 v3, v1, v2 ; comment", "v_add_f32_e32 v#, v#, v#"),
])
def test_normalize_line(stage, line, normal):
    assert normalize_line(stage, line) == normal


def test_real_changes_are_not_noise():
    """What the kernel does stays visible: widths, opcodes, immediates, named values."""
    assert normalize_line("ptx", "ld.global.v4.b32 {%r1}") != normalize_line("ptx", "ld.global.b32 {%r1}")
    assert normalize_line("ptx", "shl.b32 %r5, %r4, 7;") != normalize_line("ptx", "shl.b32 %r5, %r4, 10;")
    assert normalize_line("ttgir", "%c128_i32 = arith.constant 128") != normalize_line(
        "ttgir", "%c1024_i32 = arith.constant 1024")
    assert normalize_line("sass", "LDG.E.128 R16, desc[UR4][R2.64] ;") != normalize_line(
        "sass", "LDG.E R16, desc[UR4][R2.64] ;")


def test_noise_lines_are_left_out():
    ptx = "\t.loc\t1 27 9 // k.py:27:9\n$L__tmp3:\n\tret;\n\t.section\t.debug_abbrev\n\t{\n.b8 1\n"
    assert normalize("ptx", ptx) == ((3, "ret;"),)
    ttgir = '#loc23 = loc("x"(#loc7))\n  tt.return loc(#loc)\n'
    assert normalize("ttgir", ttgir) == ((2, "tt.return"),)
    llir = "  ret void, !dbg !24\n!24 = !DILocation(line: 30, column: 1, scope: !4)\n"
    assert normalize("llir", llir) == ((1, "ret void"),)
    sass = '\t//## File "k.py", line 27\n        /*04f0*/                   EXIT ;\n'
    assert normalize("sass", sass) == ((2, "/*#*/ EXIT ;"),)


# ---------------------------------------------------------------------------- renumbered fixtures

def _renumber(text: str, pattern: str, shift: int = 7) -> str:
    """Every number of `pattern`'s first group moved by `shift`: what a compiler does to
    register names when an unrelated line adds or removes a value."""
    return re.sub(pattern, lambda m: m.group(0).replace(m.group(1), str(int(m.group(1)) + shift), 1), text)


RENUMBERINGS = [
    ("ptx", FIXTURES / "vadd_aligned_sm90.ptx", [r"%r(\d+)", r"%rd(\d+)", r"%p(\d+)"]),
    ("ptx", FIXTURES / "resources" / "matmul_sm90.ptx", [r"%r(\d+)", r"%rd(\d+)", r"%f(\d+)", r"\$L__BB0_(\d+)"]),
    ("sass", FIXTURES / "vadd_misaligned_sm80.sass", [r"\bR(\d+)\b", r"\bP(\d)\b"]),
    ("ttgir", FIXTURES / "sourcemap" / "softmax_sm90.ttgir", [r"#loc(\d+)", r"%(\d+)\b", r"%[a-z_]+_(\d+)\b"]),
    ("ttir", FIXTURES / "sourcemap" / "vector_add_sm90.ttir", [r"#loc(\d+)", r"%[a-z]+_(\d+)\b"]),
    ("llir", FIXTURES / "sourcemap" / "softmax_sm90.llir", [r"%(\d+)\b", r"!(\d+)\b"]),
    ("amdgcn", FIXTURES / "sourcemap" / "softmax_gfx942.amdgcn", [r"\bv(\d+)\b", r"\bs(\d+)\b"]),
]


@pytest.mark.parametrize("stage,path,patterns", RENUMBERINGS, ids=lambda x: getattr(x, "name", None))
def test_renumbered_registers_alone_make_no_diff(stage, path, patterns):
    text = path.read_text()
    renumbered = text
    for pattern in patterns:
        renumbered = _renumber(renumbered, pattern)
    assert renumbered != text
    raw = diff_stage(stage, text, renumbered, ignore_noise=False)
    assert not raw.identical                       # the raw texts do differ ...
    d = diff_stage(stage, text, renumbered)
    assert d.identical, [r for r in d.rows if r.kind != "equal"][:3]   # ... by noise alone
    assert any(r.noise_only for r in d.rows)


def test_sass_addresses_shift_with_one_added_instruction():
    text = (FIXTURES / "vadd_aligned_sm90.sass").read_text()
    lines = text.splitlines()
    at = next(i for i, l in enumerate(lines) if "LDG.E.128" in l)
    shifted = [re.sub(r"/\*([0-9a-f]{4})\*/", lambda m: f"/*{int(m.group(1), 16) + 16:04x}*/", l)
               if i >= at else l for i, l in enumerate(lines)]
    shifted.insert(at, "        /*0000*/                   NOP ;")
    d = diff_stage("sass", text, "\n".join(shifted))
    assert (d.added, d.changed, d.removed) == (1, 0, 0)
    assert [r.b_text.strip() for r in d.rows if r.kind == "add"] == ["/*0000*/                   NOP ;"]


def test_one_real_change_among_renumbering_is_one_changed_row():
    text = (FIXTURES / "vadd_aligned_sm90.ptx").read_text()
    edited = _renumber(text, r"%r(\d+)").replace("ld.global.v4.b32", "ld.global.v2.b32", 1)
    d = diff_stage("ptx", text, edited)
    changed = [r for r in d.rows if r.kind != "equal"]
    assert [r.kind for r in changed] == ["change"]
    assert "v4" in changed[0].a_text and "v2" in changed[0].b_text


def test_alignment_pairs_similar_lines_and_adds_the_rest():
    a = "a\nmov.u32 %r1, 0x0;\n@%p1 ld.global.b32 { %r1 }, [ %rd1 + 0 ];\nz\n"
    b = ("a\nmov.u32 %r1, 0x0;\nmov.u32 %r2, 0x0;\nmov.u32 %r3, 0x0;\n"
         "@%p1 ld.global.v4.b32 { %r1, %r2, %r3 }, [ %rd1 + 0 ];\nz\n")
    d = diff_stage("ptx", a, b)
    kinds = [(r.kind, r.a, r.b) for r in d.rows]
    assert kinds == [("equal", 1, 1), ("equal", 2, 2), ("add", None, 3), ("add", None, 4),
                     ("change", 3, 5), ("equal", 4, 6)]
    assert d.summary() == "1 changed, 2 added, 0 removed"


def test_inline_spans_mark_the_changed_words():
    a, b = inline_spans("\tshl.b32 \t%r5, %r4, 7;", "\tshl.b32 \t%r26, %r25, 10;", "ptx")
    assert [t for t, changed in a if changed] == ["7"] and [t for t, changed in b if changed] == ["10"]
    a, b = inline_spans("ld.global.b32 {", "ld.global.v4.b32 {")
    assert [t for t, changed in b if changed] == ["v4."] and not any(c for _, c in a)


def test_real_edit_that_moves_lines_is_noise_in_every_stage(engine):
    """A comment at the top and dead code: every line number and SSA name moves, the
    kernel does not change. With noise ignored, only the Python source differs."""
    src = (SNIPPETS / "vadd.py").read_text()
    edited = "# moves every line down\n\n" + src.replace("    mask = offs < n\n",
                                                        "    mask = offs < n  # in bounds\n    unused = offs * 2\n")
    ka = engine.compile(CompileRequest(source=src, filename="vadd.py", target="cuda:90")).kernels[0]
    kb = engine.compile(CompileRequest(source=edited, filename="vadd.py", target="cuda:90")).kernels[0]
    sa, sb = all_stages(ka), all_stages(kb)
    assert set(sa) == {"source", "ttir", "ttgir", "llir", "ptx", "sass"}
    for stage in sa:
        raw, clean = diff_stage(stage, sa[stage], sb[stage], False), diff_stage(stage, sa[stage], sb[stage])
        assert not raw.identical, stage
        assert clean.identical == (stage != "source"), (stage, clean.summary())


# ---------------------------------------------------------------------------- delta table

@pytest.fixture(scope="module")
def vadd_128_1024(engine):
    src = (ROOT / "kernels" / "vector_add.py").read_text()
    out = []
    for block in (128, 1024):
        result = engine.compile(CompileRequest(source=src, filename="vector_add.py", target="cuda:90",
                                               constexprs={"BLOCK_SIZE": block}))
        assert result.ok, result.error
        k = result.kernels[0]
        out.append((k, analyze(k, all_stages(k), "vector_add.py")))
    return out


def test_delta_table_vector_add_block_128_vs_1024(vadd_128_1024):
    (ka, ia), (kb, ib) = vadd_128_1024
    fa, fb = figures(ka, ia), figures(kb, ib)
    assert dict(fa.loads) == {"v1.b32": 2} and dict(fb.loads) == {"v4.b32": 4}
    assert dict(fa.stores) == {"v1.b32": 1} and dict(fb.stores) == {"v4.b32": 2}
    table = delta_table(fa, fb)
    assert table.headline.startswith("loads v1 → v4, stores v1 → v4, registers ")
    rows = {r.metric: r for r in table.rows}
    assert (rows["global loads v1.b32"].a, rows["global loads v1.b32"].b) == (2, 0)
    assert (rows["global loads v4.b32"].a, rows["global loads v4.b32"].b) == (0, 4)
    assert rows["global loads v4.b32"].change == "+4"
    assert (rows["BLOCK_SIZE"].a, rows["BLOCK_SIZE"].b) == ("128", "1024")
    assert rows["registers / thread"].a == fa.registers > 0 and rows["registers / thread"].b == fb.registers
    assert not rows["num_warps"].changed and not rows["spill bytes"].changed
    assert rows["ptx"].group in ("instructions", "lines")
    assert {r.group for r in table.rows} == {"launch", "memory", "resources", "instructions", "lines"}
    # B against itself: nothing changed
    assert delta_table(fb, fb).changed_rows() == ()
    assert headline(fb, fb).startswith("no change")


def test_figures_round_trip_json(vadd_128_1024):
    from inspectors.explain.diff import Figures
    f = figures(*vadd_128_1024[1])
    assert Figures.from_json(json.loads(json.dumps(f.to_json()))) == f
    assert f.short().startswith("loads v4 · stores v4 · ")


# ---------------------------------------------------------------------------- export

def test_export_zip_has_every_stage_and_a_report(engine):
    src = (SNIPPETS / "vadd.py").read_text()
    request = CompileRequest(source=src, filename="vadd.py", target="cuda:90")
    result = engine.compile(request)
    data = bundle(request, result, "vadd.py")
    z = zipfile.ZipFile(io.BytesIO(data))
    names = set(z.namelist())
    top = "vadd-cuda_90"
    assert {f"{top}/report.md", f"{top}/request.json", f"{top}/vadd.py"} <= names
    for ext in ("ttir", "ttgir", "ll", "ptx", "sass"):
        assert f"{top}/launch-1-add_kernel/add_kernel.{ext}" in names
    assert len([n for n in names if n.endswith(".ptx")]) == len(result.kernels)
    assert all(not n.startswith("/") and ".." not in n for n in names)
    report = z.read(f"{top}/report.md").decode()
    assert "| global loads by width | v4.b32 × 4 |" in report
    assert "registers / thread" in report and "Source map" in report
    assert "x = tl.load(x_ptr + offs, mask=mask)" in report       # the Python line next to its stage lines
    assert "ld.global.v4.b32" in z.read(f"{top}/launch-1-add_kernel/add_kernel.ptx").decode()
    assert bundle(request, result, "vadd.py") == data             # reproducible bytes


# ---------------------------------------------------------------------------- the HTML

def test_diff_html_escapes_and_marks_rows():
    from app.render.diff_html import render_diff_html
    a = "import triton\nx = 1\n"
    b = "import triton\nx = '<script>alert(1)</script>'\n"
    d = diff_stage("source", a, b)
    html = render_diff_html(d, a, b, a_label="A <b>", b_label="B")
    assert "<script>" not in html and "&lt;script&gt;" in html and "A &lt;b&gt;" in html
    assert html.count('class="d-change"') == 1 and 'data-stage="source"' in html


def test_diff_html_folds_long_equal_runs():
    from app.render.diff_html import render_diff_html
    a = "\n".join(f"line {i}" for i in range(100))
    b = a.replace("line 50", "line fifty")
    html = render_diff_html(diff_stage("source", a, b), a, b, context=2)
    assert "⋯ 48 unchanged lines ⋯" in html and "⋯ 47 unchanged lines ⋯" in html
    assert "⋯" not in render_diff_html(diff_stage("source", a, b), a, b, context=None)


# ---------------------------------------------------------------------------- the CLI

def cli(*args, timeout=300):
    p = subprocess.run([sys.executable, "-m", "inspectors", *map(str, args)], cwd=ROOT,
                       capture_output=True, text=True, timeout=timeout)
    return p.returncode, p.stdout, p.stderr


def test_cli_diff_one_file_two_option_sets_json():
    code, out, err = cli("diff", ROOT / "kernels" / "vector_add.py", "--target", "cuda:90",
                         "--a-constexpr", "BLOCK_SIZE=128", "--b-constexpr", "BLOCK_SIZE=1024", "--json")
    assert code == 0, err
    data = json.loads(out)
    assert data["a"]["constexprs"] == {"BLOCK_SIZE": 128} and data["b"]["constexprs"] == {"BLOCK_SIZE": 1024}
    first = data["launches"][0]
    assert first["headline"].startswith("loads v1 → v4")
    delta = {r["metric"]: r for r in first["delta"]}
    assert delta["global loads v4.b32"]["a"] == 0 and delta["global loads v4.b32"]["b"] == 4
    assert delta["global loads v1.b32"]["changed"] and delta["registers / thread"]["a"] > 0
    assert first["stages"]["ptx"]["identical"] is False and first["stages"]["source"]["identical"] is True
    assert len(data["launches"]) == data["launches_a"] == 3


def test_cli_diff_two_files_text_and_show(tmp_path):
    b = tmp_path / "vadd.py"
    b.write_text((SNIPPETS / "vadd.py").read_text().replace("x + y", "x * y"))
    code, out, err = cli("diff", SNIPPETS / "vadd.py", b, "--launch", "1", "--show", "ptx",
                         "--a-num-warps", "4", "--b-num-warps", "4")
    assert code == 0, err
    assert "== launch 1: add_kernel" in out and "no change in memory widths" in out
    assert "- \tadd.f32" in out and "+ \tmul.f32" in out


def test_cli_diff_errors():
    code, out, _ = cli("diff", SNIPPETS / "vadd.py", SNIPPETS / "syntax_error.py", "--json")
    assert code == 1 and json.loads(out)["error"]["kind"] == "syntax"
    code, out, _ = cli("diff", SNIPPETS / "vadd.py", "--b-target", "cuda:61", "--json")
    assert code == 1 and json.loads(out)["error"]["kind"] == "usage"
    code, _, err = cli("diff", SNIPPETS / "vadd.py", "--a-constexpr", "BLOCK")
    assert code == 2 and "NAME=VALUE" in err

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
from inspectors.session.files import export as bundle
from inspectors.session.insights import all_stages
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


@pytest.mark.workers
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


@pytest.mark.workers
def test_cli_diff_two_files_text_and_show(tmp_path):
    b = tmp_path / "vadd.py"
    b.write_text((SNIPPETS / "vadd.py").read_text().replace("x + y", "x * y"))
    code, out, err = cli("diff", SNIPPETS / "vadd.py", b, "--launch", "1", "--show", "ptx",
                         "--a-num-warps", "4", "--b-num-warps", "4")
    assert code == 0, err
    assert "== launch 1: add_kernel" in out and "no change in memory widths" in out
    assert "- \tadd.f32" in out and "+ \tmul.f32" in out


@pytest.mark.workers
def test_cli_diff_errors():
    code, out, _ = cli("diff", SNIPPETS / "vadd.py", SNIPPETS / "syntax_error.py", "--json")
    assert code == 1 and json.loads(out)["error"]["kind"] == "syntax"
    code, out, _ = cli("diff", SNIPPETS / "vadd.py", "--b-target", "cuda:61", "--json")
    assert code == 1 and json.loads(out)["error"]["kind"] == "usage"
    code, _, err = cli("diff", SNIPPETS / "vadd.py", "--a-constexpr", "BLOCK")
    assert code == 2 and "NAME=VALUE" in err


# ---------------------------------------------------------------------------- bounded cost on hostile text

def _hostile(n: int) -> tuple[str, str]:
    """Two PTX-like texts of `n` lines each, made of the same 100 distinct lines repeated in
    two different orders: difflib's SequenceMatcher is far worse than quadratic on these."""
    lines = [f"\tadd.s32 \t%r{k % 7}, %r{k % 5}, {k};" for k in range(100)]
    return ("\n".join(lines[i % 100] for i in range(n)),
            "\n".join(lines[(i * 37 + 11) % 100] for i in range(n)))


def _difflib_cells(a: list, b: list, autojunk: bool = False) -> int:
    """The (i, j) cells difflib's SequenceMatcher looks at to align a with b: one for each
    j its find_longest_match takes from its table of where each item of b is."""
    cells = 0

    class Counting(dict):
        def get(self, key, default=()):
            nonlocal cells
            for j in dict.get(self, key, default):
                cells += 1
                yield j

    import difflib
    sm = difflib.SequenceMatcher(None, a, b, autojunk=autojunk)
    sm.b2j = Counting(sm.b2j)
    sm.get_opcodes()
    return cells


def _steps(fn, *args):
    from inspectors.explain import align
    before = align.steps_taken()
    out = fn(*args)
    return out, align.steps_taken() - before


def _assert_valid_alignment(stage: str, a: str, b: str, d) -> None:
    """Every kept line of a and of b is in exactly one row, in order; equal rows are equal."""
    assert [r.a for r in d.rows if r.a] == [n for n, _ in normalize(stage, a)]
    assert [r.b for r in d.rows if r.b] == [n for n, _ in normalize(stage, b)]
    for r in d.rows:
        assert r.kind == ("equal" if r.kind == "equal" else
                          "change" if r.a and r.b else "remove" if r.a else "add")
        if r.kind == "equal":
            assert normalize_line(stage, r.a_text) == normalize_line(stage, r.b_text)


def test_hostile_repetitive_text_is_aligned_at_bounded_cost():
    """The class-server case: 100 distinct lines repeated 200 times in two orders took
    minutes of CPU in difflib. The aligner's steps stay under one anchor-free stretch's
    search (`align.GAP_STEPS`) plus 20 per line; difflib's cells on a tenth of the text
    already exceed that bound."""
    from inspectors.explain.align import GAP_STEPS
    a, b = _hostile(20_000)
    d, steps = _steps(diff_stage, "ptx", a, b)
    _assert_valid_alignment("ptx", a, b, d)
    assert len(d.rows) == 20_000 and not d.too_large
    assert steps <= GAP_STEPS + 20 * 40_000 <= 50 * 40_000, steps
    small_a, small_b = _hostile(2_000)
    ka, kb = [k for _, k in normalize("ptx", small_a)], [k for _, k in normalize("ptx", small_b)]
    d_small, small_steps = _steps(diff_stage, "ptx", small_a, small_b)
    _assert_valid_alignment("ptx", small_a, small_b, d_small)
    bound = GAP_STEPS + 20 * (len(ka) + len(kb))
    assert small_steps <= bound < _difflib_cells(ka, kb), (small_steps, bound)


def test_aligner_covers_both_sides_and_its_gap_search_is_exact():
    """On random short sequences: opcodes cover both sides in order and equal blocks are
    equal; the search used where no item anchors a stretch (Myers, or the table) finds a
    longest common subsequence, or gives up (None) when over its cap."""
    import random

    from inspectors.explain import align
    rng = random.Random(3)
    for _ in range(400):
        a = [rng.randrange(4) for _ in range(rng.randrange(30))]
        b = [rng.randrange(4) for _ in range(rng.randrange(30))]
        ops = align.opcodes(a, b, align.Budget.for_items(len(a) + len(b)))
        i = j = 0
        for tag, i1, i2, j1, j2 in ops:
            assert (i1, j1) == (i, j) and tag in ("equal", "replace", "delete", "insert")
            assert a[i1:i2] == b[j1:j2] if tag == "equal" else (tag == "replace") == (i2 > i1 and j2 > j1)
            i, j = i2, j2
        assert (i, j) == (len(a), len(b))
        lcs = [[0] * (len(b) + 1) for _ in range(len(a) + 1)]
        for x in range(len(a) - 1, -1, -1):
            for y in range(len(b) - 1, -1, -1):
                lcs[x][y] = lcs[x + 1][y + 1] + 1 if a[x] == b[y] else max(lcs[x + 1][y], lcs[x][y + 1])
        for pairs in (align._myers(a, b, 0, len(a), 0, len(b), 10 ** 9, align.Budget(0)),
                      align._lcs_table(a, b, 0, len(a), 0, len(b), align.Budget(0))):
            assert len(pairs) == lcs[0][0] and all(a[x] == b[y] for x, y in pairs)
            assert all(p[0] < q[0] and p[1] < q[1] for p, q in zip(pairs, pairs[1:]))
    assert align._myers([0] * 50, [1] * 50, 0, 50, 0, 50, 100, align.Budget(0)) is None


def test_too_large_texts_are_not_aligned(capsys):
    from app.render.diff_html import legend_html, render_diff_html
    from inspectors.commands.diff import _print_rows
    from inspectors.explain.diff import MAX_DIFF_BYTES, MAX_DIFF_LINES
    big = "ret;\n" * (MAX_DIFF_BYTES // 5 + 1)
    d, steps = _steps(diff_stage, "ptx", big, "ret;\n")
    assert steps == 0 and d.rows == () and not d.identical
    assert d.too_large == d.summary() == f"too large to diff here ({len(big) / 1e6:.1f} MB)"
    assert d.to_json()["too_large"] == d.summary() and "too_large" not in diff_stage("ptx", "a", "b").to_json()
    many = "x\n" * (MAX_DIFF_LINES + 1)                  # under the bytes limit, over the lines limit
    d = diff_stage("source", "x\n", many)
    assert d.rows == () and d.summary().startswith("too large to diff here (") and f"{MAX_DIFF_LINES + 1:,} lines" in d.summary()
    html = render_diff_html(d, "x\n", many)
    assert d.summary() in html and "<table" not in html and d.summary() in legend_html(d)
    _print_rows(d)
    assert d.summary() in capsys.readouterr().out


def test_inline_spans_of_two_long_lines_are_bounded():
    """Two 16 KB lines of random words: the aligner's steps stay under its fixed allowance
    plus 20 per word (and the spans still spell both lines); difflib's cells on 2 KB lines
    already exceed that bound."""
    import random

    from inspectors.explain.diff import _INLINE_FIXED_STEPS, _WORD_RE
    rng = random.Random(11)
    vocab = ["add", "mul", "ld", "st", "%r1", "%r2", "0x0", "{", "}", ",", ".", "v4", "b32", "[", "]", ";"]

    def line(size):
        words = []
        while sum(map(len, words)) < size:
            words.append(rng.choice(vocab) + rng.choice(["", " ", "  "]))
        return "".join(words)[:size]

    a, b = line(16_384), line(16_384)
    (sa, sb), steps = _steps(inline_spans, a, b)
    assert "".join(t for t, _ in sa) == a and "".join(t for t, _ in sb) == b
    n = len(_WORD_RE.findall(a)) + len(_WORD_RE.findall(b))
    assert steps <= _INLINE_FIXED_STEPS + 20 * n, (steps, n)
    small_a, small_b = line(2_048), line(2_048)
    ta, tb = _WORD_RE.findall(small_a), _WORD_RE.findall(small_b)
    (sa, sb), small_steps = _steps(inline_spans, small_a, small_b)
    assert "".join(t for t, _ in sa) == small_a and "".join(t for t, _ in sb) == small_b
    assert small_steps <= _INLINE_FIXED_STEPS + 20 * (len(ta) + len(tb)) < _difflib_cells(ta, tb), small_steps


def test_pairing_similar_lines_stops_at_its_budget(monkeypatch):
    """Blocks of lines that are anagrams of each other pass difflib's quick ratios, so every
    pair gets a full ratio: all that pairing of one diff stops at `_PAIR_STEPS` (the rest is
    zipped by position), and without that budget the same diff takes several times more."""
    import random

    from inspectors.explain import diff
    rng = random.Random(5)
    base = list("abcdefghij,.{}[]0123456789abcdefghij,.{}")

    def anagram():
        rng.shuffle(base)
        return "".join(base)

    a, b = [], []
    for k in range(3):
        a += [f"anchor {k}"] + [anagram() for _ in range(40)]
        b += [f"anchor {k}"] + [anagram() for _ in range(40)]
    a, b = "\n".join(a), "\n".join(b)
    monkeypatch.setattr(diff, "_PAIR_STEPS", 20_000)
    d, bounded = _steps(diff_stage, "source", a, b)
    _assert_valid_alignment("source", a, b, d)
    monkeypatch.setattr(diff, "_PAIR_STEPS", 10 ** 12)
    _, unbounded = _steps(diff_stage, "source", a, b)
    assert bounded < 100_000 < 3 * bounded < unbounded, (bounded, unbounded)

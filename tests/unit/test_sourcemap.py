"""Source maps (inspectors.read.sourcemap): inline snippets of each stage, copied from real
Triton 3.9 output, with exact expected maps; then golden fixtures from
`tests/fixtures/sourcemap/regen.py` (vector_add on sm_90 and sm_80, softmax on sm_90 and
gfx942), where the tests assert facts a reader can check against the texts."""
import re
import time

import pytest

from conftest import FIXTURES
from inspectors.read import sourcemap as sm

SM = FIXTURES / "sourcemap"
STD = "/work/main/.venv/lib/python3.11/site-packages/triton/language/standard.py"
EXTS = {"ttir": "ttir", "ttgir": "ttgir", "llir": "llir", "ptx": "ptx", "sass": "sass", "amdgcn": "amdgcn"}


def fixture(name: str) -> dict[str, str]:
    """All stages of one fixture kernel, keyed like KernelResult.stages."""
    stages = {"source": (SM / f"{name}.py").read_text()}
    for stage, ext in EXTS.items():
        p = SM / f"{name}.{ext}"
        if p.exists():
            stages[stage] = p.read_text()
    return stages


def py_line(source: str, text: str) -> int:
    """1-based line of the only Python line containing `text`."""
    hits = [n for n, line in enumerate(source.splitlines(), 1) if text in line]
    assert len(hits) == 1, (text, hits)
    return hits[0]


def lines_matching(text: str, pattern: str) -> list[int]:
    return [n for n, line in enumerate(text.splitlines(), 1) if re.search(pattern, line)]


def mapped(stages: dict, m: sm.SourceMap, stage: str, pattern: str) -> set[int]:
    """Python lines of the `stage` lines matching `pattern` (KeyError if one is unmapped)."""
    hits = lines_matching(stages[stage], pattern)
    assert hits, (stage, pattern)
    return {m.stages[stage].to_python[n] for n in hits}


# --------------------------------------------------------------------------- MLIR

# softmax.py on cuda:90, TTGIR, cut down: the tl.max reduction region, the row loop,
# aliases at both ends, loc(unknown), callsite() nested in callsite().
TTGIR = """\
#loc = loc("softmax.py":17:1)
#loc1 = loc(unknown)
#loc12 = loc("softmax.py":35:31)
#loc38 = loc("row_minus_max"(#loc12))
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32} {
  tt.func public @softmax_kernel(%input_ptr: !tt.ptr<f32> {tt.divisibility = 16 : i32} loc("input_ptr"(#loc))) attributes {noinline = false} {
    %c0_i32 = arith.constant 0 : i32 loc(#loc1)
    %row_start = tt.get_program_id x : i32 loc(#loc30)
    %3:2 = scf.for %arg6 = %row_start to %n_rows step %row_step iter_args(%arg7 = %c-1_i32, %row_6 = %row_5) -> (i32, !ttg.async.token)  : i32 {
      %row_minus_max = "tt.reduce"(%row_10) <{axis = 0 : i32}> ({
      ^bb0(%row_minus_max_21: f32 loc(callsite(#loc1 at #loc38)), %row_minus_max_22: f32 loc(callsite(#loc1 at #loc38))):
        %row_minus_max_23 = arith.maxnumf %row_minus_max_21, %row_minus_max_22 : f32 loc(#loc49)
        tt.reduce.return %row_minus_max_23 : f32 loc(#loc45)
      }) : (tensor<1024xf32, #blocked>) -> f32 loc(#loc45)
      scf.yield %9, %row_20 : i32, !ttg.async.token loc(#loc7)
    } {tt.num_stages = 2 : i32} loc(#loc7)
    tt.return loc(#loc)
  } loc(#loc)
} loc(#loc)
#loc2 = loc("softmax.py":26:17)
#loc7 = loc("softmax.py":28:5)
#loc11 = loc("/work/main/.venv/lib/python3.11/site-packages/triton/language/standard.py":216:16)
#loc13 = loc("/work/main/.venv/lib/python3.11/site-packages/triton/language/standard.py":196:12)
#loc30 = loc("row_start"(#loc2))
#loc45 = loc(callsite(#loc11 at #loc38))
#loc49 = loc(callsite(#loc13 at #loc45))
"""


def test_mlir_inline():
    assert sm.mlir_lines(TTGIR, "softmax.py") == {
        6: 17,      # tt.func ... {      gets the location of its closing `} loc(#loc)`
        8: 26,      # "row_start"(#loc2)
        9: 28,      # scf.for ... {      from `} {tt.num_stages = 2 : i32} loc(#loc7)`
        10: 35,     # "tt.reduce"(...) ({ from `}) : ... loc(#loc45)`
        12: 35,     # standard.py:196 at standard.py:216 at softmax.py:35: the user's tl.max line
        13: 35,
        14: 35,
        15: 28,
        16: 28,
        17: 17,     # tt.return loc(#loc): the def line
        18: 17,
    }               # not: aliases, module braces, loc(unknown) (7), the ^bb0 block header (11)


def test_mlir_location_forms():
    """Legal MLIR location syntax Triton 3.9 happens not to print (inline locations,
    fused, ranges), user files given as absolute paths, and a library file that shares
    the user's name."""
    text = """\
    %0 = arith.addi %a, %b : i32 loc("kern.py":3:4)
    %1 = arith.addi %a, %b : i32 loc(callsite("/x/site-packages/triton/language/standard.py":43:13 at "kern.py":32:17))
    %2 = arith.addi %a, %b : i32 loc(fused["/x/site-packages/triton/language/core.py":9:1, "kern.py":6:2])
    %3 = arith.addi %a, %b : i32 loc(fused<"foo">["kern.py":7:3 to 7:9])
    %4 = arith.addi %a, %b : i32 loc("/home/u/proj/kern.py":8:1)
    %5 = arith.addi %a, %b : i32 loc("/x/site-packages/triton/language/kern.py":9:1)
    %6 = arith.addi %a, %b : i32 loc("other.py":10:1)
    %7 = arith.addi %a, %b : i32 loc("name_only")
    %8 = arith.addi %a, %b : i32 loc(#undefined)
    %9 = arith.addi %a, %b : i32 loc("kern.py":0:0)
    %10 = arith.select %c, %x, %y {note = "loc(#z)"} : i32 loc("kern.py":11:1)
"""
    assert sm.mlir_lines(text, "kern.py") == {1: 3, 2: 32, 3: 6, 4: 7, 5: 8, 11: 11}


def test_is_user_file():
    assert sm.is_user_file("vector_add.py", "vector_add.py")
    assert sm.is_user_file("/tmp/work/vector_add.py", "vector_add.py")
    assert not sm.is_user_file("my_vector_add.py", "vector_add.py")
    assert not sm.is_user_file(STD, "standard.py")     # Triton's own, though the name matches
    assert not sm.is_user_file("", "vector_add.py")


# --------------------------------------------------------------------------- LLVM IR

# softmax.py on cuda:90: the define, a load-line instruction, tl.max and tl.sum inlined
# two levels deep, and the metadata they point at.
LLIR = """\
define ptx_kernel void @softmax_kernel(ptr addrspace(1) %0, ptr addrspace(1) %1, i32 %2) local_unnamed_addr #0 !dbg !4 {
  %63 = shl nuw nsw i32 %12, 2, !dbg !20
  %118 = tail call float @llvm.maxnum.f32(float %116, float %117), !dbg !21
  %200 = fadd float %198, %199, !dbg !31
  %201 = and i32 %11, 96
  ret void, !dbg !37
}
!0 = distinct !DICompileUnit(language: DW_LANG_C, file: !1, producer: "triton", isOptimized: true, runtimeVersion: 0, emissionKind: LineTablesOnly)
!1 = !DIFile(filename: "softmax.py", directory: "")
!4 = distinct !DISubprogram(name: "softmax_kernel", linkageName: "softmax_kernel", scope: !1, file: !1, line: 17, type: !5, scopeLine: 17, spFlags: DISPFlagDefinition | DISPFlagOptimized, unit: !0)
!20 = !DILocation(line: 34, column: 15, scope: !4)
!21 = !DILocation(line: 196, column: 12, scope: !22, inlinedAt: !24)
!22 = distinct !DILexicalBlockFile(scope: !4, file: !23, discriminator: 0)
!23 = !DIFile(filename: "standard.py", directory: "/work/main/.venv/lib/python3.11/site-packages/triton/language")
!24 = !DILocation(line: 216, column: 16, scope: !22, inlinedAt: !25)
!25 = !DILocation(line: 35, column: 31, scope: !26)
!26 = distinct !DILexicalBlockFile(scope: !4, file: !1, discriminator: 0)
!29 = !DILocation(line: 314, column: 12, scope: !22, inlinedAt: !30)
!30 = !DILocation(line: 37, column: 23, scope: !26)
!31 = !DILocation(line: 287, column: 12, scope: !22, inlinedAt: !29)
!37 = !DILocation(line: 17, column: 1, scope: !4)
"""


def test_llir_inline():
    assert sm.llir_lines(LLIR, "softmax.py") == {1: 17, 2: 34, 3: 35, 4: 37, 6: 17}


def test_llir_library_only_location_is_unmapped():
    """A location in standard.py not inlined from the user's file maps nowhere."""
    text = LLIR.replace("inlinedAt: !25)", ")").replace("inlinedAt: !30)", ")")
    assert sm.llir_lines(text, "softmax.py") == {1: 17, 2: 34, 6: 17}


# --------------------------------------------------------------------------- PTX

# vector_add.py on cuda:90: an inline-asm load, where LLVM numbers the asm lines 27, 28,
# 29, 30 (all of them the load on line 27), then the softmax tl.max: `.loc` with
# inlined_at, the inner one inlined at a standard.py point.
PTX = """\
\t.loc\t1 27 17                         // vector_add.py:27:17
\tadd.s64 \t%rd2, %rd1, 2048;
\t.loc\t1 27 9                          // vector_add.py:27:9
\t// begin inline asm
\t.loc\t1 27 9                          // vector_add.py:27:9
\tmov.u32 %r1, 0x0;
\t.loc\t1 28 9                          // vector_add.py:28:9
\tmov.u32 %r2, 0x0;
\t.loc\t1 29 9                          // vector_add.py:29:9
\tmov.u32 %r3, 0x0;
\t.loc\t1 30 9                          // vector_add.py:30:9
\tmov.u32 %r4, 0x0;
\t@%p1 ld.global.v4.b32 { %r1, %r2, %r3, %r4 }, [ %rd1 + 0 ];

\t// end inline asm
\t.loc\t1 28 17                         // vector_add.py:28:17
\tadd.s64 \t%rd3, %rd8, %rd10;
$L__tmp1:
\t.loc\t1 35 31                         // vector_add.py:35:31
\t.loc\t2 216 16, function_name $L__info_string0, inlined_at 1 35 31 // standard.py:216:16
\t.loc\t2 196 12, function_name $L__info_string0, inlined_at 2 216 16 // standard.py:196:12
\tmax.f32 \t%r93, %r92, %r91;
$L__tmp2:
\t.loc\t2 216 16, function_name $L__info_string0, inlined_at 1 35 31 // standard.py:216:16
\tshfl.sync.bfly.b32 \t%r100, %r99, 16, 31, -1;
\t.loc\t1 0 5                           // vector_add.py:0:5
\tld.param.b32 \t%r20, [softmax_kernel_param_3];
\t.loc\t1 17 1                          // vector_add.py:17:1
\tret;
$L__tmp3:
$L__func_end0:
                                        // -- End function
}
\t.file\t1 "vector_add.py"
\t.file\t2 "/work/main/.venv/lib/python3.11/site-packages/triton/language/standard.py"
\t.section\t.debug_abbrev
\t{
.b8 1                                   // Abbreviation Code
\t}
"""


def test_ptx_inline():
    assert sm.ptx_lines(PTX, "vector_add.py") == {
        2: 27,
        6: 27, 8: 27, 10: 27, 12: 27, 13: 27,   # the asm block: all the line-27 load
        17: 28,
        22: 35,                                 # standard.py:196 -> 216 -> vector_add.py:35
        25: 35,
        29: 17,                                 # not 27: line 0 is compiler-made code
    }


def test_sass_hints_from_ptx():
    """Keys: the raw frames SASS prints (innermost only, as `-g` does; the whole stack
    resolves by itself). Values: the chains they stand for."""
    assert sm.sass_hints(PTX, "vector_add.py") == {
        ((STD, 216),): ((("", 35),),),
        ((STD, 196),): ((("", 35),),),
        (("vector_add.py", 29),): ((("", 27),),),   # only ever asm line numbers, never a real .loc
        (("vector_add.py", 30),): ((("", 27),),),
    }                                               # 28 is a real line too (y's load): left alone


# --------------------------------------------------------------------------- SASS

# vector_add.py on cuda:90 (nvdisasm -c -g): the LDG carries the asm-numbered line 30;
# softmax.py: tl.max inlined from standard.py, which -g prints without its caller.
SASS = f"""\
\t//## File "vector_add.py", line 27
        /*0130*/                   IMAD.WIDE R2, R0.reuse, 0x4, R2 ;
\t//## File "vector_add.py", line 30
        /*0170*/                   CS2R R4, SRZ ;
        /*0180*/              @!P0 LDG.E.128 R16, desc[UR4][R2.64] ;
\t//## File "vector_add.py", line 34
        /*08b0*/                   SHF.R.S32.HI R4, RZ, 0x1f, R2 ;
\t//## File "{STD}", line 196
        /*08c0*/                   FMNMX R8, R5, R26, !PT ;
\t//## File "vector_add.py", line 17
        /*0280*/                   EXIT ;
.L_x_0:
        /*0290*/                   BRA `(.L_x_0);
        /*02a0*/                   NOP;
"""


def test_sass_inline_with_ptx_hints():
    hints = sm.sass_hints(PTX, "vector_add.py")
    assert sm.sass_lines(SASS, "vector_add.py", hints) == {2: 27, 4: 27, 5: 27, 7: 34, 9: 35, 11: 17}


def test_sass_inline_without_hints():
    """SASS alone: asm-numbered lines stay as they are, inlined code takes the last user
    line seen (here the load's 34: wrong, which is why build() passes the PTX's hints)."""
    assert sm.sass_lines(SASS, "vector_add.py") == {2: 27, 4: 30, 5: 30, 7: 34, 9: 34, 11: 17}


def test_sass_ambiguous_helper_maps_nowhere():
    """matmul.py calls tl.cdiv on lines 32, 33 and 50: standard.py:43 alone can't say which."""
    sass = f"""\
\t//## File "matmul.py", line 17
        /*0000*/                   LDC R1, c[0x0][0x28] ;
\t//## File "{STD}", line 43
        /*0010*/                   LDC.64 R2, c[0x0][0x228] ;
\t//## File "matmul.py", line 31
        /*0020*/                   S2R R7, SR_CTAID.X ;
"""
    hints = {((STD, 43),): ((("", 32),), (("", 33),), (("", 50),))}
    assert sm.sass_lines(sass, "matmul.py", hints) == {2: 17, 6: 31}


def test_sass_inline_gi():
    """nvdisasm -c -gi prints the inlined frames, innermost first, the user's line last."""
    sass = f"""\
\t//## File "{STD}", line 196 inlined at "{STD}", line 216
\t//## File "{STD}", line 216 inlined at "softmax.py", line 35
\t//## File "softmax.py", line 35
        /*0a30*/                   FMNMX R11, R34, R11, !PT ;
\t//## File "{STD}", line 43 inlined at "softmax.py", line 33
        /*0190*/                   VIADD R0, R3, 0x7f ;
"""
    assert sm.sass_lines(sass, "softmax.py") == {4: 35, 6: 33}


# --------------------------------------------------------------------------- AMDGCN

# softmax.py on gfx942: the file table inside the function, the inline stack in the comment.
AMDGCN = """\
softmax_kernel:                         ; @softmax_kernel
.Lfunc_begin0:
\t.file\t1 "softmax.py"
\t.loc\t1 17 0 prologue_end             ; softmax.py:17:0
\ts_load_dwordx8 s[4:11], s[0:1], 0x0
\t.file\t2 "/work/main/.venv/lib/python3.11/site-packages/triton/language" "standard.py"
\t.loc\t2 314 12 is_stmt 1              ; standard.py:314:12 @[ softmax.py:37:23 ]
\tv_and_b32_e32 v12, 12, v0
.LBB0_5:                                ; =>This Inner Loop Header: Depth=1
\t.loc\t1 34 15                         ; softmax.py:34:15
\tbuffer_load_dword v25, v20, s[4:7], 0 offen
.Ltmp7:
\t.loc\t2 196 12                        ; standard.py:196:12 @[ standard.py:216:16 @[ softmax.py:35:31 ] ]
\tv_max_f32_e32 v1, v6, v1
\t.loc\t1 0 9 is_stmt 0                 ; softmax.py:0:9
\ts_mov_b64 s[18:19], -1
\t.loc\t1 17 1 is_stmt 1                ; softmax.py:17:1
\ts_endpgm
.Ltmp2:
.Lfunc_end0:
\t.size\tsoftmax_kernel, .Lfunc_end0-softmax_kernel
\t.amdhsa_kernel softmax_kernel
\t\t.amdhsa_group_segment_fixed_size 0
\t.end_amdhsa_kernel
amdhsa.target:   amdgcn-amd-amdhsa--gfx942
"""


def test_amdgcn_inline():
    assert sm.amdgcn_lines(AMDGCN, "softmax.py") == {5: 17, 8: 37, 11: 34, 14: 35, 18: 17}


# --------------------------------------------------------------------------- API

def test_stage_lines_dispatch():
    expected = sm.StageLines("ttgir", sm.mlir_lines(TTGIR, "softmax.py"))
    assert sm.stage_lines("ttgir", TTGIR, "softmax.py") == expected
    assert sm.stage_lines("ttir", TTGIR, "softmax.py").to_python[12] == 35
    assert sm.stage_lines("amdgcn", AMDGCN, "softmax.py").stage == "amdgcn"
    with pytest.raises(KeyError):
        sm.stage_lines("source", "x = 1", "softmax.py")


def test_build_and_lookups_inline():
    m = sm.build({"source": "...", "ptx": PTX, "sass": SASS, "ttgir": ""}, "vector_add.py")
    assert set(m.stages) == {"ptx", "sass"}             # source and empty texts left out
    assert m.stages["sass"].to_python[5] == 27           # resolved through the PTX
    assert m.python_to_stage()[35] == {"ptx": (22, 25), "sass": (9,)}
    assert m.lines_for("source", 27) == {"source": (27,), "ptx": (2, 6, 8, 10, 12, 13), "sass": (2, 4, 5)}
    assert m.lines_for("sass", 9) == {"source": (35,), "ptx": (22, 25), "sass": (9,)}
    assert m.lines_for("source", 99) == {"source": (99,), "ptx": (), "sass": ()}
    assert m.lines_for("ptx", 1) == {}                  # a .loc line maps nowhere
    assert m.lines_for("llir", 1) == {}                 # a stage it doesn't have


# --------------------------------------------------------------------------- golden

ALL = ("vector_add_sm90", "vector_add_sm80", "softmax_sm90", "softmax_gfx942")


@pytest.fixture(scope="module")
def maps():
    out = {}
    for name in ALL:
        stages = fixture(name)
        out[name] = (stages, sm.build(stages, name.rsplit("_", 1)[0] + ".py"))
    return out


def test_golden_stages(maps):
    for name in ALL:
        stages, m = maps[name]
        expected = {"ttir", "ttgir", "llir"} | ({"amdgcn"} if "gfx" in name else {"ptx", "sass"})
        assert set(m.stages) == expected, name
        for stage, sl in m.stages.items():
            assert sl.to_python, (name, stage)


def test_golden_only_code_lines(maps):
    """Every Python line any stage maps to is a code line of the kernel: from the def line
    to the end of its body, not blank, not a comment (no asm-numbered line 30 in vector_add)."""
    for name in ALL:
        stages, m = maps[name]
        src = stages["source"].splitlines()
        start = py_line(stages["source"], "@triton.jit") + 1
        end = next(n for n in range(start + 1, len(src) + 1)
                   if src[n - 1].strip() and not src[n - 1].startswith((" ", "\t")))
        for stage, sl in m.stages.items():
            for py in sl.python_lines():
                assert start <= py < end, (name, stage, py)
                assert src[py - 1].strip() and not src[py - 1].strip().startswith("#"), (name, stage, py)


def test_golden_declarations_not_mapped(maps):
    decl = re.compile(r'^\s*(#loc\w* = |\.loc\s|\.file\s|!\d+ = |//##|\$L__\w+:|\.L\w+:)')
    for name in ALL:
        stages, m = maps[name]
        for stage, sl in m.stages.items():
            lines = stages[stage].splitlines()
            bad = [n for n in sl.to_python if decl.match(lines[n - 1])]
            assert not bad, (name, stage, bad[:3])


@pytest.mark.parametrize("name", ["vector_add_sm90", "vector_add_sm80"])
def test_golden_vector_add_loads(maps, name):
    stages, m = maps[name]
    src = stages["source"]
    x_line = py_line(src, "x = tl.load(x_ptr + offsets, mask=mask)")
    y_line = py_line(src, "y = tl.load(y_ptr + offsets, mask=mask)")
    store = py_line(src, "tl.store(out_ptr + offsets, x + y, mask=mask)")

    ptx_loads = lines_matching(stages["ptx"], r"ld\.global\.v4\.b32")
    assert len(ptx_loads) >= 4
    half = len(ptx_loads) // 2          # x's loads, then y's
    assert [m.stages["ptx"].to_python[n] for n in ptx_loads] == [x_line] * half + [y_line] * half
    for n in lines_matching(stages["ptx"], r"st\.global\.v4\.b32"):
        assert m.stages["ptx"].to_python[n] == store

    # SASS: the loads carry the asm-numbered lines 30/31 in the cubin; mapped back.
    sass_loads = lines_matching(stages["sass"], r"LDG\.E\.128")
    assert sorted({m.stages["sass"].to_python[n] for n in sass_loads}) == [x_line, y_line]
    raw = sm.sass_lines(stages["sass"], "vector_add.py")   # without the PTX: past the kernel
    assert {raw[n] for n in sass_loads} == {x_line + 3, y_line + 3}
    for n in lines_matching(stages["sass"], r"STG\.E\.128"):
        assert m.stages["sass"].to_python[n] == store

    for stage in ("ttir", "ttgir"):
        loads = lines_matching(stages[stage], r"= tt\.load ")
        assert [m.stages[stage].to_python[n] for n in loads] == [x_line, y_line]


@pytest.mark.parametrize("name", ["vector_add_sm90", "vector_add_sm80", "softmax_sm90"])
def test_golden_ptx_follows_loc(maps, name):
    """Every instruction after a user-file `.loc N` (N > 0; in an inline-asm block only
    the block's first `.loc` counts) maps to N, and the Python lines of the PTX map are
    exactly those N followed by an instruction, plus the user lines library `.loc`s were
    inlined at (softmax's tl.max and tl.sum lines)."""
    stages, m = maps[name]
    filename = name.rsplit("_", 1)[0] + ".py"
    mp = m.stages["ptx"].to_python
    files = {int(i): p for i, p in re.findall(r'^\s*\.file\s+(\d+)\s+"([^"]*)"', stages["ptx"], re.M)}
    body = stages["ptx"].split("\n}\n", 1)[0].splitlines()       # the function, not debug sections
    insn = re.compile(r"^\s*(@!?%p\d+\s+)?[a-z][\w.:]*[\s;]")
    expected, inlined_at, current, in_asm, first_in_asm = set(), set(), None, False, False
    checked = 0
    for n, line in enumerate(body, 1):
        s = line.strip()
        if s.startswith("// begin inline asm"):
            in_asm, first_in_asm = True, True
            continue
        if s.startswith("// end inline asm"):
            in_asm = False
            continue
        loc = re.match(r"\.loc\s+(\d+)\s+(\d+)\s+\d+(.*)", s)
        if loc:
            if in_asm and not first_in_asm:
                continue            # line+1, line+2 ... numbering of the asm lines
            first_in_asm = False
            f, py, rest = int(loc[1]), int(loc[2]), loc[3]
            current = py if files[f] == filename and py > 0 else None
            at = re.search(r"inlined_at (\d+) (\d+)", rest)
            if files[f] != filename and at and files[int(at[1])] == filename:
                inlined_at.add(int(at[2]))
        elif current is not None and insn.match(line) and not s.startswith("."):
            assert mp.get(n) == current, (n, line)
            expected.add(current)
            checked += 1
    assert checked > 20
    assert expected <= m.stages["ptx"].python_lines() <= expected | inlined_at
    if name.startswith("vector_add"):
        assert m.stages["ptx"].python_lines() == expected
        # the raw PTX numbers the asm lines of x's load up to line 30, a blank line
        assert 30 not in expected and any(re.match(r"\s*\.loc\s+1 30 9\b", x) for x in body)


def test_golden_softmax_reductions(maps):
    """tl.max / tl.sum are inlined from triton/language/standard.py; every stage puts them
    on the user's calling line."""
    for name in ("softmax_sm90", "softmax_gfx942"):
        stages, m = maps[name]
        src = stages["source"]
        max_line = py_line(src, "tl.max(row, axis=0)")
        sum_line = py_line(src, "tl.sum(numerator, axis=0)")
        load_line = py_line(src, "row = tl.load(")
        assert "standard.py" in stages["ttgir"] and "callsite(" in stages["ttgir"]

        for stage in ("ttir", "ttgir"):
            text, mp = stages[stage], m.stages[stage].to_python
            reduces = lines_matching(text, r'"tt\.reduce"')
            assert [mp[n] for n in reduces][:2] == [max_line, sum_line], stage   # gfx942 peels the loop
            assert {mp[n] for n in reduces} == {max_line, sum_line}, stage
            assert mapped(stages, m, stage, r"arith\.maxnumf") == {max_line}, stage
            assert mapped(stages, m, stage, r"tt\.reduce\.return") == {max_line, sum_line}

        assert mapped(stages, m, "llir", r"call float @llvm\.maxnum\.f32\(") == {max_line}

        if name == "softmax_sm90":
            assert mapped(stages, m, "ptx", r"^\s*max\.f32") == {max_line}
            assert mapped(stages, m, "ptx", r"^\s*ex2\.approx") == {py_line(src, "tl.exp(")}
            assert mapped(stages, m, "ptx", r"cp\.async\.ca\.shared\.global") == {load_line}
            assert mapped(stages, m, "sass", r"FMNMX") == {max_line}
            assert mapped(stages, m, "sass", r"SHFL\.BFLY") == {max_line, sum_line}
        else:
            assert mapped(stages, m, "amdgcn", r"^\s*v_max_f32") == {max_line}
            assert mapped(stages, m, "amdgcn", r"^\s*buffer_load_dword") == {load_line}


def test_golden_sass_g_with_ptx_equals_gi(maps):
    """nvdisasm -g plus what the PTX says gives, instruction for instruction, the lines
    nvdisasm -gi prints itself (softmax has no asm-numbered lines to tell them apart)."""
    stages, m = maps["softmax_sm90"]
    gi = (SM / "softmax_sm90.sass-gi").read_text()
    assert "inlined at" in gi and "inlined at" not in stages["sass"]

    def by_address(text, mp):
        lines = text.splitlines()
        return {re.search(r"/\*([0-9a-f]+)\*/", lines[n - 1])[1]: py for n, py in mp.items()}

    from_g = by_address(stages["sass"], m.stages["sass"].to_python)
    from_gi = by_address(gi, sm.sass_lines(gi, "softmax.py"))
    assert from_g == from_gi
    assert len(from_g) > 300


def test_golden_lines_for(maps):
    stages, m = maps["vector_add_sm90"]
    src = stages["source"]
    x_line = py_line(src, "x = tl.load(x_ptr + offsets, mask=mask)")
    got = m.lines_for("source", x_line)
    assert got["source"] == (x_line,)
    for stage in ("ptx", "sass", "ttir", "ttgir", "llir"):
        assert got[stage], stage
        assert list(got[stage]) == sorted(got[stage])
    assert got == {"source": (x_line,), **m.python_to_stage()[x_line]}

    ttgir_load = lines_matching(stages["ttgir"], r"%x\w* = tt\.load ")[0]
    via_ir = m.lines_for("ttgir", ttgir_load)
    assert via_ir == got
    ptx_loads = lines_matching(stages["ptx"], r"ld\.global\.v4\.b32")[:2]     # x's two
    assert set(ptx_loads) <= set(via_ir["ptx"])
    sass_x = [n for n in lines_matching(stages["sass"], r"LDG\.E\.128")
              if m.stages["sass"].to_python[n] == x_line]
    assert sass_x and set(sass_x) <= set(via_ir["sass"])

    # and back: a PTX load line leads to the tt.load line and the Python line
    back = m.lines_for("ptx", ptx_loads[0])
    assert back["source"] == (x_line,) and ttgir_load in back["ttgir"]


def _best_of(runs: int, fn) -> float:
    """The fastest of `runs` timings of `fn()`: a stall of the shared machine lengthens one run, not all."""
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def test_golden_fast():
    """Building the maps of every golden kernel costs a few passes over its texts: compared with
    one regex pass over every line of the same texts (the least any reader of line info does),
    timed in the same run, not with a wall-clock figure (machines are shared and noisy): ~10x
    here, the limit 40x; a parser gone quadratic on these 245 KB is far beyond it."""
    texts = [(name.rsplit("_", 1)[0] + ".py", fixture(name)) for name in ALL]
    line_info = re.compile(r"loc\(|!dbg|DILocation|\.loc\s|//## File")

    def build_all():
        for filename, stages in texts:
            sm.build(stages, filename).python_to_stage()

    def one_pass():
        for _, stages in texts:
            for text in stages.values():
                for line in text.splitlines():
                    line_info.search(line)

    build_all()                                    # imports and compiled patterns: not timed
    baseline = _best_of(3, one_pass)
    took = _best_of(3, build_all)
    limit = 40 * max(baseline, 0.005)              # floored: a ~1 ms baseline is mostly noise, so 200 ms at least
    print(f"\nFIGURE maps {took * 1000:.1f} ms vs one pass {baseline * 1000:.1f} ms: {took / baseline:.1f}x")
    assert took <= limit, (f"building the golden maps took {took * 1000:.1f} ms, one regex pass over the same "
                           f"texts {baseline * 1000:.1f} ms: {took / baseline:.0f}x; the limit is 40x the pass "
                           f"(floored at 5 ms): {limit * 1000:.0f} ms")


# --------------------------------------------------------------------------- @triton.jit helpers

# tests/snippets/helpers_user.py on cuda:90, Triton 3.9, cut down: _load_block (line 13)
# called from the kernel's loop (30) and from _load_twice (18, called from 31); scaled_load
# from another file (jit_helpers.py:9, called from 32).
HELPER_TTGIR = """\
    %acc_12 = tt.load %acc_11, %acc_9 : tensor<256x!tt.ptr<f32>, #blocked> loc(#loc49)
    %x_30 = tt.load %x, %acc_29 : tensor<256x!tt.ptr<f32>, #blocked> loc(#loc57)
    %x_38 = tt.load %x_37, %acc_36 : tensor<256x!tt.ptr<f32>, #blocked> loc(#loc54)
#loc8 = loc("helpers_user.py":30:16)
#loc9 = loc("helpers_user.py":13:12)
#loc12 = loc("helpers_user.py":18:9)
#loc13 = loc("helpers_user.py":31:12)
#loc20 = loc("helpers_user.py":32:12)
#loc21 = loc("/work/wt-21/tests/snippets/jit_helpers.py":9:9)
#loc35 = loc("acc"(#loc8))
#loc38 = loc("x"(#loc12))
#loc39 = loc("acc"(#loc13))
#loc45 = loc("acc"(#loc20))
#loc46 = loc("x"(#loc21))
#loc49 = loc(callsite(#loc9 at #loc35))
#loc50 = loc(callsite(#loc38 at #loc39))
#loc54 = loc(callsite(#loc46 at #loc45))
#loc57 = loc(callsite(#loc9 at #loc50))
"""
JIT = "/work/wt-21/tests/snippets/jit_helpers.py"


def test_mlir_helper_chains():
    assert sm.mlir_lines(HELPER_TTGIR, "helpers_user.py") == {1: 13, 2: 13, 3: 32}
    sl = sm.stage_lines("ttgir", HELPER_TTGIR, "helpers_user.py")
    assert sl.calls == {1: (("", 13), ("", 30)), 2: (("", 13), ("", 18), ("", 31)), 3: ((JIT, 9), ("", 32))}
    assert sl.call_sites(2) == (18, 31) and sl.call_sites(3) == ()   # 32 is its own kernel line: the call
    m = sm.SourceMap("helpers_user.py", {"ttgir": sl})
    assert m.lines_for("source", 13)["ttgir"] == (1, 2)        # the helper's line: both calls
    assert m.lines_for("source", 31)["ttgir"] == (2,)          # the call: what it made
    assert m.lines_for("source", 18)["ttgir"] == (2,)
    assert m.lines_for("ttgir", 2)["source"] == (13,)          # a click follows the innermost line
    assert m.call_groups("ttgir", 13) == {(("", 18), ("", 31)): (2,), (("", 30),): (1,)}


HELPER_LLIR = """\
  %8 = load <2 x float>, ptr addrspace(1) %7, align 8, !dbg !29
!1 = !DIFile(filename: "helpers_user.py", directory: "")
!6 = distinct !DISubprogram(name: "helpers_kernel", linkageName: "helpers_kernel", scope: !1, file: !1, line: 24, type: !7, scopeLine: 24, spFlags: DISPFlagDefinition | DISPFlagOptimized, unit: !0)
!27 = distinct !DILexicalBlockFile(scope: !6, file: !1, discriminator: 0)
!29 = !DILocation(line: 13, column: 12, scope: !27, inlinedAt: !30)
!30 = !DILocation(line: 18, column: 9, scope: !27, inlinedAt: !31)
!31 = !DILocation(line: 31, column: 12, scope: !6)
"""


def test_llir_helper_chain():
    assert sm.llir_lines(HELPER_LLIR, "helpers_user.py") == {1: 13}
    assert sm.stage_lines("llir", HELPER_LLIR, "helpers_user.py").calls == {1: (("", 13), ("", 18), ("", 31))}


# PTX, Triton 3.9: a nested call, one `.loc` per frame, the outer ones first; the load's
# asm block numbers its second line 14 (not a real line of that stack).
HELPER_PTX_39 = """\
\t.loc\t1 31 12                         // helpers_user.py:31:12
\t.loc\t1 18 9, function_name $L__info_string0, inlined_at 1 31 12 // helpers_user.py:18:9
\t.loc\t1 13 20, function_name $L__info_string0, inlined_at 1 18 9 // helpers_user.py:13:20
\tmul.wide.s32 \t%rd12, %r23, 4;
\t.loc\t1 13 12, function_name $L__info_string0, inlined_at 1 18 9 // helpers_user.py:13:12
\t// begin inline asm
\t.loc\t1 13 12, function_name $L__info_string0, inlined_at 1 18 9 // helpers_user.py:13:12
\tmov.u32 %r9, 0x0;
\t.loc\t1 14 12, function_name $L__info_string0, inlined_at 1 18 9 // helpers_user.py:14:12
\tmov.u32 %r10, 0x0;
\t@%p5 ld.global.v2.b32 { %r9, %r10 }, [ %rd5 + 0 ];

\t// end inline asm
\t.loc\t1 31 5                          // helpers_user.py:31:5
\tadd.f32 \t%r29, %r27, %r28;
}
\t.file\t1 "helpers_user.py"
"""
# PTX, Triton 3.6: no inlined_at; the stack is in the comment (names only).
HELPER_PTX_36 = """\
\t.loc\t1 13 25                         // helpers_user.py:13:25 @[ helpers_user.py:30:37 ]
\tmul.wide.s32 \t%rd12, %r23, 4;
\t.loc\t2 9 16                          // jit_helpers.py:9:16 @[ helpers_user.py:32:54 ]
\tadd.s64 \t%rd5, %rd9, %rd12;
\t.loc\t1 13 25                         // helpers_user.py:13:25 @[ helpers_user.py:31:40 ]
\tmul.wide.s32 \t%rd13, %r24, 4;
}
\t.file\t1 "helpers_user.py"
\t.file\t2 "/work/wt-21/tests/snippets/jit_helpers.py"
"""


def test_ptx_helper_chains_39():
    got = sm.ptx_chains(HELPER_PTX_39, "helpers_user.py")
    nested = (("", 13), ("", 18), ("", 31))
    assert got == {4: nested, 8: nested, 10: nested, 11: nested, 15: (("", 31),)}
    # SASS prints the stack, raw: the asm-numbered 14 stands for the block's line 13
    hints = sm.sass_hints(HELPER_PTX_39, "helpers_user.py")
    assert hints[(("helpers_user.py", 14), ("helpers_user.py", 18), ("helpers_user.py", 31))] == (nested,)


def test_ptx_helper_chains_36():
    got = sm.ptx_chains(HELPER_PTX_36, "helpers_user.py")
    assert got == {2: (("", 13), ("", 30)), 4: ((JIT, 9), ("", 32)), 6: (("", 13), ("", 31))}
    # its SASS will say only `line 13`: two calls, so the helper's line and no call site
    hints = sm.sass_hints(HELPER_PTX_36, "helpers_user.py")
    assert hints[(("helpers_user.py", 13),)] == ((("", 13), ("", 30)), (("", 13), ("", 31)))
    sass = f"""\
\t//## File "helpers_user.py", line 13
        /*0210*/              @!P2 LDG.E.64 R8, desc[UR4][R22.64] ;
\t//## File "{JIT}", line 9
        /*0230*/              @!P3 LDG.E.64 R10, desc[UR4][R18.64] ;
"""
    assert sm.sass_chains(sass, "helpers_user.py", hints) == {2: (("", 13),), 4: ((JIT, 9), ("", 32))}


def test_sass_helper_stack_gi():
    """nvdisasm -gi: one `//##` line per frame, innermost first."""
    sass = """\
\t//## File "helpers_user.py", line 13 inlined at "helpers_user.py", line 18
\t//## File "helpers_user.py", line 18 inlined at "helpers_user.py", line 31
\t//## File "helpers_user.py", line 31
        /*0030*/                   LDC.64 R18, c[0x0][0x210] ;
\t//## File "helpers_user.py", line 25
        /*0040*/                   S2R R0, SR_CTAID.X ;
"""
    assert sm.sass_chains(sass, "helpers_user.py") == {4: (("", 13), ("", 18), ("", 31)), 6: (("", 25),)}
    assert sm.sass_lines(sass, "helpers_user.py") == {4: 13, 6: 25}

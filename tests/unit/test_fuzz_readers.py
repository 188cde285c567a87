"""Every reader of job text (inspectors/read, inspectors/explain) fed random and hostile text.

A compile job is the user's: every stage text, error text and output it sends back is untrusted,
and the server parses it in its own process, holding the GIL. One regex that backtracks
quadratically on one long line (the old `_PTX_INSN_RE` of insight.py on a 600,000-char dotted
token, put in the PTX with `tl.inline_asm_elementwise`) froze every session for minutes. So
each reader below must be linear in its input: each call has a time budget per MB
(`_budget`), and may only raise the error its docstring documents.

The calls run in the main thread (a regex holding the GIL cannot be interrupted anyway): the
inputs are sized so that a quadratic reader takes well over its budget (tens of seconds) while a
linear one takes a fraction of a second. `test_old_ptx_insn_regex_fails_the_budget` checks that
the budget does catch the regex of the incident.
"""
from __future__ import annotations

import gzip
import json
import random
import re
import time
from pathlib import Path

import pytest

from inspectors.base.result import KernelResult
from inspectors.explain import coalescing, coarsening, diff, insight, layout_view, passdiff, profile, threadmap
from inspectors.explain import vectorization, version_notes
from inspectors.read import callsites, fxgraph, inductor, layouts, lessonfile, lexers, lines_asm, lines_llvm, lines_mlir, memops, mlir, ncu_source, passes, ptxops, resources, sourcemap, toolfail, tma, userfile, warpspec

FIXTURES = next(p / "fixtures" for p in Path(__file__).resolve().parents if (p / "fixtures").is_dir())
FILE = "vector_add.py"

# Seconds a call may take: 2 s + 3 s per MB of input (a slow, shared 2-core box; the fixed
# readers take well under a tenth of that, see the report in each failure message), or, on a
# machine slower than that at the moment, 100 times a plain linear pass over the same text timed
# just before (its lines split into words): the budget is a ratio within one run, not a speed
# target. A quadratic reader is still far past it: hundreds of seconds at these sizes.
BASE_S, PER_MB_S, PER_PASS = 2.0, 3.0, 100


def _budget(text: str) -> float:
    t = time.perf_counter()
    for line in text.splitlines():
        line.split()
    return BASE_S + max(PER_MB_S * len(text) / 1e6, PER_PASS * (time.perf_counter() - t))


# --------------------------------------------------------------------------- inputs

def _fixture_text(name: str) -> str:
    return (FIXTURES / name).read_text()


def _stage(kernel: str, stage: str) -> str:
    return json.loads((FIXTURES / "insight" / f"{kernel}.kernel.json").read_text())["stages"][stage]


_VALID = {}


def valid(stage: str) -> str:
    """Real compiler output of each kind, from tests/fixtures."""
    if stage not in _VALID:
        _VALID[stage] = {
            "ptx": lambda: _fixture_text("vadd_aligned_sm90.ptx"),
            "sass": lambda: _fixture_text("vadd_aligned_sm90.sass"),
            "ttir": lambda: _stage("matmul_sm90", "ttir"),
            "ttgir": lambda: _stage("matmul_sm90", "ttgir"),
            "llir": lambda: _stage("matmul_sm90", "llir"),
            "passes": lambda: gzip.decompress((FIXTURES / "passes" / "vector_add_sm90_triton39.txt.gz")
                                              .read_bytes()).decode(),
            "res": lambda: _fixture_text("resources/matmul_sm90.res-usage.txt"),
            "ptxas": lambda: _fixture_text("resources/spill_sm90.ptxas.txt"),
        }[stage]()
    return _VALID[stage]


def _inject(text: str, line: str) -> str:
    """`line` put in the middle of `text`."""
    lines = text.splitlines()
    k = len(lines) // 2
    return "\n".join(lines[:k] + [line] + lines[k:]) + "\n"


def _rep(unit: str, size: int) -> str:
    return unit * max(1, size // len(unit))


def _nest(open_: str, close: str, size: int, inner: str = "x") -> str:
    n = max(1, size // (len(open_) + len(close)))
    return open_ * n + inner + close * n


def payloads(size: int) -> dict[str, str]:
    """Hostile single-line payloads of about `size` characters, by name."""
    rng = random.Random(size)
    return {
        "dotted": "a" + _rep(".a", size),                      # the incident's token
        "dotted_upper": "A" + _rep(".A", size),
        "dotted_colon": "a" + _rep(".a:", size),
        "word": _rep("a", size),
        "digits_x": _rep("1x", size),
        "percent": _rep("%", size),
        "at": _rep("@", size),
        "brace": _rep("{", size),
        "bracket": _rep("[", size),
        "paren": _rep("(", size),
        "nest_paren": _nest("(", ")", size),
        "nest_brace": _nest("{", "}", size),
        "nest_angle": _nest("<", ">", size),
        "tabs": _rep("\t", size) + "x",
        "spaces_semis": _rep(" ;", size) + "x",
        "slashes": _rep("a/", size),
        "colons": _rep("a:1", size),
        "quotes_bs": '"' + _rep("\\", size),
        "quote_pairs": _rep('"a"', size),
        "loc_open": _rep('loc("a"', size) + ")",
        "loc_nest": _nest('loc("a"(', "))", size),
        "callsite_nest": _nest("callsite(", " at #loc)", size, "#loc"),
        "ld_prefix": _rep("ld.global ", size),
        "pred_ld": _rep("@%p1 ld.global.v4.b32 ", size),
        "op_paren": _rep(" ('a' operation: @", size),
        "stars": _rep(" ***", size) + " x",
        "tensor": "tensor<" + _rep("1x", size),
        "tensor_many": _rep("tensor<1x1xf32", size),
        "dollar_label": _rep("$L__a", size),
        "random": "".join(chr(rng.randrange(1, 0x2FF)) for _ in range(size)),
        "random_ascii": "".join(rng.choice("a.%@{}[]()<>\"\\:;,# \t0x1_/*!=-") for _ in range(size)),
    }


def hostile_texts(size: int, prefixes: tuple[str, ...], stage: str | None) -> dict[str, str]:
    """Each payload behind each line start the reader cares about, plus the payload injected
    as one line into the reader's real input (`stage`)."""
    out = {}
    for name, p in payloads(size).items():
        for k, prefix in enumerate(("",) + prefixes):
            out[f"{name}/{k}"] = prefix + p
        if stage:
            out[f"{name}/in_{stage}"] = _inject(valid(stage), (prefixes[0] if prefixes else "") + p)
    return out


def many_lines(n: int) -> str:
    return "x\n" * n


# --------------------------------------------------------------------------- the readers

_KERNEL = None


def _kernel_with(stages: dict) -> KernelResult:
    global _KERNEL
    if _KERNEL is None:
        _KERNEL = KernelResult.from_json(json.loads((FIXTURES / "insight" / "matmul_sm90.kernel.json").read_text()))
    d = _KERNEL.to_json()
    d.update(stages=stages, cubin="")          # no cubin: no cuobjdump subprocess, only text readers
    return KernelResult.from_json(d)


def _lex(alias):
    def run(text):
        for _ in lexers.lexer_for(alias).get_tokens(text):
            pass
    return run


_LESSON_HEAD = '+++\ntitle = "t"\n+++\n## Step\n```step\nlook = "x"\n```\n'
_SIG = "tt.func public @k("
PTX_PREFIXES = ("\t@%p1 ", "\t.loc\t1 27 9 // ", "\tld.global", "$L__BB0_1: ", "\t.reg .b32 \t%")
SASS_PREFIXES = ("        /*0180*/   ", "        /*0180*/   @!P0 LDG", "\t//## File \"", "//-------- .text.")
MLIR_PREFIXES = ("#loc1 = loc(", "    %1 = tt.load ", "tt.func public @k(", "#blocked = #ttg.blocked<{",
                 "    %0 = arith.constant 1 : ")
LLIR_PREFIXES = ("!1 = !DIFile(filename: ", "!2 = !DILocation(", "  %8 = shl i32 %7, 10, !dbg !")
ERRORS = (ValueError,)          # documented parse errors (NcuCsvError, LessonFileError are ValueErrors)
NONE = ()

# (name, call(text), exceptions the reader may raise on garbage, line starts it reacts to, real input kind)
READERS = [
    # inspectors/read
    ("callsites.function_at", lambda t: callsites.function_at(t, 3), NONE, ("def f():\n    return ",), None),
    ("callsites.describe", lambda t: callsites.describe((("", 2), ("", 1)), t), NONE, ("def f(", ), None),
    ("fxgraph.graph_fragments", fxgraph.graph_fragments, NONE,
     ("# Graph fragment:\n#   %add : Tensor \"", "# Graph fragment:\n#   return "), None),
    ("fxgraph.parse_node", fxgraph.parse_node, NONE, ("%a : Tensor \"f32[", "%a : Tensor \"f32[1]\" = call_function[target="),
     None),
    ("inductor.parse_wrapper", inductor.parse_wrapper, NONE,
     ("# kernel path: ", "# Topologically Sorted Source Nodes: [", "k = async_compile.triton('k', '''"), None),
    ("inductor.parse_inductor_meta", inductor.parse_inductor_meta, NONE, ("inductor_meta={'a': ",), None),
    ("inductor.split_name", inductor.split_name, NONE, ("triton_poi_fused_",), None),
    ("layouts.parse_blocked", layouts.parse_blocked, NONE, ("#ttg.blocked<{",), None),
    ("layouts.parse_tensor_type", layouts.parse_tensor_type, NONE, ("tensor<",), None),
    ("layouts.parse_layout", layouts.parse_layout, NONE,
     ("#ttg.slice<{dim = 0, parent = ", "#ttg.linear<{register = [", "#ttg.blocked<{"), None),
    ("lessonfile.parse", lambda t: lessonfile.parse(t, "x.md", "x"), ERRORS,
     ("+++\n", _LESSON_HEAD, _LESSON_HEAD + "### Ask the class\n- "), None),
    ("lessonfile.fill", lambda t: lessonfile.fill(t, {"a": "1"}), NONE, ("{{", "\\{{ a"), None),
    ("lessonfile.prose_parts", lessonfile.prose_parts, NONE, ("{{ panel ", "  "), None),
    ("lexers.mlir", _lex("mlir"), NONE, (), None),       # (pygments is slow per token: no more variants)
    ("lexers.sass", _lex("sass"), NONE, (), None),
    ("lines_asm.ptx_chains", lambda t: lines_asm.ptx_chains(t, FILE), NONE, PTX_PREFIXES, "ptx"),
    ("lines_asm.sass_hints", lambda t: lines_asm.sass_hints(t, FILE), NONE, PTX_PREFIXES[:2], "ptx"),
    ("lines_asm.sass_chains", lambda t: lines_asm.sass_chains(t, FILE), NONE, SASS_PREFIXES, "sass"),
    ("lines_asm.amdgcn_chains", lambda t: lines_asm.amdgcn_chains(t, FILE), NONE,
     ("\t.loc\t1 25 15 ; ", "\t.file\t2 \"", "\tglobal_load_dwordx4 "), None),
    ("lines_llvm.llir_chains", lambda t: lines_llvm.llir_chains(t, FILE), NONE, LLIR_PREFIXES, "llir"),
    ("lines_mlir.mlir_chains", lambda t: lines_mlir.mlir_chains(t, FILE), NONE,
     ("#loc1 = loc(", "    %1 = tt.load %0 loc(", "scf.for {"), "ttgir"),
    ("sourcemap.build", lambda t: sourcemap.build({s: t for s in ("ttir", "llir", "ptx", "sass", "amdgcn")}, FILE),
     NONE, PTX_PREFIXES[1:2] + SASS_PREFIXES[2:3] + MLIR_PREFIXES[:1], None),
    ("memops.ptx_memops", memops.ptx_memops, NONE, PTX_PREFIXES[:3], "ptx"),
    ("memops.sass_memops", memops.sass_memops, NONE, SASS_PREFIXES[:2], "sass"),
    ("memops.amdgcn_memops", memops.amdgcn_memops, NONE, ("\tglobal_load", "\tds_read_b"), None),
    ("mlir.parse", mlir.parse, NONE, MLIR_PREFIXES, "ttgir"),
    ("mlir.parse_ttir_args", mlir.parse_ttir_args, NONE, (_SIG, _SIG + "%a: i32, "), "ttir"),
    ("ncu_source.parse", ncu_source.parse, ERRORS, ('"Address","Source"\n"0x10","', '"Address","Source"\n'), None),
    ("passes.parse_dump", passes.parse_dump, NONE,
     ("// -----// IR Dump Before X: ", "// -----// IR Dump Before X (y) ('builtin.module' operation", 
      "; *** IR Dump After X on ", "# *** IR Dump After X (", "// -----// SoftwarePipeliner internal IR Dump After: ",
      "define void @k("), "passes"),
    ("ptxops.families", ptxops.families, NONE, PTX_PREFIXES[:3], "ptx"),
    ("ptxops.main_loop", ptxops.main_loop, NONE, ("$L__BB0_1:\n\t", "\tbra \t"), "ptx"),
    ("resources.ptx_registers", resources.ptx_registers, NONE, PTX_PREFIXES[4:], "ptx"),
    ("resources.parse_res_usage", resources.parse_res_usage, ERRORS, (" Function k:\n  REG:", " Function "), "res"),
    ("resources.parse_ptxas_log", resources.parse_ptxas_log, ERRORS,
     ("ptxas info    : Used 1 registers", "ptxas info    : Compiling entry function '"), "ptxas"),
    ("resources.ptx_local_traffic", resources.ptx_local_traffic, NONE, ("\tld.local",), "ptx"),
    ("resources.sass_local_traffic", resources.sass_local_traffic, NONE, ("        /*0180*/   STL",), "sass"),
    ("tma.tma_copies", tma.tma_copies, NONE,
     ("    ttng.async_tma_copy_global_to_local %a[", "ttng.async_tma_copy_local_to_global %d : !tt.tensordesc<128x"),
     "ttgir"),
    ("warpspec.warp_specializations", warpspec.warp_specializations, NONE,
     ("ttg.warp_specialize(%a) attributes {requestedRegisters = array<i32: ", "default {\n",
      "partition0(%a: i32) num_warps(1) {\n"), "ttgir"),
    ("toolfail.parse_ptxas_error", toolfail.parse_ptxas_error, NONE,
     ("PTXAS error: `ptxas` failed with error code ", "ptxas\nRepro command: "), None),
    ("userfile.is_user_file", lambda t: userfile.is_user_file(t, FILE), NONE, ("/x/",), None),
    # inspectors/explain
    ("insight.summarize_stage", lambda t: [insight.summarize_stage(s, t)
                                           for s in ("ptx", "sass", "ttgir", "llir", "amdgcn")], NONE,
     PTX_PREFIXES[:1] + SASS_PREFIXES[:1] + MLIR_PREFIXES[1:2], "ptx"),
    ("insight.analyze", lambda t: insight.analyze(_kernel_with({"ttgir": t, "ptx": t, "llir": t}),
                                                  {"ttgir": t, "ptx": t, "llir": t}, FILE), NONE,
     PTX_PREFIXES[:2] + MLIR_PREFIXES[1:2], "ptx"),
    ("coalescing.estimate", lambda t: coalescing.estimate(t, ["x", "n"]), NONE, PTX_PREFIXES[:3], "ptx"),
    ("coarsening.widths_in_ptx", coarsening.widths_in_ptx, NONE, ("\tld.global.",), "ptx"),
    ("diff.normalize", lambda t: [diff.normalize(s, t) for s in ("ptx", "sass", "ttgir", "llir", "amdgcn")], NONE,
     PTX_PREFIXES[:1] + MLIR_PREFIXES[1:2], "ttgir"),
    ("diff.diff_stage", lambda t: diff.diff_stage("ptx", t, valid("ptx")), NONE, PTX_PREFIXES[:1], "ptx"),
    ("passdiff.diff_rows", lambda t: passdiff.diff_rows(valid("ttgir"), t, "ttgir", True), NONE,
     MLIR_PREFIXES[1:2], "ttgir"),
    ("profile.sass_instructions", profile.sass_instructions, NONE, SASS_PREFIXES[:1], "sass"),
    ("threadmap.ptx_addresses", lambda t: threadmap.ptx_addresses(t, ["x", "n"]), NONE, PTX_PREFIXES[:3], "ptx"),
    ("threadmap.tensor_mappings", threadmap.tensor_mappings, NONE, MLIR_PREFIXES, "ttgir"),
    ("vectorization.analyze", vectorization.analyze, NONE, MLIR_PREFIXES, "ttgir"),
    ("layout_view.module_layouts", layout_view.module_layouts, NONE, MLIR_PREFIXES, "ttgir"),
    ("version_notes.small_tensor_copies", lambda t: version_notes.small_tensor_copies(t, "3.9.0"), NONE,
     MLIR_PREFIXES[3:4] + ("    %1 = tt.load %0 : tensor<",), "ttgir"),
]


# --------------------------------------------------------------------------- the tests

def _timed(call, text: str, allowed: tuple) -> float:
    """Seconds `call(text)` took; any exception but the documented ones fails the test."""
    t = time.perf_counter()
    try:
        call(text)
    except allowed:
        pass
    return time.perf_counter() - t


# Sizes: quadratic readers take well over their budget at this size (the old regexes took
# 1-3 s at 10 KB and over 6 s at 40 KB), the linear ones a few milliseconds.
HOSTILE_SIZE = 100_000


@pytest.mark.parametrize("name,call,allowed,prefixes,stage", READERS, ids=[r[0] for r in READERS])
def test_hostile_lines(name, call, allowed, prefixes, stage):
    slow = []
    for kind, text in hostile_texts(HOSTILE_SIZE, prefixes, stage).items():
        took = _timed(call, text, allowed)
        if took > _budget(text):
            slow.append(f"{kind}: {took:.2f} s for {len(text):,} chars")
    assert not slow, f"{name} is not linear: " + "; ".join(slow)


BIG = {
    "dotted_1mb": "\t" + "a" + ".a" * 500_000,
    "ld_dotted_1mb": "\t@%p1 ld.global" + ".a" * 500_000,
    "loc_comment_1mb": "\t.loc\t1 27 9 // " + "a" * 1_000_000,
    "sass_blanks_1mb": "        /*0180*/   " + " \t" * 500_000 + "x",
    "million_lines": many_lines(1_000_000),
}
BIG_READERS = ["insight.summarize_stage", "memops.ptx_memops", "lines_asm.ptx_chains", "lines_asm.sass_chains",
               "ptxops.families", "coalescing.estimate", "threadmap.ptx_addresses", "mlir.parse",
               "lines_mlir.mlir_chains", "passes.parse_dump", "profile.sass_instructions"]
# (diff.normalize is linear but runs five stages' dozen substitutions per line: ~15 s for a million
# lines here; it is covered by test_hostile_lines)


@pytest.mark.parametrize("name", BIG_READERS)
def test_one_megabyte(name):
    _name, call, allowed, _p, _s = next(r for r in READERS if r[0] == name)
    for kind, text in BIG.items():
        took = _timed(call, text, allowed)
        assert took < _budget(text), f"{name} on {kind}: {took:.2f} s for {len(text):,} chars"


def test_random_bytes_and_valid_text():
    """Random bytes read as text, and each real fixture, through every reader: no exception
    but the documented ones."""
    rng = random.Random(7)
    blob = bytes(rng.randrange(256) for _ in range(200_000)).decode("latin-1")
    for name, call, allowed, _p, stage in READERS:
        for text in (blob, valid(stage) if stage else ""):
            assert _timed(call, text, allowed) < _budget(text), name


def test_deep_nesting_is_not_a_recursion_error():
    deep = 100_000
    assert isinstance(layouts.parse_layout("#ttg.slice<{dim = 0, parent = " * deep + "#blocked" + "}>" * deep),
                      (layouts.Slice, layouts.Other))
    assert layouts.parse_layout("#a", {"#a": "#ttg.slice<{dim = 0, parent = #a}>"}) is not None   # names itself
    ttgir = "\n".join([f"#loc{i} = loc(#loc{i + 1})" for i in range(5000)] +
                      ['#loc5000 = loc("vector_add.py":3:1)', "  %0 = tt.foo loc(#loc0)",
                       '  %1 = tt.bar loc(' + '"x"(' * deep + '"vector_add.py":4:1' + ")" * (deep + 1)])
    lines_mlir.mlir_chains(ttgir, FILE)
    with pytest.raises(lessonfile.LessonFileError, match="nested too deeply"):
        lessonfile.parse(_LESSON_HEAD.replace('look = "x"', "look = " + "[" * deep), "x.md", "x")
    assert callsites.function_at("x = " + "(" * deep, 1) is None
    assert callsites.function_at("a" + ".a" * deep, 1) is None


def test_old_ptx_insn_regex_fails_the_budget():
    """The budget catches the incident: the old regex on a 600 KB dotted token runs far past
    it (cut short here: it is timed on a 100 KB token, the time scaled by (600/100)^2 since it
    is quadratic), and the fixed one is well within it on the full 600 KB."""
    old = re.compile(r"^\s*(?:@!?%\w+\s+)?(?P<op>[a-z][\w]*)(?:\.[\w:]+)*\b[^:]*;")
    token = "a" + ".a" * 300_000
    t = time.perf_counter()
    old.match(token[:100_000])
    projected = (time.perf_counter() - t) * 36
    assert projected > 5 * _budget(token), projected
    took = _timed(lambda t: insight.summarize_stage("ptx", t), token, ())
    assert took < _budget(token) / 5, took

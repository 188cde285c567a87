"""The pass pipeline: the dump parser on inline snippets and on real dumps of vector_add
(triton 3.9 from this machine, triton 3.6 from the GPU machine), and the worker's
`pass_dump` flag end to end."""
import gzip
import json

import pytest

from conftest import FIXTURES, ROOT
from inspectors.read import passes
from inspectors.explain import passdiff
from inspectors.base.result import CompileRequest, CompileResult, KernelResult

PASS_DUMPS = FIXTURES / "passes"


def _dump(version: str) -> str:
    return gzip.decompress((PASS_DUMPS / f"vector_add_sm90_triton{version}.txt.gz").read_bytes()).decode()


# ------------------------------------------------------------------------------ inline snippets

MLIR_BEFORE = """\
/work/main/.venv/lib/python3.11/site-packages/triton/knobs.py:504: UserWarning: something
// -----// IR Dump Before InlinerPass: inline{default-pipeline=canonicalize max-iterations=4 } ('builtin.module' operation) //----- //
module {
  %0 = arith.constant 1 : i32
  %1 = arith.constant 1 : i32
}

// -----// IR Dump Before CSEPass: cse ('builtin.module' operation) //----- //
module {
  %0 = arith.constant 1 : i32
  %1 = arith.constant 1 : i32
}

// -----// IR Dump Before Canonicalizer (canonicalize) ('tt.func' operation: @k) //----- //
module {
  %0 = arith.constant 1 : i32
}
"""


def test_mlir_before_dumps_become_ir_after_each_pass():
    steps = passes.parse_dump(MLIR_BEFORE)
    assert [(s.name, s.flag, s.changed) for s in steps] == [
        ("input", "", None),                      # the first dump is the front end's IR
        ("InlinerPass", "inline", False),         # its result is the dump before CSE: the same text
        ("CSEPass", "cse", True),                 # one constant fewer in the dump before Canonicalizer
        ("Canonicalizer", "canonicalize", None),  # last one (older MLIR spelling): its result is not dumped
    ]
    assert steps[3].scope == "tt.func @k"
    assert "UserWarning" not in passes.ir_after(steps, 0)
    assert passes.ir_after(steps, 1) == passes.ir_after(steps, 0)   # unchanged: the text is the previous one
    assert steps[1].ir == ""                                         # ... and not stored twice
    assert passes.ir_after(steps, 2).count("arith.constant") == 1
    assert passes.ir_before(steps, 2).count("arith.constant") == 2
    assert passes.ir_after(steps, 3) == ""


LLVM_AFTER = """\
; *** IR Dump After AlwaysInlinerPass on [module] ***
; ModuleID = 'LLVMDialectModule'
source_filename = "LLVMDialectModule"

define void @k(ptr %0) {
  %2 = add i32 1, 2
  %3 = add i32 %2, 0
  ret void
}

!0 = !{}
Running pass: InstCombinePass on k (3 instructions)
Running analysis: DominatorTreeAnalysis on k
; *** IR Dump After InstCombinePass on k ***
define void @k(ptr %0) {
  ret void
}

; *** IR Dump After SimplifyCFGPass on k ***
define void @k(ptr %0) {
  ret void
}

*** IR Dump After Pre-ISel Intrinsic Lowering (pre-isel-intrinsic-lowering) ***
source_filename = "LLVMDialectModule"

define void @k(ptr %0) {
  ret void
}

!0 = !{}
# *** IR Dump After NVPTX DAG->DAG Pattern Instruction Selection (nvptx-isel) ***:
# Machine code for function k: IsSSA
  RET
# End machine code for function k.

# *** IR Dump After Register Coalescer (register-coalescer) ***:
# Machine code for function k: NoPHIs
  RET
# End machine code for function k.
"""


def test_llvm_function_dumps_are_spliced_into_the_module():
    steps = passes.parse_dump(LLVM_AFTER)
    assert [(s.level, s.name, s.changed) for s in steps] == [
        ("llvm", "AlwaysInlinerPass", None),          # nothing of its level before it
        ("llvm", "InstCombinePass", True),
        ("llvm", "SimplifyCFGPass", False),
        ("llvm-cg", "Pre-ISel Intrinsic Lowering", False),   # the same module, printed without ; ModuleID
        ("mir", "NVPTX DAG->DAG Pattern Instruction Selection", None),
        ("mir", "Register Coalescer", True),
    ]
    after = passes.ir_after(steps, 1)
    # the function pass printed only @k; the step holds the whole module with @k replaced
    assert after.startswith("; ModuleID") and "!0 = !{}" in after and "add i32" not in after
    assert "Running pass" not in after and "Running analysis" not in after
    assert steps[4].flag == "nvptx-isel" and steps[4].stage == "mir"
    assert steps[3].label == "Pre-ISel Intrinsic Lowering (pre-isel-intrinsic-lowering)"


def test_internal_pipeliner_dumps_do_not_replace_the_module():
    text = MLIR_BEFORE.replace("// -----// IR Dump Before CSEPass", "// -----// SoftwarePipeliner internal IR Dump After: "
                               "LowerLoops\nscf.for {\n}\n// -----// IR Dump Before CSEPass")
    steps = passes.parse_dump(text)
    names = [s.name for s in steps]
    assert names == ["input", "SoftwarePipeliner: LowerLoops", "InlinerPass", "CSEPass", "Canonicalizer"]
    assert steps[1].scope == "internal" and steps[1].changed is None
    assert steps[2].changed is False         # compared with the module before it, not the loop-only dump


def test_fallback_diff_rows_pair_lines_side_by_side():
    rows = passdiff._difflib_rows("a\nb\nc\n", "a\nB\nc\nd\n")
    assert [(r.kind, r.a, r.b) for r in rows] == [("equal", 1, 1), ("change", 2, 2), ("equal", 3, 3),
                                                  ("add", None, 4)]
    assert passdiff.diff_rows("x\n", "y\n", "ttgir")          # the shared diff view or the fallback


# ------------------------------------------------------------------------------ real dumps

@pytest.mark.parametrize("version, total, changed", [("39", 272, 38), ("36", 263, 37)])
def test_vector_add_pass_list(version, total, changed):
    steps = passes.parse_dump(_dump(version))
    s = passes.summarize(steps)
    assert (s.total, s.changed) == (total, changed)
    assert set(s.by_level) == {"mlir", "llvm", "llvm-cg", "mir"}
    by_flag = {}
    for st in steps:
        by_flag.setdefault(st.flag, []).append(st)
    # the passes that make vector add what it is
    assert by_flag["convert-triton-to-tritongpu"][0].changed is True
    coalesce = by_flag["tritongpu-coalesce"][0]
    assert coalesce.changed is True and coalesce.stage == "ttgir"
    assert "sizePerThread = [4]" in passes.ir_after(steps, coalesce.index)      # 128-bit accesses per thread
    assert "sizePerThread = [4]" not in passes.ir_before(steps, coalesce.index)
    assert by_flag["convert-triton-gpu-to-llvm"][0].changed is True
    assert by_flag["inline"][0].changed is False
    assert steps[0].name == "input" and steps[0].stage == "ttir"
    first_llvm = next(st for st in steps if st.level == "llvm")
    assert first_llvm.changed is None and "define" in first_llvm.ir
    isel = by_flag["nvptx-isel"][0]
    assert isel.level == "mir" and "Machine code for function add_kernel" in isel.ir
    # every changed step can be shown against the IR before it
    for st in steps:
        if st.changed:
            assert passes.ir_after(steps, st.index) != passes.ir_before(steps, st.index)


def test_pass_steps_round_trip_through_json():
    steps = passes.parse_dump(MLIR_BEFORE)
    k = KernelResult(name="k", target="cuda:90", options={}, args=(), stages={}, passes=steps)
    back = CompileResult.from_json(json.loads(json.dumps(CompileResult(kernels=(k,)).to_json()))).kernels[0]
    assert back.passes == steps


# ------------------------------------------------------------------------------ through the worker

VADD = (ROOT / "kernels" / "vector_add.py").read_text()


def test_worker_returns_the_passes_only_when_asked(engine):
    req = dict(source=VADD, filename="vector_add.py", target="cuda:90", kernel="add_kernel",
               signature="*fp32:16, *fp32:16, *fp32:16, i32:16, 1024", sass=False)
    with_dump = engine.compile(CompileRequest(**req, pass_dump=True))
    assert with_dump.ok, with_dump.error
    steps = with_dump.kernels[0].passes
    assert len(steps) > 200 and any(s.flag == "tritongpu-coalesce" and s.changed for s in steps)
    assert "IR Dump" not in with_dump.output                   # the dump went to its own file
    # the same kernel again: the knobs were put back, so no dump and Triton's cache is used
    plain = engine.compile(CompileRequest(**req))
    assert plain.ok and plain.kernels[0].passes == ()
    assert plain.kernels[0].stages["ptx"] == with_dump.kernels[0].stages["ptx"]


def test_a_compile_error_reads_the_same_with_the_dump_on(engine, snippet):
    req = dict(source=snippet("dot_mismatch.py"), filename="dot_mismatch.py", target="cuda:90", sass=False)
    plain = engine.compile(CompileRequest(**req))
    dumped = engine.compile(CompileRequest(**req, pass_dump=True))
    assert plain.error and dumped.error
    assert (dumped.error.kind, dumped.error.line, dumped.error.message) == \
        (plain.error.kind, plain.error.line, plain.error.message)

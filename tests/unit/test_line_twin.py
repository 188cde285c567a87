"""A kernel compiled without line info (a library sets TRITON_DISABLE_LINE_INFO at import, as
unsloth_zoo does) is shown as the GPU compiles it, no `.loc` in its PTX, and still mapped line by
line through a twin compiled with line info whose instruction stream is the same
(inspectors/read/line_twin.py): every memory op on the line a line-info compile gives it. A twin
whose instructions differ maps nothing; the job's environment ends with the job."""
import dataclasses
import os

import pytest

from conftest import SNIPPETS
from inspectors.base.result import CompileRequest
from inspectors.read import line_twin
from inspectors.session import insights

PTX_REAL = """//
.visible .entry k(
\t.param .u64 k_param_0
)
{
\tmov.u32 \t%r1, %ctaid.x;
\tld.global.v4.b32 \t{%r2, %r3, %r4, %r5}, [%rd1];
\tret;
}
"""
PTX_TWIN = """//
.visible .entry k(
\t.param .u64 k_param_0
)
{
\t.loc\t1 6 0                           // k.py:6:0
$L__func_begin0:
$L__tmp0:
\t.loc\t1 7 11                          // k.py:7:11
\tmov.u32 \t%r1, %ctaid.x;
\t.loc\t1 9 9                          // k.py:9:9
\tld.global.v4.b32 \t{%r2, %r3, %r4, %r5}, [%rd1];
\tret;
$L__tmp1:
$L__func_end0:
}
\t.file\t1 "/tmp/k.py"
\t.section\t.debug_abbrev
\t{
.b8 1                                   // Abbreviation Code
\t}
\t.section\t.debug_macinfo\t{\t}
"""


def test_ptx_lines_pair_when_only_line_info_differs():
    pairs = line_twin.align("ptx", PTX_REAL, PTX_TWIN)
    assert pairs[10] == 6 and pairs[12] == 7 and pairs[13] == 8      # mov, ld, ret
    assert line_twin.align("ptx", PTX_REAL.replace("v4.b32", "v2.b32"), PTX_TWIN) is None


def test_mlir_pairs_across_value_names_and_locs():
    real = "#loc = loc(unknown)\nmodule {\n  %0 = tt.get_program_id x : i32 loc(#loc)\n  %1 = arith.addi %0, %0 : i32 loc(#loc)\n}\n"
    twin = ('#loc = loc("/k.py":6:1)\n#loc3 = loc("pid"(#loc))\nmodule {\n'
            '  %pid = tt.get_program_id x : i32 loc(#loc3)\n  %1 = arith.addi %pid, %pid : i32 loc(callsite(#loc3 at #loc))\n}\n')
    assert line_twin.align("ttgir", real, twin) == {3: 2, 4: 3, 5: 4, 6: 5}
    assert line_twin.align("ttgir", real.replace("addi", "muli"), twin) is None


@pytest.fixture(scope="module")
def compiled(engine):
    source = (SNIPPETS / "line_info_off.py").read_text()
    off = engine.compile(CompileRequest(source=source, filename="line_info_off.py", analysis_s=30), timeout=300)
    on_source = source.replace('os.environ["TRITON_DISABLE_LINE_INFO"] = "1"', 'os.environ["TRITON_DISABLE_LINE_INFO"] = "0"')
    on = engine.compile(CompileRequest(source=on_source, filename="line_info_off.py", analysis_s=30), timeout=300)
    return off, on


def test_every_memory_op_is_mapped_as_with_line_info(compiled):
    off, on = compiled
    assert off.ok and on.ok, (off.error, on.error)
    assert len(off.kernels) == len(on.kernels) == 2
    for k_off, k_on in zip(off.kernels, on.kernels):
        assert ".loc" not in k_off.stages["ptx"] and ".loc" in k_on.stages["ptx"]        # the GPU's PTX
        assert set(k_off.line_twin) == {"ttir", "ttgir", "llir", "ptx"} and not k_on.line_twin
        ops_off = [(r.kind, r.vector, r.python_line) for r in insights.insight(k_off, "line_info_off.py").memory_ops]
        ops_on = [(r.kind, r.vector, r.python_line) for r in insights.insight(k_on, "line_info_off.py").memory_ops]
        assert ops_off == ops_on and all(line is not None for _, _, line in ops_off)
        smap_off = insights.insight(k_off, "line_info_off.py").source_map.python_to_stage()
        assert {22, 23, 25} <= set(smap_off) and all("ttgir" in smap_off[n] and "ptx" in smap_off[n] for n in (22, 23, 25))


def test_a_twin_that_differs_maps_nothing_and_says_why(compiled):
    off, _ = compiled
    kernel = off.kernels[0]
    differs = dataclasses.replace(kernel, line_twin=line_twin.twins(
        kernel.stages, {**kernel.line_twin, "ptx": kernel.line_twin["ptx"].replace("ld.global", "ld.global.nc")}),
        analysis={})
    assert "differs" in differs.line_twin and "not mapped" in line_twin.note(differs.line_twin)
    assert all(r.python_line is None for r in insights.insight(differs, "line_info_off.py").memory_ops)


def test_the_files_environment_ends_with_its_job(engine):
    """The first job's file turned line info off in the worker's environment; the next job's
    kernel is compiled with it on again."""
    source = (SNIPPETS / "line_info_off.py").read_text()
    engine.compile(CompileRequest(source=source, filename="line_info_off.py", sass=False), timeout=300)
    plain = source.replace('os.environ["TRITON_DISABLE_LINE_INFO"] = "1"\n', "")
    after = engine.compile(CompileRequest(source=plain, filename="line_info_off.py", sass=False), timeout=300)
    assert after.ok and ".loc" in after.kernels[0].stages["ptx"] and not after.kernels[0].line_twin
    assert os.environ.get("TRITON_DISABLE_LINE_INFO") != "1"

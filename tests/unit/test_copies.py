"""The copy plan of a K loop (inspectors/explain/copies.py), against the PTX of the Hopper
lesson's kernels compiled here: counts re-read with independent regexes."""
import re

import pytest

from conftest import ROOT
from inspectors.base.result import CompileRequest
from inspectors.explain import copies, exercise

HOPPER = ROOT / "assets" / "lessons" / "hopper"


def _compile(engine, name: str, target: str = "cuda:90"):
    path = HOPPER / name
    r = engine.compile(CompileRequest(source=path.read_text(), filename=path.name, target=target, sass=False))
    assert r.ok, r.error
    return r.kernels[0]


def _loop(ptx: str, plan: copies.CopyPlan) -> str:
    return "\n".join(ptx.splitlines()[plan.loop_lines[0] - 1:plan.loop_lines[1]])


@pytest.mark.parametrize("target", ["cuda:90", "cuda:100"])
def test_pointers_copy_16_bytes_per_thread(engine, target):
    k = _compile(engine, "ptr_matmul.py", target)
    plan = copies.copy_plan(k.stages["ptx"], k.stages["ttgir"], 8)
    body = _loop(k.stages["ptx"], plan)
    assert plan.per_step == len(re.findall(r"cp\.async\.cg\.shared\.global .*0x10", body)) == 8
    assert (plan.issuers, plan.bytes_each) == (256, 16)
    assert plan.bytes_per_step == (128 * 64 + 64 * 128) * 2 and plan.expect_tx == 0


@pytest.mark.parametrize("target", ["cuda:90", "cuda:100"])
def test_tma_copies_one_tile_per_instruction(engine, target):
    k = _compile(engine, "tma_matmul.py", target)
    plan = copies.copy_plan(k.stages["ptx"], k.stages["ttgir"], 8)
    body = _loop(k.stages["ptx"], plan)
    assert plan.per_step == len(re.findall(r"cp\.async\.bulk\.tensor\.2d\.shared::\w+\.global", body)) == 2
    assert (plan.issuers, plan.bytes_each) == (1, 128 * 64 * 2)
    # the mbarrier is told the step's bytes: the two tiles
    assert plan.expect_tx == plan.bytes_per_step == 2 * 128 * 64 * 2
    assert "elect.sync" in body


def test_warp_specialized_loop_metrics(engine):
    """sm_100 splits the loop (12 warps, 2 partitions, setmaxnreg); sm_90 keeps 8 warps, none."""
    m100 = exercise.kernel_metrics(_compile(engine, "ws_matmul.py", "cuda:100"))
    assert (m100["compiled_warps"], m100["partitions"]) == (12, 2) and m100["count_setmaxnreg"] > 0
    assert m100["count_tcgen05_mma"] > 0 and m100["tma_loads"] >= 2
    m90 = exercise.kernel_metrics(_compile(engine, "ws_matmul.py", "cuda:90"))
    assert (m90["compiled_warps"], m90["partitions"], m90["count_setmaxnreg"]) == (8, 0, 0)


def test_a_loop_without_copies_has_no_plan():
    assert copies.copy_plan("", "", 4) == copies.CopyPlan("", 0, 0, 0)
    ptx = "$L__BB0_1:\n\tadd.s32 %r1, %r1, 1;\n\t@%p1 bra $L__BB0_1;\n"
    assert copies.copy_plan(ptx, "", 4).instruction == ""

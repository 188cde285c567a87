"""The fusion and tiling lessons' readers and models: the FX graph Inductor recorded and the
bytes each version moves (checked against an independent aten-op trace), the PTX instruction
families and the K loop's pipeline of real matmul compiles (checked against plain regex
counts), the launch order, the wave model, and the Nsight Compute comparison."""
import importlib.util
import json
import re

import pytest

from conftest import FIXTURES, ROOT
from inspectors.base.result import CompileRequest
from inspectors.compile import torch_compile_gpu
from inspectors.explain import fusion, tiling
from inspectors.read import fxgraph, occupancy, ptxops
import kernels

SPEC = importlib.util.spec_from_file_location("gpu_lessons", ROOT / "benchmarks" / "gpu_lessons.py")
gpu_lessons = importlib.util.module_from_spec(SPEC)
SPEC.loader.exec_module(gpu_lessons)

NODE = ('%add : Tensor "f32[8192, 1024][1024, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.add.Tensor]'
        '(args = (%arg0_1, %arg1_1), kwargs = {})')


def test_an_fx_node_line():
    n = fxgraph.parse_node(NODE)
    assert (n.name, n.kind, n.op, n.dtype, n.shape, n.inputs, n.nbytes) == \
        ("add", "call_function", "add", "f32", (8192, 1024), ("arg0_1", "arg1_1"), 8192 * 1024 * 4)
    p = fxgraph.parse_node('%arg1_1 : Tensor "f32[1024][1]cuda:0" = PlaceHolder[target=arg1_1]')
    assert (p.kind, p.shape, p.nbytes) == ("placeholder", (1024,), 4096)
    assert fxgraph.parse_node("%max_1 : [num_users=1] = call_function[target=torch.ops.aten.max.dim](args = (%a, 1), kwargs = {})").dtype is None


def test_the_fixtures_graphs_give_the_bytes_of_each_version():
    graphs = torch_compile_gpu.graph_fragments_in(FIXTURES / "inductor_cache")
    relu = fusion.traffic(graphs["triton_poi_fused_add_relu_0"])
    n, b = 8192 * 1024 * 4, 1024 * 4
    assert (relu.eager_kernels, relu.intermediates) == (2, 1)
    assert relu.eager_bytes == (n + b + n) + (n + n) and relu.fused_bytes == n + b + n
    gelu = fusion.traffic(graphs["triton_poi_fused_add_mul_tanh_0"])
    x = 2**24 * 4
    # 9 ops: 5 read one tensor, 4 read two (mul_2, mul_3, add, mul_5); each writes one
    assert (gelu.eager_kernels, gelu.eager_read, gelu.eager_write, gelu.fused_bytes) == (9, 13 * x, 9 * x, 2 * x)
    assert round(gelu.ratio, 3) == 11.0


def test_the_gpu_scripts_op_trace_agrees_with_the_graph_model():
    """Two independent counts: aten ops traced on meta tensors (benchmarks/gpu_lessons.py, what
    the GPU run records) and the FX graph Inductor printed."""
    import torch
    from kernels import gelu
    graphs = torch_compile_gpu.graph_fragments_in(FIXTURES / "inductor_cache")
    ops = gpu_lessons.op_traffic(gpu_lessons.bias_relu_torch, torch.empty(8192, 1024, device="meta"),
                                 torch.empty(1024, device="meta"))
    assert [o["op"] for o in ops] == ["add", "relu"]
    assert sum(o["read"] + o["write"] for o in ops) == fusion.traffic(graphs["triton_poi_fused_add_relu_0"]).eager_bytes
    ops = gpu_lessons.op_traffic(gelu.manual_gelu, torch.empty(2**24, device="meta"))
    assert sum(o["read"] + o["write"] for o in ops) == fusion.traffic(graphs["triton_poi_fused_add_mul_tanh_0"]).eager_bytes
    assert len(gpu_lessons.op_traffic(gelu.reference, torch.empty(2**24, device="meta"))) == 1


def _matmul(engine, target, stages=3, **constexprs):
    r = engine.compile(CompileRequest(source=kernels.get("matmul").source(), filename="matmul.py", target=target,
                                      num_stages=stages, constexprs=constexprs, sass=False))
    assert r.ok, r.error
    return r.kernels[0].stages["ptx"]


def _regex_count(ptx: str, pattern: str) -> int:
    return sum(1 for line in ptx.splitlines() if re.match(rf"\s*(@!?%p\d+\s+)?{pattern}", line))


@pytest.mark.parametrize("target", ["cuda:80", "cuda:90"])
def test_families_and_the_k_loop_of_real_matmul_compiles(engine, target):
    ptx = _matmul(engine, target)
    fam = ptxops.families(ptx)
    for name, pattern in (("mma", r"mma\.sync"), ("wgmma", r"wgmma\.mma_async"), ("ldmatrix", r"ldmatrix"),
                          ("cp_async", r"cp\.async\.c[ag]\.shared"), ("cp_async_wait", r"cp\.async\.wait_group"),
                          ("bar_sync", r"bar\.sync"), ("st_global", r"st\.global")):
        assert fam[name] == _regex_count(ptx, pattern), name
    assert (fam["wgmma"] > 0) == (target == "cuda:90") and (fam["mma"] > 0) == (target == "cuda:80")
    loop = ptxops.main_loop(ptx)
    lines = ptx.splitlines()
    assert lines[loop.start - 1].startswith("$L__BB") and re.search(r"bra\s+\$L__BB", lines[loop.end - 1])
    kinds = [e.family for e in loop.events]
    assert "cp_async_wait" in kinds and "bar_sync" in kinds and ("wgmma" in kinds or "mma" in kinds)
    assert kinds.index("cp_async_wait") < kinds.index("wgmma" if target == "cuda:90" else "mma")


def test_num_stages_sets_the_wait_and_the_shared_memory(engine):
    """Per K step the loop commits one cp.async group per operand and waits until only
    (num_stages - 2) steps' groups are in flight; num_stages = 1 has no cp.async at all."""
    for stages in (1, 2, 3, 4):
        loop = ptxops.main_loop(_matmul(engine, "cuda:90", stages))
        if stages == 1:
            assert loop.counts["cp_async"] == 0 and loop.counts["ld_global"] > 0 and loop.waits == ()
        else:
            assert loop.commits == 2 and loop.waits == ((stages - 2) * loop.commits,), (stages, loop.waits)


def test_the_launch_order_is_the_kernels_and_covers_every_tile_once():
    for group in (1, 3, 8):
        order = tiling.launch_order(1000, 2048, 128, 256, group)
        assert sorted(order) == [(m, n) for m in range(8) for n in range(8)]
    assert tiling.launch_order(512, 1024, 128, 256, 1)[:5] == [(0, 0), (0, 1), (0, 2), (0, 3), (1, 0)]
    assert tiling.launch_order(512, 1024, 128, 256, 2)[:5] == [(0, 0), (1, 0), (0, 1), (1, 1), (0, 2)]


def test_the_wave_model():
    w1 = tiling.wave_traffic(8192, 8192, 8192, 128, 256, 1, 132)
    w8 = tiling.wave_traffic(8192, 8192, 8192, 128, 256, 8, 132)
    assert (w1.first_wave_rows, w1.first_wave_cols) == (5, 32)          # 132 programs over rows of 32 tiles
    assert (w8.first_wave_rows, w8.first_wave_cols) == (8, 17)          # columns of 8, 16.5 of them
    assert w8.dram_bytes < w1.dram_bytes < w1.no_reuse_bytes and w1.min_bytes == 2 * 8192 * 8192 * 2
    t = tiling.tile_traffic(4096, 4096, 4096, 128, 256, 64)
    assert t.flops_per_byte == 128 * 256 / (128 + 256) and t.l2_read_bytes == 512 * 64 * (128 + 256) * 64 * 2


def test_ncu_checks_compare_the_compile_that_ran():
    key = tiling.key(128, 256, 64, 8, 3, 8, 4096)
    data = {"env": {"capability": "9.0"},
            "matmul": {"runs": {key: {"config": [128, 256, 64, 8, 3, 8], "size": 4096, "registers": 208, "shared": 147456}}},
            "ncu": {"cases": {f"matmul/{key}": [{"kernel": "matmul_kernel", "launch__registers_per_thread": 208,
                                                 "launch__shared_mem_per_block_dynamic": 147456,
                                                 "sm__maximum_warps_per_active_cycle_pct": 12.5,
                                                 "lts__t_sectors_srcunit_tex_op_read.sum": 1610612736 / 32 * 1.03}]}}}
    checks = {c.figure: c for c in tiling.ncu_checks(data, occupancy.occupancy)}
    assert checks["registers per thread"].agrees and checks["theoretical occupancy (%)"].agrees
    assert checks["A and B bytes the SMs read from L2 (tile model)"].agrees
    data["ncu"]["cases"][f"matmul/{key}"][0]["launch__registers_per_thread"] = 210
    assert not {c.figure: c for c in tiling.ncu_checks(data, occupancy.occupancy)}["registers per thread"].agrees


def test_the_committed_gpu_file_when_there_is_one():
    """assets/gpu/gpu_lessons.json, once the GPU run is committed: every section ran, the GPU is
    named, every matmul configuration was timed."""
    path = ROOT / "assets" / "gpu" / "gpu_lessons.json"
    if not path.exists():
        pytest.skip("benchmarks/gpu_lessons.py has not been run on a GPU yet")
    data = json.loads(path.read_text())
    assert not data["errors"], data["errors"]
    assert data["env"]["gpu"] and data["env"]["triton"] and data["env"]["torch"]
    assert {k for k, _, _ in [(tiling.key(*cfg, size=size), 0, 0) for _, cfg, size in gpu_lessons.matmul_runs()]} \
        == set(data["matmul"]["runs"])

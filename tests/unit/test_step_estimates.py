"""Each launch's workload (grid, bytes, dot FLOPs, registers) as the worker records it, and its
time on a target GPU estimated without one (issue 57: inspectors/compile/launch_call.py,
inspectors/read/ttir_work.py, inspectors/explain/estimate.py, the step table's columns)."""
import json
import math

import pytest

from conftest import ROOT, SNIPPETS
from inspectors.base import gpu_specs
from inspectors.base.result import CompileRequest, KernelResult, bounded_workload
from inspectors.bench import worker
from inspectors.explain import estimate, step


def _compiled(engine, path, name=None):
    result = engine.compile(CompileRequest(source=path.read_text(), filename=name or path.name, sass=False))
    assert not result.error, result.error
    return list(result.kernels)


@pytest.mark.workers
def test_a_matmul_launch_knows_its_grid_bytes_and_flops(engine):
    """kernels/matmul.py's 512³ fp16 matmul: 4×2 programs of 128×256 tiles, 8 trips of K=64 each
    (the loop's bound evaluated from K), A and B read, C written, each 512·512·2 bytes."""
    (k,) = _compiled(engine, ROOT / "kernels" / "matmul.py")
    w = k.workload
    assert w["grid"] == [8, 1, 1] and w["from"] == "arguments"
    assert w["flops"] == 2 * 512 ** 3 and w["dot_dtype"] == "fp16"
    assert w["reads"] == ["a_ptr", "b_ptr"] and w["writes"] == ["c_ptr"]
    assert w["bytes"] == 3 * 512 * 512 * 2
    assert w["ints"]["K"] == 512 and [t["shape"] for t in w["tensors"]] == [[512, 512]] * 3


@pytest.mark.workers
def test_vector_adds_grid_comes_from_its_grid_function(engine):
    kernels = _compiled(engine, ROOT / "kernels" / "vector_add.py")
    n = 2 ** 20
    first = kernels[0].workload
    assert first["grid"] == [math.ceil(n / 1024), 1, 1]
    assert first["bytes"] == 3 * n * 4 and first["reads"] == ["x_ptr", "y_ptr"] and first["writes"] == ["out_ptr"]
    assert "flops" not in first and "dot_dtype" not in first


@pytest.mark.workers
def test_a_loop_bound_by_the_program_id_is_averaged_over_the_grid(engine):
    """Program i runs i + 1 dots: 16 programs run 136 in all; the first and last run 1 and 16,
    averaged 8.5 per program, which is exact for a linear bound."""
    (k,) = _compiled(engine, SNIPPETS / "causal_dot.py")
    assert k.workload["grid"] == [16, 1, 1]
    assert k.workload["flops"] == int(2 * 64 ** 3 * 8.5) * 16 == 2 * 64 ** 3 * 136


@pytest.mark.workers
def test_inductor_kernels_carry_inductors_own_bytes_and_their_grid(engine):
    result = engine.compile(CompileRequest(source=(SNIPPETS / "compiled" / "block.py").read_text(),
                                           filename="block.py", sass=False))
    assert not result.error, result.error
    heads = result.headers
    assert heads and all(h.workload.get("from") == "Inductor" for h in heads)
    assert all(h.workload["bytes"] > 0 and h.workload["grid"][0] >= 1 for h in heads)
    rows = step.rows(heads, "block.py")
    assert all(r.estimate_us and r.estimate_us > estimate.FLOOR_US for r in rows)
    # an autotuned kernel's configs after the first are alternatives: the step counts one of them
    alternatives = [r for r in rows if "config 2 of" in heads[r.launch - 1].label]
    assert alternatives and all(r.alternative for r in alternatives)
    shares = step.shares(rows)
    assert abs(sum(s for s in shares if s is not None) - 1) < 1e-9
    assert all(s is None for r, s in zip(rows, shares) if r.alternative)


def test_the_model_divides_bytes_by_bandwidth_and_dots_by_peak():
    h200, h100 = gpu_specs.named("H200"), gpu_specs.named("h100 sxm")
    gb = 10 ** 9
    mem = estimate.estimate({"bytes": gb, "grid": [1024, 1, 1]}, h200)
    assert mem.bound == "memory"
    assert mem.us == pytest.approx(gb / (0.85 * 4.8e12) * 1e6 + estimate.FLOOR_US)
    assert "4.8 TB/s" in mem.how and "1 GB" in mem.how
    # the same bytes on H100's 3.35 TB/s: slower by the bandwidths' ratio
    slower = estimate.estimate({"bytes": gb, "grid": [1024, 1, 1]}, h100)
    assert (slower.us - 2) / (mem.us - 2) == pytest.approx(4.8 / 3.35)
    # 16 programs on 132 SMs pull a sixteenth-and-some of the bandwidth
    few = estimate.estimate({"bytes": gb, "grid": [16, 1, 1]}, h200)
    assert (few.us - 2) == pytest.approx((mem.us - 2) * 132 / 16) and "16 of 132 SMs" in few.how
    dots = estimate.estimate({"bytes": 10 ** 6, "flops": 10 ** 12, "dot_dtype": "bf16", "grid": [264, 1, 1],
                              "blocks_per_sm": 1}, h200)
    assert dots.bound == "dots" and dots.us == pytest.approx(1e12 / (0.7 * 989e12) * 1e6 + 2)
    # 133 programs on 132 SMs: two waves, the second nearly empty
    tail = estimate.estimate({"flops": 10 ** 12, "dot_dtype": "bf16", "grid": [133, 1, 1], "blocks_per_sm": 1}, h200)
    assert (tail.us - 2) == pytest.approx((dots.us - 2) * 264 / 133) and "2 wave(s)" in tail.how
    assert estimate.estimate({"grid": [4, 1, 1]}, h200).us is None
    # Inductor's online softmax over 8192 columns: few bytes a program, 727 instructions a warp
    issue = estimate.estimate({"bytes": 67 * 10 ** 6, "grid": [4096, 1, 1], "warps": 16, "issued": 727}, h200)
    assert issue.bound == "issue" and "727 instructions a warp × 16 warps" in issue.how
    assert issue.us == pytest.approx(727 * 16 * 4096 / (132 * 4 * 1.98e3) + estimate.FLOOR_US)
    # Liger's RMSNorm backward: one program an SM, 124 rows each, each row's loads a wait
    rows = estimate.estimate({"bytes": 405 * 10 ** 6, "grid": [132, 1, 1], "blocks_per_sm": 2, "waits": 124}, h200)
    assert rows.bound == "latency" and "124 waits on loads" in rows.how
    assert rows.us == pytest.approx(124 * estimate.LOAD_WAIT_US + estimate.FLOOR_US)
    # the same instructions over ten times the bytes: bandwidth bounds it
    assert estimate.estimate({"bytes": 670 * 10 ** 6, "grid": [4096, 1, 1], "warps": 16, "issued": 727},
                             h200).bound == "memory"
    assert estimate.estimate({"bytes": 100, "grid": [1, 1, 1]}, h200).bound == "launch"


def test_every_gpu_has_its_figures_and_a_source():
    assert {g.name.split()[0] for g in gpu_specs.GPUS} >= {"H100", "H200", "B200", "A100", "MI300X"}
    for g in gpu_specs.GPUS:
        assert g.sms > 0 and g.bandwidth_tbs > 0 and g.peak("bf16") > g.peak("fp32") > 0 and "data sheet" in g.source
    assert [g.name for g in gpu_specs.for_target("cuda:90")] == ["H200 SXM 141GB", "H100 SXM 80GB"]
    assert gpu_specs.for_target("cuda:120") == () and gpu_specs.named("x") is None


def test_a_workers_workload_is_bounded():
    hostile = {"bytes": 2 ** 80, "flops": "many", "grid": [1, 2, 3, 4], "from": "x" * 10 ** 6,
               "ints": {str(i): i for i in range(10 ** 4)}, "reads": [{"a": 1}] * 1000,
               "tensors": [{"arg": "a", "shape": list(range(100)), "bytes": 2 ** 70, "dtype": 1}] * 1000,
               "extra": "dropped"}
    w = bounded_workload(hostile)
    assert "bytes" not in w and "flops" not in w and "grid" not in w and "extra" not in w
    assert len(w["from"]) == 200 and len(w["ints"]) == 64 and len(w["reads"]) == 64 and len(w["tensors"]) == 64
    assert w["tensors"][0] == {"arg": "a", "dtype": "1", "bytes": 0, "shape": list(range(8))}
    assert bounded_workload("nope") == {}
    # and a header keeps it: the step table reads it without reading the launch's stages
    from inspectors.base.launches import header_of
    k = KernelResult("k", "cuda:90", {}, (), {"ptx": "x"}, workload={"bytes": 5})
    assert header_of(k).workload == {"bytes": 5}
    assert KernelResult.from_json(json.loads(json.dumps(k.to_json()))).workload == {"bytes": 5}


def test_the_summary_table_shows_estimates_and_shares():
    heads = [KernelResult("a", "cuda:90", {"num_warps": 4}, (), {}, launch=0,
                          workload={"bytes": 10 ** 9, "grid": [4096, 1, 1], "registers": 32}),
             KernelResult("b", "cuda:90", {"num_warps": 4}, (), {}, launch=1, label="b · config 2 of 2: X=1",
                          workload={"bytes": 10 ** 9, "grid": [4096, 1, 1]}),
             KernelResult("c", "cuda:90", {"num_warps": 4}, (), {}, launch=2, workload={"bytes": 10 ** 8,
                          "grid": [8, 4, 1]})]
    rows = step.rows(heads, "m.py", gpu_specs.named("H100"))
    assert rows[0].gpu == "H100 SXM 80GB" and rows[1].alternative and not rows[2].alternative
    table = step.text(rows)
    assert "8×4 = 32" in table and "estimated on H100 SXM 80GB" in table and "1 autotune alternative(s) not counted" in table
    s = step.shares(rows)
    assert s[1] is None and s[0] + s[2] == pytest.approx(1) and s[0] > s[2]
    # the Explorer's table: the alternative's share is a blank cell, not "None"
    from app.widgets import step_table
    html = step_table._lit(step_table.table_rows(rows), []).to_html()
    assert ">None<" not in html and "nan" not in html
    # ... and numbers, so that a click on the header sorts them (11.8 after 2.1, not before)
    assert [r["% of step"] for r in step_table.table_rows(rows)] == [round(100 * s[0], 1), None, round(100 * s[2], 1)]


@pytest.mark.workers
def test_what_a_compiled_block_runs_outside_triton_is_listed_with_its_flops(engine):
    """block.py's Linear: Inductor leaves its matmul to cuBLAS in each graph (extern_kernels.mm /
    addmm in the wrapper); the step lists each, its shapes, FLOPs (2·64·256·256) and line 13."""
    result = engine.compile(CompileRequest(source=(SNIPPETS / "compiled" / "block.py").read_text(),
                                           filename="block.py", sass=False))
    assert not result.error, result.error
    calls = [c for c in result.outside if not c["graph"].startswith("eager")]     # the graphs' calls
    assert [c["graph"] for c in calls] == ["inference", "forward", "backward", "backward"]
    assert {c["op"] for c in calls} == {"aten.mm", "aten.addmm"} and {c["kind"] for c in calls} == {"cuBLAS"}
    assert all(c["flops"] == 2 * 64 * 256 * 256 and c["lines"] == {"block.py": [13]} for c in calls)
    assert calls[0]["shapes"] == [[64, 256], [256, 256]] and calls[0]["dtype"] == "fp32"
    rows = step.rows(result.headers, "block.py", None, calls)
    extern = [r for r in rows if r.outside]
    assert len(extern) == 4 and all(r.launch == 0 and r.estimate_us and r.lines == (13,) for r in extern)
    assert "4 call(s) outside Triton (-): 4 cuBLAS" in step.text(rows)
    # kept through the result's JSON (the result cache, history)
    from inspectors.base.result import CompileResult
    assert CompileResult.from_json(json.loads(json.dumps(result.to_json()))).outside == result.outside


def test_outside_calls_are_named_by_what_runs_them_and_bounded():
    from inspectors.base.result import bounded_outside
    from inspectors.compile.outside_calls import extern_ops, kind_of
    assert kind_of("mm") == kind_of("_scaled_mm") == "cuBLAS"
    assert kind_of("_scaled_dot_product_flash_attention_backward") == "flash attention"
    assert kind_of("_scaled_dot_product_cudnn_attention") == "cuDNN attention"
    assert kind_of("_efficient_attention_forward") == "memory-efficient attention"
    assert kind_of("convolution") == "cuDNN convolution" and kind_of("sort") == "ATen"
    wrapper = ("extern_kernels.mm(buf0, primals_2, out=buf1)\n"
               "buf5 = torch.ops.aten._scaled_dot_product_flash_attention.default(buf2, buf3, buf4)\n")
    assert extern_ops(wrapper) == {"mm", "_scaled_dot_product_flash_attention"}
    hostile = [{"op": "x" * 10 ** 5, "flops": 2 ** 90, "bytes": 5, "shapes": [[1] * 100] * 100,
                "lines": {"f.py": list(range(1000)), **{str(i): [1] for i in range(100)}}}] * 1000 + ["junk"]
    kept = bounded_outside(hostile)
    assert len(kept) == 512 and len(kept[0]["op"]) == 200 and "flops" not in kept[0] and kept[0]["bytes"] == 5
    assert len(kept[0]["shapes"]) == 8 and len(kept[0]["lines"]) == 8 and len(kept[0]["lines"]["f.py"]) == 64
    assert bounded_outside({"op": 1}) == ()


def test_a_view_the_wrapper_calls_is_no_launch_outside_triton():
    """Inductor leaves a complex tensor's ops to ATen (an STFT loss): its wrapper calls the FFT,
    the complex abs and the views between them (`permute`, `view_as_real`); a GPU launches a
    kernel for the first two only, so only they are calls outside Triton."""
    import torch
    from torch.fx.experimental.proxy_tensor import make_fx
    from inspectors.compile.outside_calls import of_graph

    def f(x):
        spec = torch.ops.aten._fft_r2c(x, [1], 0, True).permute(1, 0)
        return torch.view_as_real(spec).abs(), spec.abs()

    graph = make_fx(f)(torch.randn(8, 64)).graph
    wrapper = "\n".join(f"buf{i} = torch.ops.aten.{op}.default(arg0)" for i, op in
                        enumerate(("_fft_r2c", "permute", "view_as_real", "abs")))
    calls = of_graph(graph, wrapper, lambda n: {}, "forward", set())
    assert [c["op"] for c in calls] == ["aten._fft_r2c", "aten.abs", "aten.abs"], calls


def test_measured_times_sit_beside_the_estimates():
    heads = [KernelResult("add_kernel", "cuda:90", {"num_warps": 4}, (), {}, launch=0,
                          workload={"bytes": 10 ** 9, "grid": [4096, 1, 1]}),
             KernelResult("other", "cuda:90", {"num_warps": 4}, (), {}, launch=1, workload={"bytes": 10 ** 6})]
    rows = step.rows(heads, "m.py", None, (), {"add_kernel": {"median_us": 251.04, "calls": 3.0}})
    assert rows[0].measured_us == 251.04 and rows[1].measured_us is None
    table = step.text(rows)
    assert "meas. µs" in table.splitlines()[0] and "251.0" in table.splitlines()[1]
    assert "meas. µs" not in step.text(step.rows(heads, "m.py"))


def _cli(*args, timeout=900):
    import os
    import subprocess
    import sys
    return subprocess.run([sys.executable, "-m", "inspectors", "compile", *map(str, args)], cwd=ROOT,
                          capture_output=True, text=True, timeout=timeout, env={**os.environ})


def _has_gpu() -> bool:
    import torch
    return torch.cuda.is_available()


@pytest.mark.workers
@pytest.mark.skipif("_has_gpu()", reason="the error of a machine without a GPU")
def test_measuring_without_a_gpu_says_so():
    p = _cli(ROOT / "kernels" / "vector_add.py", "--summary", "--measure")
    assert p.returncode != 0 and "needs an NVIDIA GPU" in (p.stdout + p.stderr)


@pytest.mark.workers
@pytest.mark.skipif("not _has_gpu()", reason="needs a CUDA GPU")
def test_on_a_gpu_each_triton_launch_has_its_measured_time():
    p = _cli(ROOT / "benchmarks" / "drivers" / "estimates" / "seeds_small.py", "--summary", "--measure", "--json")
    assert p.returncode == 0, p.stderr[-2000:]
    rows = json.loads(p.stdout)["summary"]
    assert rows and all(r["measured_us"] and r["measured_us"] > 0 for r in rows if not r["outside"])
    assert all(r["estimate_us"] for r in rows)


@pytest.mark.workers
def test_a_persistent_softmax_counts_two_reductions_a_row_it_takes(engine):
    """kernels/softmax.py's persistent grid: program p takes rows p, p + P, p + 2P, ... (its loop's
    step is tl.num_programs), a max and a sum per row."""
    kernels = _compiled(engine, ROOT / "kernels" / "softmax.py")
    for k in kernels:
        w = k.workload
        programs, rows = w["grid"][0], w["ints"]["n_rows"]
        assert w["reductions"] == pytest.approx(2 * rows / programs, abs=2), (programs, rows, w["reductions"])


LOOPED_ROWS = """
import torch, triton, triton.language as tl

@triton.jit
def row_sum(x_ptr, out_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    acc = tl.zeros([BLOCK], tl.float32)
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        acc += tl.load(x_ptr + row * n_cols + cols, mask=cols < n_cols, other=0.0)
    tl.store(out_ptr + row, tl.sum(acc))

@triton.jit
def halves(x_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    if pid < 4:
        tl.store(x_ptr + offs, tl.load(x_ptr + offs) * 2, mask=offs < n)
    else:
        tl.store(x_ptr + BLOCK + offs, tl.exp(tl.load(x_ptr + BLOCK + offs)), mask=offs < n)

def example():
    x = torch.randn(64, 8192, device="cuda")
    row_sum[(64,)](x, torch.empty(64, device="cuda"), 8192, BLOCK=1024)
    halves[(8,)](torch.randn(2048, device="cuda"), 1024, BLOCK=1024)
"""


@pytest.mark.workers
def test_a_warps_instructions_count_each_loop_trip(engine):
    """The row loop runs 8192 / 1024 = 8 trips (n_cols, from the call): its body counts 8 times,
    the rest of the SASS once. A kernel whose programs branch on their id (a combo kernel) is
    not counted."""
    from inspectors.read import sass_work
    result = engine.compile(CompileRequest(source=LOOPED_ROWS, filename="row_sum.py"))
    assert not result.error, result.error
    (rows,) = [k for k in result.kernels if k.name == "row_sum"]
    (first, last), = sass_work.loops(rows.stages["sass"])
    code = [not t.startswith("NOP") for t in sass_work.instructions(rows.stages["sass"])]
    body = sum(code[first:last + 1])
    assert body > 5 and rows.workload["issued"] == sum(code) - body + 8 * body, (body, rows.workload)
    # each trip's loads, used in the trip; one more where the compiler hoists the first trip's
    # loads above the loop (a rotated loop)
    assert rows.workload["waits"] in (8, 9), rows.workload
    (halves,) = [k for k in result.kernels if k.name == "halves"]
    assert "issued" not in halves.workload and halves.workload["grid"] == [8, 1, 1]


def test_sass_loops_and_unrolled_ones():
    from inspectors.read import sass_work
    from inspectors.read.ttir_work import Loop
    sass = """
        /*0000*/                   MOV R1, R2 ;
.L_x_0:
        /*0010*/                   LDG.E R2, desc[UR4][R4.64] ;
        /*0020*/                   FADD R3, R3, R2 ;
        /*0030*/              @!P0 BRA `(.L_x_0) ;
        /*0040*/                   EXIT ;
.L_x_1:
        /*0050*/                   BRA `(.L_x_1);
        /*0060*/                   NOP;
"""
    assert sass_work.loops(sass) == [(1, 3)]
    assert sass_work.issued(sass, [Loop(4.0, False)]) == 1 + 3 * 4 + 2
    # a constant loop before it was unrolled whole: its trips are already in the straight code
    assert sass_work.issued(sass, [Loop(16.0, True), Loop(4.0, False)]) == 15
    assert sass_work.issued(sass, [Loop(None, False)]) is None
    assert sass_work.waits(sass, [Loop(4.0, False)]) == 4       # the loop's LDG, once a trip
    # an async copy (cp.async, LDGSTS) is in flight across trips: no wait counted
    assert sass_work.waits(sass.replace("LDG.E", "LDGSTS.E"), [Loop(4.0, False)]) == 0
    straight = sass.replace("@!P0 BRA `(.L_x_0)", "@!P0 BRA `(.L_x_9)")
    assert sass_work.waits(straight, []) == 1                   # straight code waits once
    assert sass_work.issued(sass, []) is None          # a loop the TTGIR does not have


@pytest.mark.skipif("not _has_gpu()", reason="needs a CUDA GPU")
def test_gpu_a_steps_kernels_are_timed_by_name_in_a_benchmark_worker():
    """The step table's "Measure on this machine's GPU": example() run by a benchmark worker
    (sandboxed where users' code is), each kernel's calls by name."""
    got = worker.measure_step((ROOT / "kernels" / "vector_add.py").read_text(), "vector_add.py")
    assert "error" not in got, got
    assert len(got["times"].get("add_kernel", ())) >= 5, got     # launched by each of the five runs
    assert all(t > 0 for t in got["times"]["add_kernel"])


@pytest.mark.workers
def test_measuring_a_step_without_a_gpu_is_an_error_not_a_crash():
    if _has_gpu():
        pytest.skip("a machine without a GPU's answer")
    got = worker.measure_step("def example():\n    pass\n", "empty.py", timeout=300)
    assert "needs an NVIDIA GPU" in got.get("error", ""), got


def test_a_kernel_in_a_subgraph_function_counts_once_per_call_of_it():
    """An invoke_subgraph block is one function of the wrapper, called per use: its kernel runs
    that many times a step (tests/snippets/compiled/control_flow.py's wrapper, shortened)."""
    from inspectors.read.inductor import kernel_calls
    wrapper = (
        "def partitioned_fw_subgraph_0_0(args):\n"
        "    a, b = args\n"
        "    with torch.cuda._DeviceGuard(0):\n"
        "        triton_poi_fused_add_erf_mul_0.run(a, b, 8192, stream=s)\n"
        "    return (a, )\n"
        "\n\n"
        "class Runner:\n"
        "    def call(self, args):\n"
        "        buf0 = partitioned_fw_subgraph_0_0(partitioned_fw_subgraph_0_0_args)\n"
        "        buf5 = partitioned_fw_subgraph_0_0(partitioned_fw_subgraph_0_0_args)\n"
        "        triton_poi_fused_mul_relu_2.run(buf5, 8192, stream=s)\n")
    assert kernel_calls(wrapper, "triton_poi_fused_add_erf_mul_0") == 2
    assert kernel_calls(wrapper, "triton_poi_fused_mul_relu_2") == 1
    assert kernel_calls(wrapper, "triton_poi_fused_other_3") == 0


def test_a_grouped_matmul_outside_triton_has_its_flops():
    """An MoE's expert matmuls are torch._grouped_mm calls (cuBLAS on the GPU), which torch's FLOP
    counter has no formula for: tokens × each expert's weight is 2·M·N·K over the groups, the
    weights' gradient (2-D × 2-D, K split by the offsets) 2·M·N·K with K the groups' sum."""
    import torch
    from torch.fx.experimental.proxy_tensor import make_fx
    from inspectors.compile.outside_calls import of_graph

    def f(tokens, w, grad):
        offs = torch.tensor([300, 700, 1024], dtype=torch.int32)
        return (torch._grouped_mm(tokens, w, offs=offs),                 # 1024×256 · 3×256×512
                torch._grouped_mm(tokens.t(), grad, offs=offs))           # 256×1024 · 1024×512 → 3×256×512

    args = (torch.randn(1024, 256, dtype=torch.bfloat16), torch.randn(3, 256, 512, dtype=torch.bfloat16),
            torch.randn(1024, 512, dtype=torch.bfloat16))
    graph = make_fx(f, tracing_mode="fake")(*args).graph
    wrapper = "buf0 = extern_kernels._grouped_mm(arg0, arg1)\nbuf1 = extern_kernels._grouped_mm(arg2, arg3)\n"
    calls = [c for c in of_graph(graph, wrapper, lambda n: {}, "forward", set()) if c["op"] == "aten._grouped_mm"]
    assert [c["flops"] for c in calls] == [2 * 1024 * 512 * 256, 2 * 256 * 1024 * 512], calls
    assert {c["kind"] for c in calls} == {"cuBLAS"}


def test_a_data_dependent_size_outside_triton_is_sized_as_inductor_sizes_its_kernels():
    """An MoE loop's tokens for one expert come from torch.where: a size with no hint. The matmul
    on them is sized as Inductor sizes the Triton kernels beside it (its fallback clamped to the
    size's range: at most the 256 tokens), not as one row."""
    import torch
    from torch.fx.experimental.proxy_tensor import make_fx
    from inspectors.compile.outside_calls import of_graph

    def f(x, expert, w):
        idx = torch.nonzero(expert == 0).squeeze(1)
        return torch.mm(x[idx], w)

    from torch._subclasses.fake_tensor import FakeTensorMode
    from torch.fx.experimental.symbolic_shapes import ShapeEnv
    with FakeTensorMode(shape_env=ShapeEnv()):          # static inputs: nonzero's size is u0 in [0, 256]
        args = (torch.randn(256, 128), torch.randint(0, 4, (256,)), torch.randn(128, 64))
    graph = make_fx(f)(*args).graph
    calls = [c for c in of_graph(graph, "extern_kernels.mm(buf0, arg2, out=buf1)\n", lambda n: {}, "forward", set())
             if c["op"] == "aten.mm"]
    assert [c["shapes"] for c in calls] == [[[256, 128], [128, 64]]], calls
    assert calls[0]["flops"] == 2 * 256 * 128 * 64

"""torch.compile mode: the wrapper/kernel-file parsers on inline snippets, the kernels of the
Inductor cache made on an H100 (tests/fixtures/inductor_cache, by
benchmarks/gpu_torch_compile.py), the runner's no-GPU answer, and the page without a GPU."""
import json
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import FIXTURES, ROOT
from inspectors.compile import torch_compile_gpu

INDUCTOR = FIXTURES / "inductor_cache"

# As torch 2.11's wrapper codegen writes a kernel definition (codegen/triton.py define_kernel)
WRAPPER = """
from torch._inductor.async_compile import AsyncCompile
async_compile = AsyncCompile()


# kernel path: /tmp/torchinductor_root/2c/c2cj3aujugr33y6.py
# Topologically Sorted Source Nodes: [add, relu], Original ATen: [aten.add, aten.relu]
# Source node to ATen node mapping:
#   add => add
#   relu => relu
# Graph fragment:
#   %add : Tensor "f32[8192, 1024]" = call_function[target=torch.ops.aten.add.Tensor](args = (%arg0_1, %arg1_1))
triton_poi_fused_add_relu_0 = async_compile.triton('triton_poi_fused_add_relu_0', '''
import triton
# kernel path: /not/this/one.py
@triton.jit
def triton_poi_fused_add_relu_0(in_ptr0, in_ptr1, out_ptr0, xnumel, XBLOCK : tl.constexpr):
    pass
''', device_str='cuda')


triton_per_fused__softmax_1 = async_compile.triton('triton_per_fused__softmax_1', '''
@triton.jit
def triton_per_fused__softmax_1(in_ptr0, out_ptr2, xnumel, r0_numel, XBLOCK : tl.constexpr):
    pass
''', device_str='cuda')
"""

KERNEL_FILE = """
@triton_heuristics.pointwise(
    size_hints={'x': 8388608},
    filename=__file__,
    triton_meta={'signature': {'in_ptr0': '*fp32', 'xnumel': 'i32', 'XBLOCK': 'constexpr'}, 'constants': {}},
    inductor_meta={'grid_type': 'Grid1D', 'autotune_hints': set(), 'kernel_name': 'triton_poi_fused_add_relu_0',
                   'mutated_arg_names': [], 'optimize_mem': True, 'no_x_dim': False, 'num_load': 2,
                   'num_reduction': 0, 'backend_hash': 'ABC', 'kernel_num_gb': 0.067, 'x': 1e-05},
    min_elem_per_thread=0
)
"""


def test_parse_wrapper_names_each_kernel_and_what_it_fused():
    got = torch_compile_gpu.parse_wrapper(WRAPPER)
    assert [(k.name, k.category, k.fused, k.source_nodes, k.aten_ops, k.kernel_path) for k in got] == [
        ("triton_poi_fused_add_relu_0", "pointwise", "add_relu", ("add", "relu"), ("aten.add", "aten.relu"),
         "/tmp/torchinductor_root/2c/c2cj3aujugr33y6.py"),
        # no comment block of its own: the previous kernel's must not be borrowed
        ("triton_per_fused__softmax_1", "persistent_reduction", "_softmax", (), (), ""),
    ]
    assert got[0].fused_ops == "add, relu" and got[1].fused_ops == " softmax"


def test_parse_inductor_meta_scalars():
    meta = torch_compile_gpu.parse_inductor_meta(KERNEL_FILE)
    assert meta["kernel_name"] == "triton_poi_fused_add_relu_0"
    assert (meta["num_load"], meta["num_reduction"], meta["optimize_mem"], meta["kernel_num_gb"], meta["x"]) == \
        (2, 0, True, 0.067, 1e-05)
    assert "signature" not in meta                       # triton_meta is not inductor_meta


def test_split_name():
    assert torch_compile_gpu.split_name("triton_red_fused_native_layer_norm_3") == ("reduction", "native_layer_norm")
    assert torch_compile_gpu.split_name("my_kernel") == ("other", "my_kernel")


def test_kernels_of_the_gpu_run_fixture():
    kernels = {k.name: k for k in torch_compile_gpu.collect(INDUCTOR)}
    assert set(kernels) == {"triton_poi_fused_add_relu_0", "triton_poi_fused_add_mul_relu_0",
                            "triton_poi_fused_add_mul_tanh_0", "triton_per_fused_div_exp_max_sub_sum_unsqueeze_0"}
    relu = kernels["triton_poi_fused_add_relu_0"]
    assert (relu.source_nodes, relu.aten_ops) == (("add", "relu"), ("aten.add", "aten.relu"))
    lora = kernels["triton_poi_fused_add_mul_relu_0"]
    assert lora.source_nodes == ("mul", "add", "add_1", "relu") and lora.meta["num_load"] == 3
    softmax = kernels["triton_per_fused_div_exp_max_sub_sum_unsqueeze_0"]
    assert softmax.category == "persistent_reduction" and "aten.exp" in softmax.aten_ops
    assert softmax.meta["num_reduction"] == 2
    # each kernel is linked to the Triton cache folders compiled from its file (one per autotune config)
    assert {k: len(v.cache_entries) for k, v in kernels.items()} == {
        "triton_poi_fused_add_relu_0": 2, "triton_poi_fused_add_mul_relu_0": 2,
        "triton_poi_fused_add_mul_tanh_0": 2, "triton_per_fused_div_exp_max_sub_sum_unsqueeze_0": 1}
    for k in kernels.values():
        for path in k.cache_entries:
            assert Path(path).parent == INDUCTOR / "triton" / "0" and k.name in {p.stem for p in Path(path).iterdir()}


def test_the_committed_gpu_run_matches_the_fixture():
    summary = json.loads((ROOT / "benchmarks" / "results" / "gpu_torch_compile.json").read_text())
    assert summary["gpu"].startswith("NVIDIA") and summary["triton"] == "3.6.0"
    assert set(summary["examples"]) == set(torch_compile_gpu.EXAMPLES)
    fixture = {k.name for k in torch_compile_gpu.collect(INDUCTOR)}
    for name, run in summary["examples"].items():
        assert run["error"] is None and run["max_abs_diff"] < 1e-5, name
        assert {k["name"] for k in run["kernels"]} <= fixture
        assert run["compiled_ms"] < run["eager_ms"]        # fused: one kernel instead of several
    assert summary["pass_dump"]["passes"] > 200


@pytest.mark.skipif(bool(torch_compile_gpu.gpu_probe()), reason="this machine has a GPU")
@pytest.mark.workers
def test_runner_says_plainly_that_it_needs_a_gpu(tmp_path):
    fn = tmp_path / "fn.py"
    fn.write_text(torch_compile_gpu.EXAMPLES["bias_add_relu"])
    proc = subprocess.run([sys.executable, "-m", "inspectors.compile.torch_compile_gpu", str(fn), "--out", str(tmp_path / "out")],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 3, proc.stderr
    run = torch_compile_gpu.InductorRun.from_json(json.loads(proc.stdout.strip().splitlines()[-1]))
    assert run.error["kind"] == "no_gpu" and "needs an NVIDIA GPU" in run.error["message"]
    assert run.kernels == () and not (tmp_path / "out").exists()          # nothing was run or written



@pytest.mark.workers
def test_page_without_gpu_still_opens_the_copied_cache():
    from streamlit.testing.v1 import AppTest
    at = AppTest.from_file(str(ROOT / "app" / "views" / "caches.py"), default_timeout=120)
    at.run()
    at.radio(key="caches_mode").set_value("torch.compile").run()
    assert not at.exception, at.exception
    if not torch_compile_gpu.gpu_probe():
        assert any("No GPU on this machine" in w.value for w in at.info)
        assert at.button(key="tc_run").disabled
    at.selectbox(key="tc_example").set_value("softmax").run()
    assert "torch.exp(z)" in at.text_area(key="tc_source").value
    pick = at.selectbox(key="tc_pick")
    assert len(pick.options) == 1 + 7                       # every config of every kernel
    pick.set_value(1).run()
    assert not at.exception, at.exception
    from apptest_panels import panels
    shown = panels(at)
    assert {"ptx", "source"} <= set(shown)
    assert "tl.load(in_ptr0" in "\n".join(shown["source"]["lines"]) and "ld.global" in "\n".join(shown["ptx"]["lines"])


@pytest.mark.skipif(bool(torch_compile_gpu.gpu_probe()), reason="this machine has a GPU")
def test_page_without_gpu_compiles_the_function_for_the_target():
    """No GPU: the page's function compiled for sm_90 by the compile worker (the explorer's
    torch.compile path): its kernel listed with the ops and lines it fuses, opened with its
    stages and the function's lines it computes."""
    from streamlit.testing.v1 import AppTest
    at = AppTest.from_file(str(ROOT / "app" / "views" / "caches.py"), default_timeout=300)
    at.run()
    at.radio(key="caches_mode").set_value("torch.compile").run()
    at.selectbox(key="tc_example").set_value("bias_add_relu").run()
    at.button(key="tc_target_run").click().run()
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    rows = at.dataframe[0].value
    assert set(rows["kernel"]) == {"triton_poi_fused_add_relu_0"} and set(rows["graph"]) == {"inference"}
    assert set(rows["fuses"]) == {"add, relu"} and set(rows["lines"]) == {"6"}
    from app.components.stage_panel import payload
    sent = [payload.decode(el.proto.bytes) for el in at.get("bidi_component")
            if el.proto.component_name == "tlens_stage_panel"]
    model = [p for p in sent if p["label"].startswith("Your model")]
    shown = {p["stage"]: p for p in sent if p not in model}
    assert "def triton_poi_fused_add_relu_0(" in "\n".join(shown["source"]["lines"])
    assert ".target sm_90" in "\n".join(shown["ptx"]["lines"])
    assert len(model) == 1 and model[0]["heat"] == {"6": 1.0}       # the function's line the kernel computes


@pytest.mark.skipif(not torch_compile_gpu.gpu_probe(),
                    reason="needs an NVIDIA GPU (torch.compile writes Triton kernels only for GPU tensors)")
def test_torch_compile_run_on_the_gpu(tmp_path):
    """The page's Run torch.compile, for real: the runner process compiles bias-add + ReLU, the
    result matches eager, and the fused kernel is listed with what it fused and its cache
    folders, each of which opens in the viewer (the cache reader finds its stages)."""
    from inspectors.store import cache
    fn = tmp_path / "fn.py"
    fn.write_text(torch_compile_gpu.EXAMPLES["bias_add_relu"])
    proc = subprocess.run([sys.executable, "-m", "inspectors.compile.torch_compile_gpu", str(fn), "--out", str(tmp_path / "out")],
                          cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-4000:]
    run = torch_compile_gpu.InductorRun.from_json(json.loads(proc.stdout.strip().splitlines()[-1]))
    assert run.ok and run.gpu and run.max_abs_diff is not None and run.max_abs_diff < 1e-5
    assert run.eager_ms and run.compiled_ms
    timing = run.timing            # as the Benchmark page times: rounds, spread, checks, notes
    assert timing["rounds"] == 3 and len(timing["compiled"]["rounds_ms"]) == 3 and timing["notes"]
    compiled = timing["compiled"]
    assert all(ms > 0 for ms in compiled["rounds_ms"]) and 0 < compiled["p20_ms"] <= compiled["p80_ms"]
    assert run.compiled_ms > 0 and run.eager_ms > 0
    # where the run's figure falls among the rounds is a measurement, not behaviour (an H100 put
    # it outside p20-p80): benchmarks/gpu_torch_compile.py prints that comparison
    (relu,) = [k for k in run.kernels if k.name == "triton_poi_fused_add_relu_0"]
    assert (relu.source_nodes, relu.aten_ops) == (("add", "relu"), ("aten.add", "aten.relu"))
    assert relu.cache_entries
    for path in relu.cache_entries:
        opened = cache.load(Path(path), [tmp_path / "out"])
        assert opened.kernel.name == relu.name and opened.entry.status == "ok"
        assert "ld.global" in opened.kernel.stages["ptx"] and opened.kernel.cubin

"""Training-loop habits and torch.compile features as users write them (benchmarks/drivers/features/,
compared kernel by kernel on the GPU machine: benchmarks/results/gpu_drivers.txt), compiled for a
target without a GPU."""
from pathlib import Path

from inspectors.base.result import CompileRequest

FEATURES = Path(__file__).resolve().parents[2] / "benchmarks" / "drivers" / "features"


def _compile(engine, name):
    r = engine.compile(CompileRequest(source=(FEATURES / name).read_text(), filename=name, target="cuda:90",
                                      sass=False), timeout=300)
    assert r.ok, r.error
    return r


def test_float8_rowwise_training_runs_its_scaled_matmuls_as_cuda(engine):
    """torchao's rowwise recipe: a scale per row and column. Its quantizing kernels in the forward
    and backward, its _scaled_mm calls cuBLAS's (torch 2.11's CPU kernel refused these scales when
    the compiled graph ran: inspectors/target/cuda_dtypes.py)."""
    r = _compile(engine, "fp8_rowwise.py")
    graphs = {k.origin["graph"] for k in r.kernels}
    assert graphs == {"forward", "backward"}, graphs
    scaled = [c for c in r.outside if c["op"] == "aten._scaled_mm"]
    assert {c["graph"] for c in scaled} == {"forward", "backward"} and all(c["dtype"] == "fp8" for c in scaled)
    assert any("fp8e4nv" in a.type for k in r.kernels for a in k.args), [k.name for k in r.kernels]


def test_an_stft_loss_lists_its_ffts_outside_triton_and_not_its_views(engine):
    """Complex tensors: Inductor leaves their ops to ATen. The FFTs and the complex abs are calls
    outside Triton; the permutes, slices and view_as_real between them run no kernel on a GPU."""
    r = _compile(engine, "stft_loss.py")
    ops = {c["op"] for c in r.outside}
    assert {"aten._fft_r2c", "aten._fft_c2c", "aten.abs"} <= ops, ops
    assert not ops & {"aten.permute", "aten.slice", "aten.view_as_real"}, ops
    assert r.kernels and all(k.name.startswith("triton_") for k in r.kernels)


def test_activation_offloading_compiles_the_same_kernels_as_without_it(engine):
    """save_on_cpu(pin_memory=True) around a compiled MLP: its hooks pin host buffers and copy the
    saved activations there and back, which the CPU wheel refused (no pinned allocator) and the
    backward's `.to("cuda")` with it. On a GPU those are copies, no kernel: the forward's GELU and
    the backward's kernels, and the matmuls of both."""
    r = _compile(engine, "offload.py")
    graphs = [k.origin["graph"] for k in r.kernels]
    assert "forward" in graphs and "backward" in graphs, graphs
    assert [c["graph"] for c in r.outside].count("backward") == 4, r.outside


def test_half_precision_attention_on_sm90_is_cudnns(engine):
    """sm_90's choice for bf16 and fp16 attention is cuDNN's kernel (an H100 with torch 2.11:
    benchmarks/results/sdpa_choice.txt), forward and backward, for a boolean padding mask, grouped
    query heads, dropout and a head size of 256; float32 stays memory-efficient. A boolean mask is
    made additive as cuDNN's entry makes it (`where(mask, 0, -65504)`, no logical_not: the kernel's name
    is the H100's, benchmarks/results/gpu_drivers.txt): -65504 (bf16: -65536) where a token is masked,
    not -inf."""
    r = _compile(engine, "cudnn_attention.py")
    calls = [(c["graph"], c["op"]) for c in r.outside]
    cudnn = "aten._scaled_dot_product_cudnn_attention"
    assert calls.count(("forward", cudnn)) == 3 and calls.count(("backward", cudnn + "_backward")) == 3, calls
    assert ("forward", "aten._scaled_dot_product_efficient_attention") in calls, calls
    assert not [op for _, op in calls if "flash" in op], calls
    [mask] = {k.name for k in r.kernels}
    assert mask == "triton_poi_fused_scalar_tensor_where_0", mask
    body = next(k for k in r.kernels if k.name == mask).stages["source"]
    assert "-65536.0" in body and "inf" not in body, body
    # the compiled graphs that ran here (the CPU's stand-ins for cuDNN's kernels) gave values, not an error
    assert not [k for k in r.kernels if "for_cpu" in k.name]


def test_a_lower_right_causal_bias_is_the_gpus_attention_kernels_and_no_mask_kernel(engine):
    """causal_lower_right asks can_use_flash_attention, then can_use_efficient_attention, itself: the
    H100 (torch 2.11) runs flash attention for bf16 and the memory-efficient kernel with its own
    lower-right mask for float32, forward and backward, with no Triton kernel at all; the CPU's
    answers (no) materialized the mask into a Triton kernel the GPU never compiles. The graph that
    runs here gives the masked attention's values (the driver checks them against the mask's). (The
    H100's own torch.compile of the float32 case raised "an incorrect fake (aka meta) kernel" at ce5f3ae:
    benchmarks/results/gpu_drivers.txt; the view does not.)"""
    source = (FEATURES / "causal_bias.py").read_text().replace('os.environ.get("TLENS_CAUSAL_FP32")', "True")
    r = engine.compile(CompileRequest(source=source, filename="causal_bias.py", target="cuda:90", sass=False),
                       timeout=300)
    assert r.ok, r.error
    assert not r.kernels, [k.name for k in r.kernels]
    calls = [(c["graph"], c["op"]) for c in r.outside if not c["graph"].startswith("eager")]
    flash, efficient = "aten._scaled_dot_product_flash_attention", "aten._efficient_attention_forward"
    assert calls == [("forward", flash), ("backward", flash + "_backward"),
                     ("forward", efficient), ("backward", "aten._efficient_attention_backward")], calls
    # 4·B·H·M·N·K forward (torch 2.13's own formula raises on this op's layout), 2.5 times that backward
    assert [c["flops"] for c in r.outside[2:4]] == [4 * 2 * 8 * 64 * 128 * 64, 10 * 2 * 8 * 64 * 128 * 64]


def test_coordinate_descent_tuning_says_the_gpu_may_compile_another_config(engine):
    """gpt-fast's settings: each Inductor kernel's configs are listed, each saying that on the GPU
    coordinate descent times their neighbours (a timing the view cannot make); without the
    setting, the same kernels say nothing of it."""
    r = _compile(engine, "coordinate_descent.py")
    inductor = [k for k in r.kernels if k.origin.get("graph")]
    assert {k.name.split("_")[1] for k in inductor} == {"per", "poi"}, [k.name for k in inductor]
    assert all("coordinate descent: the GPU times" in k.label for k in inductor), [k.label for k in inductor]
    source = (FEATURES / "coordinate_descent.py").read_text().replace("tuning = True", "tuning = False")
    plain = engine.compile(CompileRequest(source=source, filename="coordinate_descent.py", target="cuda:90",
                                          sass=False), timeout=300)
    assert plain.ok and plain.kernels, plain.error
    assert not any("coordinate descent" in k.label for k in plain.kernels)


def test_compiled_autograds_graph_is_the_steps_backward(engine):
    """`compiled_autograd = True` and `.backward()` inside the compiled step: Dynamo compiles the
    autograd engine's graph (its hooks in it) as an inference graph; the view calls it the
    backward, its kernels and its cuBLAS matmul, and the driver's gradients equal eager's."""
    r = _compile(engine, "compiled_autograd.py")
    graphs = [k.origin["graph"] for k in r.kernels]
    assert "forward" in graphs and "backward" in graphs and "inference" not in graphs, graphs
    assert ("backward", "aten.mm") in [(c["graph"], c["op"]) for c in r.outside], r.outside


def test_an_eager_models_modules_and_backward_are_listed_as_eager_calls(engine):
    """Two eager blocks (LayerNorm, Linear, GELU, Linear, residual add) and a compiled loss: each
    op of the blocks' forwards is an eager call from Block.forward's line, called twice (once a
    block), the matmuls cuBLAS's with their FLOPs; the eager backward has the Linears' matmuls and
    the LayerNorm's and GELU's backward kernels; the inputs' randn, the views (a Linear's weight
    transposed) and the float64 check outside any module are not listed."""
    r = _compile(engine, "eager_modules.py")
    line = next(i for i, text in enumerate((FEATURES / "eager_modules.py").read_text().splitlines(), 1)
                if "return x + self.down" in text)
    forward = [c for c in r.outside if c["graph"] == "eager"]
    assert {c["op"] for c in forward} == {"aten.native_layer_norm", "aten.addmm", "aten.gelu", "aten.add"}, forward
    assert all(c["calls"] == 2 and c["lines"] == {"eager_modules.py": [line]} and c["dtype"] == "fp32"
               for c in forward), forward
    up = next(c for c in forward if c["op"] == "aten.addmm" and c["shapes"][2] == [256, 1024])
    assert up["kind"] == "cuBLAS" and up["flops"] == 2 * 64 * 256 * 1024
    backward = {c["op"] for c in r.outside if c["graph"] == "eager backward"}
    assert {"aten.mm", "aten.gelu_backward", "aten.native_layer_norm_backward"} <= backward, backward
    listed = {c["op"] for c in r.outside}
    assert not listed & {"aten.randn", "aten.normal_", "aten.t", "aten.view", "aten.expand", "aten.detach",
                         "aten._to_copy", "aten.pow"}, listed
    assert {k.origin["graph"] for k in r.kernels} == {"forward", "backward"}

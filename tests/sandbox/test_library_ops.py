"""A library op's kernels, as the GPU machine's JIT specialized and compiled them
(benchmarks/results/gpu_drivers.txt: the same drivers run there, kernel by kernel)."""
import importlib.util

import pytest

from inspectors.base.result import CompileRequest


def _args(kernel) -> dict:
    return {a.name: a for a in kernel.args}


def test_cut_cross_entropy_forward_and_backward(engine, snippet):
    """cut-cross-entropy's linear_cross_entropy in bf16: its three kernels in the GPU's order, with
    the GPU's warps, stages and specializations (an H200: benchmarks/results/gpu_drivers.txt), and
    the int64 → int32 copy of the targets its torch.compile'd part runs, with the sort outside Triton."""
    if importlib.util.find_spec("cut_cross_entropy") is None:
        pytest.skip("cut-cross-entropy is not installed (make setup installs it)")
    r = engine.compile(CompileRequest(source=snippet("training/cce_linear_loss.py"), filename="cce_linear_loss.py",
                                      sass=False), timeout=300)
    assert r.ok, r.error
    library = [k for k in r.kernels if not k.name.startswith("triton_")]
    assert [(k.name, k.options["num_warps"], k.options["num_stages"]) for k in library] == [
        ("_cce_lse_forward_kernel", 8, 3), ("_indexed_neg_dot_forward_kernel", 16, 4), ("_cce_backward_kernel", 4, 4)]
    backward = _args(library[2])
    # locks counted from B = 2048 rows and V = 8192 columns: the first dimension of each lock grid
    # divides by 16, the second (1) is a plain i32, as on the GPU
    assert backward["n_de_locks_0"].divisible_by_16 and not backward["n_de_locks_1"].divisible_by_16
    assert backward["HAS_VOCAB_ORDERING"].value == "True" and backward["FILTER_GRAD"].value == "True"
    assert backward["Valids"].value == "None" and backward["dE"].type == "*bf16" and backward["dE"].divisible_by_16
    copies = [k for k in r.kernels if k.name.startswith("triton_poi_fused__to_copy")]
    assert copies and all(_args(k)["in_ptr0"].type == "*i64" and _args(k)["out_ptr0"].type == "*i32" for k in copies)
    assert [c["op"] for c in r.outside if not c["graph"].startswith("eager")] == ["aten.sort"]
    # its autograd Function's backward zero-fills the gradients its kernel accumulates into: CUDA
    # fills on the GPU, listed as the step's eager calls (inspectors/compile/eager_calls.py)
    fills = [c for c in r.outside if c["graph"] == "eager backward"]
    assert {c["op"] for c in fills} == {"aten.ones_like", "aten.zeros_like", "aten.new_zeros"}, fills  # + the seed
    assert sorted(c["bytes"] for c in fills if c["op"] == "aten.zeros_like") == [2048 * 512 * 2, 8192 * 512 * 2]

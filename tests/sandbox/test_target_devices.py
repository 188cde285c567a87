"""Which device each value of a compiled graph is on, as on the GPU (inspectors/target/
graph_on_target.py, inductor_choices.cpu_born): the GPU's tensors on `cuda:0`, the CPU's where a
GPU has them on the CPU too."""
import pytest
import torch

from inspectors.base.result import CompileRequest


def test_a_cpu_constant_moved_to_the_gpu_is_a_copy_named_as_the_gpus(engine, snippet):
    """`torch.tensor(32).to(x.device)` in the step: traced on the CPU the move is a no-op, and the
    constant's kernel was named after `lift_fresh` (Mistral's and Gemma 2's sliding window on an
    H200 were `_to_copy` kernels: benchmarks/results/gpu_drivers.txt). On a GPU the move is the
    copy its kernel is named after."""
    r = engine.compile(CompileRequest(source=snippet("compiled/cpu_constant_moved.py"), filename="cpu_constant_moved.py",
                                      target="cuda:90", sass=False), timeout=300)
    assert r.ok, r.error
    names = [k.name for k in r.kernels]
    assert not [n for n in names if "lift_fresh" in n], names
    moved = {k.name: k for k in r.kernels if k.name.startswith("triton_poi_fused__to_copy_")}
    stored = sorted(k.stages["source"].split("tmp0 = tl.full([1], ")[1].split(",")[0]
                    for n, k in moved.items() if "arange" not in n)
    assert stored == ["0", "32"], names         # the window size and the step count, stored on the GPU
    # with a dtype: the CPU's arange moved (Inductor moves a constructor that only feeds a copy to
    # the GPU there) and converted in one kernel
    [arange] = [k for n, k in moved.items() if "arange" in n]
    assert "tl.float32" in arange.stages["source"], names


FROZEN = '''import torch
import torch._inductor.config as cfg

cfg.freezing = True


def example():
    m = torch.nn.Sequential(torch.nn.Linear(64, 64), torch.nn.ReLU()).cuda().eval()
    with torch.no_grad():
        torch.compile(m)(torch.randn(8, 64, device="cuda"))
'''


@pytest.mark.skipif(torch.cuda.is_available(), reason="a GPU machine compiles it for itself")
def test_freezing_is_refused_by_name_with_the_line(engine):
    """Inductor's freezing makes the weights constants of the graph: the GPU's tensors there, the
    CPU's here (a fake-tensor device mismatch, or the CPU's mkldnn weight packing, was the error)."""
    r = engine.compile(CompileRequest(source=FROZEN, filename="frozen.py", target="cuda:90", sass=False), timeout=300)
    assert r.error is not None and "freezing (torch._inductor.config.freezing) is not supported" in r.error.message
    assert r.error.line == 10, r.error

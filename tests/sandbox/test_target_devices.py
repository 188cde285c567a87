"""Which device each value of a compiled graph is on, as on the GPU (inspectors/target/
graph_on_target.py, inductor_choices.cpu_born): the GPU's tensors on `cuda:0`, the CPU's where a
GPU has them on the CPU too."""
import re

import pytest
import torch

from inspectors.base.result import CompileRequest


def test_a_cpu_constant_moved_to_the_gpu_is_a_copy_named_as_the_gpus(engine, snippet):
    """`torch.tensor(32).to(x.device)` in the step: traced on the CPU the move is a no-op, and the
    constant's kernel was named after `lift_fresh` (Mistral's and Gemma 2's sliding window on an
    H200 were `_to_copy` kernels: benchmarks/results/gpu_drivers.txt). On a GPU, where the tool sets
    the default device `cuda`, torch 2.11's Dynamo leaves `torch.tensor` and `torch.arange` on the
    CPU (a copy, its kernel named after it) and makes `torch.zeros` the GPU's (the H200's
    `triton_poi_fused_zeros_2`); torch 2.13's makes all three the GPU's (`cpu_born_factories`)."""
    from inspectors.target.inductor_choices import cpu_born_factories
    r = engine.compile(CompileRequest(source=snippet("compiled/cpu_constant_moved.py"), filename="cpu_constant_moved.py",
                                      target="cuda:90", sass=False), timeout=300)
    assert r.ok, r.error
    names = [k.name for k in r.kernels]
    cpu = cpu_born_factories()
    made = {"_to_copy" if "tensor" in cpu else "lift_fresh": "32", "_to_copy" if "zeros" in cpu else "zeros": "0"}
    for op, value in made.items():
        [k] = [k for k in r.kernels if re.fullmatch(rf"triton_poi_fused_{op}_\d+", k.name)
               and f"tl.full([1], {value}, tl.int64)" in k.stages["source"]]
    # with a dtype: arange and its conversion in one kernel (the CPU's arange moved there: Inductor
    # moves a constructor that only feeds a copy to the GPU)
    [arange] = [k for k in r.kernels if "_to_copy_arange" in k.name]
    assert "tl.float32" in arange.stages["source"], names


@pytest.mark.skipif(not torch.__version__.startswith("2.11."), reason="the H200's torch, whose answer was compared")
def test_the_factories_dynamo_leaves_on_the_cpu_under_a_default_device():
    """What torch 2.11's Dynamo does under a default device, as the H200 compiled the snippet above
    (2026-11-29, `triton_poi_fused_zeros_2` and `_to_copy_3`): asked of Dynamo, not listed."""
    from inspectors.target.inductor_choices import cpu_born_factories
    assert cpu_born_factories() == {"tensor", "as_tensor", "scalar_tensor", "arange", "rand", "randn", "randint",
                                    "linspace", "eye"}


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


RESIZE = '''import torch
import torch.nn.functional as F


def example():
    img = torch.randn(2, 3, 24, 24, device="cuda").contiguous(memory_format=torch.channels_last)
    torch.compile(lambda x: F.interpolate(x, scale_factor=2, mode="nearest"))(img)
'''


def test_a_few_channels_upsampled_are_written_contiguous_as_on_the_gpu(engine):
    """3 channels in channels-last memory: a GPU's nearest upsampling writes them contiguous, a
    CPU's in the input's layout, with a copy (the kernel was `..._clone_...`, where the H200's
    is not: tests/snippets/compiled/device_decompositions.py, benchmarks/results/gpu_drivers.txt)."""
    r = engine.compile(CompileRequest(source=RESIZE, filename="resize.py", target="cuda:90", sass=False), timeout=300)
    assert r.ok, r.error
    [name] = {k.name for k in r.kernels}
    assert "_unsafe_index" in name and "clone" not in name, name
    # contiguous (N, C, H, W): the store walks x fastest; channels-last would stride by 3
    assert "tl.store(out_ptr0 + (x" in r.kernels[0].stages["source"], r.kernels[0].stages["source"]


def test_a_bare_ordinal_device_is_the_gpus_eagerly_and_where_dynamo_folds_it(engine, snippet):
    """`torch.device(0)` is the accelerator's: cuda:0 on a GPU, "Cannot access accelerator device"
    without one. Eagerly the view answers the call, and in a compiled forward Dynamo's fold of it:
    the forward's kernel multiplies by the GPU's constant, the backward's too."""
    r = engine.compile(CompileRequest(source=snippet("compiled/device_ordinal.py"), filename="device_ordinal.py",
                                      target="cuda:90", sass=False), timeout=300)
    assert r.ok, r.error
    assert {k.origin["graph"] for k in r.kernels} == {"forward", "backward"}, [k.name for k in r.kernels]
    assert any("full" in k.name or "2.0" in k.stages["source"] for k in r.kernels if k.origin["graph"] == "forward")

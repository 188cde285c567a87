"""Devices as the target's code names them, on a machine without its GPU: a bare ordinal is the
GPU's (inspectors.target.cuda_probes.on_cpu), and fake tensors on the target run an op that has no
meta function on the CPU's kernel (inspectors.target.inductor_device)."""
import torch


def test_a_bare_device_ordinal_is_the_gpus():
    """`device=torch.cuda.current_device()` (Qwen3-Next's gated norm in transformers 4.57), `.to(0)`,
    `model.to(0)`, `torch.device(0)`: an ordinal is the current accelerator's, cuda:0 on the GPU, an error on a torch
    with none; a bool is no ordinal (`x.to(torch.half, False)`: non_blocking)."""
    from inspectors.base.targets import parse
    from inspectors.target import tensor_view
    parse_to = torch._C._nn._parse_to
    with tensor_view.TargetView(parse("cuda:90")):
        w = torch.nn.Parameter(torch.empty(8, device=torch.cuda.current_device(), dtype=torch.bfloat16))
        model = torch.nn.Linear(4, 4).to(0)
        moved = torch.ones(3).to(0)
        half = torch.ones(3).to(torch.half, False)
        assert w.is_cuda and w.dtype == torch.bfloat16 and moved.is_cuda and model.weight.is_cuda
        assert half.dtype == torch.half
        assert torch.device(0) == torch.device("cuda", 0)          # the accelerator's first, as on a GPU
        assert model(torch.ones(2, 4, device=0)).is_cuda
    assert torch._C._nn._parse_to is parse_to


def test_an_op_without_a_meta_function_runs_its_cpu_kernel_for_the_targets_fakes():
    """Fake tensors run an op that has no meta function (torch 2.11's `_transformer_encoder_layer_fwd`)
    on zeros of their device: on the target, the CPU's kernel, whose results are fakes on the target
    (without it: "Torch not compiled with CUDA enabled" or "Found no NVIDIA driver")."""
    from torch._subclasses import fake_tensor
    from torch.utils import _pytree as pytree
    from inspectors.target import inductor_device
    undo = []
    inductor_device.fallback_kernels_on_cpu(lambda obj, name, value: (undo.append((obj, name, getattr(obj, name))),
                                                                      setattr(obj, name, value)))
    try:
        mode = fake_tensor.FakeTensorMode()
        cuda = torch.device("cuda", 0)
        a = fake_tensor.FakeTensor(mode, torch.empty(4, 3, device="meta"), cuda)
        flat, spec = pytree.tree_flatten(((a, a), {}))
        out = fake_tensor.run_fallback_kernel(mode, torch.ops.aten.add.Tensor, flat, spec, RuntimeError("no meta"))
        assert out.fake_device == cuda and out.shape == (4, 3) and a.fake_device == cuda
    finally:
        for obj, name, value in undo:
            setattr(obj, name, value)
    assert fake_tensor.run_fallback_kernel is undo[0][2]

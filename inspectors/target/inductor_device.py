"""Inductor's and Dynamo's view of the `cuda` device, for the target GPU on a machine without one.

Inductor binds torch.cuda's functions into its `cuda` device interface when it is imported;
`TargetCudaInterface` asks torch.cuda at call time instead, so it gets the target view's answers
(inspectors.target.tensor_view: the SM count, the capability, the properties), and answers itself
what only a GPU could (the raw stream, the device index swaps, the memory allocated). The class is
made on first use (it subclasses torch's `CudaInterface`: torch is imported then, not here).

The device index swaps (`torch.cuda._exchange_device`: Inductor's device guard while it compiles,
Dynamo's `torch.cuda.device(...)` context while it traces, which Liger's ops open) answer device 0,
and a bare ordinal Dynamo folds (`torch.device(0)`) is the GPU's.
"""
from __future__ import annotations

from functools import lru_cache


@lru_cache(maxsize=None)
def target_cuda_interface():
    """The class `TargetCudaInterface` (Inductor's device interface for `cuda`, asking torch.cuda
    at call time)."""
    import torch
    from torch._dynamo import device_interface as di

    def asks(name):
        return staticmethod(lambda *a, **k: getattr(torch.cuda, name)(*a, **k))

    class TargetCudaInterface(di.CudaInterface):
        current_device = asks("current_device")
        set_device = asks("set_device")
        device_count = asks("device_count")
        is_available = asks("is_available")
        synchronize = asks("synchronize")
        get_device_properties = asks("get_device_properties")
        get_compute_capability = staticmethod(lambda device=None: (lambda c: c[0] * 10 + c[1])(
            torch.cuda.get_device_capability(device)))
        current_stream = asks("current_stream")
        get_raw_stream = staticmethod(lambda device=None: 0)
        exchange_device = staticmethod(lambda device: 0)
        maybe_exchange_device = staticmethod(lambda device: 0)
        memory_allocated = staticmethod(lambda device=None: 0)
        is_bf16_supported = staticmethod(lambda including_emulation=True: True)
    return TargetCudaInterface


def install_device_swaps(set_) -> None:
    """The device index swaps of Dynamo's `torch.cuda.device` and Inductor's guard answer device 0,
    and `torch.device(0)` traced by Dynamo is `cuda:0`:
    called by name (torch 2.11) or bound when Dynamo is imported (2.13). `set_(obj, name, value)`
    patches and remembers the undo."""
    import torch
    from torch._dynamo.variables.ctx_manager import CUDADeviceVariable
    for name in ("_exchange_device", "_maybe_exchange_device"):
        set_(torch.cuda, name, lambda device: 0)
    for name in ("_exchange_fn", "_maybe_exchange_fn"):
        if name in vars(CUDADeviceVariable):
            set_(CUDADeviceVariable, name, staticmethod(lambda device: 0))
    # `torch.device(0)` in traced code: Dynamo folds it by calling torch.device, which without an
    # accelerator raises; the target's is CUDA (eagerly, tensor_view answers the same call)
    from torch._dynamo.variables import ConstantVariable
    from torch._dynamo.variables.user_defined import UserDefinedClassVariable
    fold = UserDefinedClassVariable.call_function

    def call_function(var, tx, args, kwargs):
        if var.value is torch.device and len(args) == 1 and not kwargs and args[0].is_python_constant() \
                and type(args[0].as_python_constant()) is int:
            args = [ConstantVariable.create("cuda"), args[0]]
        return fold(var, tx, args, kwargs)
    set_(UserDefinedClassVariable, "call_function", call_function)


def fallback_kernels_on_cpu(set_) -> None:
    """An op with no meta function (torch 2.11's `_transformer_encoder_layer_fwd`, nn.TransformerEncoder's
    inference fast path): the fake tensors run its real kernel on zeros of their device, which on a GPU
    is the GPU's, here a device the machine lacks ("Found no NVIDIA driver"). The target's fakes run it
    on the CPU; its results are the target's fakes again."""
    import torch
    from torch._subclasses import fake_tensor
    from torch.utils import _pytree as pytree
    original, cuda, cpu = fake_tensor.run_fallback_kernel, torch.device("cuda", 0), torch.device("cpu")

    def run_fallback_kernel(fake_mode, func, flat_args, args_spec, orig_not_implemented_exception):
        moved = [a for a in flat_args if isinstance(a, fake_tensor.FakeTensor) and a.fake_device.type == "cuda"]
        for a in moved:
            a.fake_device = cpu
        try:
            out = original(fake_mode, func, flat_args, args_spec, orig_not_implemented_exception)
        finally:
            for a in moved:
                a.fake_device = cuda
        if moved:
            for t in pytree.tree_leaves(out):
                if isinstance(t, fake_tensor.FakeTensor) and t.fake_device.type == "cpu":
                    t.fake_device = cuda
        return out
    set_(fake_tensor, "run_fallback_kernel", run_fallback_kernel)

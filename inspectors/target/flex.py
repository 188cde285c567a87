"""FlexAttention traced for the target: the kernel options it sets from its inputs' device, and
the strides its fake implementation makes (a copy between fake `cuda` tensors a CPU-only torch
cannot make)."""
from __future__ import annotations


def options_as_target(set_) -> None:
    """FlexAttention's kernel options are set from its inputs' device while Dynamo traces: CPU
    inputs get no logsumexp output (CPU is inference only), the target's one whenever grad is on.
    Traced on CPU tensors standing for the target's, the options are asked as the target's.
    `set_(obj, name, value)` patches and remembers the undo."""
    import importlib
    from types import SimpleNamespace

    import torch
    api = importlib.import_module("torch.nn.attention.flex_attention")
    options = api._apply_kernel_options
    on_target = SimpleNamespace(device=torch.device("cuda"))

    def options_on_target(query, key, value, *args, **kwargs):
        if "cpu" in (query.device.type, key.device.type, value.device.type):
            query = key = value = on_target
        return options(query, key, value, *args, **kwargs)
    set_(api, "_apply_kernel_options", options_on_target)


def strides_without_copy(set_) -> None:
    """FlexAttention's fake implementation copies between fake `cuda` tensors, which needs a CUDA
    device guard a CPU-only torch does not have: the copy's result (its strides) made without
    the copy."""
    import contextlib
    import importlib

    import torch
    flex = importlib.import_module("torch._higher_order_ops.flex_attention")
    permute = flex._permute_strides

    def permute_fake(out, query_strides):
        if out.device.type == "cpu":
            return permute(out, query_strides)
        made = out.new_empty_strided(out.shape, out.stride())
        with contextlib.suppress(Exception):
            probe = torch.empty_strided(out.shape, out.stride(), device="meta")
            made = out.new_empty_strided(out.shape, permute(probe, query_strides).stride())
        return made
    set_(flex, "_permute_strides", permute_fake)

"""Ops a CUDA build of torch runs as one kernel where a CPU build decomposes them, traced as CUDA's.

`F.rms_norm` (and `nn.RMSNorm`) calls `aten._fused_rms_norm` on every device. That op has a CUDA
kernel and a CompositeImplicitAutograd one, the CPU's (native_functions.yaml; the only such op
there, 2.11 to 2.13). So on a GPU autograd keeps it whole: AOTAutograd's graph has
`_fused_rms_norm`, its backward (grad mode off, derivatives.yaml) `_fused_rms_norm_backward`, and
Inductor, decomposing both, names the kernels after them: `triton_per_fused__fused_rms_norm_0`,
`..._fused_rms_norm__fused_rms_norm_backward_1` (an H200, torch 2.11:
benchmarks/results/gpu_drivers.txt). On the CPU the op decomposes before tracing sees it: pow,
mean, rsqrt, and a backward of mul and sum, fused and named otherwise
(`triton_per_fused_add_mean_mul_pow_rsqrt_0`).

While torch.compile traces in the view (`install_tracing`), the op goes through autograd as it
does on the GPU: an autograd kernel for the CPU's key whose backward is CUDA's formula, and the
two checks that decompose an op autograd would have decomposed (proxy tensors' and
functionalization's, which ask the tensors' device) say no for it. `_fused_rms_norm_backward`,
which has no CPU kernel, gets one for the CPU graph that runs after Inductor compiled the
target's (its Python decomposition, torch's own), while the view lasts.
"""
from __future__ import annotations

FUSED_ON_CUDA = ("_fused_rms_norm",)     # ops with a CUDA kernel whose CPU kernel is a decomposition


def _fused_rms_norm_function():
    """The autograd of `_fused_rms_norm` as CUDA's (derivatives.yaml): the fused backward when
    grad mode is off and the rstd output takes no gradient, else a differentiable one."""
    import torch
    from torch._decomp import decompositions
    aten = torch.ops.aten

    class FusedRmsNorm(torch.autograd.Function):
        @staticmethod
        def forward(ctx, input, normalized_shape, weight, eps):
            with torch._C._AutoDispatchBelowAutograd():
                out, rstd = aten._fused_rms_norm.default(input, normalized_shape, weight, eps)
            ctx.save_for_backward(input, rstd, weight)
            ctx.set_materialize_grads(False)        # an unused rstd's gradient stays None, as autograd's
            ctx.normalized_shape, ctx.eps = normalized_shape, eps
            return out, rstd

        @staticmethod
        def backward(ctx, grad_out, grad_rstd):
            input, rstd, weight = ctx.saved_tensors
            mask = [ctx.needs_input_grad[0], weight is not None and ctx.needs_input_grad[2]]
            if grad_out is None:
                return None, None, None, None
            if not torch.is_grad_enabled() and grad_rstd is None:
                grad_input, grad_weight = aten._fused_rms_norm_backward.default(
                    grad_out, input, ctx.normalized_shape, rstd, weight, mask)
                return grad_input, None, grad_weight, None
            inputs = [t for t, wanted in zip((input, weight), mask) if wanted]
            with torch.enable_grad():        # the formula's differentiable branch: the decomposition's grads
                out, rstd_again = decompositions._fused_rms_norm(input, ctx.normalized_shape, weight, ctx.eps)
                grads = torch.autograd.grad((out, rstd_again), inputs, (grad_out, grad_rstd),
                                            create_graph=True, allow_unused=True)
            it = iter(grads)
            return next(it) if mask[0] else None, None, next(it) if mask[1] else None, None
    return FusedRmsNorm


def install_tracing(set_, undo: list) -> None:
    """While torch.compile traces in the view: FUSED_ON_CUDA kept whole by autograd, as on the GPU,
    and `_fused_rms_norm_backward` computable on the CPU. `set_(obj, name, value)` and `undo` (a
    list of callables) record the way back."""
    import torch
    from torch._C import DispatchKey
    from torch._subclasses import functional_tensor
    from torch.fx.experimental import proxy_tensor
    from torch._decomp import decompositions
    aten = torch.ops.aten
    function = _fused_rms_norm_function()

    def autograd_cpu(input, normalized_shape, weight=None, eps=None):
        return function.apply(input, normalized_shape, weight, eps)
    op = aten._fused_rms_norm.default
    saved = op.py_kernels.get(DispatchKey.AutogradCPU)
    op.py_kernels[DispatchKey.AutogradCPU] = autograd_cpu
    op._dispatch_cache.clear()
    for module in (proxy_tensor, functional_tensor):
        would = module.autograd_would_have_decomposed
        set_(module, "autograd_would_have_decomposed",
             lambda func, flat_args, would=would: False if func.name().split("::")[-1] in FUSED_ON_CUDA
             else would(func, flat_args))
    lib = torch.library.Library("aten", "IMPL")      # the CPU graph's backward: torch's decomposition
    lib.impl("_fused_rms_norm_backward", decompositions._fused_rms_norm_backward, "CPU")

    def back():
        if saved is None:
            op.py_kernels.pop(DispatchKey.AutogradCPU, None)
        else:
            op.py_kernels[DispatchKey.AutogradCPU] = saved
        op._dispatch_cache.clear()
        lib._destroy()
    undo.append(back)

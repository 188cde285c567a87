"""A user's Triton kernel registered as a PyTorch op (`torch.library.triton_op`, launched with
`wrap_triton`) with its own backward (`register_autograd`), called in a compiled function:
Inductor sees into the op and fuses around it."""
import torch
import triton
import triton.language as tl
from torch.library import triton_op, wrap_triton


@triton.jit
def scale_kernel(x_ptr, out_ptr, n, s, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=m) * s, mask=m)


@triton_op("tlens_snippets::scale", mutates_args={})
def scale(x: torch.Tensor, s: float) -> torch.Tensor:
    out = torch.empty_like(x)
    n = x.numel()
    wrap_triton(scale_kernel)[(triton.cdiv(n, 1024),)](x, out, n, s, BLOCK=1024)
    return out


def _backward(ctx, grad):
    return scale(grad, ctx.s), None


def _setup(ctx, inputs, output):
    ctx.s = inputs[1]


scale.register_autograd(_backward, setup_context=_setup)


def example():
    x = torch.randn(4096, device="cuda", requires_grad=True)
    torch.compile(lambda t: scale(t.sin(), 3.0).sum())(x).backward()
    assert x.grad is not None

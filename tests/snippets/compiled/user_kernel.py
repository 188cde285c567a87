"""A Triton kernel of the user's own inside a compiled function (`fullgraph=True`): Inductor
compiles it as one of the graph's kernels, beside its own fused relu-and-scale kernel."""
import torch
import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=m) + tl.load(y_ptr + offs, mask=m), mask=m)


@torch.compile(fullgraph=True)
def add_relu(x, y):
    out = torch.empty_like(x)
    n = x.numel()
    add_kernel[(triton.cdiv(n, 256),)](x, y, out, n, BLOCK=256)
    return out.relu() * 2


def example():
    add_relu(torch.randn(4096, device="cuda"), torch.randn(4096, device="cuda"))

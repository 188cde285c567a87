"""A @triton.jit helper whose load is strided by 3: the compiler's vectorization remark names
the helper's line, and the call site."""
import torch
import triton
import triton.language as tl


@triton.jit
def _load_row(ptr, offs):
    return tl.load(ptr + offs)


@triton.jit
def k(x_ptr, y_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = _load_row(x_ptr, offs * 3)
    tl.store(y_ptr + offs, x)


def example():
    x = torch.randn(3 * 256, dtype=torch.float16)
    y = torch.empty(256, dtype=torch.float16)
    k[(1,)](x, y, BLOCK=256)

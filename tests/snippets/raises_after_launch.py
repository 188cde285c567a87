import torch
import triton
import triton.language as tl


@triton.jit
def double(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2, mask=offs < n)


def example():
    x = torch.rand(4096)
    double[(4,)](x, 4096, BLOCK=1024)
    double[(4,)](x[1:], 4095, BLOCK=1024)
    raise ValueError("the driver's own check failed after two launches")

import torch
import triton
import triton.language as tl


@triton.jit
def bad_dot(a_ptr, b_ptr, c_ptr, M: tl.constexpr):
    offs = tl.arange(0, M)
    a = tl.load(a_ptr + offs[:, None] * M + offs[None, :])
    b = tl.load(b_ptr + tl.arange(0, 32)[:, None] * M + offs[None, :])
    c = tl.dot(a, b)
    tl.store(c_ptr + offs[:, None] * M + offs[None, :], c)


def example():
    a = torch.empty(64, 64, dtype=torch.float16)
    c = torch.empty(64, 64)
    bad_dot[(1,)](a, a, c, 64)

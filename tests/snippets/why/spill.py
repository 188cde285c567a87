"""A kernel that spills: a 128 x 128 fp32 tile and its input over 128 threads (256 floats a thread) through a
loop of sin/cos, where ptxas runs out of registers."""
import torch
import triton
import triton.language as tl


@triton.jit
def heavy(x_ptr, y_ptr, N: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    acc = tl.zeros((BLOCK, N), dtype=tl.float32)
    rows = tl.arange(0, N)
    x = tl.load(x_ptr + offs[:, None] * N + rows[None, :])
    for i in range(2):
        acc += tl.sin(x * i) * tl.cos(acc + i)
    tl.store(y_ptr + offs[:, None] * N + rows[None, :], acc)


def example():
    x = torch.randn(128, 128)
    y = torch.empty(128, 128)
    heavy[(1,)](x, y, N=128, BLOCK=128, num_warps=4)

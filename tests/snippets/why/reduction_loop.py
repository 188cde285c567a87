"""A reduction loop without a tl.dot, as a plain range (Triton leaves its load synchronous) and as
tl.range(..., num_stages=3) (the load becomes a cp.async copied ahead)."""
import torch
import triton
import triton.language as tl


@triton.jit
def red_plain(x_ptr, y_ptr, N, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for i in range(0, N, BLOCK):
        acc += tl.load(x_ptr + i + offs)
    tl.store(y_ptr + offs, acc)


@triton.jit
def red_range(x_ptr, y_ptr, N, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for i in tl.range(0, N, BLOCK, num_stages=3):
        acc += tl.load(x_ptr + i + offs)
    tl.store(y_ptr + offs, acc)


def example():
    x = torch.randn(1 << 16)
    y = torch.empty(1024)
    red_plain[(1,)](x, y, 1 << 16, BLOCK=1024)
    red_range[(1,)](x, y, 1 << 16, BLOCK=1024)

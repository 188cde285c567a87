"""Loops for the Why list: a matmul K loop at num_stages=3 (pipelined into cp.async) and 1 (not),
and a gather whose second load takes its address from the first (an indirect access)."""
import torch
import triton
import triton.language as tl


@triton.jit
def mm(a_ptr, b_ptr, c_ptr, K, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    a_ptrs = a_ptr + offs[:, None] * K + offs[None, :]
    b_ptrs = b_ptr + offs[:, None] * BLOCK + offs[None, :]
    acc = tl.zeros((BLOCK, BLOCK), dtype=tl.float32)
    for k in range(0, K, BLOCK):
        a = tl.load(a_ptrs)
        b = tl.load(b_ptrs)
        acc = tl.dot(a, b, acc)
        a_ptrs += BLOCK
        b_ptrs += BLOCK * BLOCK
    tl.store(c_ptr + offs[:, None] * BLOCK + offs[None, :], acc)


@triton.jit
def gather_sum(x_ptr, y_ptr, idx_ptr, N, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for i in range(0, N, BLOCK):
        idx = tl.load(idx_ptr + i + offs)
        x = tl.load(x_ptr + idx)
        acc += x
    tl.store(y_ptr + offs, acc)


def example():
    a = torch.randn(64, 1024, dtype=torch.float16)
    b = torch.randn(1024, 64, dtype=torch.float16)
    c = torch.empty(64, 64)
    mm[(1,)](a, b, c, 1024, BLOCK=64, num_stages=3)
    mm[(1,)](a, b, c, 1024, BLOCK=64, num_stages=1)
    x = torch.randn(4096)
    idx = torch.randint(0, 4096, (4096,), dtype=torch.int32)
    y = torch.empty(128)
    gather_sum[(1,)](x, y, idx, 4096, BLOCK=128, num_stages=3)

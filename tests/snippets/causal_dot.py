"""A causal loop: program i runs i + 1 steps of a 64x64x64 dot (its bound depends on the
program id), for tests/unit/test_step_estimates.py."""
import torch
import triton
import triton.language as tl


@triton.jit
def causal_kernel(q_ptr, k_ptr, o_ptr, n_blocks, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    q = tl.load(q_ptr + offs[:, None] * BLOCK + offs[None, :])
    acc = tl.zeros((BLOCK, BLOCK), dtype=tl.float32)
    for j in range(0, pid + 1):
        k = tl.load(k_ptr + j * BLOCK * BLOCK + offs[:, None] * BLOCK + offs[None, :])
        acc += tl.dot(q, k)
    tl.store(o_ptr + pid * BLOCK * BLOCK + offs[:, None] * BLOCK + offs[None, :], acc.to(tl.float16))


def example():
    blocks = 16
    q = torch.randn(64, 64, dtype=torch.float16)
    k = torch.randn(blocks * 64, 64, dtype=torch.float16)
    o = torch.empty(blocks * 64, 64, dtype=torch.float16)
    causal_kernel[(blocks,)](q, k, o, blocks, BLOCK=64)

"""A quick kernel, then ten large matmul tiles: the first launch is ready in a second, the
rest take a while (the page shows the first while they compile)."""
import torch
import triton
import triton.language as tl


@triton.jit
def scale_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2.0, mask=offs < n)


@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K,
                  BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pm, pn = tl.program_id(0), tl.program_id(1)
    rm = pm * BM + tl.arange(0, BM)
    rn = pn * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :])
        b = tl.load(b_ptr + (k + rk)[:, None] * N + rn[None, :])
        acc += tl.dot(a, b)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc.to(tl.float16))


def example():
    x = torch.randn(4096, device="cuda")
    y = torch.empty_like(x)
    scale_kernel[(4,)](x, y, x.numel(), BLOCK=1024)
    a = torch.randn(1024, 1024, device="cuda", dtype=torch.float16)
    b = torch.randn(1024, 1024, device="cuda", dtype=torch.float16)
    c = torch.empty(1024, 1024, device="cuda", dtype=torch.float16)
    for bm, bn, bk, stages in ((128, 256, 64, 4), (256, 128, 64, 4), (128, 128, 64, 5), (256, 256, 32, 3),
                               (128, 256, 32, 5), (64, 256, 64, 4), (256, 128, 32, 5), (128, 128, 128, 3),
                               (256, 64, 64, 4), (64, 128, 128, 4)):
        matmul_kernel[(1024 // bm, 1024 // bn)](a, b, c, 1024, 1024, 1024, BM=bm, BN=bn, BK=bk,
                                                num_warps=8, num_stages=stages)

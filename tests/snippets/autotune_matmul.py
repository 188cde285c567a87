"""An autotuned matmul as libraries write one: eight configs (tile sizes, warps, stages), each a
launch of its own to compile, as the JIT's autotuner compiles every config it times."""
import torch
import triton
import triton.language as tl

CONFIGS = [triton.Config({"BM": m, "BN": n, "BK": k}, num_warps=w, num_stages=s)
           for m, n, k, w, s in ((128, 128, 64, 8, 3), (128, 64, 32, 4, 4), (64, 128, 32, 4, 4), (128, 32, 32, 4, 4),
                                 (64, 64, 32, 4, 3), (64, 32, 32, 2, 5), (32, 64, 32, 2, 5), (128, 128, 32, 8, 4))]


@triton.autotune(configs=CONFIGS, key=["M", "N", "K"])
@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pid_m, pid_n = tl.program_id(0), tl.program_id(1)
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :], mask=(rm[:, None] < M) & ((k + rk)[None, :] < K))
        b = tl.load(b_ptr + (k + rk)[:, None] * N + rn[None, :], mask=((k + rk)[:, None] < K) & (rn[None, :] < N))
        acc += tl.dot(a, b)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc.to(tl.float16), mask=(rm[:, None] < M) & (rn[None, :] < N))


def example():
    a = torch.randn(512, 512, dtype=torch.float16)
    b = torch.randn(512, 512, dtype=torch.float16)
    c = torch.empty(512, 512, dtype=torch.float16)
    matmul_kernel[lambda meta: (triton.cdiv(512, meta["BM"]), triton.cdiv(512, meta["BN"]))](a, b, c, 512, 512, 512)

"""Coalescing: the same row sums read from row-major and from transposed storage

Both kernels compute out[m] = sum over n of A[m, n] with the same loop and reduction
(shfl.sync.bfly, then shared memory across warps); only the address differs.
sum_rows_kernel reads A row-major: program m walks row m at m*N + n, so a warp's 32
lanes cover 512 contiguous bytes with ld.global.v4.b32 (4 floats each). sum_cols_kernel
reads the same numbers from A.T stored contiguously, shape (N, M): program m walks
column m at n*M + m, so every float is its own ld.global.b32 (plus a mul.lo.s32), and
one warp-wide load touches 32 different 32-byte sectors, M*4 bytes apart, using 4 of each.
"""
import torch
import triton
import triton.language as tl


@triton.jit
def sum_rows_kernel(x_ptr,  # pointer to A, (M, N) row-major
                    out_ptr,  # pointer to the row sums, (M,)
                    M,  # rows of A
                    N,  # columns of A (also the row stride)
                    BLOCK_N: tl.constexpr,  # columns read per loop iteration
                    ):
    m = tl.program_id(0)  # one program per row
    acc = tl.zeros((BLOCK_N,), dtype=tl.float32)
    for start in range(0, N, BLOCK_N):
        n = start + tl.arange(0, BLOCK_N)
        acc += tl.load(x_ptr + m * N + n, mask=n < N, other=0.0)  # contiguous in n
    tl.store(out_ptr + m, tl.sum(acc, axis=0))


@triton.jit
def sum_cols_kernel(xt_ptr,  # pointer to A.T, stored contiguously: (N, M)
                    out_ptr,  # pointer to the row sums of A (= column sums of A.T), (M,)
                    M,  # rows of A (also the row stride of A.T)
                    N,  # columns of A
                    BLOCK_N: tl.constexpr,  # elements of column m read per loop iteration
                    ):
    m = tl.program_id(0)  # one program per column of A.T
    acc = tl.zeros((BLOCK_N,), dtype=tl.float32)
    for start in range(0, N, BLOCK_N):
        n = start + tl.arange(0, BLOCK_N)
        acc += tl.load(xt_ptr + n * M + m, mask=n < N, other=0.0)  # stride M in n
    tl.store(out_ptr + m, tl.sum(acc, axis=0))


def row_sums(x: torch.Tensor, BLOCK_N: int = 1024) -> torch.Tensor:
    """Row sums of a row-major (M, N) matrix: coalesced reads."""
    assert x.dim() == 2 and x.is_contiguous()
    M, N = x.shape
    out = torch.empty(M, dtype=x.dtype, device=x.device)
    sum_rows_kernel[(M,)](x, out, M, N, BLOCK_N=BLOCK_N, num_warps=4)
    return out


def row_sums_from_transposed(xt: torch.Tensor, BLOCK_N: int = 1024) -> torch.Tensor:
    """Row sums of A given xt = A.T stored contiguously, shape (N, M): strided reads."""
    assert xt.dim() == 2 and xt.is_contiguous()
    N, M = xt.shape
    out = torch.empty(M, dtype=xt.dtype, device=xt.device)
    sum_cols_kernel[(M,)](xt, out, M, N, BLOCK_N=BLOCK_N, num_warps=4)
    return out


def reference(x: torch.Tensor) -> torch.Tensor:
    return x.sum(dim=1)


def make_inputs(small: bool = False):
    M, N = (48, 300) if small else (2048, 2048)
    return (torch.randn(M, N),)


def example():
    (x,) = make_inputs()
    row_sums(x)
    row_sums_from_transposed(x.t().contiguous())


def check():
    torch.manual_seed(0)
    (x,) = make_inputs(small=True)
    expected = reference(x)
    torch.testing.assert_close(row_sums(x, BLOCK_N=128), expected, atol=1e-4, rtol=1e-5)
    torch.testing.assert_close(row_sums_from_transposed(x.t().contiguous(), BLOCK_N=128), expected,
                               atol=1e-4, rtol=1e-5)


# ---- benchmark: read by inspectors/bench/model.py (the Benchmark page, benchmarks/gpu_bench.py) ----
BENCH_SIZES = (1024, 2048, 4096, 8192, 16384)
BENCH_SIZE = 8192
BENCH_SIZE_NAME = "M = N (fp32)"
BENCH_BOUND = "memory"
BENCH_TOL = (1e-2, 1e-4)  # sums of up to 16384 floats, added in a different order than torch


def bench_inputs(size: int):
    x = torch.randn(size, size)
    return x, x.t().contiguous()  # A, and A.T stored contiguously for the strided kernel


def bench_kernel(x, xt):
    return row_sums(x)


def bench_reference(x, xt):
    return reference(x)


def bench_bytes(x, xt) -> int:
    return (x.numel() + x.shape[0]) * x.element_size()  # A read once, the sums written


def bench_flops(x, xt) -> int:
    return x.numel()


def bench_baselines():
    return {"Triton, strided (sum_cols_kernel)": lambda x, xt: row_sums_from_transposed(xt)}

"""Fused add-multiply-activation: out = act(x + y * w), the activation a constexpr

One pass instead of three, as in the CUDA MODE talk on fusing kernels. ACTIVATION is a
tl.constexpr string, so `if ACTIVATION == "relu":` is resolved at compile time and each
activation compiles to its own kernel: relu adds max.f32, silu ex2.approx.f32 and
div.full.f32; in both, y * w + x is one fma.rn.f32. x and y load as ld.global.v4.b32 in
the 8x128 tile layout. The 128 weights load once per program, one per thread
(ld.global.b32); a ttg.convert_layout (see the TTGIR) then moves them through 512 bytes
of shared memory into the tile layout, where the [None, :] broadcast costs nothing.
"""
import torch
import triton
import triton.language as tl


@triton.jit
def fused_add_mul_act_kernel(x_ptr,  # pointer to x, (n_rows, n_cols) contiguous
                             y_ptr,  # pointer to y, (n_rows, n_cols) contiguous
                             w_ptr,  # pointer to the weight, (n_cols,), shared by all rows
                             out_ptr,  # pointer to the output, (n_rows, n_cols)
                             n_rows,  # batch size
                             n_cols,  # width (also the row stride)
                             BLOCK_M: tl.constexpr,  # rows per program
                             BLOCK_N: tl.constexpr,  # columns per program
                             ACTIVATION: tl.constexpr,  # "relu", "gelu" or "silu"
                             ):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rows = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    col_mask = cols < n_cols
    mask = (rows[:, None] < n_rows) & col_mask[None, :]
    offsets = rows[:, None] * n_cols + cols[None, :]
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    w = tl.load(w_ptr + cols, mask=col_mask)  # once per tile, reused by every row
    z = x + y * w[None, :]
    if ACTIVATION == "relu":
        out = tl.maximum(z, 0.0)
    elif ACTIVATION == "gelu":  # tanh form, tanh(u) = 2 sigmoid(2u) - 1
        inner = 0.7978845608028654 * (z + 0.044715 * z * z * z)
        out = 0.5 * z * (1.0 + (2.0 * tl.sigmoid(2.0 * inner) - 1.0))
    elif ACTIVATION == "silu":
        out = z * tl.sigmoid(z)
    else:
        tl.static_assert(False, "ACTIVATION must be relu, gelu or silu")
    tl.store(out_ptr + offsets, out, mask=mask)


def add_mul_act(x: torch.Tensor, y: torch.Tensor, w: torch.Tensor, activation: str = "relu",
                BLOCK_M: int = 8, BLOCK_N: int = 128, num_warps: int = 4) -> torch.Tensor:
    """act(x + y * w) for x, y of shape (batch, width) and w of shape (width,)."""
    assert activation in ("relu", "gelu", "silu"), activation
    assert x.shape == y.shape and x.dim() == 2 and w.shape == (x.shape[1],)
    assert x.is_contiguous() and y.is_contiguous() and w.is_contiguous()
    n_rows, n_cols = x.shape
    out = torch.empty_like(x)
    grid = (triton.cdiv(n_rows, BLOCK_M), triton.cdiv(n_cols, BLOCK_N))
    fused_add_mul_act_kernel[grid](x, y, w, out, n_rows, n_cols, BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N,
                                   ACTIVATION=activation, num_warps=num_warps)
    return out


def reference(x: torch.Tensor, y: torch.Tensor, w: torch.Tensor,
              activation: str = "relu") -> torch.Tensor:
    z = x + y * w
    if activation == "relu":
        return torch.relu(z)
    if activation == "gelu":
        return torch.nn.functional.gelu(z, approximate="tanh")
    return torch.nn.functional.silu(z)


def make_inputs(small: bool = False):
    batch, width = (19, 200) if small else (4096, 1024)
    return torch.randn(batch, width), torch.randn(batch, width), torch.randn(width)


def example():
    x, y, w = make_inputs()
    add_mul_act(x, y, w, "relu")
    add_mul_act(x, y, w, "silu")


def check():
    torch.manual_seed(0)
    x, y, w = make_inputs(small=True)
    for activation in ("relu", "gelu", "silu"):
        torch.testing.assert_close(add_mul_act(x, y, w, activation), reference(x, y, w, activation),
                                   atol=1e-5, rtol=1e-5)


# ---- benchmark: read by inspectors/bench/model.py (the Benchmark page, benchmarks/gpu_bench.py) ----
# The seed's sizes: batch 4 ... 262144 with weight width 2 * sqrt(batch) (4 ... 1024).
BENCH_SIZES = (4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144)
BENCH_SIZE = 16384
BENCH_SIZE_NAME = "batch (width = 2*sqrt(batch), fp32, relu)"
BENCH_BOUND = "memory"
BENCH_TOL = (1e-5, 1e-5)


def bench_width(batch: int) -> int:
    return 2 * int(round(batch ** 0.5))


def bench_inputs(size: int):
    width = bench_width(size)
    return torch.randn(size, width), torch.randn(size, width), torch.randn(width)


def bench_kernel(x, y, w):
    return add_mul_act(x, y, w, "relu")


def bench_reference(x, y, w):
    return torch.relu(x + y * w)


def bench_bytes(x, y, w) -> int:
    return (3 * x.numel() + w.numel()) * x.element_size()  # x, y read, out written, w once


def bench_flops(x, y, w) -> int:
    return 3 * x.numel()  # mul, add, max


def bench_baselines():
    return {"TorchScript": torch.jit.script(bench_reference)}

"""Transpose: a naive tile transpose, and how Triton's layout conversion rescues the store

Each program loads a 64x64 tile of X row-wise (v4 loads: 16 sectors per warp request) and
stores it to out[n, m], whose addresses run along m. The coalesce pass gives the store its
own layout (order [0, 1]) and inserts ttg.convert_layout: the tile goes through shared
memory (st.shared, bar.sync, ld.shared) and the stores are v4 and coalesced too.
transpose_opaque_kernel hides the output's unit stride (do_not_specialize): the compiler
must guess the store layout. Triton 3.9 puts lanes along n: 32 sectors per request (12.5 %);
Triton 3.6 happens to put them along m: scalar stores of 4 sectors, 4x the instructions.
"""
import torch
import triton
import triton.language as tl


@triton.jit
def transpose_kernel(x_ptr,  # pointer to X, (M, N) row-major
                     out_ptr,  # pointer to X.T, (N, M) row-major
                     M,  # rows of X
                     N,  # columns of X
                     BLOCK_M: tl.constexpr,  # rows of X per program
                     BLOCK_N: tl.constexpr,  # columns of X per program
                     ):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    mask = (offs_m[:, None] < M) & (offs_n[None, :] < N)
    tile = tl.load(x_ptr + offs_m[:, None] * N + offs_n[None, :], mask=mask)  # contiguous in n
    tl.store(out_ptr + offs_n[None, :] * M + offs_m[:, None], tile, mask=mask)  # contiguous in m


@triton.jit(do_not_specialize=["stride_om"])
def transpose_opaque_kernel(x_ptr,  # pointer to X, (M, N) row-major
                            out_ptr,  # pointer to the output
                            M,  # rows of X
                            N,  # columns of X
                            stride_on,  # output stride along n (M for X.T)
                            stride_om,  # output stride along m (1 for X.T, hidden from the compiler)
                            BLOCK_M: tl.constexpr,  # rows of X per program
                            BLOCK_N: tl.constexpr,  # columns of X per program
                            ):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    mask = (offs_m[:, None] < M) & (offs_n[None, :] < N)
    tile = tl.load(x_ptr + offs_m[:, None] * N + offs_n[None, :], mask=mask)
    tl.store(out_ptr + offs_n[None, :] * stride_on + offs_m[:, None] * stride_om, tile, mask=mask)


def transpose(x: torch.Tensor, BLOCK_M: int = 64, BLOCK_N: int = 64, opaque: bool = False) -> torch.Tensor:
    """X.T as a new contiguous (N, M) tensor; `opaque` hides the output's unit stride."""
    assert x.dim() == 2 and x.is_contiguous()
    M, N = x.shape
    out = torch.empty((N, M), dtype=x.dtype, device=x.device)
    grid = (triton.cdiv(M, BLOCK_M), triton.cdiv(N, BLOCK_N))
    if opaque:
        transpose_opaque_kernel[grid](x, out, M, N, out.stride(0), out.stride(1),
                                      BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, num_warps=4)
    else:
        transpose_kernel[grid](x, out, M, N, BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, num_warps=4)
    return out


def reference(x: torch.Tensor) -> torch.Tensor:
    return x.t().contiguous()


def make_inputs(small: bool = False):
    M, N = (80, 48) if small else (2048, 2048)
    return (torch.randn(M, N),)


def example():
    (x,) = make_inputs()
    transpose(x)
    transpose(x, opaque=True)


def check():
    torch.manual_seed(0)
    (x,) = make_inputs(small=True)
    torch.testing.assert_close(transpose(x, BLOCK_M=32, BLOCK_N=32), reference(x))
    torch.testing.assert_close(transpose(x, BLOCK_M=32, BLOCK_N=32, opaque=True), reference(x))

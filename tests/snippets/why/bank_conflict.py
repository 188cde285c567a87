"""A deliberately unswizzled shared buffer (Gluon, explicit layouts): a 32 x 32 fp32 tile stored
row by row into shared memory with no swizzle and no padding, then read back down the columns.
Each row is 128 bytes, so the 32 lanes that read one column all hit the same bank: the reads are
32-way bank conflicts. The `padded` kernel pads each row by one word, which spreads a column over
the 32 banks."""
import torch
from triton.experimental import gluon
from triton.experimental.gluon import language as gl


@gluon.jit
def column_reads(x_ptr, y_ptr, BLOCK: gl.constexpr):
    rows: gl.constexpr = gl.BlockedLayout([1, 1], [1, 32], [4, 1], [1, 0])     # a warp's lanes along a row
    cols: gl.constexpr = gl.BlockedLayout([1, 1], [32, 1], [1, 4], [0, 1])     # a warp's lanes down a column
    plain: gl.constexpr = gl.SwizzledSharedLayout(1, 1, 1, order=[1, 0])      # no swizzle, no padding
    offs_m = gl.arange(0, BLOCK, layout=gl.SliceLayout(1, rows))
    offs_n = gl.arange(0, BLOCK, layout=gl.SliceLayout(0, rows))
    x = gl.load(x_ptr + offs_m[:, None] * BLOCK + offs_n[None, :])
    tile = gl.allocate_shared_memory(gl.float32, [BLOCK, BLOCK], plain, x)
    y = tile.load(cols)
    out_m = gl.arange(0, BLOCK, layout=gl.SliceLayout(1, cols))
    out_n = gl.arange(0, BLOCK, layout=gl.SliceLayout(0, cols))
    gl.store(y_ptr + out_m[:, None] * BLOCK + out_n[None, :], y)


@gluon.jit
def column_reads_padded(x_ptr, y_ptr, BLOCK: gl.constexpr):
    rows: gl.constexpr = gl.BlockedLayout([1, 1], [1, 32], [4, 1], [1, 0])
    cols: gl.constexpr = gl.BlockedLayout([1, 1], [32, 1], [1, 4], [0, 1])
    padded: gl.constexpr = gl.PaddedSharedLayout.with_identity_for([[32, 1]], [BLOCK, BLOCK], [1, 0])
    offs_m = gl.arange(0, BLOCK, layout=gl.SliceLayout(1, rows))
    offs_n = gl.arange(0, BLOCK, layout=gl.SliceLayout(0, rows))
    x = gl.load(x_ptr + offs_m[:, None] * BLOCK + offs_n[None, :])
    tile = gl.allocate_shared_memory(gl.float32, [BLOCK, BLOCK], padded, x)
    y = tile.load(cols)
    out_m = gl.arange(0, BLOCK, layout=gl.SliceLayout(1, cols))
    out_n = gl.arange(0, BLOCK, layout=gl.SliceLayout(0, cols))
    gl.store(y_ptr + out_m[:, None] * BLOCK + out_n[None, :], y)


def example():
    x = torch.randn(32, 32)
    y = torch.empty_like(x)
    column_reads[(1,)](x, y, BLOCK=32, num_warps=4)
    column_reads_padded[(1,)](x, y, BLOCK=32, num_warps=4)

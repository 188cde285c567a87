"""A row softmax in Gluon (`triton.experimental.gluon`): the layout is explicit, and passed from
the host as Triton's Gluon tutorials do."""
import torch
import triton
from triton.experimental import gluon
from triton.experimental.gluon import language as gl


@gluon.jit
def softmax_kernel(x_ptr, y_ptr, n_cols, BLOCK: gl.constexpr, layout: gl.constexpr):
    row = gl.program_id(0)
    offs = gl.arange(0, BLOCK, layout=layout)
    mask = offs < n_cols
    x = gl.load(x_ptr + row * n_cols + offs, mask=mask, other=-float("inf"))
    m = gl.max(x, axis=0)
    e = gl.exp(x - m)
    gl.store(y_ptr + row * n_cols + offs, e / gl.sum(e, axis=0), mask=mask)


def example():
    x = torch.randn(64, 1024)
    y = torch.empty_like(x)
    layout = gl.BlockedLayout(size_per_thread=[4], threads_per_warp=[32], warps_per_cta=[4], order=[0])
    softmax_kernel[(64,)](x, y, 1024, BLOCK=1024, layout=layout, num_warps=4)

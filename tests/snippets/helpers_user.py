"""Helpers in the kernel file (one calling another: nested), a helper called four times
from a tl.static_range loop, and a helper imported from another file of the user's: the
source map follows each op to its own line and keeps the call sites."""
import torch
import triton
import triton.language as tl

from tests.snippets.jit_helpers import scaled_load


@triton.jit
def _load_block(ptr, offs, mask):
    return tl.load(ptr + offs, mask=mask)


@triton.jit
def _load_twice(x_ptr, y_ptr, offs, mask):
    x = _load_block(x_ptr, offs, mask)
    y = _load_block(y_ptr, offs, mask)
    return x + y


@triton.jit
def helpers_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK * 5 + tl.arange(0, BLOCK)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for i in tl.static_range(4):
        o = offs + (i + 1) * BLOCK
        acc += _load_block(x_ptr, o, o < n)
    acc += _load_twice(x_ptr, y_ptr, offs, offs < n)
    acc += scaled_load(y_ptr, offs + 1, offs + 1 < n, 2.0)
    tl.store(out_ptr + offs, acc, mask=offs < n)


def example():
    x, y = torch.randn(8192), torch.randn(8192)
    out = torch.empty_like(x)
    helpers_kernel[(8,)](x, y, out, x.numel(), BLOCK=256)

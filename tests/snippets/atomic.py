import torch
import triton
import triton.language as tl


@triton.jit
def histogram(x_ptr, bins_ptr, n, NBINS: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    v = tl.load(x_ptr + offs, mask=mask, other=0)
    tl.atomic_add(bins_ptr + (v % NBINS), 1, mask=mask)


def example():
    x = torch.randint(0, 100, (4096,), dtype=torch.int32)
    bins = torch.zeros(16, dtype=torch.int32)
    histogram[(4,)](x, bins, 4096, NBINS=16, BLOCK=1024)

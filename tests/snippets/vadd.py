import torch
import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x + y, mask=mask)


def add(x, y, BLOCK=1024):
    out = torch.empty_like(x)
    n = out.numel()
    add_kernel[(triton.cdiv(n, BLOCK),)](x, y, out, n, BLOCK=BLOCK)
    return out


def example():
    x, y = torch.rand(4096), torch.rand(4096)
    add(x, y)                  # aligned, n % 16 == 0      -> ld.global.v4
    add(x[1:], y[1:])          # misaligned, n % 16 != 0   -> scalar loads
    add(x[:4000], y[:4000])    # aligned, n = 4000 (divisible by 16)
    add(x[:4001], y[:4001])    # aligned, n = 4001 (not divisible by 16)

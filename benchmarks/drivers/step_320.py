"""A step of 320 launches (benchmarks/big_step.py): one elementwise kernel specialized 320 ways,
as a training step's many small kernels are (8 ops x 4 dtypes x 10 block sizes), each a
distinct compile with every stage."""
import torch
import triton
import triton.language as tl


@triton.jit
def pointwise_kernel(x_ptr, y_ptr, n, OP: tl.constexpr, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask).to(tl.float32)
    if OP == 0:
        y = x * 2.0
    elif OP == 1:
        y = tl.maximum(x, 0.0)
    elif OP == 2:
        y = x * tl.sigmoid(x)
    elif OP == 3:
        y = 0.5 * x * (1.0 + tl.erf(x * 0.7071067811865476))
    elif OP == 4:
        y = tl.exp(x) - 1.0
    elif OP == 5:
        y = x * x + 1.0
    elif OP == 6:
        y = tl.sqrt(tl.abs(x))
    else:
        y = tl.where(x > 0, x, 0.01 * x)
    tl.store(y_ptr + offs, y.to(y_ptr.dtype.element_ty), mask=mask)


DTYPES = (torch.float32, torch.float16, torch.bfloat16, torch.float64)
BLOCKS = (32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384)


def example():
    n = 1 << 16
    for dtype in DTYPES:
        x = torch.randn(n, dtype=dtype)
        y = torch.empty_like(x)
        for op in range(8):
            for block in BLOCKS:
                pointwise_kernel[(triton.cdiv(n, block),)](x, y, n, OP=op, BLOCK=block)

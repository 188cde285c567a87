import torch
import triton
import triton.language as tl


@triton.jit
def copy_strided(src_ptr, dst_ptr, n, stride, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    v = tl.load(src_ptr + offs * stride, mask=mask)
    tl.store(dst_ptr + offs, v, mask=mask)


def example():
    a = torch.rand(4096 * 3)
    out = torch.empty(4096)
    copy_strided[(4,)](a, out, 4096, 1, BLOCK=1024)   # stride == 1: the JIT makes it a constexpr
    copy_strided[(4,)](a, out, 4096, 3, BLOCK=1024)   # runtime stride 3
    copy_strided[(4,)](a, out, 4096, 16, BLOCK=1024)  # stride divisible by 16

"""Strided read: every k-th float, and what the memory system fetches for it

strided_read_kernel copies x[i * stride] to out[i]. The store is contiguous: v4, a warp
writes 512 bytes in 16 sectors of 32 bytes, all used. The load's offsets are multiplied by
a runtime stride, so nothing proves two neighbours contiguous: each thread reads its 4
elements with 4 scalar ld.global.b32, lane t at (4t + j) * stride, so the 32 lanes sit
16 * stride bytes apart: 32 sectors per warp request, 4 useful bytes each (12.5 %). At
stride 2 the next 3 loads hit the same sectors again (DRAM reads 2x the data); at stride 8
nothing is reused (8x). The hardware moves whole sectors; the rest is thrown away.
"""
import torch
import triton
import triton.language as tl


@triton.jit
def strided_read_kernel(x_ptr,  # pointer to the input, at least n * stride elements
                        out_ptr,  # pointer to the output, n elements
                        n,  # number of elements to copy
                        stride,  # distance between the elements read, in elements
                        BLOCK: tl.constexpr,  # elements per program
                        ):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs * stride, mask=mask)  # stride * 4 bytes between neighbours
    tl.store(out_ptr + offs, x, mask=mask)  # contiguous


def strided_read(x: torch.Tensor, stride: int, BLOCK: int = 1024) -> torch.Tensor:
    """x[::stride] as a new contiguous tensor."""
    assert x.dim() == 1 and x.is_contiguous() and stride >= 1
    n = triton.cdiv(x.numel(), stride)
    out = torch.empty(n, dtype=x.dtype, device=x.device)
    strided_read_kernel[(triton.cdiv(n, BLOCK),)](x, out, n, stride, BLOCK=BLOCK, num_warps=4)
    return out


def reference(x: torch.Tensor, stride: int) -> torch.Tensor:
    return x[::stride].contiguous()


def make_inputs(small: bool = False):
    return (torch.randn(3000 if small else 2**24),)


def example():
    (x,) = make_inputs()
    strided_read(x, 2)
    strided_read(x, 8)


def check():
    torch.manual_seed(0)
    (x,) = make_inputs(small=True)
    for stride in (1, 2, 3, 8):
        torch.testing.assert_close(strided_read(x, stride, BLOCK=128), reference(x, stride))

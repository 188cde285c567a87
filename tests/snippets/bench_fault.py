"""A kernel that stores 256 GiB past its output: an illegal address on a GPU, a segfault on
the interpreter. The benchmark must report it and the app must keep serving."""
import torch
import triton
import triton.language as tl


@triton.jit
def bad_copy_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets.to(tl.int64) + (1 << 36), x, mask=mask)  # far out of bounds


def bad_copy(x):
    out = torch.empty_like(x)
    bad_copy_kernel[(triton.cdiv(x.numel(), 1024),)](x, out, x.numel(), BLOCK=1024)
    return out


def reference(x):
    return x.clone()


def check():
    x = torch.rand(4096)
    torch.testing.assert_close(bad_copy(x), reference(x))


BENCH_SIZES = (2**20,)
BENCH_SIZE_NAME = "n"


def bench_inputs(size):
    return (torch.rand(size),)


bench_kernel = bad_copy


def bench_bytes(x):
    return 2 * x.numel() * x.element_size()


def bench_flops(x):
    return 0

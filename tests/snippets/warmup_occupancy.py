"""The grid of Triton's fused-softmax tutorial: the kernel is compiled first with `warmup()`,
its register count read (`_init_handles()`, `n_regs`), and the grid sized by the occupancy
that allows; then it is launched."""
import torch
import triton
import triton.language as tl
from triton.runtime import driver

PROPS = driver.active.utils.get_device_properties(0)


@triton.jit
def softmax_kernel(out_ptr, in_ptr, in_stride, out_stride, n_rows, n_cols, BLOCK: tl.constexpr):
    for row in tl.range(tl.program_id(0), n_rows, tl.num_programs(0)):
        cols = tl.arange(0, BLOCK)
        x = tl.load(in_ptr + row * in_stride + cols, mask=cols < n_cols, other=-float("inf"))
        e = tl.exp(x - tl.max(x, axis=0))
        tl.store(out_ptr + row * out_stride + cols, e / tl.sum(e, axis=0), mask=cols < n_cols)


def softmax(x):
    n_rows, n_cols = x.shape
    y = torch.empty_like(x)
    block, warps = triton.next_power_of_2(n_cols), 8
    kernel = softmax_kernel.warmup(y, x, x.stride(0), y.stride(0), n_rows, n_cols, BLOCK=block,
                                   num_warps=warps, grid=(1,))
    kernel._init_handles()
    occupancy = PROPS["max_num_regs"] // (kernel.n_regs * PROPS["warpSize"] * warps)
    programs = min(PROPS["multiprocessor_count"] * occupancy, n_rows)
    print(f"n_regs={kernel.n_regs} n_spills={kernel.n_spills} programs={programs}")
    softmax_kernel[(programs,)](y, x, x.stride(0), y.stride(0), n_rows, n_cols, block, num_warps=warps)
    return y


def example():
    softmax(torch.randn(1823, 781, device="cuda"))

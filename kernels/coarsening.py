"""Thread coarsening: how BLOCK and num_warps set the work, and vector width, per thread

A program of num_warps warps has 32 * num_warps threads sharing BLOCK elements, so each
thread owns BLOCK / (32 * num_warps) contiguous floats. Compare the launches' PTX:
(128, 4) is 1 element per thread, a scalar ld.global.b32; (256, 4) is 2, one
ld.global.v2.b32; (512, 4) is 4, one ld.global.v4.b32 (16 bytes, the widest load);
(1024, 4) is 8: two v4 loads; (4096, 8) is 16: four v4 loads per input. Past 4 elements
the vectors no longer widen, there are just more of them per thread: fewer programs,
more independent loads in flight per thread, and more registers to hold them.
"""
import torch
import triton
import triton.language as tl


@triton.jit
def coarse_add_kernel(x_ptr,  # pointer to the first input
                      y_ptr,  # pointer to the second input
                      out_ptr,  # pointer to the output
                      n_elements,  # number of elements
                      BLOCK: tl.constexpr,  # elements per program = per-thread work x threads
                      ):
    pid = tl.program_id(0)
    offsets = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, x + y, mask=mask)


def add(x: torch.Tensor, y: torch.Tensor, BLOCK: int = 1024, num_warps: int = 4) -> torch.Tensor:
    """out = x + y with BLOCK elements per program and num_warps warps per program."""
    assert x.shape == y.shape and x.is_contiguous() and y.is_contiguous()
    out = torch.empty_like(x)
    n_elements = x.numel()
    grid = (triton.cdiv(n_elements, BLOCK),)
    coarse_add_kernel[grid](x, y, out, n_elements, BLOCK=BLOCK, num_warps=num_warps)
    return out


def reference(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    return x + y


def make_inputs(small: bool = False):
    n = 3000 if small else 2**20
    return torch.rand(n), torch.rand(n)


CONFIGS = ((128, 4), (256, 4), (512, 4), (1024, 4), (4096, 8))  # (BLOCK, num_warps)


def example():
    x, y = make_inputs()
    for block, num_warps in CONFIGS:
        add(x, y, BLOCK=block, num_warps=num_warps)


def check():
    torch.manual_seed(0)
    x, y = make_inputs(small=True)
    for block, num_warps in CONFIGS:
        torch.testing.assert_close(add(x, y, BLOCK=block, num_warps=num_warps), reference(x, y))


# ---- benchmark: read by inspectors/bench/model.py (the Benchmark page, benchmarks/gpu_bench.py) ----
BENCH_SIZES = (2**12, 2**14, 2**16, 2**18, 2**20, 2**22, 2**24, 2**26, 2**28)
BENCH_SIZE = 2**24
BENCH_SIZE_NAME = "n (fp32 elements per vector)"
BENCH_BOUND = "memory"


def bench_inputs(size: int):
    return torch.rand(size), torch.rand(size)


bench_kernel = add  # BLOCK=1024, 4 warps: 8 elements per thread


def bench_bytes(x, y) -> int:
    return 3 * x.numel() * x.element_size()


def bench_flops(x, y) -> int:
    return x.numel()


def bench_baselines():
    return {
        "Triton BLOCK=128, 4 warps": lambda x, y: add(x, y, BLOCK=128, num_warps=4),
        "Triton BLOCK=256, 4 warps": lambda x, y: add(x, y, BLOCK=256, num_warps=4),
        "Triton BLOCK=512, 4 warps": lambda x, y: add(x, y, BLOCK=512, num_warps=4),
        "Triton BLOCK=4096, 8 warps": lambda x, y: add(x, y, BLOCK=4096, num_warps=8),
    }

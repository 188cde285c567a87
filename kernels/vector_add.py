"""Vector add: aligned vs misaligned loads

With BLOCK_SIZE=1024 and 4 warps (128 threads) each thread owns 8 contiguous fp32
elements: the first launch's PTX has two ld.global.v4.b32 per input and two
st.global.v4.b32. Vector access needs proof of 16-byte alignment, which the JIT
records per argument (pointers and ints divisible by 16, see the argument list).
Launch 2 reads x[1:-15], 4 bytes off: scalar ld.global.b32 (8 per input), yet the
store to the aligned output stays v4. Launch 3 has aligned pointers but an odd
length, so the mask may change inside a group of 4: loads and stores go scalar.
"""
import torch
import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr,  # pointer to the first input vector
               y_ptr,  # pointer to the second input vector
               out_ptr,  # pointer to the output vector
               n_elements,  # number of elements in each vector
               BLOCK_SIZE: tl.constexpr,  # elements handled by one program
               ):
    pid = tl.program_id(axis=0)  # which block of the 1D grid this program is
    block_start = pid * BLOCK_SIZE
    offsets = block_start + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements  # the last block may run past the end
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, x + y, mask=mask)


def add(x: torch.Tensor, y: torch.Tensor, BLOCK_SIZE: int = 1024) -> torch.Tensor:
    """out = x + y for two contiguous 1D tensors of the same length."""
    assert x.shape == y.shape and x.dim() == 1
    assert x.is_contiguous() and y.is_contiguous()
    out = torch.empty_like(x)
    n_elements = out.numel()
    grid = lambda meta: (triton.cdiv(n_elements, meta["BLOCK_SIZE"]),)
    add_kernel[grid](x, y, out, n_elements, BLOCK_SIZE=BLOCK_SIZE)
    return out


def reference(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    return x + y


def make_inputs(small: bool = False):
    n = 3000 if small else 2**20
    return torch.rand(n), torch.rand(n)


def example():
    x, y = make_inputs()
    add(x, y)                # aligned pointers, n divisible by 16: vector loads
    add(x[1:-15], y[1:-15])  # inputs 4 bytes off 16-byte alignment: scalar loads
    add(x[:-1], y[:-1])      # aligned pointers, odd n: the mask breaks vectorization


def check():
    torch.manual_seed(0)
    x, y = make_inputs(small=True)
    torch.testing.assert_close(add(x, y), reference(x, y))
    torch.testing.assert_close(add(x[1:], y[1:]), reference(x[1:], y[1:]))


# ---- benchmark: read by inspectors/bench/model.py (the Benchmark page, benchmarks/gpu_bench.py) ----
BENCH_SIZES = (2**12, 2**14, 2**16, 2**18, 2**20, 2**22, 2**24, 2**26, 2**28)
BENCH_SIZE = 2**24
BENCH_SIZE_NAME = "n (fp32 elements per vector)"
BENCH_BOUND = "memory"


def bench_inputs(size: int):
    return torch.rand(size), torch.rand(size)


bench_kernel = add


def bench_bytes(x, y) -> int:
    return 3 * x.numel() * x.element_size()  # read x and y, write out


def bench_flops(x, y) -> int:
    return x.numel()  # one add per element

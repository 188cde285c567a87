"""The persistent-kernel pattern of Triton's persistent-matmul tutorial: the grid is the GPU's SM
count (read at import), an allocator is set, and every launch is profiled with proton."""
import torch
import triton
import triton.language as tl
import triton.profiler as proton

NUM_SMS = torch.cuda.get_device_properties("cuda").multi_processor_count


def alloc_fn(size: int, alignment: int, stream):
    return torch.empty(size, device="cuda", dtype=torch.int8)


triton.set_allocator(alloc_fn)


@triton.jit
def persistent_add(x_ptr, y_ptr, n, BLOCK: tl.constexpr, NUM_SMS: tl.constexpr):
    tiles = tl.cdiv(n, BLOCK)
    for t in tl.range(tl.program_id(0), tiles, NUM_SMS, flatten=True):
        o = t * BLOCK + tl.arange(0, BLOCK)
        tl.store(y_ptr + o, tl.load(x_ptr + o, mask=o < n) + 1, mask=o < n)


def example():
    x = torch.randn(1 << 20, device="cuda")
    y = torch.empty_like(x)
    proton.start("persistent", hook="triton")
    with proton.scope("add"):
        persistent_add[(NUM_SMS,)](x, y, x.numel(), BLOCK=1024, NUM_SMS=NUM_SMS)
    proton.finalize()

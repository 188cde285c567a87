"""A library that asks Triton's driver about the GPU when it is imported (as
flash-linear-attention's fla.utils.hardware does) and sizes its kernel by the answer."""
import torch
import triton
import triton.language as tl

try:
    _TARGET = triton.runtime.driver.active.get_current_target()
    _SMS = triton.runtime.driver.active.utils.get_device_properties(0)["multiprocessor_count"]
    BACKEND, BLOCK = _TARGET.backend, (2048 if _TARGET.arch == 90 and _SMS >= 132 else 512)
except Exception:            # no GPU: the library rolls back to its CPU sizes
    BACKEND, BLOCK = "cpu", 128
print(f"probed at import: {BACKEND}, BLOCK={BLOCK}")


@triton.jit
def fill_kernel(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, 1.0, mask=offs < n)


def example():
    x = torch.empty(8192, device="cuda")
    fill_kernel[(triton.cdiv(x.numel(), BLOCK),)](x, x.numel(), BLOCK=BLOCK)

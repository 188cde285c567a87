"""A library that asks the driver before it picks a kernel, as SGLang and unsloth do: the CUDA
version (a larger tile from CUDA 12 on), the current device's index, the raw stream, the RNG
state. On the target the answers are the target's, so the kernel is the one the GPU runs."""
import torch
import triton
import triton.language as tl


@triton.jit
def scale_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2, mask=offs < n)


def pick_block() -> int:
    major = int((torch.version.cuda or "0").split(".")[0])
    device = torch.cuda.device(torch.cuda.current_device())
    assert device.idx == 0
    with device:
        pass
    assert torch._C._cuda_getCurrentRawStream(0) is not None
    torch.cuda.set_rng_state(torch.cuda.get_rng_state())
    return 1024 if major >= 12 else 128


def example():
    x = torch.randn(4096, device="cuda")
    y = torch.empty_like(x)
    assert x.get_device() == 0
    block = pick_block()
    scale_kernel[(triton.cdiv(4096, block),)](x, y, 4096, BLOCK=block)

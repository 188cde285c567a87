"""Code that points TRITON_PTXAS_PATH at another ptxas between two launches, as Inductor does on a
CUDA wheel before its first kernel (torch/bin/ptxas): on the GPU the launch before it is compiled
by Triton's own ptxas, the one after by the other, with that ptxas's PTX .version."""
import os
from pathlib import Path

import torch
import triton
import triton.language as tl


@triton.jit
def scale(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=mask) * 2, mask=mask)


def example():
    x = torch.ones(1024, device="cuda")
    scale[(1,)](x, 1024, BLOCK=1024)
    os.environ["TRITON_PTXAS_PATH"] = str(Path(triton.__file__).parent / "backends" / "nvidia" / "bin" / "ptxas-blackwell")
    scale[(1,)](x, 1000, BLOCK=1024)      # n not divisible by 16: a second specialization

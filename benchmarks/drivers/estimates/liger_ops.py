"""Liger-Kernel's ops a Llama step calls (RMSNorm, SwiGLU, cross-entropy), forward and backward,
in bf16 over 16384 tokens of width 4096 (vocab 32000): a library's launches for
benchmarks/time_estimates.py. Inputs made once per process."""
import functools

import torch
from liger_kernel.transformers import LigerCrossEntropyLoss, LigerRMSNorm
from liger_kernel.ops.swiglu import LigerSiLUMulFunction


@functools.cache
def _made():
    torch.manual_seed(0)
    dev, bf16 = "cuda", torch.bfloat16
    norm = LigerRMSNorm(4096).to(dev, bf16)
    x = torch.randn(16384, 4096, device=dev, dtype=bf16, requires_grad=True)
    a = torch.randn(16384, 11008, device=dev, dtype=bf16, requires_grad=True)
    b = torch.randn(16384, 11008, device=dev, dtype=bf16, requires_grad=True)
    logits = torch.randn(16384, 32000, device=dev, dtype=bf16, requires_grad=True)
    target = torch.randint(0, 32000, (16384,), device=dev)
    return norm, x, a, b, logits, target, LigerCrossEntropyLoss()


def example():
    norm, x, a, b, logits, target, ce = _made()
    norm(x).sum().backward()
    LigerSiLUMulFunction.apply(a, b).sum().backward()
    ce(logits, target).backward()

"""Liger's RMSNorm, forward and backward, at a Llama-sized row (4 x 2048, fp16)."""
import torch
from liger_kernel.ops.rms_norm import rms_norm_backward, rms_norm_forward


def example():
    x = torch.randn(4, 2048, dtype=torch.float16)
    w = torch.ones(2048, dtype=torch.float16)
    y, x2, rstd, block, warps, casting = rms_norm_forward(x, w, 1e-6, 0.0, "llama", False)
    rms_norm_backward(torch.randn_like(y), x2, w, rstd, 0.0, casting, block, warps, False, False)

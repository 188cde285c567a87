"""Liger's SwiGLU, forward and backward (256 tokens x 1024)."""
import torch
from liger_kernel.ops.swiglu import swiglu_backward, swiglu_forward


def example():
    a, b = torch.randn(256, 1024), torch.randn(256, 1024)
    a, b, c = swiglu_forward(a, b)
    swiglu_backward(a, b, torch.randn_like(c))

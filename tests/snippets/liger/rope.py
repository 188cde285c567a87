"""Liger's rotary embedding, forward and backward (batch 1, 8 heads, 128 tokens, head dim 64)."""
import torch
from liger_kernel.ops.rope import rope_backward, rope_forward


def example():
    q = torch.randn(1, 8, 128, 64)
    k = torch.randn(1, 8, 128, 64)
    cos, sin = torch.randn(1, 128, 64), torch.randn(1, 128, 64)
    q2, k2, cos, sin = rope_forward(q, k, cos, sin)
    rope_backward(torch.randn_like(q2), torch.randn_like(k2), cos, sin)

"""SDPA with torch.nn.attention.bias.causal_lower_right (a CausalBias tensor subclass), compiled, fwd+bwd."""
import torch
from torch.nn.attention.bias import causal_lower_right
import torch.nn.functional as F


def example():
    q = torch.randn(2, 8, 64, 64, device="cuda", dtype=torch.bfloat16, requires_grad=True)
    k = torch.randn(2, 8, 128, 64, device="cuda", dtype=torch.bfloat16, requires_grad=True)
    v = torch.randn(2, 8, 128, 64, device="cuda", dtype=torch.bfloat16, requires_grad=True)

    @torch.compile
    def attn(q, k, v):
        return F.scaled_dot_product_attention(q, k, v, attn_mask=causal_lower_right(64, 128))

    attn(q, k, v).sum().backward()

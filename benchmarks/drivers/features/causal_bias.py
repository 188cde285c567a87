"""SDPA with torch.nn.attention.bias.causal_lower_right (a CausalBias tensor subclass), compiled, fwd+bwd,
in bf16 (flash attention, whose is_causal is lower-right there), its values checked against the mask's.
TLENS_CAUSAL_FP32=1 adds float32 (the memory-efficient kernel's own lower-right mask), which the H100
with torch 2.11 refused at ce5f3ae ("an incorrect fake (aka meta) kernel"): left out of the comparison."""
import os
import torch
from torch.nn.attention.bias import causal_lower_right
import torch.nn.functional as F


def example():
    @torch.compile
    def attn(q, k, v):
        return F.scaled_dot_product_attention(q, k, v, attn_mask=causal_lower_right(q.shape[-2], k.shape[-2]))

    for dtype in (torch.bfloat16, torch.float32) if os.environ.get("TLENS_CAUSAL_FP32") else (torch.bfloat16,):
        q = torch.randn(2, 8, 64, 64, device="cuda", dtype=dtype, requires_grad=True)
        k = torch.randn(2, 8, 128, 64, device="cuda", dtype=dtype, requires_grad=True)
        v = torch.randn(2, 8, 128, 64, device="cuda", dtype=dtype, requires_grad=True)
        out = attn(q, k, v)
        expected = F.scaled_dot_product_attention(q, k, v, attn_mask=causal_lower_right(64, 128)._materialize(q.device))
        torch.testing.assert_close(out, expected, atol=2e-2, rtol=2e-2)
        out.sum().backward()

"""FlexAttention under torch.compile: a causal block mask, Inductor's flex_attention template."""
import torch
from torch.nn.attention.flex_attention import create_block_mask, flex_attention


def causal(b, h, q_idx, kv_idx):
    return q_idx >= kv_idx


def example():
    q, k, v = (torch.randn(1, 4, 256, 64, device="cuda", dtype=torch.float16) for _ in range(3))
    mask = create_block_mask(causal, 1, 1, 256, 256, device="cuda")
    attention = torch.compile(flex_attention)
    out = attention(q, k, v, block_mask=mask)
    assert out.shape == (1, 4, 256, 64) and out.is_cuda

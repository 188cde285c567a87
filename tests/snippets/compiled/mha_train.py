"""torch.compile of nn.MultiheadAttention in training (attention dropout, a residual and LayerNorm),
and a grouped-query attention in bf16 (8 query heads, 2 key/value heads): the GPU's attention
kernels' output layouts decide the copies around them (MultiheadAttention's `.contiguous()`)."""
import torch
import torch.nn.functional as F


class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.mha = torch.nn.MultiheadAttention(128, 4, dropout=0.1, batch_first=True)
        self.ln = torch.nn.LayerNorm(128)

    def forward(self, x):
        return self.ln(x + self.mha(x, x, x, need_weights=False)[0])


def gqa(q, k, v):
    return F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)


def example():
    block = torch.compile(Block().cuda())
    block(torch.randn(2, 32, 128, device="cuda", requires_grad=True)).sum().backward()
    q = torch.randn(2, 8, 64, 32, device="cuda", dtype=torch.bfloat16, requires_grad=True)
    k = torch.randn(2, 2, 64, 32, device="cuda", dtype=torch.bfloat16, requires_grad=True)
    torch.compile(gqa)(q, k, k).float().sum().backward()

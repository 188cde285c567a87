"""A compiled grouped-query attention layer in bf16 (8 query heads share 2 key/value heads,
`enable_gqa=True`), forward and backward: the GPU's cuDNN attention takes the shared heads
as they are, so no copy of k and v is made for the query heads."""
import torch
import torch.nn.functional as F


class GQA(torch.nn.Module):
    def __init__(self, d=256, heads=8, kv_heads=2):
        super().__init__()
        self.h, self.kv, self.hd = heads, kv_heads, d // heads
        self.q = torch.nn.Linear(d, d, bias=False)
        self.kv_proj = torch.nn.Linear(d, 2 * kv_heads * self.hd, bias=False)
        self.out = torch.nn.Linear(d, d, bias=False)

    def forward(self, x):
        B, T, C = x.shape
        q = self.q(x).view(B, T, self.h, self.hd).transpose(1, 2)
        k, v = self.kv_proj(x).view(B, T, 2, self.kv, self.hd).permute(2, 0, 3, 1, 4)
        y = F.scaled_dot_product_attention(q, F.normalize(k, dim=-1), v, is_causal=True, enable_gqa=True)
        return F.silu(self.out(y.transpose(1, 2).reshape(B, T, C)))


def example():
    layer = torch.compile(GQA().cuda().to(torch.bfloat16))
    x = torch.randn(2, 128, 256, device="cuda", dtype=torch.bfloat16, requires_grad=True)
    layer(x).float().square().mean().backward()

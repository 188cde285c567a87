"""Attention over a cache of 19 positions (15 past, 4 new), with an additive mask: the mask's rows
are 19 elements apart, no multiple of 8 (a Hugging Face static KV cache of a 16-token prompt and 3
new tokens has such a mask). On the GPU the memory-efficient kernel takes it as its bias after SDPA
pads it to 24 and slices it back to 19."""
import torch
import torch.nn.functional as F


class CacheAttention(torch.nn.Module):
    def __init__(self, d=128, h=4):
        super().__init__()
        self.h = h
        self.q = torch.nn.Linear(d, d)
        self.kv = torch.nn.Linear(d, 2 * d)

    def forward(self, new, past, bias):
        B, T, C = new.shape
        seen = torch.cat([past, new], dim=1)
        q = self.q(new).view(B, T, self.h, C // self.h).transpose(1, 2)
        k, v = self.kv(seen).view(B, seen.shape[1], 2, self.h, C // self.h).permute(2, 0, 3, 1, 4)
        return F.scaled_dot_product_attention(q, k, v, attn_mask=bias).transpose(1, 2).reshape(B, T, C)


def example():
    step = torch.compile(CacheAttention().cuda())
    new = torch.randn(2, 4, 128, device="cuda", requires_grad=True)
    past = torch.randn(2, 15, 128, device="cuda")
    bias = torch.zeros(2, 1, 4, 19, device="cuda")
    bias[1, :, :, :3] = float("-inf")              # the second sequence's first 3 positions are padding
    step(new, past, bias).square().mean().backward()

"""A compiled attention layer whose mask's rows are not a multiple of 8 elements: 19 positions (a
Hugging Face static KV cache of a 16-token prompt and 3 new tokens has such a mask). On the GPU the
memory-efficient kernel takes it as its bias after SDPA pads it to 24 and slices it back to 19."""
import torch
import torch.nn.functional as F


class MaskedAttention(torch.nn.Module):
    def __init__(self, d=128, h=4):
        super().__init__()
        self.h = h
        self.qkv = torch.nn.Linear(d, 3 * d)
        self.out = torch.nn.Linear(d, d)

    def forward(self, x, keep):
        B, T, C = x.shape
        q, k, v = self.qkv(x).view(B, T, 3, self.h, C // self.h).permute(2, 0, 3, 1, 4)
        mask = keep[:, None, None, :] & torch.ones(T, T, dtype=torch.bool, device=x.device).tril()
        y = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
        return self.out(y.transpose(1, 2).reshape(B, T, C))


def example():
    layer = torch.compile(MaskedAttention().cuda())
    x = torch.randn(2, 19, 128, device="cuda", requires_grad=True)
    keep = torch.ones(2, 19, dtype=torch.bool, device="cuda")
    keep[1, 15:] = False
    layer(x, keep).square().mean().backward()

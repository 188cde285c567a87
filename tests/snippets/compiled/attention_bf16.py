"""A compiled causal attention layer in bf16, forward and backward: on an H100 the GPU's cuDNN
attention kernel (an extern call), with Inductor's fused projections and layouts around it."""
import torch
import torch.nn.functional as F


class Attention(torch.nn.Module):
    def __init__(self, d=256, h=4):
        super().__init__()
        self.h = h
        self.qkv = torch.nn.Linear(d, 3 * d, bias=False)
        self.out = torch.nn.Linear(d, d, bias=False)

    def forward(self, x):
        B, T, C = x.shape
        q, k, v = self.qkv(x).view(B, T, 3, self.h, C // self.h).permute(2, 0, 3, 1, 4)
        y = F.scaled_dot_product_attention(q * 1.5, k, v, is_causal=True)
        return self.out(y.transpose(1, 2).reshape(B, T, C)).relu()


def example():
    layer = torch.compile(Attention().cuda().to(torch.bfloat16))
    x = torch.randn(2, 128, 256, device="cuda", dtype=torch.bfloat16, requires_grad=True)
    layer(x).float().square().mean().backward()

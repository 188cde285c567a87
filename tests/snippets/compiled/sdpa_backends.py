"""Attention under the backends the code picks (`torch.nn.attention.sdpa_kernel`): bf16 attention,
which the GPU gives its flash kernel by default, with the memory-efficient kernel alone, and with
the math path alone; each compiled with its projections, forward and backward."""
import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel


class Attention(torch.nn.Module):
    def __init__(self, backend, d=256, h=4):
        super().__init__()
        self.backend, self.h = backend, h
        self.qkv = torch.nn.Linear(d, 3 * d)

    def forward(self, x):
        B, T, C = x.shape
        q, k, v = self.qkv(x).view(B, T, 3, self.h, C // self.h).permute(2, 0, 3, 1, 4)
        with sdpa_kernel([self.backend]):
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return y.transpose(1, 2).reshape(B, T, C).relu()


def example():
    x = torch.randn(2, 128, 256, device="cuda", dtype=torch.bfloat16, requires_grad=True)
    for backend in (SDPBackend.EFFICIENT_ATTENTION, SDPBackend.MATH):
        torch.compile(Attention(backend).cuda().bfloat16())(x).float().square().mean().backward()

"""Activation checkpointing in a compiled bf16 module: the recomputed SiLU in the backward graph."""
import torch
from torch.utils.checkpoint import checkpoint


class M(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = torch.nn.Linear(64, 64)
        self.b = torch.nn.Linear(64, 64)

    def forward(self, x):
        h = checkpoint(lambda t: torch.nn.functional.silu(self.a(t)), x, use_reentrant=False)
        return self.b(h).pow(2).mean()


def example():
    m = torch.compile(M().cuda().to(torch.bfloat16))
    x = torch.randn(32, 64, device="cuda", dtype=torch.bfloat16, requires_grad=True)
    m(x).backward()

"""torch.func under torch.compile: per-sample gradients, `vmap(grad(loss))`, one compiled graph."""
import torch
from torch.func import grad, vmap


def example():
    w = torch.randn(64, 64, device="cuda")

    def loss(x):
        return torch.tanh(x @ w).pow(2).sum()
    g = torch.compile(vmap(grad(loss)))(torch.randn(8, 64, device="cuda"))
    assert g.shape == (8, 64)

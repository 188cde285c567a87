"""A graph break in the middle of a forward (a print and a .item()): two graphs and a Python bit between."""
import torch
import torch.nn as nn


class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.a, self.b = nn.Linear(64, 64), nn.Linear(64, 64)

    def forward(self, x):
        h = torch.relu(self.a(x))
        if h.mean().item() > 0:       # data-dependent: a graph break
            h = h * 2
        print("between graphs")
        return torch.tanh(self.b(h))


def example():
    m = torch.compile(M().cuda())
    x = torch.randn(16, 64, device="cuda")
    m(x).sum().backward()

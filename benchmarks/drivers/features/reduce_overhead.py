"""mode="reduce-overhead": CUDA graphs around the compiled forward and backward."""
import torch
import torch.nn as nn


def example():
    model = nn.Sequential(nn.Linear(128, 128), nn.ReLU(), nn.Linear(128, 10)).cuda()
    cmodel = torch.compile(model, mode="reduce-overhead")
    x = torch.randn(32, 128, device="cuda")
    for _ in range(3):
        out = cmodel(x)
        out.sum().backward()

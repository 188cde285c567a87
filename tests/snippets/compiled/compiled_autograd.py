"""Compiled autograd (`torch._dynamo.config.compiled_autograd`): the backward traced at
`.backward()` time as one graph of its own, after the compiled forward."""
import torch


def example():
    torch._dynamo.config.compiled_autograd = True
    try:
        m = torch.nn.Sequential(torch.nn.Linear(128, 128), torch.nn.ReLU(), torch.nn.Linear(128, 10)).cuda()
        x = torch.randn(32, 128, device="cuda")
        torch.compile(m)(x).logsumexp(-1).mean().backward()
    finally:
        torch._dynamo.config.compiled_autograd = False
    assert m[0].weight.grad is not None

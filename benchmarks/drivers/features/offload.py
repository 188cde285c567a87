"""Activation offloading as long-context trainers do it: the compiled MLP's saved tensors moved to
pinned host memory in the forward (torch.autograd.graph.save_on_cpu) and back for the backward."""
import torch


def example():
    mlp = torch.nn.Sequential(torch.nn.Linear(256, 1024), torch.nn.GELU(), torch.nn.Linear(1024, 256)).cuda()
    x = torch.randn(512, 256, device="cuda", requires_grad=True)
    step = torch.compile(mlp)
    with torch.autograd.graph.save_on_cpu(pin_memory=True):
        loss = step(x).square().mean()
    loss.backward()
    assert x.grad.device.type == "cuda"

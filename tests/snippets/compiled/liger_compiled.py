"""Liger's RMSNorm inside torch.compile, a training step: Dynamo traces its autograd Function
(the `torch.cuda.device` context its ops open, the SM count its backward reads) into one graph,
and Inductor compiles Liger's forward and backward kernels as the graph's own, beside its fused
Linear + ReLU kernels."""
import torch
from liger_kernel.transformers.rms_norm import LigerRMSNorm


class Block(torch.nn.Module):
    def __init__(self, d=256):
        super().__init__()
        self.norm = LigerRMSNorm(d)
        self.lin = torch.nn.Linear(d, d)

    def forward(self, x):
        return self.lin(self.norm(x)).relu()


def example():
    block = torch.compile(Block().cuda())
    x = torch.randn(8, 256, device="cuda", requires_grad=True)
    block(x).sum().backward()

"""Liger's cross entropy over a 32,000-word vocabulary, forward (which also writes the
gradient, as Liger does) and backward."""
import torch
from liger_kernel.ops.cross_entropy import cross_entropy_backward, cross_entropy_forward


def example():
    logits = torch.randn(16, 32000)
    target = torch.randint(0, 32000, (16,))
    out = cross_entropy_forward(logits, target, None, -100, 0.0, 0.0, "mean", None, False)
    cross_entropy_backward(logits, torch.tensor(2.0))

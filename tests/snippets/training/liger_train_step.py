"""A training step through Liger, as a PyTorch user writes it: tensors made on "cuda", a module
moved with .cuda(), forward, a loss, backward, an optimizer step. Every kernel of the step —
RMSNorm's forward and backward, the fused cross-entropy — is a launch."""
import torch
from liger_kernel.ops.rms_norm import LigerRMSNormFunction
from liger_kernel.transformers import LigerRMSNorm
from liger_kernel.transformers.functional import liger_cross_entropy


def example():
    x = torch.randn(4, 2048, device="cuda", requires_grad=True)
    w = torch.ones(2048, device="cuda", requires_grad=True)
    y = LigerRMSNormFunction.apply(x, w, 1e-6)
    y.sum().backward()
    assert x.grad is not None and w.grad is not None and x.grad.device.type == "cuda"

    norm = LigerRMSNorm(256).cuda()
    opt = torch.optim.AdamW(norm.parameters())
    h = torch.randn(8, 256, device="cuda", requires_grad=True)
    loss = liger_cross_entropy(norm(h), torch.randint(0, 256, (8,), device="cuda"))
    loss.backward()
    opt.step()

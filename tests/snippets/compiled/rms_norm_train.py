"""torch.compile of a block normalized by torch's own nn.RMSNorm (as Qwen3, Llama 4 and torchtitan
models use it): inference, then a training step. A CUDA build of torch traces F.rms_norm as one
aten._fused_rms_norm, and its backward as _fused_rms_norm_backward; a CPU build decomposes it."""
import torch


class Block(torch.nn.Module):
    def __init__(self, dim=256):
        super().__init__()
        self.norm = torch.nn.RMSNorm(dim)
        self.proj = torch.nn.Linear(dim, dim, bias=False)

    def forward(self, x):
        return x + self.proj(self.norm(x))


def example():
    torch.manual_seed(0)
    block = Block().cuda()
    x = torch.randn(64, 256, device="cuda")
    compiled = torch.compile(block)
    with torch.no_grad():
        compiled(x)
    compiled(x.requires_grad_()).pow(2).mean().backward()
    assert block.norm.weight.grad is not None

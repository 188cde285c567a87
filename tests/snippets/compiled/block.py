"""torch.compile of a small block: forward, then a training step (forward + backward)."""
import torch


class Block(torch.nn.Module):
    def __init__(self, dim=256):
        super().__init__()
        self.norm = torch.nn.LayerNorm(dim)
        self.proj = torch.nn.Linear(dim, dim)

    def forward(self, x):
        h = self.norm(x)
        return x + torch.nn.functional.gelu(self.proj(h))


def example():
    torch.manual_seed(0)
    block = Block().cuda()
    x = torch.randn(64, 256, device="cuda")
    compiled = torch.compile(block)
    with torch.no_grad():
        compiled(x)                                  # an inference graph
    y = compiled(x.requires_grad_())                 # forward graph, then
    y.pow(2).mean().backward()                       # its backward graph
    assert block.proj.weight.grad is not None

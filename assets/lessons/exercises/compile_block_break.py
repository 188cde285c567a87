"""The MLP block of compile_block.py with a Python `if` on a tensor's value in its forward: Dynamo
cannot trace a branch that depends on data, so it breaks the graph there, and what was one
fused kernel becomes several. The exercise of "What torch.compile fuses": make the forward fuse
again, the block computing the same thing."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Block(nn.Module):
    def __init__(self, d=512):
        super().__init__()
        self.norm = nn.LayerNorm(d)
        self.up = nn.Linear(d, 4 * d)
        self.down = nn.Linear(4 * d, d)

    def forward(self, x):
        h = self.norm(x)
        h = self.up(h)
        if h.abs().max() > 1e4:          # a guard against overflow, on the tensor's value
            h = h.clamp(-1e4, 1e4)
        h = F.gelu(h)
        return x + self.down(h)


def example():
    torch.manual_seed(0)
    block = Block().cuda()
    opt = torch.optim.AdamW(block.parameters(), lr=1e-3)
    x = torch.randn(4096, 512, device="cuda")
    torch.compile(block)(x).pow(2).mean().backward()
    torch.compile(opt.step)()

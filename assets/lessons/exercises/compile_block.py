"""A transformer MLP block's training step under torch.compile: LayerNorm, Linear, GELU, Linear
and the residual add, forward and backward, then AdamW (compiled too). For the lesson "What
torch.compile fuses" (assets/lessons/torch_compile.md)."""
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
        h = F.gelu(self.up(h))
        return x + self.down(h)


def example():
    torch.manual_seed(0)
    block = Block().cuda()
    opt = torch.optim.AdamW(block.parameters(), lr=1e-3)
    x = torch.randn(4096, 512, device="cuda")
    torch.compile(block)(x).pow(2).mean().backward()
    torch.compile(opt.step)()

"""Selective activation checkpointing (torchtitan's policy: save the matmuls, recompute the rest)
under torch.compile, forward and backward."""
import functools
import torch
import torch.nn as nn
from torch.utils.checkpoint import checkpoint, create_selective_checkpoint_contexts, CheckpointPolicy


def policy(ctx, op, *args, **kwargs):
    return CheckpointPolicy.MUST_SAVE if op in (torch.ops.aten.mm.default, torch.ops.aten.addmm.default) \
        else CheckpointPolicy.PREFER_RECOMPUTE


class Block(nn.Module):
    def __init__(self, d=256):
        super().__init__()
        self.norm, self.up, self.down = nn.LayerNorm(d), nn.Linear(d, 4 * d), nn.Linear(4 * d, d)

    def forward(self, x):
        return x + self.down(torch.nn.functional.gelu(self.up(self.norm(x))))


def example():
    blocks = nn.ModuleList(Block() for _ in range(2)).cuda()
    ctx = functools.partial(create_selective_checkpoint_contexts, policy)

    @torch.compile
    def fwd(x):
        for b in blocks:
            x = checkpoint(b, x, use_reentrant=False, context_fn=ctx)
        return x.sum()

    fwd(torch.randn(8, 64, 256, device="cuda")).backward()

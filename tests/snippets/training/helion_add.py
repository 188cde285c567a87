"""A Helion kernel with a fixed config: Helion traces it on fake tensors (the view leaves their
devices alone), writes Triton, and launches it."""
import torch
import helion
import helion.language as hl


@helion.kernel(config=helion.Config(block_sizes=[64, 64], num_warps=4, num_stages=2))
def add(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    out = torch.empty_like(x)
    for tile in hl.tile(out.size()):
        out[tile] = x[tile] + y[tile]
    return out


def example():
    x = torch.randn(1024, 1024, device="cuda")
    add(x, x)

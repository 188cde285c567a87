"""torch.compile's control-flow higher-order ops in one model's training step: torch.cond on a
tensor's value (both branches traced, each a subgraph), a while_loop of Newton steps (inference:
while_loop has no backward), and a block marked as a nested compile region (invoke_subgraph:
compiled once, called twice)."""
import torch
from torch._higher_order_ops.while_loop import while_loop


@torch.compiler.nested_compile_region
def block(x, w):
    return torch.nn.functional.gelu(x @ w) + x


def gated(x, w):
    h = block(block(x, w), w)
    return torch.cond(h.sum() > 0, lambda t: t.relu() * 2, lambda t: t.sigmoid() - 1, (h,))


def newton_rsqrt(v):
    # y <- y (3 - v y^2) / 2, eight steps: the loop's condition and body are subgraphs
    def cond(i, y):
        return i < 8

    def body(i, y):
        return i + 1, y * (3 - v * y * y) * 0.5
    return while_loop(cond, body, (torch.zeros((), dtype=torch.int64, device=v.device), torch.ones_like(v)))[1]


def example():
    x = torch.randn(64, 128, device="cuda", requires_grad=True)
    w = torch.randn(128, 128, device="cuda", requires_grad=True)
    torch.compile(gated, fullgraph=True)(x, w).square().mean().backward()
    assert x.grad is not None and w.grad is not None
    with torch.no_grad():
        y = torch.compile(newton_rsqrt, fullgraph=True)(torch.rand(1024, device="cuda") + 0.5)
    assert y.shape == (1024,)

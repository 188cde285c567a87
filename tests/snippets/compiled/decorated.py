"""torch.compile as a decorator, with a mode: a softmax over rows (one reduction kernel)."""
import torch


@torch.compile(mode="reduce-overhead")
def softmax(x):
    return torch.softmax(x * 2.0, dim=-1)


def example():
    x = torch.randn(128, 1000, device="cuda")
    y = softmax(x)
    torch.testing.assert_close(y, torch.softmax(x * 2.0, dim=-1))

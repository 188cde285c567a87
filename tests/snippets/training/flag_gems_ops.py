"""FlagGems registers its Triton kernels as PyTorch's CUDA implementations of ATen ops: inside
`use_gems()`, torch.softmax and torch.nn.functional.layer_norm launch its kernels."""
import torch
import flag_gems


def example():
    x = torch.randn(512, 1024, device="cuda")
    w, b = torch.ones(1024, device="cuda"), torch.zeros(1024, device="cuda")
    with flag_gems.use_gems():
        torch.softmax(x, dim=-1)
        torch.nn.functional.layer_norm(x, (1024,), w, b)

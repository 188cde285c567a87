"""A Transformer encoder layer compiled with `dynamic=True`, trained on two sequence lengths: one
graph for both, its kernels' sizes symbols (their masks and grids by the length at run time)."""
import torch


def example():
    layer = torch.nn.TransformerEncoderLayer(128, 4, 256, batch_first=True, device="cuda")
    compiled = torch.compile(layer, dynamic=True)
    for n in (17, 33):
        compiled(torch.randn(2, n, 128, device="cuda")).sum().backward()
    assert layer.linear1.weight.grad is not None

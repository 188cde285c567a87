"""gemlite (0.6.0): an 8-bit weight-only Linear (A16W8_INT8) from a torch Linear, its GEMV/GEMM
launched as an inference step would."""
import torch
from gemlite.helper import A16W8_INT8


def example():
    layer = torch.nn.Linear(4096, 4096, bias=False, dtype=torch.float16, device="cuda")
    linear = A16W8_INT8(device="cuda:0", dtype=torch.float16).from_linear(layer)
    x = torch.randn(16, 4096, dtype=torch.float16, device="cuda")
    y = linear(x)
    assert y.shape == (16, 4096)

"""Kernels Inductor and Dynamo choose by the device while they trace: an outer product (an mm with
K = 1), a convolution's bias gradient, an attention written out in fp32, and code that branches on
its tensor's device. On a GPU the first is fused as a multiply (torch 2.13 and later), the second is
a reduction kernel of its own, the third stays as written (softmax and two matmuls: a GPU without
TF32 takes no fused SDPA for it), the fourth takes its CUDA branch; a CPU decides each the other way."""
import math

import torch


def attention(q, k, v):
    return torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), dim=-1) @ v


def by_device(x):
    y = x * 2 if x.is_cuda else x - 1
    with torch.autocast(device_type=x.device.type, enabled=False):
        pos = torch.arange(x.shape[-1], device=x.device)
    return torch.sigmoid(y + pos.to("cuda"))


def example():
    a, b = torch.randn(256, 1, device="cuda"), torch.randn(1, 128, device="cuda")
    torch.compile(lambda a, b: torch.relu(a @ b))(a, b)
    conv = torch.nn.Conv2d(8, 16, 3, padding=1).cuda()
    torch.compile(conv)(torch.randn(4, 8, 16, 16, device="cuda")).relu().sum().backward()
    q, k, v = (torch.randn(2, 4, 64, 32, device="cuda") for _ in range(3))
    torch.compile(attention)(q, k, v)
    torch.compile(by_device)(torch.randn(8, 64, device="cuda"))

"""Sorting, top-k and a cumulative sum in compiled code: Inductor's persistent sort kernel, its
scan kernel, and reductions over their results; one function compiled with dynamic shapes."""
import torch


@torch.compile
def ranked(x):
    v, i = torch.topk(x.softmax(-1), 4, dim=-1)
    s, _ = torch.sort(x, dim=-1)
    return v.sum() + s[:, 0].mean() + i.float().mean()


def gelu_cumsum(x, w):
    return torch.nn.functional.gelu(x @ w).cumsum(-1)


def example():
    ranked(torch.randn(128, 256, device="cuda"))
    g = torch.compile(gelu_cumsum, dynamic=True)
    w = torch.randn(64, 64, device="cuda")
    g(torch.randn(32, 64, device="cuda"), w)
    g(torch.randn(48, 64, device="cuda"), w)

"""A Python float that Dynamo does not specialize (called again with another value: a 0-dim float64
CPU tensor, on a GPU too): the kernels take it by value, forward and backward, as an H200's do."""
import torch


def scaled_softmax(x, scale):
    return (x * scale).softmax(-1)


def example():
    torch.manual_seed(0)
    x = torch.randn(64, 64, device="cuda", requires_grad=True)
    f = torch.compile(scaled_softmax)
    f(x, 0.125).sum().backward()        # specialized: 0.125 a constant of the kernels
    f(x, 0.25).sum().backward()         # compiled again, the scale an input

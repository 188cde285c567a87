"""Compiled autograd (`torch._dynamo.config.compiled_autograd = True`, torch.compile's tutorial
way): the `.backward()` inside a compiled training step is traced by the autograd engine into one
graph and compiled, gradient hooks and all (a clamp on a weight's gradient, a scale on an
activation's). The view lists that graph's kernels as the step's backward; its matmuls are
cuBLAS's. The gradients are checked against the same step run eagerly."""
import torch


def make():
    torch.manual_seed(0)
    lin = torch.nn.Linear(256, 256, device="cuda")
    lin.weight.register_hook(lambda g: g.clamp(-0.01, 0.01))
    return lin


def step(lin, x):
    y = torch.nn.functional.gelu(lin(x))
    y.register_hook(lambda g: g * 0.5)
    loss = (y * y).mean()
    loss.backward()
    return loss


def example():
    x = torch.randn(128, 256, device="cuda")
    eager = make()
    step(eager, x)
    lin = make()
    torch._dynamo.config.compiled_autograd = True
    try:
        loss = torch.compile(step)(lin, x)
    finally:
        torch._dynamo.config.compiled_autograd = False
    assert torch.isfinite(loss)
    assert torch.allclose(lin.weight.grad, eager.weight.grad, atol=1e-6), (lin.weight.grad - eager.weight.grad).abs().max()
    assert torch.allclose(lin.bias.grad, eager.bias.grad, atol=1e-6)
    assert lin.weight.grad.abs().max() <= 0.01

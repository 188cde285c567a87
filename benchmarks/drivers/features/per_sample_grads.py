"""Per-sample gradients with torch.func (functional_call, grad, vmap), the whole transform compiled."""
import torch
from torch.func import functional_call, grad, vmap


def example():
    model = torch.nn.Sequential(torch.nn.Linear(64, 128), torch.nn.Tanh(), torch.nn.Linear(128, 10)).cuda()
    params = {k: v.detach() for k, v in model.named_parameters()}
    x = torch.randn(32, 64, device="cuda")
    y = torch.randint(0, 10, (32,), device="cuda")

    def loss(p, xi, yi):
        out = functional_call(model, p, (xi.unsqueeze(0),))
        return torch.nn.functional.cross_entropy(out, yi.unsqueeze(0))

    per_sample = torch.compile(vmap(grad(loss), in_dims=(None, 0, 0)))
    g = per_sample(params, x, y)
    assert g["0.weight"].shape == (32, 128, 64)

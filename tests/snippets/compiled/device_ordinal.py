"""`torch.device(0)`: the current accelerator's first device, as on a GPU, eagerly and in a
compiled module's forward (Dynamo folds the call)."""
import torch
import torch.nn as nn


class Scaled(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(64, 64)

    def forward(self, x):
        return torch.relu(self.proj(x)) * torch.full((64,), 2.0, device=torch.device(0))


def example():
    device = torch.device(0)
    assert device == torch.device("cuda", 0), device
    torch.manual_seed(0)
    model = Scaled().to(device)
    x = torch.randn(32, 64, device=device)
    y = torch.compile(model)(x)
    assert y.device == device, y.device
    assert torch.allclose(y, torch.relu(model.proj(x)) * 2, atol=1e-5)
    y.sum().backward()

"""PyTorch's tutorials' device idiom: `torch.accelerator` picks the device, a small classifier's
compiled training step runs on it."""
import torch
import torch.nn as nn


def example():
    device = torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else "cpu"
    model = nn.Sequential(nn.Flatten(), nn.Linear(28 * 28, 512), nn.ReLU(), nn.Linear(512, 10)).to(device)
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)
    x, y = torch.randn(64, 1, 28, 28, device=device), torch.randint(0, 10, (64,), device=device)
    step = torch.compile(lambda: nn.functional.cross_entropy(model(x), y))
    step().backward()
    opt.step()
    torch.accelerator.synchronize()

"""torch.export of a model on the GPU, then its exported module under torch.compile (the target
view's parameters fakified as cuda tensors: a CPU-only torch needs a CUDA device guard for them)."""
import torch


class MLP(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1, self.fc2 = torch.nn.Linear(256, 512), torch.nn.Linear(512, 256)

    def forward(self, x):
        return self.fc2(torch.nn.functional.gelu(self.fc1(x))).softmax(-1)


def example():
    model = MLP().cuda()
    x = torch.randn(8, 256, device="cuda")
    exported = torch.export.export(model, (x,))
    assert all(p.is_cuda for p in exported.state_dict.values())
    out = torch.compile(exported.module())(x)
    assert out.shape == (8, 256) and out.is_cuda

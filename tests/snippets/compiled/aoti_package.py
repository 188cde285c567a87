"""torch.export of a model on the GPU, then AOTInductor: its package compiled ahead of time, loaded
and run (the Triton half of it on a machine without a GPU: inspectors/compile/aoti_target.py)."""
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
    path = torch._inductor.aoti_compile_and_package(exported)
    runner = torch._inductor.aoti_load_package(path)
    out = runner(x)
    assert out.shape == (8, 256)

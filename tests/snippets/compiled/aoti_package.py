"""torch.export of a Llama-style gated MLP on the GPU, then AOTInductor: its package compiled ahead
of time, loaded and run (the Triton half of it on a machine without a GPU:
inspectors/compile/aoti_target.py)."""
import torch
import torch.nn.functional as F


class GatedMLP(torch.nn.Module):
    def __init__(self, d=256, hidden=512):
        super().__init__()
        self.norm = torch.nn.RMSNorm(d)
        self.gate, self.up = torch.nn.Linear(d, hidden, bias=False), torch.nn.Linear(d, hidden, bias=False)
        self.down = torch.nn.Linear(hidden, d, bias=False)

    def forward(self, x):
        h = self.norm(x)
        return x + self.down(F.silu(self.gate(h)) * self.up(h))


def example():
    model = GatedMLP().cuda()
    x = torch.randn(8, 256, device="cuda")
    path = torch._inductor.aoti_compile_and_package(torch.export.export(model, (x,)),
                                                    inductor_configs={"aot_inductor.package_cpp_only": False})
    runner = torch._inductor.aoti_load_package(path)
    assert runner(x).shape == (8, 256)

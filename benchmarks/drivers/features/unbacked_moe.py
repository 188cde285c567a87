"""An MoE loop over experts as many repositories write it: each expert's tokens found with
torch.where (a data-dependent size), compiled with scalar outputs captured, forward and backward."""
import torch
import torch._dynamo

torch._dynamo.config.capture_scalar_outputs = True
torch._dynamo.config.capture_dynamic_output_shape_ops = True


class LoopMoE(torch.nn.Module):
    def __init__(self, d=128, hidden=256, experts=4):
        super().__init__()
        self.router = torch.nn.Linear(d, experts)
        self.experts = torch.nn.ModuleList(torch.nn.Sequential(torch.nn.Linear(d, hidden), torch.nn.GELU(),
                                                               torch.nn.Linear(hidden, d)) for _ in range(experts))

    def forward(self, x):
        gate, expert = self.router(x).softmax(-1).max(-1)
        out = torch.zeros_like(x)
        for e, mlp in enumerate(self.experts):
            idx = torch.where(expert == e)[0]
            out = out.index_add(0, idx, mlp(x[idx]) * gate[idx, None])
        return out


def example():
    model = LoopMoE().cuda()
    x = torch.randn(256, 128, device="cuda", requires_grad=True)
    torch.compile(model, fullgraph=True)(x).sum().backward()

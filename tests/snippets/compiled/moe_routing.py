"""A mixture-of-experts layer's routing under torch.compile, forward and backward, as Qwen3-MoE
routes: top-k experts per token, tokens counted per expert with histc on int32 ids (CUDA's histc
takes integers, the CPU's does not), and a deep copy of the model made on the target first."""
import copy

import torch
import torch.nn.functional as F

E, K, D = 8, 2, 64


class MoE(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.gate = torch.nn.Linear(D, E, bias=False)
        self.experts = torch.nn.ModuleList(torch.nn.Linear(D, D) for _ in range(E))

    def forward(self, x):
        logits = self.gate(x)
        weights, ids = torch.topk(F.softmax(logits, dim=-1, dtype=torch.float), K, dim=-1)
        weights = weights / weights.sum(dim=-1, keepdim=True)
        counts = torch.histc(ids.int(), bins=E, min=0, max=E - 1)        # tokens per expert, int32
        out = torch.zeros_like(x)
        for e in range(E):
            mask = (ids == e).to(x.dtype)
            w = (weights * mask).sum(dim=-1, keepdim=True)
            out = out + w * self.experts[e](x)
        return out, counts


def example():
    torch.manual_seed(0)
    model = MoE().cuda()
    twin = copy.deepcopy(model)          # an EMA or reference copy, as training loops make
    step = torch.compile(twin)
    x = torch.randn(256, D, device="cuda", requires_grad=True)
    out, counts = step(x)
    assert counts.dtype == torch.int32 and int(counts.sum()) == 256 * K, counts
    out.sum().backward()
    assert twin.gate.weight.grad is not None and model.gate.weight.grad is None

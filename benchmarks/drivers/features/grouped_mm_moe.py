"""A torchtitan-style MoE layer: top-2 routing, tokens sorted by expert, the experts' matmuls one
torch._grouped_mm each (bf16, offsets from the counts), compiled forward and backward."""
import torch
import torch.nn.functional as F


class GroupedMoE(torch.nn.Module):
    def __init__(self, d=256, hidden=512, experts=8, top_k=2):
        super().__init__()
        self.top_k = top_k
        self.router = torch.nn.Linear(d, experts, bias=False)
        self.w1 = torch.nn.Parameter(torch.randn(experts, d, hidden) * d ** -0.5)
        self.w2 = torch.nn.Parameter(torch.randn(experts, hidden, d) * hidden ** -0.5)

    def forward(self, x):
        scores = self.router(x).softmax(-1)
        weight, expert = scores.topk(self.top_k, dim=-1)
        flat = expert.flatten()
        order = flat.argsort(stable=True)
        counts = torch.bincount(flat, minlength=self.w1.shape[0])
        offs = counts.cumsum(0).to(torch.int32)
        tokens = x.repeat_interleave(self.top_k, dim=0)[order].to(torch.bfloat16)
        h = F.silu(torch._grouped_mm(tokens, self.w1.to(torch.bfloat16), offs=offs))
        out = torch._grouped_mm(h, self.w2.to(torch.bfloat16), offs=offs).float()
        back = torch.empty_like(out).index_copy_(0, order, out)
        return (back.view(-1, self.top_k, x.shape[-1]) * weight.unsqueeze(-1)).sum(1)


def example():
    model = GroupedMoE().cuda()
    x = torch.randn(512, 256, device="cuda", requires_grad=True)
    torch.compile(model)(x).square().mean().backward()

"""A Gated DeltaNet layer's training step on flash-linear-attention's kernels (fla-core 0.6.0):
the projections, the gates, chunk_gated_delta_rule forward and backward with the q/k L2 norm in
the kernel, as GatedDeltaNet calls it. A step of ~100 launches of the library's own kernels and
autotuners (issue 55: its answer was over the engine's 128 MB bound)."""
import torch
import torch.nn.functional as F
from fla.ops.gated_delta_rule import chunk_gated_delta_rule

B, T, D, H, K = 2, 512, 512, 4, 128


class GatedDeltaNet(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.q, self.k, self.v = (torch.nn.Linear(D, H * K, bias=False) for _ in range(3))
        self.a, self.b = torch.nn.Linear(D, H, bias=False), torch.nn.Linear(D, H, bias=False)
        self.A_log = torch.nn.Parameter(torch.log(torch.empty(H).uniform_(1, 16)))
        self.o = torch.nn.Linear(H * K, D, bias=False)

    def forward(self, x):
        q, k, v = (p(x).view(B, T, H, K) for p in (self.q, self.k, self.v))
        g = -self.A_log.float().exp() * F.softplus(self.a(x).float())
        beta = self.b(x).sigmoid()
        o, _ = chunk_gated_delta_rule(q, k, v, g, beta, use_qk_l2norm_in_kernel=True)
        return self.o(o.reshape(B, T, H * K))


def example():
    layer = GatedDeltaNet().to(device="cuda", dtype=torch.bfloat16)
    x = torch.randn(B, T, D, device="cuda", dtype=torch.bfloat16, requires_grad=True)
    layer(x).float().pow(2).mean().backward()
    assert x.grad is not None and layer.q.weight.grad is not None

"""An eager model's step: two pre-norm MLP blocks run eagerly (no torch.compile), a compiled
loss, the backward. On a GPU each eager module op is a CUDA kernel of torch's own (the Linears'
cuBLAS matmuls, LayerNorm, GELU, the residual add) and so is each op of the eager backward; the
step table lists them beside the compiled loss's Triton kernels (graphs "eager", "eager
backward"), each op once per size and line with its count of calls. The inputs' randn is set-up,
not listed, nor is the check of the loss against the blocks' functional form in float64 (no module
runs it)."""
import torch


class Block(torch.nn.Module):
    def __init__(self, d=256, hidden=1024):
        super().__init__()
        self.norm = torch.nn.LayerNorm(d)
        self.up = torch.nn.Linear(d, hidden)
        self.down = torch.nn.Linear(hidden, d)

    def forward(self, x):
        return x + self.down(torch.nn.functional.gelu(self.up(self.norm(x))))


def example():
    torch.manual_seed(0)
    blocks = torch.nn.Sequential(Block(), Block()).cuda()
    x = torch.randn(64, 256, device="cuda")
    y = blocks(x)
    loss = torch.compile(lambda t: (t * t).mean())(y)
    loss.backward()
    h = x.double()
    for b in blocks:
        p = {name: t.detach().double() for name, t in b.named_parameters()}
        n = torch.nn.functional.layer_norm(h, (256,), p["norm.weight"], p["norm.bias"])
        u = torch.nn.functional.gelu(torch.nn.functional.linear(n, p["up.weight"], p["up.bias"]))
        h = h + torch.nn.functional.linear(u, p["down.weight"], p["down.bias"])
    expected = (h ** 2).mean()
    assert torch.allclose(loss.double(), expected, rtol=1e-4), (loss.item(), expected.item())

"""A compiled MLP called with three batch sizes (a static graph, then a dynamic one for the next two), fwd+bwd;
AdamW(foreach=True) eager after it."""
import torch


def example():
    model = torch.nn.Sequential(torch.nn.Linear(256, 512), torch.nn.SiLU(), torch.nn.Linear(512, 256)).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, foreach=True)
    step = torch.compile(model)
    for b in (16, 24, 40):
        x = torch.randn(b, 256, device="cuda")
        loss = step(x).pow(2).mean()
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

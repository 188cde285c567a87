"""A training step as people write it: clip_grad_norm_ + AdamW + a cosine LR scheduler, compiled."""
import torch
import torch.nn as nn


def example():
    model = nn.Sequential(nn.Linear(256, 512), nn.GELU(), nn.Linear(512, 256)).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=torch.tensor(1e-3), fused=True)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=10)

    @torch.compile
    def step(x):
        loss = model(x).pow(2).mean()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        opt.zero_grad(set_to_none=True)
        return loss

    x = torch.randn(64, 256, device="cuda")
    for _ in range(2):
        step(x)
        sched.step()

"""A float16 mixed-precision training step as the AMP recipe writes it: autocast, a GradScaler
(its unscale and inf checks are CUDA's own kernels), the fused AdamW (one CUDA kernel for every
parameter), the model under torch.compile; two steps."""
import torch


def example():
    m = torch.nn.Sequential(torch.nn.Linear(256, 512), torch.nn.GELU(), torch.nn.Linear(512, 256)).cuda()
    opt = torch.optim.AdamW(m.parameters(), lr=1e-3, fused=True)
    scaler = torch.amp.GradScaler("cuda")
    model = torch.compile(m)
    x = torch.randn(64, 256, device="cuda")
    for _ in range(2):
        with torch.autocast("cuda", dtype=torch.float16):
            loss = model(x).float().pow(2).mean()
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
        opt.zero_grad()
    assert m[0].weight.grad is None and scaler.get_scale() > 0

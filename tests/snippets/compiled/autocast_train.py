"""A mixed-precision training step: torch.compile'd MLP under torch.autocast("cuda", bf16), then
a Liger RMSNorm on the bf16 activations, backward through both, AdamW."""
import torch
import torch.nn as nn
from liger_kernel.ops.rms_norm import LigerRMSNormFunction


def example():
    mlp = nn.Sequential(nn.Linear(256, 512), nn.GELU(), nn.Linear(512, 256)).cuda()
    w = torch.ones(256, device="cuda", requires_grad=True)
    opt = torch.optim.AdamW([*mlp.parameters(), w])
    step = torch.compile(mlp)
    x = torch.randn(64, 256, device="cuda")
    with torch.autocast("cuda", dtype=torch.bfloat16):
        h = step(x)
        y = LigerRMSNormFunction.apply(h, w, 1e-6)
        loss = torch.softmax(y, dim=-1).sum()
    loss.backward()
    opt.step()

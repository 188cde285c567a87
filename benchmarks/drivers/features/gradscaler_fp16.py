"""A pre-norm TransformerEncoderLayer under fp16 autocast, compiled, with GradScaler (scale, step, update)."""
import torch


def example():
    layer = torch.nn.TransformerEncoderLayer(128, 4, 256, batch_first=True, norm_first=True).cuda()
    opt = torch.optim.SGD(layer.parameters(), lr=0.1)
    scaler = torch.amp.GradScaler("cuda")
    step = torch.compile(layer)
    x = torch.randn(4, 64, 128, device="cuda")
    with torch.autocast("cuda", dtype=torch.float16):
        loss = step(x).float().pow(2).mean()
    scaler.scale(loss).backward()
    scaler.step(opt)
    scaler.update()

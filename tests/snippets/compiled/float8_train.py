"""float8 training as torchtitan sets it up: the model built on the meta device, materialized on
the GPU (to_empty), its Linear layers converted (torchao 0.18), compiled, one training step."""
import torch
from torchao.float8 import convert_to_float8_training


def example():
    with torch.device("meta"):
        model = torch.nn.Sequential(torch.nn.Linear(512, 1024, bias=False), torch.nn.GELU(),
                                    torch.nn.Linear(1024, 512, bias=False))
    convert_to_float8_training(model)
    model = model.to_empty(device="cuda").to(torch.bfloat16)
    for p in model.parameters():
        torch.nn.init.normal_(p, std=0.02)
    model = torch.compile(model)
    x = torch.randn(256, 512, device="cuda", dtype=torch.bfloat16, requires_grad=True)
    model(x).float().pow(2).mean().backward()
    assert x.grad is not None and all(p.grad is not None for p in model.parameters())

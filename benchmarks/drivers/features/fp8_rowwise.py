"""torchao float8 training with rowwise scales, compiled forward and backward."""
import torch
import torch.nn as nn
from torchao.float8 import convert_to_float8_training, Float8LinearConfig


def example():
    model = nn.Sequential(nn.Linear(512, 1024, bias=False), nn.GELU(), nn.Linear(1024, 512, bias=False)).cuda().to(torch.bfloat16)
    convert_to_float8_training(model, config=Float8LinearConfig.from_recipe_name("rowwise"))
    model = torch.compile(model)
    model(torch.randn(64, 512, device="cuda", dtype=torch.bfloat16)).sum().backward()

"""torchao's float8 inference (`Float8DynamicActivationFloat8WeightConfig`, per-row scales) under
torch.compile: each activation quantized to float8 by a Triton kernel Inductor fuses (its amax,
scale and cast), each matmul `_scaled_mm` (cuBLASLt on the GPU) outside Triton."""
import torch
from torchao.quantization import Float8DynamicActivationFloat8WeightConfig, PerRow, quantize_


def example():
    m = torch.nn.Sequential(torch.nn.Linear(512, 1024), torch.nn.SiLU(), torch.nn.Linear(1024, 512))
    m = m.to("cuda", torch.bfloat16)
    quantize_(m, Float8DynamicActivationFloat8WeightConfig(granularity=PerRow()))
    with torch.no_grad():
        y = torch.compile(m)(torch.randn(16, 512, device="cuda", dtype=torch.bfloat16))
    assert y.shape == (16, 512) and y.dtype == torch.bfloat16
